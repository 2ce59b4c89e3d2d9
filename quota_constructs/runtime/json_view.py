"""Owns the JSON form of the runtime's typed results, as ``quota jobs ... --json`` prints them.

One convention (docs/runtime.md, "JSON output"): camelCase field names, AWS's own name and
shape where the value is an AWS field (``jobId``, ``statusReason``, ``quotaShareName``,
``capacityUsage`` as ``[{capacityUnit, quantity}]``, ``schedulingPriority`` ...), our own fields
in camelCase too; times are ISO 8601 strings in UTC, absent values ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from quota_constructs.api_shapes import capacity_usage_to_api
from quota_constructs.runtime.jobs import (
    JobDetails,
    JobSummary,
    PreemptedAttempt,
    QueuePosition,
    QueueSnapshot,
    TerminateOutcome,
)


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def capacity_json(usage: Mapping[str, int]) -> list[dict[str, Any]]:
    """Instances per type in AWS's ``capacityUsage`` shape."""
    return capacity_usage_to_api(usage)


def job_json(job: JobSummary) -> dict[str, Any]:
    """A job as ``ListServiceJobs`` names its fields (``ls``, ``wait``)."""
    return {
        "jobId": job.job_id,
        "jobName": job.job_name,
        "jobArn": job.job_arn,
        "status": job.status.value,
        "statusReason": job.status_reason,
        "quotaShareName": job.share,
        "createdAt": _time(job.created_at),
        "scheduledAt": _time(job.scheduled_at),
        "startedAt": _time(job.started_at),
        "stoppedAt": _time(job.stopped_at),
        "capacityUsage": capacity_json(job.capacity_usage),
        "isTerminated": job.is_terminated,
    }


def _attempt_json(attempt: PreemptedAttempt) -> dict[str, Any]:
    return {
        "startedAt": _time(attempt.started_at),
        "stoppedAt": _time(attempt.stopped_at),
        "statusReason": attempt.reason,
        "trainingJobArn": attempt.training_job_arn,
    }


def details_json(job: JobDetails) -> dict[str, Any]:
    """A job as ``DescribeServiceJob`` names its fields, without the payload (``describe``)."""
    return {
        **job_json(job),
        "schedulingPriority": job.priority,
        "preemptionSummary": {
            "preemptedAttemptCount": job.preemptions.count,
            "recentPreemptedAttempts": [_attempt_json(a) for a in job.preemptions.recent],
        },
        "preemptionConfiguration": {"preemptionRetriesBeforeTermination": job.preemption_retries},
        "retryStrategy": {"attempts": job.retry_attempts},
        "timeoutConfig": {"attemptDurationSeconds": job.attempt_duration_s},
        "attemptCount": job.attempts,
        "tags": dict(job.tags),
    }


def _position_json(position: QueuePosition) -> dict[str, Any]:
    return {
        "jobId": position.job_id,
        "jobArn": position.job_arn,
        "earliestTimeAtPosition": _time(position.since),
    }


def snapshot_json(snapshot: QueueSnapshot) -> dict[str, Any]:
    """``GetJobQueueSnapshot`` with AWS's names, lists flattened (``snapshot``)."""
    return {
        "frontOfQueue": [_position_json(p) for p in snapshot.front],
        "frontOfQuotaShares": {
            share: [_position_json(p) for p in heads]
            for share, heads in snapshot.share_heads.items()
        },
        "quotaShareUtilization": [
            {"quotaShareName": share, "capacityUsage": capacity_json(usage)}
            for share, usage in snapshot.usage.items()
        ],
        "totalCapacityUsage": capacity_json(snapshot.total_usage),
    }


def terminate_json(outcome: TerminateOutcome) -> dict[str, Any]:
    """Ids terminated and, per job id, why it could not be (``terminate``)."""
    return {"terminated": list(outcome.terminated), "errors": dict(outcome.errors)}
