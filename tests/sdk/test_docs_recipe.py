"""The SageMaker SDK recipe of docs/emulator.md, run exactly as written against the emulator."""

from __future__ import annotations

import re

import pytest

from quota_constructs.local.testing import EmulatorServer
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


def test_the_documented_sdk_recipe_runs(
    sdk: EmulatorServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the emulator's variables exported, as after ``quota local serve``; the SDK's poll
    sleeps move the virtual clock (``sleep_advances``) instead of waiting in real time."""
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
