"""Owns what every ``quota`` command shares on output: exit codes, consoles, JSON, one-line errors.

Exit codes are the same for every command (README, "Exit codes"): 0 success; 1 the thing asked
about failed (a job FAILED, an expectation or check failed, drift found); 2 bad input or usage;
3 not found; 130 interrupted.

Tables follow one rule: when stdout is not a terminal, nothing is truncated or wrapped (full
values, one row per line), so pipes and scripts see whole values; on a terminal, columns wrap
(``overflow="fold"``) instead of cutting values.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Mapping
from datetime import datetime
from enum import Enum, IntEnum
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

#: Width used when stdout is not a terminal: wide enough that no table row ever wraps.
UNWRAPPED_WIDTH = 1_000_000


class ExitCode(IntEnum):
    """The exit codes of every ``quota`` command."""

    OK = 0
    FAILED = 1
    USAGE = 2
    NOT_FOUND = 3
    INTERRUPTED = 130


def stdout_console() -> Console:
    """A console for data: unwrapped when piped; on a terminal, table columns fold to fit and
    lines of text are left whole (the terminal wraps them; copying one gets it in one piece)."""
    if sys.stdout.isatty():
        return Console(highlight=False, soft_wrap=True)
    return Console(width=UNWRAPPED_WIDTH, highlight=False, soft_wrap=True)


def data_table(*columns: str, title: str | None = None, show_header: bool = True) -> Table:
    """A table whose columns fold long values on a terminal (never cut to "LEND_AND…").

    Printed on :func:`stdout_console`; piped, it is as wide as its widest row.
    """
    table = Table(title=title, show_header=show_header)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def stderr_console() -> Console:
    """A console for messages and errors: one message per line, never wrapped."""
    return Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(value: Any) -> None:
    """Print ``value`` as JSON on stdout (plain, so ``jq`` and scripts read it).

    Field names follow one convention (docs/runtime.md, "JSON output"): camelCase, AWS's own
    name where the value is an AWS field; times are ISO 8601 strings in UTC.
    """
    sys.stdout.write(json.dumps(value, indent=2, default=str) + "\n")
    sys.stdout.flush()


def camel_case(name: str) -> str:
    """``borrow_limit`` -> ``borrowLimit`` (the JSON name of one of our own fields)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_fields(value: Any, *, skip: frozenset[str] = frozenset()) -> Any:
    """``value`` ready for :func:`print_json`: dataclass fields (except ``skip``) in camelCase.

    Mapping keys are data (share names, instance types) and stay as they are; enums become
    their values, datetimes ISO 8601 strings, infinite floats ``null`` (JSON has no infinity).
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            camel_case(f.name): json_fields(getattr(value, f.name), skip=skip)
            for f in dataclasses.fields(value)
            if f.name not in skip
        }
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): json_fields(v, skip=skip) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_fields(v, skip=skip) for v in value]
    return value


def fail(message: str, code: ExitCode = ExitCode.FAILED) -> NoReturn:
    """Print ``error: message`` as one line on stderr and exit with ``code``."""
    stderr_console().print(f"[bold red]error:[/] {escape(' '.join(message.split()))}", markup=True)
    raise typer.Exit(int(code))
