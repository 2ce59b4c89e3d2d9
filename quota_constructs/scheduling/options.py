"""Scheduler options: timing and every UNCONFIRMED choice (docs/emulator-semantics.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from quota_constructs.model import (
    JobQueueSpec,
    Problem,
    QuotaConfigError,
    check_int_range,
    check_scheduling_priority,
)
from quota_constructs.scheduling.records import ReclaimScope, ShareOrder
from quota_constructs.scheduling.victims import DefaultVictimPolicy, VictimPolicy

# --- options ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SchedulerOptions:
    """Timing and every UNCONFIRMED choice (see docs/emulator-semantics.md for the table)."""

    default_priority: int = 0
    submitted_to_runnable_s: float = 0.0
    scheduled_to_starting_s: float = 1.0
    starting_to_running_s: float = 1.0
    preemption_duration_s: float = 0.0
    """Between 'preemption started' and 'completed'; the victim holds capacity meanwhile."""
    share_order: ShareOrder = ShareOrder.DECLARED
    backfill_depth: int = 0
    """Jobs looked at behind a share's blocked head in a pass (0: strict priority order)."""
    disabled_share_dispatches: bool = True
    """DISABLED share: its already-submitted RUNNABLE jobs still dispatch (and it lends)."""
    preemption_consumes_attempt: bool = False
    runnable_time_limits: Mapping[str, float] = field(default_factory=dict)
    """RUNNABLE time-limit TERMINATE actions: reason code -> max seconds stuck RUNNABLE."""
    victim_policy: VictimPolicy = field(default_factory=DefaultVictimPolicy)
    reclaim_scope: ReclaimScope = ReclaimScope.SHARE
    dispatch_delay_s: float = 0.0
    """Seconds a job made RUNNABLE from SUBMITTED waits before it may be dispatched (the
    emulator: one tick, so a job is observably RUNNABLE before SCHEDULED even with capacity
    free). While it waits at the head of its share, the share dispatches nothing."""
    track_queue_positions: bool = False
    """Note every RUNNABLE job's place in the queue-wide order after each pass, so a snapshot
    tells when it reached that place (``earliestTimeAtPosition``; a sort per instant)."""
    """Cross-share reclaim: any job of a borrowing share (its borrowed instances counted on its
    least protected jobs), or ``JOB``: only jobs placed on the lender's instances."""

    def __post_init__(self) -> None:
        problems = []
        for name in (
            "submitted_to_runnable_s",
            "scheduled_to_starting_s",
            "starting_to_running_s",
            "preemption_duration_s",
            "dispatch_delay_s",
        ):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value < 0 or math.isnan(value):
                problems.append(Problem(name, value, "delay must be >= 0 seconds", "set it >= 0"))
        problems += check_scheduling_priority(self.default_priority, "default_priority")
        problems += check_int_range(self.backfill_depth, "backfill_depth", 0, None, what="depth")
        for reason, seconds in self.runnable_time_limits.items():
            if not isinstance(seconds, int | float) or seconds <= 0:
                problems.append(
                    Problem(
                        f"runnable_time_limits.{reason}",
                        seconds,
                        "time limit must be a positive number of seconds",
                        "use e.g. 600 (AWS allows 600-86400)",
                    )
                )
        if problems:
            raise QuotaConfigError(problems, context="SchedulerOptions")

    @staticmethod
    def time_limits_for(queue: JobQueueSpec) -> dict[str, float]:
        """Time limits of a queue's ``runnable_timeout_minutes`` (both MISCONFIGURATION codes)."""
        if queue.runnable_timeout_minutes is None:
            return {}
        seconds = queue.runnable_timeout_minutes * 60.0
        return {code: seconds for code in _MISCONFIG_CODES}


_MISCONFIG_CODES = (
    "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED",
)
