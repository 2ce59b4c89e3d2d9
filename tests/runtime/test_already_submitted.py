"""A submit Batch rejects as a repeat of its clientToken finds the job the first request made."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.commands.demo import emulator_client
from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.runtime import JobSubmission, QueueClient
from tests.runtime.helpers import FAST_RETRIES, runs_for, training_job


def test_a_repeat_is_rejected_by_the_emulator_and_answered_with_the_first_job(
    client: QueueClient, emu: EmulatorServer
) -> None:
    first = client.submit("again", "QS1", training_job())
    second = client.submit("again", "QS1", training_job())

    assert second.job_id == first.job_id and second.already_submitted
    assert emu.request_counts["SubmitServiceJob"] == 2  # the second was sent, and refused
    assert [j.job_id for j in client.list(share="QS1")] == [first.job_id]


def test_find_existing_matches_name_share_payload_and_tags(client: QueueClient) -> None:
    job = client.submit("twin", "QS1", training_job(), tags={"run": "1"})
    client.submit("twin", "QS2", training_job(), tags={"run": "1"})  # same name, other share
    client.submit("twin", "QS1", training_job(count=2), tags={"run": "1"})  # other payload
    client.submit("twin", "QS1", training_job(), tags={"run": "2"})  # other tags

    found = client.find_existing(JobSubmission("twin", "QS1", training_job(), tags={"run": "1"}))
    missing = client.find_existing(JobSubmission("twin", "QS3", training_job()))

    assert found is not None and found.job_id == job.job_id
    assert missing is None


def test_the_oldest_match_is_the_one_the_token_made(
    client: QueueClient, emu: EmulatorServer
) -> None:
    first = client.submit("attempts", "QS1", training_job())
    client.terminate(first)
    retry = client.submit("attempts", "QS1", training_job(), client_token="attempt-2")
    emu.advance(5)

    again = client.submit("attempts", "QS1", training_job())

    assert retry.job_id != first.job_id
    assert again.job_id == first.job_id and again.already_submitted


def test_a_refusal_that_is_not_a_repeat_is_raised(client: QueueClient, emu: EmulatorServer) -> None:
    client.spec()  # cached while QS2 is ENABLED, so the client's own checks pass
    emu.client("batch").update_quota_share(
        quotaShareArn=f"{emu.queue_arn('seed-demo')}/quota-share/QS2", state="DISABLED"
    )

    with pytest.raises(ClientError, match="DISABLED"):
        client.submit("closed", "QS2", training_job())

    assert emu.request_counts["SubmitServiceJob"] == 1
    assert "ListServiceJobs" in emu.request_counts  # it looked, and found nothing


def test_a_lost_response_then_a_rejected_retry_is_this_calls_own_job() -> None:
    """botocore retries the 500 with the same token; Batch rejects it; the job is found and
    ``already_submitted`` is False: this call made it."""
    plan = FaultPlan(lost_response={"SubmitServiceJob": 1.0})
    with EmulatorServer(org_files=[SEED_DEMO], faults=plan) as emu:
        client = emulator_client(emu, retry=FAST_RETRIES)
        client.spec()
        handle = _submit_with_one_lost_answer(emu, client)
        jobs = client.list(share="QS1")

    assert [j.job_id for j in jobs] == [handle.job_id]
    assert not handle.already_submitted


def _submit_with_one_lost_answer(emu: EmulatorServer, client: QueueClient) -> Any:
    """Lose the first SubmitServiceJob answer only; the retry reaches a healed network."""
    faults = emu.emulator.faults
    assert faults is not None
    draw = faults.draw

    def once(operation: str) -> Any:
        fault = draw(operation)
        if operation == "SubmitServiceJob":
            emu.emulator.faults = None
        return fault

    faults.draw = once  # type: ignore[method-assign]
    return client.submit("lost", "QS1", training_job())


def test_submit_many_rerun_reports_each_job_once_as_already_submitted(client: QueueClient) -> None:
    submissions = [
        JobSubmission(f"m{i}", "QS2", training_job(), tags=runs_for(60)) for i in range(5)
    ]
    first = client.submit_many(submissions)
    rerun = client.submit_many(submissions)

    assert [o.job_id for o in rerun] == [o.job_id for o in first]
    assert [o.already_submitted for o in first] == [False] * 5
    assert [o.already_submitted for o in rerun] == [True] * 5
    assert len(client.list(share="QS2")) == 5
