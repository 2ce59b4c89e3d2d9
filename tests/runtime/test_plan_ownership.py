"""Plans and cost tags belong to their team (issue 41, part 1), against the emulator over HTTP.

Two organisations, each with a prepaid p5 plan and a team share: the organisation's plans are
published in SSM (``/quota/<org>/training-plans``), so ``QueueClient.for_organisation``,
``for_team`` and ``quota jobs -o ORG submit`` put a p5 job on the organisation's active plan
without being told its name; a payload naming the other organisation's plan, or another team's
``quota-team`` cost tag, is refused before it is sent; ``quota report -o ORG --json`` lists the
organisation's plans.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.commands.demo import emulator_client
from quota_constructs.contracts import TEAM_TAG_KEY, training_plans_parameter
from quota_constructs.local.testing import DUMMY_CREDENTIALS, EmulatorServer
from quota_constructs.model import QuotaConfigError, utc_text
from quota_constructs.runtime import QueueClient
from tests.runtime.helpers import (
    BUILDER,
    FAST_RETRIES,
    FOREIGN,
    OWN,
    P5,
    plan_org,
    training_job,
)

H = 3600


@pytest.fixture
def emu(tmp_path: Path) -> Iterator[EmulatorServer]:
    start = utc_text(time.time() - H)  # both plans Active, for 3 more hours
    files = [
        plan_org(tmp_path, "plans", "p5-june", start),
        plan_org(tmp_path, "rival", "p5-rival", start),
    ]
    with EmulatorServer(org_files=files) as server:
        yield server


def team(emu: EmulatorServer, org: str = "plans", **kwargs: Any) -> QueueClient:
    session = boto3.Session(region_name=emu.emulator.account.region, **DUMMY_CREDENTIALS)
    return QueueClient.for_team(
        org, "llm", session=session, endpoint_url=emu.endpoint_url, retry=FAST_RETRIES, **kwargs
    )


def sent(client: QueueClient, job_id: str) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(
        client.batch.describe_service_job(jobId=job_id)["serviceRequestPayload"]
    )
    return payload


def on_plan(payload: dict[str, Any], plan: str) -> dict[str, Any]:
    return {**payload, "ResourceConfig": {**payload["ResourceConfig"], "TrainingPlanArn": plan}}


# --- the plans are published and found ---------------------------------------------------------


def test_the_emulator_publishes_each_organisations_plans_as_a_string_list(
    emu: EmulatorServer,
) -> None:
    ssm = emu.client("ssm")
    found = ssm.get_parameter(Name=training_plans_parameter("plans"))["Parameter"]
    assert (found["Type"], found["Value"]) == ("StringList", OWN)


def test_an_organisation_without_plans_publishes_the_none_sentinel(tmp_path: Path) -> None:
    path = tmp_path / "bare.yaml"
    path.write_text(
        "organisation: bare\nshares:\n  - {name: a, capacity: {ml.g5.xlarge: 1}, strategy: LEND}\n"
    )
    with EmulatorServer(org_files=[path]) as server:
        value = server.client("ssm").get_parameter(Name=training_plans_parameter("bare"))
        assert value["Parameter"]["Value"] == "none"
        client = emulator_client(server, "bare", retry=FAST_RETRIES)
        assert client.training_plans == ()


def test_an_organisation_client_uses_the_published_plans(emu: EmulatorServer) -> None:
    client = emulator_client(emu, "plans", retry=FAST_RETRIES)
    assert client.training_plans == (OWN,)
    job = client.submit("on-plan", "llm", training_job(P5))
    assert sent(client, job.job_id)["ResourceConfig"]["TrainingPlanArn"] == OWN


def test_a_team_client_uses_its_organisations_plans(emu: EmulatorServer) -> None:
    client = team(emu)
    job = client.submit("team-on-plan", "llm", training_job(P5))
    assert sent(client, job.job_id)["ResourceConfig"]["TrainingPlanArn"] == OWN


def test_cli_submit_of_an_organisation_puts_a_plan_type_job_on_its_plan(
    emu: EmulatorServer,
) -> None:
    builder = [P5 if arg == "ml.g5.xlarge" else arg for arg in BUILDER]
    args = ["jobs", "--endpoint-url", emu.endpoint_url, "-o", "plans", "submit", "cli-plan"]
    result = CliRunner().invoke(app, [*args, "--share", "llm", *builder, "--json"])
    assert result.exit_code == 0, result.stderr
    job_id = json.loads(result.stdout)["jobId"]
    client = emulator_client(emu, "plans", retry=FAST_RETRIES)
    assert sent(client, job_id)["ResourceConfig"]["TrainingPlanArn"] == OWN


def test_report_of_an_organisation_lists_its_plans(emu: EmulatorServer, tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"{P5}: 98.32\nml.g5.xlarge: 1.41\n")
    args = ["report", "--endpoint-url", emu.endpoint_url, "-o", "plans", "--json"]
    result = CliRunner().invoke(app, [*args, "--prices", str(prices)])
    assert result.exit_code == 0, result.stderr
    plans = json.loads(result.stdout)["plans"]
    assert [(p["name"], p["instanceType"]) for p in plans] == [("p5-june", P5)]


# --- foreign plans and cost tags are refused ---------------------------------------------------


def test_rejects_a_payload_naming_another_organisations_plan(emu: EmulatorServer) -> None:
    client = team(emu)
    payload = on_plan(training_job(P5).payload("steal"), FOREIGN)
    with pytest.raises(QuotaConfigError) as refused:
        client.submit("steal", "llm", payload)
    assert str(refused.value) == (
        "job steal: serviceRequestPayload.ResourceConfig.TrainingPlanArn: not a training plan "
        f"of organisation plans (its plans: {OWN}) (got '{FOREIGN}'); fix: drop "
        "TrainingPlanArn (the runtime puts the job on an active plan of the organisation), or "
        "name one of the organisation's plans"
    )
    assert client.list(share="llm") == []


def test_accepts_a_payload_naming_its_own_organisations_plan(emu: EmulatorServer) -> None:
    client = team(emu)
    job = client.submit("own", "llm", on_plan(training_job(P5).payload("own"), OWN))
    assert sent(client, job.job_id)["ResourceConfig"]["TrainingPlanArn"] == OWN


def test_rejects_the_training_plan_arn_option_naming_a_foreign_plan(emu: EmulatorServer) -> None:
    client = emulator_client(emu, "plans", retry=FAST_RETRIES)
    with pytest.raises(QuotaConfigError) as refused:
        client.submit("opt", "llm", training_job(P5), training_plan_arn=FOREIGN)
    assert FOREIGN in str(refused.value) and OWN in str(refused.value)


def test_rejects_a_payload_booking_its_cost_to_another_team(emu: EmulatorServer) -> None:
    client = team(emu)
    payload = training_job().payload("cost")
    payload["Tags"] = [{"Key": TEAM_TAG_KEY, "Value": "rival/llm"}]
    with pytest.raises(QuotaConfigError) as refused:
        client.submit("cost", "llm", payload)
    assert str(refused.value) == (
        "job cost: serviceRequestPayload.Tags[0].Value: the training job's quota-team tag is "
        "the cost allocation of quota share llm, whose team is plans/llm, not rival/llm (got "
        "'rival/llm'); fix: drop the quota-team tag from the payload's Tags: the runtime sets "
        "quota-team=plans/llm itself"
    )


def test_rejects_a_cost_tag_key_in_another_letter_case(emu: EmulatorServer) -> None:
    client = team(emu)
    payload = training_job().payload("case")
    payload["Tags"] = [{"Key": "Quota-Team", "Value": "plans/llm"}]
    with pytest.raises(QuotaConfigError) as refused:
        client.submit("case", "llm", payload)
    assert "serviceRequestPayload.Tags[0].Key" in str(refused.value)


def test_the_team_cost_tag_is_set_once_whatever_the_payload_says(emu: EmulatorServer) -> None:
    client = team(emu)
    payload = training_job().payload("same")
    payload["Tags"] = [{"Key": TEAM_TAG_KEY, "Value": "plans/llm"}, {"Key": "x", "Value": "y"}]
    job = client.submit("same", "llm", payload)
    tags = sent(client, job.job_id)["Tags"]
    assert tags == [{"Key": TEAM_TAG_KEY, "Value": "plans/llm"}, {"Key": "x", "Value": "y"}]


def test_rejects_a_cost_tag_on_a_share_without_a_team(emu: EmulatorServer) -> None:
    client = emulator_client(emu, "plans", retry=FAST_RETRIES)
    payload = training_job().payload("teamless")
    payload["Tags"] = [{"Key": TEAM_TAG_KEY, "Value": "rival/llm"}]
    with pytest.raises(QuotaConfigError) as refused:
        client.submit("teamless", "open", payload)
    assert "quota share open has no team" in str(refused.value)
