"""Reservation sizing: how many instances of each type to reserve (a SageMaker training plan).

For every type a plan can reserve (the model's :data:`PLAN_INSTANCE_TYPES`) that the shares
hold, each plan size from 0 to the shares' capacity of the type is simulated on the same
workload: the plan backs that many instances inside its window, the rest of the capacity (and
all of it outside the window) is on demand; in the plan's last ``plan_stop_before_end_s``
SageMaker stops its instances (the model's ``mixed_capacity_at``). Each candidate is priced by
the one cost model (:func:`model.cost.cost_report`) and its teams' targets are checked
(:mod:`advisor.targets`). The cheapest candidate that misses no target all on demand (0
reserved) meets wins, fewer instances on a tie: a target missed on demand too is the capacity's
or the settings' (``--simulate`` sizes those), not the plan's."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from quota_constructs.advisor.billing import attempts_from_jobs
from quota_constructs.advisor.profiles import TeamsFile
from quota_constructs.advisor.simulate import (
    SIMULATION_START,
    SimulationOptions,
    on_simulated_clocks,
    simulate,
)
from quota_constructs.advisor.targets import (
    TargetCheck,
    check_targets,
    figure_text,
    requirement_text,
    team_figures,
)
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.model import Organisation, Problem, QuotaConfigError, utc_text
from quota_constructs.model.cost import Price, cost_report, price_of
from quota_constructs.model.training_plan import HOUR_S, PLAN_INSTANCE_TYPES, TrainingPlanSpec

EPOCH_S = SIMULATION_START.timestamp()
"""UTC epoch of simulated time 0 (plans' windows are placed from it)."""


@dataclass(frozen=True)
class ReserveWindow:
    """The plan's window in simulated hours: from ``start_hours`` for ``hours``."""

    start_hours: int
    hours: int

    def plan(self, instance_type: str, instances: int) -> TrainingPlanSpec:
        start = utc_text(EPOCH_S + self.start_hours * HOUR_S)
        name = f"reserve-{instance_type.removeprefix('ml.').replace('.', '-')}"
        return TrainingPlanSpec(name, instance_type, instances, start, self.hours)

    def problems(self, window_hours: float) -> list[Problem]:
        """The window's problems (the model's plan rules), as the options name them."""
        flags = {"start": "--reserve-start-hours", "duration_hours": "--reserve-hours"}
        problems = [
            replace(p, path=flags.get(p.path.rpartition(".")[2], p.path))
            for p in self.plan(PLAN_INSTANCE_TYPES[0], 1).problems("plan")
        ]
        if not 0 <= self.start_hours < window_hours:
            problems.append(
                Problem(
                    "--reserve-start-hours",
                    self.start_hours,
                    f"the plan must start inside the simulated {window_hours:g} hours",
                    f"use 0 to {math.ceil(window_hours) - 1}",
                )
            )
        return problems


@dataclass(frozen=True)
class Candidate:
    """One plan size of one type: its simulated use, cost and the teams' targets."""

    instances: int
    reserved_hours: float
    """Plan instance-hours inside the simulated window."""
    plan_hours: float
    """Instance-hours the teams ran on the plan."""
    on_demand_hours: float
    reserved_usd: float
    on_demand_usd: float
    all_on_demand_usd: float
    """The same work (this candidate's attempts of the type) all at the on-demand price."""
    missed: tuple[TargetCheck, ...]

    @property
    def idle_hours(self) -> float:
        return max(self.reserved_hours - self.plan_hours, 0.0)

    @property
    def utilisation(self) -> float:
        return self.plan_hours / self.reserved_hours if self.reserved_hours else 0.0

    @property
    def total_usd(self) -> float:
        return self.reserved_usd + self.on_demand_usd

    @property
    def saving_usd(self) -> float:
        return self.all_on_demand_usd - self.total_usd


@dataclass(frozen=True)
class Reservation:
    """The candidates of one instance type and the one to buy (``None``: none meets the
    targets)."""

    instance_type: str
    capacity: int
    price: Price
    window: ReserveWindow
    candidates: tuple[Candidate, ...]
    best: Candidate | None
    """The cheapest that misses no target 0 reserved meets; ``None``: none (the plan's stop
    before its end can cost a target)."""
    reasons: tuple[str, ...]

    @property
    def break_even(self) -> float:
        """Plan utilisation above which reserving costs less than on demand."""
        return self.price.plan_rate / self.price.on_demand if self.price.on_demand else math.inf


def reserve_prices(prices: Mapping[str, Price], types: Sequence[str]) -> dict[str, Price]:
    """Each type's price, with a training-plan rate; a problem naming every type without."""
    problems = []
    for itype in types:
        if price_of(prices, itype).training_plan is None:
            problems.append(
                Problem(
                    f"--prices: {itype}",
                    prices[itype].on_demand,
                    f"no training_plan price for {itype}: reserving it cannot be priced",
                    f"write '{itype}: {{on_demand: USD, training_plan: USD}}' (USD per "
                    "instance-hour; the plan's up-front fee over its hours)",
                )
            )
    if problems:
        raise QuotaConfigError(problems)
    return {t: prices[t] for t in types}


def reservable_types(org: Organisation) -> tuple[list[str], list[str]]:
    """The shares' types a plan can reserve, and those it cannot (on demand only)."""
    held = sorted(org.queue.service_environment_capacity())
    return [t for t in held if t in PLAN_INSTANCE_TYPES], [
        t for t in held if t not in PLAN_INSTANCE_TYPES
    ]


def size_reservations(
    org: Organisation,
    teams: TeamsFile,
    jobs: Sequence[WorkloadJob],
    prices: Mapping[str, Price],
    *,
    options: SimulationOptions,
    days: int,
    window: ReserveWindow | None = None,
) -> list[Reservation]:
    """Each reservable type's candidates, 0 to the shares' capacity of it (see module).

    ``options.window_s`` is the simulated window (default ``days`` days); ``window`` the plan's
    (default: all of it). Raises :class:`QuotaConfigError` when no type is reservable, a
    price or training-plan rate is missing, or the window breaks the plan rules.
    """
    options = replace(options, window_s=options.window_s or days * 86400.0, plan_epoch_s=EPOCH_S)
    assert options.window_s is not None
    span = options.window_s / HOUR_S
    window = window or ReserveWindow(0, math.ceil(span))
    types, other = reservable_types(org)
    problems = window.problems(span)
    if not types:
        problems.append(
            Problem(
                "teams",
                ", ".join(other),
                "no instance type of the teams can be reserved by a SageMaker training plan",
                f"plans reserve {', '.join(PLAN_INSTANCE_TYPES)}",
            )
        )
    if problems:
        raise QuotaConfigError(problems)
    priced = reserve_prices(prices, types)
    search = _Search(org, teams, tuple(jobs), options, days, window)
    capacity = org.queue.service_environment_capacity()
    return [search.size(t, capacity[t], priced[t]) for t in types]


@dataclass(frozen=True)
class _Search:
    """What every candidate shares: the organisation, profiles, workload and windows."""

    org: Organisation
    teams: TeamsFile
    jobs: tuple[WorkloadJob, ...]
    options: SimulationOptions
    days: int
    window: ReserveWindow

    def size(self, itype: str, capacity: int, price: Price) -> Reservation:
        candidates = tuple(self.candidate(itype, k, capacity, price) for k in range(capacity + 1))
        on_demand = _keys(candidates[0].missed)
        meeting = [c for c in candidates if _keys(c.missed) <= on_demand]
        best = min(meeting, key=lambda c: (round(c.total_usd, 6), c.instances), default=None)
        draft = Reservation(itype, capacity, price, self.window, candidates, best, ())
        return replace(draft, reasons=tuple(_reasons(draft)))

    def candidate(self, itype: str, reserved: int, capacity: int, price: Price) -> Candidate:
        """Simulate with a plan of ``reserved`` instances, the rest on demand; price it."""
        plans = [self.window.plan(itype, reserved)] if reserved else []
        others = tuple(p for p in self.org.training_plans if p.instance_type != itype)
        trial = replace(self.org, training_plans=(*others, *plans))
        sim = replace(self.options, on_demand_with_plans=((itype, capacity),))
        result = simulate(trial, self.jobs, options=sim, baseline=math.nan)
        checks = check_targets(self.teams, team_figures(result), days=self.days)
        billed_from = sim.unbilled_startup_s
        attempts = [
            a
            for a in attempts_from_jobs(result.jobs, offset_s=EPOCH_S, billed_from_s=billed_from)
            if a.instance_type == itype
        ]
        assert sim.window_s is not None
        report = cost_report(
            on_simulated_clocks(trial),
            attempts,
            {itype: price},
            start_s=EPOCH_S,
            end_s=EPOCH_S + sim.window_s,
        )
        plan_costs = [p for p in report.plans if plans and p.name == plans[0].name]
        rows = [r for r in report.shares if r.instance_type == itype]
        on_plan = sum(r.plan for r in rows)
        on_demand = sum(r.on_demand for r in rows)
        return Candidate(
            instances=reserved,
            reserved_hours=math.fsum(p.reserved for p in plan_costs),
            plan_hours=on_plan,
            on_demand_hours=on_demand,
            reserved_usd=math.fsum(p.cost_usd for p in plan_costs),
            on_demand_usd=on_demand * price.on_demand,
            all_on_demand_usd=(on_plan + on_demand) * price.on_demand,
            missed=tuple(c for c in checks if c.missed),
        )


def _keys(checks: Sequence[TargetCheck]) -> set[tuple[str, str]]:
    return {(c.team, c.target) for c in checks}


def _misses(checks: Sequence[TargetCheck]) -> str:
    return "; ".join(f"{m.team} {requirement_text(m)}: {figure_text(m)}" for m in checks)


def _usd(value: float) -> str:
    return f"{value:,.2f} USD"


def _reasons(r: Reservation) -> list[str]:
    """Why the best candidate: its cost against on demand, the break-even, the next size up
    (its extra instance's use), and what the candidates that miss a target miss."""
    rates = (
        f"training plan {r.price.plan_rate:,.2f} / on demand {r.price.on_demand:,.2f} USD per "
        f"instance-hour: break-even at {r.break_even:.0%} plan utilisation"
    )
    reasons = [rates]
    by_size = {c.instances: c for c in r.candidates}
    if r.best is None:
        reasons.append(f"every plan size from 1 to {r.capacity} misses a target on demand meets")
    elif r.best.instances == 0:
        first = by_size.get(1)
        used = f" (1 instance would be used {first.utilisation:.0%})" if first else ""
        reasons.append(
            f"reserve no {r.instance_type}: on demand costs {_usd(r.best.total_usd)}{used}"
        )
    else:
        best = r.best
        reasons.append(
            f"reserve {best.instances} x {r.instance_type} for {r.window.hours} h: "
            f"{_usd(best.total_usd)} ({_usd(best.reserved_usd)} plan + "
            f"{_usd(best.on_demand_usd)} on demand) against {_usd(best.all_on_demand_usd)} all "
            f"on demand, saves {_usd(best.saving_usd)}; the plan is used {best.utilisation:.0%}"
        )
    if r.best is not None and r.best.instances + 1 in by_size:
        reasons.append(_next_size(r, r.best, by_size[r.best.instances + 1]))
    base = r.candidates[0].missed
    if base:
        reasons.append(
            f"missed on demand too (the capacity's or the settings', not the plan's; "
            f"quota recommend --simulate sizes them): {_misses(base)}"
        )
    for c in r.candidates[1:]:
        extra = [m for m in c.missed if (m.team, m.target) not in _keys(base)]
        if extra:
            reasons.append(f"{c.instances} reserved also misses {_misses(extra)}")
    return reasons


def _next_size(r: Reservation, best: Candidate, bigger: Candidate) -> str:
    """Why not one instance more: what the extra instance would be used, what it adds."""
    extra = bigger.reserved_hours - best.reserved_hours
    used = (bigger.plan_hours - best.plan_hours) / extra if extra else 0.0
    return (
        f"{bigger.instances} reserved: the extra instance would be used {used:.0%} "
        f"(break-even {r.break_even:.0%}) and costs {_usd(bigger.total_usd)} in all"
    )
