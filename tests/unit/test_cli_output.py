"""commands._common: folding tables, whole rows when piped, JSON names, the exit table, and the
one function that maps an exception to its message and exit code."""

from __future__ import annotations

import importlib
import io
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
import typer
from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
)
from rich.console import Console

from quota_constructs.commands import COMMANDS
from quota_constructs.commands import _common as cli_output
from quota_constructs.commands._common import (
    INTERRUPTED,
    CliError,
    ExitCode,
    Failure,
    camel_case,
    data_table,
    failure_of,
    handle_errors,
    json_fields,
)
from quota_constructs.model import MAX_LISTED_PROBLEMS, Problem, QuotaConfigError
from quota_constructs.runtime.adopt import QueueNotFound
from quota_constructs.runtime.queue import AmbiguousJobName, JobNotFound, ShareNotFound
from quota_constructs.runtime.waiting import WaitTimeout
from tests.unit.exit_codes import EXIT_CODES

LONG = "LEND_AND_BORROW-with-a-value-longer-than-the-terminal"


def table_text(console: Console) -> str:
    table = data_table("share", "strategy")
    table.add_row("QS1", LONG)
    console.print(table)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


def test_a_terminal_table_keeps_a_value_longer_than_the_terminal_whole() -> None:
    """Wider than the terminal, the line is left for the terminal to wrap: never cut or split
    (stdout_console soft-wraps, so nothing crops it)."""
    text = table_text(Console(file=io.StringIO(), width=30, force_terminal=True, soft_wrap=True))
    assert "…" not in text
    assert any(LONG in line for line in text.splitlines())


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


def test_the_documented_exit_code_table_is_the_code_s() -> None:
    """docs/cli.md's "Exit codes" table, as tools/gen_doc_tables.py writes it."""
    assert [row.code for row in EXIT_CODES] == list(ExitCode)
    assert all(row.meaning and row.examples for row in EXIT_CODES)


def test_a_terminal_line_of_text_is_never_broken_by_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    console = cli_output.stdout_console()
    console.file, console.width = io.StringIO(), 30
    line = "export AWS_ENDPOINT_URL_BATCH=http://127.0.0.1:8771"
    console.print(line)
    assert isinstance(console.file, io.StringIO)
    assert console.file.getvalue() == line + "\n"


BAD_SHARE = Problem("shares[0].strategy", "SHARE", "unknown strategy", "use LEND", line=3)
THROTTLED = ClientError(
    {"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "SubmitServiceJob"
)


@pytest.mark.parametrize(
    ("error", "failure"),
    [
        (KeyboardInterrupt(), Failure((INTERRUPTED,), ExitCode.INTERRUPTED)),
        (
            QuotaConfigError([BAD_SHARE], context="org.yaml"),
            Failure((f"org.yaml: {BAD_SHARE}",), ExitCode.USAGE),
        ),
        (QueueNotFound([BAD_SHARE]), Failure((str(BAD_SHARE),), ExitCode.NOT_FOUND)),
        (JobNotFound("no job with id 'x'"), Failure(("no job with id 'x'",), ExitCode.NOT_FOUND)),
        (
            ShareNotFound("no quota share 'QS9'"),
            Failure(("no quota share 'QS9'",), ExitCode.NOT_FOUND),
        ),
        (
            WaitTimeout({"j1": None}, 5),
            Failure(("1 job(s) not there after 5 s: j1 (not found)",), ExitCode.FAILED),
        ),
        (THROTTLED, Failure(("ThrottlingException: slow down",), ExitCode.FAILED)),
        (CliError("no job queue given"), Failure(("no job queue given",), ExitCode.USAGE)),
        (
            PermissionError(13, "Permission denied", "x.json"),
            Failure(
                ("x.json: permission denied; fix: check the path and its permissions",),
                ExitCode.USAGE,
            ),
        ),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else "",
)
def test_every_expected_exception_maps_to_its_lines_and_exit_code(
    error: BaseException, failure: Failure
) -> None:
    assert failure_of(error) == failure


@pytest.mark.parametrize(
    ("error", "code", "words"),
    [
        (NoRegionError(), ExitCode.USAGE, "no AWS region: pass --region REGION"),
        (NoCredentialsError(), ExitCode.USAGE, "configure AWS credentials"),
        (EndpointConnectionError(endpoint_url="http://x"), ExitCode.FAILED, "is the endpoint up?"),
        (AmbiguousJobName("train", []), ExitCode.USAGE, "pass the job id instead"),
    ],
    ids=["no-region", "no-credentials", "endpoint-down", "ambiguous-name"],
)
def test_botocore_set_up_and_lookup_errors_map_to_one_line(
    error: Exception, code: ExitCode, words: str
) -> None:
    failure = failure_of(error)
    assert failure is not None and failure.code == code
    (line,) = failure.lines
    assert words in line


def test_a_config_error_prints_one_line_per_problem_then_how_many_more() -> None:
    problems = [BAD_SHARE] * (MAX_LISTED_PROBLEMS + 2)
    failure = failure_of(QuotaConfigError(problems, context="org.yaml"))
    assert failure is not None and failure.code == ExitCode.USAGE
    assert failure.lines == (
        *[f"org.yaml: {BAD_SHARE}"] * MAX_LISTED_PROBLEMS,
        "org.yaml: ... and 2 more problems",
    )
    assert failure.lines[0] == (
        "org.yaml: line 3: shares[0].strategy: unknown strategy (got 'SHARE'); fix: use LEND"
    )


def test_an_unexpected_exception_is_not_mapped() -> None:
    assert failure_of(RuntimeError("a bug")) is None
    assert failure_of(typer.Exit(1)) is None
    # not the project's own: a bug, never "bad input"
    assert failure_of(ValueError("bad value")) is None
    assert failure_of(KeyError("jobName")) is None
    assert failure_of(OSError("cannot read x.json")) is None  # no file of the user's


def test_handle_errors_prints_each_line_and_exits_with_the_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    @handle_errors
    def command() -> None:
        raise QuotaConfigError([BAD_SHARE, BAD_SHARE], context="org.yaml")

    with pytest.raises(typer.Exit) as exited:
        command()
    assert exited.value.exit_code == ExitCode.USAGE
    assert capsys.readouterr().err == f"error: org.yaml: {BAD_SHARE}\n" * 2


def test_handle_errors_reports_a_bug_with_its_traceback_and_exit_70(
    capsys: pytest.CaptureFixture[str],
) -> None:
    @handle_errors
    def command() -> None:
        raise RuntimeError("a bug")

    with pytest.raises(typer.Exit) as exited:
        command()
    assert exited.value.exit_code == ExitCode.BUG == 70
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and 'raise RuntimeError("a bug")' in err
    assert "error: internal error: RuntimeError: a bug; this is a bug in quota-constructs" in err


def registered_callbacks(group: typer.Typer) -> list[object]:
    """Every command function of ``group`` and of the groups added to it."""
    found: list[object] = [info.callback for info in group.registered_commands]
    for info in group.registered_groups:
        assert info.typer_instance is not None
        found += registered_callbacks(info.typer_instance)
    return found


def quota_callbacks() -> list[object]:
    """Every command function of ``quota``, from the modules its commands are loaded from."""
    found: dict[int, object] = {}
    for module_name, attribute in COMMANDS.values():
        module = importlib.import_module(f"quota_constructs.commands.{module_name}")
        defined = getattr(module, attribute)
        group = registered_callbacks(defined) if isinstance(defined, typer.Typer) else [defined]
        found.update((id(c), c) for c in group)  # advisor_app defines two top-level commands
    return list(found.values())


def test_every_quota_command_runs_under_handle_errors() -> None:
    wrapper = handle_errors(lambda: None).__code__
    callbacks = quota_callbacks()
    assert len(callbacks) >= 18  # jobs 7, org 4, local 3, advise 2, status, demo
    unwrapped = [
        getattr(c, "__name__", c) for c in callbacks if getattr(c, "__code__", None) != wrapper
    ]
    assert unwrapped == []
