"""Owns ``quota forecast calibrate``: fit the start forecast's calibrated bounds on a backtest.

The backtest (:mod:`quota_constructs.forecast.backtest`) replays workloads on the
organisation's queue in virtual time, forecasts each job at its submit and compares with when
it started; the calibration (:mod:`quota_constructs.forecast.calibration`) is fitted on those
predictions and written as JSON for ``--calibration FILE`` (or ``QUOTA_FORECAST_CALIBRATION``)
of ``quota status``, ``quota jobs ls|describe|submit --what-if`` and ``quota local why``.
Workloads: the queue's own history (``quota simulate --from-queue QUEUE --since 14d
--save-workload FILE``, one CSV per period), or the teams' profiles, one generated week per
seed. docs/runtime.md, "Calibrated bounds".
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from quota_constructs.commands._common import (
    ExitCode,
    JsonOpt,
    fail,
    handle_errors,
    print_json,
    stderr_console,
    stdout_console,
)

if TYPE_CHECKING:
    from quota_constructs.advisor.workload import WorkloadJob
    from quota_constructs.forecast import Calibration
    from quota_constructs.forecast.backtest import Coverage, HeldOut, Prediction

forecast_app = typer.Typer(
    name="forecast",
    help="The start forecast of waiting jobs: calibrate its bounds on a backtest.",
    no_args_is_help=True,
)
ARRIVAL_CHOICES = ("auto", "on", "off")


@forecast_app.callback()
def forecast_group() -> None:
    """The start forecast of waiting jobs: calibrate its bounds on a backtest (the forecast
    itself is in quota status, quota jobs ls|describe|submit --what-if, quota local why)."""


@forecast_app.command()
@handle_errors
def calibrate(
    org_file: Annotated[Path, typer.Argument(help="Organisation file of the queue.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the calibration (JSON).")
    ],
    workload: Annotated[
        list[Path] | None,
        typer.Option(
            "--workload",
            help="A recorded workload CSV (quota simulate --from-queue ... --save-workload); "
            "repeat for several periods.",
        ),
    ] = None,
    teams: Annotated[
        Path | None,
        typer.Option("--teams", help="Team profiles: backtest generated workloads instead."),
    ] = None,
    days: Annotated[int, typer.Option(min=2, max=90, help="With --teams: days per workload.")] = 7,
    seeds: Annotated[
        list[int] | None,
        typer.Option("--seed", help="With --teams: one workload per seed (default 1-6)."),
    ] = None,
    samples: Annotated[
        int, typer.Option(min=12, max=200, help="Runs of the core per forecast.")
    ] = 60,
    arrivals: Annotated[
        str,
        typer.Option(help="Arrival model of the forecasts: auto (the commands' default), on, off."),
    ] = "auto",
    start: Annotated[
        str | None,
        typer.Option(
            metavar="ISO-8601",
            help="When the workloads' time 0 was (UTC unless an offset is given; a recorded "
            "history's 'historyStart' in quota simulate --from-queue --json); default a Monday "
            "00:00 UTC, as generated weeks start. The arrival model's kinds of day follow it.",
        ),
    ] = None,
    period_days: Annotated[
        int,
        typer.Option(
            min=1,
            max=90,
            help="Days of each period the fit is judged on with a fit on the others (held "
            "out); a workload longer than that is cut into periods of it.",
        ),
    ] = 7,  # forecast.backtest.PERIOD_DAYS (the forecast package is not imported at start-up)
    as_json: JsonOpt = False,
) -> None:
    """Fit the forecast's calibrated p10/p90 on a backtest of recorded or generated workloads.

    Each job of each workload is forecast at its submit (after the first day) and compared with
    when it started; the bounds are then widened (or narrowed) so that they cover what they
    state on those forecasts (split conformal prediction). Use the file with --calibration.
    Each period (--period-days of a workload) is also judged with a fit on the others (leave one
    out), given two or more: the coverage the queue's next period can expect.
    """
    if arrivals not in ARRIVAL_CHOICES:
        fail(
            f"--arrivals {arrivals!r} is not one of {', '.join(ARRIVAL_CHOICES)}; fix: use auto",
            ExitCode.USAGE,
        )
    if (workload is None) == (teams is None):
        fail(
            "give the workloads to backtest: --workload FILE (recorded) or --teams TEAMS.yaml "
            "(generated), one of the two",
            ExitCode.USAGE,
        )
    from quota_constructs.config import load_organisation
    from quota_constructs.forecast.backtest import Coverage, backtest, by_period, waited

    epoch = _epoch(start)
    queue = load_organisation(org_file).queue
    chosen = seeds or list(range(1, 7))
    runs = backtest_workloads(workload, teams, days, chosen)
    groups: list[tuple[Prediction, ...]] = []
    started = time.process_time()
    for label, seed, jobs in runs:
        result = backtest(queue, jobs, samples=samples, seed=seed, arrivals=arrivals, epoch_s=epoch)
        groups.append(result.predictions)
        stderr_console().print(f"backtested {label}: {len(result.predictions)} forecasts")
    fitted_on = fitted_on_text(workload, teams, days, chosen, samples)
    periods = by_period(groups, period_days * 86400.0)
    calibration, judged = _fit_and_judge(periods, fitted_on, [s.name for s in queue.shares])
    calibration.save(output)
    found = [p for group in groups for p in group]
    _print_fit(output, calibration, Coverage.of(waited(found)), judged, as_json, started)


def _fit_and_judge(
    periods: list[list[Prediction]], fitted_on: str, shares: list[str]
) -> tuple[Calibration, HeldOut | str]:
    """:func:`~quota_constructs.forecast.backtest.fit_and_judge`; a calibration that cannot be
    fitted is a failure (exit 1)."""
    from quota_constructs.forecast import CalibrationError
    from quota_constructs.forecast.backtest import fit_and_judge

    try:
        return fit_and_judge(periods, fitted_on=fitted_on, shares=shares)
    except CalibrationError as error:
        fail(str(error), ExitCode.FAILED)


def _print_fit(
    output: Path,
    calibration: Calibration,
    waits: Coverage,
    judged: HeldOut | str,
    as_json: bool,
    started: float,
) -> None:
    """What ``quota forecast calibrate`` wrote, the waited jobs' coverage before it and on
    held-out periods (``judged``: or why they were not judged)."""
    from quota_constructs.forecast.backtest import HeldOut

    held = judged if isinstance(judged, HeldOut) else None
    if as_json:
        print_json(
            {
                "output": str(output),
                "calibration": calibration.as_json(),
                "uncalibratedWaits": waits.as_json(),
                "heldOut": None if held is None else held.as_json(),
                **({} if held is not None else {"heldOutReason": judged}),
                "cpuS": round(time.process_time() - started, 1),
            }
        )
        return
    judgement = held.describe() if held is not None else f"not judged held out: {judged}"
    stdout_console().print(
        f"wrote {output}: {calibration.describe()}\nbefore it, the waited jobs' starts: "
        f"{waits.interval:.1%} in p10-p90 (80 % meant), {waits.below_p90:.1%} at or before "
        f"p90 (90 % meant), {waits.jobs} jobs\n{judgement}",
        highlight=False,
        markup=False,
    )


def _epoch(start: str | None) -> float:
    """Epoch seconds of ``--start`` (ISO 8601, UTC when it has no offset); the backtest's
    default Monday without it. A usage error naming the value and the format otherwise."""
    if start is None:
        from quota_constructs.forecast.backtest import EPOCH_S

        return EPOCH_S
    try:
        when = datetime.fromisoformat(start)
    except ValueError:
        fail(
            f"--start {start!r} is not an ISO 8601 time; fix: e.g. 2026-11-23T00:00:00Z or "
            "2026-11-23 (the 'historyStart' of quota simulate --from-queue --json)",
            ExitCode.USAGE,
        )
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def backtest_workloads(
    files: list[Path] | None, teams: Path | None, days: int, seeds: list[int]
) -> list[tuple[str, int, list[WorkloadJob]]]:
    """``(label, seed of the samples, jobs)`` per workload: each recorded CSV file (seed 0),
    else one generated of the ``teams`` profiles per seed (tools/forecast_backtest.py too)."""
    from quota_constructs.advisor.workload import generate_workload, load_workload_csv

    if files:
        return [(path.name, 0, load_workload_csv(path)) for path in files]
    from quota_constructs.advisor.profiles import load_teams

    profiles = load_teams(teams)  # type: ignore[arg-type]
    return [
        (f"seed {seed}", seed, generate_workload(profiles, days=days, seed=seed)) for seed in seeds
    ]


def fitted_on_text(
    files: list[Path] | None, teams: Path | None, days: int, seeds: list[int], samples: int
) -> str:
    """What a calibration was fitted on, as it says with each forecast."""
    if files:
        return f"recorded {', '.join(p.name for p in files)}, {samples} samples"
    seeds_text = " ".join(str(seed) for seed in seeds)
    assert teams is not None
    return f"{teams.name}, generated, {days} days, seeds {seeds_text}, {samples} samples"
