"""Reservation sizing: how many instances of each type to reserve (a SageMaker training plan).

For every type a plan can reserve (the model's :data:`PLAN_INSTANCE_TYPES`) that the shares
hold, each plan size from 0 to the shares' capacity of the type is priced on the same seeded
weeks as every verdict (:mod:`advisor.weeks`): the plan backs that many instances inside its
window, the rest of the capacity (and all of it outside the window) is on demand, so the type's
capacity, hence the schedule, is the same for every size (the model's ``mixed_capacity_at``):
each week is simulated once. In the plan's last ``plan_stop_before_end_s`` SageMaker stops its
instances; a run stopped there is not lost: it runs again on demand (:func:`plan_end_attempts`),
billed as such (the stopped attempt on the plan, what was left of it and the work its
checkpoints did not keep on demand) and judged as such (on demand it runs as in the schedule, so
its team's verdicts are those of 0 reserved): no plan is excluded by its own end. Each week of
each size is priced by the one cost model (:func:`model.cost.cost_report`); a size's expected
total is the mean over the weeks, next to the worst week. A size *keeps the targets* when it
meets every target all on demand (0 reserved) meets. The cheapest size by expected total that
keeps them wins, fewer instances on a tie; a target missed on demand is the capacity's or the
settings' (``--simulate`` sizes those), not the plan's."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from quota_constructs.advisor.billing import attempts_from_jobs
from quota_constructs.advisor.profiles import TeamsFile
from quota_constructs.advisor.simulate import (
    SimulationOptions,
    on_simulated_clocks,
)
from quota_constructs.advisor.targets import (
    TargetCheck,
    check_targets,
    figure_text,
    requirement_text,
    weekly_figures,
)
from quota_constructs.advisor.weeks import simulate_weeks
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.model import (
    SIMULATION_START,
    Organisation,
    Problem,
    QuotaConfigError,
    jobs_to_stop,
    utc_text,
)
from quota_constructs.model.cost import Attempt, Price, cost_report, price_of
from quota_constructs.model.training_plan import HOUR_S, PLAN_INSTANCE_TYPES, TrainingPlanSpec
from quota_constructs.scheduling import Job

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
class WeekCost:
    """One plan size's use and cost in one simulated week (instance-hours, USD)."""

    reserved_hours: float
    """Plan instance-hours inside the simulated window."""
    plan_hours: float
    """Instance-hours the teams ran on the plan."""
    on_demand_hours: float
    reserved_usd: float
    on_demand_usd: float
    reruns: int = 0
    """Runs the plan's stop ended that ran again on demand."""

    @property
    def total_usd(self) -> float:
        return self.reserved_usd + self.on_demand_usd


@dataclass(frozen=True)
class Candidate:
    """One plan size of one type over the weeks: its use, cost and the teams' targets.

    Hours and USD are the mean per week; :attr:`worst_total_usd` the dearest week."""

    instances: int
    weeks: tuple[WeekCost, ...]
    checks: tuple[TargetCheck, ...]
    on_demand_price: float

    def _mean(self, value: Callable[[WeekCost], float]) -> float:
        return math.fsum(value(w) for w in self.weeks) / len(self.weeks)

    @property
    def reserved_hours(self) -> float:
        return self._mean(lambda w: w.reserved_hours)

    @property
    def plan_hours(self) -> float:
        return self._mean(lambda w: w.plan_hours)

    @property
    def on_demand_hours(self) -> float:
        return self._mean(lambda w: w.on_demand_hours)

    @property
    def reserved_usd(self) -> float:
        return self._mean(lambda w: w.reserved_usd)

    @property
    def on_demand_usd(self) -> float:
        return self._mean(lambda w: w.on_demand_usd)

    @property
    def all_on_demand_usd(self) -> float:
        """The same work (this size's attempts of the type) all at the on-demand price."""
        return (self.plan_hours + self.on_demand_hours) * self.on_demand_price

    @property
    def reruns(self) -> int:
        """Runs stopped by the plan's end that ran again on demand, over all the weeks."""
        return sum(w.reruns for w in self.weeks)

    @property
    def missed(self) -> tuple[TargetCheck, ...]:
        return tuple(c for c in self.checks if c.missed)

    @property
    def idle_hours(self) -> float:
        return max(self.reserved_hours - self.plan_hours, 0.0)

    @property
    def utilisation(self) -> float:
        reserved = math.fsum(w.reserved_hours for w in self.weeks)
        return math.fsum(w.plan_hours for w in self.weeks) / reserved if reserved else 0.0

    @property
    def total_usd(self) -> float:
        """The expected total: the mean over the weeks of plan fee plus on demand."""
        return self._mean(lambda w: w.total_usd)

    @property
    def worst_total_usd(self) -> float:
        return max(w.total_usd for w in self.weeks)

    @property
    def saving_usd(self) -> float:
        return self.all_on_demand_usd - self.total_usd

    def keeps(self, on_demand: Candidate) -> bool:
        """Whether it meets every target ``on_demand`` (0 reserved) meets."""
        met = {(c.team, c.target) for c in self.checks if c.met}
        return all((c.team, c.target) in met for c in on_demand.checks if c.met)


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
    """The cheapest (expected total) that keeps the targets 0 reserved meets; ``None``: none."""
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
    workloads: Sequence[Sequence[WorkloadJob]],
    prices: Mapping[str, Price],
    *,
    options: SimulationOptions,
    days: int,
    window: ReserveWindow | None = None,
) -> list[Reservation]:
    """Each reservable type's candidates, 0 to the shares' capacity of it, over the weeks of
    ``workloads`` (see module).

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
    results = simulate_weeks(org, workloads, options)
    weeks = weekly_figures(results)
    checks = check_targets(teams, weeks, days=days)
    search = _Search(org, tuple(r.jobs for r in results), checks, options, window)
    capacity = org.queue.service_environment_capacity()
    return [search.size(t, capacity[t], priced[t]) for t in types]


@dataclass(frozen=True)
class _Search:
    """What every candidate shares: the organisation, each week's simulated jobs (the same
    schedule for every size: a plan changes which instances run a job, not when, but for its
    stop), the verdicts on them and the windows."""

    org: Organisation
    weeks: tuple[tuple[Job, ...], ...]
    checks: tuple[TargetCheck, ...]
    options: SimulationOptions
    window: ReserveWindow

    def size(self, itype: str, capacity: int, price: Price) -> Reservation:
        candidates = tuple(self.candidate(itype, k, capacity, price) for k in range(capacity + 1))
        on_demand = candidates[0]
        meeting = [c for c in candidates if c.keeps(on_demand)]
        best = min(meeting, key=lambda c: (round(c.total_usd, 6), c.instances), default=None)
        draft = Reservation(itype, capacity, price, self.window, candidates, best, ())
        return replace(draft, reasons=tuple(_reasons(draft)))

    def candidate(self, itype: str, reserved: int, capacity: int, price: Price) -> Candidate:
        """Every week priced with a plan of ``reserved`` instances, the rest on demand."""
        plans = [self.window.plan(itype, reserved)] if reserved else []
        others = tuple(p for p in self.org.training_plans if p.instance_type != itype)
        trial = replace(self.org, training_plans=(*others, *plans))
        weeks = tuple(
            self.week(trial, jobs, itype, price, capacity - reserved if plans else None)
            for jobs in self.weeks
        )
        return Candidate(reserved, weeks, self.checks, price.on_demand)

    def week(
        self,
        trial: Organisation,
        jobs: Sequence[Job],
        itype: str,
        price: Price,
        after_stop: int | None,
    ) -> WeekCost:
        """One week's cost with the plan of ``trial``: the runs its stop ends (``after_stop``:
        the type's instances left while it stops; ``None``: no plan) run again on demand."""
        assert self.options.window_s is not None
        end = EPOCH_S + self.options.window_s
        stop = self.options.plan_stop_before_end_s
        billed_from = self.options.unbilled_startup_s
        if after_stop is None or stop <= 0:
            attempts = attempts_from_jobs(jobs, offset_s=EPOCH_S, billed_from_s=billed_from)
            again, reruns = 0.0, 0
        else:
            at = EPOCH_S + max(
                self.window.start_hours * HOUR_S,
                (self.window.start_hours + self.window.hours) * HOUR_S - stop,
            )
            attempts, again, reruns = plan_end_attempts(
                jobs, itype, at, after_stop, end, billed_from
            )
        report = cost_report(
            on_simulated_clocks(trial),
            [a for a in attempts if a.instance_type == itype],
            {itype: price},
            start_s=EPOCH_S,
            end_s=end,
        )
        names = {p.name for p in trial.training_plans if p.instance_type == itype}
        plan_costs = [p for p in report.plans if p.name in names]
        rows = [r for r in report.shares if r.instance_type == itype]
        on_demand = sum(r.on_demand for r in rows) + again
        return WeekCost(
            reserved_hours=math.fsum(p.reserved for p in plan_costs),
            plan_hours=sum(r.plan for r in rows),
            on_demand_hours=on_demand,
            reserved_usd=math.fsum(p.cost_usd for p in plan_costs),
            on_demand_usd=on_demand * price.on_demand,
            reruns=reruns,
        )


def plan_end_attempts(
    jobs: Sequence[Job],
    itype: str,
    at: float,
    after_stop: int,
    end: float,
    billed_from_s: float | None = None,
) -> tuple[list[Attempt], float, int]:
    """The attempts of ``jobs`` (epoch seconds) billed when a plan of ``itype`` stops at
    ``at`` leaving ``after_stop`` instances: the runs it stops (the model's
    :func:`jobs_to_stop`: the latest started first until the rest fit) end there, their
    checkpoints kept; each runs again on demand for what was left of it before ``end`` plus the
    work lost. Returns the attempts, the instance-hours run again, and how many runs."""
    attempts: list[Attempt] = []
    intervals: list[float | None] = []
    for job in jobs:
        for attempt in attempts_from_jobs([job], offset_s=EPOCH_S, billed_from_s=billed_from_s):
            attempts.append(attempt)
            intervals.append(job.request.checkpoint_interval_s)
    running = [
        (str(i), a.instance_count, a.start_s)
        for i, a in enumerate(attempts)
        if a.instance_type == itype and a.start_s <= at < a.stop_s
    ]
    again = 0.0
    stopped = jobs_to_stop(running, after_stop)
    for key in stopped:
        index = int(key)
        attempt, interval = attempts[index], intervals[index]
        ran = at - attempt.start_s
        kept = math.floor(ran / interval) * interval if interval else 0.0
        left = max(min(attempt.stop_s, end) - at, 0.0)
        again += attempt.instance_count * (left + ran - kept) / HOUR_S
        attempts[index] = replace(attempt, stop_s=at, preempted=True, kept_s=kept)
    return attempts, again, len(stopped)


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
