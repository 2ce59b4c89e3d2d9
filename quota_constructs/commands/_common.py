"""Owns what every ``quota`` command shares: options, exit codes, the error path, consoles, JSON.

Exit codes are the same for every command (README, "Exit codes"): 0 success; 1 the thing asked
about failed (a job FAILED, an expectation or check failed, drift found); 2 bad input or usage;
3 not found; 130 interrupted. Every command runs under :func:`handle_errors`: an exception is
mapped by :func:`failure_of` (the one table) to its lines and exit code, printed ``error: ...``.

Tables follow one rule: when stdout is not a terminal, nothing is truncated or wrapped (full
values, one row per line), so pipes and scripts see whole values; on a terminal, columns wrap
(``overflow="fold"``) instead of cutting values.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from enum import Enum, IntEnum
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar

import typer
from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from quota_constructs.model import (
    MAX_LISTED_PROBLEMS,
    MAX_SHOWN_CHARS,
    QuotaConfigError,
    clip,
    one_line,
)
from quota_constructs.runtime.adopt import QueueNotFound
from quota_constructs.runtime.queue import (
    JobNotFound,
    ShareNotFound,
    error_text,
    is_setup_error,
)
from quota_constructs.runtime.waiting import WaitTimeout

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


# --- options: one declaration per flag, the same meaning in every command ----------------------


def endpoint_option(text: str = "Batch/SSM endpoint (emulator).") -> Any:
    """``--endpoint-url`` (or ``AWS_ENDPOINT_URL_BATCH``): where Batch and SSM answer."""
    return typer.Option("--endpoint-url", envvar="AWS_ENDPOINT_URL_BATCH", help=text)


def region_option(text: str = "AWS region.") -> Any:
    """``--region``: the AWS region of the calls."""
    return typer.Option("--region", help=text)


def json_option(text: str = "Print JSON instead of a table (camelCase keys).") -> Any:
    """``--json``: data as JSON on stdout (:func:`print_json`), ``text`` saying which."""
    return typer.Option("--json", help=text)


EndpointOpt = Annotated[str | None, endpoint_option()]
RegionOpt = Annotated[str | None, region_option()]
JsonOpt = Annotated[bool, json_option()]
QueueOpt = Annotated[
    str | None,
    typer.Option("--queue", "-q", envvar="QUOTA_QUEUE", help="Job queue name or ARN."),
]
OrganisationOpt = Annotated[
    str | None,
    typer.Option(
        "--organisation", "-o", envvar="QUOTA_ORGANISATION", help="Organisation (via SSM)."
    ),
]
AsTeamOpt = Annotated[
    str | None,
    typer.Option(
        "--as-team",
        envvar="QUOTA_AS_TEAM",
        help="Act as this share's team: assume its submitter role (needs --organisation).",
    ),
]
"""The queue options of ``quota jobs`` and ``quota status``."""


# --- the error path: one table from exception to message and exit code ------------------------


class CliError(Exception):
    """A usage error found by a command: printed as one line, exit code 2."""


INTERRUPTED = "interrupted; jobs already submitted keep running"


@dataclasses.dataclass(frozen=True)
class Failure:
    """What a command prints for an exception (each line after ``error:``) and its exit code."""

    lines: tuple[str, ...]
    code: ExitCode


def problem_lines(error: QuotaConfigError) -> tuple[str, ...]:
    """The one way a :class:`QuotaConfigError` prints: one line per problem, after its context.

    ``CONTEXT: line N: FIELD: what is wrong (got VALUE); fix: FIX``; at most
    ``MAX_LISTED_PROBLEMS`` lines, then ``CONTEXT: ... and N more problems``.
    """
    head = f"{one_line(clip(error.context, 4 * MAX_SHOWN_CHARS))}: " if error.context else ""
    lines = [head + str(problem) for problem in error.problems[:MAX_LISTED_PROBLEMS]]
    if len(error.problems) > MAX_LISTED_PROBLEMS:
        lines.append(f"{head}... and {len(error.problems) - MAX_LISTED_PROBLEMS} more problems")
    return tuple(lines) or (str(error),)


def failure_of(error: BaseException) -> Failure | None:
    """The message and exit code of an expected failure; ``None`` for anything else (a bug).

    130 Ctrl-C; 3 a queue, job or share not found; 2 bad input (a :class:`QuotaConfigError`,
    a :class:`CliError`, a bad value or unreadable file) or a missing AWS region or
    credentials; 1 a wait that timed out or an AWS call that failed.
    """
    if isinstance(error, KeyboardInterrupt):
        return Failure((INTERRUPTED,), ExitCode.INTERRUPTED)
    if isinstance(error, QuotaConfigError):
        found = isinstance(error, QueueNotFound)
        return Failure(problem_lines(error), ExitCode.NOT_FOUND if found else ExitCode.USAGE)
    if isinstance(error, JobNotFound | ShareNotFound):
        return Failure((str(error),), ExitCode.NOT_FOUND)
    if isinstance(error, WaitTimeout):
        return Failure((str(error),), ExitCode.FAILED)
    if isinstance(error, ClientError | BotoCoreError):
        code = ExitCode.USAGE if is_setup_error(error) else ExitCode.FAILED
        return Failure((error_text(error),), code)
    if isinstance(error, CliError | ValueError | KeyError | OSError):
        return Failure((str(error).strip("'\""),), ExitCode.USAGE)
    return None


Params = ParamSpec("Params")
Result = TypeVar("Result")


def handle_errors(command: Callable[Params, Result]) -> Callable[Params, Result]:
    """``command`` with every expected failure printed (:func:`failure_of`) and exited on.

    Every ``quota`` command is wrapped in it; an exception it does not know propagates.
    """

    @functools.wraps(command)
    def run(*args: Params.args, **kwargs: Params.kwargs) -> Result:
        try:
            return command(*args, **kwargs)
        except (Exception, KeyboardInterrupt) as error:
            failure = failure_of(error)
            if failure is None:
                raise
            print_errors(failure.lines)
            raise typer.Exit(int(failure.code)) from None

    return run


def print_errors(lines: Iterable[str]) -> None:
    """Print each of ``lines`` on stderr as ``error: line``, never wrapped."""
    for line in lines:
        stderr_console().print(f"[bold red]error:[/] {escape(' '.join(line.split()))}")


def fail(message: str, code: ExitCode = ExitCode.FAILED) -> NoReturn:
    """Print ``error: message`` as one line on stderr and exit with ``code``."""
    print_errors([message])
    raise typer.Exit(int(code))
