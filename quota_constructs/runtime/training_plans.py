"""Owns looking up an organisation's training plans known by ARN alone (``DescribeTrainingPlan``,
read-only): their name, instance type, instances and window, as the model's plans; and what a
job does when its plan is full (:class:`PlanOverflow`)."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from typing import Any

from botocore.exceptions import ClientError

from quota_constructs.model import Organisation, Problem, QuotaConfigError, TrainingPlanSpec
from quota_constructs.model.training_plan import utc_text

NOT_FOUND_CODES = ("ResourceNotFound", "ResourceNotFoundException", "ValidationException")


class PlanOverflow(StrEnum):
    """What the runtime does with a job of an ``Active`` plan's type when the plan has fewer
    available instances (``AvailableInstanceCount``) than the job's ``InstanceCount``."""

    ON_DEMAND = "on-demand"
    """Submit it without ``TrainingPlanArn``: it runs on demand (what the advisor assumes)."""
    WAIT = "wait"
    """Submit it on the plan anyway: it waits for the plan's instances."""


def plan_overflow(value: PlanOverflow | str) -> PlanOverflow:
    """``value`` as a :class:`PlanOverflow`; :class:`QuotaConfigError` naming it otherwise."""
    try:
        return PlanOverflow(value)
    except ValueError:
        modes = " or ".join(repr(m.value) for m in PlanOverflow)
        problem = Problem(
            "plan_overflow",
            value,
            "not a plan overflow mode",
            f"use {modes} (on demand when the plan is full, or wait for it)",
        )
        raise QuotaConfigError([problem]) from None


def has_room(description: dict[str, Any], instances: int) -> bool:
    """Whether a ``DescribeTrainingPlan`` answer has ``instances`` available now (an answer
    without ``AvailableInstanceCount`` cannot tell, and counts as having room)."""
    available = description.get("AvailableInstanceCount")
    return available is None or int(available) >= instances


def plan_from_description(description: dict[str, Any]) -> TrainingPlanSpec:
    """A ``DescribeTrainingPlan`` answer as a named plan (its first reserved capacity's type)."""
    summaries = description.get("ReservedCapacitySummaries") or [{}]
    hours = int(description.get("DurationHours") or 0)
    if description.get("DurationMinutes"):
        hours += 1  # a partial hour is held as a whole one (the model counts hours)
    return TrainingPlanSpec(
        name=str(description["TrainingPlanName"]),
        instance_type=str(summaries[0].get("InstanceType", "")),
        instance_count=int(description.get("TotalInstanceCount") or 0),
        start=utc_text(description["StartTime"].timestamp()),
        duration_hours=hours,
    )


def resolve_plans(org: Organisation, sagemaker: Any) -> Organisation:
    """``org`` with each ``{arn}`` plan looked up by ``sagemaker`` (a boto3 client); a plan
    that does not exist is a problem naming its ARN (all of them at once); then the shares'
    capacity is checked against the plans as looked up."""
    plans, problems = [], []
    for index, plan in enumerate(org.training_plans):
        if not plan.by_arn:
            plans.append(plan)
            continue
        try:
            description = sagemaker.describe_training_plan(TrainingPlanName=plan.arn)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") not in NOT_FOUND_CODES:
                raise
            problems.append(_missing(index, plan.arn))
            continue
        plans.append(plan_from_description(description))
    if problems:
        raise QuotaConfigError(problems, context=f"organisation {org.name!r}")
    resolved = replace(org, training_plans=tuple(plans))
    resolved.validate(context=f"organisation {org.name!r} with its plans looked up")
    return resolved


def _missing(index: int, arn: str) -> Problem:
    return Problem(
        f"training_plans[{index}].arn",
        arn,
        "no such training plan in this account and region (DescribeTrainingPlan)",
        "correct the ARN, or buy the plan first (aws sagemaker create-training-plan)",
    )
