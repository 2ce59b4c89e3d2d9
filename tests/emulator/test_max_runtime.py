"""A training job that reaches its ``StoppingCondition.MaxRuntimeInSeconds`` is stopped by
SageMaker (``Stopped`` / ``MaxRuntimeExceeded``) and its service job ends FAILED, over HTTP."""

from __future__ import annotations

from typing import Any

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.scheduling import REASON_MAX_RUNTIME
from tests.emulator.helpers import submit
from tests.helpers import payload


def test_a_job_reaching_its_max_runtime_ends_failed_and_its_training_job_stopped(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job_id = submit(batch, queue, "QS3", "capped", serviceRequestPayload=payload(runtime_s=600))
    emulator.advance(5)
    emulator.advance(600)

    job = batch.describe_service_job(jobId=job_id)
    assert (job["status"], job["statusReason"]) == ("FAILED", REASON_MAX_RUNTIME)
    assert job["isTerminated"] is False
    assert job["stoppedAt"] - job["startedAt"] == 600_000
    name = job["latestAttempt"]["serviceResourceId"]["value"].rsplit("/", 1)[1]
    training = emulator.client("sagemaker").describe_training_job(TrainingJobName=name)
    assert (training["TrainingJobStatus"], training["SecondaryStatus"]) == (
        "Stopped",
        "MaxRuntimeExceeded",
    )


def test_a_job_whose_work_ends_within_its_max_runtime_succeeds(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job_id = submit(
        batch,
        queue,
        "QS3",
        "quick",
        serviceRequestPayload=payload(runtime_s=600),
        tags={"quota.local/duration-seconds": "300"},
    )
    emulator.advance(5)
    emulator.advance(300)
    assert batch.describe_service_job(jobId=job_id)["status"] == "SUCCEEDED"
