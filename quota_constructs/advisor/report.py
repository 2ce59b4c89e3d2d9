"""Reports of simulation results: a side-by-side table, JSON, and a matplotlib plot (Agg)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.table import Table

from quota_constructs.advisor.simulate import HOUR_S, ShareMetrics, SimulationResult


def duration_text(seconds: float) -> str:
    """Short human duration: 45s, 12m, 3.5h, 2.1d."""
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < HOUR_S:
        return f"{seconds / 60:.0f}m"
    if seconds < 48 * HOUR_S:
        return f"{seconds / HOUR_S:.1f}h"
    return f"{seconds / 86400:.1f}d"


def _preemptions(m: ShareMetrics) -> str:
    counts = m.preemptions
    short = {"CROSS_SHARE": "cross", "IN_SHARE": "in", "LIMIT_LOWERED": "limit"}
    parts = [f"{short.get(k, k)} {n}" for k, n in counts.items() if n]
    return ", ".join(parts) if parts else "0"


_SHARE_ROWS: list[tuple[str, Callable[[ShareMetrics], str]]] = [
    ("strategy", lambda m: m.strategy),
    (
        "jobs (succeeded / failed / never started)",
        lambda m: f"{m.jobs} ({m.completed} / {m.failed} / {m.never_started})",
    ),
    (
        "wait p50 / p95 / max",
        lambda m: " / ".join(duration_text(v) for v in (m.wait_p50_s, m.wait_p95_s, m.wait_max_s)),
    ),
    (
        "completion mean / p95",
        lambda m: f"{duration_text(m.completion_mean_s)} / {duration_text(m.completion_p95_s)}",
    ),
    ("preemptions", _preemptions),
    ("lost instance-hours", lambda m: f"{m.lost_instance_hours:.1f}"),
    ("own quota used", lambda m: f"{m.own_use:.0%}"),
    (
        "borrowed / lent instance-hours",
        lambda m: f"{m.borrowed_instance_hours:.1f} / {m.lent_instance_hours:.1f}",
    ),
]


def results_table(results: Sequence[SimulationResult], labels: Sequence[str]) -> Table:
    """One column per configuration; overall rows, then each share's rows."""
    table = Table(title="What-if simulation", show_lines=False)
    table.add_column("metric")
    for label in labels:
        table.add_column(label)
    first = results[0]
    table.add_row("window", *(duration_text(r.window_s) for r in results))
    table.add_row("last job ended", *(duration_text(r.end_s) for r in results))
    table.add_row("utilisation", *(f"{r.utilisation:.1%}" for r in results))
    table.add_row("  all-RESERVE baseline", *(f"{r.baseline_utilisation:.1%}" for r in results))
    table.add_row("fairness (Jain)", *(f"{r.fairness:.3f}" for r in results), end_section=True)
    for spec in first.shares:
        for index, (name, cell) in enumerate(_SHARE_ROWS):
            values = []
            for r in results:
                match = [m for m in r.shares if m.share == spec.share]
                values.append(cell(match[0]) if match else "-")
            label = f"[bold]{spec.share}[/] {name}" if index == 0 else f"  {name}"
            table.add_row(label, *values, end_section=index == len(_SHARE_ROWS) - 1)
    return table


def results_json(results: Sequence[SimulationResult], labels: Sequence[str]) -> str:
    """The results (without the timeline) as JSON, keyed by configuration label."""
    out: dict[str, Any] = {}
    for label, result in zip(labels, results, strict=True):
        data = asdict(result)
        data.pop("timeline")
        out[label] = data
    return json.dumps(out, indent=2)


def plot_results(results: Sequence[SimulationResult], labels: Sequence[str], path: Path) -> None:
    """Per configuration: stacked usage per share over time (borrowed hatched, preemptions
    marked); then the wait distribution of every share (empirical CDF). Written with Agg."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = len(results) + 1
    fig, axes = plt.subplots(rows, 1, figsize=(11, 3.2 * rows), squeeze=False)
    for ax, result, label in zip(axes[:, 0], results, labels, strict=False):
        _usage_axes(ax, result, label)
    _wait_axes(axes[-1, 0], results, labels)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _usage_axes(ax: Any, result: SimulationResult, label: str) -> None:
    tl = result.timeline
    hours = [t / HOUR_S for t in tl.times]
    base = [0.0] * len(hours)
    colours = _colours(list(tl.own))
    for share in tl.own:
        own = [b + v for b, v in zip(base, tl.own[share], strict=True)]
        ax.fill_between(
            hours,
            base,
            own,
            step="post",
            alpha=0.8,
            facecolor=colours[share],
            linewidth=0,
            label=f"{share} own",
        )
        top = [b + v for b, v in zip(own, tl.borrowed[share], strict=True)]
        if any(tl.borrowed[share]):
            ax.fill_between(
                hours,
                own,
                top,
                step="post",
                facecolor="none",
                edgecolor=colours[share],
                hatch="///",
                label=f"{share} borrowed",
            )
        base = top
    marks_at = max(base, default=1) * 1.05 or 1
    markers = {"CROSS_SHARE": "v", "IN_SHARE": "^", "LIMIT_LOWERED": "x"}
    for share in tl.own:
        for rule, marker in markers.items():
            times = [t / HOUR_S for t, s, r in tl.preemptions if s == share and r == rule]
            if times:
                ax.scatter(
                    times,
                    [marks_at] * len(times),
                    marker=marker,
                    color=colours[share],
                    s=16,
                    label=f"{share} preempted ({rule.lower().replace('_', '-')})",
                )
    ax.set_title(f"{label}: instances in use per share (utilisation {result.utilisation:.0%})")
    ax.set_xlabel("hours")
    ax.set_ylabel("instances")
    ax.legend(loc="upper left", fontsize="x-small", ncol=3)


def _colours(shares: list[str]) -> dict[str, Any]:
    """The same colour for a share in every panel (matplotlib's default cycle, by position)."""
    import matplotlib.pyplot as plt

    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {share: cycle[i % len(cycle)] for i, share in enumerate(shares)}


def _wait_axes(ax: Any, results: Sequence[SimulationResult], labels: Sequence[str]) -> None:
    styles = ["-", "--", ":", "-."]
    for index, (result, label) in enumerate(zip(results, labels, strict=True)):
        colours = _colours(list(result.timeline.waits))
        for share, waits in result.timeline.waits.items():
            if not waits:
                continue
            xs = [max(w / 60, 0.01) for w in waits]
            ys = [(i + 1) / len(xs) for i in range(len(xs))]
            ax.step(
                xs,
                ys,
                where="post",
                color=colours[share],
                linestyle=styles[index % 4],
                label=f"{label}: {share}",
            )
    ax.set_xscale("log")
    ax.set_xlabel("wait before first start (minutes, log)")
    ax.set_ylabel("share of jobs")
    ax.set_title("Wait distribution")
    ax.legend(loc="lower right", fontsize="x-small", ncol=2)
