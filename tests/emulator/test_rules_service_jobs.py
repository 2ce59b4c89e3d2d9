"""Documented rules of the service-job operations, over HTTP: each test shows one sentence of
botocore's documentation holding (listed with its sentence in ``documented_rules.py`` and
docs/emulator.md)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.scheduling import REASON_TIMEOUT
from tests.emulator.helpers import status, submit

RUNS_1_MIN = {"quota.local/duration-seconds": "60"}


def refusal(call: Any, *args: Any, **params: Any) -> str:
    with pytest.raises(ClientError) as caught:
        call(*args, **params)
    assert caught.value.response["Error"]["Code"] == "ClientException"
    return str(caught.value.response["Error"]["Message"])


def names(batch: Any, queue: str, **params: Any) -> list[str]:
    listed = batch.list_service_jobs(jobQueue=queue, **params)["jobSummaryList"]
    return [job["jobName"] for job in listed]


# --- submit -------------------------------------------------------------------------------------


def test_submit_takes_the_queue_name_or_arn(batch: Any, queue: str) -> None:
    by_arn = submit(batch, queue, "QS1", "by-arn")
    by_name = submit(batch, "seed-demo-queue", "QS1", "by-name")

    queues = {batch.describe_service_job(jobId=j)["jobQueue"] for j in (by_arn, by_name)}
    assert queues == {queue}


def test_retry_attempts_are_1_to_10(batch: Any, queue: str) -> None:
    refused = [
        refusal(submit, batch, queue, "QS1", "r", retryStrategy={"attempts": n}) for n in (0, 11)
    ]
    for n in (1, 10):
        submit(batch, queue, "QS1", f"ok{n}", retryStrategy={"attempts": n})

    assert all(
        "retryStrategy.attempts: retry attempts must be an integer between 1 and 10" in m
        for m in refused
    )


def test_update_priority_is_0_to_9999(batch: Any, queue: str) -> None:
    job = submit(batch, queue, "QS1", "j")

    refused = [
        refusal(batch.update_service_job, jobId=job, schedulingPriority=p) for p in (-1, 10_000)
    ]
    for priority in (0, 9999):
        batch.update_service_job(jobId=job, schedulingPriority=priority)

    assert all("between 0 and 9999" in m for m in refused)


def test_rejects_a_payload_that_is_not_json(batch: Any, queue: str) -> None:
    message = refusal(submit, batch, queue, "QS1", "j", serviceRequestPayload="ResourceConfig=x")

    assert message.startswith("serviceRequestPayload: not a JSON object")


def test_preemption_retries_exhausted_terminate_the_job(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    submit(batch, queue, "QS1", "own", schedulingPriority=3)
    no_retries = {"preemptionRetriesBeforeTermination": 0}
    borrower = submit(
        batch, queue, "QS1", "borrower", schedulingPriority=2, preemptionConfiguration=no_retries
    )
    emulator.advance(10)
    submit(batch, queue, "QS2", "lender")
    emulator.advance(10)

    described = batch.describe_service_job(jobId=borrower)
    assert described["status"] == "FAILED"
    assert "preemptionRetriesBeforeTermination (0) used up" in described["statusReason"]


def test_attempt_duration_ends_the_attempt(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job = submit(
        batch,
        queue,
        "QS3",
        "slow",
        tags={"quota.local/duration-seconds": "600"},
        timeoutConfig={"attemptDurationSeconds": 60},
    )
    emulator.advance(200)

    described = batch.describe_service_job(jobId=job)
    assert (described["status"], described["statusReason"]) == ("FAILED", REASON_TIMEOUT)


def test_terminate_reason_is_what_describe_returns(batch: Any, queue: str) -> None:
    job = submit(batch, queue, "QS1", "j")

    batch.terminate_service_job(jobId=job, reason="superseded by run 7")

    assert batch.describe_service_job(jobId=job)["statusReason"] == "superseded by run 7"


def test_rejects_terminating_more_than_50_jobs(batch: Any, queue: str) -> None:
    job = submit(batch, queue, "QS1", "j")

    message = refusal(batch.terminate_service_jobs, jobs=[job] * 51, reason="x")
    batch.terminate_service_jobs(jobs=[job] * 50, reason="x")

    assert "jobs: a list of up to 50 entries (got 51)" in message


# --- evaluateOnExit -----------------------------------------------------------------------------


def failing(
    emulator: EmulatorServer, batch: Any, queue: str, reason: str, rules: list[dict[str, str]]
) -> dict[str, Any]:
    """A QS3 job whose every attempt fails with ``reason``, three attempts, ``rules``."""
    job = submit(
        batch,
        queue,
        "QS3",
        "failing",
        tags={**RUNS_1_MIN, "quota.local/failure-reason": reason},
        retryStrategy={"attempts": 3, "evaluateOnExit": rules},
    )
    emulator.advance(1000)
    return dict(batch.describe_service_job(jobId=job))


def test_exit_pattern_ending_with_a_star_matches_the_start(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    rules = [{"action": "EXIT", "onStatusReason": "Received status from SageMaker:AlgorithmError*"}]

    matched = failing(emulator, batch, queue, "AlgorithmError: NaN loss", rules)
    unmatched = failing(emulator, batch, queue, "InternalServerError: busy", rules)

    assert (matched["status"], len(matched["attempts"])) == ("FAILED", 1)
    assert (unmatched["status"], len(unmatched["attempts"])) == ("FAILED", 3)


def test_exit_pattern_without_a_star_matches_the_whole_reason(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    exact = "Received status from SageMaker:AlgorithmError: NaN loss"
    inner_star = "Received status from SageMaker:*: NaN loss"  # only a final '*' is a wildcard

    whole = failing(
        emulator,
        batch,
        queue,
        "AlgorithmError: NaN loss",
        [{"action": "EXIT", "onStatusReason": exact}],
    )
    prefix = failing(
        emulator,
        batch,
        queue,
        "AlgorithmError: NaN loss again",
        [{"action": "EXIT", "onStatusReason": exact}],
    )
    starred = failing(
        emulator,
        batch,
        queue,
        "AlgorithmError: NaN loss",
        [{"action": "EXIT", "onStatusReason": inner_star}],
    )

    assert [len(j["attempts"]) for j in (whole, prefix, starred)] == [1, 3, 3]


def test_first_matching_rule_decides_and_no_match_retries(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    rules = [
        {"action": "RETRY", "onStatusReason": "Received status from SageMaker:Internal*"},
        {"action": "EXIT", "onStatusReason": "*"},
    ]

    retried = failing(emulator, batch, queue, "InternalServerError: busy", rules)
    exited = failing(emulator, batch, queue, "AlgorithmError: bug", rules)
    unruled = failing(emulator, batch, queue, "AlgorithmError: bug", [])

    assert [len(j["attempts"]) for j in (retried, exited, unruled)] == [3, 1, 3]


def test_exit_pattern_is_up_to_512_printable_characters(batch: Any, queue: str) -> None:
    def rules(pattern: str) -> dict[str, Any]:
        return {"attempts": 2, "evaluateOnExit": [{"action": "EXIT", "onStatusReason": pattern}]}

    too_long = refusal(submit, batch, queue, "QS1", "j", retryStrategy=rules("a" * 513))
    control = refusal(submit, batch, queue, "QS1", "j", retryStrategy=rules("line\nbreak"))
    submit(batch, queue, "QS1", "ok", retryStrategy=rules("A" * 511 + "*"))

    assert "at most 512 characters" in too_long
    assert "printable characters only" in control


def test_a_job_has_at_most_5_exit_rules(batch: Any, queue: str) -> None:
    def rules(count: int) -> dict[str, Any]:
        entry = {"action": "RETRY", "onStatusReason": "Received status from SageMaker:*"}
        return {"attempts": 2, "evaluateOnExit": [entry] * count}

    submit(batch, queue, "QS1", "five", retryStrategy=rules(5))
    message = refusal(submit, batch, queue, "QS1", "six", retryStrategy=rules(6))

    assert message.endswith(
        "retryStrategy.evaluateOnExit: a service job has at most 5 evaluateOnExit rules "
        "(got 6); fix: merge rules with a pattern ending in *"
    )


# --- ListServiceJobs filters --------------------------------------------------------------------


def test_only_one_filter_at_a_time(batch: Any, queue: str) -> None:
    filters = [
        {"name": "JOB_NAME", "values": ["a"]},
        {"name": "QUOTA_SHARE_NAME", "values": ["QS1"]},
    ]

    message = refusal(batch.list_service_jobs, jobQueue=queue, filters=filters)

    assert "only one filter can be used at a time (got 2: JOB_NAME, QUOTA_SHARE_NAME)" in message


def test_a_name_or_time_filter_ignores_the_status(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    submit(batch, queue, "QS3", "runs")
    submit(batch, queue, "QS3", "waits")
    emulator.advance(10)
    every = [{"name": "JOB_NAME", "values": ["*"]}]

    assert names(batch, queue, jobStatus="RUNNABLE") == ["waits"]
    assert names(batch, queue, jobStatus="RUNNABLE", filters=every) == ["runs", "waits"]


def test_job_name_filter_is_case_insensitive(batch: Any, queue: str) -> None:
    submit(batch, queue, "QS1", "Test1")
    submit(batch, queue, "QS1", "test1")
    submit(batch, queue, "QS1", "Test10")

    exact = names(batch, queue, filters=[{"name": "JOB_NAME", "values": ["test1"]}])

    assert sorted(exact) == ["Test1", "test1"]


def test_job_name_filter_ending_with_a_star_matches_the_start(batch: Any, queue: str) -> None:
    submit(batch, queue, "QS1", "test1")
    submit(batch, queue, "QS1", "Test10")
    submit(batch, queue, "QS1", "other")

    started = names(batch, queue, filters=[{"name": "JOB_NAME", "values": ["test1*"]}])

    assert sorted(started) == ["Test10", "test1"]


def test_job_name_filter_groups_by_name(emulator: EmulatorServer, batch: Any, queue: str) -> None:
    for name in ("b", "a", "b", "c"):
        submit(batch, queue, "QS1", name)
        emulator.advance(1)

    listed = names(batch, queue, filters=[{"name": "JOB_NAME", "values": ["*"]}])

    assert listed == ["a", "b", "b", "c"]  # groups in name order, newest first inside


def test_time_filters_take_epoch_milliseconds(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    early = submit(batch, queue, "QS1", "early")
    emulator.advance(10)
    late = submit(batch, queue, "QS1", "late")
    early_ms, late_ms = (batch.describe_service_job(jobId=j)["createdAt"] for j in (early, late))

    after = names(batch, queue, filters=[{"name": "AFTER_CREATED_AT", "values": [str(early_ms)]}])
    before = names(batch, queue, filters=[{"name": "BEFORE_CREATED_AT", "values": [str(late_ms)]}])

    assert late_ms - early_ms == 10_000
    assert (after, before) == (["late"], ["early"])


def test_filter_names_are_case_sensitive(batch: Any, queue: str) -> None:
    message = refusal(
        batch.list_service_jobs, jobQueue=queue, filters=[{"name": "job_name", "values": ["a"]}]
    )

    assert "filters[0].name: unknown filter 'job_name' (names are case sensitive)" in message


# --- snapshot -----------------------------------------------------------------------------------


def test_snapshot_lists_the_first_100_runnable_jobs_and_each_shares_first(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    submit(batch, queue, "QS3", "holder")
    waiting = [submit(batch, queue, "QS3", f"w{n}") for n in range(102)]
    emulator.advance(10)

    snapshot = batch.get_job_queue_snapshot(jobQueue=queue)

    front = [e["jobArn"].rsplit("/", 1)[1] for e in snapshot["frontOfQueue"]["jobs"]]
    assert front == waiting[:100]
    shares = snapshot["frontOfQuotaShares"]["quotaShares"]
    assert [e["jobArn"].rsplit("/", 1)[1] for e in shares["QS3"]] == [waiting[0]]
    assert status(batch, waiting[-1]) == "RUNNABLE"


def test_earliest_time_at_position_is_when_the_job_moved_to_its_place(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    holder = submit(batch, queue, "QS3", "holder", tags=RUNS_1_MIN)
    first, second, third = (submit(batch, queue, "QS3", n) for n in ("first", "second", "third"))
    emulator.advance(10)

    def since() -> dict[str, int]:
        jobs = batch.get_job_queue_snapshot(jobQueue=queue)["frontOfQueue"]["jobs"]
        return {e["jobArn"].rsplit("/", 1)[1]: e["earliestTimeAtPosition"] for e in jobs}

    dispatched = batch.describe_service_job(jobId=holder)["scheduledAt"]
    assert since() == {first: dispatched, second: dispatched, third: dispatched}  # each moved up
    emulator.advance(100)  # the holder ends: "first" runs, "second" and "third" move up
    ended = batch.describe_service_job(jobId=holder)["stoppedAt"]
    assert since() == {second: ended, third: ended}
