"""With prices, the simulation plot (``quota simulate --plot``, ``quota recommend --simulate
--plot``) shows the money per team: a panel of each team's charge per configuration, the bars
the cost report's charges (they add up to its total)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from matplotlib.patches import Rectangle
from typer.testing import CliRunner

from quota_constructs.advisor.report import team_money, usage_figure
from quota_constructs.advisor.simulate import SimulationOptions, simulate
from quota_constructs.advisor.workload import load_workload_csv
from quota_constructs.commands import app
from quota_constructs.commands.report import load_prices, simulation_cost
from quota_constructs.config import load_organisation

DOCS = Path(__file__).resolve().parents[2] / "docs" / "examples"


def test_the_money_panel_shows_each_teams_charge() -> None:
    org = load_organisation(DOCS / "plan-org.yaml")
    jobs = load_workload_csv(DOCS / "plan-workload.csv")
    options = SimulationOptions()
    cost = simulation_cost(org, jobs, load_prices(DOCS / "prices.yaml"), options)
    result = simulate(org, jobs, options=options)
    fig = usage_figure([result], ["plans-demo"], {"plans-demo": cost})
    (money,) = [ax for ax in fig.axes if ax.get_title().startswith("money per team")]
    heights = [bar.get_height() for bar in money.patches if isinstance(bar, Rectangle)]
    teams = [label.get_text() for label in money.get_xticklabels()]
    charges = team_money(cost)
    assert teams == ["llm", "vision"]
    assert heights == [charges["llm"][1], charges["vision"][1]]
    assert sum(heights) == pytest.approx(cost.total_cost_usd)
    legend = money.get_legend()
    assert legend is not None
    assert "1,686.90 USD in all" in legend.get_texts()[0].get_text()


def test_without_prices_there_is_no_money_panel() -> None:
    org = load_organisation(DOCS / "plan-org.yaml")
    result = simulate(org, load_workload_csv(DOCS / "plan-workload.csv"))
    fig = usage_figure([result], ["plans-demo"])
    assert not [ax for ax in fig.axes if ax.get_title().startswith("money per team")]


def test_quota_simulate_plot_with_prices_writes_the_png(tmp_path: Path) -> None:
    png = tmp_path / "sim.png"
    args = [
        "simulate",
        str(DOCS / "plan-org.yaml"),
        "--workload",
        str(DOCS / "plan-workload.csv"),
        "--prices",
        str(DOCS / "prices.yaml"),
        "--plot",
        str(png),
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(result.stdout)["plans-demo"]["cost"]["totalCostUsd"] > 0
