"""Finished jobs expire after the emulator's retention, so a long-lived emulator's memory is
bounded: by time on its clock and by count, the oldest first, with their tags and tokens."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.emulator import Emulator
from quota_constructs.local.state.errors import NotFound
from quota_constructs.local.state.job_service import JobRetention
from quota_constructs.local.testing import EmulatorServer
from tests.helpers import ORGS_DIR, payload, runs_for

HOUR = 3600.0


def submit(emulator: Emulator, queue: str, name: str, runtime_s: int = 600) -> str:
    answer = emulator.call(
        "batch",
        "SubmitServiceJob",
        {
            "jobName": name,
            "jobQueue": queue,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "serviceRequestPayload": payload(runtime_s=runtime_s),
            "quotaShareName": "QS1",
            "clientToken": f"token-{name}",
            "tags": {"team": "qs1", **runs_for(runtime_s)},
        },
    )
    return str(answer["jobId"])


def describe(emulator: Emulator, job_id: str) -> dict[str, Any]:
    return emulator.call("batch", "DescribeServiceJob", {"jobId": job_id})


def listed(emulator: Emulator, queue: str) -> set[str]:
    answer = emulator.call(
        "batch", "ListServiceJobs", {"jobQueue": queue, "jobStatus": "SUCCEEDED"}
    )
    return {job["jobName"] for job in answer["jobSummaryList"]}


def seed_demo(retention: JobRetention) -> tuple[Emulator, str]:
    emulator = Emulator(seed=7, retention=retention)
    return emulator, emulator.provision_file(ORGS_DIR / "seed-demo.yaml").job_queue_arn


def test_a_finished_job_is_visible_until_its_retention_passes() -> None:
    emulator, queue = seed_demo(JobRetention(finished_for_s=2 * HOUR, max_finished=None))
    job_id = submit(emulator, queue, "early")
    emulator.advance(HOUR)
    assert describe(emulator, job_id)["status"] == "SUCCEEDED"
    job = describe(emulator, job_id)
    finished_at = (job["stoppedAt"] - job["createdAt"]) / 1000  # submitted at clock 0

    emulator.advance(finished_at + 2 * HOUR - 1 - emulator.clock.now())
    assert listed(emulator, queue) == {"early"}

    emulator.advance(2)
    with pytest.raises(NotFound, match="no service job"):
        describe(emulator, job_id)
    assert listed(emulator, queue) == set()
    assert emulator.jobs.expired == 1


def test_expiry_takes_the_jobs_tags_and_client_token_with_it() -> None:
    emulator, queue = seed_demo(JobRetention(finished_for_s=HOUR, max_finished=None))
    job_id = submit(emulator, queue, "gone")
    arn = emulator.account.service_job(job_id)
    assert emulator.tags.of(arn) == {"team": "qs1", **runs_for(600)}
    assert emulator.identities.submitter(job_id) is not None

    emulator.advance(3 * HOUR)

    assert emulator.tags.of(arn) == {}
    assert "token-gone" not in emulator.jobs.tokens
    assert job_id not in emulator.jobs.submitted
    assert emulator.identities.submitter(job_id) is None
    again = submit(emulator, queue, "gone")  # the token is free again: a new job
    assert again != job_id


def test_past_the_count_limit_the_oldest_finished_jobs_expire_first() -> None:
    emulator, queue = seed_demo(JobRetention(finished_for_s=None, max_finished=2))
    for name in ("first", "second", "third"):
        submit(emulator, queue, name, runtime_s=60)
        emulator.advance(HOUR)

    assert listed(emulator, queue) == {"second", "third"}


def test_jobs_that_have_not_finished_never_expire() -> None:
    emulator, queue = seed_demo(JobRetention(finished_for_s=0, max_finished=0))
    long_job = submit(emulator, queue, "long", runtime_s=10 * 3600)
    emulator.advance(5 * HOUR)

    assert describe(emulator, long_job)["status"] == "RUNNING"
    emulator.advance(6 * HOUR)
    with pytest.raises(NotFound):
        describe(emulator, long_job)


def test_the_default_keeps_finished_jobs_two_weeks_and_twenty_thousand_of_them() -> None:
    assert JobRetention() == JobRetention(finished_for_s=14 * 86_400, max_finished=20_000)


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"finished_for_s": -1.0}, "finished_for_s: -1.0 is not a number of seconds >= 0"),
        ({"finished_for_s": float("nan")}, "finished_for_s: nan is not a number of seconds"),
        ({"max_finished": -3}, "max_finished: -3 is negative; give 0 or more"),
    ],
)
def test_a_bad_retention_is_refused_naming_the_field(kwargs: dict[str, Any], text: str) -> None:
    with pytest.raises(ValueError, match=text):
        JobRetention(**kwargs)


def test_over_http_an_expired_job_is_not_found_for_boto3() -> None:
    retention = JobRetention(finished_for_s=HOUR, max_finished=None)
    with EmulatorServer([ORGS_DIR / "seed-demo.yaml"], retention=retention) as server:
        batch = server.client("batch")
        queue = server.organisations["seed-demo"].job_queue_arn
        job_id = batch.submit_service_job(
            jobName="old",
            jobQueue=queue,
            serviceJobType="SAGEMAKER_TRAINING",
            serviceRequestPayload=payload(runtime_s=60),
            tags=runs_for(60),
            quotaShareName="QS1",
        )["jobId"]
        server.advance(3 * HOUR)

        with pytest.raises(ClientError) as raised:
            batch.describe_service_job(jobId=job_id)

    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] in (400, 404)


@pytest.mark.parametrize(
    ("options", "text"),
    [
        (["--job-retention", "soon"], "error: --job-retention 'soon': not a duration; write"),
        (["--job-retention", "0s"], "error: --job-retention '0s': not a duration"),
        (["--max-finished-jobs", "-1"], "error: --max-finished-jobs -1: must be from 0 to"),
    ],
)
def test_serve_refuses_a_bad_retention_in_one_line(options: list[str], text: str) -> None:
    result = CliRunner().invoke(app, ["local", "serve", "--port", "0", *options])

    assert result.exit_code == 2
    assert text in result.output
    assert "Traceback" not in result.output
