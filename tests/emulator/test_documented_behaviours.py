"""docs/emulator.md's "Every documented behaviour" table cannot rot: each row of its data
(``tests/emulator/documented_behaviours.py``, which ``tools/gen_doc_tables.py`` writes into the
page) names its source and tests that exist (``tests/file.py::name``, a parametrized test with or
without ``[id]``), or says UNCONFIRMED and why."""

from __future__ import annotations

import re

import pytest

from tests.emulator.documented_behaviours import BEHAVIOURS, Behaviour
from tests.emulator.documented_rules import case_ids

TEST_REFERENCE = re.compile(r"`tests/([^`\s]+\.py::[^`\s]+)`")
CELL_BORDER = re.compile(r"(?<!\\)\|")

IDS = [f"{n}:{row.behaviour[:40]}" for n, row in enumerate(BEHAVIOURS, start=1)]
REFERENCES = sorted(
    {test.removeprefix("tests/") for row in BEHAVIOURS for test in row.tests}
    | {ref for row in BEHAVIOURS for ref in TEST_REFERENCE.findall(row.note)}
)


def cells(row: Behaviour) -> list[str]:
    """The row's cells as the table shows them."""
    source = ", ".join(source.markdown() for source in row.sources)
    return [row.behaviour, source, row.checked()]


def test_the_table_lists_the_documented_behaviours() -> None:
    assert len(BEHAVIOURS) >= 60
    assert all(cell and not CELL_BORDER.search(cell) for row in BEHAVIOURS for cell in cells(row))


@pytest.mark.parametrize("row", BEHAVIOURS, ids=IDS)
def test_a_row_names_its_source(row: Behaviour) -> None:
    source = cells(row)[1]
    assert row.sources, row.behaviour
    assert all(s.url.startswith("https://") or s.title.startswith("botocore ") for s in row.sources)
    assert "](https://" in source or source.startswith("botocore "), source


@pytest.mark.parametrize("row", BEHAVIOURS, ids=IDS)
def test_a_row_names_a_test_or_says_why_not(row: Behaviour) -> None:
    assert row.tests or row.note.startswith("UNCONFIRMED: "), row.checked()
    assert all(TEST_REFERENCE.fullmatch(f"`{test}`") for test in row.tests), row.tests


@pytest.mark.parametrize("reference", REFERENCES)
def test_every_named_test_exists(reference: str) -> None:
    _, name, ids = case_ids(reference)

    if "[" in name:
        assert ids is not None and name.split("[", 1)[1][:-1] in ids
