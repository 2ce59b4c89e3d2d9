"""QuotaManagedJobQueue: SAGEMAKER_TRAINING queue, time-limit actions, shares, read grant."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template

from quota_constructs.constructs import (
    IQuotaManagedJobQueue,
    QuotaManagedJobQueue,
    QuotaShare,
    QuotaShareSchedulingPolicy,
    SageMakerTrainingServiceEnvironment,
)
from quota_constructs.model import (
    MISCONFIGURATION_REASONS,
    JobQueueSpec,
    QuotaConfigError,
    SharingStrategy,
)
from tests.constructs.helpers import resources, share


def make_queue(stack: cdk.Stack, **props: Any) -> QuotaManagedJobQueue:
    env = SageMakerTrainingServiceEnvironment(stack, "Env", capacity_limits={"ml.g5.xlarge": 2})
    policy = QuotaShareSchedulingPolicy(stack, "Policy")
    return QuotaManagedJobQueue(
        stack, "Queue", service_environment=env, scheduling_policy=policy, **props
    )


def test_renders_a_sagemaker_training_queue_wired_to_environment_and_policy(
    stack: cdk.Stack,
) -> None:
    queue = make_queue(stack)
    queue.add_quota_share("A", spec=share("A"))
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::JobQueue",
        {
            "JobQueueType": "SAGEMAKER_TRAINING",
            "Priority": 1,
            "State": "ENABLED",
            "SchedulingPolicyArn": {"Fn::GetAtt": ["Policy23B91518", "Arn"]},
            "ServiceEnvironmentOrder": [
                {
                    "Order": 1,
                    "ServiceEnvironment": {"Fn::GetAtt": ["EnvC33A5BD9", "ServiceEnvironmentArn"]},
                }
            ],
            "JobStateTimeLimitActions": Match.absent(),
            "JobQueueName": Match.absent(),
            "ComputeEnvironmentOrder": Match.absent(),
        },
    )
    assert list(resources(stack, "AWS::Batch::JobQueue")) == ["Queue4A7E3555"]


def test_runnable_timeout_terminates_both_misconfiguration_reasons(stack: cdk.Stack) -> None:
    queue = make_queue(stack, runnable_timeout=cdk.Duration.minutes(60))
    queue.add_quota_share("A", spec=share("A"))
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::JobQueue",
        {
            "JobStateTimeLimitActions": [
                {
                    "Action": "TERMINATE",
                    "MaxTimeSeconds": 3600,
                    "Reason": reason,
                    "State": "RUNNABLE",
                }
                for reason in MISCONFIGURATION_REASONS
            ]
        },
    )


def test_rejects_priority_and_timeout_out_of_range_at_once(stack: cdk.Stack) -> None:
    with pytest.raises(QuotaConfigError) as error:
        make_queue(stack, priority=1001, runnable_timeout=cdk.Duration.minutes(5))
    message = str(error.value)
    assert message.startswith("Test/Queue: 2 problems:")
    assert (
        "priority: job queue priority must be an integer between 0 and 1000 (got 1001)" in message
    )
    assert (
        "runnable_timeout: runnable timeout (seconds) must be an integer between 600 and 86400"
        in (message)
    )


def test_accepts_l1_resources_through_the_reference_interfaces(stack: cdk.Stack) -> None:
    env = batch.CfnServiceEnvironment(
        stack,
        "L1Env",
        service_environment_type="SAGEMAKER_TRAINING",
        capacity_limits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
    )
    policy = batch.CfnSchedulingPolicy(
        stack, "L1Policy", quota_share_policy={"idleResourceAssignmentStrategy": "FIFO"}
    )
    queue = QuotaManagedJobQueue(stack, "Queue", service_environment=env, scheduling_policy=policy)
    queue.add_quota_share("A", spec=share("A"))
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::JobQueue",
        {
            "SchedulingPolicyArn": {"Ref": "L1Policy"},
            "ServiceEnvironmentOrder": [{"Order": 1, "ServiceEnvironment": {"Ref": "L1Env"}}],
        },
    )


def test_rejects_a_queue_left_without_shares_at_synth(stack: cdk.Stack) -> None:
    make_queue(stack)
    with pytest.raises(Exception, match="Test/Queue: a quota-managed job queue needs at least one"):
        Template.from_stack(stack)


def test_rejects_a_twenty_first_share(stack: cdk.Stack) -> None:
    queue = make_queue(stack)
    for index in range(20):
        queue.add_quota_share(f"S{index}", spec=share(f"S{index}"))
    with pytest.raises(QuotaConfigError) as error:
        queue.add_quota_share("S20", spec=share("S20"))
    assert str(error.value).startswith("Test/Queue/S20: shares: a quota-managed job queue needs")


def test_rejects_a_duplicate_share_name(stack: cdk.Stack) -> None:
    queue = make_queue(stack)
    queue.add_quota_share("First", spec=share("teamA"))
    with pytest.raises(
        QuotaConfigError, match=r"Test/Queue/Second: shares\[1\]\.name: quota share"
    ):
        queue.add_quota_share("Second", spec=share("teamA"))


def test_spec_reflects_the_shares_for_the_model(stack: cdk.Stack) -> None:
    queue = make_queue(stack, priority=7)
    queue.add_quota_share("A", spec=share("A", count=2))
    queue.add_quota_share("B", spec=share("B", strategy="RESERVE"))
    assert queue.spec.priority == 7
    assert queue.spec.service_environment_capacity() == {"ml.g5.xlarge": 3}


def test_grant_read_scopes_each_action_to_its_resource_type(stack: cdk.Stack) -> None:
    queue = make_queue(stack)
    queue.add_quota_share("A", spec=share("A"))
    role = iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal())
    queue.grant_read(role)
    arn = {"Fn::GetAtt": ["Queue4A7E3555", "JobQueueArn"]}
    Template.from_stack(stack).has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": [
                    {
                        "Action": ["batch:GetJobQueueSnapshot", "batch:ListQuotaShares"],
                        "Effect": "Allow",
                        "Resource": arn,
                    },
                    {
                        "Action": "batch:DescribeQuotaShare",
                        "Effect": "Allow",
                        "Resource": {"Fn::Join": ["", [arn, "/quota-share/*"]]},
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


def test_imported_queue_grants_read_on_its_arn(stack: cdk.Stack) -> None:
    arn = "arn:aws:batch:us-east-1:123456789012:job-queue/ml"
    queue = QuotaManagedJobQueue.from_job_queue_arn(stack, "Imported", arn)
    role = iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal())
    queue.grant_read(role)
    Template.from_stack(stack).has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Action": "batch:DescribeQuotaShare",
                                "Resource": f"{arn}/quota-share/*",
                            }
                        )
                    ]
                )
            }
        },
    )


def test_rejects_an_import_that_is_not_a_job_queue_arn(stack: cdk.Stack) -> None:
    with pytest.raises(QuotaConfigError, match="Test/Imported: job_queue_arn: not an AWS Batch"):
        QuotaManagedJobQueue.from_job_queue_arn(stack, "Imported", "arn:aws:s3:::bucket")


def test_spec_sets_priority_and_timeout_and_creates_its_shares(stack: cdk.Stack) -> None:
    env = SageMakerTrainingServiceEnvironment(stack, "Env", capacity_limits={"ml.g5.xlarge": 2})
    policy = QuotaShareSchedulingPolicy(stack, "Policy")
    spec = JobQueueSpec(shares=(share("A"), share("B")), priority=5, runnable_timeout_minutes=15)
    queue = QuotaManagedJobQueue(
        stack, "Queue", service_environment=env, scheduling_policy=policy, spec=spec
    )
    assert [s.node.id for s in queue.quota_shares] == ["A", "B"]
    assert queue.runnable_timeout is not None
    assert queue.runnable_timeout.to_minutes() == 15
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::JobQueue",
        {
            "Priority": 5,
            "JobStateTimeLimitActions": Match.array_with(
                [Match.object_like({"MaxTimeSeconds": 900})]
            ),
        },
    )
    assert list(resources(stack, "AWS::Batch::QuotaShare")) == ["QueueA0940816F", "QueueB9B438269"]


def test_rejects_a_spec_beside_a_priority(stack: cdk.Stack) -> None:
    with pytest.raises(QuotaConfigError, match="Test/Queue: spec: spec already sets the priority"):
        make_queue(stack, priority=2, spec=JobQueueSpec(shares=(share("A"),)))


def test_register_quota_share_records_a_share_created_on_the_queue(stack: cdk.Stack) -> None:
    queue = make_queue(stack)
    other = make_stack_share(stack, queue)
    assert queue.quota_shares == (other,)
    with pytest.raises(QuotaConfigError, match=r"Test/S: shares\[1\]\.name: quota share names"):
        queue.register_quota_share(other)


def make_stack_share(stack: cdk.Stack, queue: QuotaManagedJobQueue) -> QuotaShare:
    return QuotaShare(
        stack,
        "S",
        job_queue=queue,
        quota_share_name="S",
        capacity_limits={"ml.g5.xlarge": 1},
        strategy=SharingStrategy.LEND,
    )


def test_imported_queue_is_a_job_queue_reference(stack: cdk.Stack) -> None:
    arn = "arn:aws:batch:us-east-1:123456789012:job-queue/ml"
    queue: IQuotaManagedJobQueue = QuotaManagedJobQueue.from_job_queue_arn(stack, "Imported", arn)
    assert queue.job_queue_ref.job_queue_arn == arn
    assert queue.job_queue_arn == arn
