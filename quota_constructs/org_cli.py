"""``quota org``: validate organisation files and export their JSON Schema."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from quota_constructs.adopt_cli import diff_command, import_command
from quota_constructs.config import OrgFileError, json_schema, load_organisation
from quota_constructs.model import (
    MAX_LISTED_PROBLEMS,
    SCHEDULING_PRIORITY_RANGE,
    Organisation,
    one_line,
)

org_app = typer.Typer(
    help="Organisation files: validate, schema; import and diff a live queue.",
    no_args_is_help=True,
)

EXIT_INVALID = 2


def organisation_table(org: Organisation) -> Table:
    """Shares, strategy, capacity and the most each share can use with borrowing."""
    queue = org.queue
    se = queue.service_environment_capacity()
    table = Table(title=f"{org.name}: service environment {_capacity_text(se)}")
    for column in (
        "share",
        "strategy",
        "borrow limit",
        "in-share preemption",
        "capacity",
        "max usable (with borrowing)",
        "state",
    ):
        table.add_column(column)
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
    table = Table(title=f"{org.name}: team access")
    for column in ("share", "principals", "max priority", "execution role", "bucket"):
        table.add_column(column, overflow="fold")
    for name, access in rows:
        cap = access.max_priority
        table.add_row(
            name,
            "\n".join(access.principals),
            str(cap) if cap is not None else f"{SCHEDULING_PRIORITY_RANGE[1]} (no cap)",
            "created" if access.creates_execution_role else access.execution_role,
            "created" if access.creates_bucket else access.bucket,
        )
    return table


def _capacity_text(capacity: Mapping[str, int]) -> str:
    return ", ".join(f"{count} x {itype}" for itype, count in capacity.items())


@org_app.command("validate")
def validate(files: list[Path] = typer.Argument(..., help="Organisation YAML files.")) -> None:
    """Validate organisation files; exit 2 listing every problem (file, field, value, fix)."""
    out, err = Console(), Console(stderr=True)
    failed = False
    for file in files:
        path = one_line(str(file))
        try:
            org = load_organisation(file)
        except OrgFileError as exc:
            failed = True
            err.print(
                f"[bold red]{escape(path)}[/]: {len(exc.problems)} problem(s)", highlight=False
            )
            for problem in exc.problems[:MAX_LISTED_PROBLEMS]:
                err.print(f"  {path}: {problem}", highlight=False, soft_wrap=True, markup=False)
            if len(exc.problems) > MAX_LISTED_PROBLEMS:
                more = len(exc.problems) - MAX_LISTED_PROBLEMS
                err.print(f"  {path}: ... and {more} more problems", highlight=False, markup=False)
            continue
        out.print(organisation_table(org))
        if (access := access_table(org)) is not None:
            out.print(access)
    if failed:
        raise typer.Exit(EXIT_INVALID)


@org_app.command("schema")
def schema() -> None:
    """Print the JSON Schema of organisation files (for editor completion)."""
    typer.echo(json_schema())


# Reading a live queue (quota_constructs.adopt_cli): write a file from it, compare a file with it.
org_app.command("import")(import_command)
org_app.command("diff")(diff_command)
