"""``quota org``: validate organisation files and export their JSON Schema."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from quota_constructs.api_shapes import capacity_limits_to_api, share_to_api
from quota_constructs.commands._common import (
    ExitCode,
    data_table,
    print_json,
    stderr_console,
    stdout_console,
)
from quota_constructs.commands.adopt import diff_command, import_command
from quota_constructs.config import OrgFileError, json_schema, load_organisation
from quota_constructs.model import (
    MAX_LISTED_PROBLEMS,
    SCHEDULING_PRIORITY_RANGE,
    Organisation,
    Problem,
    one_line,
)

org_app = typer.Typer(
    help="Organisation files: validate, schema; import and diff a live queue.",
    no_args_is_help=True,
)

EXIT_INVALID = ExitCode.USAGE


def organisation_table(org: Organisation) -> Table:
    """Shares, strategy, capacity and the most each share can use with borrowing."""
    queue = org.queue
    se = queue.service_environment_capacity()
    table = data_table(
        "share",
        "strategy",
        "borrow limit",
        "in-share preemption",
        "capacity",
        "max usable (with borrowing)",
        "state",
        title=f"{org.name}: service environment {_capacity_text(se)}",
    )
    for share in queue.shares:
        limit = share.effective_borrow_limit
        table.add_row(
            share.name,
            share.strategy.value,
            "-" if limit is None else ("unlimited" if limit == -1 else f"{limit}%"),
            "on" if share.in_share_preemption else "off",
            _capacity_text(share.capacity),
            _capacity_text({t: queue.max_usable(share.name, t) for t in share.capacity}),
            share.state.value,
        )
    return table


def access_table(org: Organisation) -> Table | None:
    """Per share with an ``access`` block: principals, priority cap, execution role, bucket."""
    rows = [(share.name, share.access) for share in org.queue.shares if share.access is not None]
    if not rows:
        return None
    table = data_table(
        "share",
        "principals",
        "max priority",
        "execution role",
        "bucket",
        title=f"{org.name}: team access",
    )
    for name, access in rows:
        cap = access.max_priority
        table.add_row(
            name,
            ", ".join(access.principals),
            str(cap) if cap is not None else f"{SCHEDULING_PRIORITY_RANGE[1]} (no cap)",
            "created" if access.creates_execution_role else access.execution_role,
            "created" if access.creates_bucket else access.bucket,
        )
    return table


def _capacity_text(capacity: Mapping[str, int]) -> str:
    return ", ".join(f"{count} x {itype}" for itype, count in capacity.items())


def organisation_json(org: Organisation) -> dict[str, Any]:
    """The organisation as the API names it: shares as CreateQuotaShare fields, plus ours."""
    queue = org.queue
    return {
        "organisation": org.name,
        "serviceEnvironmentCapacity": capacity_limits_to_api(queue.service_environment_capacity()),
        "quotaShares": [
            {
                **share_to_api(share),
                "maxUsable": capacity_limits_to_api(
                    {t: queue.max_usable(share.name, t) for t in share.capacity}
                ),
                "access": None
                if share.access is None
                else {
                    "principals": list(share.access.principals),
                    "maxPriority": share.access.max_priority,
                    "executionRole": share.access.execution_role,
                    "bucket": share.access.bucket,
                },
            }
            for share in queue.shares
        ],
    }


def problem_json(problem: Problem) -> dict[str, Any]:
    """One problem: line, field path, value, what is wrong, the fix."""
    value = problem.value
    if not isinstance(value, str | int | float | bool | type(None)):
        value = str(value)
    return {
        "line": problem.line,
        "path": problem.path,
        "value": value,
        "message": problem.message,
        "fix": problem.fix,
    }


@org_app.command("validate")
def validate(
    files: list[Path] = typer.Argument(..., help="Organisation YAML files."),
    as_json: bool = typer.Option(
        False, "--json", help="Print each file's organisation or problems as JSON."
    ),
) -> None:
    """Validate organisation files; exit 2 listing every problem (file, line, field, value, fix)."""
    out, err = stdout_console(), stderr_console()
    report: list[dict[str, Any]] = []
    failed = False
    for file in files:
        path = one_line(str(file))
        try:
            org = load_organisation(file)
        except OrgFileError as exc:
            failed = True
            report.append(
                {
                    "file": str(file),
                    "valid": False,
                    "problems": [problem_json(p) for p in exc.problems],
                }
            )
            _print_problems(path, exc.problems, err)
            continue
        report.append({"file": str(file), "valid": True, **organisation_json(org)})
        if not as_json:
            out.print(organisation_table(org))
            if (access := access_table(org)) is not None:
                out.print(access)
    if as_json:
        print_json(report)
    if failed:
        raise typer.Exit(EXIT_INVALID)


def _print_problems(path: str, problems: tuple[Problem, ...], err: Console) -> None:
    err.print(f"[bold red]{escape(path)}[/]: {len(problems)} problem(s)")
    for problem in problems[:MAX_LISTED_PROBLEMS]:
        err.print(f"  {path}: {problem}", markup=False)
    if len(problems) > MAX_LISTED_PROBLEMS:
        more = len(problems) - MAX_LISTED_PROBLEMS
        err.print(f"  {path}: ... and {more} more problems", markup=False)


@org_app.command("schema")
def schema() -> None:
    """Print the JSON Schema of organisation files (for editor completion)."""
    typer.echo(json_schema())


# Reading a live queue (commands.adopt): write a file from it, compare a file with it.
org_app.command("import")(import_command)
org_app.command("diff")(diff_command)
