"""With prices, the simulation plot (``quota simulate --plot``, ``quota recommend --simulate
--plot``) shows the money per team: a panel of each team's charge per configuration, the bars
the cost report's charges (they add up to its total)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from matplotlib.patches import Rectangle
from typer.testing import CliRunner

from quota_constructs.advisor.report import team_money, usage_figure
from quota_constructs.advisor.simulate import SimulationOptions, simulate
from quota_constructs.advisor.workload import DEFAULT_STARTUP_S, load_workload_csv
from quota_constructs.commands import app
from quota_constructs.commands.report import load_prices, simulation_cost
from quota_constructs.config import load_organisation

simulate_module = importlib.import_module("quota_constructs.advisor.simulate")
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


def test_simulate_prices_bills_the_run_it_measured_without_a_second_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs: list[str] = []
    real = simulate_module._run

    def counted(*args: Any, **kwargs: Any) -> Any:
        runs.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(simulate_module, "_run", counted)
    args = ["simulate", str(DOCS / "plan-org.yaml"), "--workload", str(DOCS / "plan-workload.csv")]
    result = CliRunner().invoke(app, [*args, "--prices", str(DOCS / "prices.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    # the organisation, its all-RESERVE baseline up to the window (utilisation) and the
    # all-RESERVE run to the end (the money on equal work), nothing more
    assert len(runs) == 3
    billed = json.loads(result.stdout)["plans-demo"]["cost"]["totalCostUsd"]
    org = load_organisation(DOCS / "plan-org.yaml")
    jobs = load_workload_csv(DOCS / "plan-workload.csv")
    options = SimulationOptions(startup_s=DEFAULT_STARTUP_S)  # quota simulate's default
    alone = simulation_cost(org, jobs, load_prices(DOCS / "prices.yaml"), options)
    assert billed == pytest.approx(alone.total_cost_usd)  # the same figure as a run of its own


def test_quota_simulate_and_quota_report_state_the_start_up_and_agree_with_the_same() -> None:
    files = [str(DOCS / "plan-org.yaml"), "--workload", str(DOCS / "plan-workload.csv")]
    priced = [*files, "--prices", str(DOCS / "prices.yaml"), "--json"]

    def simulated(*extra: str) -> dict[str, Any]:
        result = CliRunner().invoke(app, ["simulate", *priced, *extra])
        assert result.exit_code == 0, result.output
        return dict(json.loads(result.stdout)["plans-demo"]["cost"])

    def reported(*extra: str) -> dict[str, Any]:
        result = CliRunner().invoke(app, ["report", *priced, *extra])
        assert result.exit_code == 0, result.output
        return dict(json.loads(result.stdout))

    sim, rep = simulated(), reported()
    assert (sim["startupS"], rep["startupS"]) == (300.0, 0.0)  # the defaults differ
    assert sim["period"] != rep["period"]
    same = reported("--startup-s", "300")
    assert (same["period"], same["totalCostUsd"]) == (sim["period"], sim["totalCostUsd"])
    table = CliRunner(env={"COLUMNS": "400"}).invoke(app, ["report", *priced[:-1]])
    assert (
        "simulated with a start-up of 0 s per job (defaults: quota report 0 s, quota simulate "
        "300 s; the same --startup-s gives the same figures)"
    ) in table.stdout
