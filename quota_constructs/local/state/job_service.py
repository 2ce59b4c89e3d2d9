"""Owns the emulator's service jobs: a scheduler core per job queue, job index, ids, idempotency.

Besides the schedulers it keeps what each job's client sent (echoed by DescribeServiceJob) and
the ``clientToken`` of each submit.

Follows the registry as its :class:`~.registry.QueueListener` (a scheduler per queue, kept in
step with the queue's shares, service environment and RUNNABLE time-limit actions). Typed in
and out: jobs are the core's :class:`~quota_constructs.scheduling.Job`; refusals are
:mod:`.errors`, and the core's :class:`SubmitRejected` (unknown or DISABLED share, missing
``quotaShareName``, priority out of range) passes through. Scheduling rules live in the core,
quota rules in the model; rendering is the handlers'.

Jobs are named by id or ARN wherever the API takes a ``jobId`` (:meth:`JobService.job_id`).
Ids are random UUIDs; a ``seed`` makes the sequence reproducible. Ids never repeat within a run,
whatever is deleted.

Finished jobs expire (:class:`JobRetention`): after ``finished_for_s`` seconds of the emulator's
clock, and the oldest first once more than ``max_finished`` are kept, so a long-lived emulator's
memory is bounded. AWS documents no retention for service jobs: the defaults are UNCONFIRMED.

A repeated ``clientToken`` is refused, as botocore's documentation of
``SubmitServiceJob.clientToken`` says ("the second request is rejected"):
:attr:`ClientTokenMode.REJECT`, the default. The error (``ClientException``, HTTP 400, with
:data:`REPEATED_TOKEN_MESSAGE`) is UNCONFIRMED, documented in ``docs/emulator.md``.
:attr:`ClientTokenMode.REPLAY` answers a repeat of the same request with the first job instead.
"""

from __future__ import annotations

import json
import math
import random
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import partial
from typing import Any

from quota_constructs.api_shapes import parse_service_job_arn, time_limits_from_api
from quota_constructs.local.state.arns import JOB_ID_PATTERN, Account
from quota_constructs.local.state.clock import EmulatorClock, RealTimeClock
from quota_constructs.local.state.errors import InvalidParameter, InvalidRequest, NotFound
from quota_constructs.local.state.registry import ENABLED, JobQueue, ShareRecord
from quota_constructs.local.state.tags import TagStore
from quota_constructs.model import NUM_INSTANCES
from quota_constructs.scheduling import (
    Job,
    JobRequest,
    JobStatus,
    PendingReason,
    Scheduler,
    SchedulerEvent,
    SchedulerOptions,
)

REPEATED_TOKEN_MESSAGE = (
    "clientToken {token!r}: a SubmitServiceJob request with this token was already received, "
    "so this one is rejected and creates no job; find the job it created with ListServiceJobs "
    "(JOB_NAME filter), or send a new token for a new job"
)
"""The message refusing an identical repeated request (UNCONFIRMED: AWS documents only that it
"is rejected"; the code is Batch's ``ClientException``)."""
OTHER_REQUEST_MESSAGE = (
    "clientToken {token!r} was already used for a different SubmitServiceJob request; use a new "
    "token for a new job"
)


class DispatchMode(StrEnum):
    """When a submitted job is first looked at by its queue's scheduler.

    ``tick`` (default, AWS's behaviour): on the next scheduler tick, never inside the request
    that submitted it, so a job is observably SUBMITTED first and jobs submitted within one tick
    dispatch in priority order, not arrival order. A tick is :data:`WALL_TICK_S` of emulated
    time on a wall clock, and each ``advance`` on a virtual clock. ``immediate``: every request
    first brings the schedulers to now, so a job fitting capacity is SCHEDULED before the next
    request is answered (the emulator's behaviour before; arrival order for back-to-back
    submits).
    """

    TICK = "tick"
    IMMEDIATE = "immediate"


REASON_QUEUE_DELETED = "Job queue deleted: all jobs in the queue are terminated"
"""``statusReason`` of the jobs a ``DeleteJobQueue`` terminates (UNCONFIRMED: AWS's text)."""
_WAITING = (JobStatus.SUBMITTED, JobStatus.PENDING, JobStatus.RUNNABLE)

WALL_TICK_S = 1.0
"""Emulated seconds per scheduler tick on a wall clock (UNCONFIRMED: AWS's interval)."""


class ClientTokenMode(StrEnum):
    """What SubmitServiceJob does with a ``clientToken`` it has seen before (same request).

    ``reject`` (default): refuse it, as AWS documents. ``replay``: answer with the first job's
    ids (an opt-in; a request that differs from the first is refused in both modes).
    """

    REJECT = "reject"
    REPLAY = "replay"


DEFAULT_FINISHED_FOR_S = 14 * 86_400.0
"""Seconds a finished job stays visible by default (UNCONFIRMED: AWS documents none)."""
DEFAULT_MAX_FINISHED = 20_000
"""Finished jobs kept at most by default: about 500 MiB with 10 KiB payloads (docs/emulator.md)."""


@dataclass(frozen=True)
class JobRetention:
    """How long finished (SUCCEEDED or FAILED) jobs stay visible before they expire.

    ``finished_for_s``: seconds on the emulator's clock after a job finished (``None``: no time
    limit); ``max_finished``: finished jobs kept at most, the oldest expiring first (``None``: no
    limit). An expired job is gone from every operation, its tags and ``clientToken`` with it;
    expiry happens at the first request or clock step after the limit is passed.
    """

    finished_for_s: float | None = DEFAULT_FINISHED_FOR_S
    max_finished: int | None = DEFAULT_MAX_FINISHED

    def __post_init__(self) -> None:
        if self.finished_for_s is not None and not self.finished_for_s >= 0:
            raise ValueError(
                f"finished_for_s: {self.finished_for_s!r} is not a number of seconds >= 0; "
                "give 0 or more, or None to keep finished jobs without a time limit"
            )
        if self.max_finished is not None and self.max_finished < 0:
            raise ValueError(
                f"max_finished: {self.max_finished!r} is negative; give 0 or more, or None to "
                "keep any number of finished jobs"
            )


@dataclass(frozen=True)
class Submission:
    """What a job's client sent that the core does not keep, echoed by DescribeServiceJob."""

    queue_arn: str
    payload: str
    retry_strategy: Mapping[str, Any] | None = None
    preemption_configuration: Mapping[str, Any] | None = None
    timeout_config: Mapping[str, Any] | None = None


class JobIds:
    """Issues job ids: random version-4 UUIDs, reproducible from a ``seed`` when one is given.

    Without a seed every id comes from the system's randomness, so two runs never share ids;
    with one, the same seed gives the same sequence. The sequence only moves forward, so
    deleting queues or jobs never brings an id back.
    """

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed) if seed is not None else None

    def next(self) -> str:
        if self._random is None:
            return str(uuid.uuid4())
        return str(uuid.UUID(int=self._random.getrandbits(128), version=4))


class JobService:
    """Service jobs of every queue: submit, update, terminate, look up, list, snapshot.

    ``seed`` makes the job ids reproducible (``None``: random); ``options`` are the core's, with
    each queue's RUNNABLE time limits from its ``jobStateTimeLimitActions``. Job tags live in
    ``tags`` under the job's ARN. ``client_token_mode``: see :class:`ClientTokenMode`;
    ``retention``: when finished jobs expire (:class:`JobRetention`).
    """

    def __init__(
        self,
        account: Account,
        clock: EmulatorClock,
        tags: TagStore,
        *,
        options: SchedulerOptions | None = None,
        seed: int | None = None,
        client_token_mode: ClientTokenMode = ClientTokenMode.REJECT,
        dispatch: DispatchMode = DispatchMode.TICK,
        retention: JobRetention | None = None,
    ) -> None:
        self.account = account
        self.dispatch = DispatchMode(dispatch)
        self.tick_s = WALL_TICK_S if isinstance(clock, RealTimeClock) else 0.0
        self.retention = retention or JobRetention()
        self.client_token_mode = ClientTokenMode(client_token_mode)
        self.clock = clock
        self.tags = tags
        self.options = options or SchedulerOptions()
        self.ids = JobIds(seed)
        self.schedulers: dict[str, Scheduler] = {}
        self.job_queue: dict[str, str] = {}
        """Job id -> name of its queue, for every job of an existing queue."""
        self.submitted: dict[str, Submission] = {}
        self.tokens: dict[str, tuple[str, Job]] = {}
        """``clientToken`` -> fingerprint of its request and the job it created."""
        self.listeners: list[Callable[[str, SchedulerEvent], None]] = []
        """Told (queue name, event) of every scheduler event of queues created from now on."""
        self._finished: dict[str, float] = {}
        """Finished job id -> when it finished, oldest first: the expiry order."""
        self._token_of: dict[str, str] = {}
        """Job id -> the ``clientToken`` of its submit, so the token expires with the job."""
        self.expired = 0
        """Finished jobs expired so far."""
        self.expiry_listeners: list[Callable[[str], None]] = []
        """Told the id of each job that expires, to forget what they keep of it."""

    # --- scheduler lifecycle (registry listener) ---------------------------------------------

    def _options(self, queue: JobQueue) -> SchedulerOptions:
        """The queue's time limits, positions tracked for ``earliestTimeAtPosition``, and in
        ``tick`` mode a new job RUNNABLE for a tick (:data:`WALL_TICK_S`) before it may be
        SCHEDULED (on a wall clock it becomes RUNNABLE at the next tick, so it is observably
        SUBMITTED, RUNNABLE, then SCHEDULED, a tick each)."""
        options = replace(
            self.options,
            runnable_time_limits=time_limits_from_api(queue.time_limit_actions),
            track_queue_positions=True,
        )
        if self.dispatch is not DispatchMode.TICK:
            return options
        return replace(
            options,
            dispatch_delay_s=max(options.dispatch_delay_s, WALL_TICK_S),
            submitted_to_runnable_s=max(options.submitted_to_runnable_s, self.tick_s),
        )

    def queue_created(self, queue: JobQueue) -> None:
        if queue.quota_managed:
            scheduler = Scheduler(
                queue_name=queue.name,
                shares=[s.spec for s in queue.shares.values()],
                service_environment=queue.environment.capacity,
                options=self._options(queue),
                start_time=self.now(),
            )
        else:
            scheduler = Scheduler.fifo(
                queue_name=queue.name,
                max_instances=queue.environment.capacity[NUM_INSTANCES],
                options=self._options(queue),
                start_time=self.now(),
            )
        scheduler.set_placing(queue.environment.state == ENABLED)
        self.schedulers[queue.name] = scheduler
        scheduler.subscribe(self._note_finished)
        for listener in self.listeners:
            self.schedulers[queue.name].subscribe(partial(listener, queue.name))

    def queue_changed(self, queue: JobQueue) -> None:
        self.schedulers[queue.name].options = self._options(queue)

    def share_changed(self, queue: JobQueue, share: ShareRecord) -> None:
        self.schedulers[queue.name].upsert_share(share.spec, now=self.now())

    def share_deleted(self, queue: JobQueue, share: ShareRecord) -> None:
        self.schedulers[queue.name].remove_share(share.spec.name, now=self.now())

    def capacity_changed(self, queue: JobQueue, capacity: Mapping[str, int]) -> None:
        """The new capacity; a training plan's type keeps what its plans allow now."""
        scheduler = self.schedulers[queue.name]
        now = self.now()
        scheduler.advance(now)
        scheduler.set_service_environment(scheduler.usable_capacity(capacity), now=now)

    def environment_state_changed(self, queue: JobQueue, state: str) -> None:
        """A DISABLED service environment places no job of its queue; ENABLED places again."""
        self.schedulers[queue.name].set_placing(state == ENABLED, now=self.now())

    def queue_deleted(self, queue: JobQueue) -> None:
        """Terminate the queue's unfinished jobs (:data:`REASON_QUEUE_DELETED`), then forget
        them all."""
        scheduler = self.schedulers.pop(queue.name)
        waiting_first = sorted(scheduler.jobs, key=lambda job: job.status not in _WAITING)
        for job in waiting_first:  # so no freed instance places a waiting job
            scheduler.terminate(job.job_id, REASON_QUEUE_DELETED, now=self.now())
        for job in scheduler.jobs:
            self._drop(job.job_id)

    def now(self) -> float:
        """The schedulers' time: the clock's now, in whole ticks on a wall clock
        (:class:`DispatchMode`)."""
        now = self.clock.now()
        if self.dispatch is DispatchMode.TICK and self.tick_s:
            now = math.floor(now / self.tick_s) * self.tick_s
            # never behind a scheduler something else (a share calendar) moved to the clock's now
            return max([now, *(s.now for s in self.schedulers.values())])
        return now

    def advance(self, *, settle: bool = False) -> None:
        """Bring every queue's scheduler to :meth:`now` (their timetables flip shares on their
        calendars and plan-backed capacity at their edges), then expire finished jobs. In
        ``tick`` mode a scheduler already there is left alone (what was submitted at this
        instant waits for the next tick) unless ``settle`` (an explicit ``advance`` of the
        virtual clock)."""
        now = self.now()
        batch = self.dispatch is DispatchMode.TICK and not settle
        for scheduler in self.schedulers.values():
            if not (batch and now <= scheduler.now):
                scheduler.advance(now)
        self.expire(now)

    # --- retention -----------------------------------------------------------------------------

    def _note_finished(self, event: SchedulerEvent) -> None:
        if event.status.is_terminal and event.job.job_id not in self._finished:
            self._finished[event.job.job_id] = event.time

    def expire(self, now: float) -> None:
        """Forget the finished jobs :attr:`retention` no longer keeps at ``now``."""
        keep_for, keep_at_most = self.retention.finished_for_s, self.retention.max_finished
        finished = self._finished
        while finished:
            job_id, finished_at = next(iter(finished.items()))
            too_many = keep_at_most is not None and len(finished) > keep_at_most
            if not too_many and (keep_for is None or finished_at + keep_for > now):
                break
            queue_name = self.job_queue.get(job_id)
            if queue_name is not None:
                self.schedulers[queue_name].forget(job_id)
            self._drop(job_id)
            self.expired += 1
            for listener in self.expiry_listeners:
                listener(job_id)

    def _drop(self, job_id: str) -> None:
        """Forget what the service keeps of ``job_id`` beside its scheduler."""
        self._finished.pop(job_id, None)
        self.job_queue.pop(job_id, None)
        self.submitted.pop(job_id, None)
        self.tags.remove(self.account.service_job(job_id))
        token = self._token_of.pop(job_id, None)
        if token is not None:
            self.tokens.pop(token, None)

    # --- submission ----------------------------------------------------------------------------

    def replay(self, client_token: str | None, fingerprint: str) -> Job | None:
        """The job an earlier request with ``client_token`` created, in ``replay`` mode.

        ``None`` for a new token. A known token is refused (:class:`InvalidRequest`) when the
        request differs from the first (``fingerprint``) or the mode is ``reject``.
        """
        if client_token is None or client_token not in self.tokens:
            return None
        seen, job = self.tokens[client_token]
        if seen != fingerprint:
            raise InvalidRequest(OTHER_REQUEST_MESSAGE.format(token=client_token))
        if self.client_token_mode is ClientTokenMode.REJECT:
            raise InvalidRequest(REPEATED_TOKEN_MESSAGE.format(token=client_token))
        return job

    def check_open(self, queue: JobQueue) -> None:
        """Refuse when the queue or its service environment accepts no new jobs."""
        if queue.state != ENABLED:
            raise InvalidRequest(
                f"jobQueue: job queue {queue.name!r} is DISABLED and accepts no new jobs; "
                "enable it with UpdateJobQueue state=ENABLED"
            )
        env = queue.environment
        if env.state != ENABLED:
            raise InvalidRequest(
                f"jobQueue: service environment {env.name!r} of job queue {queue.name!r} is "
                "DISABLED, so the queue accepts no new jobs; enable it with "
                "UpdateServiceEnvironment state=ENABLED"
            )

    def submit(
        self,
        queue: JobQueue,
        request: JobRequest,
        submission: Submission,
        *,
        client_token: str | None = None,
        fingerprint: str = "",
    ) -> Job:
        """Submit ``request`` to ``queue``'s scheduler under a new job id; returns the job.

        ``client_token`` and ``fingerprint`` record the request for :meth:`replay`.
        """
        self.check_open(queue)
        request = replace(request, job_id=self.ids.next())
        job = self.schedulers[queue.name].submit(request, now=self.now())
        self.job_queue[job.job_id] = queue.name
        self.submitted[job.job_id] = submission
        self.tags.add(self.account.service_job(job.job_id), request.tags)
        if client_token is not None:
            self.tokens[client_token] = (fingerprint, job)
            self._token_of[job.job_id] = client_token
        self.expire(self.now())
        return job

    # --- jobs ----------------------------------------------------------------------------------

    def job_id(self, ref: str, field: str = "jobId") -> str:
        """The id of the job that ``ref`` names: a job id, or a service-job ARN as AWS takes it.

        :class:`InvalidParameter` when ``ref`` is neither (malformed); an ARN of another
        account or region is :class:`NotFound`. Whether the job exists is not checked here.
        """
        arn = parse_service_job_arn(ref)
        if arn is not None:
            if not self.account.owns(arn.partition, arn.region, arn.account):
                raise NotFound(
                    f"{field}: no service job {ref!r}: the ARN names account {arn.account} "
                    f"in {arn.region}, this emulator is account {self.account.account_id} in "
                    f"{self.account.region}; use the jobArn or jobId SubmitServiceJob returned"
                )
            ref = arn.job_id
        if not JOB_ID_PATTERN.match(ref):
            raise InvalidParameter(
                f"{field}: no service job {ref!r}: not a service job id or ARN; pass the jobId "
                "(a UUID such as 4d3c6a2e-8a51-4b3e-9f0e-2b7c1d9e5f10) or the jobArn "
                f"({self.account.service_job('<jobId>')}) that SubmitServiceJob returned"
            )
        return ref

    def knows(self, ref: str) -> bool:
        """Whether ``ref`` (id or ARN, well formed) names a job of an existing queue."""
        return self.job_id(ref) in self.job_queue

    def job(self, ref: str) -> Job:
        """The job ``ref`` (id or ARN) names; :class:`NotFound` when no existing queue has it."""
        job_id = self.job_id(ref)
        return self.schedulers[self._queue_of(job_id)].job(job_id)

    def pending_reason(self, job_id: str) -> PendingReason | None:
        """Why the RUNNABLE job ``job_id`` waits (``None`` when it does not wait)."""
        return self.schedulers[self._queue_of(job_id)].pending_reason(job_id)

    def _queue_of(self, job_id: str) -> str:
        queue_name = self.job_queue.get(job_id)
        if queue_name is None:
            raise NotFound(
                f"jobId: no service job {job_id!r} in this emulator; use the jobId or jobArn "
                "that SubmitServiceJob returned"
            )
        return queue_name

    def submission(self, job_id: str) -> Submission:
        """What the client of ``job_id`` sent (the job must exist)."""
        return self.submitted[job_id]

    def update_priority(self, ref: str, priority: int) -> Job:
        """Change the ``schedulingPriority`` of the job ``ref`` (id or ARN) names (takes effect
        at the next pass)."""
        job_id = self.job_id(ref)
        scheduler = self.schedulers[self._queue_of(job_id)]
        return scheduler.update_priority(job_id, priority, now=self.now())

    def terminate(self, ref: str, reason: str, *, now: float | None = None) -> Job:
        """Terminate the job ``ref`` (id or ARN) names: FAILED with ``reason``; a finished job
        is left as it is. Nothing is dispatched in the call (the core places freed capacity at
        its next pass); ``now``: the instant of a bulk request, read once for all its jobs, so
        no pass runs between them (:meth:`now` otherwise)."""
        job_id = self.job_id(ref)
        scheduler = self.schedulers[self._queue_of(job_id)]
        return scheduler.terminate(job_id, reason, now=self.now() if now is None else now)

    def jobs_of(self, queues: Iterable[JobQueue]) -> list[Job]:
        """Every job of ``queues``, queue by queue in submit order."""
        return [job for queue in queues for job in self.schedulers[queue.name].jobs]

    def plan_instances_in_use(self, plan_arn: str, instance_type: str) -> int:
        """Instances of ``instance_type`` held now (``SCHEDULED``, ``STARTING``, ``RUNNING``)
        by the jobs whose payload runs on ``plan_arn`` (``ResourceConfig.TrainingPlanArn``)."""
        return sum(
            job.demand.get(instance_type, 0)
            for scheduler in self.schedulers.values()
            for job in scheduler.jobs
            if job.status.is_dispatched and self._plan_of(job.job_id) == plan_arn
        )

    def _plan_of(self, job_id: str) -> str | None:
        submission = self.submitted.get(job_id)
        payload = json.loads(submission.payload) if submission is not None else {}
        resources = payload.get("ResourceConfig") if isinstance(payload, dict) else None
        plan = resources.get("TrainingPlanArn") if isinstance(resources, dict) else None
        return plan if isinstance(plan, str) else None

    def scheduler(self, queue: JobQueue) -> Scheduler:
        """The scheduler core of ``queue`` (snapshots, ledgers)."""
        return self.schedulers[queue.name]
