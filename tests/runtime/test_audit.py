"""``quota jobs -o ORG audit``: callers who bypass the runtime (a raw ``SubmitServiceJob`` with a
team's role; IAM cannot see the payload) are found afterwards. On an emulator that accepts a
foreign plan as AWS does (``plan_ownership="passthrough"``), the audit flags the job naming
another organisation's plan and the job booking its cost to another team, and no other job."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.commands.demo import emulator_client
from quota_constructs.contracts import TEAM_TAG_KEY
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import QuotaConfigError, utc_text
from quota_constructs.runtime.audit import audit_jobs
from quota_constructs.runtime.queue import QueueClient
from tests.runtime.helpers import FAST_RETRIES, FOREIGN, OWN, P5, plan_org, training_job

H = 3600


@pytest.fixture
def emu(tmp_path: Path) -> Iterator[EmulatorServer]:
    start = utc_text(time.time() - H)
    files = [
        plan_org(tmp_path, "plans", "p5-june", start),
        plan_org(tmp_path, "rival", "p5-rival", start),
    ]
    with EmulatorServer(org_files=files, plan_ownership="passthrough") as server:
        yield server


def raw_submit(emu: EmulatorServer, name: str, payload: dict[str, object]) -> str:
    """What a caller bypassing the runtime sends: the team tag on the job, any payload."""
    answer = emu.client("batch").submit_service_job(
        jobName=name,
        jobQueue="plans-queue",
        serviceJobType="SAGEMAKER_TRAINING",
        quotaShareName="llm",
        serviceRequestPayload=json.dumps(payload),
        tags={TEAM_TAG_KEY: "plans/llm"},
    )
    return str(answer["jobId"])


@pytest.fixture
def bypassed(emu: EmulatorServer) -> dict[str, str]:
    plan = training_job(P5).payload("plan")
    plan["ResourceConfig"]["TrainingPlanArn"] = FOREIGN
    cost = training_job().payload("cost")
    cost["Tags"] = [{"Key": TEAM_TAG_KEY, "Value": "rival/llm"}]
    own = training_job(P5).payload("own")
    own["ResourceConfig"]["TrainingPlanArn"] = OWN
    return {
        "plan": raw_submit(emu, "steal-plan", plan),
        "cost": raw_submit(emu, "steal-cost", cost),
        "own": raw_submit(emu, "honest", own),
    }


def test_audit_flags_foreign_plans_and_cost_tags_only(
    emu: EmulatorServer, bypassed: dict[str, str]
) -> None:
    client = emulator_client(emu, "plans", retry=FAST_RETRIES)
    audited = audit_jobs(client)
    assert audited.jobs == 3
    findings = audited.findings
    assert sorted((f.job_id, f.field, f.value) for f in findings) == sorted(
        [
            (bypassed["plan"], "serviceRequestPayload.ResourceConfig.TrainingPlanArn", FOREIGN),
            (bypassed["cost"], "serviceRequestPayload.Tags[0].Value", "rival/llm"),
        ]
    )


def test_audit_command_prints_each_finding_and_exits_1(
    emu: EmulatorServer, bypassed: dict[str, str]
) -> None:
    args = ["jobs", "--endpoint-url", emu.endpoint_url, "-o", "plans", "audit"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 1
    lines = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert sorted(lines) == sorted([bypassed["plan"], bypassed["cost"]])
    assert lines[bypassed["plan"]].startswith(f"{bypassed['plan']} steal-plan llm ")
    plan_text = f"not a training plan of organisation plans (its plans: {OWN})"
    assert plan_text in lines[bypassed["plan"]]
    assert "whose team is plans/llm, not rival/llm" in lines[bypassed["cost"]]
    assert "2 of 3 jobs" in result.stderr


def test_audit_command_json_and_a_clean_queue_exits_0(emu: EmulatorServer) -> None:
    args = ["jobs", "--endpoint-url", emu.endpoint_url, "-o", "plans", "audit", "--json"]
    clean = CliRunner().invoke(app, args)
    assert (clean.exit_code, json.loads(clean.stdout)) == (0, [])


def test_rejects_an_audit_without_the_organisations_plans(emu: EmulatorServer) -> None:
    client = QueueClient("plans-queue", endpoint_url=emu.endpoint_url, retry=FAST_RETRIES)
    with pytest.raises(QuotaConfigError) as refused:
        audit_jobs(client)
    assert "pass --organisation ORG" in str(refused.value)
