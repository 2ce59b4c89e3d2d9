"""QuotaShare: properties from the model, errors naming the construct path, grants, imports."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from quota_constructs.constructs import (
    QuotaManagedJobQueue,
    QuotaShare,
    QuotaShareSchedulingPolicy,
    SageMakerTrainingServiceEnvironment,
)
from quota_constructs.model import QuotaConfigError, ShareState, SharingStrategy
from tests.constructs.helpers import resources, share

QUEUE_ARN = {"Fn::GetAtt": ["Queue4A7E3555", "JobQueueArn"]}


@pytest.fixture
def queue(stack: cdk.Stack) -> QuotaManagedJobQueue:
    env = SageMakerTrainingServiceEnvironment(
        stack, "Env", capacity_limits={"ml.g5.xlarge": 4, "ml.p4d.24xlarge": 2}
    )
    policy = QuotaShareSchedulingPolicy(stack, "Policy")
    return QuotaManagedJobQueue(stack, "Queue", service_environment=env, scheduling_policy=policy)


def share_props(stack: cdk.Stack) -> dict[str, Any]:
    [props] = [r["Properties"] for r in resources(stack, "AWS::Batch::QuotaShare").values()]
    return props


def test_renders_lend_and_borrow_with_unlimited_borrowing_by_default(
    stack: cdk.Stack, queue: QuotaManagedJobQueue
) -> None:
    QuotaShare(
        queue,
        "TeamA",
        job_queue=queue,
        quota_share_name="team-a",
        capacity_limits={"ml.g5.xlarge": 2, "ml.p4d.24xlarge": 1},
        strategy=SharingStrategy.LEND_AND_BORROW,
        in_share_preemption=True,
    )
    assert share_props(stack) == {
        "QuotaShareName": "team-a",
        "JobQueue": QUEUE_ARN,
        "CapacityLimits": [
            {"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 2},
            {"CapacityUnit": "ml.p4d.24xlarge", "MaxCapacity": 1},
        ],
        "ResourceSharingConfiguration": {"Strategy": "LEND_AND_BORROW", "BorrowLimit": -1},
        "PreemptionConfiguration": {"InSharePreemption": "ENABLED"},
        "State": "ENABLED",
    }
    assert list(resources(stack, "AWS::Batch::QuotaShare")) == ["QueueTeamAA1EA704A"]


def test_borrow_limit_zero_is_kept(stack: cdk.Stack, queue: QuotaManagedJobQueue) -> None:
    QuotaShare(
        queue,
        "S",
        job_queue=queue,
        quota_share_name="S",
        capacity_limits={"ml.g5.xlarge": 1},
        strategy=SharingStrategy.LEND_AND_BORROW,
        borrow_limit=0,
    )
    config = share_props(stack)["ResourceSharingConfiguration"]
    assert config == {"Strategy": "LEND_AND_BORROW", "BorrowLimit": 0}


def test_lend_share_has_no_borrow_limit_and_can_be_disabled(
    stack: cdk.Stack, queue: QuotaManagedJobQueue
) -> None:
    QuotaShare(
        queue,
        "S",
        job_queue=queue,
        quota_share_name="S",
        capacity_limits={"ml.g5.xlarge": 1},
        strategy=SharingStrategy.LEND,
        state=ShareState.DISABLED,
    )
    props = share_props(stack)
    assert props["ResourceSharingConfiguration"] == {"Strategy": "LEND"}
    assert props["PreemptionConfiguration"] == {"InSharePreemption": "DISABLED"}
    assert props["State"] == "DISABLED"


def test_rejects_every_broken_rule_at_once_with_prop_names(
    stack: cdk.Stack, queue: QuotaManagedJobQueue
) -> None:
    with pytest.raises(QuotaConfigError) as error:
        QuotaShare(
            queue,
            "Bad",
            job_queue=queue,
            quota_share_name="team a",
            capacity_limits={
                f"ml.g5.{size}": 1
                for size in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")
            },
            strategy=SharingStrategy.RESERVE,
            borrow_limit=50,
        )
    message = str(error.value)
    assert message.startswith("Test/Queue/Bad: 3 problems:")
    assert "quota_share_name: quota share name must be 1-128 characters" in message
    assert (
        "capacity_limits: a quota share needs 1 to 5 capacity limits (instance types), got 6"
        in (message)
    )
    assert (
        "borrow_limit: borrow_limit is only allowed with strategy LEND_AND_BORROW, not RESERVE"
        in (message)
    )
    assert "fix: remove borrow_limit or set strategy: LEND_AND_BORROW" in message


def test_unresolved_name_is_not_validated(stack: cdk.Stack, queue: QuotaManagedJobQueue) -> None:
    name = cdk.Token.as_string(cdk.Fn.ref("ShareName"))
    QuotaShare(
        queue,
        "S",
        job_queue=queue,
        quota_share_name=name,
        capacity_limits={"ml.g5.xlarge": 1},
        strategy=SharingStrategy.LEND,
    )
    assert share_props(stack)["QuotaShareName"] == {"Ref": "ShareName"}


def submit_statement(stack: cdk.Stack) -> dict[str, Any]:
    [policy] = resources(stack, "AWS::IAM::Policy").values()
    [statement] = [
        s
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if s["Action"] == "batch:SubmitServiceJob"
    ]
    return statement


def test_grant_submit_names_the_exact_queue_share_and_service_jobs(
    stack: cdk.Stack, queue: QuotaManagedJobQueue
) -> None:
    team = queue.add_quota_share("A", spec=share("A"))
    queue.add_quota_share("B", spec=share("B"))
    role = iam.Role(stack, "Submitter", assumed_by=iam.AccountRootPrincipal())
    team.grant_submit(role)
    statement = submit_statement(stack)
    assert statement["Resource"] == [
        QUEUE_ARN,
        {"Fn::GetAtt": ["QueueA0940816F", "QuotaShareArn"]},
        {
            "Fn::Join": [
                "",
                [
                    "arn:",
                    {"Ref": "AWS::Partition"},
                    ":batch:",
                    {"Ref": "AWS::Region"},
                    ":",
                    {"Ref": "AWS::AccountId"},
                    ":service-job/*",
                ],
            ]
        },
    ]
    assert "job-queue/*" not in json.dumps(Template.from_stack(stack).to_json())


def test_grant_read_on_share_queue_and_jobs(stack: cdk.Stack, queue: QuotaManagedJobQueue) -> None:
    team = queue.add_quota_share("A", spec=share("A"))
    role = iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal())
    team.grant_read(role)
    Template.from_stack(stack).has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": [
                    {
                        "Action": "batch:DescribeQuotaShare",
                        "Effect": "Allow",
                        "Resource": {"Fn::GetAtt": ["QueueA0940816F", "QuotaShareArn"]},
                    },
                    {
                        "Action": ["batch:GetJobQueueSnapshot", "batch:ListQuotaShares"],
                        "Effect": "Allow",
                        "Resource": QUEUE_ARN,
                    },
                    {
                        "Action": ["batch:DescribeServiceJob", "batch:ListServiceJobs"],
                        "Effect": "Allow",
                        "Resource": "*",
                    },
                ]
            }
        },
    )


def test_imported_share_grants_submit_on_its_queue_derived_from_the_arn(stack: cdk.Stack) -> None:
    arn = "arn:aws:batch:eu-west-1:123456789012:job-queue/ml/quota-share/team_a"
    team = QuotaShare.from_quota_share_arn(stack, "Imported", arn)
    assert team.quota_share_ref.quota_share_arn == arn
    role = iam.Role(stack, "Submitter", assumed_by=iam.AccountRootPrincipal())
    team.grant_submit(role)
    resource = submit_statement(stack)["Resource"]
    assert resource[:2] == ["arn:aws:batch:eu-west-1:123456789012:job-queue/ml", arn]
    assert resource[2] == {
        "Fn::Join": [
            "",
            ["arn:", {"Ref": "AWS::Partition"}, ":batch:eu-west-1:123456789012:service-job/*"],
        ]
    }


def test_imported_share_with_a_token_arn_splits_it_in_cloudformation(stack: cdk.Stack) -> None:
    team = QuotaShare.from_quota_share_arn(stack, "Imported", cdk.Fn.import_value("ShareArn"))
    role = iam.Role(stack, "Submitter", assumed_by=iam.AccountRootPrincipal())
    team.grant_submit(role)
    queue_arn = {
        "Fn::Select": [0, {"Fn::Split": ["/quota-share/", {"Fn::ImportValue": "ShareArn"}]}]
    }
    resource = submit_statement(stack)["Resource"]
    assert queue_arn in resource
    assert {"Fn::ImportValue": "ShareArn"} in resource


def test_rejects_an_import_of_a_job_queue_arn(stack: cdk.Stack) -> None:
    with pytest.raises(QuotaConfigError, match="Test/Imported: quota_share_arn: not an AWS Batch"):
        QuotaShare.from_quota_share_arn(
            stack, "Imported", "arn:aws:batch:us-east-1:123456789012:job-queue/ml"
        )


def test_share_on_an_l1_queue_is_accepted_without_queue_rules(stack: cdk.Stack) -> None:
    l1 = batch.CfnJobQueue(stack, "L1Queue", priority=1, job_queue_type="SAGEMAKER_TRAINING")
    QuotaShare(
        stack,
        "S",
        job_queue=l1,
        quota_share_name="S",
        capacity_limits={"ml.g5.xlarge": 1},
        strategy=SharingStrategy.RESERVE,
    )
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::QuotaShare", {"JobQueue": {"Ref": "L1Queue"}, "QuotaShareName": "S"}
    )


def test_rejects_an_import_whose_share_name_is_missing(stack: cdk.Stack) -> None:
    with pytest.raises(QuotaConfigError, match="fix: pass an ARN like arn:aws:batch:us-east-1:"):
        QuotaShare.from_quota_share_arn(
            stack, "Imported", "arn:aws:batch:us-east-1:123456789012:job-queue/ml/quota-share/"
        )
