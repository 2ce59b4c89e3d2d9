"""Lost responses: the emulator handles a request, then answers 500 as if the response was lost.

botocore fills SubmitServiceJob's ``clientToken`` with a fresh UUID per call (the member is an
``idempotencyToken`` in the service model) and resends it on its own retries, so one call is
safe. A client that sends no token, or a caller that retries with a new call (a new UUID),
makes duplicates. A retry that carries the same ``clientToken`` creates no job: AWS rejects it
(the default ``client_token_mode="reject"``), ``replay`` mode answers it with the first job.
"""

from __future__ import annotations

import signal
from collections import Counter
from typing import Any

import boto3
import botocore.config
import botocore.endpoint
import pytest
from botocore.exceptions import ClientError
from botocore.handlers import generate_idempotent_uuid
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.testing import DUMMY_CREDENTIALS, SEED_DEMO, EmulatorServer
from tests.emulator.helpers import submit
from tests.helpers import start_serve, wait_for_endpoint

QUEUE = "seed-demo-queue"
EVERY_NAME = [{"name": "JOB_NAME", "values": ["*"]}]  # a JOB_NAME filter lists every status
ALWAYS_LOST = FaultPlan(lost_response={"SubmitServiceJob": 1.0})


@pytest.fixture(autouse=True)
def no_real_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's retry sleeps return at once (the retries themselves still happen)."""
    monkeypatch.setattr(botocore.endpoint.time, "sleep", lambda seconds: None)


def jobs_by_name(batch: Any) -> dict[str, list[str]]:
    """Every job of the queue (all statuses): job name -> job ids."""
    found: dict[str, list[str]] = {}
    pages = batch.get_paginator("list_service_jobs").paginate(jobQueue=QUEUE, filters=EVERY_NAME)
    for page in pages:
        for job in page["jobSummaryList"]:
            found.setdefault(job["jobName"], []).append(job["jobId"])
    return found


def tokenless(batch: Any) -> Any:
    """``batch`` without botocore's automatic ``clientToken``: requests carry no token."""
    batch.meta.events.unregister("before-parameter-build", generate_idempotent_uuid)
    return batch


def test_without_a_token_every_retry_of_a_lost_response_makes_another_job() -> None:
    with EmulatorServer(org_files=[SEED_DEMO], faults=ALWAYS_LOST) as emu:
        batch = tokenless(
            emu.client("batch", retries={"mode": "standard", "total_max_attempts": 3})
        )
        with pytest.raises(ClientError) as caught:
            submit(batch, QUEUE, "QS1", "no-token")
        jobs = jobs_by_name(batch)
        counts, faults = emu.request_counts, emu.fault_counts

    assert caught.value.response["Error"]["Code"] == "ServerException"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    assert counts["SubmitServiceJob"] == 3  # botocore retried the 500 twice
    assert faults == {"SubmitServiceJob": {"lost": 3}}
    assert len(jobs["no-token"]) == 3  # every attempt took effect: two duplicates


def test_botocore_retries_of_one_call_carry_its_generated_token_and_make_one_job() -> None:
    with EmulatorServer(org_files=[SEED_DEMO], faults=ALWAYS_LOST) as emu:
        batch = emu.client("batch", retries={"mode": "standard", "total_max_attempts": 3})
        with pytest.raises(ClientError):
            submit(batch, QUEUE, "QS1", "auto-token")
        jobs = jobs_by_name(batch)
        counts = emu.request_counts

    assert counts["SubmitServiceJob"] == 3
    assert len(jobs["auto-token"]) == 1


def test_retried_calls_with_the_same_client_token_make_one_job() -> None:
    with EmulatorServer(org_files=[SEED_DEMO], faults=ALWAYS_LOST) as emu:
        batch = emu.client("batch", retries={"mode": "standard", "total_max_attempts": 2})
        for _ in range(3):
            with pytest.raises(ClientError):
                submit(batch, QUEUE, "QS1", "with-token", clientToken="t-1")
        jobs = jobs_by_name(batch)
        counts = emu.request_counts

    assert counts["SubmitServiceJob"] == 6
    assert len(jobs["with-token"]) == 1


def submit_until_answered(batch: Any, name: str, **extra: Any) -> tuple[str, int]:
    """The caller's own retry loop: call again after a 500; returns (job id, calls made)."""
    for call in range(1, 21):
        try:
            return submit(batch, QUEUE, "QS1", name, **extra), call
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ServerException"
    raise AssertionError(f"{name}: no answer in 20 calls")


def test_seeded_lost_responses_retried_by_the_caller() -> None:
    """Half the submits lose their response; the caller calls again until one is answered."""

    def run(with_token: bool) -> tuple[list[str], dict[str, list[str]], int, int]:
        plan = FaultPlan(lost_response={"SubmitServiceJob": 0.5}, seed=11)
        # replay: the caller's retry loop expects an answer with the job, which AWS does not give
        with EmulatorServer(org_files=[SEED_DEMO], faults=plan, client_token_mode="replay") as emu:
            batch = emu.client("batch", retries={"mode": "standard", "total_max_attempts": 1})
            returned = [
                submit_until_answered(
                    batch, f"job-{i}", **({"clientToken": f"token-{i}"} if with_token else {})
                )[0]
                for i in range(20)
            ]
            lost = emu.fault_counts["SubmitServiceJob"]["lost"]
            return returned, jobs_by_name(batch), emu.request_counts["SubmitServiceJob"], lost

    returned, jobs, requests, lost = run(with_token=False)
    assert lost > 0 and requests == 20 + lost  # every lost response was retried
    assert sum(len(ids) for ids in jobs.values()) == requests  # each call made a job
    assert any(len(ids) > 1 for ids in jobs.values())
    assert all(returned[i] in jobs[f"job-{i}"] for i in range(20))

    returned, jobs, requests, lost = run(with_token=True)
    assert lost > 0 and requests == 20 + lost
    assert jobs == {f"job-{i}": [returned[i]] for i in range(20)}  # one job each, the one returned


def test_a_retry_after_a_lost_response_is_rejected_and_makes_no_second_job() -> None:
    """AWS's rule: the same token again is refused (400), so the caller must look the job up."""
    plan = FaultPlan(lost_response={"SubmitServiceJob": 1.0}, seed=1)
    with EmulatorServer(org_files=[SEED_DEMO], faults=plan) as emu:
        batch = emu.client("batch", retries={"mode": "standard", "total_max_attempts": 1})
        with pytest.raises(ClientError) as lost:
            submit(batch, QUEUE, "QS1", "retried", clientToken="t-9")
        emu.emulator.faults = None  # the network heals
        with pytest.raises(ClientError) as again:
            submit(batch, QUEUE, "QS1", "retried", clientToken="t-9")
        jobs = jobs_by_name(batch)

    assert lost.value.response["Error"]["Code"] == "ServerException"
    assert again.value.response["Error"]["Code"] == "ClientException"
    assert again.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert len(jobs["retried"]) == 1


def test_a_lost_response_hides_an_error_answer_too() -> None:
    """The request is handled (here: refused) and the client still sees only a 500."""
    plan = FaultPlan(lost_response={"SubmitServiceJob": 1.0})
    with EmulatorServer(org_files=[SEED_DEMO], faults=plan) as emu:
        batch = emu.client("batch", retries={"mode": "standard", "total_max_attempts": 1})
        with pytest.raises(ClientError) as caught:
            submit(batch, QUEUE, "QS9", "unknown-share")

    assert caught.value.response["Error"]["Code"] == "ServerException"


def test_fault_kinds_share_one_seeded_draw_per_request() -> None:
    def outcomes(seed: int) -> tuple[list[str], int]:
        plan = FaultPlan(
            throttle={"*": 0.2},
            server_error={"*": 0.2},
            lost_response={"SubmitServiceJob": 0.3},
            seed=seed,
        )
        with EmulatorServer(org_files=[SEED_DEMO], faults=plan) as emu:
            batch = emu.client("batch", retries={"mode": "standard", "total_max_attempts": 1})
            seen = []
            for i in range(40):
                try:
                    submit(batch, QUEUE, "QS1", f"j{i}")
                    seen.append("ok")
                except ClientError as error:
                    message = error.response["Error"]["Message"]
                    seen.append(
                        "lost"
                        if "response was lost" in message
                        else error.response["Error"]["Code"]
                    )
            return seen, sum(len(ids) for ids in jobs_by_name(emu.client("batch")).values())

    first, jobs = outcomes(5)
    tally = Counter(first)

    assert (first, jobs) == outcomes(5)
    assert set(tally) == {"ok", "ThrottlingException", "ServerException", "lost"}
    assert jobs == tally["ok"] + tally["lost"]  # throttled and 5xx requests had no effect


def test_parses_lost_response_rates() -> None:
    plan = FaultPlan.parse(["5xx=0.05", "SubmitServiceJob:lost=0.1"], seed=2)

    assert plan == FaultPlan(
        server_error={"*": 0.05}, lost_response={"SubmitServiceJob": 0.1}, seed=2
    )


def test_serve_injects_lost_responses_from_the_command_line() -> None:
    process = start_serve("--virtual", "--fault-rate", "SubmitServiceJob:lost=1")
    printed: list[str] = []
    try:
        endpoint = wait_for_endpoint(process, printed)
        batch = boto3.client(  # without a token, so that each handled attempt shows as a job
            "batch",
            endpoint_url=endpoint,
            region_name="us-east-1",
            config=botocore.config.Config(retries={"mode": "standard", "total_max_attempts": 2}),
            **DUMMY_CREDENTIALS,
        )
        with pytest.raises(ClientError) as caught:
            submit(tokenless(batch), QUEUE, "QS1", "cli-lost")
        jobs = jobs_by_name(batch)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)

    assert caught.value.response["Error"]["Code"] == "ServerException"
    assert len(jobs["cli-lost"]) == 2


def test_rejects_an_unknown_fault_kind_naming_lost() -> None:
    result = CliRunner().invoke(app, ["local", "serve", "--port", "0", "--fault-rate", "gone=0.1"])

    assert result.exit_code == 2
    assert "throttle, 5xx or lost" in " ".join(result.output.split())
