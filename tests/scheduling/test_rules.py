"""Scheduler core: misconfiguration reasons, submit checks, retries, time limits, share changes."""

from __future__ import annotations

import pytest

from quota_constructs.config import load_organisation
from quota_constructs.model import (
    REASON_BORROWABLE,
    REASON_SE_MAX,
    REASON_SHARE_AND_BORROW_LIMIT,
    REASON_SHARE_LIMIT,
    QuotaConfigError,
    QuotaShareSpec,
    ShareState,
    SharingStrategy,
)
from quota_constructs.scheduling import (
    CAPACITY_CODE,
    REASON_CAPACITY,
    REASON_CAPACITY_ERROR,
    REASON_LIMIT_LOWERED,
    REASON_MAX_RUNTIME,
    REASON_TIMEOUT,
    EventKind,
    JobRequest,
    JobStatus,
    Outcome,
    PendingKind,
    PreemptionRule,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
    SubmitRejected,
)
from tests.helpers import ORGS_DIR

G5 = "ml.g5.xlarge"
M5 = "ml.m5.xlarge"
LEND = SharingStrategy.LEND
LAB = SharingStrategy.LEND_AND_BORROW
RESERVE = SharingStrategy.RESERVE


def seed_demo(**options: object) -> Scheduler:
    org = load_organisation(ORGS_DIR / "seed-demo.yaml")
    return Scheduler.for_queue(
        org.queue,
        queue_name="seed-demo-queue",
        options=SchedulerOptions(**options),  # type: ignore[arg-type]
    )


def job(share: str, n: int = 1, itype: str = G5, **kw: object) -> JobRequest:
    kw.setdefault("duration_s", 100.0)
    return JobRequest(f"job-{share}", share, {itype: n}, **kw)  # type: ignore[arg-type]


def share(name: str, n: int, strategy: SharingStrategy, **kw: object) -> QuotaShareSpec:
    return QuotaShareSpec(name, {M5: n}, strategy, **kw)  # type: ignore[arg-type]


# --- docs/aws-semantics.md §2.6: RUNNABLE jobs that can never fit keep AWS's exact statusReason ---


def _stuck(sched: Scheduler, request: JobRequest) -> str | None:
    submitted = sched.submit(request, now=0)
    sched.advance(1)
    assert submitted.status is JobStatus.RUNNABLE
    pending = sched.pending_reason(submitted.job_id)
    assert pending is not None
    assert pending.kind is PendingKind.EXCEEDS_LIMITS
    assert pending.message == submitted.status_reason
    return submitted.status_reason


def test_job_above_service_environment_keeps_se_max_reason() -> None:
    assert _stuck(seed_demo(), job("QS1", 4)) == REASON_SE_MAX


def test_job_above_lend_share_limit_keeps_share_limit_reason() -> None:
    sched = Scheduler(queue_name="q", shares=[share("A", 4, LEND), share("B", 4, LEND)])
    assert _stuck(sched, job("A", 5, M5)) == REASON_SHARE_LIMIT


def test_job_above_borrow_limit_keeps_borrow_limit_reason() -> None:
    sched = Scheduler(
        queue_name="q", shares=[share("A", 2, LAB, borrow_limit=100), share("B", 4, LEND)]
    )
    assert _stuck(sched, job("A", 5, M5)) == REASON_SHARE_AND_BORROW_LIMIT


def test_job_above_all_borrowable_capacity_keeps_borrowable_reason() -> None:
    sched = Scheduler(
        queue_name="q",
        shares=[share("A", 4, LAB, borrow_limit=200), share("B", 4, LAB, borrow_limit=200)],
        service_environment={M5: 12},
    )
    assert _stuck(sched, job("A", 10, M5)) == REASON_BORROWABLE


def test_job_of_type_missing_from_share_keeps_share_limit_reason() -> None:
    sched = Scheduler(
        queue_name="q", shares=[share("A", 4, LEND), QuotaShareSpec("B", {G5: 1}, LEND)]
    )
    assert _stuck(sched, job("A", 1, G5)) == REASON_SHARE_LIMIT


def test_runnable_time_limit_terminates_misconfigured_job() -> None:
    sched = seed_demo()  # runnable_timeout_minutes: 60
    stuck = sched.submit(job("QS1", 4), now=0)
    sched.advance(3599)
    assert stuck.status is JobStatus.RUNNABLE
    sched.advance(3600)
    assert stuck.status is JobStatus.FAILED
    assert stuck.status_reason == (
        "Terminated by JobStateTimeLimit action due to reason: "
        "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE"
    )


def _blocked(sched: Scheduler) -> list[SchedulerEvent]:
    events: list[SchedulerEvent] = []
    sched.subscribe(lambda e: events.append(e) if e.kind is EventKind.QUEUE_BLOCKED else None)
    return events


def test_a_job_turning_runnable_misconfigured_is_reported_blocked_after_its_state_change() -> None:
    sched = seed_demo()
    everything: list[SchedulerEvent] = []
    sched.subscribe(everything.append)
    stuck = sched.submit(job("QS1", 4), now=0)
    sched.advance(1)

    mine = [(e.kind, e.status, e.status_reason) for e in everything if e.job is stuck]
    assert mine[-2:] == [
        (EventKind.STATE_CHANGE, JobStatus.RUNNABLE, REASON_SE_MAX),
        (EventKind.QUEUE_BLOCKED, JobStatus.RUNNABLE, REASON_SE_MAX),
    ]


def test_a_waiting_job_made_misconfigured_by_a_share_update_is_reported_blocked() -> None:
    sched = seed_demo()
    blocked = _blocked(sched)
    sched.submit(job("QS2"), now=0)  # QS2 uses its instance: QS1's 2-instance job must wait
    waiting = sched.submit(job("QS1", 2), now=0)
    sched.advance(10)
    assert waiting.status is JobStatus.RUNNABLE and blocked == []

    sched.upsert_share(QuotaShareSpec("QS1", {G5: 1}, RESERVE), now=20)  # no borrowing now

    [event] = blocked
    assert (event.job, event.status, event.previous_status) == (
        waiting, JobStatus.RUNNABLE, JobStatus.RUNNABLE,
    )  # fmt: skip
    assert event.status_reason == REASON_SHARE_LIMIT == waiting.status_reason


def test_a_waiting_job_made_misconfigured_by_a_smaller_environment_is_reported_blocked() -> None:
    sched = seed_demo()
    blocked = _blocked(sched)
    sched.submit(job("QS2"), now=0)
    waiting = sched.submit(job("QS1", 2), now=0)
    sched.advance(10)

    sched.set_service_environment({G5: 1}, now=20)
    sched.set_service_environment({G5: 1}, now=30)  # the same reason again: no second event

    assert [(e.job, e.status_reason) for e in blocked] == [(waiting, REASON_SE_MAX)]


def test_raising_limits_makes_a_stuck_job_runnable_and_cancels_its_time_limit() -> None:
    sched = Scheduler(
        queue_name="q",
        shares=[share("A", 4, LEND)],
        options=SchedulerOptions(
            runnable_time_limits={"MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED": 600}
        ),
    )
    big = sched.submit(job("A", 5, M5, duration_s=10_000.0), now=0)
    sched.advance(10)
    sched.upsert_share(share("A", 6, LEND), now=20)
    assert big.status is JobStatus.SCHEDULED and big.status_reason is None
    sched.advance(700)
    assert big.status is JobStatus.RUNNING


# --- submit validation --------------------------------------------------------------------


def test_rejects_unknown_share() -> None:
    with pytest.raises(
        SubmitRejected, match=r"quotaShareName: no quota share .*use one of: QS1, QS2, QS3"
    ):
        seed_demo().submit(job("QS9"), now=0)


def test_rejects_missing_share_name() -> None:
    with pytest.raises(SubmitRejected, match="quotaShareName is required"):
        seed_demo().submit(job(""), now=0)


def test_rejects_disabled_share() -> None:
    sched = seed_demo()
    sched.upsert_share(QuotaShareSpec("QS2", {G5: 1}, LEND, state=ShareState.DISABLED))
    with pytest.raises(SubmitRejected, match="DISABLED and accepts no new jobs"):
        sched.submit(job("QS2"), now=0)


def test_rejects_priority_out_of_range() -> None:
    with pytest.raises(
        SubmitRejected, match=r"schedulingPriority: scheduling priority must be .*9999"
    ):
        seed_demo().submit(job("QS1", priority=10_000), now=0)


def test_rejects_bad_instance_type_and_count() -> None:
    with pytest.raises(SubmitRejected, match="2 problems") as err:
        seed_demo().submit(JobRequest("j", "QS1", {"g5.xlarge": 0}, 10.0), now=0)
    assert "SageMaker training instance type" in str(err.value)
    assert "instance count must be an integer at least 1" in str(err.value)


def test_rejects_retry_attempts_out_of_range() -> None:
    with pytest.raises(SubmitRejected, match=r"retryStrategy.attempts: .* between 1 and 10"):
        seed_demo().submit(job("QS1", retry_attempts=11), now=0)


def test_rejects_update_priority_out_of_range() -> None:
    sched = seed_demo()
    submitted = sched.submit(job("QS1"), now=0)
    with pytest.raises(SubmitRejected, match="scheduling priority"):
        sched.update_priority(submitted.job_id, -1, now=0)


def test_rejects_time_going_backwards() -> None:
    sched = seed_demo()
    sched.advance(10)
    with pytest.raises(ValueError, match="time must not go backwards"):
        sched.advance(5)


def test_rejects_invalid_share_update() -> None:
    with pytest.raises(QuotaConfigError, match="borrow_limit is only allowed"):
        seed_demo().upsert_share(QuotaShareSpec("QS2", {G5: 1}, LEND, borrow_limit=10))


# --- lifecycle ------------------------------------------------------------------------------


def test_job_lifecycle_timestamps_and_success() -> None:
    sched = seed_demo(scheduled_to_starting_s=2.0, starting_to_running_s=3.0)
    done = sched.submit(job("QS3", duration_s=50.0), now=10)
    sched.run_until_idle()
    assert done.status is JobStatus.SUCCEEDED
    assert (done.created_at, done.scheduled_at, done.starting_at, done.started_at) == (
        10,
        10,
        12,
        15,
    )
    assert done.stopped_at == 65
    assert done.status_reason == "Received status from SageMaker: Training job completed"
    assert sched.usage()["QS3"] == {}


def test_failed_outcome_is_retried_up_to_attempts() -> None:
    sched = seed_demo()
    flaky = sched.submit(job("QS3", outcome=Outcome.FAILED, retry_attempts=3), now=0)
    sched.run_until_idle()
    assert flaky.status is JobStatus.FAILED
    assert len(flaky.attempts) == 3
    assert all(not a.preempted for a in flaky.attempts)


def test_attempt_duration_times_out_the_attempt() -> None:
    sched = seed_demo()
    slow = sched.submit(
        job("QS3", duration_s=1000.0, attempt_duration_s=60.0, retry_attempts=2), now=0
    )
    sched.run_until_idle()
    assert slow.status is JobStatus.FAILED
    assert [a.status_reason for a in slow.attempts] == [REASON_TIMEOUT, REASON_TIMEOUT]
    assert slow.stopped_at == pytest.approx(2 * (2 + 60))


def test_terminate_running_and_runnable_jobs() -> None:
    sched = seed_demo()
    running = sched.submit(job("QS3", duration_s=None), now=0)
    waiting = sched.submit(job("QS3", duration_s=None), now=0)
    sched.advance(5)
    sched.terminate(running.job_id, "no longer needed", now=6)
    assert running.status is JobStatus.FAILED and running.is_terminated
    assert running.status_reason == "no longer needed"
    assert waiting.status is JobStatus.RUNNABLE  # nothing is placed inside the call
    sched.advance(6)
    assert waiting.status is JobStatus.SCHEDULED  # the next pass gives it the freed instance
    sched.terminate(waiting.job_id, "stop", now=8)
    assert sched.usage()["QS3"] == {} and sched.next_event_time() is None


def test_disabled_share_keeps_dispatching_already_submitted_jobs() -> None:
    sched = seed_demo()
    queued = [sched.submit(job("QS3"), now=0) for _ in range(2)]
    sched.upsert_share(QuotaShareSpec("QS3", {G5: 1}, RESERVE, state=ShareState.DISABLED), now=1)
    sched.run_until_idle()
    assert [j.status for j in queued] == [JobStatus.SUCCEEDED, JobStatus.SUCCEEDED]


def test_disabled_share_option_stops_dispatch() -> None:
    sched = seed_demo(disabled_share_dispatches=False)
    queued = sched.submit(job("QS3"), now=0)
    sched.upsert_share(QuotaShareSpec("QS3", {G5: 1}, RESERVE, state=ShareState.DISABLED))
    sched.advance(5)
    assert queued.status is JobStatus.RUNNABLE
    pending = sched.pending_reason(queued.job_id)
    assert pending is not None and pending.kind is PendingKind.SHARE_DISABLED


def test_lowering_share_limit_preempts_its_jobs() -> None:
    sched = Scheduler(queue_name="q", shares=[share("A", 3, RESERVE)], service_environment={M5: 3})
    jobs = [sched.submit(job("A", 1, M5, duration_s=None, priority=p), now=0) for p in (5, 1, 3)]
    sched.advance(10)
    sched.upsert_share(share("A", 1, RESERVE), now=10)
    assert [j.status for j in jobs] == [JobStatus.RUNNING, JobStatus.RUNNABLE, JobStatus.RUNNABLE]
    assert all(j.preemptions[0].rule is PreemptionRule.LIMIT_LOWERED for j in jobs[1:])
    assert jobs[1].preemptions[0].reason == REASON_LIMIT_LOWERED
    assert sched.usage()["A"] == {M5: 1}


def test_switching_lender_to_reserve_reclaims_lent_capacity() -> None:
    sched = Scheduler(queue_name="q", shares=[share("A", 1, LAB), share("B", 1, LEND)])
    a = [sched.submit(job("A", 1, M5, duration_s=None), now=0) for _ in range(2)]
    sched.advance(1)
    assert sched.ledger()["B"].lent == {M5: 1}
    sched.upsert_share(share("B", 1, RESERVE), now=2)
    assert a[1].status is JobStatus.RUNNABLE
    assert a[1].preemptions[0].rule is PreemptionRule.LIMIT_LOWERED
    assert sched.ledger()["B"].lent == {}


def test_preemption_retries_zero_fails_on_first_preemption() -> None:
    sched = seed_demo()
    borrower = sched.submit(job("QS1", priority=1, preemption_retries=0, duration_s=None), now=0)
    sched.submit(job("QS1", priority=5, duration_s=None), now=0)
    sched.advance(1)
    assert borrower.alloc == {"QS2": {G5: 1}}
    sched.submit(job("QS2"), now=2)
    sched.advance(2)
    assert borrower.status is JobStatus.FAILED
    assert borrower.preemptions[0].terminated
    assert borrower.is_terminated  # AWS: "terminated" after its preemption retries
    assert "preemptionRetriesBeforeTermination (0) used up" in (borrower.status_reason or "")


def test_remove_share_terminates_its_jobs_and_reclaims_lent_capacity() -> None:
    sched = seed_demo()
    own = sched.submit(job("QS1", priority=5, duration_s=None), now=0)
    borrower = sched.submit(job("QS1", priority=1, duration_s=None), now=0)
    lender_job = sched.submit(job("QS2", duration_s=None), now=0)
    sched.advance(1)
    sched.terminate(lender_job.job_id, "make room", now=1)
    sched.advance(2)
    assert borrower.alloc == {"QS2": {G5: 1}}
    sched.remove_share("QS2", now=3)
    assert borrower.status is JobStatus.RUNNABLE
    assert own.status is JobStatus.RUNNING
    assert "QS2" not in sched.usage()


def test_checkpointed_job_resumes_from_its_last_checkpoint() -> None:
    sched = seed_demo(scheduled_to_starting_s=0.0, starting_to_running_s=0.0)
    ckpt = sched.submit(job("QS1", priority=1, duration_s=100.0, checkpoint_interval_s=30.0), now=0)
    sched.submit(job("QS1", priority=9, duration_s=1000.0), now=0)
    sched.advance(70)
    sched.submit(job("QS2", duration_s=10.0), now=70)  # reclaims QS2's instance at t=70
    sched.advance(70)
    assert ckpt.status is JobStatus.RUNNABLE and ckpt.progress_s == 60
    sched.run_until_idle()
    assert ckpt.status is JobStatus.SUCCEEDED
    assert ckpt.stopped_at == 80 + 40  # re-dispatched at 80 when QS2's job ended, 40 s left


def test_model_infeasibility_uses_an_explicit_service_environment() -> None:
    queue = Scheduler(queue_name="q", shares=[share("A", 4, LEND)]).queue
    assert queue.infeasibility("A", {M5: 2}) is None
    assert queue.infeasibility("A", {M5: 2}, service_environment={M5: 1}) == REASON_SE_MAX
    assert queue.infeasibility("A", {M5: 2}, service_environment={M5: 8}) is None


def test_lowering_a_limit_twice_counts_preemptions_in_progress() -> None:
    sched = Scheduler(
        queue_name="q",
        shares=[share("A", 3, RESERVE)],
        options=SchedulerOptions(preemption_duration_s=20.0),
    )
    jobs = [sched.submit(job("A", 1, M5, duration_s=None), now=0) for _ in range(3)]
    sched.advance(5)
    sched.upsert_share(share("A", 2, RESERVE), now=5)
    assert sum(sched.preemption_in_progress(j.job_id) for j in jobs) == 1
    sched.upsert_share(share("A", 1, RESERVE), now=10)
    assert sum(sched.preemption_in_progress(j.job_id) for j in jobs) == 2
    sched.advance(40)
    assert [j.status for j in jobs].count(JobStatus.RUNNING) == 1
    assert sum(len(j.preemptions) for j in jobs) == 2


def test_rejects_removing_an_unknown_share() -> None:
    with pytest.raises(
        KeyError, match=r"no quota share 'QS9' on 'seed-demo-queue' \(QS1, QS2, QS3\)"
    ):
        seed_demo().remove_share("QS9")


def test_rejects_a_twenty_first_share() -> None:
    sched = Scheduler(queue_name="q", shares=[share(f"S{i}", 1, LEND) for i in range(20)])
    with pytest.raises(QuotaConfigError, match="holds at most 20 shares"):
        sched.upsert_share(share("S20", 1, LEND))
    sched.upsert_share(share("S0", 2, LEND))  # updating an existing share is fine
    assert sched.queue.share("S0").capacity == {M5: 2}


def test_rejects_unknown_job() -> None:
    with pytest.raises(KeyError, match="no job 'nope' in job queue 'seed-demo-queue'"):
        seed_demo().terminate("nope", "stop", now=0)


# --- insufficient SageMaker capacity (service-job-retries, sm_job_stuck_in_runnable_capacity) ---


def test_attempts_without_capacity_are_retried_without_using_an_attempt() -> None:
    sched = seed_demo()
    reasons: list[str | None] = []
    sched.subscribe(lambda event: reasons.append(event.job.status_reason))
    unlucky = sched.submit(job("QS1", capacity_errors=3, retry_attempts=1), now=0)
    sched.advance(200)

    assert unlucky.status is JobStatus.SUCCEEDED
    assert [a.status_reason for a in unlucky.attempts[:3]] == [REASON_CAPACITY_ERROR] * 3
    assert len(unlucky.attempts) == 4
    assert reasons.count(REASON_CAPACITY) == 3


def test_the_capacity_time_limit_counts_from_the_first_attempt_without_capacity() -> None:
    sched = seed_demo(runnable_time_limits={CAPACITY_CODE: 600.0})
    unlucky = sched.submit(job("QS1", capacity_errors=10_000), now=0)
    sched.advance(599)
    assert unlucky.status is not JobStatus.FAILED
    sched.advance(605)

    assert unlucky.status is JobStatus.FAILED
    assert unlucky.is_terminated
    assert unlucky.status_reason == (
        "Terminated by JobStateTimeLimit action due to reason: "
        "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"
    )


def test_terminating_a_batch_dispatches_none_of_its_jobs() -> None:
    """TerminateServiceJobs of a RUNNING job and the jobs waiting behind it: all end FAILED,
    terminated, and none of them is SCHEDULED by the instance another of them freed."""
    sched = seed_demo()
    jobs = [sched.submit(job("QS3", duration_s=None), now=0) for _ in range(50)]
    sched.advance(5)
    assert [j.status for j in jobs[:2]] == [JobStatus.RUNNING, JobStatus.RUNNABLE]
    scheduled: list[str] = []
    sched.subscribe(
        lambda e: scheduled.append(e.job.job_id) if e.status is JobStatus.SCHEDULED else None
    )

    sched.terminate_all([j.job_id for j in reversed(jobs)], "cancelled", now=6)
    sched.advance(6)

    assert scheduled == []
    assert all(j.status is JobStatus.FAILED and j.is_terminated for j in jobs)
    assert [len(j.attempts) for j in jobs] == [1] + [0] * 49
    assert sched.usage()["QS3"] == {}


def test_a_terminated_jobs_instance_goes_to_the_next_job_at_the_next_pass() -> None:
    """One by one, as a loop of TerminateServiceJob calls: each call places nothing, the pass
    at the next advance does."""
    sched = seed_demo()
    first, second, third = (sched.submit(job("QS3", duration_s=None), now=0) for _ in range(3))
    sched.advance(5)
    sched.terminate(first.job_id, "stop", now=5)
    sched.terminate(second.job_id, "stop", now=5)
    assert second.attempts == [] and third.status is JobStatus.RUNNABLE
    sched.advance(5)
    assert third.status is JobStatus.SCHEDULED


def test_an_attempt_reaching_its_max_runtime_fails_stopped_by_sagemaker() -> None:
    """SageMaker stops a training job at ``MaxRuntimeInSeconds`` (``Stopped`` /
    ``MaxRuntimeExceeded``), which Batch reports as FAILED: not SUCCEEDED."""
    sched = seed_demo()
    endless = sched.submit(job("QS3", duration_s=None, max_runtime_s=600.0), now=0)
    sched.run_until_idle()
    assert endless.status is JobStatus.FAILED and not endless.is_terminated
    assert endless.status_reason == REASON_MAX_RUNTIME
    assert endless.started_at is not None
    assert endless.stopped_at == pytest.approx(endless.started_at + 600)
    assert [a.status_reason for a in endless.attempts] == [REASON_MAX_RUNTIME]


def test_work_done_within_the_max_runtime_succeeds_and_retries_apply_to_a_stopped_one() -> None:
    sched = seed_demo()
    quick = sched.submit(job("QS2", duration_s=600.0, max_runtime_s=600.0), now=0)
    slow = sched.submit(job("QS3", duration_s=900.0, max_runtime_s=600.0, retry_attempts=2), now=0)
    sched.run_until_idle()
    assert quick.status is JobStatus.SUCCEEDED
    assert slow.status is JobStatus.FAILED
    assert [a.status_reason for a in slow.attempts] == [REASON_MAX_RUNTIME] * 2


def test_runnable_time_limits_end_blocked_jobs_head_first_one_at_a_time() -> None:
    """AWS's action fires "when a job is at the head of the job queue in the specified state
    for the specified period of time": the first blocked job in the share's order ends after
    the limit, the next one a limit later, not all at once."""
    sched = seed_demo()  # runnable_timeout_minutes: 60
    low, high, mid = (sched.submit(job("QS1", 4, priority=p), now=0) for p in (1, 9, 5))
    sched.advance(3600)
    assert [j.status for j in (high, mid, low)] == [
        JobStatus.FAILED,
        JobStatus.RUNNABLE,
        JobStatus.RUNNABLE,
    ]
    sched.advance(7199)
    assert mid.status is JobStatus.RUNNABLE
    sched.advance(7200)
    assert (mid.status, low.status) == (JobStatus.FAILED, JobStatus.RUNNABLE)
    sched.run_until_idle()
    assert low.stopped_at == 3 * 3600
    assert all(j.is_terminated for j in (high, mid, low))


def test_a_new_first_blocked_job_starts_its_own_clock() -> None:
    sched = seed_demo()
    first = sched.submit(job("QS1", 4, priority=1), now=0)
    sched.advance(1800)
    ahead = sched.submit(job("QS1", 4, priority=9), now=1800)
    sched.advance(3600)
    assert (first.status, ahead.status) == (JobStatus.RUNNABLE, JobStatus.RUNNABLE)
    sched.advance(5400)
    assert (ahead.status, first.status) == (JobStatus.FAILED, JobStatus.RUNNABLE)
    sched.run_until_idle()
    assert first.stopped_at == 5400 + 3600


def test_snapshot_lists_share_usage_most_used_first() -> None:
    specs = [share("A", 1, LEND), share("B", 3, RESERVE), share("C", 2, RESERVE)]
    sched = Scheduler(queue_name="q", shares=specs)
    sched.submit(job("A", 1, M5, duration_s=None), now=0)
    sched.submit(job("B", 2, M5, duration_s=None), now=0)
    sched.submit(job("C", 1, M5, duration_s=None), now=0)
    sched.advance(1)
    assert list(sched.snapshot().share_usage) == ["B", "A", "C"]
