"""A service job as the scheduler reports it, the event telling of a change to one."""

from __future__ import annotations

from dataclasses import dataclass

from quota_constructs.model import JobStatus
from quota_constructs.scheduling.capacity import add_capacity
from quota_constructs.scheduling.records import (
    Attempt,
    EventKind,
    JobRequest,
    PreemptionRecord,
)

# --- job --------------------------------------------------------------------------------------


class Job:
    """A service job and its history. Read it freely; change it only through the scheduler.

    Only what a caller may read lives here; the scheduler keeps its own bookkeeping about the
    job (event generations, queue entries, preemptions in progress) in its collaborators.
    """

    __slots__ = (
        "alloc",
        "attempts",
        "created_at",
        "demand",
        "is_terminated",
        "job_id",
        "preemptions",
        "priority",
        "progress_s",
        "request",
        "runnable_at",
        "scheduled_at",
        "seq",
        "share_name",
        "started_at",
        "starting_at",
        "status",
        "status_reason",
        "stopped_at",
    )

    def __init__(
        self, job_id: str, request: JobRequest, priority: int, seq: int, created_at: float
    ) -> None:
        self.job_id = job_id
        self.request = request
        self.share_name: str = request.share_name
        self.demand: dict[str, int] = dict(request.demand.items())
        """Instances per instance type (the request's, kept here for quick reading)."""
        self.seq = seq
        """1-based submit order in its scheduler."""
        self.status = JobStatus.SUBMITTED
        self.status_reason: str | None = None
        self.priority = priority
        self.created_at = created_at
        self.runnable_at: float | None = None
        self.scheduled_at: float | None = None
        self.starting_at: float | None = None
        self.started_at: float | None = None
        self.stopped_at: float | None = None
        self.attempts: list[Attempt] = []
        self.preemptions: list[PreemptionRecord] = []
        self.is_terminated = False
        self.progress_s = 0.0
        """Run time kept by checkpoints across preemptions."""
        self.alloc: dict[str, dict[str, int]] = {}
        """While holding capacity: lender share (own share included) -> instance type -> n."""

    def __repr__(self) -> str:
        return f"Job({self.job_id!r}, {self.request.job_name!r}, {self.status}, p={self.priority})"

    @property
    def borrowed(self) -> dict[str, int]:
        """Instances this job holds that belong to other shares (per instance type)."""
        out: dict[str, int] = {}
        for lender, amounts in self.alloc.items():
            if lender != self.share_name:
                add_capacity(out, amounts)
        return out

    @property
    def attempt_count(self) -> int:
        """Attempts so far, the one holding capacity now included."""
        return len(self.attempts) + (1 if self.status.is_dispatched else 0)


@dataclass(frozen=True)
class SchedulerEvent:
    """A state change or preemption step; ``job`` is the live job (read it, do not mutate it)."""

    time: float
    kind: EventKind
    job: Job
    status: JobStatus
    previous_status: JobStatus | None
    status_reason: str | None
    preemption: PreemptionRecord | None = None
