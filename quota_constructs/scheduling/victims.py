"""Victim selection for preemptions: the pluggable policy and its default."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from quota_constructs.scheduling.capacity import Capacity, add_capacity, covers
from quota_constructs.scheduling.job import Job

# --- victim selection -------------------------------------------------------------------------


@dataclass(frozen=True)
class VictimCandidate:
    """A job that could be preempted and what preempting it frees towards the need."""

    job: Job
    frees: Capacity
    borrowing: bool
    running_for: float


class VictimPolicy(Protocol):
    """Chooses which jobs to preempt so that ``need`` (instances per type) is freed."""

    def choose(
        self, candidates: Sequence[VictimCandidate], need: Capacity
    ) -> list[VictimCandidate] | None:
        """The victims (enough to cover ``need``), or ``None`` when the candidates cannot."""
        ...


class DefaultVictimPolicy:
    """Borrowing jobs first, then lowest priority, then fewest jobs, then shortest elapsed run.

    Victims come from the least-protected tier that can free ``need`` (tiers: borrowing before
    non-borrowing, then by priority; a tier includes every less-protected one). Inside it, jobs
    freeing the most of what is needed go first (ties: less protected, shorter run, later
    submitted), and any chosen job not needed to cover ``need`` is dropped again.
    """

    def choose(
        self, candidates: Sequence[VictimCandidate], need: Capacity
    ) -> list[VictimCandidate] | None:
        def tier(c: VictimCandidate) -> tuple[bool, int]:
            return (not c.borrowing, c.job.priority)

        def useful(c: VictimCandidate) -> int:
            return sum(min(c.frees.get(t, 0), n) for t, n in need.items())

        for top in sorted({tier(c) for c in candidates}):
            pool = [c for c in candidates if tier(c) <= top and useful(c) > 0]
            total: dict[str, int] = {}
            for cand in pool:
                add_capacity(total, cand.frees)
            if covers(total, need):
                pool.sort(key=lambda c: (-useful(c), tier(c), c.running_for, -c.job.seq))
                return _greedy(pool, need)
        return None


def _greedy(ordered: Sequence[VictimCandidate], need: Capacity) -> list[VictimCandidate]:
    """Take candidates in order until ``need`` is covered, then drop the unneeded ones."""
    chosen: list[VictimCandidate] = []
    freed: dict[str, int] = {}
    for cand in ordered:
        if covers(freed, need):
            break
        if any(cand.frees.get(t, 0) > 0 and freed.get(t, 0) < n for t, n in need.items()):
            chosen.append(cand)
            add_capacity(freed, cand.frees)
    for cand in reversed(list(chosen)):
        rest = dict(freed)
        add_capacity(rest, cand.frees, -1)
        if covers(rest, need):
            chosen.remove(cand)
            freed = rest
    return chosen
