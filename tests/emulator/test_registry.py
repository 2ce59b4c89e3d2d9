"""The registry built directly, without HTTP: its create/update/delete rules and domain errors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.errors import InvalidRequest, NotFound
from quota_constructs.local.state.registry import (
    DISABLED,
    SAGEMAKER_TRAINING,
    JobQueue,
    Registry,
    ShareRecord,
)
from quota_constructs.local.state.tags import TagStore
from quota_constructs.model import QuotaShareSpec, ShareState, SharingStrategy
from tests.emulator.helpers import FIFO, GPU, create_queue

QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/q"


class RecordingListener:
    """A :class:`~quota_constructs.local.state.registry.QueueListener` noting what it was told."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def queue_created(self, queue: JobQueue) -> None:
        self.calls.append(("queue_created", queue.name))

    def queue_changed(self, queue: JobQueue) -> None:
        self.calls.append(("queue_changed", queue.name))

    def share_changed(self, queue: JobQueue, share: ShareRecord) -> None:
        self.calls.append(("share_changed", queue.name, share.spec.name))

    def share_deleted(self, queue: JobQueue, share: ShareRecord) -> None:
        self.calls.append(("share_deleted", queue.name, share.spec.name))

    def capacity_changed(self, queue: JobQueue, capacity: Mapping[str, int]) -> None:
        self.calls.append(("capacity_changed", queue.name, str(dict(capacity))))

    def environment_state_changed(self, queue: JobQueue, state: str) -> None:
        self.calls.append(("environment_state_changed", queue.name, state))

    def queue_deleted(self, queue: JobQueue) -> None:
        self.calls.append(("queue_deleted", queue.name))


@pytest.fixture
def listener() -> RecordingListener:
    return RecordingListener()


@pytest.fixture
def tags() -> TagStore:
    return TagStore()


@pytest.fixture
def registry(tags: TagStore, listener: RecordingListener) -> Registry:
    return Registry(Account(), tags, listener)


def share(
    name: str = "a", *, state: ShareState = ShareState.ENABLED, borrow_limit: int | None = None
) -> QuotaShareSpec:
    """A RESERVE share of one GPU."""
    return QuotaShareSpec(
        name, {GPU: 1}, SharingStrategy.RESERVE, borrow_limit=borrow_limit, state=state
    )


def test_a_queue_and_its_share_get_account_arns_and_the_listener_hears_of_them(
    registry: Registry, listener: RecordingListener, tags: TagStore
) -> None:
    queue = create_queue(registry)
    record = registry.create_quota_share("q", share(), tags={"team": "a"})

    assert queue.arn == QUEUE_ARN and queue.environment.queue_arn == QUEUE_ARN
    assert record.arn == f"{QUEUE_ARN}/quota-share/a" and record.queue_arn == QUEUE_ARN
    assert registry.queue(QUEUE_ARN) is registry.queue("q") is queue
    assert registry.share(record.arn) == (queue, record)
    assert tags.of_resource(record.arn) == {"team": "a"}
    assert listener.calls == [("queue_created", "q"), ("share_changed", "q", "a")]


def test_lookups_of_unknown_resources_are_not_found_naming_what_exists(registry: Registry) -> None:
    create_queue(registry)

    with pytest.raises(NotFound, match=r"no job queue 'other' \(queues: q\)"):
        registry.queue("other")
    with pytest.raises(NotFound, match=r"no service environment 'other' \(known: q-env\)"):
        registry.environment("other")
    with pytest.raises(NotFound, match="no scheduling policy 'other'"):
        registry.policy("other")
    with pytest.raises(NotFound, match=r"quota share .*/quota-share/missing' does not exist"):
        registry.share(f"{QUEUE_ARN}/quota-share/missing")


def test_a_scheduling_policy_is_one_of_quota_share_or_fair_share(registry: Registry) -> None:
    registry.create_scheduling_policy("p", quota_share_policy=FIFO)

    with pytest.raises(InvalidRequest, match=r"^Object already exists$"):
        registry.create_scheduling_policy("p", quota_share_policy=FIFO)
    with pytest.raises(InvalidRequest, match="either quotaSharePolicy or fairsharePolicy"):
        registry.create_scheduling_policy(
            "both", quota_share_policy=FIFO, fairshare_policy={"shareDecaySeconds": 0}
        )
    with pytest.raises(InvalidRequest, match="scheduling policy name must be 1-128 characters"):
        registry.create_scheduling_policy("bad name!", quota_share_policy=FIFO)
    with pytest.raises(InvalidRequest, match="shareDecaySeconds: must be between 0 and 604800"):
        registry.create_scheduling_policy("fs", fairshare_policy={"shareDecaySeconds": -1})
    with pytest.raises(InvalidRequest, match="its type cannot be switched to fair share"):
        registry.update_scheduling_policy("p", fairshare_policy={"shareDecaySeconds": 0})
    assert [p.name for p in registry.scheduling_policies()] == ["p"]


def test_a_scheduling_policy_in_use_cannot_be_deleted(registry: Registry) -> None:
    queue = create_queue(registry)

    with pytest.raises(InvalidRequest, match=r"used by job queue\(s\) q; delete those queues"):
        registry.delete_scheduling_policy("q-policy")
    registry.update_job_queue("q", state=DISABLED)
    registry.delete_job_queue("q")
    assert queue.scheduling_policy_arn is not None
    registry.delete_scheduling_policy(queue.scheduling_policy_arn)
    with pytest.raises(NotFound):
        registry.policy("q-policy")


def test_a_service_environment_needs_valid_capacity_and_a_unique_name(registry: Registry) -> None:
    registry.create_service_environment("env", {GPU: 2})

    with pytest.raises(
        InvalidRequest,
        match=r"a service environment needs a capacity limit: instance types for quota",
    ):
        registry.create_service_environment("empty", {})
    with pytest.raises(InvalidRequest, match=r"capacityLimits\[0\].capacityUnit: capacity unit"):
        registry.create_service_environment("typo", {"ml.nope": 1})
    with pytest.raises(InvalidRequest, match=r"^Object already exists$"):
        registry.create_service_environment("env", {GPU: 1})


def test_a_capacity_change_reaches_the_listener_of_the_connected_queue(
    registry: Registry, listener: RecordingListener
) -> None:
    create_queue(registry)

    env = registry.update_service_environment("q-env", capacity={GPU: 5})

    assert env.capacity == {GPU: 5}
    assert listener.calls[-1] == ("capacity_changed", "q", str({GPU: 5}))


def test_a_service_environment_is_deleted_only_disabled_and_free(
    registry: Registry, tags: TagStore
) -> None:
    queue = create_queue(registry)

    with pytest.raises(InvalidRequest, match="is ENABLED; disable it first"):
        registry.delete_service_environment("q-env")
    registry.update_service_environment("q-env", state=DISABLED)
    with pytest.raises(InvalidRequest, match=f"still used by job queue {QUEUE_ARN}"):
        registry.delete_service_environment("q-env")
    registry.update_job_queue("q", state=DISABLED)
    registry.delete_job_queue("q")
    registry.delete_service_environment("q-env")

    assert registry.service_environments() == []
    with pytest.raises(NotFound):
        tags.of_resource(queue.environment.arn)


def test_a_job_queue_needs_one_free_environment_and_a_quota_share_policy(
    registry: Registry,
) -> None:
    create_queue(registry)
    registry.create_scheduling_policy("fair", fairshare_policy={"shareDecaySeconds": 0})
    registry.create_service_environment("free", {GPU: 1})

    def create(
        *,
        priority: int = 1,
        queue_type: str = SAGEMAKER_TRAINING,
        service_environments: Sequence[str] = ("free",),
        scheduling_policy: str | None = "q-policy",
        time_limit_actions: Sequence[Mapping[str, Any]] = (),
    ) -> JobQueue:
        return registry.create_job_queue(
            "q2",
            priority=priority,
            queue_type=queue_type,
            service_environments=service_environments,
            scheduling_policy=scheduling_policy,
            time_limit_actions=time_limit_actions,
        )

    with pytest.raises(InvalidRequest, match="serves SAGEMAKER_TRAINING queues only"):
        create(queue_type="EC2")
    with pytest.raises(InvalidRequest, match="'q-env' is already connected to job queue"):
        create(service_environments=["q-env"])
    with pytest.raises(InvalidRequest, match=r"exactly one service environment \(got 2\)"):
        create(service_environments=["free", "q-env"])
    with pytest.raises(NotFound, match="no service environment 'missing'"):
        create(service_environments=["missing"])
    with pytest.raises(InvalidRequest, match="needs a scheduling policy with quotaSharePolicy"):
        create(scheduling_policy=None)
    with pytest.raises(InvalidRequest, match="'fair' has no quotaSharePolicy"):
        create(scheduling_policy="fair")
    with pytest.raises(InvalidRequest, match="priority must be an integer between 0 and 1000"):
        create(priority=5000)
    with pytest.raises(InvalidRequest, match="only support TERMINATE"):
        create(time_limit_actions=[{"maxTimeSeconds": 600, "action": "CANCEL"}])
    with pytest.raises(InvalidRequest, match=r"^Object already exists$"):
        registry.create_job_queue(
            "q",
            priority=1,
            queue_type=SAGEMAKER_TRAINING,
            service_environments=["free"],
            scheduling_policy="q-policy",
        )
    assert [q.name for q in registry.job_queues()] == ["q"]
    assert create().environment.name == "free"


def test_a_job_queue_update_changes_what_is_given_and_keeps_its_policy(
    registry: Registry, listener: RecordingListener
) -> None:
    queue = create_queue(registry)

    registry.update_job_queue("q", priority=7)

    assert (queue.priority, queue.state) == (7, "ENABLED")
    assert listener.calls[-1] == ("queue_changed", "q")
    with pytest.raises(InvalidRequest, match="can be replaced but not removed"):
        registry.update_job_queue("q", scheduling_policy="")
    with pytest.raises(InvalidRequest, match="between 600 and 86400"):
        registry.update_job_queue("q", time_limit_actions=[{"maxTimeSeconds": 60, "action": "x"}])
    assert queue.time_limit_actions == ()


def test_a_job_queue_is_deleted_only_disabled_and_with_its_shares(
    registry: Registry, listener: RecordingListener
) -> None:
    queue = create_queue(registry)
    registry.create_quota_share("q", share())

    with pytest.raises(InvalidRequest, match="job queue 'q' is ENABLED; disable it first"):
        registry.delete_job_queue("q")
    registry.update_job_queue("q", state=DISABLED)
    registry.delete_job_queue("q")

    assert registry.job_queues() == [] and queue.environment.queue_arn is None
    assert listener.calls[-1] == ("queue_deleted", "q")
    with pytest.raises(NotFound):
        registry.share(f"{QUEUE_ARN}/quota-share/a")


def test_a_queue_with_shares_is_refused_when_asked(
    registry: Registry, listener: RecordingListener
) -> None:
    registry.refuse_queue_with_shares = True
    queue = create_queue(registry)
    registry.create_quota_share("q", share())
    registry.update_job_queue("q", state=DISABLED)
    with pytest.raises(InvalidRequest, match=r"still has quota shares \(a\); delete them first"):
        registry.delete_job_queue("q")
    disabled = share(state=ShareState.DISABLED)
    record = registry.update_quota_share(f"{QUEUE_ARN}/quota-share/a", disabled)
    registry.delete_quota_share(record.arn)
    registry.delete_job_queue("q")

    assert registry.job_queues() == [] and queue.environment.queue_arn is None
    assert listener.calls[-2:] == [("share_deleted", "q", "a"), ("queue_deleted", "q")]


def test_quota_shares_keep_the_queues_and_the_models_rules(registry: Registry) -> None:
    create_queue(registry)
    for index in range(20):
        registry.create_quota_share("q", share(f"s{index}"))

    with pytest.raises(InvalidRequest, match="already exists on job queue 'q'"):
        registry.create_quota_share("q", share("s0"))
    with pytest.raises(InvalidRequest, match=r"needs 1 to 20 quota shares \(got 21\)"):
        registry.create_quota_share("q", share("s20"))
    with pytest.raises(InvalidRequest, match="borrow_limit is only allowed with strategy"):
        registry.update_quota_share(f"{QUEUE_ARN}/quota-share/s0", share("s0", borrow_limit=50))
    assert len(registry.queue("q").shares) == 20


def test_a_quota_share_is_not_renamed_and_is_deleted_only_disabled(
    registry: Registry, listener: RecordingListener
) -> None:
    create_queue(registry)
    arn = registry.create_quota_share("q", share()).arn

    with pytest.raises(InvalidRequest, match="'a' cannot be renamed to 'b'"):
        registry.update_quota_share(arn, share("b"))
    with pytest.raises(InvalidRequest, match="quota share 'a' is ENABLED; disable it first"):
        registry.delete_quota_share(arn)
    with pytest.raises(NotFound, match="does not exist"):
        registry.update_quota_share(f"{QUEUE_ARN}/quota-share/b", share("b"))
    record = registry.update_quota_share(arn, share(state=ShareState.DISABLED))

    assert record.spec.state is ShareState.DISABLED
    assert listener.calls[-1] == ("share_changed", "q", "a")
