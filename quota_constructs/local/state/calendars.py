"""Owns the shares' calendars in the emulator: at each window edge on the emulator's clock
(virtual or wall) the settings in force are applied through the scheduler's public
``upsert_share(spec, now=edge)``, as the stack's schedules call UpdateQuotaShare.

Only the sharing settings change (strategy, borrow limit, in-share preemption); capacity and
state stay as the share has them. Borrowers running on a share's capacity when a window stops
it lending: AWS is silent (UNCONFIRMED, docs/emulator-semantics.md "Share calendars").
``grace_s`` 0 (default) preempts them at the edge, as an UpdateQuotaShare to RESERVE does in the
core; above 0 the flip waits until no other share borrows the share's capacity, at most
``grace_s`` seconds (the share still lends meanwhile), then applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from quota_constructs.local.state.clock import EmulatorClock
from quota_constructs.local.state.registry import JobQueue, ShareRecord
from quota_constructs.model import QuotaShareSpec, ShareCalendar
from quota_constructs.scheduling import Scheduler


@dataclass
class _Entry:
    """One share's calendar: its record, its own settings, where its flips stand."""

    scheduler: Scheduler
    queue: JobQueue
    record: ShareRecord
    base: QuotaShareSpec
    calendar: ShareCalendar
    applied_until: float
    pending: tuple[float, QuotaShareSpec] | None = None
    """A flip waiting for borrowers to finish: (deadline, settings)."""


@dataclass(frozen=True)
class CalendarFlip:
    """A flip the emulator applied: when (emulator seconds), which share, the settings."""

    time: float
    share: str
    spec: QuotaShareSpec


def _lends_less(old: QuotaShareSpec, new: QuotaShareSpec) -> bool:
    return old.strategy.lends and not new.strategy.lends


class ShareCalendars:
    """The calendars of every provisioned share that has one; see the module docstring."""

    def __init__(self, clock: EmulatorClock, *, grace_s: float = 0.0) -> None:
        if not (math.isfinite(grace_s) and grace_s >= 0):
            raise ValueError(
                f"calendar grace must be a finite number of seconds >= 0 (got {grace_s}); "
                "use 0 to preempt borrowers at the window edge"
            )
        self.clock = clock
        self.grace_s = grace_s
        self._entries: list[_Entry] = []
        self.flips: list[CalendarFlip] = []
        """Every flip applied so far, in order (tests and ``quota status`` read it)."""

    def _when(self, t: float) -> datetime:
        return datetime.fromtimestamp(self.clock.epoch(t), UTC)

    def _time(self, when: datetime) -> float:
        return when.timestamp() - self.clock.epoch(0.0)

    def add(
        self,
        scheduler: Scheduler,
        queue: JobQueue,
        base: QuotaShareSpec,
        calendar: ShareCalendar,
    ) -> None:
        """Follow the calendar of ``queue``'s share ``base.name`` from now (until the share is
        deleted); the settings in force now apply at once."""
        now = self.clock.now()
        entry = _Entry(scheduler, queue, queue.shares[base.name], base, calendar, now)
        self._entries.append(entry)
        self._apply(entry, calendar.in_force(base, self._when(now)), now)

    def advance(self, now: float, step: Callable[[float], None]) -> None:
        """Apply every flip due up to ``now`` at its own time; ``step(t)`` advances the
        schedulers to ``t``. Ends with the schedulers at ``now``."""
        self._entries = [e for e in self._entries if e.queue.shares.get(e.base.name) is e.record]
        while (due := self._next_due(now)) is not None:
            t, entry, spec, edge = due
            step(t)
            entry.applied_until = t
            if edge:
                entry.pending = None  # a new edge replaces a flip still waiting
            self._flip(entry, spec, t)
        for entry in self._entries:
            entry.applied_until = max(entry.applied_until, now)
        step(now)

    def _next_due(self, now: float) -> tuple[float, _Entry, QuotaShareSpec, bool] | None:
        """The earliest edge (``True``) or waiting flip's check (``False``) due by ``now``."""
        best: tuple[float, _Entry, QuotaShareSpec, bool] | None = None
        for entry in self._entries:
            found = self._due_of(entry, now)
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], entry, found[1], found[2])
        return best

    def _due_of(self, entry: _Entry, now: float) -> tuple[float, QuotaShareSpec, bool] | None:
        change = entry.calendar.next_change(entry.base, self._when(entry.applied_until))
        edge = None if change is None else (self._time(change.time), change.settings, True)
        if entry.pending is not None:
            deadline, spec = entry.pending
            check = entry.scheduler.next_event_time()  # when a borrower may have finished
            at = deadline if check is None else min(deadline, max(check, entry.applied_until))
            if edge is None or at < edge[0]:
                return (at, spec, False) if at <= now else None
        return edge if edge is not None and edge[0] <= now else None

    def _flip(self, entry: _Entry, spec: QuotaShareSpec, t: float) -> None:
        """At an edge or a waiting flip's check: apply, or wait while borrowers finish."""
        current = entry.record.spec
        deadline = entry.pending[0] if entry.pending is not None else t + self.grace_s
        lent = sum(entry.scheduler.ledger()[current.name].lent.values())
        if _lends_less(current, spec) and lent and t < deadline:
            entry.pending = (deadline, spec)
            return
        entry.pending = None
        self._apply(entry, spec, t)

    def _apply(self, entry: _Entry, in_force: QuotaShareSpec, t: float) -> None:
        current = entry.record.spec
        spec = replace(
            current,
            strategy=in_force.strategy,
            borrow_limit=in_force.borrow_limit,
            in_share_preemption=in_force.in_share_preemption,
        )
        if spec == current:
            return
        entry.scheduler.upsert_share(spec, now=t)
        entry.record.spec = spec
        self.flips.append(CalendarFlip(t, spec.name, spec))
