"""The docs' tables kept as test data (the documented rules and the documented behaviours in
docs/emulator.md, the security review in docs/security.md, the exit codes in docs/cli.md) are as
tools/gen_doc_tables.py writes them: generated, never hand-kept."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.helpers import tool


def generator() -> ModuleType:
    return tool("gen_doc_tables")


@pytest.mark.parametrize(
    "name", ["documented-rules", "documented-behaviours", "security-review", "exit-codes"]
)
def test_the_page_holds_the_table_as_generated(name: str) -> None:
    [table] = [t for t in generator().TABLES if t.name == name]
    text = table.page.read_text(encoding="utf-8")
    assert text == generator().rendered(table.page), "run: python tools/gen_doc_tables.py"
    assert text.count(table.begin) == 1 and text.count(table.end) == 1


def test_a_hand_edited_row_is_put_back_and_missing_markers_are_refused() -> None:
    gen = generator()
    [table] = [t for t in gen.TABLES if t.name == "security-review"]
    text = table.page.read_text(encoding="utf-8")
    edited = text.replace("| **Any CDK app**", "| **Some CDK app**")
    assert edited != text and gen.updated(table.page, edited) == text
    with pytest.raises(ValueError, match="no markers of security-review"):
        gen.updated(table.page, text.replace(table.end, ""))


def test_a_hand_edited_or_dropped_behaviour_row_is_put_back() -> None:
    gen = generator()
    [table] = [t for t in gen.TABLES if t.name == "documented-behaviours"]
    text = table.page.read_text(encoding="utf-8")
    [row] = [line for line in text.splitlines() if line.startswith("| At most 50 service env")]
    edited = text.replace(row, row.replace("50", "60"))
    dropped = text.replace(row + "\n", "")
    assert text != edited and gen.updated(table.page, edited) == text
    assert text != dropped and gen.updated(table.page, dropped) == text
    with pytest.raises(ValueError, match="no markers of documented-behaviours"):
        gen.updated(table.page, text.replace(table.end, ""))
