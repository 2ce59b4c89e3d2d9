"""The SageMaker SDK recipe of docs/emulator.md, run exactly as written against the emulator."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from sagemaker.core.utils.utils import SageMakerClient

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.model import training_job_prefix
from tests.helpers import EMULATOR_DOC, ORGS_DIR
from tests.sdk.helpers import sleep_advances


def recipe(marker: str = "sdk-recipe") -> str:
    """The Python block between ``<!-- marker -->`` markers of docs/emulator.md."""
    found = re.search(
        rf"<!-- {marker} -->\n```python\n(.*?)```\n<!-- /{marker} -->",
        EMULATOR_DOC.read_text(),
        re.S,
    )
    assert found is not None, f"docs/emulator.md has no {marker} block"
    return found.group(1)


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """seed-demo with its queue named as CloudFormation would name it (``naming="generated"``):
    the recipe must find it through SSM, as against a deployed stack."""
    with EmulatorServer(org_files=[SEED_DEMO], naming="generated") as server:
        for name, value in server.env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("SAGEMAKER_VALIDATE_ROLE", "false")
        SageMakerClient.reset()
        yield server
        SageMakerClient.reset()


def test_the_documented_sdk_recipe_runs(
    sdk: EmulatorServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the emulator's variables exported, as after ``quota local serve``; the SDK's poll
    sleeps move the virtual clock (``sleep_advances``) instead of waiting in real time."""
    assert not sdk.organisation("seed-demo").job_queue_name.startswith("seed-demo")
    sleep_advances(sdk, monkeypatch)

    exec(compile(recipe(), str(EMULATOR_DOC), "exec"), {})

    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "SUBMITTED",  # the scheduler looks at it on its next tick
        "['sdk-demo']",
        "SUCCEEDED",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:latest",
    ]
    assert sdk.request_counts["DescribeTrainingJob"] == 1


def test_the_documented_team_recipe_names_the_training_job_with_the_teams_prefix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Against research.yaml with generated names, as after ``quota local serve --org
    stacks/orgs/research.yaml``: prefix, role, bucket and queue come from SSM."""
    research = [ORGS_DIR / "research.yaml"]
    with EmulatorServer(org_files=research, clock="virtual", naming="generated") as server:
        for name, value in server.env.items():
            monkeypatch.setenv(name, value)
        SageMakerClient.reset()
        exec(compile(recipe("sdk-team-recipe"), str(EMULATOR_DOC), "exec"), {})
        SageMakerClient.reset()
        listed = server.client("batch").list_service_jobs(
            jobQueue=server.organisation("research").job_queue_name,
            filters=[{"name": "JOB_NAME", "values": ["llm-ft"]}],
        )
        (job,) = listed["jobSummaryList"]
        detail = server.client("batch").describe_service_job(jobId=job["jobId"])

    assert capsys.readouterr().out.splitlines() == ["True"]
    name = json.loads(detail["serviceRequestPayload"])["TrainingJobName"]
    assert name.startswith(training_job_prefix("research/generative") + "llm-ft-")
    assert detail["tags"] == {"quota-team": "research/generative"}
