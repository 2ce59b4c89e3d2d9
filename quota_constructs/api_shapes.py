"""Owns the Batch API's wire shapes (camelCase) of quota resources, to and from the domain model.

Pure: no boto3, no aws_cdk. The constructs, the emulator's handlers, provisioning and state,
the runtime and every ``--json`` that prints a share's settings build and read capacity limits,
time-limit actions, quota shares (both directions, partial updates too) and the quota-share and
service-job ARNs only through this module, so every side speaks the same shape and values.
``tests/test_architecture.py`` keeps a share's field names and those ARN formats here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from quota_constructs.model import (
    MISCONFIGURATION_REASONS,
    SHARE_FIELDS,
    QuotaShareSpec,
    ShareState,
    SharingStrategy,
)

TIME_LIMIT_ACTION = "TERMINATE"
"""The only ``jobStateTimeLimitActions`` action SAGEMAKER_TRAINING queues support."""
SAGEMAKER_DEFAULT_MAX_RUNTIME_S = 86_400
"""SageMaker's ``StoppingCondition.MaxRuntimeInSeconds`` when a training job sets none (1 day)."""

# --- a quota share's fields (Create/Update/DescribeQuotaShare, ListQuotaShares) ---------------

SHARE_NAME = "quotaShareName"
CAPACITY_LIMITS = "capacityLimits"
"""Also a service environment's field, in the same shape."""
SHARING = "resourceSharingConfiguration"
STRATEGY = "strategy"
BORROW_LIMIT = "borrowLimit"
PREEMPTION = "preemptionConfiguration"
IN_SHARE_PREEMPTION = "inSharePreemption"
STATE = "state"
ENABLED, DISABLED = "ENABLED", "DISABLED"
"""``inSharePreemption``'s two values."""

# --- ARNs ------------------------------------------------------------------------------------

BATCH_SERVICE = "batch"
SERVICE_JOB_RESOURCE = "service-job"
"""``arn:<partition>:batch:<region>:<account>:service-job/<job id>``."""
QUOTA_SHARE_ARN_SEPARATOR = "/quota-share/"
"""A quota-share ARN is ``<job-queue ARN>/quota-share/<share name>``."""
SERVICE_JOB_ARN = re.compile(
    r"^arn:(?P<partition>[a-z-]+):batch:(?P<region>[a-z0-9-]+):(?P<account>[0-9]{12}):"
    r"service-job/(?P<job_id>[^/]+)$"
)
QUOTA_SHARE_ARN = re.compile(
    r"^arn:(?P<partition>[^:]+):batch:(?P<region>[^:]*):(?P<account>[^:]*):"
    r"job-queue/(?P<queue>[^/]+)/quota-share/(?P<share>[^/]+)$"
)
"""Any partition, region and account: whose ARN it is, is the caller's question."""


@dataclass(frozen=True)
class ServiceJobArn:
    """The parts of a service-job ARN."""

    partition: str
    region: str
    account: str
    job_id: str


@dataclass(frozen=True)
class QuotaShareArn:
    """The parts of a quota-share ARN."""

    partition: str
    region: str
    account: str
    queue: str
    share: str


def service_job_arn(partition: str, region: str, account: str, job_id: str) -> str:
    """``arn:<partition>:batch:<region>:<account>:service-job/<job id>``."""
    return f"arn:{partition}:{BATCH_SERVICE}:{region}:{account}:{SERVICE_JOB_RESOURCE}/{job_id}"


def parse_service_job_arn(arn: str) -> ServiceJobArn | None:
    """The parts of a service-job ARN; ``None`` when ``arn`` is not one."""
    found = SERVICE_JOB_ARN.match(arn)
    return None if found is None else ServiceJobArn(**found.groupdict())


def quota_share_arn(job_queue_arn: str, share_name: str) -> str:
    """``<job-queue ARN>/quota-share/<share name>`` (CDK tokens in either part are kept)."""
    return f"{job_queue_arn}{QUOTA_SHARE_ARN_SEPARATOR}{share_name}"


def parse_quota_share_arn(arn: str) -> QuotaShareArn | None:
    """The parts of a quota-share ARN; ``None`` when ``arn`` is not one."""
    found = QUOTA_SHARE_ARN.match(arn)
    return None if found is None else QuotaShareArn(**found.groupdict())


def job_queue_arn_of_share(quota_share_arn: str) -> str:
    """The job-queue ARN a quota-share ARN starts with (the whole ARN when it has no share)."""
    return quota_share_arn.split(QUOTA_SHARE_ARN_SEPARATOR, 1)[0]


# --- capacity and time limits ----------------------------------------------------------------


def capacity_limits_to_api(capacity: Mapping[str, int]) -> list[dict[str, Any]]:
    """``{instance type: instances}`` -> ``[{capacityUnit, maxCapacity}]`` (in the given order)."""
    return [{"capacityUnit": unit, "maxCapacity": count} for unit, count in capacity.items()]


def capacity_limits_from_api(limits: Iterable[Mapping[str, Any]] | None) -> dict[str, int]:
    """``[{capacityUnit, maxCapacity}]`` -> ``{instance type: instances}``."""
    return {str(c["capacityUnit"]): int(c["maxCapacity"]) for c in limits or ()}


def capacity_usage_to_api(amounts: Mapping[str, int]) -> list[dict[str, Any]]:
    """``{instance type: instances}`` -> ``[{capacityUnit, quantity}]``, sorted by type."""
    return [{"capacityUnit": unit, "quantity": n} for unit, n in sorted(amounts.items())]


def capacity_usage_from_api(entries: Sequence[Mapping[str, Any]] | None) -> dict[str, int]:
    """``[{capacityUnit, quantity}]`` -> ``{instance type: instances}`` (repeats are added up)."""
    out: dict[str, int] = {}
    for entry in entries or ():
        unit = str(entry.get("capacityUnit", ""))
        out[unit] = out.get(unit, 0) + round(float(entry.get("quantity", 0)))
    return out


def time_limit_actions_to_api(runnable_timeout_seconds: int | None) -> list[dict[str, Any]]:
    """``jobStateTimeLimitActions``: TERMINATE jobs RUNNABLE on a MISCONFIGURATION reason.

    ``None`` (no limit) gives an empty list.
    """
    if runnable_timeout_seconds is None:
        return []
    return [
        {
            "reason": reason,
            "state": "RUNNABLE",
            "maxTimeSeconds": int(runnable_timeout_seconds),
            "action": TIME_LIMIT_ACTION,
        }
        for reason in MISCONFIGURATION_REASONS
    ]


def time_limits_from_api(actions: Iterable[Mapping[str, Any]] | None) -> dict[str, float]:
    """``jobStateTimeLimitActions`` -> ``{reason: max seconds RUNNABLE}``."""
    return {str(a["reason"]): float(a["maxTimeSeconds"]) for a in actions or ()}


# --- quota shares ----------------------------------------------------------------------------


SHARE_WIRE_MEMBERS: Mapping[str, str] = {
    "name": SHARE_NAME,
    "capacity": CAPACITY_LIMITS,
    "strategy": STRATEGY,
    "borrow_limit": BORROW_LIMIT,
    "in_share_preemption": IN_SHARE_PREEMPTION,
    "state": STATE,
}
"""``QuotaShareSpec`` field -> the API member that carries it: one per field declared
``ShareField.wire`` (``tests/unit/test_share_schema.py`` keeps the two equal).

The fields below are shaped by hand in :func:`share_to_api` and :func:`share_from_request`;
any other is a top-level member holding the field's value as it is (a plain JSON value, left
out while ``None``), so a new one needs only its line here. The stack's props, the drift
fields and the sharing settings are derived from these (docs/architecture.md, "Where to change
what")."""
_SHAPED_BY_HAND = frozenset(
    ("name", "capacity", "strategy", "borrow_limit", "in_share_preemption", "state")
)
_PLAIN_MEMBERS = {
    name: member for name, member in SHARE_WIRE_MEMBERS.items() if name not in _SHAPED_BY_HAND
}
"""The wire fields that are top-level members holding their value as it is."""


def share_to_api(spec: QuotaShareSpec) -> dict[str, Any]:
    """The share's settings as Create/Describe/UpdateQuotaShare fields.

    ``borrowLimit`` is sent only for LEND_AND_BORROW (``-1`` when unlimited).
    """
    sharing: dict[str, Any] = {STRATEGY: spec.strategy.value}
    if spec.effective_borrow_limit is not None:
        sharing[BORROW_LIMIT] = spec.effective_borrow_limit
    plain = {member: getattr(spec, name) for name, member in _PLAIN_MEMBERS.items()}
    return {
        SHARE_NAME: spec.name,
        CAPACITY_LIMITS: capacity_limits_to_api(spec.capacity),
        SHARING: sharing,
        PREEMPTION: {IN_SHARE_PREEMPTION: _switch(spec.in_share_preemption)},
        STATE: spec.state.value,
        **{member: value for member, value in plain.items() if value is not None},
    }


def share_to_cfn_props(spec: QuotaShareSpec) -> dict[str, Any]:
    """``CfnQuotaShare``'s keyword arguments but ``job_queue``: each top-level member of
    :func:`share_to_api` by its snake_case name (nested props as plain dicts); CloudFormation
    names the property as the member in PascalCase (:func:`cfn_property_name`)."""
    return {_snake(member): value for member, value in share_to_api(spec).items()}


def cfn_property_name(keyword: str) -> str:
    """A ``CfnQuotaShare`` keyword's CloudFormation property: ``capacity_limits`` ->
    ``CapacityLimits``."""
    return "".join(part[:1].upper() + part[1:] for part in keyword.split("_"))


def _snake(member: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", member).lower()


def share_schedule_input(spec: QuotaShareSpec, quota_share_arn: str) -> dict[str, Any]:
    """EventBridge Scheduler's universal-target ``Input`` for ``batch:updateQuotaShare``: the
    top-level members of :func:`share_to_api` that carry a setting a calendar may change
    (``ShareField.calendar``: the sharing and preemption settings, never capacity or state),
    member names in PascalCase as universal targets take them (UNCONFIRMED for Batch:
    docs/constructs.md)."""
    changing = set(_flat_members(spec, "calendar"))
    carried = {
        member: value
        for member, value in share_to_api(spec).items()
        if member in changing or (isinstance(value, dict) and changing & set(value))
    }
    return {"QuotaShareArn": quota_share_arn, **_pascal_keys(carried)}


def _pascal_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_pascal(k): _pascal_keys(v) for k, v in value.items()}
    return value


def _pascal(name: str) -> str:
    return name[:1].upper() + name[1:]


def share_from_request(
    fields: Mapping[str, Any], *, base: QuotaShareSpec | None = None
) -> QuotaShareSpec:
    """A :class:`QuotaShareSpec` from Create/UpdateQuotaShare fields over ``base``.

    A field left out keeps ``base``'s value (without ``base``: no capacity, RESERVE, no borrow
    limit, no in-share preemption, ENABLED); with ``base`` its name is kept. ``borrowLimit`` is
    kept whatever the strategy, so the model's rule can refuse it. ``capacityLimits`` entries
    must have been checked for both keys.
    """
    spec = base or QuotaShareSpec(str(fields[SHARE_NAME]), {}, SharingStrategy.RESERVE)
    changes: dict[str, Any] = {}
    if CAPACITY_LIMITS in fields:
        changes["capacity"] = capacity_limits_from_api(fields[CAPACITY_LIMITS])
    sharing = fields.get(SHARING)
    if sharing is not None:
        changes["strategy"] = SharingStrategy(sharing.get(STRATEGY, SharingStrategy.RESERVE))
        changes["borrow_limit"] = sharing.get(BORROW_LIMIT)
    preemption = fields.get(PREEMPTION)
    if preemption is not None:
        changes["in_share_preemption"] = preemption.get(IN_SHARE_PREEMPTION) == ENABLED
    if fields.get(STATE):
        changes["state"] = ShareState(fields[STATE])
    changes.update({name: fields[m] for name, m in _PLAIN_MEMBERS.items() if m in fields})
    return replace(spec, **changes)


def share_from_api(detail: Mapping[str, Any]) -> QuotaShareSpec:
    """A ``DescribeQuotaShare`` / ``ListQuotaShares`` entry as the domain model's share.

    A ``borrowLimit`` with a strategy that does not borrow is dropped (see
    :func:`ignored_borrow_limit`).
    """
    spec = share_from_request(detail)
    return spec if spec.strategy.borrows else replace(spec, borrow_limit=None)


def ignored_borrow_limit(detail: Mapping[str, Any]) -> tuple[int, str] | None:
    """``(borrowLimit, strategy)`` of an entry whose strategy does not borrow, else ``None``.

    AWS applies a borrow limit only with LEND_AND_BORROW; :func:`share_from_api` drops it.
    """
    sharing = detail.get(SHARING) or {}
    strategy, limit = sharing.get(STRATEGY), sharing.get(BORROW_LIMIT)
    if strategy == SharingStrategy.LEND_AND_BORROW or limit is None:
        return None
    return int(limit), str(strategy)


def share_sharing_settings(spec: QuotaShareSpec) -> dict[str, Any]:
    """The settings a calendar may change (``ShareField.calendar``: ``strategy``,
    ``borrowLimit`` and ``inSharePreemption``), flat, in the API's values.

    ``borrowLimit`` as AWS stores it: ``-1`` unlimited, ``None`` when the strategy does not
    borrow; ``inSharePreemption`` ``"ENABLED"`` / ``"DISABLED"``. For ``--json`` output.
    """
    return _flat_members(spec, "calendar")


def share_drift_fields(spec: QuotaShareSpec) -> dict[str, Any]:
    """The share's settings AWS keeps, by AWS field name: what ``quota org diff`` compares
    (``ShareField.drift``), flat, in the API's values but ``capacityLimits``, which is
    ``{instance type: instances}``; a member the share leaves out is ``None``."""
    return {
        member: dict(spec.capacity) if member == CAPACITY_LIMITS else value
        for member, value in _flat_members(spec, "drift").items()
    }


def _flat_members(spec: QuotaShareSpec, flag: str) -> dict[str, Any]:
    """The API member of each wire field declared ``flag``, whether top-level or nested one
    level down (``resourceSharingConfiguration.strategy``), by member name."""
    api = share_to_api(spec)
    flat = {
        **{k: v for nested in api.values() if isinstance(nested, dict) for k, v in nested.items()},
        **api,
    }
    return {
        member: flat.get(member)
        for name, member in SHARE_WIRE_MEMBERS.items()
        if getattr(SHARE_FIELDS[name], flag)
    }


def _switch(on: bool) -> str:
    return ENABLED if on else DISABLED
