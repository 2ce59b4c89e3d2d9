"""Regenerate docs/reference/cli.md, the `quota` command reference, from the command tree.

Every command and subcommand with its help and every option (names, what it takes, default,
help), read from the click commands typer builds, so the page cannot drift from the code:
``tests/unit/test_cli_reference.py`` fails until the page matches. Run it after changing a
command: ``python tools/gen_cli_reference.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

from quota_constructs.commands import app

TARGET = Path(__file__).resolve().parents[1] / "docs" / "reference" / "cli.md"
HEADER = """\
# `quota` command reference

Generated from the command tree by `tools/gen_cli_reference.py` (a test keeps it current); the
same text as `quota COMMAND --help`. Exit codes, output rules and the options every command
shares: [The quota command](../cli.md).
"""


def commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """``(full name, command)`` for ``group`` and everything below it, in help order (typer's
    own click: duck-typed, no ``isinstance`` against the click package)."""
    yield " ".join(("quota", *path)), group
    if hasattr(group, "list_commands"):
        context = group.context_class(group, info_name=path[-1] if path else "quota")
        for name in group.list_commands(context):
            child = group.get_command(context, name)
            if child is not None and not child.hidden:
                yield from commands(child, (*path, name))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


EVERYWHERE = frozenset({"--help", "--install-completion", "--show-completion"})
"""Options every command has: listed once, under ``quota``."""


def _options(command: Any, *, root: bool) -> list[str]:
    """One row per option and argument, as ``--help`` shows it (names, metavar, help, default)."""
    context = command.context_class(command, info_name=command.name)
    rows = []
    for param in command.get_params(context):
        if getattr(param, "hidden", False) or (not root and EVERYWHERE & set(param.opts)):
            continue
        record = param.get_help_record(context)
        if record is None:  # an argument: its metavar and its help
            name, help_text = param.make_metavar(context), getattr(param, "help", "") or ""
        else:
            name, help_text = record
        rows.append(f"| `{_cell(name)}` | {_cell(help_text)} |")
    if not rows:
        return []
    return ["| Option or argument | What |", "|---|---|", *rows, ""]


def render() -> str:
    """The whole page."""
    root = typer.main.get_command(app)
    lines = [HEADER]
    for name, command in commands(root):
        level = "#" * min(2 + name.count(" "), 4)
        lines += [f"{level} `{name}`", ""]
        help_text = (command.help or "").strip()
        if help_text:
            lines += [help_text, ""]
        lines += _options(command, root=name == "quota")
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
