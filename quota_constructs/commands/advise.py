"""``quota recommend`` and ``quota simulate``: the advisor and the what-if simulator.

``quota simulate --from-queue`` replays a live queue's job history: the AWS reading is
:mod:`quota_constructs.runtime.adopt`, the workload :mod:`quota_constructs.advisor.history`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from quota_constructs.advisor.billing import Bill
from quota_constructs.advisor.history import HistoryWorkload, parse_duration, workload_from_history
from quota_constructs.advisor.limits import run_problems
from quota_constructs.advisor.optimize import (
    CONNECT_TIMEOUT_S,
    DEFAULT_RESULT_TIMEOUT_S,
    SearchOptions,
    cluster_executor,
    executor_problems,
    optimize,
)
from quota_constructs.advisor.profiles import TeamsFile, load_teams, teams_json_schema
from quota_constructs.advisor.recommend import Advice, price_problems, recommend
from quota_constructs.advisor.report import plot_comparison, plot_results
from quota_constructs.advisor.reserve import ReserveWindow, reservable_types, size_reservations
from quota_constructs.advisor.simulate import (
    BILLED_STARTUP_S,
    SimulationOptions,
    SimulationResult,
    alternatives,
    compare,
)
from quota_constructs.advisor.sizing import Sizing, capacities_needed, total_needed
from quota_constructs.advisor.targets import (
    DEFAULT_WEEKS,
    MET,
    MISSED,
    NOT_CHECKED,
    TOO_FEW_JOBS,
    TargetCheck,
    check_json,
    check_line,
    check_targets,
    weekly_figures,
)
from quota_constructs.advisor.verify import Finding, verify
from quota_constructs.advisor.weeks import (
    default_weeks,
    simulate_weeks,
    week_workloads,
    weeks_problems,
)
from quota_constructs.advisor.workload import (
    DAY_S,
    DEFAULT_STARTUP_S,
    GeneratorOptions,
    WorkloadJob,
    generate_workload,
    startup_phase_s,
    workload_csv,
)
from quota_constructs.advisor.workload_stream import StreamedWorkload, read_workload_file
from quota_constructs.api_shapes import share_sharing_settings
from quota_constructs.commands._common import (
    BackfillOpt,
    BilledStartupOpt,
    CalendarGraceOpt,
    ExitCode,
    PlanStopOpt,
    check_calendar_grace,
    check_run_splits,
    data_table,
    endpoint_option,
    fail,
    handle_errors,
    json_option,
    message,
    print_errors,
    print_json,
    region_option,
    stderr_console,
    stdout_console,
    styled,
    warning_line,
)
from quota_constructs.commands._reports import (
    results_json,
    results_table,
    search_json,
    search_summary,
    search_table,
)
from quota_constructs.commands._stream import (
    StreamProgress,
    check_streamable,
    simulate_streamed,
)
from quota_constructs.commands.report import (
    check_plan_stop,
    load_prices,
    money_table,
    report_data,
    simulation_bills,
    unfinished_lines,
)
from quota_constructs.commands.reserve import exit_on_unmet, print_reservations, reserve_data
from quota_constructs.config import WindowConfig, load_organisation
from quota_constructs.model import PLAN_STOP_BEFORE_END_S, Organisation, Problem, QuotaConfigError
from quota_constructs.model.cost import Price
from quota_constructs.scheduling import collector_paused

if TYPE_CHECKING:
    from quota_constructs.runtime.queue import QueueClient

advisor_app = typer.Typer(no_args_is_help=True)

StartupOpt = Annotated[
    float,
    typer.Option(
        "--startup-s",
        help="SageMaker start-up of each job, dispatch to running (s): provisioning and image "
        "pull; a profile's startup_minutes overrides it for its team.",
    ),
]
PreemptionOpt = Annotated[
    float, typer.Option("--preemption-s", help="Preemption started-to-completed time (s).")
]


def _parse_prices(values: list[str], teams: TeamsFile) -> dict[str, float]:
    """``TYPE=USD`` values; a type no team uses is an error naming the teams' types."""
    prices: dict[str, float] = {}
    for value in values:
        itype, _, amount = value.partition("=")
        try:
            prices[itype.strip()] = float(amount)
        except ValueError:
            raise QuotaConfigError(
                [Problem("--price", value, "expected TYPE=USD_PER_HOUR", "e.g. ml.g5.xlarge=1.41")]
            ) from None
    problems = price_problems(teams, prices, path="--price")
    if problems:
        raise QuotaConfigError(problems)
    return prices


def advice_json(advice: Advice) -> str:
    """Per team: strategy, borrow limit, in-share preemption, max usable, reasons, warnings."""
    return json.dumps(advice_data(advice), indent=2)


def advice_data(advice: Advice) -> dict[str, Any]:
    """:func:`advice_json` before encoding."""
    return {
        "organisation": advice.organisation.name,
        "warnings": list(advice.warnings),
        "teams": {
            t.share.name: {
                **share_sharing_settings(t.share),
                "maxUsable": dict(t.max_usable),
                "schedule": _schedule_data(advice.organisation, t.share.name),
                "rationale": list(t.rationale),
                "warnings": list(t.warnings),
            }
            for t in advice.teams
        },
    }


def _schedule_data(org: Organisation, share: str) -> dict[str, Any] | None:
    """A share's calendar as the organisation file writes it (``None``: it has none)."""
    calendar = org.calendars.get(share)
    if calendar is None:
        return None
    windows = [
        WindowConfig.from_spec(w).model_dump(mode="json", by_alias=True, exclude_none=True)
        for w in calendar.windows
    ]
    return {"timezone": calendar.timezone, "windows": windows}


def advice_table(advice: Advice) -> Table:
    """Per team: strategy, in-share preemption, borrow limit in percent and instances."""
    table = data_table(
        "team",
        "strategy",
        "in-share preemption",
        "borrow limit",
        "max usable",
        title=f"Recommendation for {advice.organisation.name}",
    )
    for team in advice.teams:
        share = team.share
        if share.borrow_limit is None:
            borrow = "-"
        else:
            counts = ", ".join(f"{n} x {t}" for t, n in team.borrow_instances.items())
            borrow = f"{share.borrow_limit}% ({counts})"
        calendar = advice.organisation.calendars.get(share.name)
        windows = "; ".join(
            f"{w.strategy.value if w.strategy else share.strategy.value} {','.join(w.days)}"
            for w in (calendar.windows if calendar is not None else ())
        )
        table.add_row(
            share.name,
            share.strategy.value + (f" ({windows})" if windows else ""),
            "on" if share.in_share_preemption else "off",
            borrow,
            ", ".join(f"{n} x {t}" for t, n in team.max_usable.items()),
        )
    return table


def print_advice(advice: Advice, console: Console) -> None:
    """The table, then each team's rationale and warnings."""
    console.print(advice_table(advice))
    for team in advice.teams:
        console.print(message("\n", styled(team.share.name, "bold")))
        for reason in team.rationale:
            console.print(f"  - {reason}")
        for warning in team.warnings:
            console.print(message("  ", warning_line(warning)))
    for warning in advice.warnings:
        console.print(message("\n", warning_line(warning)))


@advisor_app.command("recommend")
@handle_errors
@collector_paused()
def recommend_command(
    teams_file: str = typer.Argument(
        ...,
        metavar="TEAMS_FILE",
        help="Team-profile YAML file, or 'schema' to print the JSON Schema of team profiles "
        "(a file called schema: ./schema).",
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        help="Write the organisation file here (with --optimize: the optimised one).",
    ),
    price: list[str] = typer.Option(
        [], "--price", help="USD per instance-hour, TYPE=PRICE (repeatable), to cost idle capacity."
    ),
    simulate: bool = typer.Option(
        False, "--simulate", help="Check the recommendation against a generated workload."
    ),
    optimize_: bool = typer.Option(
        False, "--optimize", help="Search the allowed configurations by simulation (targets)."
    ),
    days: int = typer.Option(7, "--days", help="Days of each generated workload."),
    seed: int = typer.Option(0, "--seed", help="Generator seed of the first week."),
    weeks: int | None = typer.Option(
        None,
        "--weeks",
        "--workloads",
        help="Independently seeded weeks (of --days days; seeds SEED, SEED+1, ...) every verdict, "
        f"size and plan rests on (--workloads: the old name). [default: {DEFAULT_WEEKS}; with "
        "--days over 7, as many as cover that many weeks]",
        show_default=False,
    ),
    max_candidates: int = typer.Option(
        64, "--max-candidates", help="With --optimize: most configurations simulated."
    ),
    workers: int = typer.Option(
        0, "--workers", help="With --optimize: worker processes (0: one per core)."
    ),
    executor: str | None = typer.Option(
        None,
        "--executor",
        help="With --optimize: run the candidates on a running Dask cluster, dask://HOST:PORT "
        "(plain TCP, this machine only unless --trust-cluster) or tls://HOST:PORT (Dask's TLS "
        "settings); pip install '.[dask]'; default: local worker processes.",
    ),
    trust_cluster: bool = typer.Option(
        False,
        "--trust-cluster",
        help="With --executor: allow a plain-TCP dask:// cluster off this machine. Its results "
        "are unpickled here: anyone who runs a member or reaches its scheduler can run code as "
        "you (docs/advisor.md).",
    ),
    result_timeout: float = typer.Option(
        DEFAULT_RESULT_TIMEOUT_S,
        "--result-timeout",
        help="With --optimize: longest wait in seconds for each candidate's result, and (up to "
        "30 s) to connect to --executor; exit 69 past it.",
    ),
    startup_s: StartupOpt = DEFAULT_STARTUP_S,
    billed_startup_s: BilledStartupOpt = BILLED_STARTUP_S,
    backfill_depth: BackfillOpt = 0,
    preemption_s: PreemptionOpt = 20.0,
    as_json: Annotated[bool, json_option("Print the advice (or search) as JSON.")] = False,
    plot: Path | None = typer.Option(
        None, "--plot", help="Write a PNG: usage (--simulate) or comparison (--optimize)."
    ),
    reserve: bool = typer.Option(
        False,
        "--reserve",
        help="Size a training plan per reservable type: simulate 0 to N instances reserved "
        "(the rest on demand) and price each with --prices (docs/advisor.md).",
    ),
    prices_file: Path | None = typer.Option(
        None,
        "--prices",
        help="With --reserve: prices file, TYPE: {on_demand: USD, training_plan: USD} per "
        "instance-hour (docs/cost.md).",
    ),
    reserve_start: int = typer.Option(
        0, "--reserve-start-hours", help="With --reserve: the plan starts this many hours in."
    ),
    reserve_hours: int | None = typer.Option(
        None,
        "--reserve-hours",
        help="With --reserve: the plan's duration in hours (default: the simulated --days).",
    ),
    plan_stop_s: PlanStopOpt = PLAN_STOP_BEFORE_END_S,
) -> None:
    """Recommend each team's strategy, in-share preemption and borrow limit, with reasons.

    Exit 1 when --simulate finds a FAILED expectation, --optimize misses a team's target, or
    --reserve's recommended plan misses one.
    """
    if teams_file == "schema":
        typer.echo(teams_json_schema())
        return
    console = stdout_console()
    err = stderr_console()
    _check_modes(simulate, optimize_, plot)
    _check_reserve(reserve, prices_file, simulate or optimize_)
    if executor is not None and not optimize_:
        raise QuotaConfigError(
            [Problem("--executor", executor, "needs --optimize", "add --optimize or drop it")]
        )
    if trust_cluster and executor is None:
        raise QuotaConfigError(
            [
                Problem(
                    "--trust-cluster",
                    True,
                    "needs --executor",
                    "add --executor dask://HOST:PORT or drop it",
                )
            ]
        )
    if not 0 < result_timeout <= 7 * DAY_S:
        raise QuotaConfigError(
            [
                Problem(
                    "--result-timeout",
                    result_timeout,
                    "must be more than 0 and at most a week (604800 s)",
                    f"e.g. {DEFAULT_RESULT_TIMEOUT_S:g}",
                )
            ]
        )
    _check_run(days=days, seed=seed, startup_s=startup_s, preemption_s=preemption_s)
    weeks = default_weeks(days) if weeks is None else weeks
    _check_weeks(weeks)
    check_run_splits(
        backfill_depth=backfill_depth, startup_s=startup_s, billed_startup_s=billed_startup_s
    )
    teams = load_teams(teams_file)
    prices = _parse_prices(price, teams)
    generator = GeneratorOptions(startup_s=startup_s)
    sim = SimulationOptions(
        startup_s=startup_phase_s(teams, startup_s),
        billed_startup_s=billed_startup_s,
        preemption_s=preemption_s,
        window_s=days * DAY_S,
        backfill_depth=backfill_depth,
    )
    if optimize_:
        options = SearchOptions(
            seeds=tuple(range(seed, seed + weeks)),
            days=days,
            max_candidates=max_candidates,
            simulation=sim,
            generator=generator,
        )
        pool = _executor(executor, workers, trust_cluster, result_timeout)
        _optimize(teams, prices, options, pool, output, plot, as_json, console, err)
        return
    workloads_ = week_workloads(
        teams, days=days, seeds=range(seed, seed + weeks), options=generator
    )
    advice = recommend(teams, prices=prices, options=generator, workloads=workloads_, days=days)
    if reserve:
        assert prices_file is not None
        check_plan_stop(plan_stop_s)
        window = ReserveWindow(reserve_start, reserve_hours or days * 24)
        sim = replace(sim, plan_stop_before_end_s=plan_stop_s)
        _reserve(advice, teams, workloads_, (prices_file, window, sim, days), as_json=as_json)
        return
    if not as_json:
        print_advice(advice, console)
    elif not simulate:
        typer.echo(advice_json(advice))
    if output is not None:
        _write(output, advice.to_yaml(), err if as_json else console)
    if simulate:
        _simulate_advice(
            teams,
            advice,
            workloads_,
            (days, seed, sim),
            plot,
            console,
            as_json=as_json,
            prices=prices,
        )


def _check_reserve(reserve: bool, prices_file: Path | None, other_mode: bool) -> None:
    """``--reserve`` needs ``--prices`` and runs alone; ``--prices`` needs ``--reserve``."""
    if reserve and other_mode:
        fix = "run --reserve on its own (it simulates every plan size itself)"
        raise QuotaConfigError(
            [Problem("--reserve", None, "not with --simulate or --optimize", fix)]
        )
    if reserve and prices_file is None:
        fix = "pass --prices FILE with 'TYPE: {on_demand: USD, training_plan: USD}' entries"
        raise QuotaConfigError([Problem("--prices", None, "--reserve needs a prices file", fix)])
    if prices_file is not None and not reserve:
        fix = "add --reserve, or use --price TYPE=USD to price idle capacity"
        raise QuotaConfigError([Problem("--prices", str(prices_file), "needs --reserve", fix)])


def _reserve(
    advice: Advice,
    teams: TeamsFile,
    workloads: Sequence[Sequence[WorkloadJob]],
    run: tuple[Path, ReserveWindow, SimulationOptions, int],
    *,
    as_json: bool,
) -> None:
    """Size and print each reservable type's plan; exit 1 when the one to buy misses a target."""
    prices_file, window, sim, days = run
    org = advice.organisation
    reservations = size_reservations(
        org, teams, workloads, load_prices(prices_file), options=sim, days=days, window=window
    )
    _, other = reservable_types(org)
    if as_json:
        print_json(reserve_data(org.name, reservations, other, sim.plan_stop_before_end_s))
    else:
        print_reservations(reservations, other, stdout_console())
    exit_on_unmet(reservations)


def _check_run(*, days: int, seed: int, startup_s: float, preemption_s: float) -> None:
    """Refuse run options outside their bounds (``advisor.limits``), every problem at once."""
    problems = run_problems(days=days, seed=seed, startup_s=startup_s, preemption_s=preemption_s)
    if problems:
        raise QuotaConfigError(problems)


def _check_weeks(weeks: int) -> None:
    problems = weeks_problems(weeks)
    if problems:
        raise QuotaConfigError(problems)


def _check_modes(simulate: bool, optimize_: bool, plot: Path | None) -> None:
    if simulate and optimize_:
        raise QuotaConfigError(
            [
                Problem(
                    "--simulate/--optimize",
                    None,
                    "choose one: --simulate checks the rule-based advice, --optimize searches",
                    "run the command once with each",
                )
            ]
        )
    if plot is not None and not (simulate or optimize_):
        raise QuotaConfigError(
            [Problem("--plot", str(plot), "needs --simulate or --optimize", "add one of them")]
        )


def _write(path: Path, text: str, console: Console) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    console.print(f"wrote {path}")


def _simulate_advice(
    teams: TeamsFile,
    advice: Advice,
    workloads: Sequence[Sequence[WorkloadJob]],
    run: tuple[int, int, SimulationOptions],
    plot: Path | None,
    console: Console,
    *,
    as_json: bool,
    prices: dict[str, float] | None = None,
) -> None:
    """Check the advice on its generated weeks: every team's targets (implicit ones included)
    judged over all the weeks, joint sizing for teams that miss them; the table, money and
    findings of the first week; with ``as_json`` one JSON document. Exit 1 if a target is
    missed or an expectation FAILED."""
    days, seed, options = run
    configs = alternatives(advice.organisation)
    results = compare(list(configs.values()), workloads[0], options=options)
    findings = verify(advice, dict(zip(configs, results, strict=True)))
    weeks = weekly_figures(
        [results[0], *simulate_weeks(advice.organisation, workloads[1:], options)]
    )
    checks = check_targets(teams, weeks, days=days)
    sized = capacities_needed(
        advice.organisation,
        teams,
        workloads,
        options=options,
        days=days,
        checks=checks,
        weeks=weeks,
    )
    sizings = {s.team: s for s in sized}
    priced = {t: Price(usd) for t, usd in prices.items()} if prices else None
    bills = _bills(configs, results, priced, options, workloads[0], reserve_label="all-RESERVE")
    costs = {label: bill.report for label, bill in bills.items()}
    if as_json:
        data = advice_data(advice)
        for name, team in data["teams"].items():
            team["targets"] = [check_json(c) for c in checks if c.team == name]
            _add_sizing(team, sizings.get(name))
        simulation = json.loads(
            _with_costs(results_json(results, list(configs)), bills, options.startup_s)
        )
        found = [{"ok": f.ok, "text": f.text} for f in findings]
        document = {**data, "simulation": simulation, "findings": found}
        document["weeks"] = _weeks_data(workloads, seed)
        if sized:
            document["capacityNeeded"] = total_needed(sized, advice.organisation)
        typer.echo(json.dumps(document, indent=2))
    else:
        console.print(_weeks_line(workloads, days, seed))
        console.print(results_table(results, list(configs)))
        _print_bills(bills, options.startup_s, console)
        _print_checks(checks, sizings, findings, console)
        if sized:
            total = ", ".join(
                f"{n} x {t}" for t, n in total_needed(sized, advice.organisation).items()
            )
            console.print(f"  with every sizing together the organisation needs {total}")
    if plot is not None:
        plot_results(results, list(configs), plot, costs)
        (stderr_console() if as_json else console).print(f"wrote {plot}")
    _exit_on_misses(checks, findings)


def _weeks_line(workloads: Sequence[Sequence[WorkloadJob]], days: int, seed: int) -> str:
    """What the table shows (the first week) and what the verdicts rest on (every week)."""
    last = seed + len(workloads) - 1
    jobs = sum(len(w) for w in workloads)
    return (
        f"\n{len(workloads[0])} generated jobs in the first week of {days} days (seed {seed}); "
        f"targets judged over {len(workloads)} weeks (seeds {seed}-{last}, {jobs} jobs)"
    )


def _weeks_data(workloads: Sequence[Sequence[WorkloadJob]], seed: int) -> dict[str, Any]:
    """What the verdicts rest on: the weeks, their seeds and jobs."""
    return {
        "weeks": len(workloads),
        "seeds": [seed, seed + len(workloads) - 1],
        "jobs": sum(len(w) for w in workloads),
    }


def _missed_by_team(checks: Sequence[TargetCheck]) -> dict[str, list[TargetCheck]]:
    out: dict[str, list[TargetCheck]] = {}
    for check in checks:
        if check.missed:
            out.setdefault(check.team, []).append(check)
    return out


def _add_sizing(team: dict[str, Any], sizing: Sizing | None) -> None:
    """A team's sizing in its JSON: ``capacityNeeded`` and the sentence among its warnings."""
    if sizing is None:
        return
    team["warnings"] = [*team.get("warnings", []), sizing.text()]
    if sizing.needed is not None:
        team["capacityNeeded"] = dict(sizing.needed)


_MARKS = {
    MET: ("met", "green"),
    MISSED: ("missed", "red"),
    NOT_CHECKED: ("not checked", "blue"),
    TOO_FEW_JOBS: ("too few jobs", "yellow"),
    True: ("ok", "green"),
    False: ("FAILED", "red"),
    None: ("info", "blue"),
}


def _print_checks(
    checks: Sequence[TargetCheck],
    sizings: dict[str, Sizing],
    findings: Sequence[Finding],
    console: Console,
) -> None:
    """One line per team and target, the sizing of teams that miss one, then the findings."""
    console.print("\nTargets")
    for check in checks:
        console.print(message("  ", styled(*_MARKS[check.status]), f" {check_line(check)}"))
    for sizing in sizings.values():
        console.print(message("  ", styled("sizing", "yellow"), f" {sizing.text()}"))
    for finding in findings:
        console.print(message("  ", styled(*_MARKS[finding.ok]), f" {finding.text}"))


def _exit_on_misses(checks: Sequence[TargetCheck], findings: Sequence[Finding]) -> None:
    missed = sorted({c.team for c in checks if c.missed})
    failed = sum(finding.ok is False for finding in findings)
    lines = [f"{sum(c.missed for c in checks)} target(s) missed, teams: {', '.join(missed)}"]
    lines = lines if missed else []
    lines += [f"{failed} expectation(s) FAILED"] if failed else []
    if lines:
        print_errors(lines)
        raise typer.Exit(ExitCode.FAILED)


class SearchPool:
    """The candidates' executor (a context manager), its name in errors and the result
    time-out."""

    def __init__(
        self, manager: AbstractContextManager[Executor], name: str, result_timeout_s: float
    ) -> None:
        self.manager, self.name, self.result_timeout_s = manager, name, result_timeout_s


def _executor(
    url: str | None, workers: int, trust_cluster: bool, result_timeout_s: float
) -> SearchPool:
    """The candidates' executor: the Dask cluster at ``url``, else ``workers`` processes."""
    if workers < 0:
        raise QuotaConfigError(
            [Problem("--workers", workers, "must be 0 (one per core) or more", "e.g. 2")]
        )
    if url is not None:
        problems = executor_problems(url, trust_cluster=trust_cluster)
        if problems:
            raise QuotaConfigError(problems)
        connect_s = min(CONNECT_TIMEOUT_S, result_timeout_s)
        manager = _quiet_dask(
            cluster_executor(url, timeout_s=connect_s, trust_cluster=trust_cluster)
        )
        return SearchPool(manager, url, result_timeout_s)
    count = workers or os.cpu_count() or 1
    name = f"the local process pool ({count} worker{'s' if count > 1 else ''})"
    return SearchPool(_process_pool(count), name, result_timeout_s)


DASK_LOGGERS = ("distributed", "tornado")
"""Loggers silenced during a search on a cluster: a lost scheduler or worker is the command's
one ``error:`` line (exit 69), not Dask's reconnection warnings and tracebacks as well."""


@contextmanager
def _quiet_dask(manager: AbstractContextManager[Executor]) -> Iterator[Executor]:
    """``manager`` with Dask's own log lines silenced while it runs (levels restored after)."""
    loggers = [logging.getLogger(name) for name in DASK_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        with manager as executor:
            yield executor
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@contextmanager
def _process_pool(workers: int) -> Iterator[Executor]:
    """A process pool; after an error its workers are stopped, not waited for (a late or hung
    worker would otherwise hold the command for ever)."""
    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        yield pool
    except BaseException:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        raise
    pool.shutdown(wait=True)


def progress_printer(err: Console, what: str, *, as_json: bool) -> Callable[[int, int], None]:
    """Progress on stderr, ``WHAT DONE/TOTAL`` rewritten in place: only on a terminal and
    without ``--json`` (otherwise it does nothing); a total reached ends the line."""

    def show(done: int, total: int) -> None:
        if as_json or not err.is_terminal:
            return
        err.file.write(f"\r{what} {done:,}/{total:,}" + ("\n" if done >= total else ""))
        err.file.flush()

    return show


def _days_printer(err: Console) -> Callable[[str, float], None]:
    """``quota simulate``'s progress on stderr: the organisation and its simulated days (on a
    terminal one line rewritten; otherwise, with ``--progress``, a line each simulated day)."""
    shown: dict[str, int] = {}

    def show(organisation: str, now_s: float) -> None:
        text = f"{organisation}: {now_s / DAY_S:,.0f} simulated days"
        if err.is_terminal:
            err.file.write(f"\r{text}")
        elif shown.setdefault(organisation, -1) < int(now_s // DAY_S):
            shown[organisation] = int(now_s // DAY_S)
            err.file.write(f"{text}\n")
        err.file.flush()

    return show


def _optimize(
    teams: TeamsFile,
    prices: dict[str, float],
    options: SearchOptions,
    pool: SearchPool,
    output: Path | None,
    plot: Path | None,
    as_json: bool,
    console: Console,
    err: Console,
) -> None:
    """Run the search on ``pool`` and print it (JSON on stdout with ``--json``)."""
    flags = {"seeds": "--workloads", "days": "--days", "max_candidates": "--max-candidates"}
    problems = [replace(p, path=flags.get(p.path, p.path)) for p in options.problems()]
    if problems:
        raise QuotaConfigError(problems)
    progress = progress_printer(err, "candidates", as_json=as_json)
    with pool.manager as executor:
        search = optimize(
            teams,
            options=options,
            executor=executor,
            prices=prices,
            progress=progress,
            executor_name=pool.name,
            result_timeout_s=pool.result_timeout_s,
        )
    info = err  # warnings and progress: stderr (data only on stdout)
    if as_json:
        typer.echo(search_json(search))
    else:
        console.print(search_summary(search))
        console.print(search_table(search))
    advice = [f"{t.share.name}: {w}" for t in search.advice.teams for w in t.warnings]
    for warning in (*advice, *search.warnings):
        info.print(warning_line(warning))
    if output is not None:
        _write(output, search.to_yaml(), info)
    if plot is not None:
        plot_comparison(search, plot)
        info.print(f"wrote {plot}")
    for sizing in search.sizings:
        info.print(warning_line(sizing.text()))
    if search.best.missed:
        missed = sorted({check.team for check in search.best.missed})
        print_errors(
            [
                f"{len(search.best.missed)} target(s) missed by the best "
                f"configuration found, teams: {', '.join(missed)}"
            ]
        )
        raise typer.Exit(ExitCode.FAILED)


def _workload(
    workload: Path | None,
    generate: Path | None,
    run: tuple[int, int, float, float],
    checked: Callable[[int], None] | None = None,
) -> tuple[list[WorkloadJob] | StreamedWorkload, float | None, float]:
    """Jobs from --workload (a file too big for memory: streamed) or --generate, the window
    (generated: the days) and the start-up phase to simulate (generated: the shortest
    team's, the rest is in its jobs)."""
    days, seed, intensity, startup_s = run
    if (workload is None) == (generate is None):
        raise QuotaConfigError(
            [
                Problem(
                    "--workload/--generate",
                    None,
                    "give exactly one workload source",
                    "pass --workload W.csv or --generate TEAMS.yaml --days N",
                )
            ]
        )
    if workload is not None:
        return read_workload_file(workload, checked), None, startup_s
    assert generate is not None
    teams: TeamsFile = load_teams(generate)
    options = GeneratorOptions(intensity=intensity, startup_s=startup_s)
    jobs = generate_workload(teams, days=days, seed=seed, options=options)
    return jobs, days * DAY_S, startup_phase_s(teams, startup_s)


def _generated_verdicts(
    generate: Path,
    orgs: Sequence[Organisation],
    results: Sequence[SimulationResult],
    run: tuple[int, int, int, float, float],
    options: SimulationOptions,
) -> dict[int, tuple[TargetCheck, ...]]:
    """Each organisation's teams' targets judged over the generated weeks (the first is the
    one already simulated), as ``quota recommend --simulate`` judges them; by position."""
    days, seed, weeks, intensity, startup_s = run
    teams = load_teams(generate)
    generator = GeneratorOptions(intensity=intensity, startup_s=startup_s)
    later = week_workloads(teams, days=days, seeds=range(seed + 1, seed + weeks), options=generator)
    out = {}
    for index, (org, first) in enumerate(zip(orgs, results, strict=True)):
        figures = weekly_figures([first, *simulate_weeks(org, later, options)])
        out[index] = check_targets(teams, figures, days=days)
    return out


def _targets_by_team(checks: Sequence[TargetCheck]) -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for check in checks:
        out.setdefault(check.team, []).append(check_json(check))
    return out


def _labels(paths: list[Path], orgs: list[Organisation]) -> list[str]:
    names = [org.name for org in orgs]
    if len(set(names)) == len(names):
        return names
    return [str(p) for p in paths]


@advisor_app.command("simulate")
@handle_errors
@collector_paused()
def simulate_command(
    org_file: Path | None = typer.Argument(
        None, help="Organisation YAML file (with --from-queue: optional, compared too)."
    ),
    workload: Path | None = typer.Option(None, "--workload", help="Workload CSV file."),
    generate: Path | None = typer.Option(
        None, "--generate", help="Generate the workload from this team-profile file."
    ),
    days: int = typer.Option(7, "--days", help="Days of generated workload."),
    seed: int = typer.Option(0, "--seed", help="Generator seed (same seed, same jobs)."),
    weeks: int | None = typer.Option(
        None,
        "--weeks",
        help="With --generate: independently seeded weeks (seeds SEED, SEED+1, ...) each team's "
        f"targets are judged on; the table shows the first. [default: {DEFAULT_WEEKS}; with "
        "--days over 7, as many as cover that many weeks]",
        show_default=False,
    ),
    intensity: float = typer.Option(
        1.0, "--intensity", help="Generator: more, shorter jobs at the same load."
    ),
    compare_files: list[Path] = typer.Option(
        [], "--compare", help="More organisation files to run on the same workload."
    ),
    as_json: Annotated[bool, json_option("Print the results as JSON.")] = False,
    plot: Path | None = typer.Option(None, "--plot", help="Write a PNG plot here."),
    save_workload: Path | None = typer.Option(
        None, "--save-workload", help="Write the workload used as CSV."
    ),
    startup_s: StartupOpt = DEFAULT_STARTUP_S,
    billed_startup_s: BilledStartupOpt = BILLED_STARTUP_S,
    backfill_depth: BackfillOpt = 0,
    preemption_s: PreemptionOpt = 20.0,
    prices_file: Path | None = typer.Option(
        None,
        "--prices",
        help="Prices file (TYPE: USD per instance-hour, docs/cost.md): add each team's "
        "instance-hours and cost, and the separate-pools cost.",
    ),
    from_queue: str | None = typer.Option(
        None,
        "--from-queue",
        help="Replay this queue's job history (organisation name, queue name or ARN) on its "
        "live configuration (and ORG_FILE / --compare files).",
    ),
    since: str = typer.Option(
        "7d", "--since", help="With --from-queue: history to replay, e.g. 90m, 1h, 7d."
    ),
    endpoint_url: Annotated[
        str | None, endpoint_option("With --from-queue: Batch/SSM endpoint (emulator).")
    ] = None,
    region: Annotated[str | None, region_option("With --from-queue: AWS region.")] = None,
    plan_stop_s: PlanStopOpt = PLAN_STOP_BEFORE_END_S,
    calendar_grace: CalendarGraceOpt = 0.0,
    show_progress: bool = typer.Option(
        False,
        "--progress",
        help="Progress on stderr even when it is not a terminal (or with --json): a line "
        "each tenth of a streamed workload's jobs.",
    ),
) -> None:
    """Run a workload through the emulator's scheduler in virtual time; measure each share.

    A --workload file of more than 100,000 jobs (at most 10,000,000; sorted on disk first
    when out of submit-time order) is streamed in bounded memory: the same table and JSON,
    without --plot, --prices or --save-workload."""
    _check_run(days=days, seed=seed, startup_s=startup_s, preemption_s=preemption_s)
    if weeks is not None and generate is None:
        fix = "judge targets on generated weeks with --generate TEAMS.yaml, or drop --weeks"
        raise QuotaConfigError([Problem("--weeks", weeks, "needs --generate", fix)])
    weeks = default_weeks(days) if weeks is None else weeks
    _check_weeks(weeks)
    check_run_splits(
        backfill_depth=backfill_depth, startup_s=startup_s, billed_startup_s=billed_startup_s
    )
    check_plan_stop(plan_stop_s)
    check_calendar_grace(calendar_grace)
    if from_queue is not None:
        _check_history_is_the_workload(from_queue, workload, generate)
        simulate_from_queue(
            from_queue,
            since,
            org_files=[*([org_file] if org_file else []), *compare_files],
            as_json=as_json,
            plot=plot,
            save_workload=save_workload,
            options=SimulationOptions(
                startup_s=startup_s,
                preemption_s=preemption_s,
                plan_stop_before_end_s=plan_stop_s,
                calendar_grace_s=calendar_grace,
            ),
            endpoint_url=endpoint_url,
            region=region,
        )
        return
    if org_file is None:
        raise QuotaConfigError(
            [Problem("ORG_FILE", None, "missing", "pass an organisation file or --from-queue")]
        )
    console = stdout_console()
    paths = [org_file, *compare_files]
    orgs = [load_organisation(p) for p in paths]
    err = stderr_console()
    shown = show_progress or (err.is_terminal and not as_json)
    meter = StreamProgress(sys.stderr, terminal=err.is_terminal)
    run = (days, seed, intensity, startup_s)
    jobs, window, phase = _workload(workload, generate, run, meter.checked if shown else None)
    options = SimulationOptions(
        startup_s=phase,
        billed_startup_s=billed_startup_s,
        preemption_s=preemption_s,
        window_s=window,
        plan_stop_before_end_s=plan_stop_s,
        calendar_grace_s=calendar_grace,
        backfill_depth=backfill_depth,
    )
    labels = _labels(paths, orgs)
    if isinstance(jobs, StreamedWorkload):
        flags = {"--plot": plot, "--prices": prices_file, "--save-workload": save_workload}
        check_streamable(jobs, flags)
        simulate_streamed(
            orgs,
            labels,
            jobs,
            options,
            progress=meter if shown else None,
            as_json=as_json,
            console=console,
            print_stuck=_print_stuck,
        )
        return
    progress = _days_printer(err) if shown else None
    results: list[SimulationResult] = compare(orgs, jobs, options=options, progress=progress)
    if progress is not None:
        err.file.write("\r\033[K" if err.is_terminal else "")  # cleared: results follow
    if save_workload is not None:
        save_workload.write_text(workload_csv(jobs), encoding="utf-8")
    bills = _bills(dict(zip(labels, orgs, strict=True)), results, prices_file, options, jobs)
    costs = {label: bills[label].report for label in labels if label in bills}
    verdicts = {}
    if generate is not None:
        weeks_run = (days, seed, weeks, intensity, startup_s)
        verdicts = _generated_verdicts(generate, orgs, results, weeks_run, options)
    if as_json:
        document = json.loads(_with_costs(results_json(results, labels), bills, options.startup_s))
        for label, checks in zip(labels, verdicts.values(), strict=False):
            document[label]["targets"] = _targets_by_team(checks)
        typer.echo(json.dumps(document, indent=2))
    else:
        console.print(f"{len(jobs)} jobs")
        console.print(results_table(results, labels))
        _print_stuck(results, console)
        _print_bills(bills, options.startup_s, console)
        for label, checks in zip(labels, verdicts.values(), strict=False):
            console.print(
                f"\nTargets of {label} over {weeks} week(s) (seeds {seed}-{seed + weeks - 1})"
            )
            for check in checks:
                console.print(message("  ", styled(*_MARKS[check.status]), f" {check_line(check)}"))
    if plot is not None:
        plot_results(results, labels, plot, costs)
        if not as_json:
            console.print(f"wrote {plot}")


def _bills(
    orgs: Mapping[str, Organisation],
    results: Sequence[SimulationResult],
    prices_file: Path | dict[str, Price] | None,
    options: SimulationOptions,
    jobs: Sequence[WorkloadJob],
    *,
    reserve_label: str | None = None,
) -> dict[str, Bill]:
    """Each organisation's bill from its simulation's jobs, all run to the end and billed over
    one period, against an all-RESERVE run (``reserve_label``'s, else one run for it); none
    without prices."""
    if prices_file is None:
        return {}
    prices = load_prices(prices_file) if isinstance(prices_file, Path) else prices_file
    runs = {
        label: (org, result) for (label, org), result in zip(orgs.items(), results, strict=True)
    }
    return simulation_bills(runs, jobs, prices, options, reserve_label=reserve_label)


def _print_bills(bills: Mapping[str, Bill], startup_s: float, console: Console) -> None:
    for label, bill in bills.items():
        console.print(money_table(bill, label, startup_s))
        for line in unfinished_lines(bill):
            console.print(warning_line(f"{label}: {line}"))


def _with_costs(results: str, bills: Mapping[str, Bill], startup_s: float) -> str:
    """The results JSON with each configuration's ``cost`` (docs/cost.md's report, with the
    start-up simulated, ``startupS``, and the equal-work figures: ``jobsBilled``,
    ``jobsUnfinished``, the saving against the all-RESERVE run)."""
    data = json.loads(results)
    for label, bill in bills.items():
        if label in data:
            data[label]["cost"] = report_data(bill.report, startup_s, bill)
    return json.dumps(data, indent=2)


def _print_stuck(results: list[SimulationResult], console: Console) -> None:
    for result in results:
        for share in result.shares:
            for reason, count in share.not_started_reasons.items():
                console.print(
                    warning_line(
                        f"{result.organisation}: {count} job(s) of {share.share} "
                        f"never started: {reason}"
                    )
                )


def _check_history_is_the_workload(
    from_queue: str, workload: Path | None, generate: Path | None
) -> None:
    """``--from-queue``: the workload is the queue's history, not --workload or --generate."""
    if workload is not None or generate is not None:
        raise QuotaConfigError(
            [
                Problem(
                    "--from-queue",
                    from_queue,
                    "the workload comes from the queue's history",
                    "drop --workload/--generate, or drop --from-queue",
                )
            ]
        )


def simulate_from_queue(
    from_queue: str,
    since: str,
    *,
    org_files: Sequence[Path] = (),
    as_json: bool = False,
    plot: Path | None = None,
    save_workload: Path | None = None,
    options: SimulationOptions | None = None,
    endpoint_url: str | None = None,
    region: str | None = None,
) -> None:
    """Replay the queue's history since ``since`` on its live configuration and ``org_files``."""
    from quota_constructs.runtime.adopt import queue_client, read_job_history, read_organisation

    seconds = parse_duration(since)
    client = queue_client(from_queue, endpoint_url=endpoint_url, region=region)
    live = read_organisation(client).organisation
    history = read_job_history(client, time.time() - seconds)
    workload = workload_from_history(history.jobs, start_s=history.since_s, now_s=history.now_s)
    orgs = [live, *(load_organisation(p) for p in org_files)]
    if not workload.jobs:
        lines = "; ".join(workload.report()) or "no jobs at all"
        fail(f"no job to replay in the last {since} on {client.queue} ({lines})")
    labels = [f"{live.name} (live)", *(str(p) for p in org_files)]
    sim = options or SimulationOptions()
    sim = replace(sim, window_s=workload.window_s or None)
    results = compare(orgs, list(workload.jobs), options=sim)
    if save_workload is not None:
        save_workload.write_text(workload_csv(workload.jobs), encoding="utf-8")
    if as_json:
        print_json(
            {
                "jobQueue": client.queue,
                "history": workload.as_json(),
                "results": json.loads(results_json(results, labels)),
            }
        )
    else:
        _print_history(workload, client, since)
        stdout_console().print(results_table(results, labels))
    if plot is not None:
        plot_results(results, labels, plot)


def _print_history(workload: HistoryWorkload, client: QueueClient, since: str) -> None:
    console = stdout_console()
    console.print(
        f"{workload.total} job(s) created in the last {since} on {client.queue} (from "
        f"{workload.start_iso}); {len(workload.jobs)} replayed"
    )
    for line in workload.report():
        console.print(f"  {line}")
    table = data_table(
        "share",
        "jobs",
        "started",
        "wait p50",
        "wait max",
        "preemptions",
        title="Observed on the queue",
    )
    for s in workload.observed:
        table.add_row(
            s.share,
            str(s.jobs),
            str(s.started),
            f"{s.wait_p50_s:.0f} s",
            f"{s.wait_max_s:.0f} s",
            f"{s.preemptions} ({s.preempted_jobs} jobs)",
        )
    console.print(table)
