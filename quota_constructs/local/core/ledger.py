"""Scheduler state and bookkeeping: per-share ledger, RUNNABLE heaps, timed events, capacity.

:class:`_Ledger` declares every field of the scheduler's state (set in ``Scheduler.__init__``)
and the low-level operations the dispatch pass, preemption and pending reasons build on.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Callable
from enum import IntEnum

from quota_constructs.local.core.job import Job
from quota_constructs.local.core.options import SchedulerOptions
from quota_constructs.local.core.records import (
    Attempt,
    EventKind,
    JobStatus,
    PreemptionRecord,
    SchedulerEvent,
    ShareOrder,
    _add,
)
from quota_constructs.model import JobQueueSpec, QuotaShareSpec, ShareState

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


# --- ledger -----------------------------------------------------------------------------------


class _Ledger:
    """The scheduler's state and its bookkeeping: events, RUNNABLE queue, capacity."""

    queue_name: str
    options: SchedulerOptions
    now: float
    """Virtual time of the last change (float seconds)."""
    _shares: dict[str, _Share]
    _share_seq: int
    _explicit_se: dict[str, int] | None
    """Service-environment capacity set explicitly; ``None``: the sum of the shares' limits."""
    _used: dict[str, int]
    """Instances held in the service environment per instance type."""
    _jobs: dict[str, Job]
    _seq: int
    _events: list[tuple[float, int, int, Job, int]]
    """Timed events (time, sequence, :class:`_Ev`, job, job generation); stale ones skipped."""
    _ev_seq: int
    _listeners: list[Callable[[SchedulerEvent], None]]
    _dirty: bool
    """Something changed that may let a job dispatch: run another pass."""
    _in_flight: int
    _infeasible_cache: dict[tuple[str, tuple[tuple[str, int], ...]], str | None]
    _order_cache: dict[str, list[Job]]
    _position_cache: dict[str, dict[str, int]]
    _order_cache_version: int
    _version: int
    _release_epoch: int
    _preempt_epoch: int
    _se_binding: bool
    """The service environment is smaller than the shares' sum for some instance type."""
    _queue_spec: JobQueueSpec
    _se: dict[str, int]

    # --- internals: events --------------------------------------------------------------------

    def _schedule(self, at: float, kind: _Ev, job: Job) -> None:
        self._ev_seq += 1
        heapq.heappush(self._events, (at, self._ev_seq, int(kind), job, job._gen))

    def _drop_stale_events(self) -> None:
        while self._events and self._events[0][4] != self._events[0][3]._gen:
            heapq.heappop(self._events)

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


def attempt_id(job_id: str, number: int) -> str:
    """Deterministic 32-hex id of a job's attempt ``number`` (1-based), as in SageMaker names."""
    return hashlib.md5(f"{job_id}/{number}".encode(), usedforsecurity=False).hexdigest()


def _checkpointed(ran: float, interval: float) -> float:
    return math.floor(ran / interval) * interval if interval > 0 else 0.0
