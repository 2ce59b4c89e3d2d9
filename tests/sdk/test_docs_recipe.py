"""The SageMaker SDK recipe of docs/emulator.md, run exactly as written against the emulator."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from sagemaker.core.utils.utils import SageMakerClient

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from tests.helpers import EMULATOR_DOC
from tests.sdk.helpers import sleep_advances


def recipe() -> str:
    """The Python block between ``<!-- sdk-recipe -->`` markers of docs/emulator.md."""
    found = re.search(
        r"<!-- sdk-recipe -->\n```python\n(.*?)```\n<!-- /sdk-recipe -->",
        EMULATOR_DOC.read_text(),
        re.S,
    )
    assert found is not None, "docs/emulator.md has no sdk-recipe block"
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
