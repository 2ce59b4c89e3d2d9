"""Issue 39 part 1: every verdict rests on several seeded weeks, says how many weeks and jobs it
rests on, is too_few_jobs on a handful of jobs, and is the same in every command for the same
settings."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.advisor.targets import (
    MET,
    MISSED,
    TOO_FEW_JOBS,
    TargetCheck,
    check_line,
    weeks_needed,
)
from quota_constructs.advisor.weeks import default_weeks
from quota_constructs.commands import app
from tests.advisor.helpers import ORG_FILE, TEAMS_FILE

GPU = "ml.g5.xlarge"
# One run a week (Saturdays 09:00): a handful of jobs over any number of weeks.
WEEKLY = {
    "name": "weekly",
    "capacity": {GPU: 1},
    "workload": "scheduled",
    "schedule": "0 9 * * *",
    "active_days": ["sat"],
    "job_minutes": {"p50": 30, "max": 40},
    "targets": {"p90_wait_minutes": 1},
}
BUSY = {
    "name": "busy",
    "capacity": {GPU: 2},
    "workload": "experimental",
    "targets": {"p90_wait_minutes": 1},
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": "400"}).invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def check(weekly: list[float], jobs: int = 100, limit: float = 10.0) -> TargetCheck:
    return TargetCheck("t", "p90_wait_minutes", limit, tuple(weekly), jobs, len(weekly))


def test_met_needs_the_target_met_in_ninety_percent_of_the_weeks() -> None:
    assert [weeks_needed(n) for n in (1, 8, 10, 20, 26)] == [1, 8, 9, 18, 24]
    assert check([1.0] * 9 + [50.0]).status == MET  # 9 of 10
    assert check([1.0] * 8 + [50.0] * 2).status == MISSED  # 8 of 10
    eighteen = check([1.0] * 18 + [50.0, 60.0])
    assert (eighteen.status, eighteen.weeks_met, eighteen.weeks) == (MET, 18, 20)
    assert (eighteen.value, eighteen.worst) == (1.0, 60.0)  # the median week, the worst week


def test_a_verdict_on_fewer_jobs_than_the_minimum_is_too_few_jobs() -> None:
    assert check([1.0] * 10, jobs=29).status == TOO_FEW_JOBS  # fewer than 30 in all
    assert check([50.0] * 10, jobs=29).status == TOO_FEW_JOBS  # never missed on 29 jobs
    assert check([1.0] * 10, jobs=30).status == MET
    assert check([1.0] * 20, jobs=40).status == TOO_FEW_JOBS  # 2 a week on average
    p99 = TargetCheck("t", "p99_wait_minutes", 10.0, (1.0,) * 10, 99, 10)
    assert p99.status == TOO_FEW_JOBS  # its nearest rank would be the largest wait
    assert p99.min_jobs == 100


def test_a_team_with_a_handful_of_jobs_gets_too_few_jobs_and_is_not_sized(
    write_teams: Callable[..., Path],
) -> None:
    path = write_teams([WEEKLY, BUSY])
    code, out, _ = run("recommend", str(path), "--simulate", "--json")
    data = json.loads(out)
    [wait] = [t for t in data["teams"]["weekly"]["targets"] if t["target"] == "p90_wait_minutes"]
    assert wait["status"] == "too_few_jobs"
    assert (wait["jobs"], wait["weeks"]) == (20, 20)  # one run in each of the 20 weeks
    assert wait["note"] == (
        "too few jobs: 20 job(s) of weekly in 20 simulated week(s), 1.0 a week; a verdict needs "
        "at least 3 a week on average (a week's figure would be its one or two jobs', not a "
        "measurement), so more weeks do not help"
    )
    assert all(t["status"] == "too_few_jobs" for t in data["teams"]["weekly"]["targets"])
    assert "capacityNeeded" not in data["teams"]["weekly"]
    assert code == 1
    _, text, err = run("recommend", str(path), "--simulate")
    assert "too few jobs weekly: p90 wait <= 1.0 min (" in text
    assert "teams: busy" in err  # a verdict of too_few_jobs never fails the command


def test_few_weeks_of_a_weekend_team_are_too_few_and_say_how_many_would_do() -> None:
    code, out, _ = run("recommend", str(TEAMS_FILE), "--simulate", "--json", "--weeks", "3")
    assert code == 1
    [wait, _] = json.loads(out)["teams"]["data-analysis"]["targets"]
    assert (wait["status"], wait["weeks"], wait["jobs"]) == ("too_few_jobs", 3, 13)
    assert wait["note"].endswith("a verdict needs at least 30: simulate more weeks (--weeks 7)")


def _targets(teams: dict) -> dict[str, list[dict]]:
    return {name: team["targets"] for name, team in teams.items()}


@pytest.mark.parametrize("weeks", ["4"])
def test_simulate_and_optimize_give_the_same_verdicts_for_the_same_settings(weeks: str) -> None:
    common = ("--weeks", weeks, "--seed", "5", "--json")
    _, simulated, _ = run("recommend", str(TEAMS_FILE), "--simulate", *common)
    _, searched, _ = run("recommend", str(TEAMS_FILE), "--optimize", "--workers", "1", *common)
    rules = json.loads(searched)["ruleBased"]["teams"]
    assert _targets(json.loads(simulated)["teams"]) == _targets(rules)
    for team in json.loads(simulated)["teams"].values():
        assert all(t["weeks"] <= int(weeks) for t in team["targets"])


def test_quota_simulate_generate_judges_the_same_weeks_as_recommend() -> None:
    common = ("--weeks", "4", "--seed", "2", "--json")
    _, simulated, _ = run("recommend", str(TEAMS_FILE), "--simulate", *common)
    code, what_if, _ = run("simulate", str(ORG_FILE), "--generate", str(TEAMS_FILE), *common)
    assert code == 0  # quota simulate reports; it does not judge the command
    (org,) = json.loads(what_if).values()
    assert org["targets"] == _targets(json.loads(simulated)["teams"])


def test_each_verdict_line_says_what_it_rests_on() -> None:
    line = check_line(check([1.0] * 18 + [50.0, 60.0]))
    assert line == (
        "t: p90 wait <= 10.0 min (median 1.0 min, worst week 60.0 min; met in 18 of 20 weeks, "
        "100 jobs)"
    )


def test_rejects_weeks_without_generated_weeks(tmp_path: Path) -> None:
    csv = tmp_path / "w.csv"
    csv.write_text("submit_time_s,share,instance_type,instance_count,duration_s,priority\n")
    code, _, err = run("simulate", str(ORG_FILE), "--workload", str(csv), "--weeks", "3")
    assert code == 2
    assert err.strip() == (
        "error: --weeks: needs --generate (got 3); fix: judge targets on generated weeks with "
        "--generate TEAMS.yaml, or drop --weeks"
    )


def test_rejects_weeks_outside_their_bounds() -> None:
    code, _, err = run("recommend", str(TEAMS_FILE), "--simulate", "--weeks", "105")
    assert code == 2
    assert "--weeks: must be from 1 to 104 (got 105)" in err


def test_a_long_window_is_not_simulated_twenty_times_over() -> None:
    assert [default_weeks(days) for days in (1, 7, 8, 28, 364)] == [20, 20, 18, 5, 1]
    code, out, _ = run("recommend", str(TEAMS_FILE), "--simulate", "--days", "28", "--json")
    assert code == 1
    assert json.loads(out)["weeks"] == {"weeks": 5, "seeds": [0, 4], "jobs": 5395}
