"""Quota shares in the Batch API's own shape (camelCase dicts), to and from the domain model.

Pure: no boto3. The emulator answers and provisions with :func:`share_to_api`; the runtime
reads live shares with :func:`share_from_api`; so both sides speak the same shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quota_constructs.model import QuotaShareSpec, ShareState, SharingStrategy


def share_to_api(spec: QuotaShareSpec) -> dict[str, Any]:
    """The share's settings as Create/Describe/UpdateQuotaShare fields.

    ``borrowLimit`` is sent only for LEND_AND_BORROW (``-1`` when unlimited).
    """
    sharing: dict[str, Any] = {"strategy": spec.strategy.value}
    if spec.effective_borrow_limit is not None:
        sharing["borrowLimit"] = spec.effective_borrow_limit
    return {
        "quotaShareName": spec.name,
        "capacityLimits": [
            {"capacityUnit": unit, "maxCapacity": count} for unit, count in spec.capacity.items()
        ],
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
        capacity={
            str(c["capacityUnit"]): int(c["maxCapacity"]) for c in detail.get("capacityLimits", ())
        },
        strategy=strategy,
        borrow_limit=sharing.get("borrowLimit") if strategy.borrows else None,
        in_share_preemption=preemption.get("inSharePreemption") == "ENABLED",
        state=ShareState(detail.get("state") or ShareState.ENABLED),
    )
