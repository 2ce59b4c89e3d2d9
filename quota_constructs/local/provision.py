"""Owns provisioning an organisation in the emulator exactly as its stack would (contract 1).

Same model, same order (scheduling policy -> service environment sized from the shares -> job
queue -> quota shares -> SSM parameters), through the same Batch operations a client calls, with
the deterministic names of contract 1: job queue ``<org>-queue``, service environment
``<org>-training``, scheduling policy ``<org>-quota-policy``, shares by their names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quota_constructs.api_shapes import (
    capacity_limits_to_api,
    share_to_api,
    time_limit_actions_to_api,
)
from quota_constructs.contracts import (
    job_queue_arn_parameter,
    job_queue_name_parameter,
    share_arn_parameter,
)
from quota_constructs.model import Organisation

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
        params = {
            job_queue_name_parameter(self.name): self.job_queue_name,
            job_queue_arn_parameter(self.name): self.job_queue_arn,
        }
        for share, arn in self.quota_share_arns.items():
            params[share_arn_parameter(self.name, share)] = arn
        return params


def resource_names(org: str) -> dict[str, str]:
    """Deterministic emulator names of an organisation's queue, environment and policy."""
    return {
        "job_queue": f"{org}-queue",
        "service_environment": f"{org}-training",
        "scheduling_policy": f"{org}-quota-policy",
    }


def _runnable_timeout_s(org: Organisation) -> int | None:
    minutes = org.queue.runnable_timeout_minutes
    return None if minutes is None else minutes * 60


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
            "capacityLimits": capacity_limits_to_api(org.queue.service_environment_capacity()),
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
            "jobStateTimeLimitActions": time_limit_actions_to_api(_runnable_timeout_s(org)),
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
