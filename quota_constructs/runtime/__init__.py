"""Runtime module: submit, re-prioritise, watch and clean up training jobs in a quota share.

boto3 only; importing this package never imports ``aws_cdk``. Start with :class:`QueueClient`.
"""

from __future__ import annotations

from quota_constructs.runtime.jobs import (
    ACTIVE_STATUSES,
    DISPATCHED_STATUSES,
    TERMINAL_STATUSES,
    JobDetails,
    JobStatus,
    JobSummary,
    PreemptedAttempt,
    PreemptionHistory,
    QueuePosition,
    QueueSnapshot,
    SubmitOutcome,
    TerminateOutcome,
)
from quota_constructs.runtime.pacing import Backoff, Clock, RateLimiter, RetryOptions, WallClock
from quota_constructs.runtime.payload import (
    JobSubmission,
    TrainingJob,
    attempt_timeout,
    client_token,
)
from quota_constructs.runtime.queue import (
    JobHandle,
    QueueClient,
    error_text,
    queue_spec_from_api,
)
from quota_constructs.runtime.waiting import (
    TrackedJob,
    Transition,
    TransitionKind,
    Until,
    WaitResult,
    WaitTimeout,
)

__all__ = [
    "ACTIVE_STATUSES",
    "DISPATCHED_STATUSES",
    "TERMINAL_STATUSES",
    "Backoff",
    "Clock",
    "JobDetails",
    "JobHandle",
    "JobStatus",
    "JobSubmission",
    "JobSummary",
    "PreemptedAttempt",
    "PreemptionHistory",
    "QueueClient",
    "QueuePosition",
    "QueueSnapshot",
    "RateLimiter",
    "RetryOptions",
    "SubmitOutcome",
    "TerminateOutcome",
    "TrackedJob",
    "TrainingJob",
    "Transition",
    "TransitionKind",
    "Until",
    "WaitResult",
    "WaitTimeout",
    "WallClock",
    "attempt_timeout",
    "client_token",
    "error_text",
    "queue_spec_from_api",
]
