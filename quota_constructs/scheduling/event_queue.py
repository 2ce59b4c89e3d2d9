"""Virtual time: the current instant, the timed events after it, and whether a pass is due now."""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Sequence
from enum import IntEnum

from quota_constructs.scheduling.job import Job


class TimedEvent(IntEnum):
    """What happens to a job at a set time (the index of its handler, see :meth:`run_until`)."""

    TO_RUNNABLE = 0
    TO_STARTING = 1
    TO_RUNNING = 2
    FINISH = 3
    """The attempt ran its duration: it ends with the request's outcome."""
    TIMEOUT = 4
    """The attempt ran ``attempt_duration_s``: it fails."""
    TIME_LIMIT = 5
    """A RUNNABLE time-limit action terminates the job."""
    PREEMPTION_COMPLETE = 6
    MAX_RUNTIME = 7
    """The attempt ran the training job's ``max_runtime_s``: SageMaker stops it, it fails."""
    ARRIVED = 8
    """A new RUNNABLE job's ``dispatch_delay_s`` is over: its share is looked at again."""


Handler = Callable[[Job], None]


class EventQueue:
    """Timed events in time order, each tied to the job's event generation when scheduled.

    :meth:`cancel` starts a job's next generation, which voids every event scheduled for it so
    far (they are skipped when they come due). ``pass_due``: something changed at ``now``
    that may let a job dispatch, so the dispatcher runs another pass.

    Events scheduled for a later time wait in a heap by (time, order scheduled); events
    scheduled for ``now`` itself (zero delays: submitted to RUNNABLE, SCHEDULED to STARTING to
    RUNNING in the simulator) wait in a FIFO list instead. Every heap entry due at ``now`` was
    scheduled before ``now`` was reached, hence before any of the FIFO's, so handling the heap's
    entries up to ``now`` and then the FIFO keeps the order of scheduling within an instant.
    """

    def __init__(self, start_time: float) -> None:
        self.now = float(start_time)
        """Virtual time of the last change (float seconds)."""
        self.pass_due = False
        self._entries: list[tuple[float, int, TimedEvent, Job, int]] = []
        self._due_now: deque[tuple[TimedEvent, Job, int]] = deque()
        self._seq = 0
        self._generation: list[int] = [0]

    def register(self, job: Job) -> None:
        """Start keeping track of a newly submitted job (in submit order)."""
        assert job.seq == len(self._generation), "jobs are registered in submit order"
        self._generation.append(0)

    def schedule(self, at: float, kind: TimedEvent, job: Job) -> None:
        if at == self.now:
            self._due_now.append((kind, job, self._generation[job.seq]))
            return
        self._seq += 1
        heapq.heappush(self._entries, (at, self._seq, kind, job, self._generation[job.seq]))

    def cancel(self, job: Job) -> None:
        """Void every event scheduled for ``job`` so far."""
        self._generation[job.seq] += 1

    def next_time(self) -> float | None:
        """Time of the next event still in force (voided ones are dropped)."""
        generation = self._generation
        due = self._due_now
        while due:
            if due[0][2] == generation[due[0][1].seq]:
                return self.now
            due.popleft()
        entries = self._entries
        while entries and entries[0][4] != generation[entries[0][3].seq]:
            heapq.heappop(entries)
        return entries[0][0] if entries else None

    def run_until(
        self, until: float, handlers: Sequence[Handler], run_passes: Callable[[], None]
    ) -> None:
        """Move ``now`` to each instant up to ``until`` with events due, handle those in force
        (in order, events they schedule at that instant included; ``handlers[kind](job)``),
        then ``run_passes`` if a pass is due; finally move ``now`` to ``until``."""
        entries = self._entries
        due = self._due_now
        generation = self._generation
        heappop = heapq.heappop
        while due or (entries and entries[0][0] <= until):
            if not due:
                self.now = max(self.now, entries[0][0])
            instant = self.now
            while entries and entries[0][0] <= instant:
                _, _, kind, job, gen = heappop(entries)
                if gen == generation[job.seq]:
                    handlers[kind](job)
            while due:
                kind, job, gen = due.popleft()
                if gen == generation[job.seq]:
                    handlers[kind](job)
            if self.pass_due:
                run_passes()
        self.now = until
