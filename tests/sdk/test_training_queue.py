"""SageMaker SDK v3 ``TrainingQueue`` / ``TrainingQueuedJob`` end to end over HTTP on the emulator.

Every call goes through the SDK's own code and boto3 clients, unmodified: the SDK passes job
ARNs as ``jobId``, sends ``retryStrategy.evaluateOnExit`` on every submit and reads the latest
attempt's training job with SageMaker's ``DescribeTrainingJob``.
"""

from __future__ import annotations

import pytest
from sagemaker.train.aws_batch.training_queue import TrainingQueue
from sagemaker.train.aws_batch.training_queued_job import TrainingQueuedJob
from sagemaker.train.model_trainer import ModelTrainer

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.scheduling import REASON_CROSS_SHARE, REASON_IN_SHARE
from tests.sdk.helpers import IMAGE, QUEUE, sleep_advances, trainer

RUNS_10_MIN = {"quota.local/duration-seconds": "600"}


def status(job: TrainingQueuedJob) -> str:
    return str(job.describe()["status"])


def test_submit_returns_a_job_the_sdk_describes_by_its_arn(sdk: EmulatorServer) -> None:
    job = TrainingQueue(QUEUE).submit(trainer(), None, job_name="first", quota_share_name="QS1")

    described = job.describe()

    assert job.job_arn.startswith("arn:aws:batch:us-east-1:123456789012:service-job/")
    assert (described["jobArn"], described["jobName"]) == (job.job_arn, "first")
    assert described["quotaShareName"] == "QS1"
    assert described["retryStrategy"]["evaluateOnExit"][-1] == {
        "action": "EXIT",
        "onStatusReason": "*",
    }


def test_map_submits_one_job_per_input(sdk: EmulatorServer) -> None:
    jobs = TrainingQueue(QUEUE).map(
        trainer(), [None, None, None], job_names=["m0", "m1", "m2"], quota_share_name="QS3"
    )

    assert [j.job_name for j in jobs] == ["m0", "m1", "m2"]
    assert len({j.job_arn for j in jobs}) == 3
    assert {j.describe()["quotaShareName"] for j in jobs} == {"QS3"}


def test_list_jobs_by_status_name_and_get_job(sdk: EmulatorServer) -> None:
    queue = TrainingQueue(QUEUE)
    running = queue.submit(trainer(), None, job_name="runs", quota_share_name="QS3")
    sdk.advance(10)
    waiting = queue.submit(trainer(), None, job_name="waits", quota_share_name="QS3")
    queue.submit(trainer(), None, job_name="waits-too", quota_share_name="QS3")
    sdk.advance(10)  # QS3 reserves its one instance and never borrows

    assert [j.job_arn for j in queue.list_jobs()] == [running.job_arn]  # RUNNING by default
    assert [j.job_name for j in queue.list_jobs(status="RUNNABLE")] == ["waits-too", "waits"]
    assert [j.job_arn for j in queue.list_jobs(job_name="WAITS")] == [waiting.job_arn]
    assert {j.job_name for j in queue.list_jobs(job_name="wait*")} == {"waits", "waits-too"}
    assert queue.get_job("runs").job_arn == running.job_arn


def test_get_job_of_an_unknown_name_says_so(sdk: EmulatorServer) -> None:
    with pytest.raises(ValueError, match="Cannot find job: nobody"):
        TrainingQueue(QUEUE).get_job("nobody")


def test_list_jobs_by_share(sdk: EmulatorServer) -> None:
    queue = TrainingQueue(QUEUE)
    qs1 = queue.submit(trainer(), None, job_name="a", quota_share_name="QS1")
    queue.submit(trainer(), None, job_name="b", quota_share_name="QS3")
    sdk.advance(10)

    listed = queue.list_jobs_by_share(quota_share_name="QS1")

    assert [(j.job_arn, j.quota_share_name) for j in listed] == [(qs1.job_arn, "QS1")]
    assert queue.list_jobs_by_share(status="SUCCEEDED", quota_share_name="QS1") == []


def test_update_changes_the_priority_through_the_arn(sdk: EmulatorServer) -> None:
    job = TrainingQueue(QUEUE).submit(trainer(), None, quota_share_name="QS1", priority=2)

    answer = job.update(7)

    assert answer["jobArn"] == job.job_arn
    assert job.describe()["schedulingPriority"] == 7


def test_terminate_stops_the_job_through_the_arn(sdk: EmulatorServer) -> None:
    job = TrainingQueue(QUEUE).submit(trainer(), None, quota_share_name="QS1")
    sdk.advance(10)

    job.terminate("no longer needed")

    described = job.describe()
    assert (described["status"], described["isTerminated"]) == ("FAILED", True)
    assert described["statusReason"] == "no longer needed"


def test_result_of_a_finished_job_is_its_description(sdk: EmulatorServer) -> None:
    job = TrainingQueue(QUEUE).submit(trainer(), None, quota_share_name="QS3", tags=RUNS_10_MIN)
    sdk.advance(700)

    result = job.result()

    assert (result["jobArn"], result["status"]) == (job.job_arn, "SUCCEEDED")


def test_result_of_a_failed_job_raises_its_status_reason(sdk: EmulatorServer) -> None:
    tags = {**RUNS_10_MIN, "quota.local/failure-reason": "AlgorithmError: loss is NaN"}
    job = TrainingQueue(QUEUE).submit(trainer(), None, quota_share_name="QS3", tags=tags)
    sdk.advance(700)

    with pytest.raises(RuntimeError, match="Received status from SageMaker:AlgorithmError"):
        job.result()


def test_wait_polls_until_the_job_finishes(
    sdk: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleep_advances(sdk, monkeypatch)  # each 5-second poll sleep is 5 emulated seconds
    job = TrainingQueue(QUEUE).submit(trainer(), None, quota_share_name="QS3", tags=RUNS_10_MIN)

    final = job.wait()

    assert final["status"] == "SUCCEEDED"
    assert sdk.request_counts["DescribeServiceJob"] > 100  # it polled for 10 emulated minutes
    assert 600 <= sdk.now < 700


def test_model_trainer_of_the_latest_attempt_comes_from_describe_training_job(
    sdk: EmulatorServer,
) -> None:
    job = TrainingQueue(QUEUE).submit(trainer(runtime_s=900), None, quota_share_name="QS1")
    sdk.advance(10)

    rebuilt = job.get_model_trainer()

    assert isinstance(rebuilt, ModelTrainer)
    assert rebuilt.training_image == IMAGE
    assert rebuilt.stopping_condition.max_runtime_in_seconds == 900
    assert rebuilt.compute.instance_type == "ml.g5.xlarge"
    assert sdk.request_counts["DescribeTrainingJob"] == 1


# --- the tutorial's three outcomes through the SDK alone (docs/aws-semantics.md §2.4) -------------


def tutorial_jobs(queue: TrainingQueue) -> list[TrainingQueuedJob]:
    """Three QS1 jobs with priorities 3, 2 and 1, each on one ml.g5.xlarge."""
    return [
        queue.submit(trainer(), None, job_name=f"qs1-p{p}", quota_share_name="QS1", priority=p)
        for p in (3, 2, 1)
    ]


def test_tutorial_two_dispatch_one_borrowing_and_the_third_waits(sdk: EmulatorServer) -> None:
    queue = TrainingQueue(QUEUE)
    p3, p2, p1 = tutorial_jobs(queue)
    sdk.advance(10)

    assert [status(j) for j in (p3, p2, p1)] == ["RUNNING", "RUNNING", "RUNNABLE"]
    assert {j.job_name for j in queue.list_jobs_by_share(quota_share_name="QS1")} == {
        "qs1-p3",
        "qs1-p2",
    }


def test_tutorial_lender_preempts_the_borrower(sdk: EmulatorServer) -> None:
    queue = TrainingQueue(QUEUE)
    p3, p2, _ = tutorial_jobs(queue)
    sdk.advance(10)
    lender = queue.submit(trainer(), None, job_name="qs2-job", quota_share_name="QS2")
    sdk.advance(10)

    victim = p2.describe()
    assert (status(lender), status(p3)) == ("RUNNING", "RUNNING")
    assert (victim["status"], victim["statusReason"]) == ("RUNNABLE", REASON_CROSS_SHARE)
    assert victim["preemptionSummary"]["preemptedAttemptCount"] == 1


def test_tutorial_raised_priority_preempts_inside_the_share(sdk: EmulatorServer) -> None:
    queue = TrainingQueue(QUEUE)
    p3, _, p1 = tutorial_jobs(queue)
    sdk.advance(10)
    queue.submit(trainer(), None, job_name="qs2-job", quota_share_name="QS2")
    sdk.advance(10)

    p1.update(4)
    sdk.advance(10)

    assert (status(p1), p1.describe()["schedulingPriority"]) == ("RUNNING", 4)
    assert (status(p3), p3.describe()["statusReason"]) == ("RUNNABLE", REASON_IN_SHARE)


# --- retryStrategy.evaluateOnExit as the SDK sends it -------------------------------------------

INTERNAL_ERROR = "InternalServerError: We encountered an internal error. Please try again."
SDK_RULES_THREE_ATTEMPTS = {
    "attempts": 3,
    "evaluateOnExit": [
        {
            "action": "RETRY",
            "onStatusReason": f"Received status from SageMaker:{INTERNAL_ERROR}",
        },
        {"action": "EXIT", "onStatusReason": "*"},
    ],
}


def failing(sdk: EmulatorServer, reason: str) -> TrainingQueuedJob:
    tags = {"quota.local/duration-seconds": "60", "quota.local/failure-reason": reason}
    job = TrainingQueue(QUEUE).submit(
        trainer(), None, quota_share_name="QS3", tags=tags, retry_config=SDK_RULES_THREE_ATTEMPTS
    )
    sdk.advance(1000)
    return job


def test_sdk_retry_rule_retries_an_internal_error(sdk: EmulatorServer) -> None:
    described = failing(sdk, INTERNAL_ERROR).describe()

    assert described["status"] == "FAILED"
    assert len(described["attempts"]) == 3


def test_sdk_exit_rule_fails_any_other_reason_at_once(sdk: EmulatorServer) -> None:
    described = failing(sdk, "AlgorithmError: out of memory").describe()

    assert described["status"] == "FAILED"
    assert len(described["attempts"]) == 1
    reason = "Received status from SageMaker:AlgorithmError: out of memory"
    assert described["statusReason"] == reason
