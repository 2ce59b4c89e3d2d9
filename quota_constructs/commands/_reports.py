"""The tables and JSON of ``quota simulate`` and ``quota recommend --optimize`` (results, searches).

Figures (plots) are the advisor's own: :mod:`quota_constructs.advisor.report`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from quota_constructs.advisor.optimize import (
    Evaluation,
    SearchResult,
    TargetCheck,
    setting_text,
)
from quota_constructs.advisor.report import duration_text
from quota_constructs.advisor.simulate import ShareMetrics, SimulationResult
from quota_constructs.advisor.targets import (
    MET,
    MISSED,
    NOT_CHECKED,
    TOO_FEW_JOBS,
    check_json,
    figure_text,
    requirement_text,
)
from quota_constructs.api_shapes import share_sharing_settings
from quota_constructs.commands._common import data_table, json_fields, message, styled


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
    table = data_table("metric", *labels, title="What-if simulation")
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
            label = message(styled(spec.share, "bold"), f" {name}") if index == 0 else f"  {name}"
            table.add_row(label, *values, end_section=index == len(_SHARE_ROWS) - 1)
    return table


def results_json(results: Sequence[SimulationResult], labels: Sequence[str]) -> str:
    """The results (without the timeline and jobs) as JSON, keyed by configuration label;
    field names in camelCase (``waitP95S``), ``null`` for an infinite figure."""
    out = {
        label: json_fields(result, skip=frozenset({"timeline"}))
        for label, result in zip(labels, results, strict=True)
    }
    return json.dumps(out, indent=2)


# --- search ---------------------------------------------------------------------------------


_STATUS_STYLE = {
    MET: ("ok", "green"),
    MISSED: ("missed", "red"),
    NOT_CHECKED: ("not checked", "blue"),
    TOO_FEW_JOBS: ("too few jobs", "yellow"),
}


def _check_cell(check: TargetCheck) -> Text:
    """``14.7 h missed 16/20 wk``: the median week, the status, the weeks met."""
    figure = figure_text(check)
    weeks = f" {check.weeks_met}/{check.weeks} wk" if check.weeks else ""
    return message(
        f"{figure} " if check.value is not None else "",
        styled(*_STATUS_STYLE[check.status]),
        weeks,
    )


def _target_label(check: TargetCheck) -> str:
    return requirement_text(check)


def search_table(search: SearchResult) -> Table:
    """Rule-based and optimised side by side: settings, each target, borrowing, lost work."""
    rule, best = search.rule_based, search.best
    table = data_table(
        "team",
        "",
        "rule-based",
        "optimised",
        title=f"Optimised configuration for {search.organisation.name}",
    )
    for index, share in enumerate(search.organisation.queue.shares):
        name = share.name
        table.add_row(
            styled(name, "bold"),
            "settings",
            setting_text(rule.settings[index]),
            setting_text(best.settings[index]),
        )
        best_checks = {c.target: c for c in best.checks if c.team == name}
        for check in (c for c in rule.checks if c.team == name):
            other = best_checks[check.target]
            table.add_row("", _target_label(check), _check_cell(check), _check_cell(other))
        a, b = rule.team(name), best.team(name)
        table.add_row(
            "",
            "borrowed / lost instance-hours",
            f"{a.borrowed_instance_hours:.1f} / {a.lost_instance_hours:.1f}",
            f"{b.borrowed_instance_hours:.1f} / {b.lost_instance_hours:.1f}",
            end_section=True,
        )
    table.add_row("all", "utilisation", f"{rule.utilisation:.1%}", f"{best.utilisation:.1%}")
    table.add_row(
        "", "mean wait, all jobs", duration_text(rule.mean_wait_s), duration_text(best.mean_wait_s)
    )
    table.add_row("", "targets missed", str(len(rule.missed)), str(len(best.missed)))
    return table


def search_summary(search: SearchResult) -> str:
    """One line: how many configurations ran, on what, and how they were chosen."""
    how = "every allowed one" if search.exhaustive else "coordinate search from the rules"
    days = search.options.days
    return (
        f"simulated {search.evaluated} configurations ({how}; the profiles allow "
        f"{search.space}) on {search.workloads} seeded weeks of {days} days "
        f"({search.jobs} jobs in all)"
    )


def _finite(value: float) -> float | None:
    """JSON has no infinity: a wait of a job that never started is ``null``."""
    return value if math.isfinite(value) else None


def _team_warnings(search: SearchResult, name: str) -> list[str]:
    """A team's warnings: the rules', the search's about it, its sizing."""
    rules = [w for t in search.advice.teams if t.share.name == name for w in t.warnings]
    found = [w.removeprefix(f"{name}: ") for w in search.warnings if w.startswith(f"{name}: ")]
    sizing = [s.text() for s in search.sizings if s.team == name]
    return [*rules, *found, *sizing]


def search_json(search: SearchResult) -> str:
    """The rule-based and optimised configurations, settings and target figures, as JSON
    (``null`` for a figure that is infinite because a job never started).

    Each team's settings are in the API's values (:func:`share_sharing_settings`).
    """

    def config(e: Evaluation) -> dict[str, Any]:
        teams = {}
        for share in e.organisation.queue.shares:
            fig = e.team(share.name)
            teams[share.name] = {
                **share_sharing_settings(share),
                "targets": [check_json(c) for c in e.checks if c.team == share.name],
                "jobs": fig.jobs,
                "preemptedJobs": fig.preempted_jobs,
                "borrowedInstanceHours": fig.borrowed_instance_hours,
                "lostInstanceHours": fig.lost_instance_hours,
            }
        return {"utilisation": e.utilisation, "meanWaitS": _finite(e.mean_wait_s), "teams": teams}

    optimised = config(search.best)
    for name, team in optimised["teams"].items():
        team["warnings"] = _team_warnings(search, name)
        for sizing in search.sizings:
            if sizing.team == name and sizing.needed is not None:
                team["capacityNeeded"] = dict(sizing.needed)
    return json.dumps(
        {
            "ruleBased": config(search.rule_based),
            "optimised": optimised,
            "evaluated": search.evaluated,
            "space": search.space,
            "exhaustive": search.exhaustive,
            "workloads": search.workloads,
            "weeks": search.workloads,
            "jobs": search.jobs,
            "warnings": list(search.warnings),
        },
        indent=2,
    )
