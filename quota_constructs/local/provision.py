"""Owns provisioning an organisation in the emulator exactly as its stack would.

The stack contract is in docs/constructs.md.

Same model, same order (scheduling policy -> service environment sized from the shares -> job
queue -> quota shares -> SSM parameters), through the same Batch operations a client calls.
Names (:class:`ResourceNaming`): ``fixed`` (default) gives job queue ``<org>-queue``, service
environment ``<org>-training``, scheduling policy ``<org>-quota-policy``; ``generated`` gives
names nobody can guess, as CloudFormation generates them for the stack (which sets none), so
only code that finds them through the SSM parameters works. Shares keep their names (the API
needs them). A share
with ``access`` carries the team tag and publishes its team's resources (:class:`TeamResources`):
roles the stack would create are named ``<org>-<share>-submitter`` / ``-execution`` in the
emulator's account, a bucket it would create ``<org>-<share>-<account>`` (lowercase); existing
roles and buckets named in the file are published as given.
"""

from __future__ import annotations

import hashlib
import random
import secrets
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from quota_constructs.api_shapes import (
    capacity_limits_to_api,
    share_to_api,
    time_limit_actions_to_api,
)
from quota_constructs.contracts import (
    TEAM_TAG_KEY,
    bucket_parameter,
    execution_role_arn_parameter,
    job_queue_arn_parameter,
    job_queue_name_parameter,
    share_arn_parameter,
    submitter_role_arn_parameter,
    team_tag_value,
    training_job_prefix_parameter,
    training_plans_parameter,
    training_plans_value,
)
from quota_constructs.local.state.arns import Account
from quota_constructs.model import Organisation, QuotaShareSpec, training_job_prefix

MAX_ROLE_NAME = 64
MAX_BUCKET_NAME = 63
MAX_BATCH_NAME = 128

BatchCall = Callable[[str, Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class TeamResources:
    """What the stack publishes for a share with ``access``: team tag, roles and bucket."""

    share: str
    team_tag: str
    """The share's ``quota-team`` tag value, ``<organisation>/<share>``."""
    submitter_role_arn: str
    execution_role_arn: str
    bucket: str
    """``name`` or ``name/prefix``, as the stack's bucket parameter holds it."""


def _bounded(name: str, limit: int) -> str:
    """``name`` cut to ``limit`` characters, ending in a digest of the whole when cut."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: limit - 9].rstrip('-.')}-{digest}"


def team_resources(org: str, share: QuotaShareSpec, account: Account) -> TeamResources | None:
    """The team resources of ``share`` in the emulator (``None`` without ``access``)."""
    access = share.access
    if access is None:
        return None
    iam = f"arn:{account.partition}:iam::{account.account_id}:role/"
    created_bucket = f"{org}-{share.name}-{account.account_id}".lower().replace("_", "-")
    return TeamResources(
        share=share.name,
        team_tag=team_tag_value(org, share.name),
        submitter_role_arn=iam + _bounded(f"{org}-{share.name}-submitter", MAX_ROLE_NAME),
        execution_role_arn=(
            iam + _bounded(f"{org}-{share.name}-execution", MAX_ROLE_NAME)
            if access.creates_execution_role
            else access.execution_role
        ),
        bucket=(
            _bounded(created_bucket, MAX_BUCKET_NAME) if access.creates_bucket else access.bucket
        ),
    )


@dataclass(frozen=True)
class ProvisionedOrganisation:
    """Names and ARNs of an organisation's resources in the emulator."""

    name: str
    job_queue_name: str
    job_queue_arn: str
    service_environment_arn: str
    scheduling_policy_arn: str
    quota_share_arns: Mapping[str, str]
    teams: Mapping[str, TeamResources] = field(default_factory=dict)
    """Per share with ``access``: its team's tag, roles and bucket."""
    training_plan_arns: tuple[str, ...] = ()
    """The organisation's training plans (named ones as bought in the emulator's account)."""

    @property
    def string_lists(self) -> frozenset[str]:
        """The names among :meth:`parameters` whose SSM type is ``StringList``."""
        return frozenset({training_plans_parameter(self.name)})

    def parameters(self) -> dict[str, str]:
        """The SSM parameters the organisation's stack writes (the stack contract)."""
        params = {
            job_queue_name_parameter(self.name): self.job_queue_name,
            job_queue_arn_parameter(self.name): self.job_queue_arn,
            training_plans_parameter(self.name): training_plans_value(self.training_plan_arns),
        }
        for share, arn in self.quota_share_arns.items():
            params[share_arn_parameter(self.name, share)] = arn
        for share, team in self.teams.items():
            params[submitter_role_arn_parameter(self.name, share)] = team.submitter_role_arn
            params[execution_role_arn_parameter(self.name, share)] = team.execution_role_arn
            params[bucket_parameter(self.name, share)] = team.bucket
            params[training_job_prefix_parameter(self.name, share)] = training_job_prefix(
                team.team_tag
            )
        return params


class ResourceNaming(StrEnum):
    """How the emulator names an organisation's job queue, service environment and policy.

    ``fixed`` (default): ``<org>-queue``, ``<org>-training``, ``<org>-quota-policy``, the same
    every run (handy in tests; a deployed stack has other names). ``generated``: as
    CloudFormation names resources a template leaves unnamed, ``<stack>-<logical id>-<12
    random upper-case letters and digits>`` with stack ``Quota-<org>`` (the pattern is
    CloudFormation's usual one, UNCONFIRMED for Batch), so examples must resolve names through
    the SSM parameters, as against a deployment.
    """

    FIXED = "fixed"
    GENERATED = "generated"


GENERATED_SUFFIX_CHARS = string.ascii_uppercase + string.digits
LOGICAL_IDS = {
    "job_queue": "JobQueue",
    "service_environment": "ServiceEnvironment",
    "scheduling_policy": "SchedulingPolicy",
}
"""Logical-id stems of the generated names (the L1 children of the stack's queue construct)."""


def resource_names(
    org: str, naming: ResourceNaming = ResourceNaming.FIXED, rng: random.Random | None = None
) -> dict[str, str]:
    """Emulator names of an organisation's queue, environment and policy (``rng``: the
    generated suffixes, default the system's randomness)."""
    if naming is ResourceNaming.FIXED:
        return {
            "job_queue": f"{org}-queue",
            "service_environment": f"{org}-training",
            "scheduling_policy": f"{org}-quota-policy",
        }
    return {
        key: _bounded(f"Quota-{org}-{logical_id}-{_suffix(rng)}", MAX_BATCH_NAME)
        for key, logical_id in LOGICAL_IDS.items()
    }


def _suffix(rng: random.Random | None) -> str:
    pick = rng.choice if rng is not None else secrets.choice
    return "".join(pick(GENERATED_SUFFIX_CHARS) for _ in range(12))


def _runnable_timeout_s(org: Organisation) -> int | None:
    minutes = org.queue.runnable_timeout_minutes
    return None if minutes is None else minutes * 60


def provision(
    org: Organisation,
    call: BatchCall,
    *,
    account: Account,
    names: Mapping[str, str] | None = None,
) -> ProvisionedOrganisation:
    """Create ``org``'s resources through ``call(operation, params)``; returns their ARNs.

    ``org`` must be valid (``Organisation.validate``); errors from ``call`` propagate.
    ``account`` names the team roles of shares with ``access``; ``names`` the queue,
    environment and policy (default: :func:`resource_names`, fixed).
    """
    names = names or resource_names(org.name)
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
    teams: dict[str, TeamResources] = {}
    for share in org.queue.shares:
        team = team_resources(org.name, share, account)
        share_tags = tags if team is None else {**tags, TEAM_TAG_KEY: team.team_tag}
        created = call(
            "CreateQuotaShare",
            {**share_to_api(share), "jobQueue": queue["jobQueueArn"], "tags": share_tags},
        )
        shares[share.name] = created["quotaShareArn"]
        if team is not None:
            teams[share.name] = team
    return ProvisionedOrganisation(
        name=org.name,
        job_queue_name=queue["jobQueueName"],
        job_queue_arn=queue["jobQueueArn"],
        service_environment_arn=env["serviceEnvironmentArn"],
        scheduling_policy_arn=policy["arn"],
        quota_share_arns=shares,
        teams=teams,
        training_plan_arns=tuple(
            plan.arn if plan.by_arn else account.training_plan(plan.name)
            for plan in org.training_plans
        ),
    )
