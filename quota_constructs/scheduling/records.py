"""Constants, enums and the typed value records of the scheduler (requests, reasons, snapshots)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from quota_constructs.model import ExitRule, PendingKind, QuotaConfigError
from quota_constructs.scheduling.capacity import Capacity

# --- constants --------------------------------------------------------------------------------

REASON_CROSS_SHARE = "Cross-share preemption triggered to reclaim borrowed capacity"
"""AWS's own string (EventBridge preemption events, docs/aws-semantics.md §2.5)."""
REASON_IN_SHARE = "In-share preemption triggered by a higher-priority job in the quota share"
"""Our string: AWS does not document one (UNCONFIRMED)."""
REASON_LIMIT_LOWERED = "Quota share capacity reduced below current usage; preemption triggered"
"""Our string: AWS does not document one (UNCONFIRMED)."""
PREEMPTION_IN_PROGRESS = "PREEMPTION_IN_PROGRESS: "
REASON_SUCCEEDED = "Received status from SageMaker: Training job completed"
REASON_FAILED = (
    "Received status from SageMaker: AlgorithmError: emulated failure (quota.local/outcome)"
)
REASON_TIMEOUT = "Job attempt duration exceeded timeout"
REASON_MAX_RUNTIME = (
    "Received status from SageMaker: Training job stopped: MaxRuntimeExceeded - the job "
    "exceeded its StoppingCondition.MaxRuntimeInSeconds"
)
"""``statusReason`` of an attempt whose training job reached ``MaxRuntimeInSeconds``: SageMaker
stops it (``Stopped`` / ``MaxRuntimeExceeded``), which Batch reports as FAILED (the text
UNCONFIRMED)."""
REASON_SHARE_REMOVED = "Quota share deleted: all jobs in the share are terminated"
JSTLA_REASON = "Terminated by JobStateTimeLimit action due to reason: {reason}"
CAPACITY_CODE = "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"
REASON_CAPACITY = f"{CAPACITY_CODE} - Unable to provision requested compute resources"
"""AWS's ``statusReason`` of a job whose training job found no capacity (docs/emulator.md)."""
REASON_CAPACITY_ERROR = (
    "Received status from SageMaker:CapacityError: Unable to provision requested ML compute "
    "capacity. Please retry using a different ML instance type."
)
"""The ``statusReason`` of such an attempt: SageMaker's ``FailureReason`` (the text UNCONFIRMED)."""


class Outcome(StrEnum):
    """How an attempt ends when it runs to its duration."""

    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"


class PreemptionRule(StrEnum):
    """Why a job was preempted."""

    CROSS_SHARE = "CROSS_SHARE"
    """A lender reclaimed capacity the victim's share had borrowed."""
    IN_SHARE = "IN_SHARE"
    """A strictly higher-priority job of the same share (in-share preemption ENABLED)."""
    LIMIT_LOWERED = "LIMIT_LOWERED"
    """A share's limits (or borrow limit / strategy) were lowered below what its jobs hold."""


class EventKind(StrEnum):
    """What a :class:`SchedulerEvent` reports."""

    STATE_CHANGE = "STATE_CHANGE"
    PRIORITY_CHANGE = "PRIORITY_CHANGE"
    PREEMPTION_STARTED = "PREEMPTION_STARTED"
    PREEMPTION_COMPLETED = "PREEMPTION_COMPLETED"
    QUEUE_BLOCKED = "QUEUE_BLOCKED"
    """A RUNNABLE job got a new MISCONFIGURATION reason (its demand can never fit): as it turned
    RUNNABLE (after its state change), or while it waited, when a share or the service
    environment changed (no state change then). ``status_reason`` is the reason."""


class ShareOrder(StrEnum):
    """Order in which shares are served from their own capacity in a pass (UNCONFIRMED)."""

    DECLARED = "DECLARED"
    """The order the shares were declared/created in."""
    LEAST_USAGE = "LEAST_USAGE"
    """Shares using the smallest fraction of their own limits first (ties: declared order)."""


class ReclaimScope(StrEnum):
    """Which jobs of a borrowing share a cross-share reclaim may preempt (UNCONFIRMED)."""

    SHARE = "SHARE"
    """Any of them: a share borrows as a whole, so its borrowed instances count on its least
    protected jobs (lowest priority, then shortest run), which the ledger relabels to hold the
    lender's instances before they stop."""
    JOB = "JOB"
    """Only the jobs placed on the lender's instances (the emulator's rule before)."""


_OUTCOMES = frozenset(Outcome.__members__)


class SubmitRejected(QuotaConfigError):
    """A submit (or update) the queue refuses: unknown/DISABLED share, bad priority or demand."""


# --- records ----------------------------------------------------------------------------------


_NO_TAGS: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class JobRequest:
    """What a caller asks to run. ``demand`` maps instance type to instance count.

    ``duration_s``: run time once RUNNING (``None``: runs until terminated or timed out).
    ``priority``: ``None`` takes ``SchedulerOptions.default_priority``.
    ``preemption_retries``: ``None`` = requeue forever; ``0`` = FAILED on the first preemption.
    ``retry_attempts``: 1-10 total attempts on a FAILED outcome or a timeout.
    ``exit_rules``: ``retryStrategy.evaluateOnExit``; a failed attempt whose reason they EXIT
    on is not retried (:func:`~quota_constructs.model.exit_action`).
    ``failure_reason``: ``statusReason`` of an attempt that fails (default ``REASON_FAILED``).
    ``checkpoint_interval_s``: a preempted job keeps the progress of its last checkpoint.
    ``capacity_errors``: its first that many attempts find no SageMaker capacity; each is
    retried without using an attempt (``REASON_CAPACITY``).
    ``max_runtime_s``: the training job's ``StoppingCondition.MaxRuntimeInSeconds``; an attempt
    still running that long after ``startedAt`` is stopped and fails (``REASON_MAX_RUNTIME``);
    ``None``: no limit.
    ``demand`` and ``tags`` are kept as read-only copies; an outcome given as its string
    becomes the :class:`Outcome`.
    """

    job_name: str
    share_name: str
    demand: Mapping[str, int]
    duration_s: float | None
    outcome: Outcome = Outcome.SUCCEEDED
    priority: int | None = None
    preemption_retries: int | None = None
    retry_attempts: int = 1
    exit_rules: tuple[ExitRule, ...] = ()
    failure_reason: str | None = None
    attempt_duration_s: float | None = None
    checkpoint_interval_s: float | None = None
    payload: Mapping[str, Any] | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    job_id: str | None = None
    capacity_errors: int = 0
    max_runtime_s: float | None = None

    def __post_init__(self) -> None:
        outcome = self.outcome
        if type(outcome) is not Outcome and isinstance(outcome, str) and outcome in _OUTCOMES:
            object.__setattr__(self, "outcome", Outcome(outcome))
        object.__setattr__(self, "demand", MappingProxyType(dict(self.demand)))
        object.__setattr__(
            self, "tags", MappingProxyType(dict(self.tags)) if self.tags else _NO_TAGS
        )


@dataclass(frozen=True)
class PendingReason:
    """Why a RUNNABLE job waits. ``position``: 0-based place in its share's order."""

    kind: PendingKind
    message: str
    position: int | None = None


@dataclass(frozen=True)
class PreemptionRecord:
    """One preemption of a job: rule, who caused it, and the victim share's borrowing."""

    time: float
    rule: PreemptionRule
    preemptor_job_id: str | None
    preemptor_share: str | None
    borrowed_before: Capacity
    borrowed_after: Capacity
    reason: str
    attempt: int
    attempt_started_at: float | None
    completed_at: float | None = None
    terminated: bool = False
    """True when this preemption used up ``preemption_retries`` and the job became FAILED."""


@dataclass(frozen=True)
class Attempt:
    """One placement of a job on capacity (one SageMaker training job)."""

    number: int
    job_id: str
    """The job's id (its attempt id is derived from it when asked for: :attr:`attempt_id`)."""
    scheduled_at: float
    started_at: float | None
    stopped_at: float
    status_reason: str
    preempted: bool
    starting_at: float | None = None
    """When it reached STARTING (its instances acquired), if it did."""

    @property
    def attempt_id(self) -> str:
        """The attempt's 32-hex id (:func:`attempt_id`), computed when read: most attempts
        of a simulation are never named."""
        return attempt_id(self.job_id, self.number)


def attempt_id(job_id: str, number: int) -> str:
    """Deterministic 32-hex id of a job's attempt ``number`` (1-based), as in SageMaker names."""
    return hashlib.md5(f"{job_id}/{number}".encode(), usedforsecurity=False).hexdigest()


class UsageLog:
    """Every hold and release of capacity and every preemption started, with its time, in order:
    for a consumer that reads them after a run instead of listening to every event (the
    simulator's usage metrics). Kept only when asked for (:meth:`Scheduler.keep_usage_log`).
    """

    __slots__ = ("changes", "finished", "preemptions")

    def __init__(self) -> None:
        self.changes: list[tuple[float, str, str, str, int]] = []
        """(time, job's share, lender share (the job's own included), instance type,
        instances: positive held, negative released), one per lender and type of an
        allocation, in order."""
        self.preemptions: list[tuple[float, str, str]] = []
        """(time, victim's share, rule) of each preemption started."""
        self.finished: list[Any] = []
        """Each job that ended (SUCCEEDED or FAILED), when it ended (a
        :class:`~quota_constructs.scheduling.job.Job`, not imported: that module imports this
        one); a streaming consumer measures and forgets them (:meth:`Scheduler.forget`) and
        clears this list."""

    def note(
        self, now: float, share: str, alloc: Mapping[str, Mapping[str, int]], sign: int
    ) -> None:
        """A job of ``share`` took (``sign`` 1) or gave back (-1) ``alloc`` at ``now``."""
        changes = self.changes
        for lender, amounts in alloc.items():
            for itype, n in amounts.items():
                changes.append((now, share, lender, itype, sign * n))


@dataclass(frozen=True)
class FrontEntry:
    """A RUNNABLE job in a snapshot, with the time it reached its current position."""

    job_id: str
    share_name: str
    priority: int
    earliest_time_at_position: float


@dataclass(frozen=True)
class SchedulerSnapshot:
    """The front of the queue and of each share, and capacity in use, at ``time``."""

    time: float
    front_of_queue: tuple[FrontEntry, ...]
    front_of_shares: Mapping[str, tuple[FrontEntry, ...]]
    share_usage: Mapping[str, Capacity]
    """Instances held per share, the share holding most first (ties: declared order)."""
    total_usage: Capacity


@dataclass(frozen=True)
class ShareLedger:
    """Capacity accounting of one share for one instant (per instance type)."""

    limit: Capacity
    used: Capacity
    """Held by this share's jobs: own capacity plus borrowed."""
    own: Capacity
    borrowed: Capacity
    lent: Capacity
    idle: Capacity
    """Own capacity neither used by the share nor lent out."""
