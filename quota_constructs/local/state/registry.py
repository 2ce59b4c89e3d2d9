"""Owns the emulator's Batch resources and the rules for creating, changing and deleting them.

Resources: scheduling policies, service environments, job queues and their quota shares.

Typed in, typed out: methods take Python values and domain types (a share is a
:class:`~quota_constructs.model.QuotaShareSpec`) and return the records below; refusals are
:mod:`.errors` (``NotFound``, ``InvalidRequest``) with a message naming the field, the value and
the fix. Every quota rule comes from :mod:`quota_constructs.model` (names, capacity limits,
borrow limit vs strategy, 20 shares per queue, priority range). Changes the job side must follow
go to a :class:`QueueListener` given at construction.

Choices where AWS is UNCONFIRMED (docs/aws-semantics.md §7), documented in ``docs/emulator.md``:
resources are ``VALID`` at once (no CREATING phase); a quota share's instance types need not
appear in the service environment; deleting a queue deletes its quota shares with it
(``refuse_queue_with_shares`` restores the earlier refusal).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from quota_constructs.api_shapes import parse_quota_share_arn, quota_share_arn
from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.errors import InvalidRequest, NotFound, refuse
from quota_constructs.local.state.fair_share import fair_share_problems
from quota_constructs.local.state.tags import TagStore
from quota_constructs.model import (
    MAX_INSTANCES_PER_TYPE,
    MAX_JOB_QUEUES,
    MAX_SCHEDULING_POLICIES,
    MAX_SERVICE_ENVIRONMENTS,
    NUM_INSTANCES,
    QUEUE_PRIORITY_RANGE,
    RUNNABLE_TIMEOUT_MINUTES_RANGE,
    JobQueueSpec,
    Problem,
    QuotaShareSpec,
    ShareState,
    check_capacity_limit,
    check_int_range,
    check_name,
    check_tags,
)

ENABLED = "ENABLED"
DISABLED = "DISABLED"
SAGEMAKER_TRAINING = "SAGEMAKER_TRAINING"
TERMINATE = "TERMINATE"
OBJECT_EXISTS = "Object already exists"
"""AWS's whole message for a duplicate policy, environment or queue name: AWS's own sample
helper compares it with ``==`` to skip what exists (docs/emulator.md, AWS's own code)."""
_CREATED = itertools.count(1)


def _created_field() -> Any:
    """A record's creation number: its stable place in listings (``handlers/pagination.py``)."""
    return field(default_factory=lambda: next(_CREATED), compare=False, repr=False)


@dataclass
class SchedulingPolicy:
    """A scheduling policy; its quota-share or fair-share policy is kept as the client sent it."""

    name: str
    arn: str
    quota_share_policy: Mapping[str, Any] | None
    fairshare_policy: Mapping[str, Any] | None
    created: int = _created_field()


@dataclass
class ServiceEnvironment:
    """A SAGEMAKER_TRAINING service environment and the queue it serves, if any."""

    name: str
    arn: str
    state: str
    capacity: dict[str, int]
    queue_arn: str | None = None
    created: int = _created_field()


@dataclass
class ShareRecord:
    """A quota share as the registry keeps it: its spec, ARN and queue."""

    spec: QuotaShareSpec
    arn: str
    queue_arn: str
    created: int = _created_field()


@dataclass
class JobQueue:
    """A quota-managed job queue, its service environment and its shares (declared order).

    ``time_limit_actions`` are the queue's ``jobStateTimeLimitActions`` entries as accepted.
    """

    name: str
    arn: str
    state: str
    priority: int
    scheduling_policy_arn: str | None
    """``None``: a FIFO queue without quota management (a ``NUM_INSTANCES`` environment)."""
    environment: ServiceEnvironment
    time_limit_actions: tuple[Mapping[str, Any], ...]
    shares: dict[str, ShareRecord] = field(default_factory=dict)
    created: int = _created_field()

    @property
    def quota_managed(self) -> bool:
        """Whether the queue has quota shares (a quota-share scheduling policy)."""
        return self.scheduling_policy_arn is not None

    def spec(self) -> JobQueueSpec:
        """The queue as the domain model sees it (current shares, priority)."""
        return JobQueueSpec(
            shares=tuple(s.spec for s in self.shares.values()), priority=self.priority
        )


class QueueListener(Protocol):
    """Follows the registry changes that the job side (one scheduler per queue) must apply."""

    def queue_created(self, queue: JobQueue) -> None: ...

    def queue_changed(self, queue: JobQueue) -> None: ...

    def share_changed(self, queue: JobQueue, share: ShareRecord) -> None: ...

    def share_deleted(self, queue: JobQueue, share: ShareRecord) -> None: ...

    def capacity_changed(self, queue: JobQueue, capacity: Mapping[str, int]) -> None: ...

    def environment_state_changed(self, queue: JobQueue, state: str) -> None: ...

    def queue_deleted(self, queue: JobQueue) -> None: ...


def _picked(items: Sequence[Any], wanted: Sequence[str] | None) -> list[Any]:
    """``items`` whose name or ARN is in ``wanted`` (all of them when ``wanted`` is empty)."""
    if not wanted:
        return list(items)
    return [i for i in items if i.name in wanted or i.arn in wanted]


def _capacity_problems(capacity: Mapping[str, int], path: str) -> list[Problem]:
    """Instance-type limits (quota management), or one ``NUM_INSTANCES`` limit (FIFO)."""
    if NUM_INSTANCES in capacity:
        return _num_instances_problems(capacity, path)
    problems: list[Problem] = []
    for index, (unit, count) in enumerate(capacity.items()):
        item = f"{path}[{index}]"
        problems += check_capacity_limit(
            unit, count, type_path=f"{item}.capacityUnit", count_path=f"{item}.maxCapacity"
        )
    return problems


def _num_instances_problems(capacity: Mapping[str, int], path: str) -> list[Problem]:
    if len(capacity) > 1:
        return [
            Problem(
                f"{path}.capacityUnit",
                ", ".join(capacity),
                f"{NUM_INSTANCES} (a queue without quota management) and instance types "
                "(quota management) cannot be mixed",
                f"send one limit with capacityUnit {NUM_INSTANCES}, or instance types only",
            )
        ]
    count = capacity[NUM_INSTANCES]
    return check_int_range(
        count, f"{path}[0].maxCapacity", 1, MAX_INSTANCES_PER_TYPE, what="max capacity"
    )


def _priority_problems(priority: int) -> list[Problem]:
    low, high = QUEUE_PRIORITY_RANGE
    return check_int_range(priority, "priority", low, high, what="priority")


def _time_limit_problems(actions: Sequence[Mapping[str, Any]]) -> list[Problem]:
    low, high = (m * 60 for m in RUNNABLE_TIMEOUT_MINUTES_RANGE)
    problems: list[Problem] = []
    for index, action in enumerate(actions):
        path = f"jobStateTimeLimitActions[{index}]"
        problems += check_int_range(
            action["maxTimeSeconds"], f"{path}.maxTimeSeconds", low, high, what="max time"
        )
        if action["action"] != TERMINATE:
            problems.append(
                Problem(
                    f"{path}.action",
                    action["action"],
                    "SAGEMAKER_TRAINING queues only support TERMINATE",
                    "set action: TERMINATE",
                )
            )
    return problems


class Registry:
    """Batch resources of one emulated account, with create/describe/update/delete rules."""

    def __init__(
        self,
        account: Account,
        tags: TagStore,
        listener: QueueListener,
        *,
        refuse_queue_with_shares: bool = False,
    ) -> None:
        self.account = account
        self.tags = tags
        self.listener = listener
        self.refuse_queue_with_shares = refuse_queue_with_shares
        self.policies: dict[str, SchedulingPolicy] = {}
        self.environments: dict[str, ServiceEnvironment] = {}
        self.queues: dict[str, JobQueue] = {}

    # --- lookups ------------------------------------------------------------------------------

    def queue(self, ref: str) -> JobQueue:
        """The job queue named or ARN'd by ``ref``; :class:`NotFound` listing known queues."""
        queue = self.queues.get(self.account.name_from(ref, "job-queue"))
        if queue is None:
            known = ", ".join(sorted(self.queues)) or "none"
            raise NotFound(
                f"jobQueue: no job queue {ref!r} (queues: {known}); "
                "pass a queue name or ARN from DescribeJobQueues"
            )
        return queue

    def environment(self, ref: str) -> ServiceEnvironment:
        """The service environment named or ARN'd by ``ref``; :class:`NotFound` otherwise."""
        env = self.environments.get(self.account.name_from(ref, "service-environment"))
        if env is None:
            known = ", ".join(sorted(self.environments)) or "none"
            raise NotFound(f"serviceEnvironment: no service environment {ref!r} (known: {known})")
        return env

    def policy(self, ref: str) -> SchedulingPolicy:
        """The scheduling policy with ARN (or name) ``ref``; :class:`NotFound` otherwise."""
        for policy in self.policies.values():
            if ref in (policy.arn, policy.name):
                return policy
        raise NotFound(f"schedulingPolicyArn: no scheduling policy {ref!r}")

    def share(self, arn: str) -> tuple[JobQueue, ShareRecord]:
        """The queue and share of a quota-share ARN; :class:`NotFound` when unknown."""
        parts = parse_quota_share_arn(arn)
        queue = None if parts is None else self.queues.get(parts.queue)
        if parts is not None and queue is not None and parts.share in queue.shares:
            return queue, queue.shares[parts.share]
        example = quota_share_arn("job-queue/<queue>", "<share>")
        raise NotFound(
            f"quotaShareArn: quota share {arn!r} does not exist; use an ARN from "
            f"ListQuotaShares ({example})"
        )

    def scheduling_policies(self, arns: Sequence[str] | None = None) -> list[SchedulingPolicy]:
        """Policies in creation order, only those with an ARN in ``arns`` when given."""
        policies = list(self.policies.values())
        return policies if arns is None else [p for p in policies if p.arn in arns]

    def service_environments(self, wanted: Sequence[str] | None = None) -> list[ServiceEnvironment]:
        """Environments in creation order, only those named or ARN'd in ``wanted`` if given."""
        return _picked(list(self.environments.values()), wanted)

    def job_queues(self, wanted: Sequence[str] | None = None) -> list[JobQueue]:
        """Queues in creation order, only those named or ARN'd in ``wanted`` if given."""
        return _picked(list(self.queues.values()), wanted)

    @staticmethod
    def _check_new_tags(tags: Mapping[str, str]) -> None:
        refuse(check_tags(dict(tags)), context="tags")

    # --- scheduling policies -------------------------------------------------------------------

    def create_scheduling_policy(
        self,
        name: str,
        *,
        quota_share_policy: Mapping[str, Any] | None = None,
        fairshare_policy: Mapping[str, Any] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> SchedulingPolicy:
        """A new policy with exactly one of a quota-share or a fair-share policy."""
        refuse(check_name(name, "name", what="scheduling policy name"), context="name")
        if name in self.policies:
            raise InvalidRequest(OBJECT_EXISTS)
        _check_account_quota("name", len(self.policies), MAX_SCHEDULING_POLICIES)
        if quota_share_policy and fairshare_policy:
            raise InvalidRequest(
                "a scheduling policy has either quotaSharePolicy or fairsharePolicy, not both"
            )
        refuse(fair_share_problems(fairshare_policy or {}), context="CreateSchedulingPolicy")
        self._check_new_tags(tags or {})
        policy = SchedulingPolicy(
            name, self.account.scheduling_policy(name), quota_share_policy, fairshare_policy
        )
        self.policies[name] = policy
        self.tags.add(policy.arn, tags or {})
        return policy

    def update_scheduling_policy(
        self,
        ref: str,
        *,
        quota_share_policy: Mapping[str, Any] | None = None,
        fairshare_policy: Mapping[str, Any] | None = None,
    ) -> SchedulingPolicy:
        """Replace the policy's settings; its type (quota share or fair share) cannot change."""
        policy = self.policy(ref)
        if fairshare_policy and policy.quota_share_policy:
            raise InvalidRequest(
                f"scheduling policy {policy.name!r} is a quota-share policy; its type cannot be "
                "switched to fair share (create a new policy instead)"
            )
        if quota_share_policy and policy.fairshare_policy:
            raise InvalidRequest(
                f"scheduling policy {policy.name!r} is a fair-share policy; its type cannot be "
                "switched to quota share (create a new policy instead)"
            )
        refuse(fair_share_problems(fairshare_policy or {}), context="UpdateSchedulingPolicy")
        policy.quota_share_policy = quota_share_policy or policy.quota_share_policy
        policy.fairshare_policy = fairshare_policy or policy.fairshare_policy
        return policy

    def delete_scheduling_policy(self, ref: str) -> None:
        """Delete a policy no job queue uses."""
        policy = self.policy(ref)
        users = [q.name for q in self.queues.values() if q.scheduling_policy_arn == policy.arn]
        if users:
            raise InvalidRequest(
                f"scheduling policy {policy.name!r} is used by job queue(s) {', '.join(users)}; "
                "delete those queues first"
            )
        del self.policies[policy.name]
        self.tags.remove(policy.arn)

    # --- service environments ------------------------------------------------------------------

    def create_service_environment(
        self,
        name: str,
        capacity: Mapping[str, int],
        *,
        state: str = ENABLED,
        tags: Mapping[str, str] | None = None,
    ) -> ServiceEnvironment:
        """A new environment with ``capacity`` (instance type -> instances, at least one)."""
        problems = check_name(name, "serviceEnvironmentName", what="service environment name")
        problems += _capacity_problems(capacity, "capacityLimits")
        refuse(problems, context="CreateServiceEnvironment")
        if not capacity:
            raise InvalidRequest(
                "capacityLimits: a service environment needs a capacity limit: instance types "
                "for quota management, e.g. {capacityUnit: ml.g5.xlarge, maxCapacity: 4}, or "
                f"one {{capacityUnit: {NUM_INSTANCES}, maxCapacity: 4}} for a FIFO queue"
            )
        if name in self.environments:
            raise InvalidRequest(OBJECT_EXISTS)
        _check_account_quota(
            "serviceEnvironmentName", len(self.environments), MAX_SERVICE_ENVIRONMENTS
        )
        self._check_new_tags(tags or {})
        env = ServiceEnvironment(
            name, self.account.service_environment(name), state, dict(capacity)
        )
        self.environments[name] = env
        self.tags.add(env.arn, tags or {})
        return env

    def update_service_environment(
        self, ref: str, *, capacity: Mapping[str, int] | None = None, state: str | None = None
    ) -> ServiceEnvironment:
        """Change capacity (its queue's scheduler follows) and/or state."""
        env = self.environment(ref)
        if capacity is not None:
            refuse(
                _capacity_problems(capacity, "capacityLimits"), context="UpdateServiceEnvironment"
            )
            if env.queue_arn is not None and (NUM_INSTANCES in capacity) != (
                NUM_INSTANCES in env.capacity
            ):
                raise InvalidRequest(
                    f"capacityLimits: service environment {env.name!r} serves job queue "
                    f"{env.queue_arn}; its capacity unit ({', '.join(env.capacity)}) cannot "
                    f"switch between {NUM_INSTANCES} and instance types while a queue uses it"
                )
            env.capacity = dict(capacity)
            if env.queue_arn is not None:
                self.listener.capacity_changed(self.queue(env.queue_arn), env.capacity)
        if state and state != env.state:
            env.state = state
            if env.queue_arn is not None:
                self.listener.environment_state_changed(self.queue(env.queue_arn), state)
        return env

    def delete_service_environment(self, ref: str) -> None:
        """Delete a DISABLED environment that no queue uses."""
        env = self.environment(ref)
        if env.state != DISABLED:
            raise InvalidRequest(
                f"service environment {env.name!r} is ENABLED; "
                "disable it first (UpdateServiceEnvironment state=DISABLED)"
            )
        if env.queue_arn is not None:
            raise InvalidRequest(
                f"service environment {env.name!r} is still used by job queue {env.queue_arn}; "
                "delete the queue first"
            )
        del self.environments[env.name]
        self.tags.remove(env.arn)

    # --- job queues ----------------------------------------------------------------------------

    def create_job_queue(
        self,
        name: str,
        *,
        priority: int,
        queue_type: str | None,
        service_environments: Sequence[str],
        compute_environments: Sequence[str] = (),
        scheduling_policy: str | None,
        time_limit_actions: Sequence[Mapping[str, Any]] = (),
        state: str = ENABLED,
        tags: Mapping[str, str] | None = None,
    ) -> JobQueue:
        """A quota-managed SAGEMAKER_TRAINING queue on one free service environment.

        ``service_environments`` and ``compute_environments`` are names or ARNs in order;
        ``scheduling_policy`` must be a quota-share policy's ARN; ``time_limit_actions`` are
        ``jobStateTimeLimitActions`` entries (TERMINATE only, 10 minutes to a day).
        """
        problems = check_name(name, "jobQueueName", what="job queue name")
        refuse(problems + _priority_problems(priority), context="CreateJobQueue")
        if name in self.queues:
            raise InvalidRequest(OBJECT_EXISTS)
        _check_account_quota("jobQueueName", len(self.queues), MAX_JOB_QUEUES)
        if service_environments and compute_environments:
            raise InvalidRequest(
                "serviceEnvironmentOrder: a job queue can't have both a serviceEnvironmentOrder "
                "and a computeEnvironmentOrder; a quota-managed queue uses one service environment"
            )
        if queue_type != SAGEMAKER_TRAINING or compute_environments:
            raise InvalidRequest(
                f"jobQueueType: the emulator serves SAGEMAKER_TRAINING queues only "
                f"(got {queue_type!r}); set jobQueueType=SAGEMAKER_TRAINING "
                "and serviceEnvironmentOrder"
            )
        env = self._free_environment(service_environments)
        policy_arn = self._policy_for(env, scheduling_policy)
        refuse(_time_limit_problems(time_limit_actions), context="jobStateTimeLimitActions")
        self._check_new_tags(tags or {})
        queue = JobQueue(
            name=name,
            arn=self.account.job_queue(name),
            state=state,
            priority=priority,
            scheduling_policy_arn=policy_arn,
            environment=env,
            time_limit_actions=tuple(dict(a) for a in time_limit_actions),
        )
        self.queues[name] = queue
        env.queue_arn = queue.arn
        self.tags.add(queue.arn, tags or {})
        self.listener.queue_created(queue)
        return queue

    def _free_environment(self, refs: Sequence[str]) -> ServiceEnvironment:
        if len(refs) != 1:
            raise InvalidRequest(
                f"serviceEnvironmentOrder: a quota-managed job queue needs exactly one service "
                f"environment (got {len(refs)})"
            )
        env = self.environment(refs[0])
        if env.queue_arn is not None:
            raise InvalidRequest(
                f"serviceEnvironmentOrder: service environment {env.name!r} is already connected "
                f"to job queue {env.queue_arn}; a quota-managed environment serves one queue"
            )
        return env

    def _policy_for(self, env: ServiceEnvironment, ref: str | None) -> str | None:
        """The queue's quota-share policy ARN; ``None`` (FIFO) for a ``NUM_INSTANCES``
        environment without a policy."""
        if NUM_INSTANCES not in env.capacity:
            return self._quota_share_policy(ref).arn
        if ref:
            policy = self.policy(ref)
            if policy.quota_share_policy:
                raise InvalidRequest(
                    f"schedulingPolicyArn: service environment {env.name!r} counts capacity in "
                    f"{NUM_INSTANCES}; quota management ({policy.name!r}) needs instance-type "
                    "capacity limits; leave schedulingPolicyArn out for a FIFO queue, or give "
                    "the environment instance-type limits such as ml.g5.xlarge"
                )
            raise InvalidRequest(
                f"schedulingPolicyArn: {policy.name!r} is a fair-share policy; fair-share "
                "SAGEMAKER_TRAINING queues are not emulated (docs/emulator.md); leave "
                "schedulingPolicyArn out for a FIFO queue"
            )
        return None

    def _quota_share_policy(self, ref: str | None) -> SchedulingPolicy:
        if not ref:
            raise InvalidRequest(
                "schedulingPolicyArn: a quota-managed job queue needs a scheduling policy with "
                "quotaSharePolicy; create one with CreateSchedulingPolicy"
            )
        policy = self.policy(ref)
        if not policy.quota_share_policy:
            raise InvalidRequest(
                f"schedulingPolicyArn: scheduling policy {policy.name!r} has no quotaSharePolicy; "
                "quota shares need a quota-share scheduling policy"
            )
        return policy

    def update_job_queue(
        self,
        ref: str,
        *,
        priority: int | None = None,
        scheduling_policy: str | None = None,
        time_limit_actions: Sequence[Mapping[str, Any]] | None = None,
        state: str | None = None,
    ) -> JobQueue:
        """Change what is given (``None``: unchanged); the queue's scheduler follows."""
        queue = self.queue(ref)
        if priority is not None:
            refuse(_priority_problems(priority), context="UpdateJobQueue")
            queue.priority = priority
        if scheduling_policy == "":
            raise InvalidRequest(
                f"schedulingPolicyArn: the scheduling policy of job queue {queue.name!r} can be "
                "replaced but not removed; pass another quota-share policy's ARN or leave it out"
            )
        if scheduling_policy and not queue.quota_managed:
            raise InvalidRequest(
                f"schedulingPolicyArn: job queue {queue.name!r} is a FIFO queue (a "
                f"{NUM_INSTANCES} service environment); its scheduling policy cannot be set"
            )
        if scheduling_policy:
            policy = self.policy(scheduling_policy)
            if not policy.quota_share_policy:
                raise InvalidRequest(
                    f"schedulingPolicyArn: {policy.name!r} is not a quota-share policy"
                )
            queue.scheduling_policy_arn = policy.arn
        if time_limit_actions is not None:
            refuse(_time_limit_problems(time_limit_actions), context="jobStateTimeLimitActions")
            queue.time_limit_actions = tuple(dict(a) for a in time_limit_actions)
        if state:
            queue.state = state
        self.listener.queue_changed(queue)
        return queue

    def delete_job_queue(self, ref: str) -> None:
        """Delete a DISABLED queue with its quota shares (UNCONFIRMED; refused while it has
        shares when ``refuse_queue_with_shares``); its jobs are terminated ("All jobs in the
        queue are eventually terminated", AWS) and its environment is free again."""
        queue = self.queue(ref)
        if queue.state != DISABLED:
            raise InvalidRequest(
                f"job queue {queue.name!r} is ENABLED; disable it first (UpdateJobQueue "
                "state=DISABLED)"
            )
        if queue.shares and self.refuse_queue_with_shares:
            raise InvalidRequest(
                f"job queue {queue.name!r} still has quota shares "
                f"({', '.join(queue.shares)}); delete them first"
            )
        self.listener.queue_deleted(queue)
        for share in queue.shares.values():
            self.tags.remove(share.arn)
        queue.shares.clear()
        del self.queues[queue.name]
        self.tags.remove(queue.arn)
        queue.environment.queue_arn = None

    # --- quota shares --------------------------------------------------------------------------

    def create_quota_share(
        self, queue_ref: str, spec: QuotaShareSpec, *, tags: Mapping[str, str] | None = None
    ) -> ShareRecord:
        """Add ``spec`` to the queue; the share and the queue with it must keep the rules."""
        queue = self.queue(queue_ref)
        if not queue.quota_managed:
            raise InvalidRequest(
                f"jobQueue: job queue {queue.name!r} has no quota management (a FIFO queue of "
                f"a {NUM_INSTANCES} service environment); create quota shares on a queue with a "
                "quotaSharePolicy"
            )
        if spec.name in queue.shares:
            raise InvalidRequest(
                f"Quota share {spec.name!r} already exists on job queue {queue.name!r}; "
                "choose another name or update the existing share"
            )
        candidate = JobQueueSpec(shares=(*queue.spec().shares, spec), priority=queue.priority)
        problems = [p for p in candidate.problems() if not p.path.startswith("shares[")]
        refuse(problems + spec.problems(), context=f"CreateQuotaShare {spec.name!r}")
        self._check_new_tags(tags or {})
        share = ShareRecord(spec, self.account.quota_share(queue.name, spec.name), queue.arn)
        queue.shares[spec.name] = share
        self.tags.add(share.arn, tags or {})
        self.listener.share_changed(queue, share)
        return share

    def update_quota_share(self, arn: str, spec: QuotaShareSpec) -> ShareRecord:
        """Replace the share's settings with ``spec`` (same name); its scheduler follows."""
        queue, share = self.share(arn)
        if spec.name != share.spec.name:
            raise InvalidRequest(
                f"quotaShareName: quota share {share.spec.name!r} cannot be renamed to "
                f"{spec.name!r}; create a new share instead"
            )
        refuse(spec.problems(), context=f"UpdateQuotaShare {spec.name!r}")
        share.spec = spec
        self.listener.share_changed(queue, share)
        return share

    def delete_quota_share(self, arn: str) -> None:
        """Delete a DISABLED share; its jobs are terminated by its scheduler."""
        queue, share = self.share(arn)
        if share.spec.state is not ShareState.DISABLED:
            raise InvalidRequest(
                f"quota share {share.spec.name!r} is ENABLED; disable it first "
                "(UpdateQuotaShare state=DISABLED)"
            )
        self.listener.share_deleted(queue, share)
        del queue.shares[share.spec.name]
        self.tags.remove(share.arn)


def _check_account_quota(field: str, count: int, limit: int) -> None:
    """Refuse a new resource once the account holds ``limit`` of them (AWS Batch's quotas)."""
    if count >= limit:
        what, source = _QUOTAS[field]
        raise InvalidRequest(
            f"{field}: an account has at most {limit} {what} per Region ({source}) and this "
            f"one has {count}; delete one first"
        )


_QUOTAS = {
    "jobQueueName": ("job queues", "AWS Batch's service quota, not adjustable"),
    "serviceEnvironmentName": ("service environments", "AWS Batch's service quota, not adjustable"),
    "name": ("scheduling policies", "the emulator's bound: AWS documents none"),
}
