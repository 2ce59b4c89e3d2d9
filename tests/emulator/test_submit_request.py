"""The emulator's reading of a wire SubmitServiceJob request into a scheduler JobRequest."""

from __future__ import annotations

import pytest

from quota_constructs.local.handlers.submit_request import request_from_submit
from quota_constructs.scheduling import Outcome, SubmitRejected

G5 = "ml.g5.xlarge"


def test_request_from_submit_reads_payload_and_tags() -> None:
    request = request_from_submit(
        {
            "jobName": "train",
            "quotaShareName": "QS1",
            "schedulingPriority": 7,
            "serviceRequestPayload": (
                '{"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 2},'
                ' "StoppingCondition": {"MaxRuntimeInSeconds": 900}}'
            ),
            "preemptionConfiguration": {"preemptionRetriesBeforeTermination": 2},
            "retryStrategy": {"attempts": 3},
            "timeoutConfig": {"attemptDurationSeconds": 600},
            "tags": {"quota.local/outcome": "FAILED"},
        }
    )
    assert request.demand == {G5: 2}
    assert (request.duration_s, request.max_runtime_s) == (None, 900)  # trains until stopped
    assert request.outcome is Outcome.FAILED
    assert (request.priority, request.preemption_retries) == (7, 2)
    assert (request.retry_attempts, request.attempt_duration_s) == (3, 600)


def test_duration_tag_overrides_payload_runtime() -> None:
    request = request_from_submit(
        {
            "jobName": "t",
            "quotaShareName": "QS1",
            "serviceRequestPayload": '{"ResourceConfig": {"InstanceType": "ml.g5.xlarge"},'
            ' "StoppingCondition": {"MaxRuntimeInSeconds": 900}}',
            "tags": {"quota.local/duration-seconds": "42.5"},
        }
    )
    assert request.duration_s == 42.5 and request.demand == {G5: 1}
    assert request.max_runtime_s == 900


def test_without_stopping_condition_the_max_runtime_is_sagemakers_default_of_a_day() -> None:
    request = request_from_submit(
        {
            "jobName": "t",
            "quotaShareName": "QS1",
            "serviceRequestPayload": '{"ResourceConfig": {"InstanceType": "ml.g5.xlarge"}}',
        }
    )
    assert (request.duration_s, request.max_runtime_s) == (None, 86_400)


def test_rejects_payload_without_resource_config() -> None:
    with pytest.raises(SubmitRejected, match=r"serviceRequestPayload\.ResourceConfig: missing"):
        request_from_submit({"jobName": "t", "serviceRequestPayload": "{}"})


def test_rejects_payload_that_is_not_json() -> None:
    with pytest.raises(SubmitRejected, match="serviceRequestPayload: not a JSON object"):
        request_from_submit({"jobName": "t", "serviceRequestPayload": "{nope"})


def test_rejects_bad_duration_tag() -> None:
    with pytest.raises(SubmitRejected, match=r"quota\.local/duration-seconds: must be a number"):
        request_from_submit(
            {
                "jobName": "t",
                "serviceRequestPayload": '{"ResourceConfig": {"InstanceType": "ml.g5.xlarge"}}',
                "tags": {"quota.local/duration-seconds": "soon"},
            }
        )


@pytest.mark.parametrize("value", ["-1", "two", "10001", "1.5"])
def test_rejects_bad_capacity_errors_tag(value: str) -> None:
    with pytest.raises(
        SubmitRejected,
        match=r"tags\.quota\.local/capacity-errors: must be a whole number of attempts from 0 to "
        r"10000",
    ):
        request_from_submit(
            {
                "jobName": "t",
                "serviceRequestPayload": '{"ResourceConfig": {"InstanceType": "ml.g5.xlarge"}}',
                "tags": {"quota.local/capacity-errors": value},
            }
        )
