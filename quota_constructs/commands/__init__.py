"""The ``quota`` console command: one typer app, each family of commands in its own module."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import typer

from quota_constructs.commands import _process  # noqa: F401 - before numpy is imported
from quota_constructs.commands._common import QuotaGroup
from quota_constructs.commands.advise import advisor_app
from quota_constructs.commands.demo import demo
from quota_constructs.commands.jobs import jobs_app
from quota_constructs.commands.local import local_app
from quota_constructs.commands.org import org_app
from quota_constructs.commands.preflight import preflight_command
from quota_constructs.commands.report import report_command
from quota_constructs.commands.status import status

app = typer.Typer(
    name="quota",
    help="GPU quota sharing for SageMaker training on AWS Batch.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=QuotaGroup,
)


def package_version() -> str:
    """The installed ``quota-constructs`` version (package metadata)."""
    try:
        return version("quota-constructs")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout never installed
        return "0+unknown"


def core_build() -> str:
    """Which scheduler core runs: the mypyc build (``make setup``) or the pure Python reference."""
    from quota_constructs.scheduling import COMPILED

    return "compiled (mypyc)" if COMPILED else "pure Python"


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"quota {package_version()} (scheduler core: {core_build()})")
        raise typer.Exit()


@app.callback()
def _main(
    _version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_show_version,
            is_eager=True,
            help="Print the version and which scheduler core runs (compiled or pure), and exit.",
        ),
    ] = False,
) -> None:
    """GPU quota sharing for SageMaker training on AWS Batch."""


org_app.command("preflight")(preflight_command)
app.add_typer(org_app, name="org")
app.add_typer(advisor_app)  # quota recommend, quota simulate
app.add_typer(local_app, name="local")
app.add_typer(jobs_app, name="jobs")
app.command("status")(status)
app.command("demo")(demo)
app.command("report")(report_command)


def main() -> None:  # pragma: no cover - console entry point
    app()
