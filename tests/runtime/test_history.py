"""``quota simulate --from-queue``: jobs run on the emulator, read back and replayed.

The emulator and the simulator share the scheduler core, so a history replayed on the same
configuration must reproduce the emulator's waits and preemptions, unless the history lacks
what decided them (the tutorial test names what).
"""

from __future__ import annotations

import io
import json
import shlex
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from typer.testing import CliRunner

from quota_constructs.advisor.history import Handling, workload_from_history
from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.simulate import SimulationOptions, simulate
from quota_constructs.advisor.workload import generate_workload, load_workload_csv
from quota_constructs.commands import advise, app
from quota_constructs.commands.demo import emulator_client, run_tutorial
from quota_constructs.config import load_organisation
from quota_constructs.forecast import load_calibration
from quota_constructs.local.handlers.submit_request import DURATION_TAG
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.runtime.adopt import JobHistory, read_job_history
from quota_constructs.scheduling import SchedulerOptions
from tests.helpers import ORGS_DIR
from tests.runtime.helpers import FAST_RETRIES, last_monday, training_job

RESEARCH = ORGS_DIR / "research.yaml"
TEAMS = ORGS_DIR.parent / "teams" / "research.yaml"
INSTANT = SchedulerOptions(scheduled_to_starting_s=0.0, starting_to_running_s=0.0)
"""Emulator timing the simulator reproduces with ``startup_s=0, preemption_s=0``."""
REPLAY = SimulationOptions(startup_s=0.0, preemption_s=0.0)
DAY = generate_workload(load_teams(TEAMS), days=1, seed=0)
"""76 jobs of the research teams' Monday."""
MAX_RUNTIME_S = 7200
"""``MaxRuntimeInSeconds`` of the helpers' training job: longer jobs end FAILED at 2 h."""
runner = CliRunner()


@pytest.fixture
def research_day() -> Iterator[tuple[EmulatorServer, JobHistory]]:
    """A generated Monday of the research teams run on the emulator, and its history."""
    with EmulatorServer(
        org_files=[RESEARCH],
        options=INSTANT,
        start_epoch=last_monday(),
        dispatch="immediate",  # as the simulator: no tick between RUNNABLE and SCHEDULED
    ) as emu:
        client = emulator_client(emu, "research", retry=FAST_RETRIES)
        for index, job in enumerate(DAY):
            emu.advance(round(job.submit_time_s) - emu.now)  # whole seconds: no ms rounding
            client.submit(
                f"{job.share}-{index}",
                job.share,
                training_job(job.instance_type, job.instance_count),
                priority=job.priority,
                tags={DURATION_TAG: f"{job.duration_s:.3f}"},
            )
        emu.advance(3 * 86400 - emu.now)
        since = emu.emulator.clock.epoch(0) - 1
        yield emu, read_job_history(client, since, now_s=emu.emulator.clock.epoch(emu.now))


def test_a_generated_day_replays_with_the_emulators_waits_and_preemptions(
    research_day: tuple[EmulatorServer, JobHistory],
) -> None:
    _, history = research_day
    workload = workload_from_history(history.jobs, start_s=history.since_s, now_s=history.now_s)
    too_long = sum(j.duration_s > MAX_RUNTIME_S for j in DAY)  # SageMaker stops them: FAILED
    assert too_long > 0
    assert dict(workload.counts) == {Handling.SUCCEEDED: 76 - too_long, Handling.FAILED: too_long}
    result = simulate(load_organisation(RESEARCH), list(workload.jobs), options=REPLAY)
    preempted = 0
    for seen in workload.observed:
        replayed = result.share(seen.share)
        assert replayed.jobs == seen.jobs
        assert result.timeline.waits[seen.share] == pytest.approx(list(seen.waits), abs=0.01)
        assert sum(replayed.preemptions.values()) == seen.preemptions
        assert replayed.preempted_jobs == seen.preempted_jobs
        preempted += seen.preemptions
    assert preempted > 0  # the day exercises preemption, so the comparison means something
    assert max(w for s in workload.observed for w in s.waits) > 60  # and waiting


def test_history_records_each_jobs_request_priority_and_run_time(
    research_day: tuple[EmulatorServer, JobHistory],
) -> None:
    emu, history = research_day
    first = history.jobs[0]
    assert (first.share, first.instance_type, first.instance_count) == (
        "recommendation",
        "ml.g5.xlarge",
        2,
    )
    assert first.priority == 500
    explained = emu.explain(first.job_id)
    assert explained["schedulingPriority"] == first.priority
    assert first.run_stopped_s is not None and first.run_started_s is not None
    expected = DAY[0].duration_s
    assert first.run_stopped_s - first.run_started_s == pytest.approx(expected, abs=0.002)


def test_tutorial_history_cannot_reproduce_a_priority_raised_after_submit() -> None:
    """Why the tutorial's replay differs from what the emulator did: the history keeps only
    each job's current ``schedulingPriority``. p1 was submitted at priority 1 and raised to 4
    (UpdateServiceJob) after QS2 reclaimed its instance; replayed at 4 from the start it runs
    at once, so the in-share preemption of p3 that the raise caused never happens."""
    with EmulatorServer(org_files=[SEED_DEMO], options=INSTANT, dispatch="immediate") as emu:
        checks = run_tutorial(emu, Console(file=io.StringIO()))  # as `quota demo` runs it
        assert all(c.ok for c in checks)
        client = emulator_client(emu)
        since = emu.emulator.clock.epoch(0) - 1
        history = read_job_history(client, since, now_s=emu.emulator.clock.epoch(emu.now))
    workload = workload_from_history(history.jobs, start_s=history.since_s, now_s=history.now_s)
    assert dict(workload.counts) == {Handling.TERMINATED_RUNNING: 4}
    by_name = {r.job_name: r for r in history.jobs}
    assert by_name["qs1-p1"].priority == 4  # submitted at 1: the raise is all the history keeps
    observed = {s.share: s for s in workload.observed}
    assert observed["QS1"].preemptions == 2  # p2 cross-share, p3 in-share
    result = simulate(load_organisation(SEED_DEMO), list(workload.jobs), options=REPLAY)
    in_share = result.share("QS1").preemptions.get("IN_SHARE", 0)
    assert sum(result.share("QS1").preemptions.values()) < observed["QS1"].preemptions
    assert in_share == 0


def test_simulate_from_queue_replays_and_saves_the_workload(
    research_day: tuple[EmulatorServer, JobHistory], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emu, _ = research_day
    # --since counts back from the wall clock; the emulator's Monday is in its own past: read
    # "now" as the emulator's, or the history's start (and so how many of the day's jobs fall
    # after the backtest's first day) would depend on the day and hour the test runs
    emulator_now = emu.emulator.clock.epoch(emu.now)
    monkeypatch.setattr(advise, "time", SimpleNamespace(time=lambda: emulator_now))
    saved = f"{tmp_path}/w.csv"
    command = f"quota simulate --from-queue research --since 7d --json --save-workload {saved}"
    result = runner.invoke(
        app, [*shlex.split(command)[1:], "--startup-s", "0", "--preemption-s", "0"], env=emu.env
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["history"]["jobsRead"] == 76
    assert sum(h["jobs"] for h in data["history"]["handling"].values()) == 76
    assert list(data["results"]) == ["research (live)"]
    assert len(load_workload_csv(saved)) == 76
    start = data["history"]["historyStart"]
    assert datetime.fromisoformat(start).tzinfo is not None
    # the history, forecast at each submit (all 76: the day is past the backtest's first day),
    # then calibrated on two workloads; its time 0 the history's start, not a Monday
    calibrate = ["forecast", "calibrate", str(ORGS_DIR / "research.yaml"), "--start", start]
    out = tmp_path / "c.json"
    args = [*calibrate, "--workload", saved, "--workload", saved, "-o", str(out)]
    result = runner.invoke(app, [*args, "--samples", "12"])
    assert result.exit_code == 0, result.output
    assert load_calibration(out).fitted_on == "recorded w.csv, w.csv, 12 samples"
    result = runner.invoke(app, [*args, "--start", "last monday"])
    assert result.exit_code == 2
    assert "--start 'last monday' is not an ISO 8601 time" in result.stderr


def test_simulate_from_queue_compares_another_file(
    research_day: tuple[EmulatorServer, JobHistory],
) -> None:
    emu, _ = research_day
    other = ORGS_DIR / "research.yaml"
    command = f"quota simulate --from-queue research-queue --since 30d --compare {other}"
    result = runner.invoke(app, shlex.split(command)[1:], env=emu.env)
    assert result.exit_code == 0, result.output
    assert "76 job(s) created in the last 30d" in result.stdout
    assert "succeeded: replayed with the run time of its last attempt" in result.stdout
    assert "failed: replayed as succeeding after the run time of its last attempt" in result.stdout
    assert "Observed on the queue" in result.stdout
    assert "research (live)" in result.stdout and str(other) in result.stdout


@pytest.mark.parametrize("bad", ["1x", "0m", "-5m", "h", "7 days"])
def test_rejects_a_bad_since_naming_the_value_and_the_format(bad: str) -> None:
    result = runner.invoke(app, ["simulate", "--from-queue", "research", "--since", bad])
    assert result.exit_code == 2
    assert f"'{bad}'" in result.stderr
    assert "90m, 1h, 7d" in result.stderr


def test_rejects_from_queue_with_another_workload_source() -> None:
    result = runner.invoke(app, ["simulate", "--from-queue", "research", "--generate", str(TEAMS)])
    assert result.exit_code == 2
    assert "--from-queue" in result.stderr


def test_rejects_simulate_without_an_organisation_file_or_a_queue() -> None:
    result = runner.invoke(app, ["simulate", "--generate", str(TEAMS)])
    assert result.exit_code == 2
    assert "ORG_FILE" in result.stderr and "--from-queue" in result.stderr
