"""Runnable queues: each share's RUNNABLE jobs in dispatch order, and those that cannot fit."""

from __future__ import annotations

import heapq

from quota_constructs.scheduling.changes import ShareChanges
from quota_constructs.scheduling.job import Job

QueueEntry = tuple[int, int, Job]
"""(rank, entry version, job); an entry whose version is not the job's current one is stale
and skipped."""

RANK_SPAN = 1 << 48
"""More than any number of jobs a scheduler is submitted: the rank ``seq - priority *
RANK_SPAN`` orders by priority (highest first), then submit order, in one integer comparison
(a heap of thousands of RUNNABLE jobs compares entries a dozen times per push or pop)."""


class RunnableQueue:
    """One share's RUNNABLE jobs: a heap by priority then submit order, and the infeasible ones.

    A job has at most one current entry; re-queueing it (a new priority, a backfill skip)
    pushes a new entry and leaves the old one stale. Whenever the head changes or the queue is
    rebuilt, the share is touched in :class:`ShareChanges`; while ``touch_every_push`` is set
    (by the dispatcher), every push touches it.
    """

    def __init__(self, name: str, entry_versions: list[int], changes: ShareChanges) -> None:
        self.name = name
        self.touch_every_push = True
        self.heap: list[QueueEntry] = []
        self.infeasible: dict[str, Job] = {}
        """RUNNABLE jobs whose demand can never fit (a MISCONFIGURATION reason), by job id."""
        self._touched = changes.touched
        self._versions = entry_versions
        self._order: list[Job] | None = None
        self._positions: dict[str, int] = {}

    def push(self, job: Job) -> None:
        """Queue ``job`` at its current priority (a previous entry of it becomes stale)."""
        heap = self.heap
        was_head = bool(heap) and self.head() is job
        versions = self._versions
        version = versions[job.seq] + 1
        versions[job.seq] = version
        heapq.heappush(heap, (job.seq - job.priority * RANK_SPAN, version, job))
        top = heap[0]
        if was_head or (top[2] is job and top[1] == version) or self.touch_every_push:
            self._touched.add(self.name)
        self._order = None

    def head(self) -> Job | None:
        """The first RUNNABLE job in dispatch order, or ``None``."""
        heap = self.heap
        versions = self._versions
        while heap:
            entry = heap[0]
            job = entry[2]
            if entry[1] == versions[job.seq]:
                return job
            heapq.heappop(heap)
        return None

    def pop_head(self) -> Job:
        """Remove the head (call :meth:`head` first: it must be current)."""
        self._order = None
        self._touched.add(self.name)
        return heapq.heappop(self.heap)[2]

    def order(self) -> list[Job]:
        """The RUNNABLE jobs in dispatch order (cached until the queue changes)."""
        if self._order is None:
            versions = self._versions
            entries = sorted(e for e in self.heap if e[1] == versions[e[2].seq])
            self._order = [e[2] for e in entries]
            self._positions = {job.job_id: i for i, job in enumerate(self._order)}
        return self._order

    def position(self, job: Job) -> int:
        """0-based place of ``job`` in :meth:`order` (0 when it is not queued)."""
        self.order()
        return self._positions.get(job.job_id, 0)

    def remove(self, job: Job) -> None:
        """``job`` leaves the queue for good: its entry becomes stale (touching the share when
        it was the head: only the head and the queue's additions decide a dispatch pass)."""
        if self.head() is job:
            self._touched.add(self.name)
        self._versions[job.seq] += 1
        self.infeasible.pop(job.job_id, None)
        self._order = None

    def drain(self) -> list[Job]:
        """Empty the queue; return its RUNNABLE jobs (queued and infeasible) in submit order."""
        versions = self._versions
        waiting = [e[2] for e in self.heap if e[1] == versions[e[2].seq]]
        waiting += list(self.infeasible.values())
        self.heap = []
        self.infeasible = {}
        self._touched.add(self.name)
        self._order = None
        return sorted(waiting, key=lambda j: j.seq)


class RunnableQueues:
    """The runnable queue of every share and each job's standing in them.

    Per job (by submit order): the version of its current queue entry; per RUNNABLE job: why
    it can never fit (if so) and since when it holds its place in its share's order.
    """

    def __init__(self, changes: ShareChanges) -> None:
        self._changes = changes
        self.by_share: dict[str, RunnableQueue] = {}
        """Every share's queue, in declared order."""
        self._versions: list[int] = [0]
        self._infeasible_reasons: dict[str, str] = {}
        self._position_since: dict[str, float] = {}

    def register(self, job: Job) -> None:
        """Start keeping track of a newly submitted job (in submit order)."""
        assert job.seq == len(self._versions), "jobs are registered in submit order"
        self._versions.append(0)

    def add_share(self, name: str) -> None:
        self.by_share[name] = RunnableQueue(name, self._versions, self._changes)

    def remove_share(self, name: str) -> None:
        del self.by_share[name]

    def of(self, job: Job) -> RunnableQueue:
        """The queue of ``job``'s share."""
        return self.by_share[job.share_name]

    def discard(self, job: Job) -> None:
        """``job`` leaves its queue for good (terminated): its entry becomes stale."""
        self.by_share[job.share_name].remove(job)
        self._infeasible_reasons.pop(job.job_id, None)

    # --- infeasible jobs ----------------------------------------------------------------------

    def infeasible_reason(self, job: Job) -> str | None:
        """Why the RUNNABLE ``job`` can never fit (its MISCONFIGURATION reason), or ``None``."""
        return self._infeasible_reasons.get(job.job_id)

    def hold_infeasible(self, job: Job, reason: str) -> bool:
        """Keep ``job`` aside as infeasible; ``True`` when ``reason`` is new for it."""
        self.by_share[job.share_name].infeasible[job.job_id] = job
        if self._infeasible_reasons.get(job.job_id) == reason:
            return False
        self._infeasible_reasons[job.job_id] = reason
        return True

    def clear_infeasible(self, job: Job) -> bool:
        """``job`` fits again; ``True`` when it had been infeasible."""
        return self._infeasible_reasons.pop(job.job_id, None) is not None

    # --- place in the order -------------------------------------------------------------------

    def note_position(self, job: Job, now: float) -> None:
        """``job`` is (still) at its place: remember since when, once."""
        if job.job_id not in self._position_since:
            self._position_since[job.job_id] = now

    def reset_position(self, job: Job) -> None:
        """``job`` left its place (dispatched, requeued, re-prioritised, a preemption started)."""
        self._position_since.pop(job.job_id, None)

    def position_since(self, job: Job) -> float | None:
        """When ``job`` reached its current place, if it was noted."""
        return self._position_since.get(job.job_id)
