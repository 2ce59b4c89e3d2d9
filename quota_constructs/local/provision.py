"""Provision an organisation in the emulator exactly as its stack would (contract 1).

Same model, same order (scheduling policy -> service environment sized from the shares -> job
queue -> quota shares -> SSM parameters), through the same Batch operations a client calls, with
the deterministic names of contract 1: job queue ``<org>-queue``, service environment
``<org>-training``, scheduling policy ``<org>-quota-policy``, shares by their names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quota_constructs.api_shapes import share_to_api
from quota_constructs.model import MISCONFIGURATION_REASONS, Organisation

BatchCall = Callable[[str, Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class ProvisionedOrganisation:
    """Names and ARNs of an organisation's resources in the emulator."""

    name: str
    job_queue_name: str
    job_queue_arn: str
    service_environment_arn: str
    scheduling_policy_arn: str
    quota_share_arns: Mapping[str, str]

    def parameters(self) -> dict[str, str]:
        """The SSM parameters the organisation's stack writes (contract 1)."""
        prefix = f"/quota/{self.name}"
        params = {
            f"{prefix}/job-queue/name": self.job_queue_name,
            f"{prefix}/job-queue/arn": self.job_queue_arn,
        }
        for share, arn in self.quota_share_arns.items():
            params[f"{prefix}/quota-shares/{share}/arn"] = arn
        return params


def resource_names(org: str) -> dict[str, str]:
    """Deterministic emulator names of an organisation's queue, environment and policy."""
    return {
        "job_queue": f"{org}-queue",
        "service_environment": f"{org}-training",
        "scheduling_policy": f"{org}-quota-policy",
    }


def time_limit_actions(org: Organisation) -> list[dict[str, Any]]:
    """``jobStateTimeLimitActions``: TERMINATE jobs stuck on a MISCONFIGURATION reason."""
    minutes = org.queue.runnable_timeout_minutes
    if minutes is None:
        return []
    return [
        {
            "reason": reason,
            "state": "RUNNABLE",
            "maxTimeSeconds": minutes * 60,
            "action": "TERMINATE",
        }
        for reason in MISCONFIGURATION_REASONS
    ]


def provision(org: Organisation, call: BatchCall) -> ProvisionedOrganisation:
    """Create ``org``'s resources through ``call(operation, params)``; returns their ARNs.

    ``org`` must be valid (``Organisation.validate``); errors from ``call`` propagate.
    """
    names = resource_names(org.name)
    tags = dict(org.tags)
    policy = call(
        "CreateSchedulingPolicy",
        {
            "name": names["scheduling_policy"],
            "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"},
            "tags": tags,
        },
    )
    env = call(
        "CreateServiceEnvironment",
        {
            "serviceEnvironmentName": names["service_environment"],
            "serviceEnvironmentType": "SAGEMAKER_TRAINING",
            "state": "ENABLED",
            "capacityLimits": [
                {"capacityUnit": unit, "maxCapacity": count}
                for unit, count in org.queue.service_environment_capacity().items()
            ],
            "tags": tags,
        },
    )
    queue = call(
        "CreateJobQueue",
        {
            "jobQueueName": names["job_queue"],
            "state": "ENABLED",
            "priority": org.queue.priority,
            "jobQueueType": "SAGEMAKER_TRAINING",
            "schedulingPolicyArn": policy["arn"],
            "serviceEnvironmentOrder": [
                {"order": 1, "serviceEnvironment": env["serviceEnvironmentArn"]}
            ],
            "jobStateTimeLimitActions": time_limit_actions(org),
            "tags": tags,
        },
    )
    shares: dict[str, str] = {}
    for share in org.queue.shares:
        created = call(
            "CreateQuotaShare",
            {**share_to_api(share), "jobQueue": queue["jobQueueArn"], "tags": tags},
        )
        shares[share.name] = created["quotaShareArn"]
    return ProvisionedOrganisation(
        name=org.name,
        job_queue_name=queue["jobQueueName"],
        job_queue_arn=queue["jobQueueArn"],
        service_environment_arn=env["serviceEnvironmentArn"],
        scheduling_policy_arn=policy["arn"],
        quota_share_arns=shares,
    )
