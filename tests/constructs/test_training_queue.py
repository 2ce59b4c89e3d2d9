"""QuotaManagedTrainingQueue: the whole queue from the model, sized to the sum of the shares."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template

from quota_constructs.config import load_organisation
from quota_constructs.constructs import QuotaManagedTrainingQueue, QuotaShare
from quota_constructs.model import JobQueueSpec, QuotaConfigError, QuotaShareSpec, SharingStrategy
from tests.constructs.helpers import resources, share
from tests.helpers import ORGS_DIR

SEED = load_organisation(ORGS_DIR / "seed-demo.yaml")


def test_builds_policy_environment_queue_and_shares_with_pinned_logical_ids(
    stack: cdk.Stack,
) -> None:
    QuotaManagedTrainingQueue(stack, "TrainingQueue", spec=SEED.queue)
    logical_ids = sorted(Template.from_stack(stack).to_json()["Resources"])
    assert logical_ids == [
        "TrainingQueueJobQueueBC771182",
        "TrainingQueueJobQueueQS13E8B82B6",
        "TrainingQueueJobQueueQS2869F6F65",
        "TrainingQueueJobQueueQS3ED17CEDE",
        "TrainingQueueSchedulingPolicyAEE32E4A",
        "TrainingQueueServiceEnvironment591980E1",
    ]


def test_service_environment_is_the_sum_of_the_share_limits(stack: cdk.Stack) -> None:
    shares = [
        QuotaShareSpec("a", {"ml.g5.xlarge": 2, "ml.p4d.24xlarge": 1}, SharingStrategy.LEND),
        QuotaShareSpec("b", {"ml.g5.xlarge": 3}, SharingStrategy.RESERVE),
    ]
    QuotaManagedTrainingQueue(stack, "Q", spec=shares)
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::ServiceEnvironment",
        {
            "CapacityLimits": [
                {"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 5},
                {"CapacityUnit": "ml.p4d.24xlarge", "MaxCapacity": 1},
            ]
        },
    )


def test_seed_demo_renders_the_tutorial_configuration(stack: cdk.Stack) -> None:
    QuotaManagedTrainingQueue(stack, "TrainingQueue", spec=SEED.queue)
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::Batch::ServiceEnvironment",
        {"CapacityLimits": [{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 3}]},
    )
    template.has_resource_properties(
        "AWS::Batch::JobQueue",
        {
            "JobStateTimeLimitActions": Match.array_with(
                [Match.object_like({"MaxTimeSeconds": 3600})]
            )
        },
    )
    configs = {
        r["Properties"]["QuotaShareName"]: (
            r["Properties"]["ResourceSharingConfiguration"],
            r["Properties"]["PreemptionConfiguration"]["InSharePreemption"],
        )
        for r in resources(stack, "AWS::Batch::QuotaShare").values()
    }
    assert configs == {
        "QS1": ({"Strategy": "LEND_AND_BORROW", "BorrowLimit": 200}, "ENABLED"),
        "QS2": ({"Strategy": "LEND"}, "DISABLED"),
        "QS3": ({"Strategy": "RESERVE"}, "DISABLED"),
    }


def test_shares_are_created_after_the_queue_through_its_arn(stack: cdk.Stack) -> None:
    QuotaManagedTrainingQueue(stack, "TrainingQueue", spec=SEED.queue)
    for props in (r["Properties"] for r in resources(stack, "AWS::Batch::QuotaShare").values()):
        assert props["JobQueue"] == {"Fn::GetAtt": ["TrainingQueueJobQueueBC771182", "JobQueueArn"]}


def test_rejects_an_invalid_spec_listing_every_problem_with_the_path(stack: cdk.Stack) -> None:
    spec = JobQueueSpec(
        shares=(share("dup"), share("dup"), share("r", "RESERVE", borrow_limit=10)),
        priority=2000,
    )
    with pytest.raises(QuotaConfigError) as error:
        QuotaManagedTrainingQueue(stack, "Q", spec=spec)
    message = str(error.value)
    assert message.startswith("Test/Q: 3 problems:")
    assert "job_queue.priority: job queue priority must be an integer between 0 and 1000" in message
    assert "shares[1].name: quota share names must be unique in a queue" in message
    assert "shares[2].borrow_limit: borrow_limit is only allowed with strategy LEND_AND_BORROW" in (
        message
    )
    assert Template.from_stack(stack).to_json().get("Resources") is None


def test_rejects_an_empty_share_list(stack: cdk.Stack) -> None:
    with pytest.raises(QuotaConfigError, match="Test/Q: shares: a quota-managed job queue needs 1"):
        QuotaManagedTrainingQueue(stack, "Q", spec=[])


def test_warns_when_a_borrow_limit_can_never_be_reached(stack: cdk.Stack) -> None:
    QuotaManagedTrainingQueue(stack, "TrainingQueue", spec=SEED.queue)
    Annotations.from_stack(stack).has_warning(
        "/Test/TrainingQueue/JobQueue/QS1",
        Match.string_like_regexp(
            r"borrow limit \(200% of 1\) for ml.g5.xlarge can never be reached.*at most 2"
        ),
    )


def test_no_warning_when_the_lenders_cover_the_borrow_limit(stack: cdk.Stack) -> None:
    shares = [
        share("borrower", "LEND_AND_BORROW", borrow_limit=100),
        share("lender", "LEND"),
    ]
    QuotaManagedTrainingQueue(stack, "Q", spec=shares)
    Annotations.from_stack(stack).has_no_warning("*", Match.any_value())


def test_tags_every_resource(stack: cdk.Stack) -> None:
    QuotaManagedTrainingQueue(stack, "Q", spec=SEED.queue, tags={"cost-center": "ml"})
    template = Template.from_stack(stack).to_json()
    for logical_id, resource in template["Resources"].items():
        tags = resource["Properties"]["Tags"]
        assert tags == {"cost-center": "ml"}, logical_id


def test_rejects_aws_prefixed_tags(stack: cdk.Stack) -> None:
    with pytest.raises(
        QuotaConfigError, match=r"tags\.aws:owner: tag keys may not start with 'aws:'"
    ):
        QuotaManagedTrainingQueue(stack, "Q", spec=SEED.queue, tags={"aws:owner": "me"})


def test_explicit_physical_names(stack: cdk.Stack) -> None:
    QuotaManagedTrainingQueue(
        stack,
        "Q",
        spec=SEED.queue,
        job_queue_name="seed-demo-queue",
        service_environment_name="seed-demo-training",
        scheduling_policy_name="seed-demo-quota-policy",
    )
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::Batch::JobQueue", {"JobQueueName": "seed-demo-queue"})
    template.has_resource_properties(
        "AWS::Batch::ServiceEnvironment", {"ServiceEnvironmentName": "seed-demo-training"}
    )
    template.has_resource_properties(
        "AWS::Batch::SchedulingPolicy", {"Name": "seed-demo-quota-policy"}
    )


def test_grant_submit_by_share_name(stack: cdk.Stack) -> None:
    queue = QuotaManagedTrainingQueue(stack, "Q", spec=SEED.queue)
    role = iam.Role(stack, "Submitter", assumed_by=iam.AccountRootPrincipal())
    queue.grant_submit(role, "QS2")
    Template.from_stack(stack).has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": [
                    Match.object_like(
                        {
                            "Action": "batch:SubmitServiceJob",
                            "Resource": Match.array_with(
                                [{"Fn::GetAtt": ["QJobQueueQS29B45EA4A", "QuotaShareArn"]}]
                            ),
                        }
                    )
                ]
            }
        },
    )


def test_rejects_an_unknown_share_name_listing_the_known_ones(stack: cdk.Stack) -> None:
    queue = QuotaManagedTrainingQueue(stack, "Q", spec=SEED.queue)
    with pytest.raises(KeyError, match=r"no quota share 'QS9' in Test/Q \(shares: QS1, QS2, QS3\)"):
        queue.share("QS9")


def test_is_a_job_queue_reference(stack: cdk.Stack) -> None:
    queue = QuotaManagedTrainingQueue(stack, "Q", spec=SEED.queue)
    assert queue.job_queue_ref.job_queue_arn == queue.job_queue.job_queue_arn


def test_package_re_exports_the_constructs_lazily() -> None:
    import quota_constructs

    assert quota_constructs.QuotaManagedTrainingQueue is QuotaManagedTrainingQueue
    assert "QuotaShare" in quota_constructs.__all__


def test_rejects_an_extra_share_whose_name_is_taken_in_the_composite(stack: cdk.Stack) -> None:
    queue = QuotaManagedTrainingQueue(stack, "Q", spec=SEED.queue)
    with pytest.raises(QuotaConfigError, match=r"Test/Extra: shares\[3\]\.name: quota share names"):
        QuotaShare(
            stack,
            "Extra",
            job_queue=queue,
            quota_share_name="QS2",
            capacity_limits={"ml.g5.xlarge": 1},
            strategy=SharingStrategy.LEND,
        )


def test_a_share_registered_through_the_composite_is_one_of_its_shares(stack: cdk.Stack) -> None:
    queue = QuotaManagedTrainingQueue(stack, "Q", spec=SEED.queue)
    extra = QuotaShare(
        stack,
        "Extra",
        job_queue=queue,
        quota_share_name="QS4",
        capacity_limits={"ml.g5.xlarge": 1},
        strategy=SharingStrategy.LEND,
    )
    assert queue.share("QS4") is extra
    assert list(queue.quota_shares) == ["QS1", "QS2", "QS3", "QS4"]
