"""``quota recommend`` and ``quota simulate``: the advisor and the what-if simulator."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.recommend import Advice, recommend
from quota_constructs.model import Problem, QuotaConfigError

advisor_app = typer.Typer(no_args_is_help=True)

EXIT_INVALID = 2


def _fail(exc: QuotaConfigError) -> typer.Exit:
    """Print every problem of ``exc`` on stderr, one line each; the exit to raise."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    head = f"{exc.context}: " if exc.context else ""
    for problem in exc.problems:
        err.print(f"[red]error[/] {head}{problem}")
    return typer.Exit(EXIT_INVALID)


def _parse_prices(values: list[str]) -> dict[str, float]:
    prices: dict[str, float] = {}
    for value in values:
        itype, _, amount = value.partition("=")
        try:
            prices[itype.strip()] = float(amount)
        except ValueError:
            raise QuotaConfigError(
                [Problem("--price", value, "expected TYPE=USD_PER_HOUR", "e.g. ml.g5.xlarge=1.41")]
            ) from None
    return prices


def advice_table(advice: Advice) -> Table:
    """Per team: strategy, in-share preemption, borrow limit in percent and instances."""
    table = Table(title=f"Recommendation for {advice.organisation.name}")
    for column in ("team", "strategy", "in-share preemption", "borrow limit", "max usable"):
        table.add_column(column)
    for team in advice.teams:
        share = team.share
        if share.borrow_limit is None:
            borrow = "-"
        else:
            counts = ", ".join(f"{n} x {t}" for t, n in team.borrow_instances.items())
            borrow = f"{share.borrow_limit}% ({counts})"
        table.add_row(
            share.name,
            share.strategy.value,
            "on" if share.in_share_preemption else "off",
            borrow,
            ", ".join(f"{n} x {t}" for t, n in team.max_usable.items()),
        )
    return table


def print_advice(advice: Advice, console: Console) -> None:
    """The table, then each team's rationale and warnings."""
    console.print(advice_table(advice))
    for team in advice.teams:
        console.print(f"\n[bold]{team.share.name}[/]")
        for reason in team.rationale:
            console.print(f"  - {reason}")
        for warning in team.warnings:
            console.print(f"  [yellow]warning[/] {warning}")


@advisor_app.command("recommend")
def recommend_command(
    teams_file: Path = typer.Argument(..., help="Team-profile YAML file."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the organisation file here."
    ),
    price: list[str] = typer.Option(
        [], "--price", help="USD per instance-hour, TYPE=PRICE (repeatable), to cost idle capacity."
    ),
) -> None:
    """Recommend each team's strategy, in-share preemption and borrow limit, with reasons."""
    console = Console(highlight=False, soft_wrap=True)
    try:
        advice = recommend(load_teams(teams_file), prices=_parse_prices(price))
    except QuotaConfigError as exc:
        raise _fail(exc) from None
    print_advice(advice, console)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(advice.to_yaml(), encoding="utf-8")
        console.print(f"\nwrote {output}")
