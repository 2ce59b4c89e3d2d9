"""The wire ``SubmitServiceJob`` request read into the scheduler's :class:`JobRequest`.

Also the emulator-only job controls (tags ``quota.local/...``) and ``retryStrategy``'s
``evaluateOnExit`` rules (matched by :func:`quota_constructs.model.exit_action`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from quota_constructs.api_shapes import SAGEMAKER_DEFAULT_MAX_RUNTIME_S
from quota_constructs.local.state.errors import InvalidRequest
from quota_constructs.model import (
    ExitRule,
    Problem,
    QuotaConfigError,
    RetryAction,
    capacity_demand,
    check_exit_rules,
)
from quota_constructs.safe_load import InputFileError, parse_json
from quota_constructs.scheduling import JobRequest, Outcome, SubmitRejected

DURATION_TAG = "quota.local/duration-seconds"
"""Tag giving an emulated job's run time in seconds."""
OUTCOME_TAG = "quota.local/outcome"
"""Tag ``FAILED`` makes every attempt of an emulated job fail."""
FAILURE_REASON_TAG = "quota.local/failure-reason"
"""Tag giving SageMaker's ``FailureReason`` of a failing attempt (implies outcome FAILED)."""
CAPACITY_ERRORS_TAG = "quota.local/capacity-errors"
"""Tag giving how many first attempts find no SageMaker capacity (retried, no attempt used)."""
MAX_CAPACITY_ERRORS = 10_000
SAGEMAKER_STATUS_PREFIX = "Received status from SageMaker:"
"""How Batch's ``statusReason`` quotes SageMaker's ``FailureReason`` (as the SageMaker SDK's
default ``evaluateOnExit`` rule spells it)."""


UNPLACEABLE_DEMAND = {"ml.m5.large": 2**31}
"""Stand-in demand of a job whose payload names no schedulable instance type or count: no share
or environment can hold it, so it is never placed before it fails."""
PAYLOAD_FAILURE_PREFIX = f"{SAGEMAKER_STATUS_PREFIX}ValidationException: "
"""``statusReason`` start of a job that fails because SageMaker refuses its payload
(UNCONFIRMED: AWS's text)."""


class PayloadValidation(StrEnum):
    """What ``SubmitServiceJob`` does with a payload naming no instance type and count the core
    can schedule (no ``ResourceConfig``, an unknown type, a count below 1).

    ``passthrough`` (default, AWS's behaviour: Batch passes the payload through unvalidated,
    docs/aws-semantics.md §2.2): the submit succeeds and the job FAILS as SageMaker refuses it.
    ``strict``: the submit is refused (``ClientException`` naming the field, the value and the
    fix), as the emulator did before; a typo then fails at the call, not later in the job.
    """

    PASSTHROUGH = "passthrough"
    STRICT = "strict"


class PlanOwnership(StrEnum):
    """What ``SubmitServiceJob`` does with a payload whose ``ResourceConfig.TrainingPlanArn`` is
    not a training plan of the organisation whose queue it is (the queue of an organisation
    the emulator provisioned; other queues are not checked).

    ``refuse`` (default): the submit is refused (``ClientException`` naming the plan and the
    organisation's plans), as the runtime refuses it, so a team cannot spend another's prepaid
    plan in tests. ``passthrough``: accepted, as AWS does (Batch passes the payload through and
    IAM cannot see it; docs/security.md), to rehearse what ``quota jobs audit`` finds.
    """

    REFUSE = "refuse"
    PASSTHROUGH = "passthrough"


def check_plan_owner(payload: str, owner: tuple[str, tuple[str, ...]] | None) -> None:
    """:class:`InvalidRequest` when ``payload`` (JSON) names a ``TrainingPlanArn`` that is not
    one of ``owner``'s plans (``(organisation, plan ARNs)``; ``None``: no organisation known)."""
    if owner is None:
        return
    try:
        body = parse_json(payload, source="serviceRequestPayload")
    except InputFileError:
        return  # not JSON: the payload's own checks answer it
    resources = body.get("ResourceConfig") if isinstance(body, dict) else None
    plan = resources.get("TrainingPlanArn") if isinstance(resources, dict) else None
    organisation, plans = owner
    if plan is None or plan in plans:
        return
    raise InvalidRequest(
        f"serviceRequestPayload.ResourceConfig.TrainingPlanArn: {plan!r} is not a training plan "
        f"of organisation {organisation} (its plans: {', '.join(plans) or 'none'}); fix: drop "
        "TrainingPlanArn, or name one of the organisation's plans"
    )


def read_submit(
    params: Mapping[str, Any], validation: PayloadValidation = PayloadValidation.PASSTHROUGH
) -> tuple[JobRequest, str | None]:
    """The request of a ``SubmitServiceJob`` and, when its payload names no instance type and
    count the core can schedule, the ``statusReason`` the job fails with (AWS passes the payload
    through unvalidated, docs/aws-semantics.md §2.2; SageMaker refuses it, UNCONFIRMED).

    Everything else that :func:`request_from_submit` refuses is refused the same way, and so is
    an unschedulable payload under :attr:`PayloadValidation.STRICT`.
    """
    if validation is PayloadValidation.STRICT:
        return request_from_submit(params), None
    try:
        return request_from_submit(params), None
    except _PayloadUnschedulable as exc:
        return exc.request, PAYLOAD_FAILURE_PREFIX + "; ".join(str(p) for p in exc.problems)


class _PayloadUnschedulable(SubmitRejected):
    """The payload's demand is missing or malformed (carries the request built without it)."""

    def __init__(self, problems: Sequence[Problem], request: JobRequest) -> None:
        super().__init__(list(problems))
        self.request = request


def request_from_submit(params: Mapping[str, Any]) -> JobRequest:
    """Build a :class:`JobRequest` from a ``SubmitServiceJob`` request (botocore field names).

    Demand from ``serviceRequestPayload`` via :func:`model.capacity_demand`; the work's duration
    from tag ``quota.local/duration-seconds`` (without it the training runs until stopped); the
    training job's max runtime from the payload's ``StoppingCondition.MaxRuntimeInSeconds``, else
    SageMaker's default of one day: an attempt still running then is stopped by SageMaker
    (``MaxRuntimeExceeded``) and FAILED, as Batch reports a ``Stopped`` training job; tag
    ``quota.local/outcome: FAILED`` makes every attempt fail, with
    ``statusReason`` ``Received status from SageMaker:<quota.local/failure-reason>`` when that
    tag is given (it implies FAILED). ``retryStrategy.evaluateOnExit`` becomes the request's
    exit rules. Raises :class:`SubmitRejected` naming the field for a bad payload or tag.
    """
    raw = params.get("serviceRequestPayload", "{}")
    payload = _payload(raw)
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
        demand, unschedulable = capacity_demand(payload), None
    except QuotaConfigError as exc:
        demand, unschedulable = dict(UNPLACEABLE_DEMAND), exc.problems
    tags = dict(params.get("tags") or {})
    duration = _duration(tags)
    outcome, failure_reason = _outcome(tags)
    preemption = params.get("preemptionConfiguration") or {}
    retry = params.get("retryStrategy") or {}
    timeout = params.get("timeoutConfig") or {}
    exit_rules = _exit_rules(retry.get("evaluateOnExit") or [])
    request = JobRequest(
        job_name=params.get("jobName", ""),
        share_name=params.get("quotaShareName", ""),
        demand=demand,
        duration_s=duration,
        outcome=outcome,
        priority=params.get("schedulingPriority"),
        preemption_retries=preemption.get("preemptionRetriesBeforeTermination"),
        retry_attempts=retry.get("attempts", 1),
        exit_rules=exit_rules,
        failure_reason=failure_reason,
        attempt_duration_s=timeout.get("attemptDurationSeconds"),
        payload=payload,
        tags=tags,
        capacity_errors=_capacity_errors(tags),
        max_runtime_s=_max_runtime(payload),
    )
    if unschedulable is not None:
        raise _PayloadUnschedulable(unschedulable, request)
    return request


def _payload(raw: Any) -> Any:
    """The JSON value in ``serviceRequestPayload``, read with the project's JSON rules (depth,
    finite numbers, no duplicate keys); :class:`SubmitRejected` naming the field otherwise."""
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        if not isinstance(raw, str):
            raise TypeError(f"a JSON string, not {type(raw).__name__}")
        return parse_json(raw, source="serviceRequestPayload")
    except (InputFileError, TypeError) as exc:
        detail = exc.problems[0].message if isinstance(exc, InputFileError) else str(exc)
        raise SubmitRejected(
            [
                Problem(
                    "serviceRequestPayload",
                    str(raw)[:80],
                    f"not a JSON object ({detail})",
                    "send the CreateTrainingJob request as a JSON string",
                )
            ]
        ) from None


def _exit_rules(entries: Sequence[Mapping[str, Any]]) -> tuple[ExitRule, ...]:
    """``evaluateOnExit`` as rules: each needs an action, in any case (``Retry`` is ``RETRY``;
    UNCONFIRMED: the model leaves it optional; without one a rule means nothing); no
    ``onStatusReason`` matches every reason."""
    path = "retryStrategy.evaluateOnExit"
    missing = [
        Problem(f"{path}[{i}].action", None, "an exit rule needs an action", "set RETRY or EXIT")
        for i, entry in enumerate(entries)
        if entry.get("action") is None
    ]
    if missing:
        raise SubmitRejected(missing)
    rules = tuple(
        ExitRule(RetryAction(e["action"].upper()), e.get("onStatusReason", "*")) for e in entries
    )
    problems = check_exit_rules(rules, path)
    if problems:
        raise SubmitRejected(problems)
    return rules


def _outcome(tags: Mapping[str, str]) -> tuple[Outcome, str | None]:
    """Outcome of every attempt and the ``statusReason`` of a failing one, from the tags."""
    reason = tags.get(FAILURE_REASON_TAG)
    default = "FAILED" if reason is not None else "SUCCEEDED"
    text = str(tags.get(OUTCOME_TAG, default)).upper()
    if text not in Outcome.__members__:
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
    if reason is not None and text != "FAILED":
        raise SubmitRejected(
            [
                Problem(
                    f"tags.{FAILURE_REASON_TAG}",
                    reason,
                    f"a failure reason needs the outcome FAILED (got {OUTCOME_TAG}: {text})",
                    f"drop one of the two tags, or set {OUTCOME_TAG}: FAILED",
                )
            ]
        )
    full = None if reason is None else f"{SAGEMAKER_STATUS_PREFIX}{reason}"
    return Outcome(text), full


def _capacity_errors(tags: Mapping[str, str]) -> int:
    text = tags.get(CAPACITY_ERRORS_TAG, "0")
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_CAPACITY_ERRORS:
        raise SubmitRejected(
            [
                Problem(
                    f"tags.{CAPACITY_ERRORS_TAG}",
                    text,
                    f"must be a whole number of attempts from 0 to {MAX_CAPACITY_ERRORS}",
                    "set it to e.g. '2'",
                )
            ]
        )
    return int(text)


def _duration(tags: Mapping[str, str]) -> float | None:
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
    return None  # trains until its training job's max runtime stops it


def _max_runtime(payload: Mapping[str, Any]) -> float:
    """The training job's ``StoppingCondition.MaxRuntimeInSeconds``, else SageMaker's default."""
    stopping = payload.get("StoppingCondition") or {}
    runtime = stopping.get("MaxRuntimeInSeconds") if isinstance(stopping, dict) else None
    if isinstance(runtime, int | float) and not isinstance(runtime, bool) and runtime >= 0:
        return float(runtime)
    return float(SAGEMAKER_DEFAULT_MAX_RUNTIME_S)  # no StoppingCondition: SageMaker's default
