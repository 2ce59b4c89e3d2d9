"""Owns waits for many service jobs at once, on list calls instead of one describe per job.

Each poll lists the queue by status (``ListServiceJobs``, one call per page), looking first
where each awaited job was heading (RUNNABLE, RUNNING), then in SUCCEEDED, then the short-lived
states and FAILED, and stops as soon as every awaited job is located. Finished lists are newest
first, so paging them stops at jobs older than any still missing. Only a job found in no list is
described. Polls are spaced by a jittered backoff that restarts whenever a job moves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from quota_constructs.model import Problem, QuotaConfigError
from quota_constructs.runtime.jobs import (
    DISPATCHED_STATUSES,
    JobStatus,
    JobSummary,
)
from quota_constructs.runtime.pacing import Backoff, PacingClock


class JobReader(Protocol):
    """What a wait reads jobs through (a :class:`QueueClient` is one)."""

    def list_pages(
        self, status: JobStatus, *, share: str | None = None
    ) -> Iterable[list[JobSummary]]:
        """Pages of the jobs in ``status`` (of ``share`` only, if given): one API call each."""
        ...

    def describe(self, job_id: str, /) -> JobSummary:
        """One job, read by its id."""
        ...


@dataclass
class TrackedJob:
    """What a wait knows about one job: its latest summary and what it was seen doing."""

    job_id: str
    summary: JobSummary | None = None
    seen_dispatched: bool = False
    requeues: int = 0
    earlier_status: JobStatus | None = None
    """Status seen by an earlier wait of the same client (before this wait's first poll)."""

    @property
    def status(self) -> JobStatus | None:
        return self.summary.status if self.summary else None


WaitTarget = Callable[[TrackedJob], bool]
"""A wait target: true once the job is where the caller wants it."""


def _terminal(job: TrackedJob) -> bool:
    return job.status is not None and job.status.is_terminal


def _dispatched(job: TrackedJob) -> bool:
    return job.status is not None and (job.status.is_dispatched or job.status.is_terminal)


def _running(job: TrackedJob) -> bool:
    return job.status is JobStatus.RUNNING or _terminal(job)


def _requeued(job: TrackedJob) -> bool:
    """Back to RUNNABLE after being dispatched (preempted, or a retry after a failure)."""
    if job.status is not JobStatus.RUNNABLE:
        return False
    return job.requeues > 0 or (job.summary is not None and job.summary.started_at is not None)


_LOOKUP_ORDER = (
    JobStatus.RUNNABLE,
    JobStatus.RUNNING,
    JobStatus.SUCCEEDED,
    JobStatus.SCHEDULED,
    JobStatus.STARTING,
    JobStatus.FAILED,
    JobStatus.SUBMITTED,
    JobStatus.PENDING,
)


class Until:
    """Ready-made wait targets; any ``Callable[[TrackedJob], bool]`` works too."""

    TERMINAL: WaitTarget = staticmethod(_terminal)
    """SUCCEEDED or FAILED."""
    DISPATCHED: WaitTarget = staticmethod(_dispatched)
    """SCHEDULED, STARTING, RUNNING, or already finished."""
    RUNNING: WaitTarget = staticmethod(_running)
    """RUNNING, or already finished."""
    REQUEUED: WaitTarget = staticmethod(_requeued)
    """RUNNABLE again after having been dispatched (e.g. preempted)."""

    @staticmethod
    def status(*statuses: JobStatus | str) -> WaitTarget:
        """In one of ``statuses``."""
        wanted = {JobStatus(s) for s in statuses}
        return lambda job: job.status in wanted

    @staticmethod
    def named(name: str) -> WaitTarget:
        """A target by CLI name: terminal, dispatched, running, requeued, or a status."""
        targets = {
            "terminal": Until.TERMINAL,
            "dispatched": Until.DISPATCHED,
            "running": Until.RUNNING,
            "requeued": Until.REQUEUED,
        }
        if name.lower() in targets:
            return targets[name.lower()]
        try:
            return Until.status(name.upper())
        except ValueError:
            choices = ", ".join([*targets, *(s.value for s in JobStatus)])
            problem = Problem("until", name, "unknown wait target", f"choose one of {choices}")
            raise QuotaConfigError([problem]) from None


class TransitionKind(StrEnum):
    """What a status change means to a user."""

    DISPATCHED = "dispatched"
    PREEMPTED = "preempted"
    FINISHED = "finished"
    CHANGED = "changed"


@dataclass(frozen=True)
class Transition:
    """A job changed status between two polls."""

    kind: TransitionKind
    job: JobSummary
    previous: JobStatus | None


@dataclass(frozen=True)
class WaitResult:
    """Final summaries of the awaited jobs, and the API calls the wait made."""

    jobs: Mapping[str, JobSummary]
    calls: int
    polls: int


class WaitTimeout(TimeoutError):
    """Some jobs did not reach the target in time; ``pending`` maps their ids to status."""

    def __init__(self, pending: Mapping[str, JobStatus | None], timeout: float) -> None:
        self.pending = dict(pending)
        shown = ", ".join(f"{j} ({s or 'not found'})" for j, s in list(self.pending.items())[:5])
        more = f" and {len(self.pending) - 5} more" if len(self.pending) > 5 else ""
        super().__init__(f"{len(self.pending)} job(s) not there after {timeout:g} s: {shown}{more}")


@dataclass
class Waiter:
    """One wait over ``job_ids``; :meth:`run` polls until every job is done.

    Jobs are read through ``reader``; polls are spaced on ``clock``.
    """

    reader: JobReader
    clock: PacingClock
    job_ids: Sequence[str]
    until: WaitTarget
    share: str | None = None
    backoff: Backoff = field(default_factory=Backoff)
    on_transition: Callable[[Transition], None] | None = None
    earlier_statuses: Mapping[str, JobStatus] = field(default_factory=dict)
    calls: int = 0
    polls: int = 0

    def __post_init__(self) -> None:
        self.tracked = {
            job_id: TrackedJob(
                job_id,
                earlier_status=self.earlier_statuses.get(job_id),
                seen_dispatched=bool(self.earlier_statuses.get(job_id) in DISPATCHED_STATUSES),
            )
            for job_id in dict.fromkeys(self.job_ids)
        }

    def done(self, job: TrackedJob) -> bool:
        """At the target, or finished (a finished job can never get there)."""
        return job.summary is not None and (self.until(job) or _terminal(job))

    def run(self, *, timeout: float | None = None) -> WaitResult:
        """Poll until every job is done; :class:`WaitTimeout` after ``timeout`` seconds."""
        clock = self.clock
        deadline = None if timeout is None else clock.now() + timeout
        delays = self.backoff.delays()
        while True:
            if self.poll():
                delays.reset()
            pending = [j for j in self.tracked.values() if not self.done(j)]
            if not pending:
                return WaitResult(
                    jobs={j.job_id: j.summary for j in self.tracked.values() if j.summary},
                    calls=self.calls,
                    polls=self.polls,
                )
            delay = delays.next()
            if deadline is not None:
                left = deadline - clock.now()
                if left <= 0:
                    raise WaitTimeout({j.job_id: j.status for j in pending}, timeout or 0)
                delay = min(delay, left)
            clock.sleep(delay)

    def poll(self) -> bool:
        """One round of list calls; True if any job changed status."""
        self.polls += 1
        wanted = {j.job_id for j in self.tracked.values() if not self.done(j)}
        found: dict[str, JobSummary] = {}
        for status in self._status_order(wanted):
            if wanted <= found.keys():
                break
            self._scan(status, wanted, found)
        for job_id in wanted - found.keys():  # left every list (e.g. aged out): describe it
            self.calls += 1
            found[job_id] = self.reader.describe(job_id)
        changed = False
        for job_id, job in self.tracked.items():  # transitions in the caller's job order
            if job_id in found:
                changed |= self._observe(job, found[job_id])
        return changed

    def _status_order(self, wanted: set[str]) -> list[JobStatus]:
        """Where to look, most likely first: the settled status each job was heading for
        (RUNNABLE, or RUNNING for a job seen SCHEDULED / STARTING), then SUCCEEDED (jobs that
        left the active lists have mostly finished), then the short-lived states, FAILED."""
        counts: dict[JobStatus, int] = {}
        for job_id in wanted:
            status = self.tracked[job_id].status or self.tracked[job_id].earlier_status
            if status is not None and status.is_active:
                heading = JobStatus.RUNNING if status.is_dispatched else JobStatus.RUNNABLE
                counts[heading] = counts.get(heading, 0) + 1
        first = sorted(counts, key=lambda s: -counts[s])
        if not first:  # first poll: nothing known yet
            first = [JobStatus.RUNNABLE, JobStatus.RUNNING]
        rest = [s for s in _LOOKUP_ORDER if s not in first]
        return [*first, *rest]

    def _scan(self, status: JobStatus, wanted: set[str], found: dict[str, JobSummary]) -> None:
        """Page through one status list until every awaited job is located. Finished lists are
        newest first by creation time, so paging stops at jobs older than any still missing."""
        oldest = self._oldest_missing(wanted, found) if status.is_terminal else None
        for page in self.reader.list_pages(status, share=self.share):
            self.calls += 1
            for summary in page:
                if summary.job_id in wanted and summary.job_id not in found:
                    found[summary.job_id] = summary
            if wanted <= found.keys():
                return
            last = page[-1].created_at if page else None
            if oldest is not None and last is not None and last < oldest:
                return

    def _oldest_missing(self, wanted: set[str], found: Mapping[str, JobSummary]) -> datetime | None:
        """Creation time of the oldest awaited job not located yet (None if any is unknown)."""
        times = []
        for job_id in wanted - found.keys():
            summary = self.tracked[job_id].summary
            if summary is None or summary.created_at is None:
                return None
            times.append(summary.created_at)
        return min(times) if times else None

    def _observe(self, job: TrackedJob, summary: JobSummary) -> bool:
        previous = job.status if job.summary is not None else job.earlier_status
        job.summary = summary
        if previous == summary.status:
            return False
        kind = TransitionKind.CHANGED
        if summary.status.is_dispatched and not (previous and previous.is_dispatched):
            kind = TransitionKind.DISPATCHED
        elif summary.status is JobStatus.RUNNABLE and previous and previous.is_dispatched:
            kind = TransitionKind.PREEMPTED
            job.requeues += 1
        elif summary.status.is_terminal:
            kind = TransitionKind.FINISHED
        job.seen_dispatched |= summary.status.is_dispatched
        if self.on_transition is not None:
            self.on_transition(Transition(kind, summary, previous))
        return True
