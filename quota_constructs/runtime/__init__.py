"""Owns the runtime's public API: submit, re-prioritise, watch and clean up jobs in a quota share.

boto3 only; importing this package never imports ``aws_cdk`` or the emulator. Start with
:class:`QueueClient`. Modules, each importing only those before it: ``pacing`` (clocks, backoff,
retries), ``jobs`` (typed API results), ``payload`` (building and checking submissions),
``waiting`` (waits over list calls), ``queue`` (the client), ``cli`` (``quota jobs``).
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
from quota_constructs.runtime.pacing import (
    Backoff,
    MonotonicClock,
    PacingClock,
    RateLimiter,
    RetryOptions,
)
from quota_constructs.runtime.payload import (
    JobSubmission,
    TrainingJob,
    attempt_timeout,
    attempt_token,
    client_token,
    payload_problems,
)
from quota_constructs.runtime.queue import (
    AmbiguousJobName,
    ForecastOptions,
    JobHandle,
    JobNotFound,
    QueueClient,
    ShareNotFound,
    error_text,
    queue_spec_from_api,
)
from quota_constructs.runtime.training_plans import PlanOverflow
from quota_constructs.runtime.waiting import (
    TrackedJob,
    Transition,
    TransitionKind,
    Until,
    WaitResult,
    WaitTarget,
    WaitTimeout,
)

__all__ = [
    "ACTIVE_STATUSES",
    "DISPATCHED_STATUSES",
    "TERMINAL_STATUSES",
    "AmbiguousJobName",
    "Backoff",
    "ForecastOptions",
    "JobDetails",
    "JobHandle",
    "JobNotFound",
    "JobStatus",
    "JobSubmission",
    "JobSummary",
    "MonotonicClock",
    "PacingClock",
    "PlanOverflow",
    "PreemptedAttempt",
    "PreemptionHistory",
    "QueueClient",
    "QueuePosition",
    "QueueSnapshot",
    "RateLimiter",
    "RetryOptions",
    "ShareNotFound",
    "SubmitOutcome",
    "TerminateOutcome",
    "TrackedJob",
    "TrainingJob",
    "Transition",
    "TransitionKind",
    "Until",
    "WaitResult",
    "WaitTarget",
    "WaitTimeout",
    "attempt_timeout",
    "attempt_token",
    "client_token",
    "error_text",
    "payload_problems",
    "queue_spec_from_api",
]
