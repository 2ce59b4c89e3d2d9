"""The runtime puts a job of a plan's instance type on the plan (``ResourceConfig.
TrainingPlanArn``) while the plan is ``Active``, and only then; other types run on demand. A job
the plan has no room for (``AvailableInstanceCount``) runs on demand, or waits on the plan under
``plan_overflow="wait"``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from quota_constructs.commands.demo import emulator_client
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import QuotaConfigError, utc_text
from quota_constructs.runtime import PlanOverflow
from quota_constructs.runtime.queue import QueueClient
from tests.runtime.helpers import FAST_RETRIES, training_job

H = 3600
P5 = "ml.p5.48xlarge"
ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-june"


@pytest.fixture
def emu(tmp_path: Path) -> Iterator[EmulatorServer]:
    start = utc_text(time.time() + H)
    org = tmp_path / "org.yaml"
    org.write_text(
        "organisation: plans\n"
        "shares:\n"
        f"  - {{name: llm, capacity: {{{P5}: 2, ml.g5.xlarge: 2}}, strategy: LEND_AND_BORROW}}\n"
        "training_plans:\n"
        f"  - {{name: p5-june, instance_type: {P5}, instance_count: 2, "
        f'start: "{start}", duration_hours: 2}}\n',
        encoding="utf-8",
    )
    with EmulatorServer(org_files=[org]) as server:
        yield server


def sent_plan(client: QueueClient, job_id: str) -> str | None:
    detail = client.batch.describe_service_job(jobId=job_id)
    resources = json.loads(detail["serviceRequestPayload"])["ResourceConfig"]
    plan: str | None = resources.get("TrainingPlanArn")
    return plan


def test_jobs_of_the_plans_type_run_on_it_only_while_it_is_active(emu: EmulatorServer) -> None:
    client = emulator_client(emu, "plans", retry=FAST_RETRIES, training_plans=["p5-june"])
    before = client.submit("before", "llm", training_job(P5))
    assert sent_plan(client, before.job_id) is None  # Scheduled: the job would wait Pending
    emu.advance(H + 1)
    during = client.submit("during", "llm", training_job(P5))
    assert sent_plan(client, during.job_id) == ARN
    other = client.submit("g5", "llm", training_job("ml.g5.xlarge"))
    assert sent_plan(client, other.job_id) is None  # the plan reserves no g5
    emu.advance(2 * H)
    after = client.submit("after", "llm", training_job(P5))
    assert sent_plan(client, after.job_id) is None  # Expired


def test_without_plans_the_payload_is_unchanged(emu: EmulatorServer) -> None:
    emu.advance(H + 1)
    client = emulator_client(emu, "plans", retry=FAST_RETRIES, training_plans=())
    job = client.submit("plain", "llm", training_job(P5))
    assert sent_plan(client, job.job_id) is None


def _fill_the_plan(emu: EmulatorServer, client: QueueClient) -> None:
    """Two one-instance p5 jobs on the 2-instance plan, started: the plan is then full."""
    emu.advance(H + 1)
    first = client.submit("first", "llm", training_job(P5))
    second = client.submit("second", "llm", training_job(P5))
    assert (sent_plan(client, first.job_id), sent_plan(client, second.job_id)) == (ARN, ARN)
    emu.advance(60)
    plan = emu.client("sagemaker").describe_training_plan(TrainingPlanName="p5-june")
    assert (plan["InUseInstanceCount"], plan["AvailableInstanceCount"]) == (2, 0)


def test_a_job_the_full_plan_has_no_room_for_runs_on_demand(emu: EmulatorServer) -> None:
    client = emulator_client(emu, "plans", retry=FAST_RETRIES, training_plans=["p5-june"])
    assert client.plan_overflow is PlanOverflow.ON_DEMAND  # the default, as the advisor assumes
    _fill_the_plan(emu, client)
    third = client.submit("third", "llm", training_job(P5))
    assert sent_plan(client, third.job_id) is None


def test_under_wait_a_job_the_full_plan_has_no_room_for_waits_on_it(emu: EmulatorServer) -> None:
    client = emulator_client(
        emu, "plans", retry=FAST_RETRIES, training_plans=["p5-june"], plan_overflow="wait"
    )
    _fill_the_plan(emu, client)
    third = client.submit("third", "llm", training_job(P5))
    assert sent_plan(client, third.job_id) == ARN


def test_a_job_larger_than_the_plans_room_runs_on_demand(emu: EmulatorServer) -> None:
    client = emulator_client(emu, "plans", retry=FAST_RETRIES, training_plans=["p5-june"])
    emu.advance(H + 1)
    client.submit("one", "llm", training_job(P5))
    emu.advance(60)
    pair = client.submit("pair", "llm", training_job(P5, count=2))  # 1 available, 2 needed
    assert sent_plan(client, pair.job_id) is None


def test_rejects_an_unknown_plan_overflow_mode(emu: EmulatorServer) -> None:
    with pytest.raises(QuotaConfigError) as refused:
        emulator_client(emu, "plans", training_plans=["p5-june"], plan_overflow="queue")
    assert str(refused.value) == (
        "plan_overflow: not a plan overflow mode (got 'queue'); fix: use 'on-demand' or "
        "'wait' (on demand when the plan is full, or wait for it)"
    )
