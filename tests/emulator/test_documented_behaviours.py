"""docs/emulator.md's "Every documented behaviour" table cannot rot: each row names its source and
tests that exist (``tests/file.py::name``, a parametrized test with or without ``[id]``), or says
UNCONFIRMED and why."""

from __future__ import annotations

import re

import pytest

from tests.emulator.documented_rules import case_ids
from tests.helpers import EMULATOR_DOC

SECTION = "## Every documented behaviour"
TEST_REFERENCE = re.compile(r"`tests/([^`\s]+\.py::[^`\s]+)`")
CELL_BORDER = re.compile(r"(?<!\\)\|")


def table_rows() -> list[list[str]]:
    """The table's rows (header and separator left out), each as its stripped cells."""
    section = EMULATOR_DOC.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in CELL_BORDER.split(line)[1:-1]] for line in lines[1:]]


ROWS = table_rows()
IDS = [f"{n}:{row[0][:40]}" for n, row in enumerate(ROWS, start=1)]
REFERENCES = sorted({ref for row in ROWS for ref in TEST_REFERENCE.findall(row[2])})


def test_the_table_lists_the_documented_behaviours() -> None:
    assert len(ROWS) >= 60
    assert all(len(row) == 3 for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_a_row_names_its_source(row: list[str]) -> None:
    source = row[1]
    assert "](https://" in source or source.startswith("botocore "), source


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_a_row_names_a_test_or_says_why_not(row: list[str]) -> None:
    checked = row[2]
    assert TEST_REFERENCE.search(checked) or checked.startswith("UNCONFIRMED: "), checked


@pytest.mark.parametrize("reference", REFERENCES)
def test_every_named_test_exists(reference: str) -> None:
    _, name, ids = case_ids(reference)

    if "[" in name:
        assert ids is not None and name.split("[", 1)[1][:-1] in ids
