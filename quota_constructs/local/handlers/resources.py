"""Owns the handlers of Batch's resource operations: policies, environments, queues, shares, tags.

Request parameters in, typed registry calls, responses rendered from the records. Capacity
limits and quota shares go to and from the wire through :mod:`quota_constructs.api_shapes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from quota_constructs.api_shapes import (
    CAPACITY_LIMITS,
    capacity_limits_from_api,
    capacity_limits_to_api,
    share_from_request,
    share_to_api,
)
from quota_constructs.local.handlers import Handler
from quota_constructs.local.handlers.pagination import SortKey, batch_page
from quota_constructs.local.state.errors import InvalidParameter, refuse
from quota_constructs.local.state.registry import (
    ENABLED,
    SAGEMAKER_TRAINING,
    JobQueue,
    Registry,
    SchedulingPolicy,
    ServiceEnvironment,
    ShareRecord,
)
from quota_constructs.local.state.tags import TagStore
from quota_constructs.local.wire.input_bounds import documented_bound
from quota_constructs.model import (
    Problem,
    QuotaShareSpec,
    check_instance_type,
    check_int_range,
)

QUEUE_HEALTHY = "JobQueue Healthy"
VALID = "VALID"
MAX_DESCRIBED = documented_bound("DescribeJobQueuesRequest", "jobQueues")
"""DescribeJobQueues ``jobQueues`` and DescribeSchedulingPolicies ``arns``: "up to 100"."""


def check_described(refs: Sequence[str] | None, field: str) -> None:
    """Refuse a Describe request naming more than :data:`MAX_DESCRIBED` resources."""
    if refs is not None and len(refs) > MAX_DESCRIBED:
        raise InvalidParameter(
            f"{field}: a list of up to {MAX_DESCRIBED} entries (got {len(refs)}); split the request"
        )


# --- reading requests ---------------------------------------------------------------------------


def capacity_from_request(
    limits: Sequence[Mapping[str, Any]], path: str, *, context: str
) -> dict[str, int]:
    """``capacityLimits`` as ``{instance type: count}``.

    Refuses an entry without a unit or count, or an instance type listed twice; the unit and
    count rules themselves are the registry's (or the share spec's).
    """
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, limit in enumerate(limits):
        item = f"{path}[{index}]"
        unit, count = limit.get("capacityUnit"), limit.get("maxCapacity")
        if unit is None:
            problems += check_instance_type(unit, f"{item}.capacityUnit")
        if count is None:
            problems += check_int_range(count, f"{item}.maxCapacity", 1, None, what="max capacity")
        if unit is not None and unit in seen:
            problems.append(
                Problem(f"{item}.capacityUnit", unit, "instance type listed twice", "merge them")
            )
        elif unit is not None:
            seen.add(unit)
    refuse(problems, context=context)
    return capacity_limits_from_api(limits)


def share_spec_from_request(
    params: Mapping[str, Any], *, context: str, base: QuotaShareSpec | None = None
) -> QuotaShareSpec:
    """A :class:`QuotaShareSpec` from Create/UpdateQuotaShare parameters over ``base``.

    ``capacityLimits`` is checked here (:func:`capacity_from_request`); the mapping is
    :func:`~quota_constructs.api_shapes.share_from_request`'s.
    """
    if CAPACITY_LIMITS in params:
        capacity_from_request(params[CAPACITY_LIMITS], CAPACITY_LIMITS, context=context)
    return share_from_request(params, base=base)


# --- rendering responses ------------------------------------------------------------------------


def tags_member(tags: Mapping[str, str]) -> dict[str, str] | None:
    """A ``tags`` member (botocore ``TagrisTagsMap``, "min": 1): the tags, or left out when a
    resource has none rather than an empty map the shape does not allow."""
    return dict(tags) or None


def _created(record: SchedulingPolicy | ServiceEnvironment | JobQueue | ShareRecord) -> SortKey:
    """Listings of resources: creation order, stable across pages (``pagination``)."""
    return (record.created,)


def policy_to_api(policy: SchedulingPolicy, tags: Mapping[str, str]) -> dict[str, Any]:
    return {
        "name": policy.name,
        "arn": policy.arn,
        "quotaSharePolicy": policy.quota_share_policy,
        "fairsharePolicy": policy.fairshare_policy,
        "tags": tags_member(tags),
    }


def environment_to_api(env: ServiceEnvironment, tags: Mapping[str, str]) -> dict[str, Any]:
    return {
        "serviceEnvironmentName": env.name,
        "serviceEnvironmentArn": env.arn,
        "serviceEnvironmentType": SAGEMAKER_TRAINING,
        "state": env.state,
        "status": VALID,
        CAPACITY_LIMITS: capacity_limits_to_api(env.capacity),
        "tags": tags_member(tags),
    }


def queue_to_api(queue: JobQueue, tags: Mapping[str, str]) -> dict[str, Any]:
    return {
        "jobQueueName": queue.name,
        "jobQueueArn": queue.arn,
        "state": queue.state,
        "schedulingPolicyArn": queue.scheduling_policy_arn,
        "status": VALID,
        "statusReason": QUEUE_HEALTHY,
        "priority": queue.priority,
        "computeEnvironmentOrder": [],
        "serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": queue.environment.arn}],
        "jobQueueType": SAGEMAKER_TRAINING,
        "tags": tags_member(tags),
        "jobStateTimeLimitActions": [dict(a) for a in queue.time_limit_actions],
    }


def share_to_detail(share: ShareRecord, tags: Mapping[str, str] | None) -> dict[str, Any]:
    """DescribeQuotaShare / ListQuotaShares entry (``tags`` ``None`` leaves them out)."""
    return {
        **share_to_api(share.spec),
        "quotaShareArn": share.arn,
        "jobQueueArn": share.queue_arn,
        "status": VALID,
        "tags": None if tags is None else tags_member(tags),
    }


# --- handlers -----------------------------------------------------------------------------------


class ResourceHandlers:
    """Handlers of the resource and tag operations over a :class:`Registry` and its tags."""

    def __init__(self, registry: Registry, tags: TagStore) -> None:
        self.registry = registry
        self.tags = tags

    def operations(self) -> dict[str, Handler]:
        """Operation name -> handler, for every operation of this module."""
        return {
            "CreateSchedulingPolicy": self.create_scheduling_policy,
            "DescribeSchedulingPolicies": self.describe_scheduling_policies,
            "ListSchedulingPolicies": self.list_scheduling_policies,
            "UpdateSchedulingPolicy": self.update_scheduling_policy,
            "DeleteSchedulingPolicy": self.delete_scheduling_policy,
            "CreateServiceEnvironment": self.create_service_environment,
            "DescribeServiceEnvironments": self.describe_service_environments,
            "UpdateServiceEnvironment": self.update_service_environment,
            "DeleteServiceEnvironment": self.delete_service_environment,
            "CreateJobQueue": self.create_job_queue,
            "DescribeJobQueues": self.describe_job_queues,
            "UpdateJobQueue": self.update_job_queue,
            "DeleteJobQueue": self.delete_job_queue,
            "CreateQuotaShare": self.create_quota_share,
            "DescribeQuotaShare": self.describe_quota_share,
            "ListQuotaShares": self.list_quota_shares,
            "UpdateQuotaShare": self.update_quota_share,
            "DeleteQuotaShare": self.delete_quota_share,
            "TagResource": self.tag_resource,
            "UntagResource": self.untag_resource,
            "ListTagsForResource": self.list_tags_for_resource,
        }

    # --- scheduling policies -------------------------------------------------------------------

    def create_scheduling_policy(self, params: Mapping[str, Any]) -> dict[str, Any]:
        policy = self.registry.create_scheduling_policy(
            params["name"],
            quota_share_policy=params.get("quotaSharePolicy"),
            fairshare_policy=params.get("fairsharePolicy"),
            tags=params.get("tags") or {},
        )
        return {"name": policy.name, "arn": policy.arn}

    def describe_scheduling_policies(self, params: Mapping[str, Any]) -> dict[str, Any]:
        check_described(params["arns"], "arns")
        found = self.registry.scheduling_policies(params["arns"])
        return {"schedulingPolicies": [policy_to_api(p, self.tags.of(p.arn)) for p in found]}

    def list_scheduling_policies(self, params: Mapping[str, Any]) -> dict[str, Any]:
        policies = self.registry.scheduling_policies()
        return batch_page(
            "schedulingPolicies",
            policies,
            params,
            lambda p: {"arn": p.arn},
            order=_created,
            scope="ListSchedulingPolicies",
        )

    def update_scheduling_policy(self, params: Mapping[str, Any]) -> dict[str, Any]:
        self.registry.update_scheduling_policy(
            params["arn"],
            quota_share_policy=params.get("quotaSharePolicy"),
            fairshare_policy=params.get("fairsharePolicy"),
        )
        return {}

    def delete_scheduling_policy(self, params: Mapping[str, Any]) -> dict[str, Any]:
        self.registry.delete_scheduling_policy(params["arn"])
        return {}

    # --- service environments ------------------------------------------------------------------

    def create_service_environment(self, params: Mapping[str, Any]) -> dict[str, Any]:
        context = "CreateServiceEnvironment"
        env = self.registry.create_service_environment(
            params["serviceEnvironmentName"],
            capacity_from_request(params[CAPACITY_LIMITS], CAPACITY_LIMITS, context=context),
            state=params.get("state") or ENABLED,
            tags=params.get("tags") or {},
        )
        return {"serviceEnvironmentName": env.name, "serviceEnvironmentArn": env.arn}

    def describe_service_environments(self, params: Mapping[str, Any]) -> dict[str, Any]:
        envs = self.registry.service_environments(params.get("serviceEnvironments"))
        return batch_page(
            "serviceEnvironments",
            envs,
            params,
            lambda e: environment_to_api(e, self.tags.of(e.arn)),
            order=_created,
            scope="DescribeServiceEnvironments",
        )

    def update_service_environment(self, params: Mapping[str, Any]) -> dict[str, Any]:
        capacity = None
        if CAPACITY_LIMITS in params:
            context = "UpdateServiceEnvironment"
            capacity = capacity_from_request(
                params[CAPACITY_LIMITS], CAPACITY_LIMITS, context=context
            )
        env = self.registry.update_service_environment(
            params["serviceEnvironment"], capacity=capacity, state=params.get("state")
        )
        return {"serviceEnvironmentName": env.name, "serviceEnvironmentArn": env.arn}

    def delete_service_environment(self, params: Mapping[str, Any]) -> dict[str, Any]:
        self.registry.delete_service_environment(params["serviceEnvironment"])
        return {}

    # --- job queues ----------------------------------------------------------------------------

    def create_job_queue(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queue = self.registry.create_job_queue(
            params["jobQueueName"],
            priority=params["priority"],
            queue_type=params.get("jobQueueType"),
            service_environments=[
                e["serviceEnvironment"] for e in params.get("serviceEnvironmentOrder") or []
            ],
            compute_environments=[
                e.get("computeEnvironment", "") for e in params.get("computeEnvironmentOrder") or []
            ],
            scheduling_policy=params.get("schedulingPolicyArn"),
            time_limit_actions=params.get("jobStateTimeLimitActions") or [],
            state=params.get("state") or ENABLED,
            tags=params.get("tags") or {},
        )
        return {"jobQueueName": queue.name, "jobQueueArn": queue.arn}

    def describe_job_queues(self, params: Mapping[str, Any]) -> dict[str, Any]:
        check_described(params.get("jobQueues"), "jobQueues")
        queues = self.registry.job_queues(params.get("jobQueues"))
        return batch_page(
            "jobQueues",
            queues,
            params,
            lambda q: queue_to_api(q, self.tags.of(q.arn)),
            order=_created,
            scope="DescribeJobQueues",
        )

    def update_job_queue(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queue = self.registry.update_job_queue(
            params["jobQueue"],
            priority=params.get("priority"),
            scheduling_policy=params.get("schedulingPolicyArn"),
            time_limit_actions=params.get("jobStateTimeLimitActions"),
            state=params.get("state"),
        )
        return {"jobQueueName": queue.name, "jobQueueArn": queue.arn}

    def delete_job_queue(self, params: Mapping[str, Any]) -> dict[str, Any]:
        self.registry.delete_job_queue(params["jobQueue"])
        return {}

    # --- quota shares --------------------------------------------------------------------------

    def create_quota_share(self, params: Mapping[str, Any]) -> dict[str, Any]:
        context = f"CreateQuotaShare {params['quotaShareName']!r}"
        share = self.registry.create_quota_share(
            params["jobQueue"],
            share_spec_from_request(params, context=context),
            tags=params.get("tags") or {},
        )
        return {"quotaShareName": share.spec.name, "quotaShareArn": share.arn}

    def describe_quota_share(self, params: Mapping[str, Any]) -> dict[str, Any]:
        _, share = self.registry.share(params["quotaShareArn"])
        return share_to_detail(share, self.tags.of(share.arn))

    def list_quota_shares(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queue = self.registry.queue(params["jobQueue"])
        shares = list(queue.shares.values())
        return batch_page(
            "quotaShares",
            shares,
            params,
            lambda s: share_to_detail(s, None),
            order=_created,
            scope=f"ListQuotaShares:{queue.arn}",
        )

    def update_quota_share(self, params: Mapping[str, Any]) -> dict[str, Any]:
        arn = params["quotaShareArn"]
        _, current = self.registry.share(arn)
        context = f"UpdateQuotaShare {current.spec.name!r}"
        spec = share_spec_from_request(params, context=context, base=current.spec)
        share = self.registry.update_quota_share(arn, spec)
        return {"quotaShareName": share.spec.name, "quotaShareArn": share.arn}

    def delete_quota_share(self, params: Mapping[str, Any]) -> dict[str, Any]:
        self.registry.delete_quota_share(params["quotaShareArn"])
        return {}

    # --- tags ----------------------------------------------------------------------------------

    def tag_resource(self, params: Mapping[str, Any]) -> dict[str, Any]:
        self.tags.tag(params["resourceArn"], params["tags"])
        return {}

    def untag_resource(self, params: Mapping[str, Any]) -> dict[str, Any]:
        self.tags.untag(params["resourceArn"], params["tagKeys"])
        return {}

    def list_tags_for_resource(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"tags": tags_member(self.tags.of_resource(params["resourceArn"]))}
