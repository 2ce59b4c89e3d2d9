"""SageMaker training plans on the emulator, over HTTP with boto3: a plan of an organisation file
is seen through DescribeTrainingPlan/ListTrainingPlans with its status on the emulator's clock;
SearchTrainingPlanOfferings then CreateTrainingPlan buys one."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.exceptions import ClientError, ParamValidationError

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import utc_text
from tests.emulator.helpers import status, submit
from tests.helpers import payload

H = 3600


@pytest.fixture
def emu(tmp_path: Path) -> Iterator[EmulatorServer]:
    """An organisation whose ml.p5.48xlarge capacity is a plan starting in 1 h, for 2 h."""
    start = utc_text(time.time() + H)
    org = tmp_path / "org.yaml"
    org.write_text(
        "organisation: plans\n"
        "shares:\n"
        "  - {name: llm, capacity: {ml.p5.48xlarge: 8}, strategy: LEND_AND_BORROW}\n"
        "training_plans:\n"
        "  - {name: p5-june, instance_type: ml.p5.48xlarge, instance_count: 8, "
        f'start: "{start}", duration_hours: 2}}\n',
        encoding="utf-8",
    )
    with EmulatorServer(org_files=[org]) as server:
        yield server


def test_the_files_plan_moves_from_scheduled_to_active_to_expired(emu: EmulatorServer) -> None:
    sagemaker = emu.client("sagemaker")
    plan = sagemaker.describe_training_plan(TrainingPlanName="p5-june")
    assert plan["Status"] == "Scheduled"
    assert plan["TrainingPlanArn"] == (
        "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-june"
    )
    assert (plan["TotalInstanceCount"], plan["DurationHours"]) == (8, 2)
    assert plan["ReservedCapacitySummaries"][0]["InstanceType"] == "ml.p5.48xlarge"
    assert (plan["EndTime"] - plan["StartTime"]).total_seconds() == 2 * H
    emu.advance(H + 1)
    assert sagemaker.describe_training_plan(TrainingPlanName="p5-june")["Status"] == "Active"
    emu.advance(2 * H)
    assert sagemaker.describe_training_plan(TrainingPlanName="p5-june")["Status"] == "Expired"
    expired = sagemaker.list_training_plans(Filters=[{"Name": "Status", "Value": "Expired"}])
    assert [p["TrainingPlanName"] for p in expired["TrainingPlanSummaries"]] == ["p5-june"]
    active = sagemaker.list_training_plans(Filters=[{"Name": "Status", "Value": "Active"}])
    assert active["TrainingPlanSummaries"] == []


def test_search_then_create_buys_a_plan_with_its_fee(emu: EmulatorServer) -> None:
    sagemaker = emu.client("sagemaker")
    found = sagemaker.search_training_plan_offerings(
        InstanceType="ml.p4d.24xlarge",
        InstanceCount=2,
        DurationHours=24,
        TargetResources=["training-job"],
    )
    (offering,) = found["TrainingPlanOfferings"]
    assert offering["ReservedCapacityOfferings"][0]["InstanceCount"] == 2
    assert offering["UpfrontFee"] == "48.00"  # 2 x 24 h at the emulator's made-up 1 USD
    arn = sagemaker.create_training_plan(
        TrainingPlanName="p4d-day", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
    )["TrainingPlanArn"]
    assert arn.endswith(":training-plan/p4d-day")
    assert sagemaker.describe_training_plan(TrainingPlanName="p4d-day")["Status"] == "Active"
    names = [
        p["TrainingPlanName"] for p in sagemaker.list_training_plans()["TrainingPlanSummaries"]
    ]
    assert sorted(names) == ["p4d-day", "p5-june"]
    page = sagemaker.list_training_plans(MaxResults=1)
    assert len(page["TrainingPlanSummaries"]) == 1 and page["NextToken"]
    with pytest.raises(ClientError) as taken:
        sagemaker.create_training_plan(
            TrainingPlanName="p4d-day", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
        )
    assert taken.value.response["Error"]["Code"] == "ResourceInUse"


def test_unknown_plans_and_offerings_are_resource_not_found(emu: EmulatorServer) -> None:
    sagemaker = emu.client("sagemaker")
    with pytest.raises(ClientError) as missing:
        sagemaker.describe_training_plan(TrainingPlanName="nope")
    assert missing.value.response["Error"] == {
        "Code": "ResourceNotFound",
        "Message": "Training plan 'nope' not found.",
    }
    with pytest.raises(ClientError) as no_offering:
        sagemaker.create_training_plan(TrainingPlanName="x", TrainingPlanOfferingId="tpo-none")
    assert no_offering.value.response["Error"]["Code"] == "ResourceNotFound"


def test_requests_are_validated_by_botocores_model(emu: EmulatorServer) -> None:
    sagemaker = emu.client("sagemaker")
    with pytest.raises(ParamValidationError):  # client side, from the same model
        sagemaker.describe_training_plan(TrainingPlanName="")
    assert "DescribeTrainingPlan" in emu.emulator.served_operations()["sagemaker"]


def _plan_job(emu: EmulatorServer, name: str, count: int, plan_arn: str | None) -> str:
    """A p5 job of ``count`` instances running 30 minutes, on ``plan_arn`` when given."""
    body = json.loads(payload("ml.p5.48xlarge", count=count))
    if plan_arn is not None:
        body["ResourceConfig"]["TrainingPlanArn"] = plan_arn
    queue = emu.organisations["plans"].job_queue_name
    return submit(
        emu.client("batch"),
        queue,
        "llm",
        name,
        serviceRequestPayload=json.dumps(body),
        tags={"quota.local/duration-seconds": "1800"},
    )


def test_the_plan_reports_the_instances_its_running_jobs_hold(emu: EmulatorServer) -> None:
    sagemaker = emu.client("sagemaker")
    arn = sagemaker.describe_training_plan(TrainingPlanName="p5-june")["TrainingPlanArn"]
    on_plan = _plan_job(emu, "on-plan", 3, arn)
    _plan_job(emu, "no-plan", 2, None)  # same type, no TrainingPlanArn: not the plan's
    queued = sagemaker.describe_training_plan(TrainingPlanName="p5-june")
    assert (queued["InUseInstanceCount"], queued["AvailableInstanceCount"]) == (0, 8)
    emu.advance(H + 60)
    assert status(emu.client("batch"), on_plan) == "RUNNING"
    plan = sagemaker.describe_training_plan(TrainingPlanName="p5-june")
    assert (plan["InUseInstanceCount"], plan["AvailableInstanceCount"]) == (3, 5)
    (listed,) = sagemaker.list_training_plans()["TrainingPlanSummaries"]
    assert (listed["InUseInstanceCount"], listed["AvailableInstanceCount"]) == (3, 5)
    emu.advance(H)  # the job ran its 30 minutes
    assert status(emu.client("batch"), on_plan) == "SUCCEEDED"
    done = sagemaker.describe_training_plan(TrainingPlanName="p5-june")
    assert (done["InUseInstanceCount"], done["AvailableInstanceCount"]) == (0, 8)
