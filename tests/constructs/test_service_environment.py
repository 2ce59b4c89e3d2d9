"""SageMakerTrainingServiceEnvironment: instance-type capacity limits, validation, imports."""

from __future__ import annotations

from typing import cast

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match, Template

from quota_constructs.constructs import SageMakerTrainingServiceEnvironment
from quota_constructs.model import QuotaConfigError
from tests.constructs.helpers import resources


def test_renders_instance_type_capacity_limits(stack: cdk.Stack) -> None:
    SageMakerTrainingServiceEnvironment(
        stack, "Env", capacity_limits={"ml.g5.xlarge": 3, "ml.p4d.24xlarge": 2}
    )
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::ServiceEnvironment",
        {
            "ServiceEnvironmentType": "SAGEMAKER_TRAINING",
            "State": "ENABLED",
            "CapacityLimits": [
                {"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 3},
                {"CapacityUnit": "ml.p4d.24xlarge", "MaxCapacity": 2},
            ],
            "ServiceEnvironmentName": Match.absent(),
        },
    )
    assert list(resources(stack, "AWS::Batch::ServiceEnvironment")) == ["EnvC33A5BD9"]


def test_disabled_environment_and_explicit_name(stack: cdk.Stack) -> None:
    SageMakerTrainingServiceEnvironment(
        stack,
        "Env",
        capacity_limits={"ml.g5.xlarge": 1},
        service_environment_name="ml-training",
        enabled=False,
    )
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::ServiceEnvironment",
        {"State": "DISABLED", "ServiceEnvironmentName": "ml-training"},
    )


def test_rejects_num_instances_and_zero_counts_listing_every_problem(stack: cdk.Stack) -> None:
    with pytest.raises(QuotaConfigError) as error:
        SageMakerTrainingServiceEnvironment(
            stack, "Env", capacity_limits={"NUM_INSTANCES": 4, "ml.g5.xlarge": 0}
        )
    message = str(error.value)
    assert message.startswith("Test/Env: 2 problems:")
    assert "capacity_limits.NUM_INSTANCES: capacity unit must be a SageMaker training" in message
    assert (
        "capacity_limits.ml.g5.xlarge: max capacity must be an integer between 1 and 2147483647"
        in message
    )


def test_rejects_an_empty_capacity_mapping(stack: cdk.Stack) -> None:
    with pytest.raises(QuotaConfigError, match="needs at least one capacity limit"):
        SageMakerTrainingServiceEnvironment(stack, "Env", capacity_limits={})


def test_unresolved_counts_are_not_validated(stack: cdk.Stack) -> None:
    count = cast(int, cdk.Token.as_number(cdk.Fn.ref("Count")))  # a number token
    SageMakerTrainingServiceEnvironment(stack, "Env", capacity_limits={"ml.g5.xlarge": count})
    Template.from_stack(stack).has_resource_properties(
        "AWS::Batch::ServiceEnvironment",
        {"CapacityLimits": [{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": {"Ref": "Count"}}]},
    )


def test_warns_beyond_the_console_maximum_of_five_limits(stack: cdk.Stack) -> None:
    limits = {
        f"ml.g5.{size}": 1
        for size in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")
    }
    SageMakerTrainingServiceEnvironment(stack, "Env", capacity_limits=limits)
    Annotations.from_stack(stack).has_warning(
        "/Test/Env", Match.string_like_regexp("6 capacity limits: the console allows at most 5")
    )


def test_imported_environment_keeps_its_arn(stack: cdk.Stack) -> None:
    arn = "arn:aws:batch:us-east-1:123456789012:service-environment/shared"
    env = SageMakerTrainingServiceEnvironment.from_service_environment_arn(stack, "Imp", arn)
    assert env.service_environment_ref.service_environment_arn == arn


def test_rejects_an_import_of_another_resource_type(stack: cdk.Stack) -> None:
    with pytest.raises(QuotaConfigError, match="not an AWS Batch service-environment ARN"):
        SageMakerTrainingServiceEnvironment.from_service_environment_arn(
            stack, "Imp", "arn:aws:batch:us-east-1:123456789012:job-queue/q"
        )
