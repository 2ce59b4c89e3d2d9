"""A training plan given only as ``{arn}`` is looked up with DescribeTrainingPlan (boto3 against
the emulator over HTTP) for its type, instances and window; one that does not exist is one line
naming the ARN. The emulator provisions such a plan from the plans its account bought."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from quota_constructs.config import load_organisation
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import QuotaConfigError, TrainingPlanSpec, utc_text
from quota_constructs.runtime.training_plans import resolve_plans
from tests.emulator.helpers import status, submit
from tests.helpers import payload

H = 3600
P5 = "ml.p5.48xlarge"
ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/{}"


def _org(tmp_path: Path, plan: str) -> Path:
    path = tmp_path / "org.yaml"
    path.write_text(
        "organisation: byarn\n"
        "shares:\n"
        "  - {name: llm, capacity: {ml.p5.48xlarge: 4}, strategy: LEND_AND_BORROW}\n"
        f'training_plans:\n  - {{arn: "{ARN.format(plan)}"}}\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture
def emu() -> Iterator[EmulatorServer]:
    """An emulator whose account bought p5-bought: 4 x ml.p5.48xlarge from 1 h from now, 3 h."""
    with EmulatorServer() as server:
        sagemaker = server.client("sagemaker")
        start = datetime.fromtimestamp(int(time.time()) + H, UTC)
        (offering,) = sagemaker.search_training_plan_offerings(
            InstanceType=P5,
            InstanceCount=4,
            StartTimeAfter=start,
            DurationHours=3,
            TargetResources=["training-job"],
        )["TrainingPlanOfferings"]
        sagemaker.create_training_plan(
            TrainingPlanName="p5-bought", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
        )
        yield server


def test_a_plan_by_arn_is_looked_up_for_its_type_instances_and_window(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    org = load_organisation(_org(tmp_path, "p5-bought"))
    described = emu.client("sagemaker").describe_training_plan(
        TrainingPlanName=ARN.format("p5-bought")
    )
    (plan,) = resolve_plans(org, emu.client("sagemaker")).training_plans
    start = utc_text(described["StartTime"].timestamp())
    assert plan == TrainingPlanSpec("p5-bought", P5, 4, start, duration_hours=3)


def test_a_plan_that_does_not_exist_is_one_line_naming_the_arn(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    org = load_organisation(_org(tmp_path, "p5-nowhere"))
    with pytest.raises(QuotaConfigError) as error:
        resolve_plans(org, emu.client("sagemaker"))
    assert str(error.value) == (
        "organisation 'byarn': training_plans[0].arn: no such training plan in this account "
        f"and region (DescribeTrainingPlan) (got '{ARN.format('p5-nowhere')}'); fix: correct "
        "the ARN, or buy the plan first (aws sagemaker create-training-plan)"
    )


def test_the_emulator_runs_an_arn_plans_jobs_only_in_its_window(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    done = emu.emulator.provision_file(_org(tmp_path, "p5-bought"))
    batch = emu.client("batch")
    body = payload(P5, count=4, runtime_s=10 * H)
    job = submit(batch, done.job_queue_name, "llm", "plan-job", serviceRequestPayload=body)
    emu.advance(60)
    assert status(batch, job) == "RUNNABLE"
    emu.advance(H)
    assert status(batch, job) == "RUNNING"
    emu.advance(2 * H)  # still before the 3 h plan's end - 30 min
    assert status(batch, job) == "RUNNING"
    emu.advance(H)
    assert status(batch, job) == "FAILED"


def test_the_emulator_refuses_an_arn_plan_its_account_never_bought(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    with pytest.raises(QuotaConfigError) as error:
        emu.emulator.provision_file(_org(tmp_path, "p5-nowhere"))
    assert str(error.value) == (
        "organisation 'byarn': training_plans[0].arn: no such training plan in the emulator's "
        f"account (got '{ARN.format('p5-nowhere')}'); fix: buy it first (CreateTrainingPlan), "
        "then provision the organisation"
    )
    assert "byarn" not in emu.emulator.organisations
