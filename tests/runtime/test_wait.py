"""Waiting for many jobs on list calls: targets, transitions, timeouts, API-call economy."""

from __future__ import annotations

import pytest

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import QuotaConfigError
from quota_constructs.runtime import (
    JobStatus,
    QueueClient,
    Transition,
    TransitionKind,
    Until,
    WaitTimeout,
)
from tests.runtime.helpers import runs_for, training_job


def test_waits_for_many_jobs_to_finish(client: QueueClient, emu: EmulatorServer) -> None:
    jobs = [client.submit(f"j{i}", "QS1", training_job(), tags=runs_for(60)) for i in range(12)]
    result = client.wait(jobs, until=Until.TERMINAL, timeout=3600)
    assert {j.status for j in result.jobs.values()} == {JobStatus.SUCCEEDED}
    assert set(result.jobs) == {j.job_id for j in jobs}
    assert "DescribeServiceJob" not in emu.request_counts  # lists only
    assert result.calls < result.polls * 4


def test_failed_jobs_end_the_wait_with_their_reason(client: QueueClient) -> None:
    tags = {**runs_for(30), "quota.local/outcome": "FAILED"}
    job = client.submit("bad", "QS2", training_job(), tags=tags)
    summary = job.wait(timeout=600)
    assert summary.status is JobStatus.FAILED
    assert "AlgorithmError" in summary.status_reason


def test_rejects_jobs_not_there_in_time(client: QueueClient) -> None:
    jobs = [client.submit(f"w{i}", "QS3", training_job(), tags=runs_for(3600)) for i in range(2)]
    with pytest.raises(WaitTimeout, match=r"2 job\(s\) not there after 120 s") as info:
        client.wait(jobs, until=Until.TERMINAL, timeout=120)
    assert info.value.pending == {
        jobs[0].job_id: JobStatus.RUNNING,
        jobs[1].job_id: JobStatus.RUNNABLE,
    }


def test_waits_for_dispatch_not_completion(client: QueueClient) -> None:
    job = client.submit("d", "QS3", training_job(), tags=runs_for(3600))
    summary = client.wait([job], until=Until.DISPATCHED, timeout=600).jobs[job.job_id]
    assert summary.status.is_dispatched


def test_waits_for_a_preempted_job_back_in_runnable(client: QueueClient) -> None:
    own = client.submit("own", "QS1", training_job(), priority=5, tags=runs_for(3600))
    borrower = client.submit("borrower", "QS1", training_job(), priority=1, tags=runs_for(3600))
    client.wait([own, borrower], until=Until.RUNNING, timeout=600)
    client.submit("lender", "QS2", training_job(), tags=runs_for(3600))
    summary = client.wait([borrower], until=Until.REQUEUED, timeout=600).jobs[borrower.job_id]
    assert summary.status is JobStatus.RUNNABLE


def test_custom_target(client: QueueClient) -> None:
    job = client.submit("c", "QS2", training_job(), tags=runs_for(3600))
    result = client.wait([job], until=lambda t: t.status is JobStatus.RUNNING, timeout=600)
    assert result.jobs[job.job_id].status is JobStatus.RUNNING


def test_reports_dispatch_preemption_and_finish(client: QueueClient) -> None:
    seen: list[tuple[str, TransitionKind]] = []

    def record(change: Transition) -> None:
        seen.append((change.job.job_name, change.kind))

    own = client.submit("own", "QS1", training_job(), priority=5, tags=runs_for(3600))
    borrower = client.submit("borrower", "QS1", training_job(), priority=1, tags=runs_for(300))
    client.wait([own, borrower], until=Until.RUNNING, timeout=600, on_transition=record)
    lender = client.submit("lender", "QS2", training_job(), tags=runs_for(60))
    client.wait([borrower, lender], until=Until.TERMINAL, timeout=4000, on_transition=record)
    assert ("own", TransitionKind.DISPATCHED) in seen
    assert ("borrower", TransitionKind.PREEMPTED) in seen
    assert ("lender", TransitionKind.FINISHED) in seen
    assert seen[-1] == ("borrower", TransitionKind.FINISHED)


def test_rejects_unknown_target_name() -> None:
    with pytest.raises(
        QuotaConfigError,
        match=r"until: unknown wait target \(got 'later'\); fix: choose one of terminal",
    ):
        Until.named("later")


def test_named_targets() -> None:
    assert Until.named("dispatched") is Until.DISPATCHED
    assert Until.named("running") is Until.RUNNING


def test_a_job_missing_from_every_list_is_described(
    client: QueueClient, emu: EmulatorServer
) -> None:
    job = client.submit("hidden", "QS1", training_job(), tags=runs_for(30))
    job.share = "QS2"  # the lists are filtered by the wrong share, so they never show it
    summary = client.wait([job], until=Until.TERMINAL, timeout=600).jobs[job.job_id]
    assert summary.status is JobStatus.SUCCEEDED
    assert emu.request_counts["DescribeServiceJob"] >= 1
