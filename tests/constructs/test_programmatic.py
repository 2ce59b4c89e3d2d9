"""Programmatic use as good as files: the public names, enum props given as strings, a share
checked against its service environment, and the SSM contract of a queue built in code."""

from __future__ import annotations

import re
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match

import quota_constructs
from quota_constructs import (
    QuotaManagedJobQueue,
    QuotaManagedTrainingQueue,
    QuotaShare,
    QuotaShareSchedulingPolicy,
    SageMakerTrainingServiceEnvironment,
    ShareState,
    SharingStrategy,
)
from quota_constructs.model import QuotaConfigError, QuotaShareSpec
from tests.constructs.helpers import ROOT, resources, share


def queue_on(stack: cdk.Stack, capacity: dict[str, int]) -> QuotaManagedJobQueue:
    env = SageMakerTrainingServiceEnvironment(stack, "Env", capacity_limits=capacity)
    policy = QuotaShareSchedulingPolicy(stack, "Policy")
    return QuotaManagedJobQueue(stack, "Queue", service_environment=env, scheduling_policy=policy)


def add_share(stack: cdk.Stack, queue: Any, **props: Any) -> QuotaShare:
    defaults: dict[str, Any] = {
        "quota_share_name": "vision",
        "capacity_limits": {"ml.g5.12xlarge": 4},
        "strategy": "LEND",
    }
    return QuotaShare(stack, "Share", job_queue=queue, **{**defaults, **props})


def test_every_construct_the_reference_documents_is_importable_from_the_package() -> None:
    reference = (ROOT / "docs" / "constructs.md").read_text()
    documented = set(re.findall(r"^#{2,3} `(\w+)`", reference, flags=re.MULTILINE))
    assert {"QuotaShareCalendar", "QuotaManagedTrainingQueue", "OrganisationStack"} <= documented
    assert [name for name in sorted(documented) if not hasattr(quota_constructs, name)] == []
    assert {"load_organisation", "build_app", "PipelineStack"} <= set(quota_constructs.__all__)


@pytest.mark.parametrize(
    ("given", "expected"),
    [("lend_and_borrow", SharingStrategy.LEND_AND_BORROW), ("Reserve", SharingStrategy.RESERVE)],
)
def test_a_strategy_string_is_taken_in_any_case(
    stack: cdk.Stack, given: str, expected: SharingStrategy
) -> None:
    queue = queue_on(stack, {"ml.g5.12xlarge": 4})
    assert add_share(stack, queue, strategy=given, state="disabled").spec.strategy is expected
    [props] = [r["Properties"] for r in resources(stack, "AWS::Batch::QuotaShare").values()]
    assert props["ResourceSharingConfiguration"]["Strategy"] == expected.value
    assert props["State"] == ShareState.DISABLED.value


def test_rejects_an_unknown_strategy_naming_the_prop_and_the_values(stack: cdk.Stack) -> None:
    queue = queue_on(stack, {"ml.g5.12xlarge": 4})
    with pytest.raises(QuotaConfigError) as error:
        add_share(stack, queue, strategy="BORROW")
    assert str(error.value) == (
        "Test/Share: strategy: not a valid sharing strategy (got 'BORROW'); "
        "fix: use one of RESERVE, LEND, LEND_AND_BORROW (any case)"
    )


def test_rejects_an_unknown_state_naming_the_prop_and_the_values(stack: cdk.Stack) -> None:
    queue = queue_on(stack, {"ml.g5.12xlarge": 4})
    with pytest.raises(QuotaConfigError, match=r"state: .* fix: use one of ENABLED, DISABLED"):
        add_share(stack, queue, state="PAUSED")


def test_the_idle_strategy_of_a_policy_is_taken_in_any_case_or_rejected(stack: cdk.Stack) -> None:
    policy = QuotaShareSchedulingPolicy(stack, "Fifo", idle_resource_assignment_strategy="fifo")
    assert policy.idle_resource_assignment_strategy.value == "FIFO"
    with pytest.raises(QuotaConfigError) as error:
        QuotaShareSchedulingPolicy(stack, "Lifo", idle_resource_assignment_strategy="LIFO")
    assert "Test/Lifo: idle_resource_assignment_strategy: " in str(error.value)
    assert "fix: use one of FIFO (any case)" in str(error.value)


def test_rejects_a_model_spec_with_an_unknown_strategy_naming_the_field() -> None:
    with pytest.raises(QuotaConfigError) as error:
        QuotaShareSpec(name="a", capacity={"ml.g5.xlarge": 1}, strategy="BORROW")  # type: ignore[arg-type]
    assert "strategy: not a valid sharing strategy (got 'BORROW')" in str(error.value)
    assert "use one of RESERVE, LEND, LEND_AND_BORROW" in str(error.value)


def test_rejects_a_share_of_an_instance_type_its_service_environment_lacks(
    stack: cdk.Stack,
) -> None:
    queue = queue_on(stack, {"ml.g5.12xlarge": 4})
    with pytest.raises(QuotaConfigError) as error:
        add_share(stack, queue, capacity_limits={"ml.g5.12xlarge": 4, "ml.p4d.24xlarge": 2})
    assert str(error.value) == (
        "Test/Share: capacity_limits.ml.p4d.24xlarge: service environment Test/Env has no "
        "ml.p4d.24xlarge capacity limit (it has ml.g5.12xlarge: 4); jobs of this share on "
        "ml.p4d.24xlarge could never run (got 2); fix: add ml.p4d.24xlarge to the service "
        "environment's capacity limits, or remove it from the share"
    )


def test_warns_of_a_share_limit_above_its_service_environments(stack: cdk.Stack) -> None:
    queue = queue_on(stack, {"ml.g5.12xlarge": 4})
    add_share(stack, queue, capacity_limits={"ml.g5.12xlarge": 6})
    Annotations.from_stack(stack).has_warning(
        "/Test/Share",
        Match.string_like_regexp(
            "quota share vision: 6 x ml.g5.12xlarge, but service environment Test/Env has 4"
        ),
    )


def test_a_share_on_an_imported_environment_is_not_checked_against_it(stack: cdk.Stack) -> None:
    env = SageMakerTrainingServiceEnvironment.from_service_environment_arn(
        stack, "Env", "arn:aws:batch:us-east-1:123456789012:service-environment/se"
    )
    policy = QuotaShareSchedulingPolicy(stack, "Policy")
    queue = QuotaManagedJobQueue(stack, "Queue", service_environment=env, scheduling_policy=policy)
    assert add_share(stack, queue, capacity_limits={"ml.p4d.24xlarge": 2}).spec.capacity


def parameter_names(stack: cdk.Stack) -> dict[str, Any]:
    return {
        r["Properties"]["Name"]: r["Properties"]["Value"]
        for r in resources(stack, "AWS::SSM::Parameter").values()
    }


def test_a_queue_built_in_code_publishes_the_organisation_contract(stack: cdk.Stack) -> None:
    queue = QuotaManagedTrainingQueue(
        stack, "Queue", spec=[share("A"), share("B", "RESERVE")], organisation="ml-team"
    )
    published = parameter_names(stack)
    assert set(published) == {
        "/quota/ml-team/job-queue/name",
        "/quota/ml-team/job-queue/arn",
        "/quota/ml-team/quota-shares/A/arn",
        "/quota/ml-team/quota-shares/B/arn",
    }
    assert stack.resolve(queue.job_queue_arn) == published["/quota/ml-team/job-queue/arn"]
    assert queue.organisation == "ml-team"


def test_publish_parameters_is_the_same_contract_later(stack: cdk.Stack) -> None:
    queue = QuotaManagedTrainingQueue(stack, "Queue", spec=[share("A")])
    assert queue.node.try_find_child("Parameters") is None  # nothing published by default
    queue.publish_parameters("ml-team")
    assert "/quota/ml-team/quota-shares/A/arn" in parameter_names(stack)


def test_rejects_publishing_twice_or_under_a_bad_organisation_name(stack: cdk.Stack) -> None:
    queue = QuotaManagedTrainingQueue(stack, "Queue", spec=[share("A")], organisation="ml-team")
    with pytest.raises(QuotaConfigError, match="published already, for 'ml-team'"):
        queue.publish_parameters("other")
    with pytest.raises(QuotaConfigError) as error:
        QuotaManagedTrainingQueue(stack, "Bad", spec=[share("A")], organisation="9 lives")
    assert "Test/Bad: organisation: organisation names are 1-64 letters" in str(error.value)
