"""The job service built directly on a virtual clock, without HTTP: submit, dispatch as time
passes, look-ups, terminate and clientToken idempotency, with the error each bad input gets."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from quota_constructs.local.state.arns import JOB_ID_PATTERN, Account
from quota_constructs.local.state.clock import VirtualClock
from quota_constructs.local.state.errors import InvalidParameter, InvalidRequest, NotFound
from quota_constructs.local.state.job_service import (
    OTHER_REQUEST_MESSAGE,
    REPEATED_TOKEN_MESSAGE,
    ClientTokenMode,
    JobService,
    Submission,
)
from quota_constructs.local.state.registry import DISABLED, JobQueue, Registry
from quota_constructs.local.state.tags import TagStore
from quota_constructs.model import QuotaShareSpec, ShareState, SharingStrategy
from quota_constructs.scheduling import Job, JobRequest, JobStatus, PendingKind, SubmitRejected
from tests.emulator.helpers import GPU, create_queue

RUN_S = 100.0
"""How long every job runs once RUNNING."""
STARTUP_S = 3.0
"""RUNNABLE -> SCHEDULED (the emulator's one-tick dispatch delay) -> STARTING -> RUNNING with
the core's default delays (1 s each)."""


@dataclass
class State:
    """A registry and its job service on one virtual clock: one queue with one-GPU share ``a``."""

    clock: VirtualClock
    tags: TagStore
    jobs: JobService
    registry: Registry
    queue: JobQueue

    def submit(self, name: str = "j", share: str = "a", *, client_token: str | None = None) -> Job:
        """Submit a one-GPU job to ``share``; the request's fingerprint is its name."""
        request = JobRequest(name, share, {GPU: 1}, RUN_S, tags={"run": name})
        submission = Submission(self.queue.arn, f'{{"TrainingJobName": "{name}"}}')
        return self.jobs.submit(
            self.queue, request, submission, client_token=client_token, fingerprint=name
        )

    def advance_to(self, t: float) -> None:
        """Set the clock to ``t`` and let the schedulers catch up, as the emulator does."""
        self.clock.set(t)
        self.jobs.advance(settle=True)


def build_state(*, seed: int | None = 1, mode: ClientTokenMode = ClientTokenMode.REJECT) -> State:
    account, clock, tags = Account(), VirtualClock(start_epoch=0), TagStore()
    jobs = JobService(account, clock, tags, seed=seed, client_token_mode=mode)
    registry = Registry(account, tags, listener=jobs)
    queue = create_queue(registry, capacity=1)
    registry.create_quota_share("q", QuotaShareSpec("a", {GPU: 1}, SharingStrategy.RESERVE))
    return State(clock, tags, jobs, registry, queue)


@pytest.fixture
def state() -> State:
    return build_state()


def test_a_submitted_job_runs_its_lifecycle_as_the_clock_advances(state: State) -> None:
    job = state.submit()

    assert JOB_ID_PATTERN.match(job.job_id) and job.status is JobStatus.SUBMITTED
    seen = []
    for t in (0.0, 1.0, 2.0, STARTUP_S, STARTUP_S + RUN_S - 1, STARTUP_S + RUN_S):
        state.advance_to(t)
        seen.append(job.status)
    assert seen == [
        JobStatus.RUNNABLE,  # a tick, even with capacity free
        JobStatus.SCHEDULED,
        JobStatus.STARTING,
        JobStatus.RUNNING,
        JobStatus.RUNNING,
        JobStatus.SUCCEEDED,
    ]


def test_a_job_waits_for_its_shares_capacity_and_is_dispatched_when_it_frees(
    state: State,
) -> None:
    first, second = state.submit("first"), state.submit("second")
    state.advance_to(1)

    reason = state.jobs.pending_reason(second.job_id)
    assert (first.status, second.status) == (JobStatus.SCHEDULED, JobStatus.RUNNABLE)
    assert reason is not None and reason.kind is PendingKind.WAITING_FOR_OWN_CAPACITY
    assert state.jobs.pending_reason(first.job_id) is None
    state.advance_to(STARTUP_S + RUN_S - 1)
    assert second.status is JobStatus.RUNNABLE
    state.advance_to(STARTUP_S + RUN_S)
    assert (first.status, second.status) == (JobStatus.SUCCEEDED, JobStatus.SCHEDULED)


def test_a_job_is_found_by_id_or_arn_with_what_its_client_sent(state: State) -> None:
    first, second = state.submit("first"), state.submit("second")
    arn = f"arn:aws:batch:us-east-1:123456789012:service-job/{first.job_id}"

    assert state.jobs.job(first.job_id) is state.jobs.job(arn) is first
    assert state.jobs.knows(arn) and state.jobs.job_id(arn) == first.job_id
    assert state.jobs.jobs_of([state.queue]) == [first, second]
    assert state.jobs.submission(first.job_id).payload == '{"TrainingJobName": "first"}'
    assert state.tags.of(arn) == {"run": "first"}


def test_a_malformed_job_reference_is_an_invalid_parameter(state: State) -> None:
    with pytest.raises(InvalidParameter, match="jobId: no service job 'nope': not a service job"):
        state.jobs.job("nope")
    with pytest.raises(InvalidParameter, match=r"^jobArn: no service job"):
        state.jobs.job_id("arn:aws:batch:us-east-1:123456789012:service-job/x", "jobArn")


def test_an_unknown_job_or_another_accounts_arn_is_not_found(state: State) -> None:
    job_id = state.submit().job_id
    unknown = "4d3c6a2e-8a51-4b3e-9f0e-2b7c1d9e5f10"

    assert not state.jobs.knows(unknown)
    with pytest.raises(NotFound, match=f"no service job '{unknown}' in this emulator"):
        state.jobs.job(unknown)
    with pytest.raises(NotFound, match="names account 210987654321 in us-east-1"):
        state.jobs.job(f"arn:aws:batch:us-east-1:210987654321:service-job/{job_id}")
    with pytest.raises(NotFound):
        state.jobs.terminate(unknown, "stop")


def test_terminate_fails_a_waiting_job_and_leaves_a_finished_one(state: State) -> None:
    done, waiting = state.submit("done"), state.submit("waiting")
    state.advance_to(STARTUP_S + RUN_S - 1)

    state.jobs.terminate(waiting.job_id, "no longer needed")
    state.advance_to(STARTUP_S + RUN_S)
    state.jobs.terminate(done.job_id, "too late")

    assert (waiting.status, waiting.status_reason) == (JobStatus.FAILED, "no longer needed")
    assert waiting.is_terminated and not done.is_terminated
    assert done.status is JobStatus.SUCCEEDED and done.status_reason != "too late"


def test_bad_submits_and_priorities_are_refused_by_the_core(state: State) -> None:
    job = state.submit()

    with pytest.raises(SubmitRejected, match="no quota share of that name on job queue 'q'"):
        state.submit(share="missing")
    with pytest.raises(SubmitRejected, match=r"between 0 and 9999 \(got -1\)"):
        state.jobs.update_priority(job.job_id, -1)
    assert state.jobs.update_priority(job.job_id, 9).priority == 9
    assert state.jobs.jobs_of([state.queue]) == [job]


def test_a_disabled_queue_or_environment_accepts_no_new_jobs(state: State) -> None:
    state.registry.update_job_queue("q", state=DISABLED)
    with pytest.raises(InvalidRequest, match="job queue 'q' is DISABLED and accepts no new jobs"):
        state.submit()
    state.registry.update_job_queue("q", state="ENABLED")
    state.registry.update_service_environment("q-env", state=DISABLED)
    with pytest.raises(InvalidRequest, match="service environment 'q-env' of job queue 'q' is"):
        state.submit()
    assert state.jobs.jobs_of([state.queue]) == []


def test_a_deleted_queue_takes_its_jobs_and_their_tags(state: State) -> None:
    job_id = state.submit().job_id
    share = state.registry.queue("q").shares["a"]
    disabled = QuotaShareSpec("a", {GPU: 1}, SharingStrategy.RESERVE, state=ShareState.DISABLED)
    state.registry.update_quota_share(share.arn, disabled)
    state.registry.delete_quota_share(share.arn)
    state.registry.update_job_queue("q", state=DISABLED)
    state.registry.delete_job_queue("q")

    assert not state.jobs.knows(job_id)
    with pytest.raises(NotFound):
        state.jobs.job(job_id)
    assert state.tags.of(f"arn:aws:batch:us-east-1:123456789012:service-job/{job_id}") == {}


def test_a_seed_makes_the_ids_reproducible() -> None:
    ids = [build_state(seed=7).submit().job_id for _ in range(2)]
    unseeded = [build_state(seed=None).submit().job_id for _ in range(2)]

    assert ids[0] == ids[1]
    assert unseeded[0] != unseeded[1]


def test_a_repeated_client_token_is_rejected_by_default(state: State) -> None:
    state.submit("request", client_token="t1")

    assert state.jobs.replay("t2", "request") is None and state.jobs.replay(None, "x") is None
    with pytest.raises(InvalidRequest) as repeated:
        state.jobs.replay("t1", "request")
    assert repeated.value.message == REPEATED_TOKEN_MESSAGE.format(token="t1")
    with pytest.raises(InvalidRequest) as other:
        state.jobs.replay("t1", "another request")
    assert other.value.message == OTHER_REQUEST_MESSAGE.format(token="t1")


def test_replay_mode_answers_a_repeat_with_the_first_job_and_refuses_a_changed_one() -> None:
    state = build_state(mode=ClientTokenMode.REPLAY)
    first = state.submit("request", client_token="t1")

    assert state.jobs.replay("t1", "request") is first
    with pytest.raises(InvalidRequest, match="already used for a different SubmitServiceJob"):
        state.jobs.replay("t1", "another request")
