"""``quota report ORG_FILE --workload W.csv``: the bill of a simulation, checked against the
simulated jobs' own attempt records."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.simulate import all_reserve, simulated_jobs
from quota_constructs.advisor.workload import generate_workload, load_workload_csv, workload_csv
from quota_constructs.commands import app
from quota_constructs.config import OrganisationFile, load_organisation
from quota_constructs.model import parse_utc
from quota_constructs.scheduling import Attempt
from tests.helpers import ORGS_DIR

runner = CliRunner()
H = 3600.0
G5, P4D = "ml.g5.xlarge", "ml.p4d.24xlarge"
PLAN_ORG = """organisation: money
shares:
  - {name: llm, capacity: {ml.p5.48xlarge: 6}, strategy: LEND_AND_BORROW}
  - {name: vision, capacity: {ml.p5.48xlarge: 2, ml.g5.xlarge: 4}, strategy: LEND}
training_plans:
  - {name: p5-june, instance_type: ml.p5.48xlarge, instance_count: 8,
     start: "2027-06-01T00:00:00Z", duration_hours: 336}
"""
WORKLOAD = """submit_time_s,share,instance_type,instance_count,duration_s,priority
0,llm,ml.p5.48xlarge,8,7200,0
1800,vision,ml.p5.48xlarge,2,3600,0
0,vision,ml.g5.xlarge,2,5400,0
"""
PRICES = "ml.p5.48xlarge: {on_demand: 98.32, training_plan: 60.0}\nml.g5.xlarge: 1.41\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"org": tmp_path / "org.yaml", "w": tmp_path / "w.csv", "p": tmp_path / "p.yaml"}
    for key, text in (("org", PLAN_ORG), ("w", WORKLOAD), ("p", PRICES)):
        paths[key].write_text(text, encoding="utf-8")
    return paths


def report(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["report", *args])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_a_reclaim_on_a_plan_is_billed_as_the_job_records_say(files: dict[str, Path]) -> None:
    """llm runs 8 on its 6 + vision's 2; vision reclaims at 30 min (20 s preemption), runs 1 h;
    llm runs again after, 2 h: the figures below follow from those records."""
    org = load_organisation(files["org"])
    jobs = simulated_jobs(org, load_workload_csv(files["w"]))
    llm = next(j for j in jobs if j.share_name == "llm")
    (first,) = [a for a in llm.attempts if a.preempted]
    assert (first.started_at, first.stopped_at) == (0.0, 1820.0)
    assert (llm.started_at, llm.stopped_at) == (5420.0, 12620.0)
    data = report(
        str(files["org"]), "--workload", str(files["w"]), "--prices", str(files["p"]), "--json"
    )
    rows = {(r["share"], r["instanceType"]): r for r in data["shares"]}
    llm_row = rows["llm", "ml.p5.48xlarge"]
    assert llm_row["lostInstanceHours"] == pytest.approx(8 * 1820 / H, abs=1e-5)
    assert llm_row["ownInstanceHours"] == pytest.approx(6 * (1820 + 7200) / H, abs=1e-5)
    assert llm_row["borrowedInstanceHours"] == pytest.approx(2 * (1820 + 7200) / H, abs=1e-5)
    assert llm_row["borrowedFrom"] == {"vision": llm_row["borrowedInstanceHours"]}
    assert llm_row["idleInstanceHours"] == pytest.approx(6 * 3600 / H, abs=1e-5)
    vision = rows["vision", "ml.p5.48xlarge"]
    assert vision["lentInstanceHours"] == llm_row["borrowedInstanceHours"]
    assert rows["vision", "ml.g5.xlarge"]["costUsd"] == pytest.approx(2 * 1.5 * 1.41)
    (plan,) = data["plans"]
    reserved = 8 * 12620 / H
    used = 8 * (1820 + 7200) / H + 2 * 3600 / H
    assert plan["utilisation"] == pytest.approx(used / reserved, abs=1e-5)
    assert plan["idleInstanceHours"] == pytest.approx(reserved - used, abs=1e-5)
    assert plan["costUsd"] == pytest.approx(reserved * 60.0, abs=1e-4)
    assert data["totalCostUsd"] == pytest.approx(reserved * 60 + 3 * 1.41, abs=1e-4)
    charges = sum(r["chargeUsd"] for r in data["shares"])
    assert charges == pytest.approx(data["totalCostUsd"], abs=1e-4)


def ran_s(attempt: Attempt) -> float:
    assert attempt.started_at is not None
    return attempt.stopped_at - attempt.started_at


def test_the_research_teams_with_a_plan_match_their_simulated_attempts(tmp_path: Path) -> None:
    """A generated week of the research teams on a plan of 8 x ml.p4d.24xlarge (their
    type moved to p4d: plans reserve no g5): per share, own +
    borrowed is every attempt's instance-hours; lent adds up to borrowed; lost is the
    preempted attempts' run since their last checkpoint; plan idle is reserved minus used."""
    research = (ORGS_DIR / "research.yaml").read_text(encoding="utf-8")
    org_text = research.replace(G5, P4D) + (
        "training_plans:\n  - {name: p4d-week, instance_type: ml.p4d.24xlarge, instance_count: 8, "
        'start: "2027-06-07T00:00:00Z", duration_hours: 168}\n'
    )
    org_file, w, prices = tmp_path / "org.yaml", tmp_path / "w.csv", tmp_path / "p.json"
    org_file.write_text(org_text, encoding="utf-8")
    generated = generate_workload(load_teams(ORGS_DIR.parent / "teams" / "research.yaml"), days=7)
    workload = [replace(job, instance_type=P4D) for job in generated]  # plans reserve no g5
    w.write_text(workload_csv(workload), encoding="utf-8")
    prices.write_text('{"ml.p4d.24xlarge": {"on_demand": 1.41, "training_plan": 0.9}}')
    data = report(str(org_file), "--workload", str(w), "--prices", str(prices), "--json")
    jobs = simulated_jobs(load_organisation(org_file), load_workload_csv(w))
    rows = {r["share"]: r for r in data["shares"]}
    end = max(j.stopped_at or 0.0 for j in jobs)
    for share, r in rows.items():
        attempts = [
            (a, j)
            for j in jobs
            if j.share_name == share
            for a in j.attempts
            if a.started_at is not None
        ]
        used = sum(ran_s(a) * j.request.demand[P4D] for a, j in attempts) / H
        assert r["ownInstanceHours"] + r["borrowedInstanceHours"] == pytest.approx(used, abs=1e-3)
        lost = 0.0
        for a, j in attempts:
            if a.preempted:
                ran, every = ran_s(a), j.request.checkpoint_interval_s
                lost += (ran - (ran // every * every if every else 0.0)) * j.request.demand[P4D] / H
        assert r["lostInstanceHours"] == pytest.approx(lost, abs=1e-3)
    borrowed = sum(r["borrowedInstanceHours"] for r in rows.values())
    assert sum(r["lentInstanceHours"] for r in rows.values()) == pytest.approx(borrowed, abs=1e-3)
    assert rows["recommendation"]["borrowedInstanceHours"] == 0  # RESERVE
    assert rows["recommendation"]["lentInstanceHours"] == 0
    (plan,) = data["plans"]
    reserved = 8 * end / H
    total_used = sum(r["ownInstanceHours"] + r["borrowedInstanceHours"] for r in rows.values())
    assert plan["idleInstanceHours"] == pytest.approx(reserved - total_used, abs=1e-3)
    assert data["totalCostUsd"] == pytest.approx(reserved * 0.9, abs=1e-3)
    # separate pools: the all-RESERVE run of the same jobs, billed by itself, its plan fee
    # over the same period (the shared run's, here the longer), unfinished jobs on demand
    alone_file = tmp_path / "alone.yaml"
    shared_org = load_organisation(org_file)
    alone_org = replace(shared_org, queue=all_reserve(shared_org.queue), calendars={})
    alone_file.write_text(OrganisationFile.from_organisation(alone_org).to_yaml())
    alone = report(str(alone_file), "--workload", str(w), "--prices", str(prices), "--json")
    alone_start, alone_stop = (parse_utc(alone["period"][k]) for k in ("start", "end"))
    assert alone_start is not None and alone_stop is not None
    alone_end = alone_stop - alone_start
    assert alone_end <= end
    extra_fee = 8 * (end - alone_end) / H * 0.9
    assert data["separatePoolsCostUsd"] == pytest.approx(
        alone["equalWorkCostUsd"] + extra_fee, abs=1e-3
    )
    assert data["sharingSavesUsd"] == pytest.approx(
        data["separatePoolsCostUsd"] - data["equalWorkCostUsd"], abs=1e-3
    )


def csv_report(files: dict[str, Path]) -> Result:
    """``quota report ORG --workload W --prices P --csv`` on the fixture's files."""
    args = ["report", str(files["org"]), "--workload", str(files["w"]), "--prices"]
    return runner.invoke(app, [*args, str(files["p"]), "--csv"])


def test_csv_has_the_share_rows_for_finance(files: dict[str, Path]) -> None:
    result = csv_report(files)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "share,instanceType,ownInstanceHours,borrowedInstanceHours,"
        "lentInstanceHours,lostInstanceHours,idleInstanceHours,costUsd,chargeUsd"
    )
    assert lines[1] == "vision,ml.g5.xlarge,3.0,0.0,0.0,0.0,0.0,4.23,4.23"
    assert len(lines) == 4


def test_the_table_states_the_rule_and_the_separate_pools(
    files: dict[str, Path], tmp_path: Path
) -> None:
    png = tmp_path / "bill.png"
    result = runner.invoke(
        app,
        [
            "report",
            str(files["org"]),
            "--workload",
            str(files["w"]),
            "--prices",
            str(files["p"]),
            "--plot",
            str(png),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "charge rule 'both': each team pays what it ran" in result.stdout
    assert (
        "the same jobs on separate pools (the all-RESERVE run, unfinished jobs finished on "
        "demand): 3,260.02 USD (sharing saves 1,573.12 USD)"
    ) in result.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_missing_price_exits_2_naming_the_type(files: dict[str, Path]) -> None:
    files["p"].write_text("ml.p5.48xlarge: 98.32\n", encoding="utf-8")
    result = runner.invoke(
        app,
        ["report", str(files["org"]), "--workload", str(files["w"]), "--prices", str(files["p"])],
    )
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: --prices: no price for instance type ml.g5.xlarge (prices given: "
        "ml.p5.48xlarge) (got 'ml.g5.xlarge'); fix: add 'ml.g5.xlarge: USD per instance-hour' "
        "to the prices file"
    )


def test_one_source_is_required(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["report", str(files["org"]), "--prices", str(files["p"])])
    assert result.exit_code == 2
    assert "give one source: a live queue or a simulated workload" in result.stderr


def test_without_a_prices_file_an_unreachable_price_list_is_exit_2(files: dict[str, Path]) -> None:
    env = {
        "AWS_ENDPOINT_URL_PRICING": "http://127.0.0.1:9",  # closed: never AWS itself
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_MAX_ATTEMPTS": "1",
        "XDG_CACHE_HOME": str(files["org"].parent / "cache"),
    }
    args = ["report", str(files["org"]), "--workload", str(files["w"]), "--region", "us-east-1"]
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: --prices: no prices file, and the AWS Price List API could not be asked ("
    )
    assert result.stderr.rstrip().endswith("fix: pass --prices FILE (TYPE: USD per instance-hour)")


TEAMS = ORGS_DIR.parent / "teams" / "research.yaml"


def test_simulate_with_prices_adds_each_teams_money(tmp_path: Path) -> None:
    prices = tmp_path / "p.yaml"
    prices.write_text(f"{G5}: 1.41\n", encoding="utf-8")
    research = str(ORGS_DIR / "research.yaml")
    args = [
        "simulate",
        research,
        "--generate",
        str(TEAMS),
        "--days",
        "7",
        "--json",
        "--startup-s",
        "0",
    ]
    result = runner.invoke(app, [*args, "--prices", str(prices)])
    assert result.exit_code == 0, result.output
    cost = json.loads(result.stdout)["research"]["cost"]
    jobs = simulated_jobs(load_organisation(research), generate_workload(load_teams(TEAMS), days=7))
    for row in cost["shares"]:  # every attempt, whole: the runs are billed to their end
        used = sum(
            (a.stopped_at - a.started_at) * j.request.demand[G5]
            for j in jobs
            if j.share_name == row["share"]
            for a in j.attempts
            if a.started_at is not None
        )
        assert row["ownInstanceHours"] + row["borrowedInstanceHours"] == pytest.approx(
            used / H, abs=1e-3
        )
        assert row["costUsd"] == pytest.approx(used / H * 1.41, abs=1e-2)
        assert row["idleUsd"] == 0  # on demand, idle quota costs nothing
    assert cost["jobsBilled"] == sum(j.status.value == "SUCCEEDED" for j in jobs)
    assert cost["sharingSavesUsd"] == pytest.approx(
        cost["separatePoolsCostUsd"] - cost["equalWorkCostUsd"], abs=1e-5
    )


def test_recommend_simulate_with_a_price_shows_the_money_table() -> None:
    args = ["recommend", str(TEAMS), "--simulate", "--days", "7", "--price", f"{G5}=1.41"]
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, args)
    assert result.exit_code in (0, 1), result.output  # 1: an expectation failed (advisor's)
    assert "Money: recommended" in result.stdout
    assert "Money: all-RESERVE" in result.stdout
    assert "Money: all-LEND_AND_BORROW" in result.stdout
    assert "jobs run to the end; the same jobs on separate pools" in result.stdout
    data = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    shares = data["simulation"]["recommended"]["cost"]["shares"]
    assert {r["share"] for r in shares} == {"recommendation", "generative", "data-analysis"}


def test_csv_cells_a_spreadsheet_would_run_are_quoted(files: dict[str, Path]) -> None:
    """A share whose name starts with ``-`` is text in a spreadsheet, not a formula; the
    numbers stay numbers."""
    name = "-calc"
    for key in ("org", "w"):
        files[key].write_text(files[key].read_text().replace("vision", name), encoding="utf-8")
    result = csv_report(files)
    assert result.exit_code == 0, result.output
    rows = result.stdout.splitlines()[1:]
    assert f"'{name},ml.g5.xlarge,3.0,0.0,0.0,0.0,0.0,4.23,4.23" in rows
    assert not any(row.startswith(name) for row in rows)


def test_a_simulated_bill_reads_calendars_where_the_simulator_placed_them() -> None:
    """research's data-analysis lends on weekdays only (RESERVE sat,sun): in a simulated bill
    of a generated week, what generative borrows equals what the lenders lent, pair by pair
    (the bill read the calendars from 1970-01-01, a Thursday, not the simulator's Monday)."""
    from quota_constructs.advisor.profiles import load_teams
    from quota_constructs.advisor.simulate import SimulationOptions
    from quota_constructs.advisor.workload import generate_workload
    from quota_constructs.commands.report import simulation_cost
    from quota_constructs.model.cost import Price

    org = load_organisation(ORGS_DIR / "research.yaml")
    jobs = generate_workload(load_teams(ORGS_DIR.parent / "teams" / "research.yaml"), days=7)
    report = simulation_cost(
        org, jobs, {G5: Price(on_demand=1.41)}, SimulationOptions(window_s=7 * 24 * H)
    )
    rows = {r.share: r for r in report.shares if r.instance_type == G5}
    assert sum(r.borrowed for r in rows.values()) > 0
    assert sum(r.lent for r in rows.values()) == pytest.approx(
        sum(r.borrowed for r in rows.values())
    )
    for borrower, row in rows.items():
        for lender, hours in row.borrowed_from.items():
            assert rows[lender].lent_to[borrower] == pytest.approx(hours)
