"""Owns the runtime's typed results: service jobs, preemptions, queue snapshots, outcomes.

Every ``from_api`` function here is the one place that turns a Batch API response shape into a
typed object; the rest of the runtime never reads raw response dicts. Batch timestamps are epoch
milliseconds and become timezone-aware :class:`datetime` objects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

# Job states live in the domain model; re-exported here as part of the runtime's typed results.
from quota_constructs.api_shapes import capacity_usage_from_api
from quota_constructs.model import ACTIVE_STATUSES as ACTIVE_STATUSES
from quota_constructs.model import DISPATCHED_STATUSES as DISPATCHED_STATUSES
from quota_constructs.model import TERMINAL_STATUSES as TERMINAL_STATUSES
from quota_constructs.model import JobStatus as JobStatus


def timestamp(value: Any) -> datetime | None:
    """Batch epoch-millisecond timestamp (or a datetime botocore already parsed) as UTC."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromtimestamp(float(value) / 1000.0, tz=UTC)


def job_id_from_arn(arn: str) -> str:
    """``arn:...:service-job/<id>`` -> ``<id>`` (a bare id is returned unchanged)."""
    return arn.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class PreemptedAttempt:
    """One preempted attempt: when it ran and why it was stopped (AWS statusReason)."""

    started_at: datetime | None
    stopped_at: datetime | None
    reason: str
    training_job_arn: str | None

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> PreemptedAttempt:
        resource = data.get("serviceResourceId") or {}
        return cls(
            started_at=timestamp(data.get("startedAt")),
            stopped_at=timestamp(data.get("stoppedAt")),
            reason=str(data.get("statusReason", "")),
            training_job_arn=resource.get("value"),
        )


@dataclass(frozen=True)
class PreemptionHistory:
    """``preemptionSummary``: total preempted attempts and AWS's recent-attempts window."""

    count: int = 0
    recent: tuple[PreemptedAttempt, ...] = ()

    @classmethod
    def from_api(cls, data: Mapping[str, Any] | None) -> PreemptionHistory:
        data = data or {}
        return cls(
            count=int(data.get("preemptedAttemptCount", 0)),
            recent=tuple(
                PreemptedAttempt.from_api(a) for a in data.get("recentPreemptedAttempts") or ()
            ),
        )

    @property
    def reasons(self) -> tuple[str, ...]:
        """The recent preemption reasons, oldest first."""
        return tuple(a.reason for a in self.recent)


@dataclass(frozen=True)
class JobSummary:
    """What ``ListServiceJobs`` tells about a job (no payload, no preemption history)."""

    job_id: str
    job_name: str
    job_arn: str | None
    status: JobStatus
    status_reason: str
    share: str | None
    created_at: datetime | None
    scheduled_at: datetime | None
    started_at: datetime | None
    stopped_at: datetime | None
    capacity_usage: Mapping[str, int] = field(default_factory=dict)
    is_terminated: bool = False

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> JobSummary:
        return cls(**_summary_fields(data))


@dataclass(frozen=True)
class JobDetails(JobSummary):
    """``DescribeServiceJob``: the summary plus priority, settings and preemption history."""

    priority: int | None = None
    preemptions: PreemptionHistory = field(default_factory=PreemptionHistory)
    preemption_retries: int | None = None
    retry_attempts: int | None = None
    attempt_duration_s: int | None = None
    attempts: int = 0
    tags: Mapping[str, str] = field(default_factory=dict)
    payload: str | None = None
    attempt_windows: tuple[tuple[datetime, datetime], ...] = ()
    """When each finished attempt ran (``attempts``' ``startedAt`` and ``stoppedAt``; an
    attempt without both is left out): the capacity the job held before."""

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> JobDetails:
        retry = data.get("retryStrategy") or {}
        return cls(
            **_summary_fields(data),
            priority=data.get("schedulingPriority"),
            preemptions=PreemptionHistory.from_api(data.get("preemptionSummary")),
            preemption_retries=(data.get("preemptionConfiguration") or {}).get(
                "preemptionRetriesBeforeTermination"
            ),
            retry_attempts=retry.get("attempts"),
            attempt_duration_s=(data.get("timeoutConfig") or {}).get("attemptDurationSeconds"),
            attempts=len(data.get("attempts") or ()),
            tags=dict(data.get("tags") or {}),
            payload=data.get("serviceRequestPayload"),
            attempt_windows=_windows(data.get("attempts") or ()),
        )


def _windows(attempts: Sequence[Mapping[str, Any]]) -> tuple[tuple[datetime, datetime], ...]:
    found = []
    for attempt in attempts:
        started, stopped = timestamp(attempt.get("startedAt")), timestamp(attempt.get("stoppedAt"))
        if started is not None and stopped is not None:
            found.append((started, stopped))
    return tuple(found)


def active_jobs(listed: Sequence[JobSummary]) -> list[JobSummary]:
    """The active jobs of a listing of every active status, in :data:`ACTIVE_STATUSES` order
    (then the listed order): as the forecast lists them itself."""
    return [job for status in ACTIVE_STATUSES for job in listed if job.status is status]


def _summary_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "job_id": str(data["jobId"]),
        "job_name": str(data.get("jobName", "")),
        "job_arn": data.get("jobArn"),
        "status": JobStatus(data.get("status", JobStatus.RUNNING)),
        "status_reason": str(data.get("statusReason", "")),
        "share": data.get("quotaShareName"),
        "created_at": timestamp(data.get("createdAt")),
        "scheduled_at": timestamp(data.get("scheduledAt")),
        "started_at": timestamp(data.get("startedAt")),
        "stopped_at": timestamp(data.get("stoppedAt")),
        "capacity_usage": capacity_usage_from_api(data.get("capacityUsage")),
        "is_terminated": bool(data.get("isTerminated", False)),
    }


@dataclass(frozen=True)
class QueuePosition:
    """A RUNNABLE job at the front of the queue or of a share, and since when it is there."""

    job_id: str
    job_arn: str
    since: datetime | None


@dataclass(frozen=True)
class QueueSnapshot:
    """``GetJobQueueSnapshot``: who is next, per queue and per share, and capacity in use.

    ``front`` is AWS's order (priority and share usage), at most 100 RUNNABLE jobs;
    ``share_heads`` maps each share to its first RUNNABLE job(s); ``usage`` maps each share to
    instances in use per instance type; ``total_usage`` is the whole queue.
    """

    front: tuple[QueuePosition, ...]
    share_heads: Mapping[str, tuple[QueuePosition, ...]]
    usage: Mapping[str, Mapping[str, int]]
    total_usage: Mapping[str, int]

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> QueueSnapshot:
        front = tuple(_position(j) for j in (data.get("frontOfQueue") or {}).get("jobs") or ())
        shares = (data.get("frontOfQuotaShares") or {}).get("quotaShares") or {}
        util = data.get("queueUtilization") or {}
        per_share = (util.get("quotaShareUtilization") or {}).get("topCapacityUtilization") or ()
        return cls(
            front=front,
            share_heads={name: tuple(_position(j) for j in jobs) for name, jobs in shares.items()},
            usage={
                str(use.get("quotaShareName")): capacity_usage_from_api(use.get("capacityUsage"))
                for use in per_share
            },
            total_usage=capacity_usage_from_api(util.get("totalCapacityUsage")),
        )

    def position(self, job_id: str) -> int | None:
        """1-based position of ``job_id`` at the front of the queue (``None``: not in front)."""
        for index, entry in enumerate(self.front, start=1):
            if entry.job_id == job_id:
                return index
        return None


def _position(data: Mapping[str, Any]) -> QueuePosition:
    arn = str(data.get("jobArn", ""))
    return QueuePosition(
        job_id=job_id_from_arn(arn),
        job_arn=arn,
        since=timestamp(data.get("earliestTimeAtPosition")),
    )


@dataclass(frozen=True)
class SubmitOutcome:
    """Result of one submission in :meth:`QueueClient.submit_many`: a job or an error.

    ``already_submitted``: the job existed before this call (the call's first request was
    rejected as a repeat of its ``clientToken``, and the job was found).
    """

    job_name: str
    job_id: str | None = None
    job_arn: str | None = None
    error: str | None = None
    already_submitted: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class TerminateOutcome:
    """Result of :meth:`QueueClient.terminate_many`: ids terminated and per-job errors."""

    terminated: tuple[str, ...] = ()
    errors: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors
