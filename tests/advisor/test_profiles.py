"""Team-profile files: shape, quota rules from the model, every error with field and fix."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.advisor.profiles import (
    Day,
    TeamsFileError,
    WorkloadKind,
    load_teams,
    parse_schedule,
)
from quota_constructs.commands import app
from tests.advisor.helpers import TEAMS_FILE

GPU = {"ml.g5.xlarge": 2}


def errors(path: Path) -> list[str]:
    """Each problem's line without its ``line N: `` (asserted by the line-number tests)."""
    with pytest.raises(TeamsFileError) as info:
        load_teams(path)
    assert info.value.context == str(path)
    return [re.sub(r"^line \d+: ", "", str(p)) for p in info.value.problems]


def test_canonical_research_profiles_load() -> None:
    teams = load_teams(TEAMS_FILE)
    assert [t.name for t in teams.teams] == ["recommendation", "generative", "data-analysis"]
    gen = teams.team("generative")
    assert gen.workload is WorkloadKind.EXPERIMENTAL and gen.checkpoints and gen.needs_burst
    assert teams.team("data-analysis").active_days == [Day.SAT, Day.SUN]
    assert teams.team("recommendation").parsed_schedule.runs_per_day == 24


def test_defaults_when_optional_fields_are_omitted(write_teams: Callable[..., Path]) -> None:
    team = load_teams(write_teams([{"name": "a", "capacity": GPU, "workload": "ad_hoc"}])).teams[0]
    assert not (team.preemption_tolerant or team.checkpoints or team.needs_burst)
    assert not team.lends_when_idle and team.active_days == list(Day)
    assert team.parsed_schedule.text == "hourly"


def test_rejects_unknown_keys_naming_the_field(write_teams: Callable[..., Path]) -> None:
    path = write_teams([{"name": "a", "capacity": GPU, "workload": "ad_hoc", "burst": True}])
    [message] = errors(path)
    assert message.startswith("teams[0].burst: unknown key")
    assert message.endswith("fix: did you mean 'needs_burst'?")


def test_rejects_unknown_workload_kind(write_teams: Callable[..., Path]) -> None:
    [message] = errors(write_teams([{"name": "a", "capacity": GPU, "workload": "nightly"}]))
    assert message.startswith("teams[0].workload:") and "'nightly'" in message


def test_rejects_quota_rule_violations_with_team_paths(write_teams: Callable[..., Path]) -> None:
    path = write_teams(
        [
            {"name": "bad name", "capacity": {"g5": 0}, "workload": "ad_hoc"},
            {"name": "b", "capacity": GPU, "workload": "ad_hoc"},
            {"name": "b", "capacity": GPU, "workload": "ad_hoc"},
        ]
    )
    messages = errors(path)
    assert any(m.startswith("teams[0].name: quota share name must be") for m in messages)
    assert any(m.startswith("teams[0].capacity.g5: capacity unit must be") for m in messages)
    assert any(m.startswith("teams[0].capacity.g5: max capacity") for m in messages)
    assert any(m.startswith("teams[2].name: quota share names must be unique") for m in messages)


def test_rejects_more_than_twenty_teams(write_teams: Callable[..., Path]) -> None:
    teams = [{"name": f"t{i}", "capacity": GPU, "workload": "ad_hoc"} for i in range(21)]
    [message] = errors(write_teams(teams))
    assert message.startswith("teams: a quota-managed job queue needs 1 to 20 quota shares")


def test_rejects_checkpointing_that_is_not_an_s3_uri(write_teams: Callable[..., Path]) -> None:
    path = write_teams(
        [{"name": "a", "capacity": GPU, "workload": "ad_hoc", "checkpointing": "/tmp/x"}]
    )
    [message] = errors(path)
    assert message.startswith("teams[0].checkpointing: checkpointing is true, false or an S3 URI")


def test_rejects_unparsable_schedule(write_teams: Callable[..., Path]) -> None:
    path = write_teams(
        [{"name": "a", "capacity": GPU, "workload": "scheduled", "schedule": "0 9 * * 1"}]
    )
    [message] = errors(path)
    assert message.startswith("teams[0].schedule: '0 9 * * 1' is not a supported schedule")
    assert "active_days" in message


def test_rejects_repeated_active_days(write_teams: Callable[..., Path]) -> None:
    path = write_teams(
        [{"name": "a", "capacity": GPU, "workload": "ad_hoc", "active_days": ["sat", "sat"]}]
    )
    [message] = errors(path)
    assert message.startswith("teams[0].active_days: active_days must list at least one day")


def test_rejects_invalid_yaml_with_line(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("organisation: a\nteams:\n  - name: [unclosed\n")
    [message] = errors(path)
    assert message.startswith("<yaml line 4")


def test_rejects_missing_file(tmp_path: Path) -> None:
    [message] = errors(tmp_path / "missing.yaml")
    assert "cannot read the file" in message


@pytest.mark.parametrize(
    ("text", "runs"),
    [("hourly", 24), ("daily", 1), ("every 30m", 48), ("every 6h", 4), ("15 9,17 * * *", 2)],
)
def test_schedules_parse_to_runs_per_day(text: str, runs: int) -> None:
    assert parse_schedule(text).runs_per_day == runs


def test_cron_schedule_times_of_day() -> None:
    assert parse_schedule("15 9,17 * * *").times_of_day() == [9 * 3600 + 900, 17 * 3600 + 900]


def test_rejects_schedule_interval_not_dividing_the_day() -> None:
    with pytest.raises(ValueError, match="must divide an hour"):
        parse_schedule("every 7h")


def test_rejects_bad_team_access_naming_the_team_field(write_teams: Callable[..., Path]) -> None:
    access = {"principals": ["arn:aws:iam::111122223333:role/T"], "max_priority": 10000}
    [message] = errors(
        write_teams([{"name": "a", "capacity": GPU, "workload": "ad_hoc", "access": access}])
    )
    assert message.startswith("teams[0].access.max_priority:") and "10000" in message


def team_with(**facts: object) -> dict:
    return {"name": "a", "capacity": GPU, "workload": "experimental", **facts}


def test_job_minutes_instances_and_targets_load(write_teams: Callable[..., Path]) -> None:
    path = write_teams(
        [
            team_with(
                job_minutes={"p50": 45, "max": 240},
                instances_per_job={"min": 1, "max": 2},
                preemption_tolerant=True,
                targets={"p90_wait_minutes": 30, "max_preempted_share": 0.1},
            )
        ]
    )
    team = load_teams(path).teams[0]
    assert (team.durations.p50, team.durations.max) == (45, 240)
    assert team.instance_range("ml.g5.xlarge") == (1, 2)
    assert team.targets.waits() == {90: 1800.0} and team.preemption_target == 0.1


@pytest.mark.parametrize(
    ("kind", "p50", "top", "sizes"),
    [
        ("scheduled", 30, 60, (2, 2)),
        ("experimental", 90, 480, (1, 2)),
        ("ad_hoc", 150, 240, (2, 2)),
    ],
)
def test_documented_defaults_per_workload_kind(
    write_teams: Callable[..., Path], kind: str, p50: int, top: int, sizes: tuple[int, int]
) -> None:
    team = load_teams(write_teams([team_with(workload=kind)])).teams[0]
    assert (team.durations.p50, team.durations.max) == (p50, top)
    assert team.instance_range("ml.g5.xlarge") == sizes
    assert team.targets.waits() == {} and team.preemption_target == 0.0


def test_rejects_job_minutes_whose_longest_is_below_the_median(
    write_teams: Callable[..., Path],
) -> None:
    [message] = errors(write_teams([team_with(job_minutes={"p50": 60, "max": 30})]))
    assert message.startswith("teams[0].job_minutes.max: the longest job must be at least")
    assert "(got 30" in message and "raise max to 60 or more" in message


def test_rejects_non_positive_job_minutes(write_teams: Callable[..., Path]) -> None:
    [message] = errors(write_teams([team_with(job_minutes={"p50": 0, "max": 30})]))
    assert message.startswith("teams[0].job_minutes.p50: must be a positive number of minutes")


def test_rejects_job_minutes_without_its_median(write_teams: Callable[..., Path]) -> None:
    [message] = errors(write_teams([team_with(job_minutes={"max": 30})]))
    assert message.startswith("teams[0].job_minutes.p50: Field required")


def test_rejects_jobs_larger_than_the_teams_capacity(write_teams: Callable[..., Path]) -> None:
    [message] = errors(write_teams([team_with(instances_per_job=3)]))
    assert message.startswith("teams[0].instances_per_job: a job of 3 instances does not fit")
    assert "lower it to 2" in message


def test_rejects_an_empty_instance_range(write_teams: Callable[..., Path]) -> None:
    [message] = errors(write_teams([team_with(instances_per_job={"min": 2, "max": 1})]))
    assert message.startswith("teams[0].instances_per_job: needs 1 <= min <= max instances")


def test_rejects_unknown_target_names(write_teams: Callable[..., Path]) -> None:
    [message] = errors(write_teams([team_with(targets={"p95_wait_minutes": 10})]))
    assert message.startswith("teams[0].targets.p95_wait_minutes: unknown key")


def test_rejects_negative_waits_and_shares_outside_0_1(write_teams: Callable[..., Path]) -> None:
    targets = {"p50_wait_minutes": -1, "max_preempted_share": 1.5}
    messages = errors(write_teams([team_with(preemption_tolerant=True, targets=targets)]))
    assert messages[0].startswith("teams[0].targets.p50_wait_minutes: must be 0 or more minutes")
    assert messages[1].startswith("teams[0].targets.max_preempted_share: a share of jobs is")


def test_rejects_a_preemption_target_of_a_team_that_tolerates_none(
    write_teams: Callable[..., Path],
) -> None:
    [message] = errors(write_teams([team_with(targets={"max_preempted_share": 0.1})]))
    assert message.startswith(
        "teams[0].targets.max_preempted_share: contradicts preemption_tolerant: false"
    )
    assert "set preemption_tolerant: true" in message


def test_every_problem_in_one_run_with_lines_and_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "teams.yaml"
    path.write_text(
        "organisation: lab\n"
        "teams:\n"
        "  - name: a\n"
        "    capacity: {ml.g5.xlarge: 2}\n"
        "    workload: scheduled\n"
        "    job_minuts: {p50: 30, max: 40}\n"
        "  - name: b\n"
        "    capacity: {ml.g5.xlarge: 2}\n"
        "    workload: ad_hoc\n"
        "    checkpointing: bucket/prefix\n"
        "  - name: a\n"
        "    capacity: {ml.g5.xlarge: 1}\n"
        "    workload: ad_hoc\n"
        "    deadline_minutes: 30\n"
    )
    with pytest.raises(TeamsFileError) as info:
        load_teams(path)
    lines = [str(p) for p in info.value.problems]
    assert lines[0] == (
        "line 6: teams[0].job_minuts: unknown key (got {'max': 40, 'p50': 30}); "
        "fix: did you mean 'job_minutes'?"
    )
    # the rules of the teams that parsed, in the same run
    assert (
        "line 11: teams[2].name: quota share names must be unique in a queue; teams[0] has the "
        "same name (got 'a'); fix: give each share its own name"
    ) in lines
    assert any(
        m.startswith("line 10: teams[1].checkpointing: checkpointing is true, false or an S3 URI")
        for m in lines
    )
    assert (
        "line 14: teams[2].deadline_minutes: only scheduled teams have a deadline (this team is "
        "ad_hoc) (got 30.0); fix: remove deadline_minutes, or set workload: scheduled"
    ) in lines
    assert len(lines) == 4


def test_rejects_a_start_up_outside_its_bounds(write_teams: Callable[..., Path]) -> None:
    [message] = errors(
        write_teams([{"name": "a", "capacity": GPU, "workload": "ad_hoc", "startup_minutes": -1}])
    )
    assert message == (
        "teams[0].startup_minutes: must be 0 or more minutes, at most 1440 (got -1.0); fix: e.g. 5"
    )


def test_recommend_schema_prints_the_json_schema_of_team_profiles() -> None:
    result = CliRunner().invoke(app, ["recommend", "schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    assert schema["title"] == "Team profiles (quota recommend)"
    team = schema["$defs"]["TeamProfile"]
    assert team["additionalProperties"] is False
    assert {"job_minutes", "startup_minutes", "deadline_minutes", "targets"} <= set(
        team["properties"]
    )
    assert team["properties"]["capacity"]["maxProperties"] == 5
    assert "ml.g5.xlarge" in team["properties"]["capacity"]["propertyNames"]["enum"]
    assert schema["properties"]["teams"]["maxItems"] == 20
    minutes = schema["$defs"]["JobMinutes"]["properties"]["max"]
    assert (minutes["exclusiveMinimum"], minutes["maximum"]) == (0, 40320)
