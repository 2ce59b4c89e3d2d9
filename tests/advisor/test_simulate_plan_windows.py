"""The simulator models training plan windows as the emulator does (the model's
``apply_plan_capacity`` at the plans' edges): jobs of a plan's type run only inside its window,
stopped 30 minutes before its end by default (AWS), or at the end with the option."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from quota_constructs.advisor.billing import simulated_attempts
from quota_constructs.advisor.simulate import SimulationOptions, simulate, simulated_jobs
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.commands import app
from quota_constructs.model import (
    JobQueueSpec,
    JobStatus,
    Organisation,
    QuotaShareSpec,
    SharingStrategy,
    TrainingPlanSpec,
)

H = 3600.0
P5, G5 = "ml.p5.48xlarge", "ml.g5.xlarge"
PLAN = TrainingPlanSpec("p5-june", P5, 8, "2027-06-01T01:00:00Z", duration_hours=2)
ORG = Organisation(
    name="plans",
    queue=JobQueueSpec(
        shares=(
            QuotaShareSpec("llm", {P5: 8}, SharingStrategy.LEND_AND_BORROW),
            QuotaShareSpec("cv", {G5: 2}, SharingStrategy.RESERVE),
        )
    ),
    training_plans=(PLAN,),
)
JOBS = [
    WorkloadJob(0.0, "llm", P5, 8, 10 * H, 1),  # waits for the window, stopped before its end
    WorkloadJob(0.0, "cv", G5, 1, H, 1),  # on demand: runs at once
    WorkloadJob(4 * H, "llm", P5, 8, H, 1),  # after the plan: never runs
]
AN_HOUR_BEFORE = SimulationOptions(plan_epoch_s=PLAN.start_s - H)


def _by_type(jobs: list) -> dict[str, list]:
    return {t: [j for j in jobs if next(iter(j.demand)) == t] for t in (P5, G5)}


def test_plan_jobs_run_only_in_the_window_and_stop_30_minutes_before_its_end() -> None:
    jobs = _by_type(simulated_jobs(ORG, JOBS, options=AN_HOUR_BEFORE))
    long, late = jobs[P5]
    (on_demand,) = jobs[G5]
    assert (on_demand.started_at, on_demand.status) == (0.0, JobStatus.SUCCEEDED)
    assert (long.started_at, long.stopped_at) == (H, 2.5 * H)
    assert long.status == JobStatus.FAILED
    assert long.status_reason.endswith("training plan 30 minutes before its end")
    assert (late.status, late.started_at) == (JobStatus.RUNNABLE, None)


def test_the_option_lets_plan_jobs_run_to_the_end() -> None:
    options = replace(AN_HOUR_BEFORE, plan_stop_before_end_s=0)
    long, _ = _by_type(simulated_jobs(ORG, JOBS, options=options))[P5]
    assert (long.started_at, long.stopped_at) == (H, 3 * H)
    assert long.status_reason.endswith("training plan at its end")


def test_by_default_simulated_time_zero_is_the_first_plans_start() -> None:
    long, _ = _by_type(simulated_jobs(ORG, JOBS))[P5]
    assert (long.started_at, long.stopped_at) == (0.0, 1.5 * H)


def test_the_bill_sees_the_plan_job_inside_the_window_only() -> None:
    attempts = simulated_attempts(ORG, JOBS[:1], offset_s=PLAN.start_s - H)
    ((start, stop),) = [(a.start_s, a.stop_s) for a in attempts]
    assert (start, stop) == (PLAN.start_s, PLAN.end_s - 0.5 * H)


def test_simulate_measures_the_plan_job_as_the_window_allows() -> None:
    result = simulate(ORG, JOBS[:1], options=AN_HOUR_BEFORE)
    assert result.share("llm").wait_max_s == H


def _plan_files(tmp_path: Path, duration_s: int) -> tuple[Path, Path]:
    """A 3 h plan of 8 x p5 from 2027-06-01 for llm, and a workload of one 8-instance job."""
    org = tmp_path / "org.yaml"
    org.write_text(
        "organisation: plans\n"
        "shares:\n  - {name: llm, capacity: {ml.p5.48xlarge: 8}, strategy: LEND_AND_BORROW}\n"
        "training_plans:\n  - {name: p5-june, instance_type: ml.p5.48xlarge, "
        'instance_count: 8, start: "2027-06-01T00:00:00Z", duration_hours: 3}\n',
        encoding="utf-8",
    )
    workload = tmp_path / "w.csv"
    workload.write_text(
        "submit_time_s,share,instance_type,instance_count,duration_s,priority\n"
        f"0,llm,ml.p5.48xlarge,8,{duration_s},0\n",
        encoding="utf-8",
    )
    return org, workload


def test_quota_report_bills_a_plan_job_until_it_is_stopped_or_to_the_end(tmp_path: Path) -> None:
    org, workload = _plan_files(tmp_path, 36000)
    prices = tmp_path / "prices.yaml"
    prices.write_text("ml.p5.48xlarge: {on_demand: 98.32, training_plan: 60.0}\n")
    args = ["report", str(org), "--workload", str(workload), "--prices", str(prices), "--json"]

    def own_hours(*extra: str) -> float:
        result = CliRunner().invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        (row,) = json.loads(result.stdout)["shares"]
        return float(row["ownInstanceHours"])

    assert own_hours() == 8 * 2.5  # stopped 30 min before the 3 h plan's end
    assert own_hours("--plan-stop-before-end-s", "0") == 8 * 3
    bad = CliRunner().invoke(app, [*args, "--plan-stop-before-end-s", "nan"])
    assert bad.exit_code == 2
    assert bad.stderr.strip() == (
        "error: --plan-stop-before-end-s: must be a number of seconds from 0 to 86400 (a day) "
        "(got nan); fix: use 1800 (AWS's 30 minutes) or 0 to let plan jobs run to the end"
    )


def test_quota_simulate_lets_plan_jobs_run_to_the_end_with_the_option(tmp_path: Path) -> None:
    org, workload = _plan_files(tmp_path, 9900)  # 2.75 h: past the stop 30 min before the end
    args = ["simulate", str(org), "--workload", str(workload), "--json"]

    def completed_and_failed(*extra: str) -> tuple[int, int]:
        result = CliRunner().invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        (llm,) = json.loads(result.stdout)["plans"]["shares"]
        return llm["completed"], llm["failed"]

    assert completed_and_failed() == (0, 1)
    assert completed_and_failed("--plan-stop-before-end-s", "0") == (1, 0)
    bad = CliRunner().invoke(app, [*args, "--plan-stop-before-end-s", "-1"])
    assert bad.exit_code == 2
    assert bad.stderr.startswith("error: --plan-stop-before-end-s: must be a number of seconds")
