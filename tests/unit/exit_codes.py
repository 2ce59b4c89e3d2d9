"""The exit codes every ``quota`` command documents: docs/cli.md's "Exit codes" table.

``tools/gen_doc_tables.py`` writes the table into docs/cli.md from ``EXIT_CODES``
(``tests/unit/test_doc_tables.py`` fails while the page differs);
``tests/unit/test_cli_output.py`` checks that it lists exactly ``ExitCode``'s codes, in order.
Cells are Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass

from quota_constructs.commands._common import ExitCode


@dataclass(frozen=True)
class Code:
    """An exit code, what it means and when a command exits with it."""

    code: ExitCode
    meaning: str
    examples: str


EXIT_CODES: tuple[Code, ...] = (
    Code(
        ExitCode.OK,
        "success",
        "a job submitted; a table printed; every file valid",
    ),
    Code(
        ExitCode.FAILED,
        "what was asked about failed",
        (
            "`quota jobs wait` saw a job end FAILED, or timed out (`--timeout`); `quota "
            "recommend --simulate` missed a team's target (or found a FAILED expectation); "
            "`quota recommend --optimize` missed a team's target; `quota demo` saw a tutorial "
            "outcome fail; `quota org plan` found a destructive change (a share or queue "
            "deleted or replaced, a job terminated or preempted) that the file's "
            "`allow_destructive` does not name, or a change that would fail; "
            "`quota local apply` was refused and rolled back; `quota jobs audit` found a job "
            "whose payload names a foreign training plan or cost tag; "
            "`quota jobs submit --what-if` found that the job can never run here; "
            "`quota forecast calibrate` found too few forecasts to wait to fit on; "
            "Batch refused a call (`error: ClientException: ...`) or its "
            "endpoint did not answer; `terminate` could not terminate a job"
        ),
    ),
    Code(
        ExitCode.USAGE,
        "bad input or usage",
        (
            "an invalid organisation, team-profile or payload file (the message names the "
            "file, line, field, value and fix), or a file of another kind (a team-profile file "
            "given to `quota local serve --org`: `this is a team-profile file, not an "
            "organisation file ...; fix: run quota recommend FILE --output ORG.yaml on it`); a "
            "usage error (unknown option, missing argument, bad value, `--payload` with a "
            "builder flag, a missing `--share`); a malformed `--endpoint-url` "
            "(`127.0.0.1:8771` without `http://`, a bad port) or `--region`; no AWS region or "
            "credentials (`error: no AWS region: pass --region REGION or set "
            "AWS_DEFAULT_REGION ...`); a submit the live queue would refuse; a "
            "`--calibration` file that is not a calibration (the field, the value, the fix)"
        ),
    ),
    Code(
        ExitCode.NOT_FOUND,
        "not found",
        (
            "`quota org plan` of an organisation that is not deployed (`-o`, or the file's "
            "without `--absent-ok`); "
            "a job (id, ARN or name) or quota share that the queue does not have (`describe`, "
            "`wait`, `update`, `terminate`, `ls --share`, `submit --share`); `quota local why` "
            "for a job the emulator does not know"
        ),
    ),
    Code(
        ExitCode.UNAVAILABLE,
        "the search's executor failed",
        (
            "`quota recommend --optimize`: a worker process was killed (`--workers: a worker "
            "process of the search died (BrokenProcessPool: ...)`), the Dask cluster of "
            "`--executor` could not be reached, lost its scheduler or workers, or gave no "
            "candidate result within `--result-timeout` (default 600 s): one `error:` line "
            "naming the executor and the fix, never a hang, a traceback or exit 1"
        ),
    ),
    Code(
        ExitCode.BUG,
        "a bug of ours",
        (
            "an exception no rule maps (a bare `KeyError` or `ValueError` from our code, not "
            "from your input): its traceback, then `error: internal error: ...; this is a bug "
            "in quota-constructs, not in your input: please report it with the traceback "
            "above`. Only the project's own errors (`QuotaConfigError` and its kinds, a usage "
            "error) and a file you named that cannot be read or written are exit 2"
        ),
    ),
    Code(
        ExitCode.INTERRUPTED,
        "interrupted",
        (
            "Ctrl-C (or `kill`) of any command, `quota local serve`, `quota jobs wait` and "
            "`quota status --watch` included; jobs already submitted keep running"
        ),
    ),
)


def markdown_table() -> str:
    """The exit codes as docs/cli.md lists them."""
    lines = ["| Code | Meaning | Examples |", "|---|---|---|"]
    lines += [f"| {int(row.code)} | {row.meaning} | {row.examples} |" for row in EXIT_CODES]
    return "\n".join(lines)
