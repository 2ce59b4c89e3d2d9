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
        # Each candidate's tier and usefulness once; tiers from the least protected up, each
        # adding its useful candidates to the pool until the pool covers the need.
        scored: list[tuple[tuple[bool, int], int, VictimCandidate]] = []
        for cand in candidates:
            frees = cand.frees
            useful = 0
            for itype, n in need.items():
                has = frees.get(itype, 0)
                useful += has if has < n else n
            scored.append(((not cand.borrowing, cand.job.priority), useful, cand))
        scored.sort(key=_tier_of)
        pool: list[tuple[tuple[bool, int], int, VictimCandidate]] = []
        total: dict[str, int] = {}
        index, count = 0, len(scored)
        while index < count:
            top = scored[index][0]
            while index < count and scored[index][0] == top:
                entry = scored[index]
                index += 1
                if entry[1] > 0:
                    pool.append(entry)
                    add_capacity(total, entry[2].frees)
            if covers(total, need):
                pool.sort(key=_victim_order)
                return _greedy([entry[2] for entry in pool], need)
        return None


def _tier_of(entry: tuple[tuple[bool, int], int, VictimCandidate]) -> tuple[bool, int]:
    return entry[0]


def _victim_order(
    entry: tuple[tuple[bool, int], int, VictimCandidate],
) -> tuple[int, tuple[bool, int], float, int]:
    """Most useful first, then less protected, shorter run, later submitted."""
    tier, useful, cand = entry
    return (-useful, tier, cand.running_for, -cand.job.seq)


def _greedy(ordered: Sequence[VictimCandidate], need: Capacity) -> list[VictimCandidate]:
    """Take candidates in order until ``need`` is covered, then drop the unneeded ones."""
    chosen: list[VictimCandidate] = []
    freed: dict[str, int] = {}
    for cand in ordered:
        if covers(freed, need):
            break
        frees = cand.frees
        if any(frees.get(t, 0) > 0 and freed.get(t, 0) < n for t, n in need.items()):
            chosen.append(cand)
            add_capacity(freed, frees)
    if len(chosen) == 1:
        return chosen  # it was needed: nothing was covered without it
    for cand in reversed(list(chosen)):
        rest = dict(freed)
        add_capacity(rest, cand.frees, -1)
        if covers(rest, need):
            chosen.remove(cand)
            freed = rest
    return chosen
