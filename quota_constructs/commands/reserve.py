"""``quota recommend TEAMS --prices FILE --reserve``: the training plan to buy, per type.

The search is :mod:`quota_constructs.advisor.reserve`; this module prints it (table or JSON).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer
from rich.console import Console

from quota_constructs.advisor.reserve import EPOCH_S, Candidate, Reservation
from quota_constructs.advisor.targets import check_json
from quota_constructs.commands._common import (
    ExitCode,
    data_table,
    print_errors,
)
from quota_constructs.model import utc_text
from quota_constructs.model.training_plan import HOUR_S


def _r(value: float) -> float:
    return round(value, 6)


def candidate_data(c: Candidate, on_demand: Candidate) -> dict[str, Any]:
    """One plan size in ``--json`` (instance-hours and USD: the mean per simulated week)."""
    return {
        "instances": c.instances,
        "weeks": len(c.weeks),
        "expectedTotalUsd": _r(c.total_usd),
        "worstTotalUsd": _r(c.worst_total_usd),
        "reruns": c.reruns,
        "targetsKept": c.keeps(on_demand),
        "utilisation": _r(c.utilisation),
        "reservedInstanceHours": _r(c.reserved_hours),
        "planInstanceHours": _r(c.plan_hours),
        "idleInstanceHours": _r(c.idle_hours),
        "reservedUsd": _r(c.reserved_usd),
        "onDemandInstanceHours": _r(c.on_demand_hours),
        "onDemandUsd": _r(c.on_demand_usd),
        "totalUsd": _r(c.total_usd),
        "allOnDemandUsd": _r(c.all_on_demand_usd),
        "savingUsd": _r(c.saving_usd),
        "targetsMet": not c.missed,
        "missed": [{"team": m.team, **check_json(m)} for m in c.missed],
    }


def reservation_data(r: Reservation, plan_stop_s: float) -> dict[str, Any]:
    """One instance type's search in ``--json``."""
    start = EPOCH_S + r.window.start_hours * HOUR_S
    return {
        "instanceType": r.instance_type,
        "capacity": r.capacity,
        "onDemandUsdPerHour": r.price.on_demand,
        "trainingPlanUsdPerHour": r.price.plan_rate,
        "breakEvenUtilisation": _r(r.break_even),
        "window": {
            "start": utc_text(start),
            "startHours": r.window.start_hours,
            "durationHours": r.window.hours,
            "planStopBeforeEndS": plan_stop_s,
        },
        "recommendedInstances": None if r.best is None else r.best.instances,
        "reasons": list(r.reasons),
        "candidates": [candidate_data(c, r.candidates[0]) for c in r.candidates],
    }


def size_data(r: Reservation, c: Candidate) -> dict[str, Any]:
    """One size of the contract's ``reserve.sizes``."""
    return {
        "instanceType": r.instance_type,
        "instances": c.instances,
        "expectedTotalUsd": _r(c.total_usd),
        "worstTotalUsd": _r(c.worst_total_usd),
        "planUtilisation": _r(c.utilisation),
        "targetsKept": c.keeps(r.candidates[0]),
    }


def reserve_data(
    organisation: str,
    reservations: Sequence[Reservation],
    not_reservable: Sequence[str],
    plan_stop_s: float,
) -> dict[str, Any]:
    """The whole answer for ``--json`` (docs/advisor.md, "Sizing a reservation")."""
    return {
        "organisation": organisation,
        "simulationStart": utc_text(EPOCH_S),
        "reservations": [reservation_data(r, plan_stop_s) for r in reservations],
        "notReservable": list(not_reservable),
        "reserve": {
            "recommended": {
                r.instance_type: r.best.instances for r in reservations if r.best is not None
            },
            "sizes": [size_data(r, c) for r in reservations for c in r.candidates],
        },
    }


def print_reservations(
    reservations: Sequence[Reservation], not_reservable: Sequence[str], console: Console
) -> None:
    """Per type: a table of the candidates (the recommended one marked), then the reasons."""
    for r in reservations:
        start = utc_text(EPOCH_S + r.window.start_hours * HOUR_S)
        table = data_table(
            "reserved",
            "plan use",
            "idle h",
            "plan USD",
            "on-demand USD",
            "total USD",
            "all on-demand USD",
            "worst week USD",
            "targets",
            title=f"Reserving {r.instance_type} for {r.window.hours} h from {start} "
            f"(mean of {len(r.candidates[0].weeks)} weeks)",
        )
        for c in r.candidates:
            mark = " <- recommended" if c is r.best else ""
            table.add_row(
                f"{c.instances}{mark}",
                f"{c.utilisation:.0%}" if c.instances else "-",
                f"{c.idle_hours:,.1f}",
                f"{c.reserved_usd:,.2f}",
                f"{c.on_demand_usd:,.2f}",
                f"{c.total_usd:,.2f}",
                f"{c.all_on_demand_usd:,.2f}",
                f"{c.worst_total_usd:,.2f}",
                _targets_cell(c, r.candidates[0]),
            )
        console.print(table)
        for reason in r.reasons:
            console.print(f"  - {reason}")
    for itype in not_reservable:
        console.print(f"{itype}: not reservable by a training plan (on demand only)")


def _targets_cell(c: Candidate, on_demand: Candidate) -> str:
    kept = "kept" if c.keeps(on_demand) else "not kept"
    return f"{kept}, {len(c.missed)} missed" if c.missed else kept


def exit_on_unmet(reservations: Sequence[Reservation]) -> None:
    """Exit 1 when a type has no size to recommend or its recommended size misses a target."""
    lines = []
    for r in reservations:
        if r.best is None:
            lines.append(f"{r.instance_type}: every plan size misses a target on demand meets")
        elif r.best.missed:
            teams = sorted({m.team for m in r.best.missed})
            lines.append(
                f"{r.instance_type}: {len(r.best.missed)} target(s) missed with "
                f"{r.best.instances} reserved, teams: {', '.join(teams)}"
            )
    if lines:
        print_errors(lines)
        raise typer.Exit(ExitCode.FAILED)
