"""Owns SageMaker's ``DescribeTrainingJob`` for the training jobs the emulator's service jobs ran.

Each attempt of a service job runs as one SageMaker training job, named as its
``serviceResourceId`` says (``AWSBatch<job name><attempt id>``). Describing it answers from the
job's ``serviceRequestPayload`` (the CreateTrainingJob request: every member SageMaker's model
accepts is echoed) and the attempt's state: a dispatched attempt is ``InProgress``, a finished
one ``Completed``, ``Failed`` (with ``FailureReason``) or ``Stopped`` (terminated, preempted or
timed out; ``MaxRuntimeExceeded`` when it reached its ``StoppingCondition.MaxRuntimeInSeconds``).
Unknown names get AWS's answer, ``ValidationException`` "Requested resource not
found." (aws/aws-sdk#165). This is what the SageMaker SDK's ``TrainingQueuedJob`` reads to
build a ``ModelTrainer`` of the latest attempt; nothing else of SageMaker is served.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quota_constructs.api_shapes import SAGEMAKER_DEFAULT_MAX_RUNTIME_S
from quota_constructs.local.handlers import Handler
from quota_constructs.local.handlers.job_view import attempt_training_job
from quota_constructs.local.handlers.submit_request import SAGEMAKER_STATUS_PREFIX
from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.clock import EmulatorClock
from quota_constructs.local.state.errors import NotFound
from quota_constructs.local.state.job_service import JobService
from quota_constructs.local.state.registry import Registry
from quota_constructs.local.wire.protocol import service_model
from quota_constructs.local.wire.validation import problems
from quota_constructs.scheduling import (
    PREEMPTION_IN_PROGRESS,
    REASON_MAX_RUNTIME,
    REASON_SUCCEEDED,
    Attempt,
    Job,
    JobStatus,
)

DEFAULT_STOPPING = {"MaxRuntimeInSeconds": SAGEMAKER_DEFAULT_MAX_RUNTIME_S}
IN_PROGRESS = {
    JobStatus.SCHEDULED: "Pending",
    JobStatus.STARTING: "Downloading",
    JobStatus.RUNNING: "Training",
}
"""SageMaker's ``SecondaryStatus`` of the attempt a service job in that status is running, as
AWS's status mapping (service-job-status.html) gives it."""


@dataclass(frozen=True)
class AttemptState:
    """A training job's status, secondary status, failure reason and times (emulator seconds):
    created (SCHEDULED), instances acquired (STARTING: SageMaker's ``TrainingStartTime``, from
    which it bills), training (RUNNING), ended."""

    status: str
    secondary: str
    created: float
    started: float | None
    ended: float | None
    failure: str | None = None
    acquired: float | None = None
    stopping: float | None = None
    """When SageMaker was told to stop it (a preemption in progress), while it stops."""

    @property
    def billed_from(self) -> float | None:
        """``TrainingStartTime``: when the instances were acquired (else training began)."""
        return self.acquired if self.acquired is not None else self.started

    def transitions(self) -> list[tuple[str, float, float | None]]:
        """The secondary statuses passed through: (status, start, end; ``None`` while in it)."""
        steps = [("Pending", self.created)]
        if self.acquired is not None:
            steps.append(("Downloading", self.acquired))
        if self.started is not None:
            steps.append(("Training", self.started))
        if self.stopping is not None:
            steps.append(("Stopping", self.stopping))
        if self.ended is not None:
            steps.append((self.secondary, self.ended))
        ends: list[float | None] = [start for _, start in steps[1:]]
        ends.append(self.ended)
        return [(name, start, end) for (name, start), end in zip(steps, ends, strict=True)]

    def training_seconds(self) -> int | None:
        """``TrainingTimeInSeconds`` (= ``BillableTimeInSeconds`` on demand) once it ended."""
        start = self.billed_from
        if self.ended is None or start is None:
            return None
        return int(self.ended - start)


def attempt_state(job: Job, number: int, now: float) -> AttemptState:
    """The state of attempt ``number`` of ``job`` (the current one if it is still running)."""
    ended = next((a for a in job.attempts if a.number == number), None)
    if ended is None:
        secondary = IN_PROGRESS.get(job.status, "Pending")
        status = "InProgress"
        stopping = None
        if (job.status_reason or "").startswith(PREEMPTION_IN_PROGRESS):
            status, secondary = "Stopping", "Stopping"
            stopping = job.preemptions[-1].time if job.preemptions else now
        created = job.scheduled_at if job.scheduled_at is not None else now
        return AttemptState(
            status,
            secondary,
            created,
            job.started_at,
            None,
            acquired=job.starting_at,
            stopping=stopping,
        )
    return _ended_state(job, ended)


def _ended_state(job: Job, attempt: Attempt) -> AttemptState:
    times = (attempt.scheduled_at, attempt.started_at, attempt.stopped_at)
    acquired = attempt.starting_at
    if attempt.status_reason == REASON_SUCCEEDED:
        return AttemptState("Completed", "Completed", *times, acquired=acquired)
    if attempt.status_reason == REASON_MAX_RUNTIME:
        return AttemptState("Stopped", "MaxRuntimeExceeded", *times, acquired=acquired)
    last = attempt.number == len(job.attempts)
    failed_by_sagemaker = attempt.status_reason.startswith(SAGEMAKER_STATUS_PREFIX)
    if attempt.preempted or (job.is_terminated and last) or not failed_by_sagemaker:
        return AttemptState("Stopped", "Stopped", *times, acquired=acquired)
    failure = attempt.status_reason.removeprefix(SAGEMAKER_STATUS_PREFIX).strip()
    return AttemptState("Failed", "Failed", *times, failure=failure, acquired=acquired)


class TrainingJobHandlers:
    """``DescribeTrainingJob`` over the jobs of every queue of a :class:`Registry`."""

    def __init__(
        self, registry: Registry, jobs: JobService, account: Account, clock: EmulatorClock
    ) -> None:
        self.registry = registry
        self.jobs = jobs
        self.account = account
        self.clock = clock

    def operations(self) -> dict[str, Handler]:
        """Operation name -> handler, for every operation of this module."""
        return {"DescribeTrainingJob": self.describe_training_job}

    def find(self, name: str) -> tuple[Job, int, str]:
        """The job, attempt number and exact name of training job ``name`` (any case)."""
        wanted = name.lower()
        for job in self.jobs.jobs_of(self.registry.job_queues()):
            for number in range(1, job.attempt_count + 1):
                candidate = attempt_training_job(job, number)
                if candidate.lower() == wanted:
                    return job, number, candidate
        raise NotFound("Requested resource not found.")

    def describe_training_job(self, params: Mapping[str, Any]) -> dict[str, Any]:
        job, number, name = self.find(params["TrainingJobName"])
        payload = _echoed(job.request.payload or {})
        state = attempt_state(job, number, self.clock.now())
        output = payload.get("OutputDataConfig") or {}
        s3_output = str(output.get("S3OutputPath", "")).rstrip("/")
        epoch = self.clock.epoch
        transitions = state.transitions()
        seconds = state.training_seconds()
        return {
            **payload,
            "TrainingJobName": name,
            "TrainingJobArn": self.account.training_job(name),
            "TrainingJobStatus": state.status,
            "SecondaryStatus": state.secondary,
            "FailureReason": state.failure,
            "ModelArtifacts": {"S3ModelArtifacts": f"{s3_output}/{name}/output/model.tar.gz"},
            "StoppingCondition": payload.get("StoppingCondition") or DEFAULT_STOPPING,
            "CreationTime": epoch(state.created),
            "TrainingStartTime": None if state.billed_from is None else epoch(state.billed_from),
            "TrainingEndTime": None if state.ended is None else epoch(state.ended),
            "LastModifiedTime": epoch(transitions[-1][1]),
            "SecondaryStatusTransitions": [
                {"Status": status, "StartTime": epoch(start)}
                | ({} if end is None else {"EndTime": epoch(end)})
                for status, start, end in transitions
            ],
            "TrainingTimeInSeconds": seconds,
            "BillableTimeInSeconds": seconds,
        }


def _echoed(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The payload members DescribeTrainingJob reports that keep SageMaker's model."""
    shape = service_model("sagemaker").operation_model("DescribeTrainingJob").output_shape
    assert shape is not None
    return {
        name: value
        for name, value in payload.items()
        if name in shape.members and not problems(value, shape.members[name], name)
    }
