"""Figures: their structure (panels, scales, lines, labels, legends), not their pixels."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from quota_constructs.advisor.report import comparison_figure, usage_figure
from quota_constructs.advisor.simulate import SimulationOptions, compare
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.model import JobQueueSpec, Organisation, QuotaShareSpec, SharingStrategy
from tests.advisor.helpers import search_small

GPU, P4D = "ml.g5.xlarge", "ml.p4d.24xlarge"
H = 3600.0
TWO_TYPES = Organisation(
    name="lab",
    queue=JobQueueSpec(
        shares=(
            QuotaShareSpec(
                name="A",
                capacity={GPU: 1, P4D: 1},
                strategy=SharingStrategy.LEND_AND_BORROW,
                borrow_limit=100,
            ),
            QuotaShareSpec(name="B", capacity={GPU: 2, P4D: 1}, strategy=SharingStrategy.LEND),
        )
    ),
)
RESERVED = Organisation(
    name="reserved",
    queue=JobQueueSpec(
        shares=tuple(
            QuotaShareSpec(name=s.name, capacity=s.capacity, strategy=SharingStrategy.RESERVE)
            for s in TWO_TYPES.queue.shares
        )
    ),
)
# A borrows one of B's GPUs at 0; B's jobs at 1 h start at once (zero waits) or wait.
JOBS = [
    WorkloadJob(0, "A", GPU, 2, 3 * H, 1),
    WorkloadJob(0, "A", P4D, 1, 30 * H, 1),
    WorkloadJob(H, "B", GPU, 1, H, 1),
    WorkloadJob(H, "B", P4D, 1, H, 1),
]


def figure() -> Any:
    results = compare([TWO_TYPES, RESERVED], JOBS, options=SimulationOptions(window_s=48 * H))
    return usage_figure(results, ["shared", "reserved"])


def outside(fig: Any, ax: Any) -> bool:
    """The legend lies right of the axes' data area."""
    renderer = fig.canvas.get_renderer()
    return ax.get_legend().get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1


def test_one_usage_panel_per_configuration_and_instance_type_then_waits() -> None:
    fig = figure()
    titles = [ax.get_title() for ax in fig.axes]
    assert len(fig.axes) == 2 * 2 + 1
    assert [t.split(" (")[0] for t in titles[:4]] == [
        f"shared: {GPU}",
        f"shared: {P4D}",
        f"reserved: {GPU}",
        f"reserved: {P4D}",
    ]
    assert titles[4] == "Wait distribution"


def test_usage_panels_draw_capacity_and_borrow_limit_lines() -> None:
    gpu_panel = figure().axes[0]
    lines = {line.get_label(): line for line in gpu_panel.get_lines()}
    assert list(lines["capacity 3"].get_ydata()) == [3, 3]
    # A: own 1 GPU + 100 % borrow limit (B lends 2) = at most 2
    borrow = lines["A max with borrowing 2"]
    assert borrow.get_linestyle() == "--" and list(borrow.get_ydata()) == [2, 2]


def test_time_axis_is_labelled_with_days() -> None:
    ax = figure().axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["Mon", "Tue", "Wed"]
    assert list(ax.get_xticks()) == [0, 24, 48]
    assert ax.get_xlabel().startswith("day")


def test_zero_waits_are_drawn_at_zero_on_a_symlog_axis() -> None:
    waits = figure().axes[-1]
    assert waits.get_xscale() == "symlog" and waits.get_xlim()[0] < 0
    shared_b = next(line for line in waits.get_lines() if line.get_label() == "shared: B")
    # both of B's jobs started at once when it lends (A borrowed only what was idle)
    assert list(shared_b.get_xdata())[:2] == [0.0, 0.0]


def test_legends_sit_outside_the_data() -> None:
    fig = figure()
    fig.canvas.draw()
    assert all(outside(fig, ax) for ax in fig.axes)


def test_comparison_puts_two_configurations_side_by_side_per_team() -> None:
    result, _ = search_small()
    fig = comparison_figure((result.rule_based, result.best), ("rule-based", "optimised"))
    assert len(fig.axes) == 2 * 3  # two teams, three panels each
    assert [ax.get_title() for ax in fig.axes[:3]] == [
        "a: waits",
        "a: wait percentiles",
        "a: preempted",
    ]
    cdf, percentiles, preempted = fig.axes[3:]  # team b
    assert {line.get_label() for line in cdf.get_lines()} >= {"rule-based", "optimised"}
    assert cdf.get_xscale() == "symlog" and percentiles.get_yscale() == "symlog"
    bars = [p for p in percentiles.patches]
    assert len(bars) == 2 * 3  # p50, p90, p99 for each configuration
    [target] = [c for c in percentiles.collections if c.get_label() == "target p90 0 min"]
    assert target is not None
    assert [t.get_text() for t in preempted.get_xticklabels()] == ["rule-based", "optimised"]
    fig.canvas.draw()
    assert all(outside(fig, ax) for ax in fig.axes)


def test_a_share_whose_name_starts_with_an_underscore_is_in_the_legends() -> None:
    """matplotlib leaves labels starting with ``_`` out of legends; a share's name is shown."""

    def renamed(org: Organisation) -> Organisation:
        shares = tuple(
            QuotaShareSpec(
                name=f"_{s.name}",
                capacity=s.capacity,
                strategy=s.strategy,
                borrow_limit=s.borrow_limit,
            )
            for s in org.queue.shares
        )
        return Organisation(name=org.name, queue=JobQueueSpec(shares=shares))

    jobs = [replace(j, share=f"_{j.share}") for j in JOBS]
    results = compare([renamed(TWO_TYPES)], jobs, options=SimulationOptions(window_s=48 * H))
    fig = usage_figure(results, ["_shared"])
    legends = [
        t.get_text()
        for ax in fig.axes
        if (legend := ax.get_legend()) is not None
        for t in legend.get_texts()
    ]
    assert any(text.endswith("_A own") for text in legends)
    assert any(text.endswith("_shared: _B") for text in legends)
