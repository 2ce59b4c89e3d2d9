"""docs/reference/cli.md is the command tree as `--help` shows it: generated, never hand-kept."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from tests.helpers import tool

ROOT = Path(__file__).resolve().parents[2]


def generator() -> ModuleType:
    return tool("gen_cli_reference")


def test_the_cli_reference_is_the_command_tree_as_generated() -> None:
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert page == generator().render(), "run: python tools/gen_cli_reference.py"


def test_the_reference_names_every_command_and_its_options() -> None:
    page = generator().render()
    for heading in (
        "## `quota`",
        "### `quota init`",
        "### `quota build-core`",
        "#### `quota local serve`",
    ):
        assert heading in page
    assert "--calendar-grace" in page and "--org-file" in page
