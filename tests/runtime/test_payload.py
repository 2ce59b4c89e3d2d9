"""Pure pre-submit logic: payload builder, clientToken, timeout, request rendering, checks."""

from __future__ import annotations

import json

import pytest

from quota_constructs.model import JobQueueSpec, QuotaShareSpec, ShareState, SharingStrategy
from quota_constructs.runtime import JobSubmission, TrainingJob, attempt_timeout, client_token
from tests.helpers import ROLE

QUEUE = JobQueueSpec(
    shares=(
        QuotaShareSpec(
            "QS1", {"ml.g5.xlarge": 1}, SharingStrategy.LEND_AND_BORROW, borrow_limit=200
        ),
        QuotaShareSpec("QS2", {"ml.g5.xlarge": 1}, SharingStrategy.LEND),
        QuotaShareSpec("QS3", {"ml.g5.xlarge": 1}, SharingStrategy.RESERVE),
        QuotaShareSpec(
            "OFF", {"ml.g5.xlarge": 1}, SharingStrategy.RESERVE, state=ShareState.DISABLED
        ),
    )
)


def job(**overrides: object) -> TrainingJob:
    fields: dict[str, object] = {
        "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
        "instance_type": "ml.g5.xlarge",
        "role_arn": ROLE,
        "output_s3_uri": "s3://bucket/out",
    }
    fields.update(overrides)
    return TrainingJob(**fields)  # type: ignore[arg-type]


def submission(**overrides: object) -> JobSubmission:
    fields: dict[str, object] = {"job_name": "train-1", "share": "QS1", "payload": job()}
    fields.update(overrides)
    return JobSubmission(**fields)  # type: ignore[arg-type]


def messages(sub: JobSubmission, queue: JobQueueSpec | None = QUEUE) -> str:
    return "\n".join(str(p) for p in sub.problems(queue))


def test_builder_renders_a_create_training_job_request() -> None:
    payload = job(
        instance_count=2,
        max_runtime_s=3 * 86_400,
        checkpoint_s3_uri="s3://bucket/ckpt",
        hyperparameters={"epochs": 3, "lr": 0.1},
        environment={"MODE": "fast"},
    ).payload("train-1")
    assert payload["TrainingJobName"] == "train-1"
    assert payload["ResourceConfig"]["InstanceCount"] == 2
    assert payload["StoppingCondition"] == {"MaxRuntimeInSeconds": 259_200}
    assert payload["HyperParameters"] == {"epochs": "3", "lr": "0.1"}
    assert payload["CheckpointConfig"] == {"S3Uri": "s3://bucket/ckpt"}
    assert payload["Environment"] == {"MODE": "fast"}


def test_timeout_follows_the_payload_not_a_fixed_day() -> None:
    sub = submission(payload=job(max_runtime_s=3 * 86_400))
    assert sub.request("q")["timeoutConfig"] == {"attemptDurationSeconds": 259_200}


def test_timeout_covers_managed_spot_waiting() -> None:
    stop = {"StoppingCondition": {"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 7200}}
    assert attempt_timeout(stop) == 7200


def test_no_stopping_condition_sends_no_timeout() -> None:
    payload = job().payload("x")
    del payload["StoppingCondition"]
    assert "timeoutConfig" not in submission(payload=payload).request("q")


def test_explicit_timeout_wins() -> None:
    assert submission(timeout_s=600).request("q")["timeoutConfig"] == {
        "attemptDurationSeconds": 600
    }


def test_priority_zero_is_sent() -> None:
    assert submission(priority=0).request("q")["schedulingPriority"] == 0


def test_no_priority_sends_none() -> None:
    assert "schedulingPriority" not in submission().request("q")


def test_request_carries_share_settings_and_tags() -> None:
    request = submission(
        preemption_retries=2,
        retry_attempts=3,
        retry_rules=[{"action": "RETRY", "onStatusReason": "Received status from SageMaker*"}],
        tags={"team": "a"},
    ).request("my-queue")
    assert request["jobQueue"] == "my-queue"
    assert request["quotaShareName"] == "QS1"
    assert request["serviceJobType"] == "SAGEMAKER_TRAINING"
    assert request["preemptionConfiguration"] == {"preemptionRetriesBeforeTermination": 2}
    assert request["retryStrategy"]["attempts"] == 3
    assert request["retryStrategy"]["evaluateOnExit"][0]["action"] == "RETRY"
    assert request["tags"] == {"team": "a"}
    assert json.loads(request["serviceRequestPayload"])["TrainingJobName"] == "train-1"


def test_client_token_is_stable_and_depends_on_name_and_payload() -> None:
    a = submission().token
    assert a == submission().token
    assert len(a) == 64
    assert a != submission(job_name="train-2").token
    assert a != submission(payload=job(instance_count=2)).token
    assert a != submission(share="QS2").token  # the same job into another share is another job
    assert submission(client_token="mine").token == "mine"


def test_client_token_ignores_key_order() -> None:
    assert client_token("j", {"a": 1, "b": 2}) == client_token("j", {"b": 2, "a": 1})


def test_valid_submission_has_no_problems() -> None:
    assert submission(priority=9999).problems(QUEUE) == []


def test_rejects_priority_out_of_range() -> None:
    text = messages(submission(priority=10_000))
    assert "schedulingPriority" in text and "between 0 and 9999" in text


def test_rejects_unknown_share() -> None:
    text = messages(submission(share="QS9"))
    assert "quotaShareName" in text and "'QS9'" in text and "QS1, QS2, QS3" in text


def test_rejects_disabled_share() -> None:
    assert "DISABLED" in messages(submission(share="OFF"))


def test_rejects_instance_type_not_in_share() -> None:
    text = messages(submission(payload=job(instance_type="ml.p4d.24xlarge")))
    assert "not a capacity unit of quota share QS1" in text and "ml.g5.xlarge" in text


def test_rejects_count_above_what_the_share_can_ever_use() -> None:
    # QS1: own 1 + borrow up to 200% but only QS2 lends (QS3 reserves) -> at most 2.
    text = messages(submission(payload=job(instance_count=3)))
    assert "at most 2 x ml.g5.xlarge" in text
    assert "QUOTA_MANAGEMENT_LIMIT_EXCEEDED" in text


def test_count_that_fits_by_borrowing_is_accepted() -> None:
    assert submission(payload=job(instance_count=2)).problems(QUEUE) == []


def test_rejects_reserve_share_count_above_its_limit() -> None:
    text = messages(submission(share="QS3", payload=job(instance_count=2)))
    assert "at most 1 x ml.g5.xlarge" in text


def test_rejects_payload_over_10_kib() -> None:
    text = messages(submission(payload=job(environment={"BIG": "x" * 11_000})))
    assert "at most 10240 bytes" in text


def test_rejects_payload_sagemaker_would_refuse() -> None:
    payload = job().payload("x")
    del payload["RoleArn"]
    text = messages(submission(payload=payload))
    assert "CreateTrainingJob" in text and "RoleArn" in text


def test_rejects_payload_without_instance_type() -> None:
    payload = job().payload("x")
    payload["ResourceConfig"] = {"InstanceCount": 1}
    assert "InstanceType" in messages(submission(payload=payload))


def test_rejects_retry_rules_that_can_never_fire() -> None:
    text = messages(submission(retry_rules=[{"action": "RETRY", "onStatusReason": "*"}]))
    assert "can never fire" in text


def test_rejects_bad_job_name_and_tags() -> None:
    text = messages(submission(job_name="my job", tags={"aws:x": "y"}))
    assert "jobName" in text and "aws:" in text


def test_rejects_negative_preemption_retries() -> None:
    assert "preemption retries" in messages(submission(preemption_retries=-1))


@pytest.mark.parametrize("attempts", [0, 11])
def test_rejects_retry_attempts_out_of_range(attempts: int) -> None:
    assert "between 1 and 10" in messages(submission(retry_attempts=attempts))


def test_plain_dict_payload_gets_the_job_name() -> None:
    payload = job().payload("ignored")
    del payload["TrainingJobName"]
    sub = submission(payload=payload)
    assert sub.payload_dict["TrainingJobName"] == "train-1"
    assert sub.problems(QUEUE) == []
