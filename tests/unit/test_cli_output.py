"""cli_output: folding tables on a terminal, whole rows when piped, JSON names, the exit table."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from quota_constructs.commands import _common as cli_output
from quota_constructs.commands._common import ExitCode, camel_case, data_table, json_fields

README = Path(__file__).resolve().parents[2] / "README.md"
LONG = "LEND_AND_BORROW-with-a-value-longer-than-the-terminal"


def table_text(console: Console) -> str:
    table = data_table("share", "strategy")
    table.add_row("QS1", LONG)
    console.print(table)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


def test_a_terminal_table_folds_long_values_instead_of_cutting_them() -> None:
    text = table_text(Console(file=io.StringIO(), width=30, force_terminal=True))
    assert "…" not in text
    cells = "".join(re.sub(r"[│┃|\s]", "", line.split("│")[-2]) for line in text.splitlines()[3:-1])
    assert LONG in cells


def test_a_piped_table_prints_each_row_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr("sys.stdout", buffer)
    monkeypatch.setenv("COLUMNS", "40")
    console = cli_output.stdout_console()
    console.file = buffer
    [row] = [line for line in table_text(console).splitlines() if "QS1" in line]
    assert LONG in row


def test_json_fields_use_camel_case_for_fields_and_keep_data_keys() -> None:
    @dataclass
    class Metrics:
        wait_p95_s: float
        per_type: dict[str, int]
        seen_at: datetime

    value = Metrics(
        float("inf"), {"ml.g5.xlarge": 1, "team_a": 2}, datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert json_fields(value) == {
        "waitP95S": None,
        "perType": {"ml.g5.xlarge": 1, "team_a": 2},
        "seenAt": "2026-01-01T00:00:00+00:00",
    }
    assert camel_case("borrow_limit") == "borrowLimit"


def test_the_readme_exit_code_table_is_the_code_s() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Exit codes") :]
    section = section[: section.index("\n### ")]
    documented = [int(code) for code in re.findall(r"^\| (\d+) \|", section, re.M)]
    assert documented == [int(code) for code in ExitCode]


def test_a_terminal_line_of_text_is_never_broken_by_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    console = cli_output.stdout_console()
    console.file, console.width = io.StringIO(), 30
    line = "export AWS_ENDPOINT_URL_BATCH=http://127.0.0.1:8771"
    console.print(line)
    assert isinstance(console.file, io.StringIO)
    assert console.file.getvalue() == line + "\n"
