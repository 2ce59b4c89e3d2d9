"""``quota report -o ORG --since 7d``: the bill of a live queue's history (the emulator's),
checked against the emulator's own job records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.workload import generate_workload
from quota_constructs.commands import app
from quota_constructs.commands.demo import emulator_client
from quota_constructs.local.handlers.submit_request import DURATION_TAG
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.scheduling import Job, SchedulerOptions
from tests.helpers import ORGS_DIR
from tests.runtime.helpers import FAST_RETRIES, last_monday, training_job

RESEARCH = ORGS_DIR / "research.yaml"
DAY = generate_workload(load_teams(ORGS_DIR.parent / "teams" / "research.yaml"), days=1, seed=0)
INSTANT = SchedulerOptions(scheduled_to_starting_s=0.0, starting_to_running_s=0.0)
G5 = "ml.g5.xlarge"
PRICE = 1.41
runner = CliRunner()


@pytest.fixture(scope="module")
def ran_day() -> Iterator[tuple[EmulatorServer, list[Job]]]:
    """The research teams' generated Monday run on the emulator, and its jobs as it holds them."""
    with EmulatorServer(org_files=[RESEARCH], options=INSTANT, start_epoch=last_monday()) as emu:
        client = emulator_client(emu, "research", retry=FAST_RETRIES)
        for index, job in enumerate(DAY):
            emu.advance(round(job.submit_time_s) - emu.now)
            client.submit(
                f"{job.share}-{index}",
                job.share,
                training_job(job.instance_type, job.instance_count),
                priority=job.priority,
                tags={DURATION_TAG: f"{job.duration_s:.3f}"},
            )
        emu.advance(3 * 86400 - emu.now)
        service = emu.emulator.jobs
        jobs = service.jobs_of(emu.emulator.registry.job_queues())
        yield emu, jobs


def instance_hours(jobs: list[Job], share: str, *, preempted_only: bool = False) -> float:
    return (
        sum(
            (a.stopped_at - a.started_at) * job.demand[G5]
            for job in jobs
            if job.share_name == share
            for a in job.attempts
            if a.started_at is not None and (a.preempted or not preempted_only)
        )
        / 3600.0
    )


def test_the_live_bill_follows_the_emulators_job_records(
    ran_day: tuple[EmulatorServer, list[Job]], tmp_path: Path
) -> None:
    emu, jobs = ran_day
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"{G5}: {PRICE}\n", encoding="utf-8")
    args = ["report", str(RESEARCH), "-o", "research", "--since", "7d", "--json"]
    args += ["--prices", str(prices)]  # the file: data-analysis's calendar (lends on weekdays)
    result = runner.invoke(app, args, env=emu.env)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rows = {r["share"]: r for r in data["shares"]}
    assert set(rows) == {"recommendation", "generative", "data-analysis"}
    total = 0.0
    for share, row in rows.items():
        used = instance_hours(jobs, share)
        assert row["ownInstanceHours"] + row["borrowedInstanceHours"] == pytest.approx(
            used, abs=1e-3
        )
        assert row["lostInstanceHours"] == pytest.approx(
            instance_hours(jobs, share, preempted_only=True), abs=1e-3
        )
        assert row["costUsd"] == pytest.approx(used * PRICE, abs=1e-2)
        assert row["chargeUsd"] == row["costUsd"]  # on-demand: each team pays what it ran
        assert row["idleInstanceHours"] == 0  # idle on-demand quota costs nothing
        total += used * PRICE
    assert sum(instance_hours(jobs, s, preempted_only=True) for s in rows) > 0  # preemptions ran
    assert rows["generative"]["borrowedInstanceHours"] > 0
    assert rows["recommendation"]["borrowedInstanceHours"] == 0  # RESERVE neither borrows
    assert rows["recommendation"]["lentInstanceHours"] == 0  # nor lends
    lent = sum(r["lentInstanceHours"] for r in rows.values())
    assert lent == pytest.approx(rows["generative"]["borrowedInstanceHours"], abs=1e-3)
    assert data["plans"] == []
    assert data["totalCostUsd"] == pytest.approx(total, abs=1e-2)
