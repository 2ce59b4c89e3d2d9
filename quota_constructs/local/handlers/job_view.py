"""A service job's attempts and preemptions as Batch's API shows them.

One rendering for DescribeServiceJob (``handlers/service_jobs.py``) and the EventBridge events
(``events.py``), so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from quota_constructs.local.state.arns import Account, training_job_name
from quota_constructs.local.state.clock import EmulatorClock
from quota_constructs.scheduling import QUEUE_WIDE_SHARE, Job, attempt_id

RECENT_PREEMPTED_ATTEMPTS = 5
"""``preemptionSummary.recentPreemptedAttempts`` lists at most this many, the newest."""


def is_quota_share(name: str) -> bool:
    """Whether a share name of the core is a quota share a client may see: not the one
    internal share (``QUEUE_WIDE_SHARE``) in which the core runs a FIFO queue's jobs."""
    return name != QUEUE_WIDE_SHARE


def share_name(job: Job) -> str | None:
    """The job's ``quotaShareName`` on the wire; ``None`` (left out) in a FIFO queue, whose
    jobs the core keeps in its internal ``QUEUE_WIDE_SHARE``."""
    return job.share_name if is_quota_share(job.share_name) else None


def epoch_ms(clock: EmulatorClock, t: float | None) -> int | None:
    """Emulated time ``t`` as the API's epoch milliseconds (``None`` stays ``None``)."""
    return None if t is None else round(clock.epoch(t) * 1000)


def attempt_training_job(job: Job, number: int) -> str:
    """The name of the SageMaker training job attempt ``number`` runs as: from the payload's
    ``TrainingJobName`` (AWS's examples: ``AWSBatch<TrainingJobName><32 hex>``), else the
    job's ``jobName``."""
    sent = job.request.payload.get("TrainingJobName") if job.request.payload else None
    base = sent if isinstance(sent, str) and sent else job.request.job_name
    return training_job_name(base, attempt_id(job.job_id, number))


def attempt_resource(account: Account, job: Job, number: int) -> dict[str, str]:
    """``serviceResourceId`` of attempt ``number``: its SageMaker training job ARN."""
    return {
        "name": "TrainingJobArn",
        "value": account.training_job(attempt_training_job(job, number)),
    }


def attempts(account: Account, clock: EmulatorClock, job: Job) -> list[dict[str, Any]]:
    """``attempts`` of ``job``: each attempt's resource, start, stop and reason."""
    return [
        {
            "serviceResourceId": attempt_resource(account, job, a.number),
            "startedAt": epoch_ms(clock, a.started_at),
            "stoppedAt": epoch_ms(clock, a.stopped_at),
            "statusReason": a.status_reason,
        }
        for a in job.attempts
    ]


def preemption_summary(account: Account, clock: EmulatorClock, job: Job) -> dict[str, Any] | None:
    """``preemptionSummary`` of ``job``, or ``None`` before its first preemption."""
    if not job.preemptions:
        return None
    return {
        "preemptedAttemptCount": len(job.preemptions),
        "recentPreemptedAttempts": [
            {
                "serviceResourceId": attempt_resource(account, job, p.attempt),
                "startedAt": epoch_ms(clock, p.attempt_started_at),
                "stoppedAt": epoch_ms(clock, p.completed_at),
                "statusReason": p.reason,
            }
            for p in reversed(job.preemptions[-RECENT_PREEMPTED_ATTEMPTS:])  # newest first
        ],
    }
