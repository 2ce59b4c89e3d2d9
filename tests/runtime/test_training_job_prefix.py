"""The team's training-job prefix on every submit, against the emulator over HTTP.

A team's execution role may write only the log streams ``AWSBatch<prefix>*`` (docs/security.md,
"Training logs and metrics"), so the runtime starts the payload's ``TrainingJobName`` of every
job into a share with team access with the team's prefix, and refuses a name SageMaker would
refuse once prefixed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from quota_constructs.commands.demo import emulator_client
from quota_constructs.contracts import training_job_prefix_parameter
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import QuotaConfigError, training_job_prefix
from quota_constructs.runtime import JobSubmission, QueueClient
from tests.helpers import ORGS_DIR
from tests.runtime.helpers import FAST_RETRIES, training_job

PREFIX = training_job_prefix("research/generative")


@pytest.fixture
def research() -> Iterator[EmulatorServer]:
    with EmulatorServer(org_files=[ORGS_DIR / "research.yaml"], clock="virtual") as server:
        yield server


@pytest.fixture
def admin(research: EmulatorServer) -> QueueClient:
    return emulator_client(research, "research", retry=FAST_RETRIES)


def sent_name(client: QueueClient, submission: JobSubmission) -> str:
    payload = json.loads(client.render(submission)["serviceRequestPayload"])
    return str(payload["TrainingJobName"])


def test_submit_starts_the_training_job_name_with_the_published_prefix(
    admin: QueueClient, research: EmulatorServer
) -> None:
    job = admin.submit("fine-tune", "generative", training_job())
    research.advance(60)  # dispatched: Batch created the training job

    published = research.client("ssm").get_parameter(
        Name=training_job_prefix_parameter("research", "generative")
    )["Parameter"]["Value"]
    described = research.client("batch").describe_service_job(jobId=job.job_id)
    assert published == PREFIX and len(PREFIX) == 9 and PREFIX.endswith("-")
    assert json.loads(described["serviceRequestPayload"])["TrainingJobName"] == PREFIX + "fine-tune"
    arn = described["latestAttempt"]["serviceResourceId"]["value"]
    assert arn.split("training-job/")[1].startswith(f"AWSBatch{PREFIX}fine-tune")


def test_a_payloads_own_training_job_name_is_prefixed_once(admin: QueueClient) -> None:
    payload = training_job().payload("my-run")
    assert sent_name(admin, JobSubmission("job", "generative", payload)) == PREFIX + "my-run"
    already = training_job().payload(PREFIX + "my-run")
    assert sent_name(admin, JobSubmission("job", "generative", already)) == PREFIX + "my-run"


def test_a_job_name_with_underscores_becomes_a_valid_training_job_name(
    admin: QueueClient,
) -> None:
    assert sent_name(admin, JobSubmission("my_run_1", "generative", training_job())) == (
        PREFIX + "my-run-1"
    )


def test_rejects_a_training_job_name_too_long_once_prefixed(
    admin: QueueClient, research: EmulatorServer
) -> None:
    name = "n" * 55
    with pytest.raises(QuotaConfigError) as caught:
        admin.submit("long", "generative", training_job().payload(name))

    message = str(caught.value)
    assert "serviceRequestPayload.TrainingJobName" in message
    assert PREFIX + name in message and "64 characters; SageMaker allows 63" in message
    assert "shorten the name after the prefix to at most 54 characters" in message
    assert "SubmitServiceJob" not in research.request_counts


def test_rejects_a_training_job_name_sagemaker_would_refuse(admin: QueueClient) -> None:
    with pytest.raises(QuotaConfigError, match=r"TrainingJobName.*letters, digits and hyphens"):
        admin.render(JobSubmission("job", "generative", training_job().payload("run.1")))


def test_a_share_without_team_access_keeps_the_name(client: QueueClient) -> None:
    assert sent_name(client, JobSubmission("plain_name", "QS1", training_job())) == "plain_name"
