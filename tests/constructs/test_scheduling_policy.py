"""QuotaShareSchedulingPolicy: the FIFO quota-share policy and its imports."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from quota_constructs.constructs import QuotaShareSchedulingPolicy
from quota_constructs.model import QuotaConfigError
from tests.constructs.helpers import resources


def test_renders_a_fifo_quota_share_policy_with_a_generated_name(stack: cdk.Stack) -> None:
    QuotaShareSchedulingPolicy(stack, "Policy")
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::SchedulingPolicy",
        {"QuotaSharePolicy": {"IdleResourceAssignmentStrategy": "FIFO"}},
    )
    [props] = [r["Properties"] for r in resources(stack, "AWS::Batch::SchedulingPolicy").values()]
    assert "Name" not in props
    assert "FairsharePolicy" not in props


def test_logical_id_comes_from_the_construct_id(stack: cdk.Stack) -> None:
    QuotaShareSchedulingPolicy(stack, "Policy")
    assert list(resources(stack, "AWS::Batch::SchedulingPolicy")) == ["Policy23B91518"]


def test_explicit_name_is_rendered(stack: cdk.Stack) -> None:
    QuotaShareSchedulingPolicy(stack, "Policy", scheduling_policy_name="ml-quota-policy")
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::SchedulingPolicy", {"Name": "ml-quota-policy"}
    )


def test_rejects_a_name_with_spaces_naming_the_construct_path(stack: cdk.Stack) -> None:
    with pytest.raises(QuotaConfigError) as error:
        QuotaShareSchedulingPolicy(stack, "Policy", scheduling_policy_name="ml quota")
    message = str(error.value)
    assert message.startswith("Test/Policy: scheduling_policy_name:")
    assert "'ml quota'" in message
    assert "letters, digits, '-' or '_'" in message


def test_imported_policy_exposes_its_arn(stack: cdk.Stack) -> None:
    arn = "arn:aws:batch:eu-west-1:123456789012:scheduling-policy/existing"
    policy = QuotaShareSchedulingPolicy.from_scheduling_policy_arn(stack, "Imported", arn)
    assert policy.scheduling_policy_ref.scheduling_policy_arn == arn
    assert policy.env.region == "eu-west-1"


def test_rejects_an_import_that_is_not_a_scheduling_policy_arn(stack: cdk.Stack) -> None:
    arn = "arn:aws:batch:eu-west-1:123456789012:job-queue/existing"
    with pytest.raises(QuotaConfigError, match=r"Test/Imported: scheduling_policy_arn: not an AWS"):
        QuotaShareSchedulingPolicy.from_scheduling_policy_arn(stack, "Imported", arn)
