"""Job ids as AWS hands them out and takes them back: random UUIDs, and ARNs wherever a
``jobId`` is taken (describe, update, terminate, bulk terminate)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from tests.emulator.helpers import status, submit
from tests.helpers import ORGS_DIR

FOREIGN_ARN = (
    "arn:aws:batch:eu-west-1:210987654321:service-job/0b7c6d5e-4f3a-4b2c-9d1e-0f9a8b7c6d5e"
)


def arn_of(batch: Any, job_id: str) -> str:
    return str(batch.describe_service_job(jobId=job_id)["jobArn"])


def test_describe_takes_the_job_arn(batch: Any, queue: str) -> None:
    job_id = submit(batch, queue, "QS1", "by-arn")
    arn = f"arn:aws:batch:us-east-1:123456789012:service-job/{job_id}"

    described = batch.describe_service_job(jobId=arn)

    assert (described["jobId"], described["jobArn"]) == (job_id, arn)


def test_update_takes_the_job_arn(batch: Any, queue: str) -> None:
    job_id = submit(batch, queue, "QS1", "by-arn")

    answer = batch.update_service_job(jobId=arn_of(batch, job_id), schedulingPriority=42)

    assert answer["jobId"] == job_id
    assert batch.describe_service_job(jobId=job_id)["schedulingPriority"] == 42


def test_terminate_takes_the_job_arn(batch: Any, queue: str) -> None:
    job_id = submit(batch, queue, "QS1", "by-arn")

    batch.terminate_service_job(jobId=arn_of(batch, job_id), reason="by ARN")

    assert status(batch, job_id) == "FAILED"


def test_terminate_many_terminates_jobs_named_by_arn(batch: Any, queue: str) -> None:
    ids = [submit(batch, queue, "QS1", f"j{n}") for n in range(2)]
    arns = [arn_of(batch, job_id) for job_id in ids]

    result = batch.terminate_service_jobs(jobs=arns, reason="cleanup")

    assert result == {**result, "successful": ids, "errors": []}  # "service job IDs"
    assert {status(batch, job_id) for job_id in ids} == {"FAILED"}


def test_rejects_describing_a_job_arn_of_another_account(batch: Any) -> None:
    with pytest.raises(ClientError) as caught:
        batch.describe_service_job(jobId=FOREIGN_ARN)

    message = caught.value.response["Error"]["Message"]
    assert "names account 210987654321 in eu-west-1" in message
    assert "account 123456789012 in us-east-1" in message


def test_terminate_many_counts_another_accounts_arn_as_not_found(batch: Any) -> None:
    result = batch.terminate_service_jobs(jobs=[FOREIGN_ARN], reason="cleanup")

    assert (result["successful"], result["errors"]) == ([FOREIGN_ARN.rsplit("/", 1)[1]], [])


@pytest.mark.parametrize("operation", ["describe", "update", "terminate"])
def test_rejects_a_malformed_job_id(batch: Any, operation: str) -> None:
    calls = {
        "describe": lambda: batch.describe_service_job(jobId="job-1"),
        "update": lambda: batch.update_service_job(jobId="job-1", schedulingPriority=1),
        "terminate": lambda: batch.terminate_service_job(jobId="job-1", reason="x"),
    }
    with pytest.raises(ClientError) as caught:
        calls[operation]()

    error = caught.value.response["Error"]
    assert error["Code"] == "ClientException"
    assert "no service job 'job-1': not a service job id or ARN" in error["Message"]


def test_job_ids_are_version_4_uuids(batch: Any, queue: str) -> None:
    job_id = submit(batch, queue, "QS1", "j")

    assert uuid.UUID(job_id).version == 4 and str(uuid.UUID(job_id)) == job_id


def test_two_unseeded_runs_hand_out_different_ids() -> None:
    def first_ids() -> list[str]:
        with EmulatorServer(org_files=[SEED_DEMO]) as emu:
            batch = emu.client("batch")
            return [submit(batch, emu.queue_arn("seed-demo"), "QS1", f"j{n}") for n in range(3)]

    assert not set(first_ids()) & set(first_ids())


@pytest.mark.parametrize("seed", [None, 0])
def test_deleting_one_queue_keeps_later_submits_to_another_working(seed: int | None) -> None:
    with EmulatorServer(org_files=[SEED_DEMO, ORGS_DIR / "research.yaml"], seed=seed) as emu:
        batch = emu.client("batch")
        demo, research = emu.queue_arn("seed-demo"), emu.queue_arn("research")
        shares = batch.list_quota_shares(jobQueue=research)["quotaShares"]
        early = [submit(batch, demo, "QS1", f"demo-{n}") for n in range(2)]
        early += [submit(batch, research, shares[0]["quotaShareName"], f"r-{n}") for n in range(3)]
        tear_down(batch, research, [s["quotaShareArn"] for s in shares])

        later = [submit(batch, demo, "QS2", f"later-{n}") for n in range(4)]

        assert len(set(early + later)) == len(early) + len(later)
        assert {status(batch, j) for j in later} <= {"SUBMITTED", "RUNNABLE", "SCHEDULED"}


def tear_down(batch: Any, queue: str, share_arns: list[str]) -> None:
    """Delete a queue as AWS requires: disable and delete its shares, disable it, delete it."""
    for arn in share_arns:
        batch.update_quota_share(quotaShareArn=arn, state="DISABLED")
        batch.delete_quota_share(quotaShareArn=arn)
    batch.update_job_queue(jobQueue=queue, state="DISABLED")
    batch.delete_job_queue(jobQueue=queue)
