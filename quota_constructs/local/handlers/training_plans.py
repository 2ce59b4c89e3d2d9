"""Owns SageMaker's training-plan operations: SearchTrainingPlanOfferings, CreateTrainingPlan,
DescribeTrainingPlan and ListTrainingPlans (requests validated by botocore's SageMaker model in
the wire layer, like every operation)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from quota_constructs.local.handlers import Handler
from quota_constructs.local.handlers.pagination import CAPITALISED_PAGING, paginate
from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.clock import EmulatorClock
from quota_constructs.local.state.errors import InvalidRequest
from quota_constructs.local.state.training_plans import Offering, Plan, TrainingPlans

TARGET = "training-job"


def _epoch(value: Any) -> float:
    """A timestamp member (botocore sends epoch seconds or a datetime) as epoch seconds."""
    return value.timestamp() if hasattr(value, "timestamp") else float(value)


InUse = Callable[[str, str], int]
"""(plan ARN, instance type) -> instances of that type its jobs hold now."""


class TrainingPlanHandlers:
    """The training-plan operations over one :class:`TrainingPlans` store; ``in_use`` counts
    the instances a plan's jobs hold (its ``InUseInstanceCount``; the rest is available)."""

    def __init__(
        self, plans: TrainingPlans, account: Account, clock: EmulatorClock, in_use: InUse
    ) -> None:
        self.plans = plans
        self.account = account
        self.clock = clock
        self.in_use = in_use

    def operations(self) -> dict[str, Handler]:
        """Operation name -> handler, for every operation of this module."""
        return {
            "SearchTrainingPlanOfferings": self.search,
            "CreateTrainingPlan": self.create,
            "DescribeTrainingPlan": self.describe,
            "ListTrainingPlans": self.list,
        }

    def _now(self) -> float:
        return self.clock.epoch(self.clock.now())

    def search(self, params: Mapping[str, Any]) -> dict[str, Any]:
        missing = [m for m in ("InstanceType", "InstanceCount", "DurationHours") if m not in params]
        if missing:
            raise InvalidRequest(
                f"{missing[0]}: required by the emulator's offerings; fix: pass {missing[0]}"
            )
        start = _epoch(params["StartTimeAfter"]) if "StartTimeAfter" in params else self._now()
        offering = self.plans.offer(
            params["InstanceType"], params["InstanceCount"], start, params["DurationHours"]
        )
        return {"TrainingPlanOfferings": [_offering(offering)]}

    def create(self, params: Mapping[str, Any]) -> dict[str, Any]:
        plan = self.plans.create(
            params["TrainingPlanName"], params["TrainingPlanOfferingId"], now_s=self._now()
        )
        return {"TrainingPlanArn": plan.arn}

    def describe(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return self._summary(self.plans.get(params["TrainingPlanName"]))

    def list(self, params: Mapping[str, Any]) -> dict[str, Any]:
        now = self._now()
        wanted = {
            v
            for f in params.get("Filters") or []
            if f.get("Name") == "Status"
            for v in [f["Value"]]
        }
        plans = [
            p
            for p in sorted(self.plans.plans.values(), key=lambda p: p.offering.start_s)
            if not wanted or p.status(now) in wanted
        ]
        page, token = paginate(
            plans,
            params.get("MaxResults"),
            params.get("NextToken"),
            key=lambda p: (p.offering.start_s, p.name),
            scope="ListTrainingPlans",
            fields=CAPITALISED_PAGING,
        )
        return {
            "TrainingPlanSummaries": [self._summary(p) for p in page],
            **({"NextToken": token} if token else {}),
        }

    def _summary(self, plan: Plan) -> dict[str, Any]:
        offering = plan.offering
        # the emulator pools a type's plans: overlapping plans' jobs may hold more than one's
        in_use = min(self.in_use(plan.arn, offering.instance_type), offering.instance_count)
        return {
            "TrainingPlanArn": plan.arn,
            "TrainingPlanName": plan.name,
            "Status": plan.status(self._now()),
            "DurationHours": offering.duration_hours,
            "DurationMinutes": 0,
            "StartTime": offering.start_s,
            "EndTime": offering.end_s,
            "UpfrontFee": f"{offering.upfront_fee:.2f}",
            "CurrencyCode": "USD",
            "TotalInstanceCount": offering.instance_count,
            "AvailableInstanceCount": offering.instance_count - in_use,
            "InUseInstanceCount": in_use,
            "TargetResources": [TARGET],
            "ReservedCapacitySummaries": [
                {
                    "ReservedCapacityArn": self.account.reserved_capacity(f"{plan.name}-1"),
                    "InstanceType": offering.instance_type,
                    "TotalInstanceCount": offering.instance_count,
                    "Status": plan.status(self._now()),
                    "DurationHours": offering.duration_hours,
                    "StartTime": offering.start_s,
                    "EndTime": offering.end_s,
                }
            ],
        }


def _offering(offering: Offering) -> dict[str, Any]:
    return {
        "TrainingPlanOfferingId": offering.offering_id,
        "TargetResources": [TARGET],
        "RequestedStartTimeAfter": offering.start_s,
        "DurationHours": offering.duration_hours,
        "DurationMinutes": 0,
        "UpfrontFee": f"{offering.upfront_fee:.2f}",
        "CurrencyCode": "USD",
        "ReservedCapacityOfferings": [
            {
                "InstanceType": offering.instance_type,
                "InstanceCount": offering.instance_count,
                "DurationHours": offering.duration_hours,
                "StartTime": offering.start_s,
                "EndTime": offering.end_s,
            }
        ],
    }
