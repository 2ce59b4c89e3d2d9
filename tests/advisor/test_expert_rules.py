"""Rules an expert would sign (docs/advisor.md): in-share preemption only where a team
checkpoints (or runs short jobs) and uses more than one priority, with a warning otherwise; a
lending team active on some days may borrow on them when that helps its targets (a
LEND_AND_BORROW calendar window); a profile's arrival rate (``runs_per_day`` or
``runs_per_week``) drives the generator; ``--backfill-depth`` reaches the scheduler."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from quota_constructs.advisor.profiles import TeamsFileError, load_teams, parse_teams
from quota_constructs.advisor.recommend import recommend
from quota_constructs.advisor.simulate import SimulationOptions, simulate
from quota_constructs.advisor.workload import generate_workload
from quota_constructs.commands import app
from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    QuotaShareSpec,
    ShareWindow,
    SharingStrategy,
)

GPU = "ml.g5.xlarge"
P4D = "ml.p4d.24xlarge"


def _team(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "capacity": {GPU: 2}, **fields}


def _advice_of(team: dict[str, Any]) -> Any:
    teams = parse_teams({"organisation": "lab", "teams": [team]})
    (advice,) = recommend(teams).teams
    return advice


def test_in_share_preemption_is_on_for_a_checkpointing_team_with_several_priorities() -> None:
    advice = _advice_of(
        _team("exp", workload="experimental", preemption_tolerant=True, checkpointing=True)
    )
    assert advice.share.in_share_preemption
    assert not [w for w in advice.warnings if "in-share preemption" in w]


def test_in_share_preemption_is_off_with_a_warning_for_a_team_of_one_priority() -> None:
    advice = _advice_of(
        _team("adhoc", workload="ad_hoc", preemption_tolerant=True, checkpointing=True)
    )
    assert not advice.share.in_share_preemption
    (warning,) = [w for w in advice.warnings if "in-share preemption" in w]
    assert "its jobs use one priority" in warning


def test_in_share_preemption_is_off_with_a_warning_without_checkpoints_on_long_jobs() -> None:
    advice = _advice_of(
        _team(
            "exp",
            workload="experimental",
            preemption_tolerant=True,
            job_minutes={"p50": 60, "max": 240},
        )
    )
    assert not advice.share.in_share_preemption
    (warning,) = [w for w in advice.warnings if "in-share preemption" in w]
    assert "does not checkpoint and its jobs run up to 240 min" in warning


def test_short_jobs_need_no_checkpoints_for_in_share_preemption() -> None:
    advice = _advice_of(
        _team(
            "exp",
            workload="experimental",
            preemption_tolerant=True,
            job_minutes={"p50": 10, "max": 30},
        )
    )
    assert advice.share.in_share_preemption


def _lending(**fields: Any) -> dict[str, Any]:
    return {
        "name": "weekday",
        "capacity": {GPU: 2},
        "workload": "ad_hoc",
        "lends_when_idle": True,
        "active_days": ["mon", "tue", "wed", "thu", "fri"],
        "instances_per_job": 2,
        "runs_per_day": 12,
        "job_minutes": {"p50": 120, "max": 240},
        **fields,
    }


LENDER = {"name": "pool", "capacity": {GPU: 4}, "workload": "ad_hoc", "lends_when_idle": True}


def test_a_lending_team_whose_jobs_outgrow_its_capacity_may_borrow_on_its_active_days() -> None:
    teams = parse_teams(
        {"organisation": "lab", "teams": [_lending(preemption_tolerant=True), LENDER]}
    )
    advice = recommend(teams)
    (window,) = advice.organisation.calendars["weekday"].windows
    assert window.strategy is SharingStrategy.LEND_AND_BORROW
    assert window.days == ("mon", "tue", "wed", "thu", "fri")
    assert window.borrow_limit == 100  # the other shares lend 4, capped without checkpoints
    weekday = next(t for t in advice.teams if t.share.name == "weekday")
    assert any(r.startswith("calendar: LEND_AND_BORROW on mon,") for r in weekday.rationale)
    # the organisation is valid and the simulator lets it borrow on its active days
    jobs = generate_workload(teams, days=7, seed=0)
    result = simulate(advice.organisation, jobs, options=SimulationOptions(window_s=7 * 86400.0))
    assert result.share("weekday").borrowed_instance_hours > 0


def test_a_lending_team_that_does_not_tolerate_preemption_keeps_reserve_on_its_days() -> None:
    teams = parse_teams({"organisation": "lab", "teams": [_lending(), LENDER]})
    (window,) = recommend(teams).organisation.calendars["weekday"].windows
    assert window == ShareWindow(window.days, strategy=SharingStrategy.RESERVE)


def test_a_lending_team_whose_jobs_fit_its_capacity_keeps_reserve_on_its_days() -> None:
    small = _lending(preemption_tolerant=True, runs_per_day=1, job_minutes={"p50": 30, "max": 60})
    teams = parse_teams({"organisation": "lab", "teams": [small, LENDER]})
    (window,) = recommend(teams).organisation.calendars["weekday"].windows
    assert window.strategy is SharingStrategy.RESERVE


@pytest.mark.parametrize(
    ("workload", "rate", "per_week"),
    [
        ("ad_hoc", {"runs_per_day": 20}, 20 * 5),
        ("ad_hoc", {"runs_per_week": 40}, 40),
        ("experimental", {"runs_per_day": 30}, 30 * 5),
        ("experimental", {"runs_per_week": 20}, 20),
    ],
)
def test_the_generator_follows_the_profiles_arrival_rate(
    workload: str, rate: dict[str, float], per_week: float
) -> None:
    team = {
        "name": "t",
        "capacity": {GPU: 2},
        "workload": workload,
        "active_days": ["mon", "tue", "wed", "thu", "fri"],
        **rate,
    }
    teams = parse_teams({"organisation": "lab", "teams": [team]})
    counts = [len(generate_workload(teams, days=28, seed=seed)) / 4 for seed in range(5)]
    mean = sum(counts) / len(counts)
    assert mean == pytest.approx(per_week, rel=0.15)
    default = parse_teams({"organisation": "lab", "teams": [{**team, **dict.fromkeys(rate)}]})
    # without the rate, the generator's own (ad hoc 3, experimental 18 a day) differs
    assert len(generate_workload(default, days=28, seed=0)) / 4 != pytest.approx(per_week, rel=0.3)


def test_rejects_both_rates_naming_the_team_and_the_two_keys(
    write_teams: Callable[..., Path],
) -> None:
    path = write_teams([_team("ops", workload="ad_hoc", runs_per_day=2, runs_per_week=10)])
    with pytest.raises(TeamsFileError) as info:
        load_teams(path)
    (problem,) = info.value.problems
    text = str(problem)
    assert "team 'ops' gives both runs_per_day and runs_per_week" in text
    assert "keep one of runs_per_day and runs_per_week" in text


def test_rejects_a_rate_for_a_scheduled_team(write_teams: Callable[..., Path]) -> None:
    path = write_teams([_team("nightly", workload="scheduled", runs_per_day=3)])
    with pytest.raises(TeamsFileError) as info:
        load_teams(path)
    (problem,) = info.value.problems
    assert "teams[0].runs_per_day" in str(problem)
    assert "its schedule sets how often it runs" in str(problem)


def test_rejects_a_rate_that_is_not_positive(write_teams: Callable[..., Path]) -> None:
    path = write_teams([_team("ops", workload="ad_hoc", runs_per_week=0)])
    with pytest.raises(TeamsFileError) as info:
        load_teams(path)
    assert any("teams[0].runs_per_week" in str(p) for p in info.value.problems)


# One share, 2 GPUs and 1 p4d: a 4-GPU head it cannot run blocks the p4d job behind it
# (strict order); with a backfill depth of 1 the p4d job starts at once.
BLOCKED = Organisation(
    name="lab",
    queue=JobQueueSpec(
        shares=(
            QuotaShareSpec(
                "a", {GPU: 2, P4D: 1}, SharingStrategy.LEND_AND_BORROW, borrow_limit=100
            ),
            QuotaShareSpec("b", {GPU: 2}, SharingStrategy.LEND),
        )
    ),
)


def _simulate_json(tmp_path: Path, *extra: str) -> dict[str, Any]:
    from quota_constructs.config import OrganisationFile

    org = tmp_path / "org.yaml"
    org.write_text(OrganisationFile.from_organisation(BLOCKED).to_yaml(), encoding="utf-8")
    rows = [
        "submit_time_s,share,instance_type,instance_count,duration_s,priority",
        f"0,b,{GPU},1,7200,1",  # b holds 1 of its GPUs: a can use at most 3
        f"1,a,{GPU},4,3600,1",  # a's head needs 4: blocked until b's job ends at 2 h
        f"2,a,{P4D},1,600,1",  # behind it, a p4d job that fits at once
    ]
    workload = tmp_path / "w.csv"
    workload.write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["simulate", str(org), "--workload", str(workload), "--startup-s", "0", "--json"]
    result = CliRunner().invoke(app, [*args, *extra])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout)["lab"])


def test_backfill_depth_lets_a_job_behind_a_blocked_head_start(tmp_path: Path) -> None:
    strict = _simulate_json(tmp_path)
    backfilled = _simulate_json(tmp_path, "--backfill-depth", "1")
    wait = {r["share"]: r for r in strict["shares"]}["a"]["waitMaxS"]
    assert wait > 3600  # the p4d job waited behind the blocked head
    share_a = {r["share"]: r for r in backfilled["shares"]}["a"]
    assert share_a["waitP50S"] < wait


def test_rejects_a_negative_backfill_depth(tmp_path: Path) -> None:
    org = tmp_path / "o.yaml"
    from quota_constructs.config import OrganisationFile

    org.write_text(OrganisationFile.from_organisation(BLOCKED).to_yaml(), encoding="utf-8")
    workload = tmp_path / "w.csv"
    workload.write_text(
        f"submit_time_s,share,instance_type,instance_count,duration_s,priority\n0,a,{GPU},1,60,1\n",
        encoding="utf-8",
    )
    args = ["simulate", str(org), "--workload", str(workload), "--backfill-depth", "-1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --backfill-depth: must be 0 (strict order) to 1000")
