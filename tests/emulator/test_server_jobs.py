"""Service jobs over HTTP: submit errors, idempotency, listing, termination and the documented
misconfiguration statusReason strings (docs/aws-semantics.md §2.6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.state.job_service import REPEATED_TOKEN_MESSAGE
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.model import (
    REASON_BORROWABLE,
    REASON_SE_MAX,
    REASON_SHARE_AND_BORROW_LIMIT,
    REASON_SHARE_LIMIT,
)
from tests.emulator.helpers import status, submit
from tests.helpers import payload

UNKNOWN_ID = "0b7c6d5e-4f3a-4b2c-9d1e-0f9a8b7c6d5e"


def submit_error(batch: Any, queue: str, share: str | None, **extra: Any) -> str:
    with pytest.raises(ClientError) as caught:
        submit(batch, queue, share, "bad-job", **extra)
    assert caught.value.response["Error"]["Code"] == "ClientException"
    return str(caught.value.response["Error"]["Message"])


# --- submit errors ----------------------------------------------------------------------------


def test_rejects_submit_without_quota_share_name(batch: Any, queue: str) -> None:
    message = submit_error(batch, queue, None)

    assert "quotaShareName is required" in message and "QS1, QS2, QS3" in message


def test_rejects_submit_to_unknown_share(batch: Any, queue: str) -> None:
    message = submit_error(batch, queue, "QS9")

    assert "'QS9'" in message and "QS1, QS2, QS3" in message


def test_rejects_submit_to_disabled_share(batch: Any, queue: str) -> None:
    batch.update_quota_share(quotaShareArn=f"{queue}/quota-share/QS2", state="DISABLED")

    message = submit_error(batch, queue, "QS2")

    assert "DISABLED" in message and "accepts no new jobs" in message


def test_rejects_priority_out_of_range(batch: Any, queue: str) -> None:
    message = submit_error(batch, queue, "QS1", schedulingPriority=10000)

    assert "between 0 and 9999" in message and "10000" in message


def test_rejects_submit_to_unknown_queue(batch: Any) -> None:
    message = submit_error(batch, "nowhere", "QS1")

    assert "no job queue 'nowhere'" in message


def test_rejects_share_identifier_on_a_quota_managed_queue(batch: Any, queue: str) -> None:
    message = submit_error(batch, queue, "QS1", shareIdentifier="teamA")

    assert "pass quotaShareName instead of shareIdentifier" in message


def test_a_payload_without_resource_config_fails_its_job(batch: Any, queue: str) -> None:
    job_id = submit(batch, queue, "QS1", "no-resources", serviceRequestPayload='{"RoleArn": "r"}')

    job = batch.describe_service_job(jobId=job_id)
    assert job["status"] == "FAILED" and "ResourceConfig" in job["statusReason"]


def test_rejects_submit_to_disabled_queue(batch: Any, queue: str) -> None:
    batch.update_job_queue(jobQueue=queue, state="DISABLED")

    assert "DISABLED and accepts no new jobs" in submit_error(batch, queue, "QS1")


def test_rejects_update_of_unknown_job(batch: Any) -> None:
    with pytest.raises(ClientError) as caught:
        batch.update_service_job(jobId=UNKNOWN_ID, schedulingPriority=1)

    assert f"no service job {UNKNOWN_ID!r}" in caught.value.response["Error"]["Message"]


def test_rejects_update_of_a_malformed_job_id(batch: Any) -> None:
    with pytest.raises(ClientError) as caught:
        batch.update_service_job(jobId="no-such-job", schedulingPriority=1)

    error = caught.value.response["Error"]
    assert error["Code"] == "ClientException"
    assert "no service job 'no-such-job': not a service job id or ARN" in error["Message"]


# --- idempotency, listing, termination --------------------------------------------------------


def test_rejects_an_identical_request_with_a_used_client_token(batch: Any, queue: str) -> None:
    """AWS: "two submit requests with identical payloads and clientTokens ... the second
    request is rejected" (the default, ``client_token_mode="reject"``)."""
    submit(batch, queue, "QS1", "once", clientToken="token-1")

    with pytest.raises(ClientError) as caught:
        submit(batch, queue, "QS1", "once", clientToken="token-1")

    error = caught.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error["Error"]["Code"] == "ClientException"
    assert error["Error"]["Message"] == REPEATED_TOKEN_MESSAGE.format(token="token-1")
    listed = batch.list_service_jobs(
        jobQueue=queue, filters=[{"name": "JOB_NAME", "values": ["once"]}]
    )
    assert len(listed["jobSummaryList"]) == 1


def test_replay_mode_returns_the_first_job_for_a_retried_submit() -> None:
    with EmulatorServer(org_files=[SEED_DEMO], client_token_mode="replay") as emu:
        batch, queue = emu.client("batch"), emu.queue_arn("seed-demo")
        first = submit(batch, queue, "QS1", "once", clientToken="token-1")
        again = submit(batch, queue, "QS1", "once", clientToken="token-1")
        listed = batch.list_service_jobs(
            jobQueue=queue, filters=[{"name": "JOB_NAME", "values": ["once"]}]
        )

    assert again == first
    assert len(listed["jobSummaryList"]) == 1


def test_rejects_client_token_reused_for_another_request(batch: Any, queue: str) -> None:
    submit(batch, queue, "QS1", "once", clientToken="token-1")

    message = submit_error(batch, queue, "QS2", clientToken="token-1")

    assert "clientToken 'token-1' was already used" in message


def test_lists_by_quota_share_and_status_with_pagination(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    waiting = [submit(batch, queue, "QS3", f"q3-{n}") for n in range(4)]  # one runs, three wait
    submit(batch, queue, "QS2", "other")
    emulator.advance(10)

    pages = batch.get_paginator("list_service_jobs").paginate(
        jobQueue=queue,
        jobStatus="RUNNABLE",
        filters=[{"name": "QUOTA_SHARE_NAME", "values": ["QS3"]}],
        PaginationConfig={"PageSize": 2},
    )
    listed = [j["jobId"] for page in pages for j in page["jobSummaryList"]]

    assert listed == list(reversed(waiting[1:]))  # newest first
    assert status(batch, waiting[0]) == "RUNNING"


def test_terminate_marks_the_job_failed_and_terminated(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "stop-me")
    emulator.advance(10)

    batch.terminate_service_job(jobId=job, reason="no longer needed")
    emulator.advance(1)
    described = batch.describe_service_job(jobId=job)

    assert (described["status"], described["isTerminated"]) == ("FAILED", True)
    assert "no longer needed" in described["statusReason"]


def test_terminate_many_counts_unknown_ids_as_successful(batch: Any, queue: str) -> None:
    jobs = [submit(batch, queue, "QS1", f"j{n}") for n in range(3)]

    result = batch.terminate_service_jobs(jobs=[*jobs, UNKNOWN_ID], reason="cleanup")

    assert result["successful"] == [*jobs, UNKNOWN_ID] and result["errors"] == []
    assert {status(batch, j) for j in jobs} == {"FAILED"}


def test_terminate_many_reports_a_malformed_id_as_validation_exception(
    batch: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS1", "j")

    result = batch.terminate_service_jobs(jobs=[job, "not-an-id"], reason="cleanup")

    assert result["successful"] == [job]
    (error,) = result["errors"]
    assert (error["job"], error["code"]) == ("not-an-id", "ValidationException")
    assert "no service job 'not-an-id': not a service job id or ARN" in error["message"]


def test_explain_pending_gives_a_runnable_job_the_emulators_reason() -> None:
    with EmulatorServer(org_files=[SEED_DEMO], explain_pending=True) as emu:
        batch = emu.client("batch")
        queue = emu.queue_arn("seed-demo")
        submit(batch, queue, "QS3", "first")
        second = submit(batch, queue, "QS3", "second")
        emu.advance(10)

        reason = batch.describe_service_job(jobId=second)["statusReason"]

    assert reason == (
        "WAITING_FOR_OWN_CAPACITY - quota share QS3 uses 1 of its 1 x ml.g5.xlarge; the job needs 1"
    )


# --- misconfiguration statusReason strings (docs/aws-semantics.md §2.6) ---------------------------

MISCONFIGURED = """\
organisation: misconfigured
job_queue:
  runnable_timeout_minutes: 10
shares:
  - name: A
    capacity: {ml.m5.xlarge: 4}
    strategy: LEND_AND_BORROW
    borrow_limit: 200
  - name: B
    capacity: {ml.m5.xlarge: 4}
    strategy: LEND
  - name: C
    capacity: {ml.m5.xlarge: 4}
    strategy: RESERVE
  - name: D
    capacity: {ml.m5.xlarge: 2}
    strategy: LEND_AND_BORROW
    borrow_limit: 100
"""


@pytest.fixture
def misconfigured(tmp_path: Path) -> Any:
    path = tmp_path / "misconfigured.yaml"
    path.write_text(MISCONFIGURED)
    with EmulatorServer(org_files=[path]) as server:
        yield server


@pytest.mark.parametrize(
    ("share", "count", "reason"),
    [
        ("A", 15, REASON_SE_MAX),  # the environment has 14
        ("B", 5, REASON_SHARE_LIMIT),  # LEND share of 4
        ("D", 5, REASON_SHARE_AND_BORROW_LIMIT),  # 2 x (1 + 100%) = 4
        ("A", 11, REASON_BORROWABLE),  # own 4 + lendable 4 (B) + 2 (D) = 10; C is RESERVE
    ],
)
def test_stuck_job_carries_the_aws_misconfiguration_reason(
    misconfigured: EmulatorServer, share: str, count: int, reason: str
) -> None:
    batch = misconfigured.client("batch")
    queue = misconfigured.queue_arn("misconfigured")
    job = submit(
        batch, queue, share, "too-big", serviceRequestPayload=payload("ml.m5.xlarge", count)
    )
    misconfigured.advance(5)

    described = batch.describe_service_job(jobId=job)

    assert (described["status"], described["statusReason"]) == ("RUNNABLE", reason)


def test_time_limit_action_terminates_a_stuck_job(misconfigured: EmulatorServer) -> None:
    batch = misconfigured.client("batch")
    queue = misconfigured.queue_arn("misconfigured")
    job = submit(batch, queue, "B", "too-big", serviceRequestPayload=payload("ml.m5.xlarge", 5))
    misconfigured.advance(601)

    described = batch.describe_service_job(jobId=job)

    assert described["status"] == "FAILED"
    assert described["statusReason"] == (
        "Terminated by JobStateTimeLimit action due to reason: "
        "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"
    )


# --- configuration changes reach the scheduler ------------------------------------------------


def test_share_unit_missing_from_the_environment_waits_as_misconfigured(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    batch.create_quota_share(
        quotaShareName="p4d",
        jobQueue=queue,
        capacityLimits=[{"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": 1}],
        resourceSharingConfiguration={"strategy": "RESERVE"},
        preemptionConfiguration={"inSharePreemption": "DISABLED"},
    )
    job = submit(batch, queue, "p4d", "big-gpu", serviceRequestPayload=payload("ml.p4d.24xlarge"))
    emulator.advance(5)

    assert batch.describe_service_job(jobId=job)["statusReason"] == REASON_SE_MAX


def test_raising_environment_capacity_rechecks_a_waiting_job(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS1", "four", serviceRequestPayload=payload(count=4))
    emulator.advance(5)
    assert batch.describe_service_job(jobId=job)["statusReason"] == REASON_SE_MAX
    batch.update_service_environment(
        serviceEnvironment="seed-demo-training",
        capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 4}],
    )
    emulator.advance(5)

    # the environment fits it now; QS1's own 1 + 200% borrow limit = 3 still does not
    assert batch.describe_service_job(jobId=job)["statusReason"] == REASON_SHARE_AND_BORROW_LIMIT


def test_lowering_a_share_limit_preempts_its_running_jobs(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    arn = f"{queue}/quota-share/QS3"
    batch.update_quota_share(
        quotaShareArn=arn, capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}]
    )
    jobs = [submit(batch, queue, "QS3", f"q3-{n}") for n in range(2)]
    emulator.advance(10)
    assert [status(batch, j) for j in jobs] == ["RUNNING", "RUNNING"]

    batch.update_quota_share(
        quotaShareArn=arn, capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}]
    )
    emulator.advance(10)
    described = [batch.describe_service_job(jobId=j) for j in jobs]

    assert sorted(d["status"] for d in described) == ["RUNNABLE", "RUNNING"]
    assert (
        sum(d.get("preemptionSummary", {}).get("preemptedAttemptCount", 0) for d in described) == 1
    )


def test_deleting_a_share_terminates_its_jobs(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "doomed")
    emulator.advance(10)
    arn = f"{queue}/quota-share/QS3"

    batch.update_quota_share(quotaShareArn=arn, state="DISABLED")
    batch.delete_quota_share(quotaShareArn=arn)
    described = batch.describe_service_job(jobId=job)

    assert (described["status"], described["isTerminated"]) == ("FAILED", True)


def test_a_runnable_job_has_no_status_reason_by_default_as_aws_leaves_it(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    submit(batch, queue, "QS3", "first")
    second = submit(batch, queue, "QS3", "second")
    emulator.advance(10)

    described = batch.describe_service_job(jobId=second)
    listed = batch.list_service_jobs(jobQueue=queue, jobStatus="RUNNABLE")["jobSummaryList"]

    assert described["status"] == "RUNNABLE" and "statusReason" not in described
    assert [j["jobId"] for j in listed] == [second] and "statusReason" not in listed[0]
    assert emulator.explain(second)["pending"]["kind"] == "WAITING_FOR_OWN_CAPACITY"  # why, still


def test_tags_a_service_job_by_its_arn(batch: Any, queue: str) -> None:
    job = submit(batch, queue, "QS1", "tagged", tags={"team": "vision"})
    arn = batch.describe_service_job(jobId=job)["jobArn"]

    batch.tag_resource(resourceArn=arn, tags={"run": "7"})

    assert batch.list_tags_for_resource(resourceArn=arn)["tags"] == {"team": "vision", "run": "7"}
    assert batch.describe_service_job(jobId=job)["tags"] == {"team": "vision", "run": "7"}
