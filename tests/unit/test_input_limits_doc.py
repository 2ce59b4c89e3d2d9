"""docs/input-limits.md: its commands run as written and print what it shows; its bounds are the
model's."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from quota_constructs import model, safe_load

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "input-limits.md"
QUOTA = Path(sys.executable).with_name("quota")


def console_examples() -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` of every ``$`` line in the doc's console blocks."""
    text = DOC.read_text(encoding="utf-8")
    examples: list[tuple[str, list[str]]] = []
    for block in (part.split("```", 1)[0] for part in text.split("```console\n")[1:]):
        for line in block.splitlines():
            if line.startswith("$ "):
                examples.append((line[2:], []))
            else:
                examples[-1][1].append(line)
    return examples


@pytest.mark.parametrize(("command", "expected"), console_examples())
def test_the_console_example_runs_as_written(command: str, expected: list[str]) -> None:
    args = shlex.split(command)
    assert args[0] == "quota"
    result = subprocess.run(
        [str(QUOTA), *args[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300", "NO_COLOR": "1"},
    )
    assert result.returncode == 2
    assert (result.stdout + result.stderr).splitlines() == expected


@pytest.mark.parametrize(
    "value",
    [
        f"{model.MAX_INSTANCES_PER_TYPE:,}",
        f"{model.MAX_BORROW_LIMIT:,}",
        f"{model.MAX_ORGANISATION_DESCRIPTION_CHARS} characters",
        f"{model.MAX_ORGANISATION_DESCRIPTION_BYTES} UTF-8 bytes",
        f"{model.MAX_SHARE_DESCRIPTION_CHARS:,} characters",
        f"at most {model.MAX_TAGS}",
        f"depth {safe_load.MAX_DEPTH}",
        f"{safe_load.MAX_YAML_VALUES:,} values",
        f"{safe_load.MAX_INTEGER_DIGITS} digits",
        f"| {safe_load.ORGANISATION_FILE_MAX_BYTES // 2**20} MiB",
        f"| {safe_load.WORKLOAD_FILE_MAX_BYTES // 2**20} MiB",
        f"| {safe_load.PAYLOAD_FILE_MAX_BYTES // 2**10} KiB",
    ],
)
def test_the_doc_states_the_limits_the_code_enforces(value: str) -> None:
    assert value in DOC.read_text(encoding="utf-8")
