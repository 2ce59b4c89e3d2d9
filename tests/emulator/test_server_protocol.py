"""Wire protocol of the emulator: validation by botocore's model, error format, faults, clocks."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import boto3
import botocore.endpoint
import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.model import QuotaConfigError
from tests.emulator.helpers import submit


def post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict, Any]:
    """Raw HTTP POST; returns status, headers and the decoded JSON body."""
    headers = {"Content-Type": "application/json", **(headers or {})}  # urllib's default: a form
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request) as response:
            headers = {k.lower(): v for k, v in response.headers.items()}
            return response.status, headers, json.loads(response.read())
    except urllib.error.HTTPError as error:
        headers = {k.lower(): v for k, v in error.headers.items()}
        return error.code, headers, json.loads(error.read())


def test_rejects_request_that_breaks_the_input_shape(emulator: EmulatorServer) -> None:
    body = json.dumps({"jobQueue": "seed-demo-queue", "maxResults": "ten"}).encode()

    code, headers, error = post(f"{emulator.endpoint_url}/v1/listquotashares", body)

    assert code == 400
    assert headers["x-amzn-errortype"] == "ClientException"
    assert "maxResults" in error["message"] and "ten" in error["message"]


def test_rejects_missing_required_member(emulator: EmulatorServer) -> None:
    code, _, error = post(f"{emulator.endpoint_url}/v1/describeservicejob", b"{}")

    assert code == 400
    assert "jobId: missing required parameter" in error["message"]


def test_rejects_body_that_is_not_json(emulator: EmulatorServer) -> None:
    code, _, error = post(f"{emulator.endpoint_url}/v1/listquotashares", b"{not json")

    assert (code, error["__type"]) == (400, "ClientException")
    assert "not valid JSON" in error["message"]


def test_rejects_unknown_path(emulator: EmulatorServer) -> None:
    code, _, error = post(f"{emulator.endpoint_url}/v1/nosuchoperation", b"{}")

    assert (code, error["__type"]) == (404, "UnknownOperationException")


@pytest.mark.parametrize(
    ("path", "headers", "protocol"),
    [
        ("/v1/listservicejobs", {"Content-Type": "application/x-www-form-urlencoded"}, "rest-json"),
        ("/v1/listservicejobs", {"Content-Type": "application/x-amz-json-1.1"}, "rest-json"),
        (
            "/",
            {"Content-Type": "application/json", "X-Amz-Target": "AmazonSSM.GetParameter"},
            "json",
        ),
    ],
    ids=["form-to-batch", "json-1.1-to-batch", "rest-json-to-ssm"],
)
def test_rejects_a_content_type_the_operation_s_protocol_never_sends(
    emulator: EmulatorServer, path: str, headers: dict[str, str], protocol: str
) -> None:
    """A browser's form post (a request without CORS preflight) reaches no operation."""
    code, _, error = post(f"{emulator.endpoint_url}{path}", b'{"jobQueue": "q"}', headers)

    assert (code, error["__type"]) == (415, "UnsupportedMediaTypeException")
    assert f"is not what this operation's protocol ({protocol}) sends" in error["message"]


def test_rejects_operation_outside_quota_management(emulator: EmulatorServer) -> None:
    with pytest.raises(ClientError) as caught:
        emulator.client("batch").describe_compute_environments()

    assert "not served by the quota emulator" in caught.value.response["Error"]["Message"]


def test_counts_requests_per_operation(emulator: EmulatorServer) -> None:
    batch = emulator.client("batch")
    batch.list_quota_shares(jobQueue="seed-demo-queue")
    batch.list_quota_shares(jobQueue="seed-demo-queue")
    emulator.client("ssm").get_parameter(Name="/quota/seed-demo/job-queue/arn")

    assert emulator.request_counts == {"ListQuotaShares": 2, "GetParameter": 1}


def test_injected_throttling_is_retried_by_botocore(monkeypatch: pytest.MonkeyPatch) -> None:
    backoffs: list[float] = []
    monkeypatch.setattr(botocore.endpoint.time, "sleep", backoffs.append)  # no real waiting
    plan = FaultPlan(throttle={"ListQuotaShares": 0.5}, seed=7)
    with EmulatorServer(org_files=[SEED_DEMO], faults=plan) as emu:
        batch = emu.client("batch", retries={"mode": "standard", "total_max_attempts": 20})
        for _ in range(10):
            batch.list_quota_shares(jobQueue="seed-demo-queue")
        counts = emu.request_counts

    assert counts["ListQuotaShares"] == 10 + len(backoffs)  # every throttle retried, all succeeded
    assert backoffs


def test_injected_server_errors_reach_a_client_without_retries() -> None:
    plan = FaultPlan(server_error={"*": 1.0})
    with EmulatorServer(org_files=[SEED_DEMO], faults=plan) as emu:
        batch = emu.client("batch", retries={"mode": "standard", "total_max_attempts": 1})
        with pytest.raises(ClientError) as caught:
            batch.list_quota_shares(jobQueue="seed-demo-queue")

    assert caught.value.response["Error"]["Code"] == "ServerException"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500


def test_same_fault_seed_gives_the_same_faults() -> None:
    def outcomes(seed: int) -> list[str]:
        plan = FaultPlan(throttle={"*": 0.3}, server_error={"*": 0.3}, seed=seed)
        with EmulatorServer(org_files=[SEED_DEMO], faults=plan) as emu:
            batch = emu.client("batch", retries={"mode": "standard", "total_max_attempts": 1})
            seen = []
            for _ in range(20):
                try:
                    batch.list_quota_shares(jobQueue="seed-demo-queue")
                    seen.append("ok")
                except ClientError as error:
                    seen.append(error.response["Error"]["Code"])
            return seen

    first = outcomes(3)

    assert first == outcomes(3)
    assert {"ok", "ThrottlingException", "ServerException"} <= set(first)


def test_rejects_fault_rate_outside_zero_to_one() -> None:
    with pytest.raises(QuotaConfigError, match="fault rates are between 0 and 1"):
        FaultPlan(throttle={"*": 1.5})


def test_parses_fault_rates_per_operation() -> None:
    plan = FaultPlan.parse(["throttle=0.1", "SubmitServiceJob:5xx=0.25"], seed=4)

    assert plan == FaultPlan(throttle={"*": 0.1}, server_error={"SubmitServiceJob": 0.25}, seed=4)


def test_rejects_malformed_fault_rate() -> None:
    with pytest.raises(QuotaConfigError, match=r"\[OPERATION:\]KIND=RATE"):
        FaultPlan.parse(["SubmitServiceJob:slow=0.1"])


def test_wall_clock_moves_jobs_without_advance() -> None:
    with EmulatorServer(org_files=[SEED_DEMO], clock="wall", speed=1000.0) as emu:
        batch = emu.client("batch")
        job = submit(
            batch,
            emu.queue_arn("seed-demo"),
            "QS3",
            "fast",
            tags={"quota.local/duration-seconds": "5"},
        )
        statuses = set()
        for _ in range(200):
            statuses.add(batch.describe_service_job(jobId=job)["status"])
            if "SUCCEEDED" in statuses:
                break

        assert "SUCCEEDED" in statuses
        with pytest.raises(RuntimeError, match="clock='virtual'"):
            emu.advance(1)


def test_same_seed_gives_the_same_job_ids() -> None:
    def job_ids(seed: int) -> list[str]:
        with EmulatorServer(org_files=[SEED_DEMO], seed=seed) as emu:
            batch = emu.client("batch")
            return [submit(batch, emu.queue_arn("seed-demo"), "QS1", f"j{n}") for n in range(3)]

    assert job_ids(1) == job_ids(1)
    assert job_ids(1) != job_ids(2)


def test_endpoint_url_needs_a_running_server() -> None:
    with pytest.raises(RuntimeError, match="not running"):
        _ = EmulatorServer().endpoint_url


def test_fixture_points_default_clients_at_the_emulator(emulator: EmulatorServer) -> None:
    queues = boto3.client("batch").describe_job_queues()["jobQueues"]  # no endpoint_url given

    assert [q["jobQueueName"] for q in queues] == ["seed-demo-queue"]


def test_explains_a_preemption_with_rule_preemptor_and_borrowing(emulator: EmulatorServer) -> None:
    batch = emulator.client("batch")
    queue = emulator.queue_arn("seed-demo")
    submit(batch, queue, "QS1", "own", schedulingPriority=3)
    borrower = submit(batch, queue, "QS1", "borrower", schedulingPriority=2)
    emulator.advance(10)
    lender = submit(batch, queue, "QS2", "lender")
    emulator.advance(10)

    with urllib.request.urlopen(f"{emulator.endpoint_url}/_quota/jobs/{borrower}") as response:
        explained = json.loads(response.read())

    assert explained["status"] == "RUNNABLE"
    assert explained["pending"]["kind"] == "NO_LENDABLE_CAPACITY"  # QS2 took its instance back
    (preemption,) = explained["preemptions"]
    assert (preemption["rule"], preemption["preemptorJobId"], preemption["preemptorShare"]) == (
        "CROSS_SHARE",
        lender,
        "QS2",
    )
    assert preemption["borrowedBefore"] == {"ml.g5.xlarge": 1}
    assert preemption["borrowedAfter"] == {}


def test_advances_a_virtual_clock_over_http(emulator: EmulatorServer) -> None:
    url = f"{emulator.endpoint_url}/_quota/advance"

    code, _, body = post(url, json.dumps({"seconds": 90}).encode())

    assert (code, body["now"], emulator.now) == (200, 90.0, 90.0)


def test_rejects_advance_without_seconds(emulator: EmulatorServer) -> None:
    code, _, body = post(f"{emulator.endpoint_url}/_quota/advance", b'{"minutes": 1}')

    assert code == 400 and '{"seconds": <number>}' in body["message"]


def test_rejects_explaining_an_unknown_job(emulator: EmulatorServer) -> None:
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(f"{emulator.endpoint_url}/_quota/jobs/nope")

    assert caught.value.code == 400
    assert "no service job 'nope'" in json.loads(caught.value.read())["message"]


def test_stop_works_after_the_server_loop_closed_itself() -> None:
    """waitress closes the server (and its wake-up pipe) itself after a listening-socket error;
    stopping afterwards must still close everything quietly."""
    emu = EmulatorServer(org_files=[SEED_DEMO]).start()
    assert emu._server is not None
    raw = emu._server._server
    closed = threading.Event()

    def close_from_the_loop() -> None:
        raw.close()
        closed.set()

    raw.trigger.pull_trigger(close_from_the_loop)
    assert closed.wait(5)
    emu.stop()
    assert emu._server is None
