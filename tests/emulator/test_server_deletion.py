"""Deleting a quota share or a job queue: its own jobs are terminated (as AWS documents), other
shares' and other organisations' jobs are left as they were, and job ids never collide."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.scheduling import REASON_SHARE_REMOVED
from tests.emulator.helpers import status, submit
from tests.helpers import ORGS_DIR


@pytest.fixture
def two_orgs() -> Iterator[EmulatorServer]:
    with EmulatorServer(org_files=[SEED_DEMO, ORGS_DIR / "research.yaml"]) as emu:
        yield emu


def share_arn(queue: str, name: str) -> str:
    return f"{queue}/quota-share/{name}"


def delete_share(batch: Any, arn: str) -> None:
    batch.update_quota_share(quotaShareArn=arn, state="DISABLED")
    batch.delete_quota_share(quotaShareArn=arn)


def statuses(batch: Any, jobs: list[str]) -> dict[str, str]:
    return {job: status(batch, job) for job in jobs}


def research_jobs(emu: EmulatorServer, batch: Any, count: int) -> list[str]:
    queue = emu.queue_arn("research")
    share = batch.list_quota_shares(jobQueue=queue)["quotaShares"][0]["quotaShareName"]
    return [submit(batch, queue, share, f"research-{n}") for n in range(count)]


def test_deleting_a_share_terminates_its_runnable_and_running_jobs(
    emulator: EmulatorServer,
) -> None:
    batch = emulator.client("batch")
    queue = emulator.queue_arn("seed-demo")
    running = submit(batch, queue, "QS3", "running")
    waiting = submit(batch, queue, "QS3", "waiting")
    emulator.advance(10)
    assert statuses(batch, [running, waiting]) == {running: "RUNNING", waiting: "RUNNABLE"}

    delete_share(batch, share_arn(queue, "QS3"))
    described = [batch.describe_service_job(jobId=job) for job in (running, waiting)]

    assert {(d["status"], d["isTerminated"]) for d in described} == {("FAILED", True)}
    assert {d["statusReason"] for d in described} == {REASON_SHARE_REMOVED}


def test_deleting_a_share_leaves_other_shares_jobs_as_they_were(emulator: EmulatorServer) -> None:
    batch = emulator.client("batch")
    queue = emulator.queue_arn("seed-demo")
    others = [submit(batch, queue, "QS1", "own"), submit(batch, queue, "QS2", "lender")]
    others.append(submit(batch, queue, "QS1", "waits"))
    submit(batch, queue, "QS3", "doomed")
    emulator.advance(10)
    before = statuses(batch, others)

    delete_share(batch, share_arn(queue, "QS3"))
    emulator.advance(10)

    assert statuses(batch, others) == before
    assert submit(batch, queue, "QS2", "after") not in others


def test_deleting_a_lending_share_preempts_its_borrowers_without_terminating_them(
    emulator: EmulatorServer,
) -> None:
    batch = emulator.client("batch")
    queue = emulator.queue_arn("seed-demo")
    own = submit(batch, queue, "QS1", "own")
    borrower = submit(batch, queue, "QS1", "borrower")  # runs on QS2's idle instance
    emulator.advance(10)
    assert statuses(batch, [own, borrower]) == {own: "RUNNING", borrower: "RUNNING"}

    delete_share(batch, share_arn(queue, "QS2"))
    emulator.advance(10)
    described = batch.describe_service_job(jobId=borrower)

    assert status(batch, own) == "RUNNING"
    assert described["status"] == "RUNNABLE" and not described.get("isTerminated", False)
    assert described["preemptionSummary"]["preemptedAttemptCount"] == 1


def test_deleting_one_organisations_share_leaves_another_organisations_jobs(
    two_orgs: EmulatorServer,
) -> None:
    batch = two_orgs.client("batch")
    theirs = research_jobs(two_orgs, batch, 3)
    demo = two_orgs.queue_arn("seed-demo")
    submit(batch, demo, "QS1", "doomed")
    two_orgs.advance(10)
    before = statuses(batch, theirs)

    delete_share(batch, share_arn(demo, "QS1"))
    two_orgs.advance(10)

    assert statuses(batch, theirs) == before


def test_deleting_a_queue_forgets_its_jobs_and_keeps_every_other_job(
    two_orgs: EmulatorServer,
) -> None:
    batch = two_orgs.client("batch")
    demo = two_orgs.queue_arn("seed-demo")
    gone = [submit(batch, demo, share, f"demo-{share}") for share in ("QS1", "QS2", "QS3")]
    theirs = research_jobs(two_orgs, batch, 3)
    two_orgs.advance(10)
    before = statuses(batch, theirs)

    for share in ("QS1", "QS2", "QS3"):
        delete_share(batch, share_arn(demo, share))
    batch.update_job_queue(jobQueue=demo, state="DISABLED")
    batch.delete_job_queue(jobQueue=demo)
    later = research_jobs(two_orgs, batch, 2)

    assert statuses(batch, theirs) == before
    assert len(set(gone + theirs + later)) == len(gone) + len(theirs) + len(later)
    for job in gone:
        with pytest.raises(ClientError, match="no service job"):
            batch.describe_service_job(jobId=job)
