"""The emulator refuses a SubmitServiceJob whose payload names a training plan outside the
organisation of the queue (``ResourceConfig.TrainingPlanArn``), naming the plan and the
organisation's plans; ``plan_ownership="passthrough"`` accepts it, as AWS does (Batch passes
the payload through and IAM cannot see it), to rehearse what ``quota jobs audit`` finds."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import DUMMY_CREDENTIALS, EmulatorServer
from quota_constructs.model import utc_text
from tests.emulator.helpers import submit
from tests.helpers import payload, start_serve, wait_for_endpoint

H = 3600
P5 = "ml.p5.48xlarge"
OWN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-june"
FOREIGN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-rival"


def org_files(tmp_path: Path) -> list[Path]:
    start = utc_text(time.time() - H)
    files = []
    for org, plan in (("plans", "p5-june"), ("rival", "p5-rival")):
        path = tmp_path / f"{org}.yaml"
        path.write_text(
            f"organisation: {org}\n"
            "shares:\n"
            f"  - {{name: llm, capacity: {{{P5}: 2}}, strategy: LEND_AND_BORROW}}\n"
            "training_plans:\n"
            f"  - {{name: {plan}, instance_type: {P5}, instance_count: 2, "
            f'start: "{start}", duration_hours: 4}}\n',
            encoding="utf-8",
        )
        files.append(path)
    return files


@pytest.fixture
def emu(tmp_path: Path) -> Iterator[EmulatorServer]:
    with EmulatorServer(org_files=org_files(tmp_path)) as server:
        yield server


def on_plan(plan: str) -> str:
    body = json.loads(payload(P5))
    body["ResourceConfig"]["TrainingPlanArn"] = plan
    return json.dumps(body)


def test_rejects_a_payload_naming_another_organisations_plan(emu: EmulatorServer) -> None:
    batch = emu.client("batch")
    with pytest.raises(ClientError) as refused:
        submit(batch, "plans-queue", "llm", "steal", serviceRequestPayload=on_plan(FOREIGN))
    error = refused.value.response["Error"]
    assert error["Code"] == "ClientException"
    assert error["Message"] == (
        f"serviceRequestPayload.ResourceConfig.TrainingPlanArn: {FOREIGN!r} is not a training "
        f"plan of organisation plans (its plans: {OWN}); fix: drop TrainingPlanArn, or name "
        "one of the organisation's plans"
    )
    assert batch.list_service_jobs(jobQueue="plans-queue")["jobSummaryList"] == []


def test_accepts_a_payload_naming_its_own_organisations_plan(emu: EmulatorServer) -> None:
    batch = emu.client("batch")
    job = submit(batch, "plans-queue", "llm", "own", serviceRequestPayload=on_plan(OWN))
    assert batch.describe_service_job(jobId=job)["jobId"] == job


def test_passthrough_accepts_a_foreign_plan_as_aws_does(tmp_path: Path) -> None:
    with EmulatorServer(org_files=org_files(tmp_path), plan_ownership="passthrough") as emu:
        batch = emu.client("batch")
        job = submit(batch, "plans-queue", "llm", "steal", serviceRequestPayload=on_plan(FOREIGN))
        sent = json.loads(batch.describe_service_job(jobId=job)["serviceRequestPayload"])
        assert sent["ResourceConfig"]["TrainingPlanArn"] == FOREIGN


def test_serve_plan_ownership_option(tmp_path: Path) -> None:
    """``quota local serve --plan-ownership passthrough`` accepts a foreign plan; the default
    refuses it."""
    files = [arg for path in org_files(tmp_path) for arg in ("--org", str(path))]
    answers = []
    for options in ((), ("--plan-ownership", "passthrough")):
        process = start_serve("--virtual", *files, *options)
        try:
            endpoint = wait_for_endpoint(process, [])
            batch = boto3.client(
                "batch", endpoint_url=endpoint, region_name="us-east-1", **DUMMY_CREDENTIALS
            )
            try:
                submit(batch, "plans-queue", "llm", "steal", serviceRequestPayload=on_plan(FOREIGN))
                answers.append("accepted")
            except ClientError as error:
                answers.append(error.response["Error"]["Code"])
        finally:
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=60)
    assert answers == ["ClientException", "accepted"]
