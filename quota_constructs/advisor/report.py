"""Advisor figures: matplotlib plots of simulations, searches and bills (Agg), durations as text.

Tables and JSON of the same results are the command's output: ``commands/_reports.py``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quota_constructs.advisor.optimize import (
    Evaluation,
    SearchResult,
    TargetCheck,
    TeamFigures,
)
from quota_constructs.advisor.simulate import HOUR_S, SimulationResult
from quota_constructs.advisor.workload import DAY_S
from quota_constructs.model.cost import CostReport, UsageSeries

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def legend_label(text: str) -> str:
    """``text`` as a legend shows it: matplotlib hides labels starting with ``_``, so such a
    label (a share named ``_x``) is led by a zero-width space."""
    return "\u200b" + text if text.startswith("_") else text


def duration_text(seconds: float) -> str:
    """Short human duration: 45s, 12m, 3.5h, 2.1d."""
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < HOUR_S:
        return f"{seconds / 60:.0f}m"
    if seconds < 48 * HOUR_S:
        return f"{seconds / HOUR_S:.1f}h"
    return f"{seconds / 86400:.1f}d"


# --- plots (matplotlib's Agg canvas, no pyplot state) ------------------------------------------

DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
WAIT_LINTHRESH_MIN = 1.0
"""Waits below one minute are drawn on a linear scale (symlog), so a zero wait sits at 0."""
LEGEND_OUTSIDE = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": "x-small"}


def plot_results(
    results: Sequence[SimulationResult],
    labels: Sequence[str],
    path: Path,
    costs: Mapping[str, CostReport] | None = None,
) -> None:
    """Write :func:`usage_figure` as a PNG."""
    usage_figure(results, labels, costs).savefig(path, dpi=110, bbox_inches="tight")


def usage_figure(
    results: Sequence[SimulationResult],
    labels: Sequence[str],
    costs: Mapping[str, CostReport] | None = None,
) -> Figure:
    """One row per configuration, one panel per instance type, then the wait distributions;
    with ``costs`` (prices given), a last row of the money per team (:func:`_money_axes`).

    Usage panels: instances in use per share, stacked (borrowed hatched), the service
    environment's capacity (solid black), each borrowing share's most usable instances (dashed),
    preemptions marked by rule, days on the time axis. Legends sit right of the panels.
    """
    types = sorted({t for r in results for t in r.timeline.capacity})
    rows = len(results) + 1 + (1 if costs else 0)
    fig = _agg_figure((6.5 * len(types) + 3, 3.2 * rows))
    grid = fig.add_gridspec(rows, len(types))
    for row, (result, label) in enumerate(zip(results, labels, strict=True)):
        for col, itype in enumerate(types):
            _usage_axes(fig.add_subplot(grid[row, col]), result, label, itype)
    _wait_axes(fig.add_subplot(grid[len(results), :]), results, labels)
    if costs:
        _money_axes(fig.add_subplot(grid[-1, :]), costs)
    fig.set_layout_engine("constrained")
    return fig


def team_money(report: CostReport) -> dict[str, tuple[float, float]]:
    """Per team (share): (what it ran, USD; what it is charged, USD), over all its types."""
    money: dict[str, tuple[float, float]] = {}
    for row in report.shares:
        cost, charge = money.get(row.share, (0.0, 0.0))
        money[row.share] = (cost + row.cost_usd, charge + row.charge_usd)
    return money


def _money_axes(ax: Any, costs: Mapping[str, CostReport]) -> None:
    """Grouped bars: each team's charge per configuration (its run cost as a black tick)."""
    teams = sorted({row.share for report in costs.values() for row in report.shares})
    width = 0.8 / max(1, len(costs))
    for index, (label, report) in enumerate(costs.items()):
        money = team_money(report)
        xs = [i + index * width for i in range(len(teams))]
        charges = [money.get(t, (0.0, 0.0))[1] for t in teams]
        ax.bar(
            xs,
            charges,
            width,
            label=legend_label(f"{label}: {report.total_cost_usd:,.2f} USD in all"),
        )
        ran = [money.get(t, (0.0, 0.0))[0] for t in teams]
        ax.scatter(xs, ran, marker="_", color="black", s=200, zorder=3)
    ax.set_xticks([i + width * (len(costs) - 1) / 2 for i in range(len(teams))])
    ax.set_xticklabels(teams)
    ax.set_ylabel("USD")
    rule = next(iter(costs.values())).rule
    ax.set_title(f"money per team (bars: charge, rule '{rule}'; ticks: what it ran)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")


def _agg_figure(size: tuple[float, float]) -> Figure:
    """A figure on matplotlib's Agg canvas (no pyplot, no display, no global state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


MAX_DAY_TICKS = 20
"""Most ticks on the day axis beyond two weeks: longer spans tick every 2, 3... weeks."""


def _day_axis(ax: Any, end_s: float) -> None:
    """Ticks at midnights labelled with the weekday (day 0 is a Monday): every day up to two
    weeks, then every week (or every few weeks: at most :data:`MAX_DAY_TICKS` + 1 ticks)."""
    days = max(1, math.ceil(end_s / DAY_S))
    step = 1 if days <= 14 else 7 * math.ceil(days / (7 * MAX_DAY_TICKS))
    ticks = list(range(0, days + 1, step))
    ax.set_xticks([d * 24.0 for d in ticks])
    ax.set_xticklabels(
        [f"{DAY_NAMES[d % 7]}" + (f" {d // 7 + 1}" if days > 7 else "") for d in ticks]
    )
    ax.set_xlim(0, days * 24.0)
    ax.set_xlabel("day (midnight ticks; simulated time starts on a Monday)")


MAX_PLOT_POINTS = 2000
"""Most points of one drawn series (usage steps, a wait distribution): a panel is about 700
pixels wide, so longer series are sampled, and a plot's work is bounded whatever the run."""


def _sampled(values: Sequence[Any]) -> list[Any]:
    """``values`` itself up to :data:`MAX_PLOT_POINTS`, else every k-th one and the last
    (the same positions for every series of the same length, so stacked steps stay aligned)."""
    step = max(1, math.ceil(len(values) / MAX_PLOT_POINTS))
    picked = list(values[::step])
    if step > 1 and (len(values) - 1) % step:
        picked.append(values[-1])
    return picked


def _usage_axes(ax: Any, result: SimulationResult, label: str, itype: str) -> None:
    tl = result.timeline
    hours = _sampled([t / HOUR_S for t in tl.times])
    own_by = {s: _sampled(v) for s, v in tl.own_by_type.get(itype, {}).items()}
    borrowed_by = {s: _sampled(v) for s, v in tl.borrowed_by_type.get(itype, {}).items()}
    colours = _colours(list(tl.own_by_type.get(itype, {})) or list(tl.waits))
    base = [0.0] * len(hours)
    for share, own_counts in own_by.items():
        if not any(own_counts) and not any(borrowed_by[share]):
            continue
        own = [b + v for b, v in zip(base, own_counts, strict=True)]
        ax.fill_between(
            hours,
            base,
            own,
            step="post",
            alpha=0.8,
            facecolor=colours[share],
            linewidth=0,
            label=legend_label(f"{share} own"),
        )
        top = [b + v for b, v in zip(own, borrowed_by[share], strict=True)]
        if any(borrowed_by[share]):
            ax.fill_between(
                hours,
                own,
                top,
                step="post",
                facecolor="none",
                edgecolor=colours[share],
                hatch="///",
                label=legend_label(f"{share} borrowed"),
            )
        base = top
    capacity = tl.capacity.get(itype, 0)
    ax.axhline(capacity, color="black", linewidth=1.2, label=f"capacity {capacity}")
    for share, usable in tl.max_usable.get(itype, {}).items():
        if share in tl.borrowing and usable > 0:
            ax.axhline(
                usable,
                color=colours[share],
                linestyle="--",
                linewidth=1,
                label=legend_label(f"{share} max with borrowing {usable}"),
            )
    _preemption_marks(ax, result, itype, capacity * 1.06, colours)
    _day_axis(ax, max(result.window_s, result.end_s))
    ax.set_ylim(0, capacity * 1.15 + 0.5)
    ax.set_ylabel(f"{itype} instances")
    ax.set_title(
        f"{label}: {itype} (utilisation of all types {result.utilisation:.0%})", fontsize="small"
    )
    ax.legend(**LEGEND_OUTSIDE)


def _preemption_marks(
    ax: Any, result: SimulationResult, itype: str, height: float, colours: dict[str, Any]
) -> None:
    markers = {"CROSS_SHARE": "v", "IN_SHARE": "^", "LIMIT_LOWERED": "x"}
    usable = result.timeline.max_usable.get(itype, {})
    for share, colour in colours.items():
        if not usable.get(share):
            continue
        for rule, marker in markers.items():
            times = _sampled(
                [t / HOUR_S for t, s, r in result.timeline.preemptions if s == share and r == rule]
            )
            if times:
                ax.scatter(
                    times,
                    [height] * len(times),
                    marker=marker,
                    color=colour,
                    s=16,
                    label=legend_label(f"{share} preempted ({rule.lower().replace('_', '-')})"),
                )


def _colours(shares: list[str]) -> dict[str, Any]:
    """The same colour for a share in every panel (matplotlib's default cycle, by position)."""
    from matplotlib import rcParams

    cycle = rcParams["axes.prop_cycle"].by_key()["color"]
    return {share: cycle[i % len(cycle)] for i, share in enumerate(shares)}


def _wait_scale(ax: Any, axis: str = "x") -> None:
    """Symlog with a linear part below one minute: zero waits drawn at 0, not at a floor."""
    if axis == "x":
        ax.set_xscale("symlog", linthresh=WAIT_LINTHRESH_MIN)
        ax.set_xlim(left=-0.1)  # a zero wait sits just right of the spine, visibly
    else:
        ax.set_yscale("symlog", linthresh=WAIT_LINTHRESH_MIN)
        ax.set_ylim(bottom=0)


def _cdf(ax: Any, waits_s: Sequence[float], **style: Any) -> None:
    """Empirical CDF of first-start waits in minutes (never-started jobs stay below 1)."""
    if not waits_s:
        return
    xs = [w / 60 for w in sorted(waits_s) if math.isfinite(w)]
    ys = [(i + 1) / len(waits_s) for i in range(len(xs))]
    ax.step([0.0, *_sampled(xs)], [0.0, *_sampled(ys)], where="post", **style)
    zero = sum(1 for x in xs if x == 0) / len(waits_s)
    if zero:
        ax.plot([0.0], [zero], marker="o", markersize=4, color=style.get("color"))


def _wait_axes(ax: Any, results: Sequence[SimulationResult], labels: Sequence[str]) -> None:
    styles = ["-", "--", ":", "-."]
    for index, (result, label) in enumerate(zip(results, labels, strict=True)):
        colours = _colours(list(result.timeline.waits))
        for share, waits in result.timeline.waits.items():
            _cdf(
                ax,
                waits,
                color=colours[share],
                linestyle=styles[index % 4],
                label=legend_label(f"{label}: {share}"),
            )
    _wait_scale(ax)
    ax.set_xlabel("wait before first start (minutes; linear below 1, log above)")
    ax.set_ylabel("share of jobs")
    ax.set_ylim(0, 1.02)
    ax.set_title("Wait distribution", fontsize="small")
    ax.legend(**LEGEND_OUTSIDE)


def plot_comparison(search: SearchResult, path: Path) -> None:
    """Write :func:`comparison_figure` of the rule-based and the best configuration as a PNG."""
    comparison_figure((search.rule_based, search.best), ("rule-based", "optimised")).savefig(
        path, dpi=110, bbox_inches="tight"
    )


def comparison_figure(evaluations: Sequence[Evaluation], labels: Sequence[str]) -> Figure:
    """Two configurations side by side, one row per team: wait distributions, wait
    percentiles and the share of jobs preempted, each with the team's targets marked."""
    teams = [t.team for t in evaluations[0].teams]
    fig = _agg_figure((15, 2.8 * len(teams)))
    axes = fig.subplots(len(teams), 3, squeeze=False)
    colours = _colours(list(labels))
    for row, team in enumerate(teams):
        checks = {c.target: c for c in evaluations[0].checks if c.team == team}
        figures = [e.team(team) for e in evaluations]
        _compare_waits(axes[row][0], team, figures, labels, colours, checks)
        _compare_percentiles(axes[row][1], team, figures, labels, colours, checks)
        _compare_preempted(axes[row][2], team, figures, labels, colours, checks)
    fig.set_layout_engine("constrained")
    return fig


def _compare_waits(
    ax: Any,
    team: str,
    figures: Sequence[TeamFigures],
    labels: Sequence[str],
    colours: dict[str, Any],
    checks: dict[str, TargetCheck],
) -> None:
    for fig_, label in zip(figures, labels, strict=True):
        _cdf(ax, fig_.waits_s, color=colours[label], label=legend_label(label))
    for name, check in checks.items():
        if name.endswith("_wait_minutes"):
            q = int(name[1:3])
            ax.plot(
                [check.limit],
                [q / 100],
                marker="*",
                color="black",
                linestyle="none",
                label=f"target {name.removesuffix('_wait_minutes')} {check.limit:g} min",
            )
    _wait_scale(ax)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("wait (minutes)")
    ax.set_ylabel("share of jobs")
    ax.set_title(f"{team}: waits", fontsize="small")
    ax.legend(**LEGEND_OUTSIDE)


def _compare_percentiles(
    ax: Any,
    team: str,
    figures: Sequence[TeamFigures],
    labels: Sequence[str],
    colours: dict[str, Any],
    checks: dict[str, TargetCheck],
) -> None:
    percentiles = (50, 90, 99)
    width = 0.8 / len(figures)
    for k, (fig_, label) in enumerate(zip(figures, labels, strict=True)):
        values = [min(fig_.wait(q) / 60, 1e9) for q in percentiles]
        bars = ax.bar(
            [i + k * width for i in range(3)],
            values,
            width,
            color=colours[label],
            label=legend_label(label),
        )
        ax.bar_label(bars, fmt=_minutes_label, fontsize="x-small")
    for i, q in enumerate(percentiles):
        check = checks.get(f"p{q}_wait_minutes")
        if check is not None:
            ax.hlines(
                check.limit,
                i - width / 2,
                i + width * (len(figures) - 0.5),
                colors="black",
                linestyles="--",
                label=f"target p{q} {check.limit:g} min",
            )
    ax.set_xticks([i + width * (len(figures) - 1) / 2 for i in range(3)])
    ax.set_xticklabels([f"p{q}" for q in percentiles])
    _wait_scale(ax, "y")
    ax.set_ylabel("wait (minutes)")
    ax.set_title(f"{team}: wait percentiles", fontsize="small")
    ax.legend(**LEGEND_OUTSIDE)


def _minutes_label(value: float) -> str:
    """0 for a zero wait, two significant digits below 10 minutes, whole minutes above."""
    if value == 0:
        return "0"
    return f"{value:.2g}" if value < 10 else f"{value:.0f}"


def _compare_preempted(
    ax: Any,
    team: str,
    figures: Sequence[TeamFigures],
    labels: Sequence[str],
    colours: dict[str, Any],
    checks: dict[str, TargetCheck],
) -> None:
    for k, (fig_, label) in enumerate(zip(figures, labels, strict=True)):
        bars = ax.bar(
            [k], [100 * fig_.preempted_share], 0.6, color=colours[label], label=legend_label(label)
        )
        ax.bar_label(bars, fmt="%.0f%%", fontsize="x-small")
    check = checks.get("max_preempted_share")
    if check is not None:
        ax.axhline(
            100 * check.limit,
            color="black",
            linestyle="--",
            label=f"target at most {check.limit:.0%}",
        )
    ax.set_xticks(range(len(figures)))
    ax.set_xticklabels(list(labels))
    ax.set_ylim(0, max(10.0, *(100 * f.preempted_share * 1.2 for f in figures)))
    ax.set_ylabel("jobs preempted (%)")
    ax.set_title(f"{team}: preempted", fontsize="small")
    ax.legend(**LEGEND_OUTSIDE)


# --- the bill (quota report): stacked use per team, the reservation line, the idle band ------
def plot_bill(report: CostReport, path: Path) -> None:
    """Write the bill's figure as PNG to ``path``."""
    types = [t for t, s in report.series.items() if s.times]
    figure = _agg_figure((10.0, 3.2 * max(len(types), 1)))
    shares = sorted({name for s in report.series.values() for name in s.by_share})
    colours = _colours(shares)
    for index, itype in enumerate(types, start=1):
        ax = figure.add_subplot(len(types), 1, index)
        _type_axes(ax, report, itype, report.series[itype], colours)
    if not types:
        figure.add_subplot(1, 1, 1).set_title("nothing ran and nothing was reserved")
    figure.tight_layout()
    figure.savefig(path, dpi=110, bbox_inches="tight")


def _type_axes(
    ax: Any, report: CostReport, itype: str, series: UsageSeries, colours: dict[str, Any]
) -> None:
    hours = [(t - report.start_s) / HOUR_S for t in series.times]
    hours.append((report.end_s - report.start_s) / HOUR_S)
    names = [n for n, v in series.by_share.items() if any(v)]
    stacks = [[*series.by_share[n], series.by_share[n][-1]] for n in names]
    if stacks:
        ax.stackplot(
            hours,
            *stacks,
            labels=[legend_label(name) for name in names],
            step="post",
            colors=[colours[n] for n in names],
            alpha=0.85,
        )
    total = [sum(v[i] for v in stacks) for i in range(len(hours))] if stacks else [0] * len(hours)
    plan = [*series.plan, series.plan[-1]]
    if any(plan):
        ax.step(hours, plan, where="post", color="black", linewidth=1.5, label="reserved (plan)")
        ax.fill_between(
            hours,
            total,
            plan,
            where=[p > u for p, u in zip(plan, total, strict=True)],
            step="post",
            facecolor="none",
            edgecolor="grey",
            hatch="//",
            linewidth=0.0,
            label="reserved, idle",
        )
    ax.set_title(f"{itype}: instances in use per team")
    ax.set_xlabel("hours since the start of the period")
    ax.set_ylabel("instances")
    ax.set_xlim(0, hours[-1] or 1)
    ax.legend(loc="upper right", fontsize="small")
