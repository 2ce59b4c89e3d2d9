"""The :class:`Scheduler` facade: configuration, submission, queries, time and the public API.

The machinery lives in mixins it inherits: ``ledger`` (state, events, RUNNABLE queue, capacity),
``preemption``, ``dispatch`` (passes and the attempt lifecycle) and ``pending`` (pending reasons).
"""

from __future__ import annotations

import hashlib
import heapq
import math
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from quota_constructs.local.core.dispatch import _Dispatch
from quota_constructs.local.core.job import Job
from quota_constructs.local.core.ledger import _Ev, _Share, attempt_id
from quota_constructs.local.core.options import SchedulerOptions
from quota_constructs.local.core.pending import _Pending
from quota_constructs.local.core.records import (
    REASON_SHARE_REMOVED,
    EventKind,
    FrontEntry,
    JobRequest,
    JobStatus,
    Outcome,
    PendingKind,
    PendingReason,
    PreemptionRule,
    QueueSnapshot,
    SchedulerEvent,
    ShareLedger,
    SubmitRejected,
    _add,
    _positive,
)
from quota_constructs.model import (
    MAX_SHARES_PER_QUEUE,
    JobQueueSpec,
    Problem,
    QuotaConfigError,
    QuotaShareSpec,
    ShareState,
    check_instance_type,
    check_int_range,
    check_job_settings,
    check_name,
    check_scheduling_priority,
    check_tags,
)

__all__ = ["Scheduler", "attempt_id"]


# --- scheduler --------------------------------------------------------------------------------


class Scheduler(_Dispatch, _Pending):
    """One quota-managed job queue with its shares and service environment, in virtual time."""

    def __init__(
        self,
        *,
        queue_name: str,
        shares: Iterable[QuotaShareSpec] = (),
        service_environment: Mapping[str, int] | None = None,
        options: SchedulerOptions | None = None,
        start_time: float = 0.0,
    ) -> None:
        self.queue_name = queue_name
        self.options = options or SchedulerOptions()
        self.now = float(start_time)
        self._shares: dict[str, _Share] = {}
        self._share_seq = 0
        self._explicit_se: dict[str, int] | None = (
            dict(service_environment) if service_environment is not None else None
        )
        self._used: dict[str, int] = {}
        self._jobs: dict[str, Job] = {}
        self._seq = 0
        self._events: list[tuple[float, int, int, Job, int]] = []
        self._ev_seq = 0
        self._listeners: list[Callable[[SchedulerEvent], None]] = []
        self._dirty = False
        self._in_flight = 0
        self._infeasible_cache: dict[tuple[str, tuple[tuple[str, int], ...]], str | None] = {}
        self._order_cache: dict[str, list[Job]] = {}
        self._position_cache: dict[str, dict[str, int]] = {}
        self._order_cache_version = -1
        self._version = 0
        self._release_epoch = 0
        self._preempt_epoch = 0
        self._se_binding = False
        self._queue_spec = JobQueueSpec(shares=())
        self._se: dict[str, int] = {}
        for spec in shares:
            self._check_share(spec)
            self._add_share(spec)
        self._config_changed()

    @classmethod
    def for_queue(
        cls,
        queue: JobQueueSpec,
        *,
        queue_name: str,
        options: SchedulerOptions | None = None,
        service_environment: Mapping[str, int] | None = None,
        start_time: float = 0.0,
    ) -> Scheduler:
        """A scheduler for a model queue; its ``runnable_timeout_minutes`` become time limits
        unless ``options.runnable_time_limits`` is set."""
        opts = options or SchedulerOptions()
        if not opts.runnable_time_limits:
            opts = replace(opts, runnable_time_limits=SchedulerOptions.time_limits_for(queue))
        return cls(
            queue_name=queue_name,
            shares=queue.shares,
            service_environment=service_environment,
            options=opts,
            start_time=start_time,
        )

    # --- configuration ------------------------------------------------------------------------

    @property
    def queue(self) -> JobQueueSpec:
        """The current shares as a model job queue."""
        return JobQueueSpec(shares=tuple(s.spec for s in self._shares.values()))

    @property
    def service_environment(self) -> dict[str, int]:
        """Service-environment capacity: explicit, else the sum of the shares' limits."""
        if self._explicit_se is not None:
            return dict(self._explicit_se)
        return self.queue.service_environment_capacity()

    def set_service_environment(
        self, capacity: Mapping[str, int] | None, *, now: float | None = None
    ) -> None:
        """Set SE capacity (``None``: follow the shares). Lowering it preempts nothing."""
        problems: list[Problem] = []
        for itype, count in (capacity or {}).items():
            problems += check_instance_type(itype, f"service_environment.{itype}")
            problems += check_int_range(
                count, f"service_environment.{itype}", 0, None, what="max capacity"
            )
        if problems:
            raise QuotaConfigError(problems, context="service environment")
        self._sync(now)
        self._explicit_se = dict(capacity) if capacity is not None else None
        self._config_changed()
        self._settle()

    def upsert_share(self, spec: QuotaShareSpec, *, now: float | None = None) -> None:
        """Create or update a share. Lowered limits preempt jobs above them (LIMIT_LOWERED)."""
        self._check_share(spec)
        self._sync(now)
        share = self._shares.get(spec.name)
        if share is None:
            self._add_share(spec)
        else:
            share.spec = spec
        self._config_changed()
        self._enforce_limits()
        self._settle()

    def remove_share(self, name: str, *, now: float | None = None) -> None:
        """Delete a share: its jobs are terminated, borrowers of its capacity preempted."""
        share = self._share_or_reject(name, "remove_share")
        self._sync(now)
        for job in [j for j in self._jobs.values() if j.share_name == name]:
            if not job.status.is_terminal:
                self._terminate(job, REASON_SHARE_REMOVED)
        for job in list(share.borrowers.values()):
            self._preempt(job, PreemptionRule.LIMIT_LOWERED, None)
        del self._shares[name]
        self._config_changed()
        self._settle()

    def _share_or_reject(self, name: str, what: str) -> _Share:
        share = self._shares.get(name)
        if share is None:
            known = ", ".join(self._shares) or "none"
            raise KeyError(f"{what}: no quota share {name!r} on {self.queue_name!r} ({known})")
        return share

    def _check_share(self, spec: QuotaShareSpec) -> None:
        problems = spec.problems(f"shares.{spec.name}")
        if spec.name not in self._shares and len(self._shares) >= MAX_SHARES_PER_QUEUE:
            problems.append(
                Problem(
                    "shares",
                    len(self._shares) + 1,
                    f"a quota-managed job queue holds at most {MAX_SHARES_PER_QUEUE} shares",
                    "remove a share first or use another queue",
                )
            )
        if problems:
            raise QuotaConfigError(problems, context=f"quota share {spec.name!r}")

    def _add_share(self, spec: QuotaShareSpec) -> None:
        self._shares[spec.name] = _Share(spec, self._share_seq)
        self._share_seq += 1

    def _config_changed(self) -> None:
        """Re-check every RUNNABLE job's feasibility after a share or SE change."""
        self._infeasible_cache.clear()
        self._queue_spec = self.queue
        shares_total = self._queue_spec.service_environment_capacity()
        self._se = dict(self._explicit_se) if self._explicit_se is not None else shares_total
        self._se_binding = any(self._se.get(t, 0) < n for t, n in shares_total.items())
        self._version += 1
        self._dirty = True
        for share in self._shares.values():
            waiting = [e[3] for e in share.heap if self._entry_valid(e)]
            waiting += list(share.infeasible.values())
            share.heap = []
            share.infeasible = {}
            share.epoch += 1
            share.memo = None
            for job in sorted(waiting, key=lambda j: j.seq):
                self._enqueue(job)

    # --- submission and updates ---------------------------------------------------------------

    def submit(self, request: JobRequest, *, now: float) -> Job:
        """Accept a job (SUBMITTED; RUNNABLE after ``submitted_to_runnable_s``)."""
        self._sync(now)
        problems = self._request_problems(request)
        if problems:
            raise SubmitRejected(problems, context=f"job {request.job_name!r}")
        job_id = request.job_id or self._new_job_id(self._seq + 1)
        if job_id in self._jobs:
            raise SubmitRejected(
                [Problem("job_id", job_id, "a job with this id exists", "use a new id")]
            )
        self._seq += 1
        priority = self.options.default_priority if request.priority is None else request.priority
        job = Job(self, job_id, request, priority, self._seq)
        job.created_at = self.now
        self._jobs[job_id] = job
        self._emit(EventKind.STATE_CHANGE, job, None)
        self._schedule(self.now + self.options.submitted_to_runnable_s, _Ev.TO_RUNNABLE, job)
        return job

    def _request_problems(self, request: JobRequest) -> list[Problem]:
        problems = check_name(request.job_name, "jobName", what="job name")
        share = self._shares.get(request.share_name)
        if not request.share_name:
            problems.append(
                Problem(
                    "quotaShareName",
                    request.share_name,
                    "quotaShareName is required on the quota-managed job queue "
                    f"{self.queue_name!r}",
                    f"name one of its shares: {', '.join(self._shares) or 'none'}",
                )
            )
        elif share is None:
            known = ", ".join(self._shares) or "none"
            problems.append(
                Problem(
                    "quotaShareName",
                    request.share_name,
                    f"no quota share of that name on job queue {self.queue_name!r}",
                    f"use one of: {known}",
                )
            )
        elif share.spec.state is ShareState.DISABLED:
            problems.append(
                Problem(
                    "quotaShareName",
                    request.share_name,
                    "the quota share is DISABLED and accepts no new jobs",
                    "enable the share (state ENABLED) or submit to another share",
                )
            )
        if request.priority is not None:
            problems += check_scheduling_priority(request.priority)
        problems += _demand_problems(request.demand)
        problems += check_job_settings(request.retry_attempts, request.preemption_retries)
        for name, value in (
            ("duration_s", request.duration_s),
            ("timeoutConfig.attemptDurationSeconds", request.attempt_duration_s),
            ("checkpoint_interval_s", request.checkpoint_interval_s),
        ):
            if value is not None and (
                not isinstance(value, int | float) or math.isnan(value) or value < 0
            ):
                problems.append(Problem(name, value, "must be a number >= 0", "set it >= 0"))
        if request.outcome not in (Outcome.SUCCEEDED, Outcome.FAILED):
            problems.append(
                Problem("outcome", request.outcome, "unknown outcome", "use SUCCEEDED or FAILED")
            )
        problems += check_tags(request.tags)
        return problems

    def update_priority(self, job_id: str, priority: int, *, now: float) -> Job:
        """Change ``schedulingPriority``; it takes effect at the next pass (any non-final state)."""
        job = self.job(job_id)
        problems = check_scheduling_priority(priority)
        if problems:
            raise SubmitRejected(problems, context=f"job {job_id}")
        self._sync(now)
        if job.status.is_terminal or job.priority == priority:
            return job
        job.priority = priority
        self._shares[job.share_name].epoch += 1
        if job.status is JobStatus.RUNNABLE and job._infeasible_reason is None:
            self._push(job)
            job._position_since = None
        self._version += 1
        self._dirty = True
        self._emit(EventKind.PRIORITY_CHANGE, job, job.status)
        return job

    def terminate(self, job_id: str, reason: str, *, now: float) -> Job:
        """Terminate a job: FAILED with ``reason``, ``is_terminated``; final jobs are unchanged."""
        job = self.job(job_id)
        self._sync(now)
        if not job.status.is_terminal:
            self._terminate(job, reason)
            self._settle()
        return job

    # --- queries ------------------------------------------------------------------------------

    def job(self, job_id: str) -> Job:
        """The job with ``job_id``; ``KeyError`` naming it otherwise."""
        try:
            return self._jobs[job_id]
        except KeyError:
            raise KeyError(f"no job {job_id!r} in job queue {self.queue_name!r}") from None

    @property
    def jobs(self) -> Sequence[Job]:
        """Every job, in submit order."""
        return list(self._jobs.values())

    def subscribe(self, listener: Callable[[SchedulerEvent], None]) -> None:
        """Call ``listener`` synchronously for every :class:`SchedulerEvent`."""
        self._listeners.append(listener)

    def usage(self) -> dict[str, dict[str, int]]:
        """Instances held per share per instance type (own plus borrowed), zero entries omitted."""
        out: dict[str, dict[str, int]] = {}
        for share in self._shares.values():
            used = dict(share.own)
            _add(used, share.borrowed)
            out[share.name] = _positive(used)
        return out

    def total_usage(self) -> dict[str, int]:
        """Instances held in the service environment per instance type."""
        return _positive(self._used)

    def ledger(self) -> dict[str, ShareLedger]:
        """Full capacity accounting per share (limit, used, own, borrowed, lent, idle)."""
        out = {}
        for share in self._shares.values():
            used = dict(share.own)
            _add(used, share.borrowed)
            types = set(share.spec.capacity) | set(used) | set(share.lent)
            out[share.name] = ShareLedger(
                limit=dict(share.spec.capacity),
                used=_positive(used),
                own=_positive(share.own),
                borrowed=_positive(share.borrowed),
                lent=_positive(share.lent),
                idle={t: share.idle(t) for t in sorted(types) if share.spec.limit(t) > 0},
            )
        return out

    def next_event_time(self) -> float | None:
        """Time of the next timed event (state delay, completion, timeout, time limit)."""
        self._drop_stale_events()
        return self._events[0][0] if self._events else None

    # --- time ---------------------------------------------------------------------------------

    def advance(self, now: float) -> None:
        """Process everything up to ``now``: timed events in order, a pass after each instant."""
        now = float(now)
        if now < self.now:
            raise ValueError(
                f"time must not go backwards: now={now} is before the scheduler's {self.now}"
            )
        self._settle()  # changes made at the current instant (priority updates) act now
        while self._events and self._events[0][0] <= now:
            instant = self._events[0][0]
            self.now = max(self.now, instant)
            while self._events and self._events[0][0] <= instant:
                _, _, kind, job, gen = heapq.heappop(self._events)
                if gen == job._gen:
                    self._handle(_Ev(kind), job)
            self._settle()
        self.now = now
        self._settle()

    def run_until_idle(self, *, limit: float = math.inf) -> float:
        """Advance event by event until nothing is scheduled (or ``limit``); return the time."""
        while True:
            nxt = self.next_event_time()
            if nxt is None or nxt > limit:
                break
            self.advance(nxt)
        if limit != math.inf and self.now < limit and self.next_event_time() is not None:
            self.advance(limit)
        return self.now

    def _sync(self, now: float | None) -> None:
        """Catch up to ``now`` first; calls at the current instant are batched (no pass)."""
        if now is not None and now != self.now:
            self.advance(now)

    # --- pending reasons and snapshot ---------------------------------------------------------

    def pending_reason(self, job_id: str) -> PendingReason | None:
        """Typed reason a RUNNABLE job waits (``None`` for other states)."""
        job = self.job(job_id)
        if job.status is not JobStatus.RUNNABLE:
            return None
        share = self._shares[job.share_name]
        if job._infeasible_reason is not None:
            return PendingReason(PendingKind.EXCEEDS_LIMITS, job._infeasible_reason, None)
        self._share_order_list(share)
        position = self._position_cache[share.name].get(job.job_id, 0)
        if not self._can_dispatch(share):
            return PendingReason(
                PendingKind.SHARE_DISABLED,
                f"quota share {share.name} is DISABLED and its jobs do not dispatch",
                position,
            )
        if position > 0:
            return PendingReason(
                PendingKind.BEHIND_HIGHER_PRIORITY,
                f"behind {position} job(s) of higher priority or earlier submission in quota "
                f"share {share.name} (position {position})",
                position,
            )
        return self._head_reason(share, job)

    def snapshot(self, *, limit: int = 100) -> QueueSnapshot:
        """Front of the queue (first ``limit`` RUNNABLE jobs by priority, then share usage),
        the first RUNNABLE job of each share, and capacity usage per share and in total."""
        usage = {name: share.usage_fraction() for name, share in self._shares.items()}
        runnable: list[Job] = []
        fronts: dict[str, tuple[FrontEntry, ...]] = {}
        for share in self._shares.values():
            order = self._share_order_list(share)
            runnable += order
            order_all = order + sorted(share.infeasible.values(), key=lambda j: j.seq)
            if order_all:
                fronts[share.name] = (self._front_entry(order_all[0]),)
        runnable += [j for s in self._shares.values() for j in s.infeasible.values()]
        front = heapq.nsmallest(
            limit, runnable, key=lambda j: (-j.priority, usage[j.share_name], j.seq)
        )
        return QueueSnapshot(
            time=self.now,
            front_of_queue=tuple(self._front_entry(j) for j in front),
            front_of_shares=fronts,
            share_usage=self.usage(),
            total_usage=self.total_usage(),
        )

    def _new_job_id(self, seq: int) -> str:
        digest = hashlib.sha256(f"{self.queue_name}/{seq}".encode()).digest()
        return str(uuid.UUID(bytes=digest[:16], version=4))


def _demand_problems(demand: Mapping[str, int]) -> list[Problem]:
    problems: list[Problem] = []
    if not demand:
        problems.append(
            Problem("demand", dict(demand), "a job needs at least one instance", "set a demand")
        )
    for itype, count in demand.items():
        problems += check_instance_type(itype, f"ResourceConfig.InstanceType[{itype}]")
        problems += check_int_range(
            count, f"ResourceConfig.InstanceCount[{itype}]", 1, None, what="instance count"
        )
    return problems
