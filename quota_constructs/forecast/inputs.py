"""The forecast's inputs as plain records: a queue's state now, its jobs and its run history.

Pure data (no boto3, no scheduler): the runtime reads them from a live queue
(:mod:`quota_constructs.runtime.forecasting`), the backtest from a recorded history. Times are
epoch seconds; demands map instance type to instances.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from quota_constructs.model import (
    Problem,
    QuotaConfigError,
    QuotaShareSpec,
    ShareCalendar,
    TrainingPlanSpec,
)

RUNTIME_HINT_TAG = "quota-expected-runtime-seconds"
"""A job's own run-time hint: a tag whose value is the seconds the job is expected to run
(e.g. ``5400``); the forecast samples around it instead of the team's history."""


@dataclass(frozen=True)
class LiveJob:
    """One job of the queue: waiting (``started_s`` ``None``) or holding capacity.

    ``created_s``: its submit time, the order in which the forecast submits the waiting jobs
    (ties keep the order the jobs are given in);
    ``max_runtime_s``: ``StoppingCondition.MaxRuntimeInSeconds`` (an upper bound of its run);
    ``hint_s``: its :data:`RUNTIME_HINT_TAG`; ``retry_attempts``: its ``retryStrategy``
    attempts (``None``: one attempt; more are not modelled, the forecast says so);
    ``held``: when its finished attempts ran (start, stop), a preempted one's included.
    """

    job_id: str
    job_name: str
    share: str
    demand: Mapping[str, int]
    priority: int = 0
    created_s: float = 0.0
    started_s: float | None = None
    max_runtime_s: float | None = None
    hint_s: float | None = None
    preemption_retries: int | None = None
    status_reason: str = ""
    retry_attempts: int | None = None
    held: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True)
class PastRun:
    """One finished run of the history: how long it held its instances (``priority``: ``None``
    when unknown, as the list the live history is read from does not tell it; ``stopped_s``:
    when the run ended, ``None`` when unknown)."""

    share: str
    job_name: str
    instance_type: str
    instance_count: int
    run_s: float
    priority: int | None = None
    created_s: float | None = None
    stopped_s: float | None = None


@dataclass(frozen=True)
class QueueState:
    """The queue at ``now_s``: shares, capacity, jobs running and waiting, history, timetable.

    ``service_environment``: its capacity when known (``None``: the sum of the shares' limits);
    ``calendars`` and ``plans``: what the organisation file declares (the live API does not
    tell them); ``priority_caps``: each team's ``max_priority`` (share -> cap);
    ``time_limits``: the queue's RUNNABLE time-limit actions (``jobStateTimeLimitActions``:
    status reason code -> seconds RUNNABLE before the job is cancelled).
    """

    now_s: float
    shares: tuple[QuotaShareSpec, ...]
    running: tuple[LiveJob, ...] = ()
    waiting: tuple[LiveJob, ...] = ()
    history: tuple[PastRun, ...] = ()
    service_environment: Mapping[str, int] | None = None
    calendars: Mapping[str, ShareCalendar] = field(default_factory=dict)
    plans: tuple[TrainingPlanSpec, ...] = ()
    priority_caps: Mapping[str, int] = field(default_factory=dict)
    time_limits: Mapping[str, float] = field(default_factory=dict)


def runtime_hint(tags: Mapping[str, str], *, strict: bool = False) -> float | None:
    """The :data:`RUNTIME_HINT_TAG` of ``tags`` in seconds (``None`` without one).

    A value that is not a positive number of seconds is ignored, or with ``strict`` refused
    with :class:`QuotaConfigError` naming the tag and the fix."""
    text = tags.get(RUNTIME_HINT_TAG)
    if text is None:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if math.isfinite(seconds) and seconds > 0:
        return seconds
    if strict:
        raise QuotaConfigError(
            [
                Problem(
                    f"tags.{RUNTIME_HINT_TAG}",
                    text,
                    "not a positive number of seconds",
                    f"write the expected run time in seconds, e.g. {RUNTIME_HINT_TAG}=5400",
                )
            ]
        )
    return None
