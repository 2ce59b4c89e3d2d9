"""The bill's figure: per instance type, stacked use per team over time, the reservation line
and the idle band between them (matplotlib's Agg canvas, no pyplot state)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quota_constructs.advisor.report import _agg_figure, _colours
from quota_constructs.model.cost import HOUR_S, CostReport, UsageSeries


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
            labels=names,
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
