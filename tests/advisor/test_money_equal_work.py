"""Money on equal work (docs/cost.md): every compared configuration bills the same jobs run to
their end; jobs a run did not finish are named with what finishing them on demand costs; the
saving printed is the difference of two runs; lost work is a cost per team; the billed part of
the start-up is billed; lent equals borrowed in every simulated bill."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from quota_constructs.advisor.billing import Run, equal_work_bills
from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.recommend import recommend
from quota_constructs.advisor.simulate import SimulationOptions, simulated_jobs
from quota_constructs.advisor.workload import WorkloadJob, generate_workload
from quota_constructs.commands import app
from quota_constructs.config import OrganisationFile, load_organisation
from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    QuotaShareSpec,
    ShareCalendar,
    ShareWindow,
    SharingStrategy,
)
from quota_constructs.model.cost import Price

STACKS = Path(__file__).resolve().parents[2] / "stacks"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "examples"
GPU = "ml.g5.xlarge"
H = 3600.0
PRICE = 2.0
PRICES = {GPU: Price(PRICE)}
SHARING = Organisation(
    name="lab",
    queue=JobQueueSpec(
        shares=(
            QuotaShareSpec("a", {GPU: 2}, SharingStrategy.LEND_AND_BORROW, borrow_limit=100),
            QuotaShareSpec("b", {GPU: 2}, SharingStrategy.LEND),
        )
    ),
)
RESERVE = Organisation(
    name="lab",
    queue=JobQueueSpec(
        shares=(
            QuotaShareSpec("a", {GPU: 2}, SharingStrategy.RESERVE),
            QuotaShareSpec("b", {GPU: 2}, SharingStrategy.RESERVE),
        )
    ),
)
# a borrows b's 2 GPUs at 0 for 2 h (no checkpoints); b reclaims them at 1 h: a's borrowed job
# loses 1 h on 2 instances and runs again. Under all-RESERVE a's 3-GPU job never starts.
JOBS = [
    WorkloadJob(0.0, "a", GPU, 2, 2 * H, 1),
    WorkloadJob(1.0, "a", GPU, 2, 2 * H, 1),
    WorkloadJob(H, "b", GPU, 2, H, 1),
    WorkloadJob(2.0, "a", GPU, 3, H, 1),
]
INSTANT = SimulationOptions(preemption_s=0)


def _write_org(path: Path, org: Organisation) -> Path:
    path.write_text(OrganisationFile.from_organisation(org).to_yaml(), encoding="utf-8")
    return path


def _workload_csv(path: Path, jobs: list[WorkloadJob]) -> Path:
    rows = ["submit_time_s,share,instance_type,instance_count,duration_s,priority"]
    rows += [
        f"{j.submit_time_s:g},{j.share},{j.instance_type},{j.instance_count},{j.duration_s:g},"
        f"{j.priority}"
        for j in jobs
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _report(tmp_path: Path, org: Path, workload: Path, *extra: str) -> dict[str, Any]:
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"{GPU}: {PRICE}\n", encoding="utf-8")
    args = ["report", str(org), "--workload", str(workload), "--prices", str(prices), "--json"]
    result = CliRunner().invoke(app, [*args, *extra])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def test_the_saving_is_the_difference_of_two_runs_of_the_same_completed_jobs(
    tmp_path: Path,
) -> None:
    jobs = JOBS[:3]  # every job finishes in both runs
    workload = _workload_csv(tmp_path / "w.csv", jobs)
    shared = _report(tmp_path, _write_org(tmp_path / "s.yaml", SHARING), workload)
    alone = _report(tmp_path, _write_org(tmp_path / "r.yaml", RESERVE), workload)
    assert shared["jobsBilled"] == alone["jobsBilled"] == 3
    assert shared["jobsUnfinished"] == alone["jobsUnfinished"] == 0
    # on demand only: the plan-free bills do not depend on the period, so two separate
    # commands give the two runs' costs; the saving printed is their difference
    assert shared["sharingSavesUsd"] == pytest.approx(
        alone["totalCostUsd"] - shared["totalCostUsd"]
    )
    assert shared["separatePoolsCostUsd"] == pytest.approx(alone["totalCostUsd"])
    # sharing on demand costs more here: a's borrowed job (from 1 s) lost its run on 2 GPUs
    # to b's reclaim at 1 h and the 20 s preemption
    assert shared["sharingSavesUsd"] == pytest.approx(-2 * PRICE * (H + 19) / H)


def test_a_job_a_run_does_not_finish_is_named_with_what_finishing_it_costs(
    tmp_path: Path,
) -> None:
    workload = _workload_csv(tmp_path / "w.csv", JOBS)
    shared = _report(tmp_path, _write_org(tmp_path / "s.yaml", SHARING), workload)
    alone = _report(tmp_path, _write_org(tmp_path / "r.yaml", RESERVE), workload)
    assert (shared["jobsBilled"], shared["jobsUnfinished"]) == (4, 0)
    assert (alone["jobsBilled"], alone["jobsUnfinished"]) == (3, 1)
    (left,) = alone["unfinishedJobs"]
    assert (left["share"], left["instances"]) == ("a", 3)
    assert left["wouldCostUsd"] == pytest.approx(3 * 1 * PRICE)  # 3 GPUs for its 1 h
    assert alone["equalWorkCostUsd"] == pytest.approx(alone["totalCostUsd"] + 3 * PRICE)
    # the shared run's saving is against the all-RESERVE run of the same jobs, finished
    assert shared["separatePoolsCostUsd"] == pytest.approx(alone["equalWorkCostUsd"])
    assert shared["sharingSavesUsd"] == pytest.approx(
        alone["equalWorkCostUsd"] - shared["totalCostUsd"]
    )


def test_lost_work_is_a_cost_per_team(tmp_path: Path) -> None:
    workload = _workload_csv(tmp_path / "w.csv", JOBS[:3])
    shared = _report(tmp_path, _write_org(tmp_path / "s.yaml", SHARING), workload)
    assert shared["teams"]["a"]["lostUsd"] == pytest.approx(2 * PRICE * (H + 19) / H)
    assert shared["teams"]["b"]["lostUsd"] == 0
    (row,) = [r for r in shared["shares"] if r["share"] == "a"]
    assert row["lostUsd"] == pytest.approx(row["lostInstanceHours"] * PRICE)


def test_the_billed_part_of_the_start_up_is_billed_and_the_rest_is_not(tmp_path: Path) -> None:
    job = [WorkloadJob(0.0, "b", GPU, 2, H, 1)]
    workload = _workload_csv(tmp_path / "w.csv", job)
    org = _write_org(tmp_path / "r.yaml", RESERVE)
    none = _report(tmp_path, org, workload)
    billed = _report(tmp_path, org, workload, "--startup-s", "300", "--billed-startup-s", "120")
    assert none["totalCostUsd"] == pytest.approx(2 * PRICE)
    assert billed["totalCostUsd"] == pytest.approx(2 * PRICE * (H + 120) / H)
    capped = _report(tmp_path, org, workload, "--startup-s", "60", "--billed-startup-s", "120")
    assert capped["totalCostUsd"] == pytest.approx(2 * PRICE * (H + 60) / H)


def test_a_comparison_bills_every_run_over_one_period_to_the_end() -> None:
    options = replace(INSTANT, window_s=H)  # the window ends long before the runs do
    runs = {
        label: Run(org, simulated_jobs(org, JOBS, options=options))
        for label, org in (("shared", SHARING), ("all-RESERVE", RESERVE))
    }
    bills = equal_work_bills(
        runs, PRICES, options, baseline_of={"shared": "all-RESERVE", "all-RESERVE": "all-RESERVE"}
    )
    shared, alone = bills["shared"], bills["all-RESERVE"]
    assert shared.report.end_s == alone.report.end_s > H
    run_hours = sum(r.own + r.borrowed for r in shared.report.shares)
    worked = sum(j.instance_count * j.duration_s for j in JOBS) / H
    lost = 2 * (H - 1) / H  # a's borrowed job ran from 1 s to b's reclaim at 1 h, on 2 GPUs
    assert run_hours == pytest.approx(worked + lost)  # every job whole, and the lost work
    assert alone.saving_usd == 0
    assert shared.saving_usd == pytest.approx(alone.equal_work_usd - shared.equal_work_usd)


def _lent_and_borrowed(report: Any) -> tuple[dict[str, float], dict[str, float]]:
    lent: dict[str, float] = defaultdict(float)
    borrowed: dict[str, float] = defaultdict(float)
    for row in report.shares:
        lent[row.instance_type] += row.lent
        borrowed[row.instance_type] += row.borrowed
    return dict(lent), dict(borrowed)


def _recommended(name: str) -> Organisation:
    return recommend(load_teams(STACKS / "teams" / name)).organisation


def _berlin_weekend() -> Organisation:
    weekend = ShareCalendar(
        (ShareWindow(("sat", "sun"), strategy=SharingStrategy.RESERVE),),
        timezone="Europe/Berlin",
    )
    return replace(SHARING, calendars={"b": weekend})


ORGANISATIONS = {
    "research (recommended, calendars)": lambda: _recommended("research.yaml"),
    "ml-platform (recommended)": lambda: _recommended("ml-platform.yaml"),
    "research (organisation file)": lambda: load_organisation(STACKS / "orgs" / "research.yaml"),
    "plans-demo (training plan)": lambda: load_organisation(DOCS / "plan-org.yaml"),
    "a calendar in Europe/Berlin": _berlin_weekend,
}


@pytest.mark.parametrize("name", sorted(ORGANISATIONS))
def test_lent_equals_borrowed_in_every_simulated_bill(name: str) -> None:
    org = ORGANISATIONS[name]()
    shares = org.queue.shares
    total: dict[str, int] = defaultdict(int)
    for share in shares:
        for itype, count in share.capacity.items():
            total[itype] += count
    types = sorted(total)
    # every 4 h one share (in turn) submits as many 1-instance, 3 h jobs of one of its types as
    # the whole organisation holds: it runs its own and borrows what the lenders leave idle
    jobs = [
        WorkloadJob(k * 4 * H + i, shares[k % len(shares)].name, itype, 1, 3 * H, 1)
        for k in range(42)
        for itype in [sorted(shares[k % len(shares)].capacity)[k % 2 - 1]]
        for i in range(total[itype])
    ]
    options = SimulationOptions(startup_s=300, window_s=4 * 86400.0)
    start = min((p.start_s for p in org.training_plans), default=0.0)
    prices = {t: Price(1.0, 0.5) for t in types}
    run = Run(org, simulated_jobs(org, jobs, options=replace(options, plan_epoch_s=start)), start)
    bill = equal_work_bills({"run": run}, prices, options)["run"]
    lent, borrowed = _lent_and_borrowed(bill.report)
    assert sum(borrowed.values()) > 0, "the workload must make someone borrow"
    for itype in types:
        assert lent.get(itype, 0.0) == pytest.approx(borrowed.get(itype, 0.0), abs=1e-6)


def test_a_generated_week_of_research_lends_what_it_borrows_in_quota_simulate(
    tmp_path: Path,
) -> None:
    advice = recommend(load_teams(STACKS / "teams" / "research.yaml"))
    org = _write_org(tmp_path / "research.yaml", advice.organisation)
    prices = tmp_path / "prices.yaml"
    types = sorted({t for s in advice.organisation.queue.shares for t in s.capacity})
    prices.write_text(yaml.safe_dump(dict.fromkeys(types, 10.0)), encoding="utf-8")
    args = ["simulate", str(org), "--generate", str(STACKS / "teams" / "research.yaml")]
    result = CliRunner().invoke(app, [*args, "--prices", str(prices), "--json"])
    assert result.exit_code == 0, result.output
    (data,) = json.loads(result.stdout).values()
    cost = data["cost"]
    lent = math.fsum(r["lentInstanceHours"] for r in cost["shares"])
    borrowed = math.fsum(r["borrowedInstanceHours"] for r in cost["shares"])
    assert lent == pytest.approx(borrowed, abs=1e-3)
    assert cost["jobsBilled"] + cost["jobsUnfinished"] == sum(s["jobs"] for s in data["shares"])
    assert set(cost["teams"]) == {s.name for s in advice.organisation.queue.shares}
    assert all("lostUsd" in team for team in cost["teams"].values())


def test_every_recommended_configuration_carries_its_jobs_billed_and_unfinished() -> None:
    args = ["recommend", str(STACKS / "teams" / "research.yaml"), "--simulate", "--json"]
    types = {"ml.g5.xlarge": 1.41, "ml.p4d.24xlarge": 37.69, "ml.p5.48xlarge": 98.32}
    teams = load_teams(STACKS / "teams" / "research.yaml")
    used = {t for team in teams.teams for t in team.capacity}
    priced = [f"--price={t}={usd}" for t, usd in types.items() if t in used]
    result = CliRunner().invoke(app, [*args, *priced])
    assert result.exit_code in (0, 1), result.output
    simulation = json.loads(result.stdout)["simulation"]
    jobs = len(generate_workload(teams, days=7, seed=0))
    reserve = simulation["all-RESERVE"]["cost"]
    for label in ("recommended", "all-RESERVE", "all-LEND_AND_BORROW"):
        cost = simulation[label]["cost"]
        assert cost["jobsBilled"] + cost["jobsUnfinished"] == jobs, label
        assert cost["separatePoolsCostUsd"] == pytest.approx(reserve["equalWorkCostUsd"])
        assert cost["sharingSavesUsd"] == pytest.approx(
            reserve["equalWorkCostUsd"] - cost["equalWorkCostUsd"], abs=1e-5
        )


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/Los_Angeles", "Asia/Tokyo"])
def test_time_zero_is_monday_midnight_in_the_calendars_own_time_zone(zone: str) -> None:
    """A weekday team borrows the weekend team's GPU from Friday 22:00; the weekend team's
    calendar (RESERVE on sat,sun in ``zone``) takes it back at simulated Saturday 00:00 in
    every zone, and its bill lends exactly what the borrower borrowed."""
    weekend = ShareCalendar(
        (ShareWindow(("sat", "sun"), strategy=SharingStrategy.RESERVE),), timezone=zone
    )
    org = replace(SHARING, calendars={"b": weekend})
    saturday = 5 * 86400.0
    jobs = [
        WorkloadJob(saturday - 2 * H, "a", GPU, 4, 6 * H, 1),  # 2 own + b's 2 borrowed
        WorkloadJob(saturday + 3 * H, "b", GPU, 2, H, 1),
    ]
    result_jobs = simulated_jobs(org, jobs, options=INSTANT)
    (borrower, _) = result_jobs
    (stopped,) = [a for a in borrower.attempts if a.preempted]
    assert stopped.stopped_at == saturday  # LIMIT_LOWERED at the local Saturday edge
    bill = equal_work_bills({"run": Run(org, result_jobs)}, PRICES, INSTANT)["run"]
    lent, borrowed = _lent_and_borrowed(bill.report)
    assert lent[GPU] == pytest.approx(borrowed[GPU]) == pytest.approx(2 * 2 * H / H)


@pytest.mark.parametrize("grace_h", [0, 1, 2, 5])
def test_a_calendar_grace_keeps_the_lender_lending_in_the_bill(grace_h: int) -> None:
    """With ``--calendar-grace``, borrowers of a share whose calendar stops it lending stay
    until the grace ends: the bill counts the share as their lender until then."""
    weekend = ShareCalendar((ShareWindow(("sat", "sun"), strategy=SharingStrategy.RESERVE),))
    org = replace(SHARING, calendars={"b": weekend})
    saturday = 5 * 86400.0
    jobs = [
        WorkloadJob(saturday - 2 * H, "a", GPU, 4, 6 * H, 1),
        WorkloadJob(saturday + 3 * H, "b", GPU, 2, H, 1),
    ]
    options = SimulationOptions(preemption_s=0, calendar_grace_s=grace_h * H)
    run = Run(org, simulated_jobs(org, jobs, options=options))
    bill = equal_work_bills({"run": run}, PRICES, options)["run"]
    lent, borrowed = _lent_and_borrowed(bill.report)
    assert borrowed[GPU] >= 2 * (2 + min(grace_h, 3))  # before the edge, and in the grace
    assert lent[GPU] == pytest.approx(borrowed[GPU])
