"""Every simulator input has a stated upper bound (issue 24, part 8; docs/input-limits.md).

Each bad value is refused with its place (CSV ``line N.column``, profile path, flag), the value
and the fix, before anything is simulated; the plot's day axis has a bounded number of ticks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure
from typer.testing import CliRunner

from quota_constructs.advisor import limits
from quota_constructs.advisor.optimize import SearchOptions
from quota_constructs.advisor.profiles import TeamsFileError, parse_teams
from quota_constructs.advisor.report import MAX_PLOT_POINTS, _day_axis, _sampled
from quota_constructs.advisor.workload import (
    GeneratorOptions,
    WorkloadError,
    generate_workload,
    parse_workload_csv,
)
from quota_constructs.advisor.workload_stream import scan_workload_csv
from quota_constructs.commands import app
from quota_constructs.local.testing import SEED_DEMO
from tests.advisor.helpers import TEAMS_FILE

HEADER = "submit_time_s,share,instance_type,instance_count,duration_s,priority,"
HEADER += "checkpoint_interval_s\n"


def csv_problems(row: str) -> str:
    """The message of the :class:`WorkloadError` for a CSV of the header and ``row``."""
    with pytest.raises(WorkloadError) as caught:
        parse_workload_csv(HEADER + row + "\n", source="w.csv")
    return str(caught.value)


def profile_problems(**facts: Any) -> str:
    """The message of the :class:`TeamsFileError` for one team with ``facts``."""
    team = {"name": "t", "capacity": {"ml.g5.xlarge": 4}, "workload": "ad_hoc", **facts}
    with pytest.raises(TeamsFileError) as caught:
        parse_teams({"organisation": "lab", "teams": [team]}, source="teams.yaml")
    return str(caught.value)


def test_rejects_a_submit_time_beyond_ten_years() -> None:
    message = csv_problems("1e11,QS1,ml.g5.xlarge,1,60,1,")
    assert "line 2.submit_time_s: must be at most 315619200 seconds (3653 days)" in message
    assert "got 100000000000.0" in message and "fix: submit the jobs within ten years" in message


def test_rejects_a_duration_beyond_28_days() -> None:
    message = csv_problems("0,QS1,ml.g5.xlarge,1,2419201,1,")
    assert "line 2.duration_s: must be at most 2419200 seconds (28 days)" in message
    assert "got 2419201.0" in message and "fix: lower it to 2419200" in message


def test_rejects_a_checkpoint_interval_beyond_28_days() -> None:
    message = csv_problems("0,QS1,ml.g5.xlarge,1,60,1,1e9")
    assert "line 2.checkpoint_interval_s: must be at most 2419200 seconds" in message


def test_rejects_an_instance_count_beyond_the_apis_integer() -> None:
    message = csv_problems("0,QS1,ml.g5.xlarge,2147483648,60,1,")
    assert "line 2.instance_count: must be at most 2147483647 instances (got 2147483648)" in message


def test_accepts_every_csv_value_at_its_bound() -> None:
    jobs = parse_workload_csv(HEADER + "315619200,QS1,ml.g5.xlarge,10000,2419200,9999,2419200\n")
    assert jobs[0].submit_time_s == limits.MAX_SUBMIT_S and jobs[0].duration_s == limits.MAX_JOB_S


def test_rejects_a_streamed_workload_of_more_jobs_than_its_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(limits, "MAX_STREAM_JOBS", 2)
    path = tmp_path / "w.csv"
    path.write_text(HEADER + "\n".join("0,QS1,ml.g5.xlarge,1,60,1," for _ in range(3)) + "\n")
    with pytest.raises(WorkloadError) as caught:
        scan_workload_csv(path)
    assert "<file>: the workload has this many jobs; at most 2 (got 3)" in str(caught.value)
    assert "split it into several files (e.g. by year)" in str(caught.value)


def test_rejects_a_workload_of_more_jobs_than_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_WORKLOAD_JOBS", 2)
    rows = "\n".join("0,QS1,ml.g5.xlarge,1,60,1," for _ in range(3))
    message = csv_problems(rows)
    assert "<file>: the workload has this many jobs; at most 2 (got 3)" in message
    assert "fix: split it into several files" in message


def test_rejects_days_beyond_366() -> None:
    teams = parse_teams({"organisation": "lab", "teams": [_team()]})
    with pytest.raises(WorkloadError, match=r"days: must be at most 366 \(got 367\)"):
        generate_workload(teams, days=367)


def test_rejects_a_generated_workload_expected_beyond_the_limit() -> None:
    teams = parse_teams({"organisation": "lab", "teams": [_team(schedule="*/1 * * * *")]})
    with pytest.raises(WorkloadError) as caught:
        generate_workload(teams, days=366)
    message = str(caught.value)
    assert "days: the generated workload would have about this many jobs; at most 100000" in message
    assert "got 527040" in message and "fix: use fewer --days" in message


def test_rejects_an_intensity_beyond_1000() -> None:
    with pytest.raises(WorkloadError, match="intensity: must be positive and at most 1000"):
        GeneratorOptions(intensity=1001)


def _team(**facts: Any) -> dict[str, Any]:
    return {"name": "t", "capacity": {"ml.g5.xlarge": 4}, "workload": "scheduled", **facts}


def test_rejects_job_minutes_beyond_28_days() -> None:
    message = profile_problems(job_minutes={"p50": 60, "max": 40321})
    assert (
        "teams[0].job_minutes.max: must be a positive number of minutes, at most 40320" in message
    )


def test_rejects_a_wait_target_beyond_a_year() -> None:
    message = profile_problems(targets={"p90_wait_minutes": 1e12})
    assert "teams[0].targets.p90_wait_minutes: must be 0 or more minutes, at most 527040" in message


def test_rejects_a_schedule_longer_than_100_characters() -> None:
    message = profile_problems(workload="scheduled", schedule="0 " * 60)
    assert "teams[0].schedule: a schedule is at most 100 characters" in message


def test_rejects_a_description_longer_than_4096_characters() -> None:
    message = profile_problems(description="x" * 4097)
    assert "teams[0].description" in message and "4096" in message


def test_rejects_search_sizes_beyond_their_bounds() -> None:
    options = SearchOptions(seeds=tuple(range(105)), days=367, max_candidates=1001)
    message = "\n".join(str(p) for p in options.problems())
    assert "seeds: at most 104 weeks (got 105)" in message
    assert "days: must be at most 366 (got 367)" in message
    assert "max_candidates: must be at most 1000 (got 1001)" in message


def test_rejects_run_options_beyond_their_bounds_on_the_command_line() -> None:
    args = ["simulate", str(SEED_DEMO), "--generate", str(TEAMS_FILE), "--days", "400"]
    args += ["--seed", "-1", "--startup-s", "inf", "--preemption-s", "86401"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "error: --days: must be from 1 to 366 (got 400)" in result.stderr
    assert "error: --seed: must be from 0 to 9223372036854775807 (2^63 - 1)" in result.stderr
    assert "error: --startup-s: must be a number of seconds from 0 to 86400" in result.stderr
    assert "--preemption-s: must be a number of seconds from 0 to 86400" in result.stderr


def test_rejects_the_issue_workload_with_plot_before_simulating(tmp_path: Path) -> None:
    workload = tmp_path / "w.csv"
    workload.write_text(HEADER + "0,QS1,ml.g5.xlarge,1,60,1,\n1e11,QS1,ml.g5.xlarge,1,60,1,\n")
    plot = tmp_path / "p.png"
    args = ["simulate", str(SEED_DEMO), "--workload", str(workload), "--plot", str(plot)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "line 3.submit_time_s: must be at most" in result.stderr
    assert not plot.exists()


def test_the_day_axis_of_the_longest_run_has_at_most_21_ticks() -> None:
    axes = Figure().add_subplot()
    _day_axis(axes, limits.MAX_SUBMIT_S + limits.MAX_JOB_S)
    ticks = axes.get_xticks()
    assert len(ticks) <= 21 and ticks[1] - ticks[0] == 7 * 24.0 * 27  # ten years: 27 weeks


def test_a_plotted_series_has_at_most_the_plot_points_and_keeps_its_ends() -> None:
    values = list(range(10 * MAX_PLOT_POINTS + 7))
    sampled = _sampled(values)
    assert len(sampled) <= MAX_PLOT_POINTS + 1
    assert sampled[0] == 0 and sampled[-1] == values[-1] and sampled == sorted(sampled)
    assert _sampled(values[:MAX_PLOT_POINTS]) == values[:MAX_PLOT_POINTS]
