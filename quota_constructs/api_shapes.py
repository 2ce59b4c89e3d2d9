"""Owns the Batch API's wire shapes (camelCase) of quota resources, to and from the domain model.

Pure: no boto3, no aws_cdk. The constructs, the emulator's provisioning and state, and the
runtime build and read capacity limits, time-limit actions and quota shares only through this
module, so every side speaks the same shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from quota_constructs.model import (
    MISCONFIGURATION_REASONS,
    QuotaShareSpec,
    ShareState,
    SharingStrategy,
)

TIME_LIMIT_ACTION = "TERMINATE"
"""The only ``jobStateTimeLimitActions`` action SAGEMAKER_TRAINING queues support."""


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


def share_to_api(spec: QuotaShareSpec) -> dict[str, Any]:
    """The share's settings as Create/Describe/UpdateQuotaShare fields.

    ``borrowLimit`` is sent only for LEND_AND_BORROW (``-1`` when unlimited).
    """
    sharing: dict[str, Any] = {"strategy": spec.strategy.value}
    if spec.effective_borrow_limit is not None:
        sharing["borrowLimit"] = spec.effective_borrow_limit
    return {
        "quotaShareName": spec.name,
        "capacityLimits": capacity_limits_to_api(spec.capacity),
        "resourceSharingConfiguration": sharing,
        "preemptionConfiguration": {
            "inSharePreemption": "ENABLED" if spec.in_share_preemption else "DISABLED"
        },
        "state": spec.state.value,
    }


def share_from_api(detail: Mapping[str, Any]) -> QuotaShareSpec:
    """A ``DescribeQuotaShare`` / ``ListQuotaShares`` entry as the domain model's share."""
    sharing = detail.get("resourceSharingConfiguration") or {}
    strategy = SharingStrategy(sharing.get("strategy", SharingStrategy.RESERVE))
    preemption = detail.get("preemptionConfiguration") or {}
    return QuotaShareSpec(
        name=str(detail["quotaShareName"]),
        capacity=capacity_limits_from_api(detail.get("capacityLimits")),
        strategy=strategy,
        borrow_limit=sharing.get("borrowLimit") if strategy.borrows else None,
        in_share_preemption=preemption.get("inSharePreemption") == "ENABLED",
        state=ShareState(detail.get("state") or ShareState.ENABLED),
    )
