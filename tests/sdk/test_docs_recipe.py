"""The SageMaker SDK recipe of docs/emulator.md, run exactly as written against the emulator."""

from __future__ import annotations

import re

import pytest
from sagemaker.train.aws_batch import training_queued_job

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from tests.emulator.test_documented_rules import DOCS


def recipe() -> str:
    """The Python block between ``<!-- sdk-recipe -->`` markers of docs/emulator.md."""
    found = re.search(
        r"<!-- sdk-recipe -->\n```python\n(.*?)```\n<!-- /sdk-recipe -->", DOCS.read_text(), re.S
    )
    assert found is not None, "docs/emulator.md has no sdk-recipe block"
    return found.group(1)


def test_the_documented_sdk_recipe_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As after ``quota local serve --speed 6000`` with its variables exported; the SDK's poll
    interval (5 s) is shortened for the test's speed only."""
    monkeypatch.setattr(training_queued_job, "POLL_IN_SECONDS", 0.05)
    monkeypatch.setenv("SAGEMAKER_VALIDATE_ROLE", "unset")  # restored after the recipe sets it
    with EmulatorServer(org_files=[SEED_DEMO], clock="wall", speed=6000) as emu:
        for name, value in emu.env.items():
            monkeypatch.setenv(name, value)

        exec(compile(recipe(), str(DOCS), "exec"), {})

        printed = capsys.readouterr().out.splitlines()
        assert printed[0] in ("SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING")
        assert printed[1:] == [
            "['sdk-demo']",
            "SUCCEEDED",
            "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:latest",
        ]
        assert emu.request_counts["DescribeTrainingJob"] == 1
