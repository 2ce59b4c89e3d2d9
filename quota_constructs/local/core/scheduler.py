"""The scheduler: capacity ledger, dispatch passes, preemption, pending reasons, snapshot."""

from __future__ import annotations

import hashlib
import heapq
import math
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from enum import IntEnum

from quota_constructs.local.core.job import Job
from quota_constructs.local.core.options import SchedulerOptions
from quota_constructs.local.core.records import (
    JSTLA_REASON,
    PREEMPTION_IN_PROGRESS,
    REASON_CROSS_SHARE,
    REASON_FAILED,
    REASON_IN_SHARE,
    REASON_LIMIT_LOWERED,
    REASON_SHARE_REMOVED,
    REASON_SUCCEEDED,
    REASON_TIMEOUT,
    Attempt,
    EventKind,
    FrontEntry,
    JobRequest,
    JobStatus,
    Outcome,
    PendingKind,
    PendingReason,
    PreemptionRecord,
    PreemptionRule,
    QueueSnapshot,
    SchedulerEvent,
    ShareLedger,
    ShareOrder,
    SubmitRejected,
    _add,
    _positive,
)
from quota_constructs.local.core.victims import VictimCandidate
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

_MAX_ROUNDS = 100_000
"""Passes at one instant before the scheduler gives up (only a bug can get there)."""


# --- per-share state --------------------------------------------------------------------------


class _Share:
    """Mutable per-share state: ledger counters, RUNNABLE heap, holders, pass memo."""

    def __init__(self, spec: QuotaShareSpec, order: int) -> None:
        self.spec = spec
        self.order = order
        self.own: dict[str, int] = {}
        self.lent: dict[str, int] = {}
        self.borrowed: dict[str, int] = {}
        self.heap: list[tuple[int, int, int, Job]] = []
        self.holding: dict[str, Job] = {}
        self.borrowers: dict[str, Job] = {}
        self.infeasible: dict[str, Job] = {}
        self.epoch = 0
        """Bumped on every change of this share's ledger, holdings or RUNNABLE order."""
        self.memo: tuple[object, ...] | None = None
        """Key of the last pass that found the head blocked; unchanged key -> still blocked."""

    @property
    def spec(self) -> QuotaShareSpec:
        return self._spec

    @spec.setter
    def spec(self, spec: QuotaShareSpec) -> None:
        self._spec = spec
        self.name = spec.name
        self.limits = dict(spec.capacity)
        self.borrows = spec.strategy.borrows

    def idle(self, itype: str) -> int:
        return self.limits.get(itype, 0) - self.own.get(itype, 0) - self.lent.get(itype, 0)

    def room(self, itype: str) -> int:
        """Own limit minus own use: idle plus what is lent (reclaimable)."""
        return self.limits.get(itype, 0) - self.own.get(itype, 0)

    def usage_fraction(self) -> float:
        total = sum(self.spec.capacity.values()) or 1
        return (sum(self.own.values()) + sum(self.borrowed.values())) / total


class _Ev(IntEnum):
    TO_RUNNABLE = 0
    TO_STARTING = 1
    TO_RUNNING = 2
    FINISH = 3
    TIMEOUT = 4
    TIME_LIMIT = 5
    PREEMPT_DONE = 6


# --- scheduler --------------------------------------------------------------------------------


class Scheduler:
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

    # --- internals: events --------------------------------------------------------------------

    def _schedule(self, at: float, kind: _Ev, job: Job) -> None:
        self._ev_seq += 1
        heapq.heappush(self._events, (at, self._ev_seq, int(kind), job, job._gen))

    def _drop_stale_events(self) -> None:
        while self._events and self._events[0][4] != self._events[0][3]._gen:
            heapq.heappop(self._events)

    def _handle(self, kind: _Ev, job: Job) -> None:
        if kind is _Ev.TO_RUNNABLE:
            self._make_runnable(job, None)
        elif kind is _Ev.TO_STARTING:
            job.starting_at = self.now
            self._set_status(job, JobStatus.STARTING, None)
            self._schedule(self.now + self.options.starting_to_running_s, _Ev.TO_RUNNING, job)
        elif kind is _Ev.TO_RUNNING:
            self._start_running(job)
        elif kind is _Ev.FINISH:
            self._finish(job, job.request.outcome, None)
        elif kind is _Ev.TIMEOUT:
            self._finish(job, Outcome.FAILED, REASON_TIMEOUT)
        elif kind is _Ev.TIME_LIMIT:
            reason = job._infeasible_reason or ""
            self._terminate(job, JSTLA_REASON.format(reason=reason.split(" - ")[0]))
        elif kind is _Ev.PREEMPT_DONE:
            self._complete_preemption(job)

    def _emit(
        self,
        kind: EventKind,
        job: Job,
        previous: JobStatus | None,
        preemption: PreemptionRecord | None = None,
    ) -> None:
        if not self._listeners:
            return
        event = SchedulerEvent(
            self.now, kind, job, job.status, previous, job.status_reason, preemption
        )
        for listener in self._listeners:
            listener(event)

    def _set_status(self, job: Job, status: JobStatus, reason: str | None) -> None:
        previous = job.status
        job.status = status
        job.status_reason = reason
        job._gen += 1
        self._version += 1
        self._emit(EventKind.STATE_CHANGE, job, previous)

    # --- internals: RUNNABLE queue ------------------------------------------------------------

    def _make_runnable(self, job: Job, reason: str | None) -> None:
        job.runnable_at = self.now
        job._position_since = None
        self._set_status(job, JobStatus.RUNNABLE, self._infeasibility(job) or reason)
        self._enqueue(job)
        self._dirty = True

    def _enqueue(self, job: Job) -> None:
        share = self._shares[job.share_name]
        reason = self._infeasibility(job)
        if reason is not None:
            share.infeasible[job.job_id] = job
            if job._infeasible_reason != reason:
                job._infeasible_since = self.now
                job._infeasible_reason = reason
                job.status_reason = reason
                self._arm_time_limit(job, reason)
            return
        if job._infeasible_reason is not None:
            job._infeasible_reason = None
            job._infeasible_since = None
            if job.status_reason and job.status_reason.startswith("MISCONFIGURATION"):
                job.status_reason = None
            job._gen += 1  # cancels a time-limit action
        self._push(job)

    def _push(self, job: Job) -> None:
        share = self._shares[job.share_name]
        share.epoch += 1
        job._heap_ver += 1
        heapq.heappush(share.heap, (-job.priority, job.seq, job._heap_ver, job))

    def _entry_valid(self, entry: tuple[int, int, int, Job]) -> bool:
        job = entry[3]
        return (
            job.status is JobStatus.RUNNABLE
            and entry[2] == job._heap_ver
            and job._infeasible_reason is None
        )

    def _head(self, share: _Share) -> Job | None:
        heap = share.heap
        while heap and not self._entry_valid(heap[0]):
            heapq.heappop(heap)
        return heap[0][3] if heap else None

    def _infeasibility(self, job: Job) -> str | None:
        key = (job.share_name, tuple(sorted(job.demand.items())))
        if key not in self._infeasible_cache:
            self._infeasible_cache[key] = self._queue_spec.infeasibility(
                job.share_name, job.demand, service_environment=self._se
            )
        return self._infeasible_cache[key]

    def _arm_time_limit(self, job: Job, reason: str) -> None:
        code = reason.split(" - ")[0]
        seconds = self.options.runnable_time_limits.get(code)
        job._gen += 1
        if seconds is not None:
            self._schedule(self.now + seconds, _Ev.TIME_LIMIT, job)

    # --- internals: capacity ------------------------------------------------------------------

    def _hold(self, job: Job, alloc: dict[str, dict[str, int]]) -> None:
        own_share = self._shares[job.share_name]
        own_share.epoch += 1
        job.alloc = alloc
        for lender_name, amounts in alloc.items():
            _add(self._used, amounts)
            if lender_name == job.share_name:
                _add(own_share.own, amounts)
            else:
                lender = self._shares[lender_name]
                lender.epoch += 1
                _add(lender.lent, amounts)
                _add(own_share.borrowed, amounts)
                lender.borrowers[job.job_id] = job
        own_share.holding[job.job_id] = job

    def _release(self, job: Job) -> None:
        own_share = self._shares.get(job.share_name)
        self._release_epoch += 1
        if own_share is not None:
            own_share.epoch += 1
        for lender_name, amounts in job.alloc.items():
            _add(self._used, amounts, -1)
            lender = self._shares.get(lender_name)
            if lender is not None:
                lender.epoch += 1
            if lender_name == job.share_name:
                if own_share is not None:
                    _add(own_share.own, amounts, -1)
            else:
                if lender is not None:
                    _add(lender.lent, amounts, -1)
                    lender.borrowers.pop(job.job_id, None)
                if own_share is not None:
                    _add(own_share.borrowed, amounts, -1)
        if own_share is not None:
            own_share.holding.pop(job.job_id, None)
        job.alloc = {}
        self._dirty = True

    def _se_room(self, itype: str) -> int:
        return self._se.get(itype, 0) - self._used.get(itype, 0)

    def _lends(self, share: _Share) -> bool:
        if not share.spec.strategy.lends:
            return False
        return share.spec.state is ShareState.ENABLED or self.options.disabled_share_dispatches

    def _can_dispatch(self, share: _Share) -> bool:
        return share.spec.state is ShareState.ENABLED or self.options.disabled_share_dispatches

    def _plan_own(self, share: _Share, job: Job) -> dict[str, dict[str, int]] | None:
        for itype, n in job.demand.items():
            if share.idle(itype) < n or self._se_room(itype) < n:
                return None
        return {share.name: dict(job.demand)}

    def _plan_borrow(self, share: _Share, job: Job) -> dict[str, dict[str, int]] | None:
        """Own idle capacity first, the rest borrowed from lenders in share order."""
        if not share.spec.strategy.borrows:
            return None
        alloc: dict[str, dict[str, int]] = {}
        for itype, n in job.demand.items():
            if self._se_room(itype) < n:
                return None
            own = max(0, min(n, share.idle(itype)))
            need = n - own
            if own:
                alloc.setdefault(share.name, {})[itype] = own
            if need == 0:
                continue
            if share.borrowed.get(itype, 0) + need > share.spec.borrow_cap(itype):
                return None
            for lender in self._ordered_shares():
                if lender is share or not self._lends(lender):
                    continue
                take = min(need, max(0, lender.idle(itype)))
                if take:
                    alloc.setdefault(lender.name, {})[itype] = take
                    need -= take
                if need == 0:
                    break
            if need:
                return None
        return alloc

    def _ordered_shares(self) -> list[_Share]:
        shares = list(self._shares.values())
        if self.options.share_order is ShareOrder.LEAST_USAGE:
            shares.sort(key=lambda s: (s.usage_fraction(), s.order))
        return shares

    # --- internals: dispatch passes -----------------------------------------------------------

    def _settle(self) -> None:
        """Run dispatch passes at the current time until nothing changes."""
        rounds = 0
        while self._dirty:
            self._dirty = False
            rounds += 1
            if rounds > _MAX_ROUNDS:
                raise RuntimeError(
                    f"scheduler for {self.queue_name!r} did not settle at t={self.now} after "
                    f"{_MAX_ROUNDS} passes (a bug: please report it with the workload)"
                )
            self._pass()

    def _pass(self) -> None:
        """One dispatch pass: own capacity, cross-share reclaim, borrowing FIFO, in-share.

        A share whose blocked head saw no relevant change since the last pass is skipped
        (its memo key still matches), so a pass costs O(shares) plus the work it does.
        """
        blocked: list[tuple[_Share, Job]] = []
        for share in self._ordered_shares():
            if not share.heap or not self._can_dispatch(share):
                continue
            head = self._head(share)
            if head is None or share.memo == self._memo_key(share, head):
                continue
            head = self._dispatch_own(share)
            if head is not None:
                blocked.append((share, head))
        if not blocked:
            return
        keys = [self._memo_key(share, head) for share, head in blocked]
        for share, head in blocked:
            if head._awaiting == 0 and self._reclaim(share, head):
                return  # next round: the reclaiming head takes its capacity back first
        self._borrow_fifo([b for b in blocked if b[0].spec.strategy.borrows])
        for share, _ in blocked:
            head = self._head(share)
            if head is not None and head._awaiting == 0 and share.spec.in_share_preemption:
                self._preempt_in_share(share, head)
        for (blocked_share, _), key in zip(blocked, keys, strict=True):
            head = self._head(blocked_share)
            # Remember only shares the pass evaluated fully and left untouched.
            if head is not None and self._memo_key(blocked_share, head) == key:
                blocked_share.memo = key

    def _memo_key(self, share: _Share, head: Job) -> tuple[object, ...]:
        depends_on_others = share.borrows or self._se_binding
        return (
            head.job_id,
            head._heap_ver,
            share.epoch,
            self._preempt_epoch,
            self._release_epoch if depends_on_others else 0,
        )

    def _dispatch_own(self, share: _Share) -> Job | None:
        """Dispatch the share's jobs that fit its idle capacity; return the blocked head."""
        skipped: list[Job] = []
        blocked_head: Job | None = None
        while True:
            head = self._head(share)
            if head is None:
                break
            alloc = self._plan_own(share, head)
            if alloc is None:
                if blocked_head is None:
                    blocked_head = head
                if len(skipped) >= self.options.backfill_depth:
                    break
                heapq.heappop(share.heap)
                skipped.append(head)
                continue
            heapq.heappop(share.heap)
            self._dispatch(head, alloc)
        for job in skipped:
            self._push(job)
        if blocked_head is not None:
            self._note_position(blocked_head)
        return blocked_head

    def _note_position(self, job: Job) -> None:
        if job._position_since is None:
            job._position_since = self.now

    def _borrow_fifo(self, candidates: list[tuple[_Share, Job]]) -> None:
        """Borrowing shares' blocked heads, served in submit order (FIFO idle assignment)."""
        heap = [(job.seq, share.order, share.name) for share, job in candidates]
        heapq.heapify(heap)
        while heap:
            _, _, name = heapq.heappop(heap)
            share = self._shares[name]
            head = self._head(share)
            if head is None:
                continue
            alloc = self._plan_own(share, head) or self._plan_borrow(share, head)
            if alloc is None:
                continue
            heapq.heappop(share.heap)
            self._dispatch(head, alloc)
            self._dirty = True  # the share's next head may need a reclaim: another round
            nxt = self._dispatch_own(share)
            if nxt is not None:
                heapq.heappush(heap, (nxt.seq, share.order, share.name))

    def _dispatch(self, job: Job, alloc: dict[str, dict[str, int]]) -> None:
        self._hold(job, alloc)
        job.scheduled_at = self.now
        job.starting_at = None
        job.started_at = None
        job._position_since = None
        job._attempts_used += 1
        job._dispatches += 1
        self._set_status(job, JobStatus.SCHEDULED, None)
        self._schedule(self.now + self.options.scheduled_to_starting_s, _Ev.TO_STARTING, job)

    def _start_running(self, job: Job) -> None:
        job.started_at = self.now
        self._set_status(job, JobStatus.RUNNING, None)
        if job.request.duration_s is not None:
            remaining = max(0.0, job.request.duration_s - job.progress_s)
            timeout = job.request.attempt_duration_s
            if timeout is not None and timeout < remaining:
                self._schedule(self.now + timeout, _Ev.TIMEOUT, job)
            else:
                self._schedule(self.now + remaining, _Ev.FINISH, job)
        elif job.request.attempt_duration_s is not None:
            self._schedule(self.now + job.request.attempt_duration_s, _Ev.TIMEOUT, job)

    def _end_attempt(self, job: Job, reason: str, *, preempted: bool) -> None:
        number = len(job.attempts) + 1
        job.attempts.append(
            Attempt(
                number=number,
                attempt_id=attempt_id(job.job_id, number),
                scheduled_at=job.scheduled_at if job.scheduled_at is not None else self.now,
                started_at=job.started_at,
                stopped_at=self.now,
                status_reason=reason,
                preempted=preempted,
            )
        )
        self._release(job)

    def _finish(self, job: Job, outcome: Outcome, reason: str | None) -> None:
        if outcome is Outcome.SUCCEEDED:
            self._end_attempt(job, REASON_SUCCEEDED, preempted=False)
            job.stopped_at = self.now
            self._set_status(job, JobStatus.SUCCEEDED, REASON_SUCCEEDED)
            return
        text = reason or REASON_FAILED
        if job.started_at is not None and job.request.checkpoint_interval_s:
            job.progress_s += _checkpointed(
                self.now - job.started_at, job.request.checkpoint_interval_s
            )
        self._end_attempt(job, text, preempted=False)
        if job._attempts_used < job.request.retry_attempts:
            self._make_runnable(job, text)
        else:
            job.stopped_at = self.now
            self._set_status(job, JobStatus.FAILED, text)

    def _terminate(self, job: Job, reason: str) -> None:
        if job.status.is_dispatched:
            if job._preempting is not None:
                job._preempting = None
                self._land(job)
            self._end_attempt(job, reason, preempted=False)
        job.is_terminated = True
        job.stopped_at = self.now
        self._shares[job.share_name].infeasible.pop(job.job_id, None)
        self._set_status(job, JobStatus.FAILED, reason)
        self._dirty = True

    # --- internals: preemption ----------------------------------------------------------------

    def _candidates(
        self, jobs: Iterable[Job], frees: Callable[[Job], dict[str, int]], exclude: Job
    ) -> list[VictimCandidate]:
        out = []
        for job in jobs:
            if job._preempting is not None:
                continue
            if exclude._preempted_by.get(job.job_id) == job._dispatches:
                continue  # no ping-pong: a victim never preempts its own preemptor back
            amount = _positive(frees(job))
            if not amount:
                continue
            since = job.scheduled_at if job.scheduled_at is not None else self.now
            out.append(
                VictimCandidate(
                    job=job,
                    frees=amount,
                    borrowing=any(k != job.share_name for k in job.alloc),
                    running_for=self.now - since,
                )
            )
        return out

    def _reclaim(self, share: _Share, head: Job) -> bool:
        """Cross-share: the head fits the share's own limit but its capacity is lent out."""
        if not any(n > 0 for n in share.lent.values()):
            return False
        need: dict[str, int] = {}
        for itype, n in head.demand.items():
            if n > share.room(itype):
                return False
            short = n - max(0, share.idle(itype))
            if self._se_binding:  # borrowers of this share also hold the SE instances it needs
                short = max(short, n - self._se_room(itype))
            short = min(short, share.lent.get(itype, 0))
            if short > 0:
                need[itype] = short
        if not need:
            return False
        victims = self.options.victim_policy.choose(
            self._candidates(
                share.borrowers.values(), lambda j: dict(j.alloc.get(share.name, {})), head
            ),
            need,
        )
        if not victims or not self._se_ok_after(head, victims):
            return False
        for victim in victims:
            self._preempt(victim.job, PreemptionRule.CROSS_SHARE, head)
        return True

    def _preempt_in_share(self, share: _Share, head: Job) -> None:
        """In-share: lower-priority jobs of the share make room for a higher-priority head.

        Acts only on a complete plan: the in-share victims free the head's shortfall against
        the share's own limit, and borrowers of the share's lent instances (cross-share
        victims) free the rest, so the head is dispatched at the next round.
        """
        need: dict[str, int] = {}
        for itype, n in head.demand.items():
            short = n - max(0, share.room(itype))
            if short > 0:
                need[itype] = short
        if not need:
            return
        own = self.options.victim_policy.choose(
            self._candidates(
                (j for j in share.holding.values() if j.priority < head.priority),
                lambda j: dict(j.alloc.get(share.name, {})),
                head,
            ),
            need,
        )
        if not own:
            return
        freed: dict[str, int] = {}
        for victim in own:
            _add(freed, victim.job.alloc.get(share.name, {}))
        lent_need = {t: n - max(0, share.idle(t) + freed.get(t, 0)) for t, n in head.demand.items()}
        lent_need = _positive(lent_need)
        lenders: list[VictimCandidate] = []
        if lent_need:
            chosen = self.options.victim_policy.choose(
                self._candidates(
                    share.borrowers.values(), lambda j: dict(j.alloc.get(share.name, {})), head
                ),
                lent_need,
            )
            if not chosen:
                return
            lenders = chosen
        if not self._se_ok_after(head, [*own, *lenders]):
            return
        for victim in own:
            self._preempt(victim.job, PreemptionRule.IN_SHARE, head)
        for victim in lenders:
            self._preempt(victim.job, PreemptionRule.CROSS_SHARE, head)

    def _se_ok_after(self, head: Job, victims: Sequence[VictimCandidate]) -> bool:
        """Whether the head fits the service environment once the victims are gone.

        Only matters when the SE is smaller than the shares' sum; otherwise share limits imply
        it (and a following cross-share reclaim frees the rest).
        """
        if not self._se_binding:
            return True
        freed: dict[str, int] = {}
        for victim in victims:
            for amounts in victim.job.alloc.values():
                _add(freed, amounts)
        return all(self._se_room(t) + freed.get(t, 0) >= n for t, n in head.demand.items())

    def _enforce_limits(self) -> None:
        """After a share update: preempt until every share is within limits and borrow caps."""
        for share in self._ordered_shares():
            spec = share.spec
            # lent capacity beyond what the share may lend
            over_lent = {
                t: n - max(0, spec.limit(t) - share.own.get(t, 0)) if spec.strategy.lends else n
                for t, n in share.lent.items()
            }
            self._shed(share.borrowers.values(), share.name, _positive(over_lent))
            over_own = {t: n - spec.limit(t) for t, n in share.own.items()}
            self._shed(share.holding.values(), share.name, _positive(over_own))
            over_borrow: dict[str, int] = {}
            for t, n in share.borrowed.items():
                cap = spec.borrow_cap(t)
                if n > cap:
                    over_borrow[t] = int(n - cap)
            if over_borrow:
                self._shed(share.holding.values(), None, over_borrow)

    def _shed(self, jobs: Iterable[Job], lender: str | None, need: dict[str, int]) -> None:
        """Preempt (LIMIT_LOWERED) enough of ``jobs`` to give back ``need``.

        ``lender``: count what each job holds of that share's capacity; ``None``: what it
        borrows. Jobs already being preempted count as given back.
        """

        def frees(job: Job) -> dict[str, int]:
            if lender is not None:
                return _positive(job.alloc.get(lender, {}))
            return _positive(job.borrowed)

        cands = []
        for job in list(jobs):
            amount = frees(job)
            if job._preempting is not None:
                _add(need, amount, -1)
            elif amount:
                since = job.scheduled_at if job.scheduled_at is not None else self.now
                borrowing = any(k != job.share_name for k in job.alloc)
                cands.append(VictimCandidate(job, amount, borrowing, self.now - since))
        need = _positive(need)
        if not need:
            return
        victims = self.options.victim_policy.choose(cands, need) or cands
        for victim in victims:
            self._preempt(victim.job, PreemptionRule.LIMIT_LOWERED, None)

    def _preempt(self, job: Job, rule: PreemptionRule, preemptor: Job | None) -> None:
        share = self._shares.get(job.share_name)
        before = _positive(share.borrowed) if share is not None else {}
        reason = {
            PreemptionRule.CROSS_SHARE: REASON_CROSS_SHARE,
            PreemptionRule.IN_SHARE: REASON_IN_SHARE,
            PreemptionRule.LIMIT_LOWERED: REASON_LIMIT_LOWERED,
        }[rule]
        after = dict(before)
        _add(after, job.borrowed, -1)
        record = PreemptionRecord(
            time=self.now,
            rule=rule,
            preemptor_job_id=preemptor.job_id if preemptor else None,
            preemptor_share=preemptor.share_name if preemptor else None,
            borrowed_before=before,
            borrowed_after=_positive(after),
            reason=reason,
            attempt=len(job.attempts) + 1,
            attempt_started_at=job.started_at,
        )
        job._preempting = record
        self._preempt_epoch += 1
        job.status_reason = PREEMPTION_IN_PROGRESS + reason
        job._gen += 1  # the attempt stops: cancel its completion and timeout
        if preemptor is not None:
            preemptor._position_since = None
        self._emit(EventKind.PREEMPTION_STARTED, job, job.status, record)
        if preemptor is not None:
            job._preempted_by[preemptor.job_id] = preemptor._dispatches + 1
        if self.options.preemption_duration_s > 0:
            self._in_flight += 1
            job._in_flight = True
            if preemptor is not None:
                job._beneficiary = preemptor
                preemptor._awaiting += 1
            self._schedule(self.now + self.options.preemption_duration_s, _Ev.PREEMPT_DONE, job)
        else:
            self._complete_preemption(job)

    def _land(self, job: Job) -> None:
        """A delayed preemption of ``job`` is over (completed or the job was terminated)."""
        self._preempt_epoch += 1
        if job._in_flight:
            job._in_flight = False
            self._in_flight -= 1
        if job._beneficiary is not None:
            job._beneficiary._awaiting -= 1
            job._beneficiary = None

    def _complete_preemption(self, job: Job) -> None:
        record = job._preempting
        if record is None:
            return
        self._land(job)
        job._preempting = None
        if job.started_at is not None and job.request.checkpoint_interval_s:
            job.progress_s += _checkpointed(
                self.now - job.started_at, job.request.checkpoint_interval_s
            )
        self._end_attempt(job, record.reason, preempted=True)
        retries = job.request.preemption_retries
        count = len(job.preemptions) + 1
        exhausted = retries is not None and count > retries
        out_of_attempts = (
            self.options.preemption_consumes_attempt
            and job._attempts_used >= job.request.retry_attempts
        )
        if not self.options.preemption_consumes_attempt:
            job._attempts_used -= 1
        record = replace(record, completed_at=self.now, terminated=exhausted or out_of_attempts)
        job.preemptions.append(record)
        if exhausted or out_of_attempts:
            job.stopped_at = self.now
            why = (
                f"preemptionRetriesBeforeTermination ({retries}) used up"
                if exhausted
                else f"retryStrategy.attempts ({job.request.retry_attempts}) used up"
            )
            self._set_status(
                job, JobStatus.FAILED, f"Preempted {count} time(s), {why}: {record.reason}"
            )
        else:
            self._make_runnable(job, record.reason)
        self._emit(EventKind.PREEMPTION_COMPLETED, job, job.status, record)

    # --- pending reasons and snapshot ---------------------------------------------------------

    def _share_order_list(self, share: _Share) -> list[Job]:
        if self._order_cache_version != self._version:
            self._order_cache = {}
            self._position_cache = {}
            self._order_cache_version = self._version
        cached = self._order_cache.get(share.name)
        if cached is not None:
            return cached
        entries = sorted(e for e in share.heap if self._entry_valid(e))
        jobs = [e[3] for e in entries]
        self._order_cache[share.name] = jobs
        self._position_cache[share.name] = {job.job_id: i for i, job in enumerate(jobs)}
        return jobs

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

    def _head_reason(self, share: _Share, job: Job) -> PendingReason:
        def reason(kind: PendingKind, text: str) -> PendingReason:
            return PendingReason(kind, text, 0)

        if job._awaiting:
            return reason(
                PendingKind.WAITING_FOR_PREEMPTION,
                f"waiting for {job._awaiting} preemption(s) in progress to release capacity",
            )
        for itype, n in job.demand.items():
            if n > share.room(itype) and not share.spec.strategy.borrows:
                return reason(
                    PendingKind.WAITING_FOR_OWN_CAPACITY,
                    f"quota share {share.name} uses {share.own.get(itype, 0)} of its "
                    f"{share.spec.limit(itype)} x {itype}; the job needs {n}",
                )
        for itype, n in job.demand.items():
            need = n - max(0, share.idle(itype))
            if need <= 0:
                continue
            if n <= share.room(itype):
                return reason(
                    PendingKind.WAITING_FOR_OWN_CAPACITY,
                    f"{share.lent.get(itype, 0)} x {itype} of quota share {share.name} are lent "
                    "out and cannot be reclaimed yet",
                )
            cap = share.spec.borrow_cap(itype)
            if share.borrowed.get(itype, 0) + need > cap:
                return reason(
                    PendingKind.BORROW_LIMIT_REACHED,
                    f"quota share {share.name} borrows {share.borrowed.get(itype, 0)} x {itype}; "
                    f"borrowing {need} more would exceed its borrow limit of {cap}",
                )
            lendable = sum(
                max(0, s.idle(itype))
                for s in self._shares.values()
                if s is not share and self._lends(s)
            )
            if lendable < need:
                return reason(
                    PendingKind.NO_LENDABLE_CAPACITY,
                    f"needs to borrow {need} x {itype}; lending shares have {lendable} idle",
                )
        for itype, n in job.demand.items():
            if self._se_room(itype) < n:
                return reason(
                    PendingKind.WAITING_FOR_SERVICE_ENVIRONMENT,
                    f"service environment has {max(0, self._se_room(itype))} x {itype} free; "
                    f"the job needs {n}",
                )
        return reason(PendingKind.WAITING_FOR_DISPATCH, "fits; dispatched at the next pass")

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

    def _front_entry(self, job: Job) -> FrontEntry:
        since = job._position_since
        if since is None:
            since = job.runnable_at if job.runnable_at is not None else job.created_at
        return FrontEntry(job.job_id, job.share_name, job.priority, since)

    def _new_job_id(self, seq: int) -> str:
        digest = hashlib.sha256(f"{self.queue_name}/{seq}".encode()).digest()
        return str(uuid.UUID(bytes=digest[:16], version=4))


def attempt_id(job_id: str, number: int) -> str:
    """Deterministic 32-hex id of a job's attempt ``number`` (1-based), as in SageMaker names."""
    return hashlib.md5(f"{job_id}/{number}".encode(), usedforsecurity=False).hexdigest()


def _checkpointed(ran: float, interval: float) -> float:
    return math.floor(ran / interval) * interval if interval > 0 else 0.0


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
