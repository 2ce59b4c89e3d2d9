"""Owns what every ``quota`` command shares: options, exit codes, the error path, consoles, JSON.

Exit codes are the same for every command (docs/cli.md, "Exit codes"): 0 success; 1 the thing asked
about failed (a job FAILED, an expectation or check failed, drift found); 2 bad input or usage;
3 not found; 130 interrupted. Every command runs under :func:`handle_errors`: an exception is
mapped by :func:`failure_of` (the one table) to its lines and exit code, printed ``error: ...``.

Tables follow one rule: when stdout is not a terminal, nothing is truncated or wrapped (full
values, one row per line), so pipes and scripts see whole values; on a terminal, columns wrap
between words, never inside one (identifiers stay whole), and the least important columns are
hidden when they do not fit (``--wide`` shows them): :mod:`._tables`, used by :func:`data_table`.

Every console here is the one output boundary for text: a string is always printed as text
(rich markup such as ``[red]`` or ``[link=...]`` and emoji codes are shown as written, never
interpreted) and every control character but newline and tab is shown as an escape (``\\x1b``,
``\\r``, ``\\u202e``), so no text from the API or a file can style, hide, link, move the cursor
or rewrite a line. Styling is ours alone: :func:`styled` and :func:`message` build
``rich.text.Text``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from enum import Enum, IntEnum
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar
from urllib.parse import urlsplit

import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from quota_constructs.commands._tables import fitted_table
from quota_constructs.model import (
    MAX_LISTED_PROBLEMS,
    MAX_SHOWN_CHARS,
    Problem,
    QuotaConfigError,
    clip,
    one_line,
)

#: Width used when stdout is not a terminal: wide enough that no table row ever wraps.
UNWRAPPED_WIDTH = 1_000_000


class ExitCode(IntEnum):
    """The exit codes of every ``quota`` command."""

    OK = 0
    FAILED = 1
    USAGE = 2
    NOT_FOUND = 3
    UNAVAILABLE = 69
    """The search's executor failed: a worker, the pool or the cluster died, or a result was
    late (``EX_UNAVAILABLE`` of sysexits.h)."""
    BUG = 70
    """An exception no rule maps: a bug of ours (``EX_SOFTWARE`` of sysexits.h)."""
    INTERRUPTED = 130


def _escape_of(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_CONTROL_CODES = (
    [c for c in range(0x20) if chr(c) not in "\n\t"]
    + list(range(0x7F, 0xA0))  # DEL and the C1 controls (0x9b is an 8-bit CSI)
    + [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]  # bidi
)
_VISIBLE = {code: _escape_of(code) for code in _CONTROL_CODES}


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab written as an escape.

    ESC (so CSI and OSC 8 sequences), BEL, backspace, carriage return, DEL, the C1 controls and
    the bidirectional overrides become ``\\x1b``, ``\\x07``, ``\\u202e``...: shown, never obeyed.
    """
    return text.translate(_VISIBLE)


class TextConsole(Console):
    """A console that prints every string as text, control characters made visible.

    ``markup`` and ``emoji`` are off whatever a caller passes; every segment of every renderable
    (table cells, titles, ``Text`` built anywhere) goes through :func:`visible` on its way out.
    """

    def render_str(self, text: str, **options: Any) -> Text:
        """``text`` as plain text: never markup or emoji, controls shown as escapes."""
        return super().render_str(visible(text), **{**options, "markup": False, "emoji": False})

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        """The segments of ``renderable``, their text through :func:`visible` (rich's own
        cursor controls, used by live displays, pass as they are)."""
        for segment in super().render(renderable, options):
            if segment.control:
                yield segment
            else:
                yield Segment(visible(segment.text), segment.style)


def styled(text: str, style: str | Style) -> Text:
    """``text`` (ours or data) shown as it is, in ``style``."""
    return Text(visible(text), style=style)


def message(*parts: str | Text) -> Text:
    """One line of output: plain ``parts`` as text, :func:`styled` ones in their style."""
    return Text.assemble(*(visible(part) if isinstance(part, str) else part for part in parts))


def warning_line(text: str) -> Text:
    """``warning text``, the word in yellow (printed on stderr by the commands)."""
    return message(styled("warning", "yellow"), f" {text}")


def stdout_console() -> Console:
    """A console for data: unwrapped when piped; on a terminal, table columns fold to fit and
    lines of text are left whole (the terminal wraps them; copying one gets it in one piece)."""
    if sys.stdout.isatty():
        return TextConsole(highlight=False, soft_wrap=True)
    return TextConsole(width=UNWRAPPED_WIDTH, highlight=False, soft_wrap=True)


def data_table(
    *columns: str,
    title: str | None = None,
    show_header: bool = True,
    drop: Sequence[str] = (),
    wide: bool = False,
) -> Table:
    """A table that fits the terminal (:mod:`._tables`): no word broken, never cut to
    "LEND_AND…"; ``drop`` (headers, least important first) hidden when narrow unless ``wide``.

    Printed on :func:`stdout_console`; piped, it is as wide as its widest row.
    """
    return fitted_table(*columns, title=title, show_header=show_header, drop=drop, wide=wide)


def stderr_console() -> Console:
    """A console for messages and errors: one message per line, never wrapped."""
    return TextConsole(stderr=True, highlight=False, soft_wrap=True)


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
    """``value`` ready for :func:`print_json`: dataclass fields (except ``skip`` and those whose
    metadata says ``{"json": False}``) in camelCase.

    Mapping keys are data (share names, instance types) and stay as they are; enums become
    their values, datetimes ISO 8601 strings, infinite floats ``null`` (JSON has no infinity).
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            camel_case(f.name): json_fields(getattr(value, f.name), skip=skip)
            for f in dataclasses.fields(value)
            if f.name not in skip and f.metadata.get("json", True)
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


def endpoint_problem(url: str) -> str | None:
    """What is wrong with ``url`` as an endpoint (with the fix), or ``None`` when it is one."""
    example = "http://127.0.0.1:8771"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        guess = f"http://{url}" if "://" not in url else example
        return f"{url!r} is not an http:// or https:// URL; write it in full, e.g. {guess}"
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        return f"{url!r} has no valid port (0 to 65535 after the host); e.g. {example}"
    from botocore.utils import is_valid_endpoint_url, is_valid_ipv6_endpoint_url

    if not (is_valid_endpoint_url(url) or is_valid_ipv6_endpoint_url(url)):
        return f"{url!r} has no valid host name; e.g. {example}"
    return None


def _checked_endpoint(value: str | None) -> str | None:
    problem = None if value is None else endpoint_problem(value)
    if problem:
        raise typer.BadParameter(problem)
    return value


AWS_REGION_NAME = re.compile(r"^[a-z]{2}(-[a-z]+)+-[0-9]+$")
"""The shape of every AWS region name (``us-east-1``, ``us-gov-west-1``, ``ap-southeast-5``)."""


def _checked_region(value: str | None) -> str | None:
    if value is not None and not AWS_REGION_NAME.match(value):
        raise typer.BadParameter(f"{value!r} is not an AWS region name; write e.g. us-east-1")
    return value


def endpoint_option(text: str = "Batch/SSM endpoint (emulator).") -> Any:
    """``--endpoint-url`` (or ``AWS_ENDPOINT_URL_BATCH``): where Batch and SSM answer; a
    malformed URL is a usage error (exit 2) naming it and the fix."""
    return typer.Option(
        "--endpoint-url", envvar="AWS_ENDPOINT_URL_BATCH", help=text, callback=_checked_endpoint
    )


def region_option(text: str = "AWS region.") -> Any:
    """``--region``: the AWS region of the calls; a name not shaped like one exits 2."""
    return typer.Option("--region", help=text, callback=_checked_region)


def json_option(text: str = "Print JSON instead of a table (camelCase keys).") -> Any:
    """``--json``: data as JSON on stdout (:func:`print_json`), ``text`` saying which."""
    return typer.Option("--json", help=text)


EndpointOpt = Annotated[str | None, endpoint_option()]
WideOpt = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="Show every column: a narrow terminal hides the least important ones first.",
    ),
]
RegionOpt = Annotated[str | None, region_option()]
PlanStopOpt = Annotated[
    float,
    typer.Option(
        "--plan-stop-before-end-s",
        help="Seconds before a training plan's end that its capacity goes and its jobs stop "
        "(AWS: 1800; 0: they run to the end).",
    ),
]
"""The same flag in ``quota simulate``, ``report``, ``recommend --reserve``, ``local serve``."""
BilledStartupOpt = Annotated[
    float,
    typer.Option(
        "--billed-startup-s",
        help="Of --startup-s, the last part SageMaker bills: from TrainingStartTime, the "
        "download of the image and data (the provisioning before it is not billed); capped at "
        "--startup-s (default 120; the split is UNCONFIRMED, docs/cost.md).",
    ),
]
"""The same flag in ``quota simulate``, ``report`` and ``recommend``."""
BackfillOpt = Annotated[
    int,
    typer.Option(
        "--backfill-depth",
        help="Jobs the scheduler looks at behind a share's blocked head (default 0: strict "
        "order, a blocked head blocks jobs of every instance type behind it; AWS is silent: "
        "UNCONFIRMED, docs/emulator-semantics.md).",
    ),
]
"""The same flag in ``quota simulate``, ``report`` and ``recommend`` (the core's option)."""
MAX_BACKFILL_DEPTH = 1000
"""Deepest ``--backfill-depth``: a pass looks at most this many jobs behind a blocked head."""


def check_run_splits(*, backfill_depth: int, startup_s: float, billed_startup_s: float) -> None:
    """Refuse a ``--backfill-depth`` outside 0 to :data:`MAX_BACKFILL_DEPTH` and a negative
    ``--billed-startup-s`` (more than ``--startup-s`` is capped to it, not refused)."""
    problems = []
    if not 0 <= backfill_depth <= MAX_BACKFILL_DEPTH:
        problems.append(
            Problem(
                "--backfill-depth",
                backfill_depth,
                f"must be 0 (strict order) to {MAX_BACKFILL_DEPTH}",
                "e.g. --backfill-depth 8",
            )
        )
    if not (math.isfinite(billed_startup_s) and billed_startup_s >= 0):
        problems.append(
            Problem(
                "--billed-startup-s",
                billed_startup_s,
                f"must be 0 or more seconds (at most --startup-s {startup_s:g} is billed)",
                "e.g. --billed-startup-s 120",
            )
        )
    if problems:
        raise QuotaConfigError(problems)


MAX_CALENDAR_GRACE_S = 7 * 86400.0
"""Longest ``--calendar-grace``: a week (a flip waiting longer would miss the next edge)."""
CalendarGraceOpt = Annotated[
    float,
    typer.Option(
        "--calendar-grace",
        help="Seconds borrowers of a share whose calendar turns it RESERVE may still run "
        f"before they are preempted, 0 to {MAX_CALENDAR_GRACE_S:g} (default 0: at the "
        "window edge; AWS is silent: UNCONFIRMED).",
    ),
]
"""The same flag in ``quota simulate`` and ``quota local serve`` (one timetable in the core)."""


def check_calendar_grace(seconds: float) -> None:
    """Exit 2 naming ``--calendar-grace`` unless it is from 0 to a week."""
    if not 0 <= seconds <= MAX_CALENDAR_GRACE_S:  # NaN fails the comparison too
        fail(
            f"--calendar-grace {seconds:g}: must be from 0 to {MAX_CALENDAR_GRACE_S:g} "
            "seconds (0 preempts borrowers at the window edge)",
            ExitCode.USAGE,
        )


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
    a :class:`CliError`, a file the user named that cannot be read or written) or a missing AWS
    region or credentials; 1 a wait that timed out or an AWS call that failed; 69 the
    search's executor failed (a dead worker, pool or cluster, or a late result). Only the
    project's own errors mean bad input: a bare ``ValueError`` or ``KeyError`` is a bug.

    The runtime's and botocore's errors are looked for only when their modules were imported
    (a command that never imported them cannot have raised them; ``quota simulate`` does not
    import boto3).
    """
    if isinstance(error, KeyboardInterrupt):
        return Failure((INTERRUPTED,), ExitCode.INTERRUPTED)
    if isinstance(error, QuotaConfigError):
        found = isinstance(error, _loaded("quota_constructs.runtime.adopt", "QueueNotFound"))
        return Failure(problem_lines(error), ExitCode.NOT_FOUND if found else ExitCode.USAGE)
    if isinstance(error, _loaded("quota_constructs.runtime.queue", "JobNotFound", "ShareNotFound")):
        return Failure((str(error),), ExitCode.NOT_FOUND)
    if isinstance(error, _loaded("quota_constructs.advisor.optimize", "ExecutorFailed")):
        return Failure((str(error),), ExitCode.UNAVAILABLE)
    if isinstance(error, _loaded("quota_constructs.runtime.waiting", "WaitTimeout")):
        return Failure((str(error),), ExitCode.FAILED)
    if isinstance(error, _loaded("botocore.exceptions", "ClientError", "BotoCoreError")):
        from quota_constructs.runtime.queue import error_text, is_setup_error

        code = ExitCode.USAGE if is_setup_error(error) else ExitCode.FAILED
        return Failure((error_text(error),), code)
    if isinstance(
        error, (CliError, *_loaded("quota_constructs.runtime.queue", "AmbiguousJobName"))
    ):
        return Failure((str(error),), ExitCode.USAGE)
    if isinstance(error, OSError) and error.filename is not None:
        return Failure((_file_error(error),), ExitCode.USAGE)  # a path the user named
    return None


def _file_error(error: OSError) -> str:
    reason = error.strerror or type(error).__name__
    return f"{error.filename}: {reason.lower()}; fix: check the path and its permissions"


def _loaded(module: str, *names: str) -> tuple[type[Exception], ...]:
    """The classes ``names`` of ``module`` if it was imported, else none (for ``isinstance``)."""
    loaded = sys.modules.get(module)
    return tuple(getattr(loaded, name) for name in names) if loaded is not None else ()


Params = ParamSpec("Params")
Result = TypeVar("Result")


def handle_errors(command: Callable[Params, Result]) -> Callable[Params, Result]:
    """``command`` with every expected failure printed (:func:`failure_of`) and exited on.

    Every ``quota`` command is wrapped in it. An exception no rule maps is a bug: its traceback
    on stderr, then one line saying so, exit 70 (``ExitCode.BUG``), never "bad input".
    """

    @functools.wraps(command)
    def run(*args: Params.args, **kwargs: Params.kwargs) -> Result:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise  # the command chose its exit (code and message), or a usage error (typer's)
        except (Exception, KeyboardInterrupt) as error:
            failure = failure_of(error)
            if failure is None:
                report_bug(error)
                raise typer.Exit(int(ExitCode.BUG)) from None
            print_errors(failure.lines)
            raise typer.Exit(int(failure.code)) from None

    return run


def report_bug(error: BaseException) -> None:
    """The traceback of an exception no rule maps, then one line naming it as a bug."""
    traceback.print_exception(error, file=sys.stderr)
    print_errors(
        [
            f"internal error: {type(error).__name__}: {error}; this is a bug in quota-constructs, "
            "not in your input: please report it with the traceback above"
        ]
    )


def print_errors(lines: Iterable[str]) -> None:
    """Print each of ``lines`` on stderr as ``error: line``, never wrapped."""
    for line in lines:
        stderr_console().print(message(styled("error:", "bold red"), " ", " ".join(line.split())))


def usage_line(error: typer.TyperException, command_path: str | None) -> str:
    """A usage error (unknown option, missing argument, bad value) as one line with the fix."""
    text = " ".join(error.format_message().split()).rstrip(".")
    return f"{text}; see {command_path} --help" if command_path else text


class QuotaGroup(TyperGroup):
    """The ``quota`` group: a usage error anywhere below it is one line on stderr, exit 2
    (never typer's box), e.g. ``error: No such option: --shar Did you mean --share?; see
    quota jobs ls --help``."""

    def make_context(self, info_name: str | None, args: list[str], *a: Any, **kw: Any) -> Any:
        with _one_line_usage_errors():
            return super().make_context(info_name, args, *a, **kw)

    def invoke(self, ctx: Any) -> Any:
        with _one_line_usage_errors():
            return super().invoke(ctx)


@contextlib.contextmanager
def _one_line_usage_errors() -> Iterator[None]:
    try:
        yield
    except typer.TyperException as error:
        if type(error).__name__ == "NoArgsIsHelpError":  # help was printed: typer's own exit
            raise
        context = getattr(error, "ctx", None)
        print_errors([usage_line(error, context.command_path if context else None)])
        raise typer.Exit(getattr(error, "exit_code", ExitCode.USAGE)) from None


def fail(message: str, code: ExitCode = ExitCode.FAILED) -> NoReturn:
    """Print ``error: message`` as one line on stderr and exit with ``code``."""
    print_errors([message])
    raise typer.Exit(int(code))
