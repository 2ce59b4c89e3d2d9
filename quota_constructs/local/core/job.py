"""A service job as the scheduler core keeps it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from quota_constructs.local.core.records import (
    Attempt,
    Capacity,
    JobRequest,
    JobStatus,
    PendingReason,
    PreemptionRecord,
    _add,
)

if TYPE_CHECKING:
    from quota_constructs.local.core.scheduler import Scheduler

# --- job --------------------------------------------------------------------------------------


class Job:
    """A service job and its history. Read it freely; change it only through the scheduler."""

    __slots__ = (
        "_attempts_used",
        "_awaiting",
        "_beneficiary",
        "_dispatches",
        "_gen",
        "_heap_ver",
        "_in_flight",
        "_infeasible_reason",
        "_infeasible_since",
        "_position_since",
        "_preempted_by",
        "_preempting",
        "_scheduler",
        "alloc",
        "attempts",
        "created_at",
        "is_terminated",
        "job_id",
        "preemptions",
        "priority",
        "progress_s",
        "request",
        "runnable_at",
        "scheduled_at",
        "seq",
        "started_at",
        "starting_at",
        "status",
        "status_reason",
        "stopped_at",
    )

    def __init__(
        self, scheduler: Scheduler, job_id: str, request: JobRequest, priority: int, seq: int
    ) -> None:
        self._scheduler = scheduler
        self.job_id = job_id
        self.request = request
        self.seq = seq
        self.status = JobStatus.SUBMITTED
        self.status_reason: str | None = None
        self.priority = priority
        self.created_at = 0.0
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
        self._gen = 0
        self._heap_ver = 0
        self._attempts_used = 0
        self._dispatches = 0
        self._preempting: PreemptionRecord | None = None
        self._in_flight = False
        self._beneficiary: Job | None = None
        self._awaiting = 0
        self._preempted_by: dict[str, int] = {}
        self._position_since: float | None = None
        self._infeasible_reason: str | None = None
        self._infeasible_since: float | None = None

    def __repr__(self) -> str:
        return f"Job({self.job_id!r}, {self.request.job_name!r}, {self.status}, p={self.priority})"

    @property
    def share_name(self) -> str:
        return self.request.share_name

    @property
    def demand(self) -> Capacity:
        return self.request.demand

    @property
    def borrowed(self) -> dict[str, int]:
        """Instances this job holds that belong to other shares (per instance type)."""
        out: dict[str, int] = {}
        for lender, amounts in self.alloc.items():
            if lender != self.share_name:
                _add(out, amounts)
        return out

    @property
    def attempt_count(self) -> int:
        """Attempts so far, the one holding capacity now included."""
        return len(self.attempts) + (1 if self.status.is_dispatched else 0)

    @property
    def preemption_in_progress(self) -> bool:
        return self._preempting is not None

    @property
    def pending(self) -> PendingReason | None:
        """Why the job is RUNNABLE (``None`` in any other state)."""
        return self._scheduler.pending_reason(self.job_id)
