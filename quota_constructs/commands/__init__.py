"""The ``quota`` console command: one typer app, each family of commands in its own module."""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer
import typer.main

from quota_constructs._version import __version__
from quota_constructs.commands import _process  # noqa: F401 - before numpy is imported
from quota_constructs.commands._common import QuotaGroup

COMMANDS: dict[str, tuple[str, str]] = {
    "status": ("status", "status"),
    "demo": ("demo", "demo"),
    "report": ("report", "report_command"),
    "org": ("org", "org_app"),
    "recommend": ("advise", "advisor_app"),
    "simulate": ("advise", "advisor_app"),
    "local": ("local", "local_app"),
    "jobs": ("jobs", "jobs_app"),
    "forecast": ("forecast", "forecast_app"),
    "init": ("init", "init"),
    "build-core": ("build_core", "build_core"),
}
"""Each top-level command (in ``quota --help``'s order): its module in this package and what
defines it there (a command function, a typer app of subcommands, or ``advisor_app``, whose
commands are top-level). A command's module is imported only when the command is asked for,
so ``quota simulate`` does not import boto3 or the emulator."""


class LazyCommands(dict[str, Any]):
    """The top-level commands by name, each built from its module the first time it is asked
    for (``quota --help`` asks for all of them; a command run, for its own)."""

    def __init__(self) -> None:
        super().__init__((name, None) for name in COMMANDS)

    def __getitem__(self, name: str) -> Any:
        command = super().__getitem__(name)
        if command is None:
            command = _build(name)
            super().__setitem__(name, command)
        return command

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def items(self) -> Any:
        return [(name, self[name]) for name in self]

    def values(self) -> Any:
        return [self[name] for name in self]


def _build(name: str) -> Any:
    """The click command ``name`` from its module (see :data:`COMMANDS`)."""
    module_name, attribute = COMMANDS[name]
    module = importlib.import_module(f"quota_constructs.commands.{module_name}")
    defined = getattr(module, attribute)
    if attribute == "advisor_app":
        return typer.main.get_command(defined).commands[name]  # type: ignore[attr-defined]
    if isinstance(defined, typer.Typer):
        command = typer.main.get_command(defined)
    else:
        single = typer.Typer()
        single.command(name)(defined)
        command = typer.main.get_command(single)
    command.name = name
    return command


class LazyQuotaGroup(QuotaGroup):
    """The ``quota`` group, its commands loaded on demand (:class:`LazyCommands`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands()


app = typer.Typer(
    name="quota",
    help="GPU quota sharing for SageMaker training on AWS Batch.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=LazyQuotaGroup,
)


def package_version() -> str:
    """The package version (``quota_constructs.__version__``, what the wheel's metadata says)."""
    return __version__


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


def main() -> None:  # pragma: no cover - console entry point
    app()
