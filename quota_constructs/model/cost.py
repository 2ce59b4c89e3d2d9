"""The one cost model: what an organisation's training cost and whom to charge (docs/cost.md).

* On-demand: every attempt that ran is billed per second, preempted attempts included; idle
  quota costs nothing.
* Reserved (a training plan): the up-front fee, spread evenly over the plan's window, is paid
  whether the capacity is used or not; plan hours nobody used are idle (waste). Usage of the
  plan's type inside its window runs on the plan, up to its instances; the rest is on-demand.
* Own / borrowed / lent (the allocation rule): at every moment a share's usage of a type up to
  its own capacity is own, the rest borrowed; borrowed instances are taken from the lending
  shares' unused capacity in proportion to it. Idle: a share's plan-backed capacity it neither
  used nor lent.
* Charge (``ChargeRule``): ``both`` (default) charges each share what it used (on-demand at its
  price, plan hours at the plan's rate) plus the idle plan hours of its own capacity; ``usage``
  splits each plan's cost by the plan hours used; ``capacity`` by the shares' capacity of the
  type. Charges always add up to the total cost.
* Separate fixed pools: the same teams without sharing, each on its own capacity; work done on
  borrowed plan capacity would be bought on-demand instead.

Pure: times are epoch (or simulated) seconds, records are :class:`Attempt`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from itertools import pairwise

from quota_constructs.model.organisation import Organisation
from quota_constructs.model.problems import Problem, QuotaConfigError, raise_if
from quota_constructs.model.training_plan import HOUR_S, TrainingPlanSpec

GRACE_EPSILON_S = 1e-3
"""How long before a calendar's edge its settings are read as those it ends (the grace rule)."""


class ChargeRule(Enum):
    """How a plan's cost is charged to the shares (on-demand cost always follows usage)."""

    BOTH = "both"
    USAGE = "usage"
    CAPACITY = "capacity"


CHARGE_RULES = {
    ChargeRule.BOTH: "each team pays what it ran (on-demand price, plan hours at the plan's "
    "rate) plus the idle plan hours of its own capacity",
    ChargeRule.USAGE: "each team pays what it ran; a plan's whole cost is split by the plan "
    "hours each team used",
    ChargeRule.CAPACITY: "each team pays its on-demand runs; a plan's whole cost is split by "
    "the teams' capacity of its type",
}


@dataclass(frozen=True)
class Price:
    """USD per instance-hour: on-demand, and a training plan's rate (default: on-demand)."""

    on_demand: float
    training_plan: float | None = None

    @property
    def plan_rate(self) -> float:
        return self.on_demand if self.training_plan is None else self.training_plan


class MissingPrice(QuotaConfigError):
    """An instance type that ran (or is reserved) has no price."""


def price_of(prices: Mapping[str, Price], instance_type: str, source: str = "--prices") -> Price:
    """The price of ``instance_type``; :class:`MissingPrice` naming the type otherwise."""
    if instance_type in prices:
        return prices[instance_type]
    known = ", ".join(sorted(prices)) or "none"
    raise MissingPrice(
        [
            Problem(
                source,
                instance_type,
                f"no price for instance type {instance_type} (prices given: {known})",
                f"add '{instance_type}: USD per instance-hour' to the prices file",
            )
        ]
    )


def price_problems(data: object, source: str = "") -> list[Problem]:
    """A prices document's problems: ``TYPE: USD`` or ``TYPE: {on_demand, training_plan}``.

    With ``source``, each path starts with it (``p.yaml: ml.g5.xlarge``); without, paths are
    the file's own (``ml.g5.xlarge``), for a loader that gives each problem its line."""

    def at(path: str) -> str:
        return f"{source}: {path}" if source else path

    if not isinstance(data, Mapping) or not data:
        return [
            Problem(
                source or "<root>",
                type(data).__name__,
                "a prices file maps instance types to USD per instance-hour",
                "write e.g. 'ml.g5.xlarge: 1.41'",
            )
        ]
    problems = []
    for itype, value in data.items():
        entries = value if isinstance(value, Mapping) else {"on_demand": value}
        for key, amount in entries.items():
            if key not in ("on_demand", "training_plan"):
                problems.append(
                    Problem(
                        at(f"{itype}.{key}"),
                        key,
                        "unknown key",
                        "use on_demand or training_plan",
                    )
                )
            elif isinstance(amount, bool) or not isinstance(amount, int | float) or amount < 0:
                problems.append(
                    Problem(
                        at(f"{itype}.{key}")
                        if key != "on_demand" or isinstance(value, Mapping)
                        else at(str(itype)),
                        amount,
                        "a price must be a number of USD per instance-hour, 0 or more",
                        "e.g. 1.41",
                    )
                )
        if isinstance(value, Mapping) and "on_demand" not in value:
            problems.append(
                Problem(
                    at(str(itype)),
                    dict(value),
                    "on_demand is missing",
                    "add on_demand: USD per instance-hour",
                )
            )
    return problems


def parse_prices(data: object, source: str) -> dict[str, Price]:
    """A prices document as :class:`Price` per type; :class:`QuotaConfigError` listing all,
    each path starting with ``source``."""
    raise_if(price_problems(data, source))
    return _prices(data)


def parse_prices_file(data: object, source: str) -> dict[str, Price]:
    """:func:`parse_prices` for a file loader: the paths are the file's own and ``source`` is
    the error's context, so that each problem can get its line."""
    raise_if(price_problems(data), context=source)
    return _prices(data)


def _prices(data: object) -> dict[str, Price]:
    assert isinstance(data, Mapping)
    prices = {}
    for itype, value in data.items():
        entry = value if isinstance(value, Mapping) else {"on_demand": value}
        plan = entry.get("training_plan")
        prices[str(itype)] = Price(float(entry["on_demand"]), None if plan is None else float(plan))
    return prices


@dataclass(frozen=True)
class Attempt:
    """One attempt that ran (held instances): billed from ``start_s`` to ``stop_s``."""

    share: str
    instance_type: str
    instance_count: int
    start_s: float
    stop_s: float
    preempted: bool = False
    kept_s: float = 0.0
    """Of a preempted attempt: run time its checkpoints kept (not lost)."""

    @property
    def lost_instance_hours(self) -> float:
        start, stop = self.lost_span
        return (stop - start) * self.instance_count / HOUR_S

    @property
    def lost_span(self) -> tuple[float, float]:
        """When the work thrown away ran: from the last checkpoint to the stop (empty unless
        preempted)."""
        if not self.preempted:
            return (self.stop_s, self.stop_s)
        return (min(self.start_s + self.kept_s, self.stop_s), max(self.stop_s, self.start_s))


@dataclass
class ShareCost:
    """One share and instance type over the period (instance-hours, USD)."""

    share: str
    instance_type: str
    own: float = 0.0
    borrowed: float = 0.0
    lent: float = 0.0
    lost: float = 0.0
    lost_on_plan: float = 0.0
    """Of :attr:`lost`: the instance-hours that ran on a training plan (the rest on demand)."""
    idle: float = 0.0
    """Plan-backed own capacity neither used nor lent (paid for: waste)."""
    unused: float = 0.0
    """Own capacity neither used nor lent, plan-backed or not (on demand it costs nothing)."""
    on_demand: float = 0.0
    plan: float = 0.0
    """Instance-hours run on a training plan."""
    cost_usd: float = 0.0
    """What it ran: on-demand hours at their price, plan hours at the plan's rate."""
    idle_usd: float = 0.0
    """Its idle plan hours at the plan's rate (on demand, idle costs nothing)."""
    lost_usd: float = 0.0
    """What its lost instance-hours cost (on demand at its price, on a plan at the plan's
    rate): part of :attr:`cost_usd`, paid for work that was thrown away."""
    charge_usd: float = 0.0
    borrowed_from: dict[str, float] = field(default_factory=dict)
    lent_to: dict[str, float] = field(default_factory=dict)


@dataclass
class PlanCost:
    """One training plan over the period."""

    name: str
    instance_type: str
    reserved: float
    """Instance-hours of the plan inside the period."""
    used: float
    cost_usd: float

    @property
    def idle(self) -> float:
        return max(self.reserved - self.used, 0.0)

    @property
    def utilisation(self) -> float:
        return self.used / self.reserved if self.reserved else 0.0


@dataclass(frozen=True)
class UsageSeries:
    """Per instance type: instances each share ran, and plan instances, from ``times[i]`` on."""

    times: list[float]
    by_share: dict[str, list[int]]
    plan: list[int]


@dataclass
class CostReport:
    """Per share and type, per plan, totals; the rule it was charged under."""

    start_s: float
    end_s: float
    rule: ChargeRule
    shares: list[ShareCost]
    plans: list[PlanCost]
    total_cost_usd: float
    fixed_pools_cost_usd: float
    series: dict[str, UsageSeries]

    @property
    def saving_usd(self) -> float:
        return self.fixed_pools_cost_usd - self.total_cost_usd


def _clip(attempts: Iterable[Attempt], start_s: float, end_s: float) -> list[Attempt]:
    """Attempts cut to ``[start_s, end_s]`` (those outside dropped); the work a cut attempt
    kept stays kept (its lost span is cut, not moved)."""
    out = []
    for a in attempts:
        lo, hi = max(a.start_s, start_s), min(a.stop_s, end_s)
        if hi > lo:
            kept = max(a.start_s + a.kept_s - lo, 0.0)
            out.append(
                Attempt(a.share, a.instance_type, a.instance_count, lo, hi, a.preempted, kept)
            )
    return out


def _plan_edges(plans: Sequence[TrainingPlanSpec], start_s: float, end_s: float) -> list[float]:
    return [t for p in plans for t in (p.start_s, p.end_s) if start_s < t < end_s]


def _calendar_edges(
    org: Organisation, start_s: float, end_s: float, offset_s: float
) -> list[float]:
    """Every calendar change inside ``(start_s, end_s)``, in the attempts' time (a share that
    lends in part of a segment lends in part of it only)."""
    if not org.calendars or end_s <= start_s:
        return []
    after = datetime.fromtimestamp(start_s + offset_s, UTC)
    until = datetime.fromtimestamp(end_s + offset_s, UTC)
    return [
        change.time.timestamp() - offset_s
        for share in org.queue.shares
        if share.name in org.calendars
        for change in org.calendars[share.name].changes(share, after, until)
    ]


class _TypeSweep:
    """Walks one instance type's usage from change to change, accumulating the rows."""

    def __init__(
        self,
        org: Organisation,
        itype: str,
        rows: dict[str, ShareCost],
        plans: Sequence[TrainingPlanSpec],
        calendar_offset_s: float = 0.0,
        grace: tuple[float, Sequence[float]] = (0.0, ()),
    ) -> None:
        self.itype = itype
        self.calendar_offset_s = calendar_offset_s
        self.grace_s, self.calendar_edges = grace
        self.org = org
        self.rows = rows
        self.plans = plans
        shares = org.queue.shares
        self.capacity = {s.name: s.limit(itype) for s in shares}
        self.lends = {s.name for s in shares if s.strategy.lends}
        self.used_on_plan: dict[str, float] = defaultdict(float)
        self.plan_borrowed = 0.0
        self.series = UsageSeries([], {name: [] for name in self.capacity}, [])

    def segment(
        self, t0: float, t1: float, usage: Mapping[str, int], lost: Mapping[str, int]
    ) -> None:
        """Usage (and, of it, ``lost``: instances whose work is thrown away) from t0 to t1."""
        hours = (t1 - t0) / HOUR_S
        reserved = sum(p.instance_count for p in self.plans if p.active_at(t0))
        total = sum(usage.values())
        self._sample(t0, usage, reserved)
        if hours <= 0:
            return
        on_plan = min(total, reserved) / total if total else 0.0
        own = {s: min(u, self.capacity.get(s, 0)) for s, u in usage.items()}
        borrowed = {s: u - own[s] for s, u in usage.items() if u > own[s]}
        lends = self._lenders(t0)
        spare = {
            s: c - own.get(s, 0)
            for s, c in self.capacity.items()
            if s in lends and c > own.get(s, 0)
        }
        for share, used in usage.items():
            row = self.rows[share]
            row.own += own[share] * hours
            row.plan += used * on_plan * hours
            row.on_demand += used * (1 - on_plan) * hours
        for share, count in lost.items():
            self.rows[share].lost_on_plan += count * on_plan * hours
        self._lend(borrowed, spare, hours, on_plan)
        self._idle(own, spare, borrowed, hours, plan_free=max(reserved - total, 0))

    def _lenders(self, t0: float) -> set[str]:
        """Shares that lend at ``t0``: by their calendars' settings in force then, if any."""
        if not self.org.calendars:
            return self.lends
        lenders = self._lending_at(t0)
        for edge in self.calendar_edges:  # a share that stopped lending within the grace
            if t0 - self.grace_s < edge <= t0:
                lenders |= self._lending_at(edge - GRACE_EPSILON_S)
        return lenders

    def _lending_at(self, t: float) -> set[str]:
        when = datetime.fromtimestamp(t + self.calendar_offset_s, UTC)
        return {s.name for s in self.org.shares_in_force(when) if s.strategy.lends}

    def _lend(
        self, borrowed: Mapping[str, int], spare: Mapping[str, int], hours: float, on_plan: float
    ) -> None:
        pool = sum(spare.values())
        for borrower, count in borrowed.items():
            self.rows[borrower].borrowed += count * hours
            self.plan_borrowed += count * hours * on_plan
            for lender, free in spare.items():
                hours_lent = count * hours * free / pool if pool else 0.0
                self.rows[borrower].borrowed_from[lender] = (
                    self.rows[borrower].borrowed_from.get(lender, 0.0) + hours_lent
                )
                self.rows[lender].lent += hours_lent
                self.rows[lender].lent_to[borrower] = (
                    self.rows[lender].lent_to.get(borrower, 0.0) + hours_lent
                )

    def _idle(
        self,
        own: Mapping[str, int],
        spare: Mapping[str, int],
        borrowed: Mapping[str, int],
        hours: float,
        *,
        plan_free: int,
    ) -> None:
        """Unused capacity; idle: the part of it the plans' free instances back (all of it
        when the plans back the whole capacity, less when some is on demand)."""
        pool = sum(spare.values())
        lent_now = min(sum(borrowed.values()), pool)
        left = {}
        for share, cap in self.capacity.items():
            lent = lent_now * spare.get(share, 0) / pool if pool else 0.0
            left[share] = max(cap - own.get(share, 0) - lent, 0.0) * hours
        unused = sum(left.values())
        backed = min(1.0, plan_free * hours / unused) if unused else 0.0
        for share, hours_left in left.items():
            self.rows[share].unused += hours_left
            self.rows[share].idle += hours_left * backed

    def _sample(self, t0: float, usage: Mapping[str, int], reserved: int) -> None:
        self.series.times.append(t0)
        for share, values in self.series.by_share.items():
            values.append(usage.get(share, 0))
        self.series.plan.append(reserved)


def _sweep(
    org: Organisation,
    itype: str,
    attempts: list[Attempt],
    rows: dict[str, ShareCost],
    start_s: float,
    end_s: float,
    calendar_offset_s: float = 0.0,
    calendar_edges: Sequence[float] = (),
    calendar_grace_s: float = 0.0,
) -> _TypeSweep:
    """``itype``'s usage swept from change to change; ``calendar_edges``: the calendars'
    changes in the attempts' time (the same for every type, found once by the caller)."""
    plans = org.plans_of(itype)
    grace = (calendar_grace_s, calendar_edges if calendar_grace_s else ())
    sweep = _TypeSweep(org, itype, rows, plans, calendar_offset_s, grace)
    changes: dict[float, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    lost_changes: dict[float, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for a in attempts:
        changes[a.start_s][a.share] += a.instance_count
        changes[a.stop_s][a.share] -= a.instance_count
        lost_from, lost_to = a.lost_span
        if lost_to > lost_from:
            lost_changes[lost_from][a.share] += a.instance_count
            lost_changes[lost_to][a.share] -= a.instance_count
    ends_of_grace = [e + calendar_grace_s for e in grace[1] if e + calendar_grace_s < end_s]
    for edge in (
        start_s,
        end_s,
        *_plan_edges(plans, start_s, end_s),
        *calendar_edges,
        *ends_of_grace,
    ):
        changes.setdefault(edge, defaultdict(int))
    for edge in lost_changes:
        changes.setdefault(edge, defaultdict(int))
    usage: dict[str, int] = defaultdict(int)
    lost: dict[str, int] = defaultdict(int)
    times = sorted(changes)
    for t0, t1 in pairwise(times):
        for share, delta in changes[t0].items():
            usage[share] += delta
        for share, delta in lost_changes.get(t0, {}).items():
            lost[share] += delta
        sweep.segment(
            t0, t1, {s: n for s, n in usage.items() if n}, {s: n for s, n in lost.items() if n}
        )
    return sweep


def cost_report(
    org: Organisation,
    attempts: Iterable[Attempt],
    prices: Mapping[str, Price],
    *,
    start_s: float,
    end_s: float,
    rule: ChargeRule = ChargeRule.BOTH,
    calendar_offset_s: float = 0.0,
    calendar_grace_s: float = 0.0,
) -> CostReport:
    """Cost and charge per share and instance type, and per plan, over ``[start_s, end_s]``.

    Every type that ran or is reserved needs a price (:class:`MissingPrice` names it). Share
    calendars are read at an attempt's time plus ``calendar_offset_s`` (a simulated bill: the
    simulator places calendars and plans at different epochs), and split the sweep at their
    changes, so a share lends exactly while its calendar says so and lent hours equal borrowed;
    ``calendar_grace_s``: how long after a share stops lending its borrowers may stay (the
    simulator's ``calendar_grace_s``), during which it still counts as their lender.
    """
    kept = _clip(attempts, start_s, end_s)
    types = sorted(
        {a.instance_type for a in kept}
        | {
            p.instance_type
            for p in org.training_plans
            if not p.by_arn and p.overlap_hours(start_s, end_s)
        }
    )
    for itype in types:
        price_of(prices, itype)
    rows: dict[tuple[str, str], ShareCost] = {}
    plans, series, fixed_extra = [], {}, 0.0
    calendar_edges = _calendar_edges(org, start_s, end_s, calendar_offset_s)
    for itype in types:
        names = [s.name for s in org.queue.shares] + sorted(
            {a.share for a in kept if a.instance_type == itype} - {s.name for s in org.queue.shares}
        )
        by_share = {n: rows.setdefault((n, itype), ShareCost(n, itype)) for n in names}
        of_type = [a for a in kept if a.instance_type == itype]
        for a in of_type:
            by_share[a.share].lost += a.lost_instance_hours
        sweep = _sweep(
            org,
            itype,
            of_type,
            by_share,
            start_s,
            end_s,
            calendar_offset_s,
            calendar_edges,
            calendar_grace_s,
        )
        price = prices[itype]
        type_plans = [_plan_cost(p, sweep, price, start_s, end_s) for p in org.plans_of(itype)]
        plans += [p for p in type_plans if p.reserved]
        _charge(list(by_share.values()), type_plans, price, sweep.capacity, rule)
        fixed_extra += sweep.plan_borrowed * price.on_demand
        series[itype] = sweep.series
    share_rows = [
        r
        for r in rows.values()
        if r.own
        or r.borrowed
        or r.lent
        or r.idle
        or r.charge_usd
        or (
            r.share in {s.name for s in org.queue.shares}
            and r.instance_type in org.queue.share(r.share).capacity
        )
    ]
    total = sum(r.on_demand * prices[r.instance_type].on_demand for r in rows.values()) + sum(
        p.cost_usd for p in plans
    )
    return CostReport(start_s, end_s, rule, share_rows, plans, total, total + fixed_extra, series)


def _plan_cost(
    plan: TrainingPlanSpec, sweep: _TypeSweep, price: Price, start_s: float, end_s: float
) -> PlanCost:
    """The plan's share of the type's plan usage (split by instances when plans overlap)."""
    reserved = plan.overlap_hours(start_s, end_s) * plan.instance_count
    used = 0.0
    series = sweep.series
    ends = [*series.times[1:], end_s]
    for i, (t0, t1) in enumerate(zip(series.times, ends, strict=True)):
        if plan.active_at(t0) and series.plan[i]:
            running = sum(v[i] for v in series.by_share.values())
            used += (
                min(running, series.plan[i])
                * plan.instance_count
                / series.plan[i]
                * (t1 - t0)
                / HOUR_S
            )
    return PlanCost(plan.name, plan.instance_type, reserved, used, reserved * price.plan_rate)


def _charge(
    rows: list[ShareCost],
    plans: list[PlanCost],
    price: Price,
    capacity: Mapping[str, int],
    rule: ChargeRule,
) -> None:
    """Fill each row's cost and charge for one instance type under ``rule``."""
    plan_cost = sum(p.cost_usd for p in plans)
    plan_used = sum(r.plan for r in rows)
    idle = sum(r.idle for r in rows)
    held = sum(capacity.values())
    unallocated = max(sum(p.reserved for p in plans) - plan_used - idle, 0.0) * price.plan_rate
    for row in rows:
        on_demand = row.on_demand * price.on_demand
        row.cost_usd = on_demand + row.plan * price.plan_rate
        row.lost_usd = (
            max(row.lost - row.lost_on_plan, 0.0) * price.on_demand
            + row.lost_on_plan * price.plan_rate
        )
        row.idle_usd = row.idle * price.plan_rate
        by_capacity = capacity.get(row.share, 0) / held if held else 0.0
        if rule is ChargeRule.BOTH:
            row.charge_usd = row.cost_usd + row.idle * price.plan_rate + unallocated * by_capacity
        elif rule is ChargeRule.USAGE:
            split = row.plan / plan_used if plan_used else by_capacity
            row.charge_usd = on_demand + plan_cost * split
        else:
            row.charge_usd = on_demand + plan_cost * by_capacity
