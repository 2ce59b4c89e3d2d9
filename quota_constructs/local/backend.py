"""Resource registry of the emulator: scheduling policies, service environments, job queues,
quota shares, tags; every Batch operation the emulator answers, on validated parameters.

Operations take the request parameters (already checked against botocore's input shape) and
return the response as a plain dict in the output shape. Every quota rule comes from
:mod:`quota_constructs.model` (names, capacity limits, borrow limit vs strategy, 20 shares per
queue, scheduling priority range); semantic errors are :func:`~.protocol.client_error` with a
message naming the field, the value and the fix. Jobs are delegated to :mod:`.jobs`, one
scheduler core per quota-managed queue.

Choices where AWS is UNCONFIRMED (reference section 7), documented in ``docs/emulator.md``:
resources are ``VALID`` at once (no CREATING phase); a quota share's instance types need not
appear in the service environment; deleting a queue still holding quota shares is refused.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from quota_constructs.api_shapes import share_to_api
from quota_constructs.local.arns import Account
from quota_constructs.local.protocol import client_error
from quota_constructs.model import (
    QUEUE_PRIORITY_RANGE,
    RUNNABLE_TIMEOUT_MINUTES_RANGE,
    JobQueueSpec,
    Problem,
    QuotaShareSpec,
    ShareState,
    SharingStrategy,
    check_instance_type,
    check_int_range,
    check_name,
    check_tags,
)

T = TypeVar("T")
DEFAULT_PAGE_SIZE = 100
QUEUE_HEALTHY = "JobQueue Healthy"


def raise_problems(problems: Sequence[Problem], *, context: str) -> None:
    """Answer ``ClientException`` listing every problem, when there are any."""
    if problems:
        raise client_error(f"{context}: " + "; ".join(str(p) for p in problems))


def paginate(
    items: Sequence[T], max_results: int | None, next_token: str | None
) -> tuple[list[T], str | None]:
    """One page of ``items`` and the token of the next page (``None`` on the last page)."""
    start = 0
    if next_token:
        try:
            start = int(base64.urlsafe_b64decode(next_token.encode()).decode().removeprefix("o:"))
        except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
            raise client_error(
                f"nextToken {next_token!r} is not a token this emulator issued; "
                "pass the nextToken of the previous response unchanged"
            ) from exc
    size = max_results or DEFAULT_PAGE_SIZE
    if size < 1 or size > DEFAULT_PAGE_SIZE:
        raise client_error(f"maxResults must be between 1 and 100 (got {size})")
    end = start + size
    token = base64.urlsafe_b64encode(f"o:{end}".encode()).decode() if end < len(items) else None
    return list(items[start:end]), token


@dataclass
class SchedulingPolicy:
    name: str
    arn: str
    quota_share_policy: dict[str, Any] | None
    fairshare_policy: dict[str, Any] | None

    def describe(self, tags: Mapping[str, str]) -> dict[str, Any]:
        return {
            "name": self.name,
            "arn": self.arn,
            "quotaSharePolicy": self.quota_share_policy,
            "fairsharePolicy": self.fairshare_policy,
            "tags": dict(tags),
        }


@dataclass
class ServiceEnvironment:
    name: str
    arn: str
    state: str
    capacity: dict[str, int]
    queue_arn: str | None = None

    def describe(self, tags: Mapping[str, str]) -> dict[str, Any]:
        return {
            "serviceEnvironmentName": self.name,
            "serviceEnvironmentArn": self.arn,
            "serviceEnvironmentType": "SAGEMAKER_TRAINING",
            "state": self.state,
            "status": "VALID",
            "capacityLimits": [
                {"capacityUnit": unit, "maxCapacity": count}
                for unit, count in self.capacity.items()
            ],
            "tags": dict(tags),
        }


@dataclass
class QuotaShare:
    spec: QuotaShareSpec
    arn: str
    queue_arn: str

    def describe(self, tags: Mapping[str, str] | None = None) -> dict[str, Any]:
        return {
            **share_to_api(self.spec),
            "quotaShareArn": self.arn,
            "jobQueueArn": self.queue_arn,
            "status": "VALID",
            "tags": None if tags is None else dict(tags),
        }


@dataclass
class JobQueue:
    name: str
    arn: str
    state: str
    priority: int
    scheduling_policy_arn: str
    service_environment_arn: str
    time_limit_actions: list[dict[str, Any]]
    shares: dict[str, QuotaShare] = field(default_factory=dict)

    def spec(self) -> JobQueueSpec:
        """The queue as the domain model sees it (current shares, priority)."""
        return JobQueueSpec(
            shares=tuple(s.spec for s in self.shares.values()), priority=self.priority
        )

    def describe(self, tags: Mapping[str, str]) -> dict[str, Any]:
        return {
            "jobQueueName": self.name,
            "jobQueueArn": self.arn,
            "state": self.state,
            "schedulingPolicyArn": self.scheduling_policy_arn,
            "status": "VALID",
            "statusReason": QUEUE_HEALTHY,
            "priority": self.priority,
            "computeEnvironmentOrder": [],
            "serviceEnvironmentOrder": [
                {"order": 1, "serviceEnvironment": self.service_environment_arn}
            ],
            "jobQueueType": "SAGEMAKER_TRAINING",
            "tags": dict(tags),
            "jobStateTimeLimitActions": self.time_limit_actions,
        }


class QueueListener:
    """Receives registry changes that the job side (one scheduler per queue) must follow."""

    def queue_created(self, queue: JobQueue) -> None: ...

    def queue_changed(self, queue: JobQueue) -> None: ...

    def share_changed(self, queue: JobQueue, share: QuotaShare) -> None: ...

    def share_deleted(self, queue: JobQueue, share: QuotaShare) -> None: ...

    def capacity_changed(self, queue: JobQueue, capacity: Mapping[str, int]) -> None: ...

    def queue_deleted(self, queue: JobQueue) -> None: ...


def _capacity_limits(
    limits: Iterable[Mapping[str, Any]], path: str, *, check: bool = True
) -> tuple[dict[str, int], list[Problem]]:
    """``capacityLimits`` as ``{instance type: count}``, with the problems found.

    ``check=False`` leaves unit and count rules to the caller (a share's ``problems()``).
    """
    capacity: dict[str, Any] = {}
    problems: list[Problem] = []
    for index, limit in enumerate(limits):
        item = f"{path}[{index}]"
        unit, count = limit.get("capacityUnit"), limit.get("maxCapacity")
        if check:
            problems += check_instance_type(unit, f"{item}.capacityUnit")
            problems += check_int_range(count, f"{item}.maxCapacity", 1, None, what="max capacity")
        if unit in capacity:
            problems.append(
                Problem(f"{item}.capacityUnit", unit, "instance type listed twice", "merge them")
            )
        elif isinstance(unit, str):
            capacity[unit] = count  # a bad count is reported by the caller's rules
    return capacity, problems


def share_spec_from_request(
    params: Mapping[str, Any], *, base: QuotaShareSpec | None = None
) -> tuple[QuotaShareSpec, list[Problem]]:
    """A :class:`QuotaShareSpec` from Create/UpdateQuotaShare parameters over ``base``."""
    problems: list[Problem] = []
    capacity = dict(base.capacity) if base else {}
    if "capacityLimits" in params:
        capacity, problems = _capacity_limits(
            params["capacityLimits"], "capacityLimits", check=False
        )
    strategy = base.strategy if base else SharingStrategy.RESERVE
    borrow_limit = base.borrow_limit if base else None
    sharing = params.get("resourceSharingConfiguration")
    if sharing is not None:
        strategy = SharingStrategy(sharing["strategy"])
        borrow_limit = sharing.get("borrowLimit")
    preemption = params.get("preemptionConfiguration")
    in_share = base.in_share_preemption if base else False
    if preemption is not None:
        in_share = preemption["inSharePreemption"] == "ENABLED"
    state = ShareState(params.get("state") or (base.state if base else ShareState.ENABLED))
    spec = QuotaShareSpec(
        name=base.name if base else params["quotaShareName"],
        capacity=capacity,
        strategy=strategy,
        borrow_limit=borrow_limit,
        in_share_preemption=in_share,
        state=state,
    )
    return spec, problems


class Registry:
    """Batch resources of one emulated account, with create/describe/list/update/delete rules."""

    def __init__(self, account: Account, listener: QueueListener | None = None) -> None:
        self.account = account
        self.listener = listener or QueueListener()
        self.policies: dict[str, SchedulingPolicy] = {}
        self.environments: dict[str, ServiceEnvironment] = {}
        self.queues: dict[str, JobQueue] = {}
        self.tags: dict[str, dict[str, str]] = {}

    # --- lookups ------------------------------------------------------------------------------

    def queue(self, ref: str) -> JobQueue:
        """The job queue named or ARN'd by ``ref``; ``ClientException`` listing known queues."""
        name = self.account.name_from(ref, "job-queue")
        queue = self.queues.get(name)
        if queue is None:
            known = ", ".join(sorted(self.queues)) or "none"
            raise client_error(
                f"jobQueue: no job queue {ref!r} (queues: {known}); "
                "pass a queue name or ARN from DescribeJobQueues"
            )
        return queue

    def environment(self, ref: str) -> ServiceEnvironment:
        name = self.account.name_from(ref, "service-environment")
        env = self.environments.get(name)
        if env is None:
            known = ", ".join(sorted(self.environments)) or "none"
            raise client_error(
                f"serviceEnvironment: no service environment {ref!r} (known: {known})"
            )
        return env

    def policy(self, arn: str) -> SchedulingPolicy:
        for policy in self.policies.values():
            if arn in (policy.arn, policy.name):
                return policy
        raise client_error(f"schedulingPolicyArn: no scheduling policy {arn!r}")

    def share_by_arn(self, arn: str) -> tuple[JobQueue, QuotaShare]:
        """The queue and share of a quota-share ARN; ``ClientException`` when unknown."""
        marker = ":job-queue/"
        if marker in arn and "/quota-share/" in arn:
            queue_name, share_name = arn.split(marker, 1)[1].split("/quota-share/", 1)
            queue = self.queues.get(queue_name)
            if queue is not None and share_name in queue.shares:
                return queue, queue.shares[share_name]
        raise client_error(
            f"quotaShareArn: no quota share {arn!r}; "
            "use an ARN from ListQuotaShares (job-queue/<queue>/quota-share/<share>)"
        )

    def _check_new_tags(self, params: Mapping[str, Any]) -> dict[str, str]:
        tags = dict(params.get("tags") or {})
        raise_problems(check_tags(tags), context="tags")
        return tags

    # --- scheduling policies -------------------------------------------------------------------

    def create_scheduling_policy(self, params: Mapping[str, Any]) -> dict[str, Any]:
        name = params["name"]
        raise_problems(check_name(name, "name", what="scheduling policy name"), context="name")
        if name in self.policies:
            raise client_error(f"Object already exists: scheduling policy {name!r}")
        if params.get("quotaSharePolicy") and params.get("fairsharePolicy"):
            raise client_error(
                "a scheduling policy has either quotaSharePolicy or fairsharePolicy, not both"
            )
        tags = self._check_new_tags(params)
        arn = self.account.scheduling_policy(name)
        self.policies[name] = SchedulingPolicy(
            name, arn, params.get("quotaSharePolicy"), params.get("fairsharePolicy")
        )
        self.tags[arn] = tags
        return {"name": name, "arn": arn}

    def describe_scheduling_policies(self, params: Mapping[str, Any]) -> dict[str, Any]:
        found = [p for p in self.policies.values() if p.arn in params["arns"]]
        return {"schedulingPolicies": [p.describe(self.tags.get(p.arn, {})) for p in found]}

    def list_scheduling_policies(self, params: Mapping[str, Any]) -> dict[str, Any]:
        page, token = paginate(
            list(self.policies.values()), params.get("maxResults"), params.get("nextToken")
        )
        return {"schedulingPolicies": [{"arn": p.arn} for p in page], "nextToken": token}

    def update_scheduling_policy(self, params: Mapping[str, Any]) -> dict[str, Any]:
        policy = self.policy(params["arn"])
        if params.get("fairsharePolicy") and policy.quota_share_policy:
            raise client_error(
                f"scheduling policy {policy.name!r} is a quota-share policy; its type cannot be "
                "switched to fair share (create a new policy instead)"
            )
        if params.get("quotaSharePolicy") and policy.fairshare_policy:
            raise client_error(
                f"scheduling policy {policy.name!r} is a fair-share policy; its type cannot be "
                "switched to quota share (create a new policy instead)"
            )
        policy.quota_share_policy = params.get("quotaSharePolicy") or policy.quota_share_policy
        policy.fairshare_policy = params.get("fairsharePolicy") or policy.fairshare_policy
        return {}

    def delete_scheduling_policy(self, params: Mapping[str, Any]) -> dict[str, Any]:
        policy = self.policy(params["arn"])
        users = [q.name for q in self.queues.values() if q.scheduling_policy_arn == policy.arn]
        if users:
            raise client_error(
                f"scheduling policy {policy.name!r} is used by job queue(s) {', '.join(users)}; "
                "delete those queues first"
            )
        del self.policies[policy.name]
        self.tags.pop(policy.arn, None)
        return {}

    # --- service environments ------------------------------------------------------------------

    def create_service_environment(self, params: Mapping[str, Any]) -> dict[str, Any]:
        name = params["serviceEnvironmentName"]
        problems = check_name(name, "serviceEnvironmentName", what="service environment name")
        capacity, cap_problems = _capacity_limits(params["capacityLimits"], "capacityLimits")
        raise_problems(problems + cap_problems, context="CreateServiceEnvironment")
        if not capacity:
            raise client_error(
                "capacityLimits: a quota-managed service environment needs at least one "
                "instance-type capacity limit, e.g. {capacityUnit: ml.g5.xlarge, maxCapacity: 4}"
            )
        if name in self.environments:
            raise client_error(f"Object already exists: service environment {name!r}")
        tags = self._check_new_tags(params)
        arn = self.account.service_environment(name)
        self.environments[name] = ServiceEnvironment(
            name, arn, params.get("state") or "ENABLED", capacity
        )
        self.tags[arn] = tags
        return {"serviceEnvironmentName": name, "serviceEnvironmentArn": arn}

    def describe_service_environments(self, params: Mapping[str, Any]) -> dict[str, Any]:
        envs = list(self.environments.values())
        wanted = params.get("serviceEnvironments")
        if wanted:
            envs = [e for e in envs if e.name in wanted or e.arn in wanted]
        page, token = paginate(envs, params.get("maxResults"), params.get("nextToken"))
        return {
            "serviceEnvironments": [e.describe(self.tags.get(e.arn, {})) for e in page],
            "nextToken": token,
        }

    def update_service_environment(self, params: Mapping[str, Any]) -> dict[str, Any]:
        env = self.environment(params["serviceEnvironment"])
        if "capacityLimits" in params:
            capacity, problems = _capacity_limits(params["capacityLimits"], "capacityLimits")
            raise_problems(problems, context="UpdateServiceEnvironment")
            env.capacity = capacity
            if env.queue_arn is not None:
                self.listener.capacity_changed(self.queue(env.queue_arn), capacity)
        if params.get("state"):
            env.state = params["state"]
        return {"serviceEnvironmentName": env.name, "serviceEnvironmentArn": env.arn}

    def delete_service_environment(self, params: Mapping[str, Any]) -> dict[str, Any]:
        env = self.environment(params["serviceEnvironment"])
        if env.state != "DISABLED":
            raise client_error(
                f"service environment {env.name!r} is ENABLED; "
                "disable it first (UpdateServiceEnvironment state=DISABLED)"
            )
        if env.queue_arn is not None:
            raise client_error(
                f"service environment {env.name!r} is still used by job queue {env.queue_arn}; "
                "delete the queue first"
            )
        del self.environments[env.name]
        self.tags.pop(env.arn, None)
        return {}

    # --- job queues ----------------------------------------------------------------------------

    def _time_limit_actions(self, actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        low, high = (m * 60 for m in RUNNABLE_TIMEOUT_MINUTES_RANGE)
        problems: list[Problem] = []
        for index, action in enumerate(actions):
            path = f"jobStateTimeLimitActions[{index}]"
            problems += check_int_range(
                action["maxTimeSeconds"], f"{path}.maxTimeSeconds", low, high, what="max time"
            )
            if action["action"] != "TERMINATE":
                problems.append(
                    Problem(
                        f"{path}.action",
                        action["action"],
                        "SAGEMAKER_TRAINING queues only support TERMINATE",
                        "set action: TERMINATE",
                    )
                )
        raise_problems(problems, context="jobStateTimeLimitActions")
        return [dict(a) for a in actions]

    def create_job_queue(self, params: Mapping[str, Any]) -> dict[str, Any]:
        name = params["jobQueueName"]
        low, high = QUEUE_PRIORITY_RANGE
        problems = check_name(name, "jobQueueName", what="job queue name")
        problems += check_int_range(params["priority"], "priority", low, high, what="priority")
        raise_problems(problems, context="CreateJobQueue")
        if name in self.queues:
            raise client_error(f"Object already exists: job queue {name!r}")
        if params.get("jobQueueType") != "SAGEMAKER_TRAINING" or params.get(
            "computeEnvironmentOrder"
        ):
            raise client_error(
                f"jobQueueType: the emulator serves SAGEMAKER_TRAINING queues only "
                f"(got {params.get('jobQueueType')!r}); set jobQueueType=SAGEMAKER_TRAINING "
                "and serviceEnvironmentOrder"
            )
        order = params.get("serviceEnvironmentOrder") or []
        if len(order) != 1:
            raise client_error(
                f"serviceEnvironmentOrder: a quota-managed job queue needs exactly one service "
                f"environment (got {len(order)})"
            )
        env = self.environment(order[0]["serviceEnvironment"])
        if env.queue_arn is not None:
            raise client_error(
                f"serviceEnvironmentOrder: service environment {env.name!r} is already connected "
                f"to job queue {env.queue_arn}; a quota-managed environment serves one queue"
            )
        if not params.get("schedulingPolicyArn"):
            raise client_error(
                "schedulingPolicyArn: a quota-managed job queue needs a scheduling policy with "
                "quotaSharePolicy; create one with CreateSchedulingPolicy"
            )
        policy = self.policy(params["schedulingPolicyArn"])
        if not policy.quota_share_policy:
            raise client_error(
                f"schedulingPolicyArn: scheduling policy {policy.name!r} has no quotaSharePolicy; "
                "quota shares need a quota-share scheduling policy"
            )
        actions = self._time_limit_actions(params.get("jobStateTimeLimitActions") or [])
        tags = self._check_new_tags(params)
        arn = self.account.job_queue(name)
        self.queues[name] = JobQueue(
            name=name,
            arn=arn,
            state=params.get("state") or "ENABLED",
            priority=params["priority"],
            scheduling_policy_arn=policy.arn,
            service_environment_arn=env.arn,
            time_limit_actions=actions,
        )
        env.queue_arn = arn
        self.tags[arn] = tags
        self.listener.queue_created(self.queues[name])
        return {"jobQueueName": name, "jobQueueArn": arn}

    def describe_job_queues(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queues = list(self.queues.values())
        wanted = params.get("jobQueues")
        if wanted:
            queues = [q for q in queues if q.name in wanted or q.arn in wanted]
        page, token = paginate(queues, params.get("maxResults"), params.get("nextToken"))
        return {
            "jobQueues": [q.describe(self.tags.get(q.arn, {})) for q in page],
            "nextToken": token,
        }

    def update_job_queue(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queue = self.queue(params["jobQueue"])
        if "priority" in params:
            low, high = QUEUE_PRIORITY_RANGE
            raise_problems(
                check_int_range(params["priority"], "priority", low, high, what="priority"),
                context="UpdateJobQueue",
            )
            queue.priority = params["priority"]
        if params.get("schedulingPolicyArn"):
            policy = self.policy(params["schedulingPolicyArn"])
            if not policy.quota_share_policy:
                raise client_error(
                    f"schedulingPolicyArn: {policy.name!r} is not a quota-share policy"
                )
            queue.scheduling_policy_arn = policy.arn
        if "jobStateTimeLimitActions" in params:
            queue.time_limit_actions = self._time_limit_actions(params["jobStateTimeLimitActions"])
        if params.get("state"):
            queue.state = params["state"]
        self.listener.queue_changed(queue)
        return {"jobQueueName": queue.name, "jobQueueArn": queue.arn}

    def delete_job_queue(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queue = self.queue(params["jobQueue"])
        if queue.state != "DISABLED":
            raise client_error(
                f"job queue {queue.name!r} is ENABLED; disable it first (UpdateJobQueue "
                "state=DISABLED)"
            )
        if queue.shares:
            raise client_error(
                f"job queue {queue.name!r} still has quota shares "
                f"({', '.join(queue.shares)}); delete them first"
            )
        self.listener.queue_deleted(queue)
        del self.queues[queue.name]
        self.tags.pop(queue.arn, None)
        for env in self.environments.values():
            if env.queue_arn == queue.arn:
                env.queue_arn = None
        return {}

    # --- quota shares --------------------------------------------------------------------------

    def create_quota_share(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queue = self.queue(params["jobQueue"])
        name = params["quotaShareName"]
        if name in queue.shares:
            raise client_error(
                f"Quota share {name!r} already exists on job queue {queue.name!r}; "
                "choose another name or update the existing share"
            )
        spec, problems = share_spec_from_request(params)
        candidate = JobQueueSpec(shares=(*queue.spec().shares, spec), priority=queue.priority)
        problems += [p for p in candidate.problems() if not p.path.startswith("shares[")]
        problems += spec.problems()
        raise_problems(problems, context=f"CreateQuotaShare {name!r}")
        tags = self._check_new_tags(params)
        share = QuotaShare(spec, self.account.quota_share(queue.name, name), queue.arn)
        queue.shares[name] = share
        self.tags[share.arn] = tags
        self.listener.share_changed(queue, share)
        return {"quotaShareName": name, "quotaShareArn": share.arn}

    def describe_quota_share(self, params: Mapping[str, Any]) -> dict[str, Any]:
        _, share = self.share_by_arn(params["quotaShareArn"])
        return share.describe(self.tags.get(share.arn, {}))

    def list_quota_shares(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queue = self.queue(params["jobQueue"])
        page, token = paginate(
            list(queue.shares.values()), params.get("maxResults"), params.get("nextToken")
        )
        return {"quotaShares": [s.describe() for s in page], "nextToken": token}

    def update_quota_share(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queue, share = self.share_by_arn(params["quotaShareArn"])
        spec, problems = share_spec_from_request(params, base=share.spec)
        raise_problems(problems + spec.problems(), context=f"UpdateQuotaShare {spec.name!r}")
        share.spec = spec
        self.listener.share_changed(queue, share)
        return {"quotaShareName": spec.name, "quotaShareArn": share.arn}

    def delete_quota_share(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queue, share = self.share_by_arn(params["quotaShareArn"])
        if share.spec.state is not ShareState.DISABLED:
            raise client_error(
                f"quota share {share.spec.name!r} is ENABLED; disable it first "
                "(UpdateQuotaShare state=DISABLED)"
            )
        self.listener.share_deleted(queue, share)
        del queue.shares[share.spec.name]
        self.tags.pop(share.arn, None)
        return {}

    # --- tags ----------------------------------------------------------------------------------

    def _tagged(self, arn: str) -> dict[str, str]:
        tags = self.tags.get(arn)
        if tags is None:
            raise client_error(f"resourceArn: no resource {arn!r} in this emulator")
        return tags

    def tag_resource(self, params: Mapping[str, Any]) -> dict[str, Any]:
        tags = self._tagged(params["resourceArn"])
        merged = {**tags, **params["tags"]}
        raise_problems(check_tags(merged), context="tags")
        tags.update(params["tags"])
        return {}

    def untag_resource(self, params: Mapping[str, Any]) -> dict[str, Any]:
        tags = self._tagged(params["resourceArn"])
        for key in params["tagKeys"]:
            tags.pop(key, None)
        return {}

    def list_tags_for_resource(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"tags": dict(self._tagged(params["resourceArn"]))}

    def operations(self) -> dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]]:
        """Operation name -> handler, for every resource operation this registry answers."""
        names = [
            "CreateSchedulingPolicy",
            "DescribeSchedulingPolicies",
            "ListSchedulingPolicies",
            "UpdateSchedulingPolicy",
            "DeleteSchedulingPolicy",
            "CreateServiceEnvironment",
            "DescribeServiceEnvironments",
            "UpdateServiceEnvironment",
            "DeleteServiceEnvironment",
            "CreateJobQueue",
            "DescribeJobQueues",
            "UpdateJobQueue",
            "DeleteJobQueue",
            "CreateQuotaShare",
            "DescribeQuotaShare",
            "ListQuotaShares",
            "UpdateQuotaShare",
            "DeleteQuotaShare",
            "TagResource",
            "UntagResource",
            "ListTagsForResource",
        ]
        return {name: getattr(self, _snake(name)) for name in names}


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")
