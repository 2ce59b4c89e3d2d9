"""The wire ``SubmitServiceJob`` request read into the scheduler's :class:`JobRequest`."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from quota_constructs.model import Problem, QuotaConfigError, capacity_demand
from quota_constructs.scheduling import JobRequest, Outcome, SubmitRejected

DURATION_TAG = "quota.local/duration-seconds"
"""Tag giving an emulated job's run time in seconds."""
OUTCOME_TAG = "quota.local/outcome"
"""Tag ``FAILED`` makes every attempt of an emulated job fail."""
DEFAULT_MAX_RUNTIME_S = 86_400.0
"""Run time of a job whose payload has no StoppingCondition (SageMaker's default, 1 day)."""


def request_from_submit(params: Mapping[str, Any]) -> JobRequest:
    """Build a :class:`JobRequest` from a ``SubmitServiceJob`` request (botocore field names).

    Demand from ``serviceRequestPayload`` via :func:`model.capacity_demand`; duration from tag
    ``quota.local/duration-seconds``, else the payload's ``StoppingCondition.MaxRuntimeInSeconds``,
    else one day; tag ``quota.local/outcome: FAILED`` makes every attempt fail.
    Raises :class:`SubmitRejected` naming the field for a bad payload or tag.
    """
    raw = params.get("serviceRequestPayload", "{}")
    try:
        payload = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (ValueError, TypeError) as exc:
        raise SubmitRejected(
            [
                Problem(
                    "serviceRequestPayload",
                    str(raw)[:80],
                    f"not a JSON object ({exc})",
                    "send the CreateTrainingJob request as a JSON string",
                )
            ]
        ) from None
    if not isinstance(payload, dict):
        raise SubmitRejected(
            [
                Problem(
                    "serviceRequestPayload",
                    str(raw)[:80],
                    "not a JSON object",
                    "send the CreateTrainingJob request as a JSON object",
                )
            ]
        )
    try:
        demand = capacity_demand(payload)
    except QuotaConfigError as exc:
        raise SubmitRejected(exc.problems) from None
    tags = dict(params.get("tags") or {})
    duration = _duration(payload, tags)
    outcome_text = str(tags.get(OUTCOME_TAG, "SUCCEEDED")).upper()
    if outcome_text not in Outcome.__members__:
        raise SubmitRejected(
            [
                Problem(
                    f"tags.{OUTCOME_TAG}",
                    tags.get(OUTCOME_TAG),
                    "unknown outcome",
                    "use SUCCEEDED or FAILED",
                )
            ]
        )
    preemption = params.get("preemptionConfiguration") or {}
    retry = params.get("retryStrategy") or {}
    timeout = params.get("timeoutConfig") or {}
    return JobRequest(
        job_name=params.get("jobName", ""),
        share_name=params.get("quotaShareName", ""),
        demand=demand,
        duration_s=duration,
        outcome=Outcome(outcome_text),
        priority=params.get("schedulingPriority"),
        preemption_retries=preemption.get("preemptionRetriesBeforeTermination"),
        retry_attempts=retry.get("attempts") or 1,
        attempt_duration_s=timeout.get("attemptDurationSeconds"),
        payload=payload,
        tags=tags,
    )


def _duration(payload: Mapping[str, Any], tags: Mapping[str, str]) -> float:
    if DURATION_TAG in tags:
        try:
            value = float(tags[DURATION_TAG])
        except ValueError:
            value = -1.0
        if not value >= 0 or math.isinf(value):
            raise SubmitRejected(
                [
                    Problem(
                        f"tags.{DURATION_TAG}",
                        tags[DURATION_TAG],
                        "must be a number of seconds >= 0",
                        "set it to e.g. '120'",
                    )
                ]
            )
        return value
    stopping = payload.get("StoppingCondition") or {}
    runtime = stopping.get("MaxRuntimeInSeconds") if isinstance(stopping, dict) else None
    if isinstance(runtime, int | float) and not isinstance(runtime, bool) and runtime >= 0:
        return float(runtime)
    return DEFAULT_MAX_RUNTIME_S
