"""The advisor's documentation runs as written: inline commands, the Python example, figures.

The ``bash`` blocks of docs/advisor.md (its "Choosing strategies" summary included) run in
tests/test_doc_snippets.py; here run the inline ``quota recommend|simulate ... stacks/...`` spans
of their prose and figure captions that no block holds. They run in a scratch directory holding
a copy of ``stacks/``, so ``--output stacks/orgs/research.yaml`` cannot touch the repository. The
benchmark command (``benchmarks/bench_simulator.py``) is not a ``quota`` command and is not run
here.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "advisor.md"
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)
INLINE = re.compile(r"`(quota (?:recommend|simulate) [^`]*stacks/[^`]*)`")


def commands(text: str, *, inline: bool = True) -> list[str]:
    """``quota`` lines of bash blocks, then inline command spans; each once, in order."""
    found = [
        line.strip()
        for language, body in FENCE.findall(text)
        if language == "bash"
        for line in body.splitlines()
        if line.strip().startswith("quota ")
    ]
    found += INLINE.findall(text) if inline else []
    return list(dict.fromkeys(found))


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_all(found: list[str]) -> list[str]:
    runner = CliRunner(env={"COLUMNS": "200"})
    ran = []
    for command in found:
        result = runner.invoke(app, shlex.split(command, comments=True)[1:])
        assert result.exit_code == 0, f"{command}\n{result.output}"
        ran.append(command)
    return ran


def test_every_inline_advisor_command_runs_as_written(scratch: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    in_blocks = {tuple(shlex.split(c, comments=True)) for c in commands(text, inline=False)}
    spans = [
        c for c in dict.fromkeys(INLINE.findall(text)) if tuple(shlex.split(c)) not in in_blocks
    ]
    # every inline command is also a line of a bash block (run by tests/test_doc_snippets.py)
    assert run_all(spans) == []


def test_advisor_doc_python_example_runs_as_written(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [block] = [body for language, body in FENCE.findall(DOC.read_text()) if language == "python"]
    exec(compile(block, "docs/advisor.md", "exec"), {"__name__": "__docs__"})
    evaluated, missed = capsys.readouterr().out.split(" ", 1)
    assert int(evaluated) >= 1 and missed.strip().startswith("[")


def test_every_figure_in_the_advisor_doc_is_committed_and_made_by_a_doc_command() -> None:
    text = DOC.read_text(encoding="utf-8")
    figures = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text)
    assert len(figures) == 2
    made = " ".join(commands(text))
    for figure in figures:
        assert (DOC.parent / figure).read_bytes().startswith(b"\x89PNG")
        assert f"--plot {Path(figure).name}" in made
