"""The advisor sizes a training plan: each plan size priced over the weeks (the plan backs that
many instances in its window, the rest on demand; a run its stop ends runs again on demand),
by the cost model, the targets checked.

Expected figures are computed here from the simulated job records (instances x run time), not
by the cost model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from quota_constructs.advisor.profiles import parse_teams
from quota_constructs.advisor.reserve import Reservation, ReserveWindow, size_reservations
from quota_constructs.advisor.simulate import SimulationOptions, simulated_jobs
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.commands import app
from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
    mixed_capacity_at,
)
from quota_constructs.model.cost import MissingPrice, Price

H = 3600.0
DAY = 24 * H
P5, G5 = "ml.p5.48xlarge", "ml.g5.xlarge"
PRICES = {P5: Price(on_demand=100.0, training_plan=60.0)}  # break-even: 60 % plan use
ORG = Organisation(
    name="lab",
    queue=JobQueueSpec(
        shares=(
            QuotaShareSpec("llm", {P5: 4}, SharingStrategy.LEND_AND_BORROW),
            QuotaShareSpec("cv", {G5: 1}, SharingStrategy.RESERVE),
        )
    ),
)
TEAMS = parse_teams(
    {
        "organisation": "lab",
        "teams": [
            {
                "name": "llm",
                "capacity": {P5: 4},
                "workload": "experimental",
                "preemption_tolerant": True,
                "targets": {"p90_wait_minutes": 10},
            },
            {"name": "cv", "capacity": {G5: 1}, "workload": "ad_hoc"},
        ],
    }
)
WEEK = SimulationOptions(window_s=7 * DAY)
STEADY = [WorkloadJob(0.0, "llm", P5, 1, 6 * DAY, 1) for _ in range(2)]  # 2 busy for 6 days
BURST = [WorkloadJob(0.0, "llm", P5, 1, DAY, 1) for _ in range(4)]  # 4 for one day
CV = [WorkloadJob(0.0, "cv", G5, 1, H, 1)]


def _instance_hours(jobs: list[WorkloadJob]) -> float:
    """Instance-hours of P5 the simulated job records ran (all on demand, no plan)."""
    return sum(
        (j.stopped_at - j.started_at) * j.demand.get(P5, 0) / H
        for j in simulated_jobs(ORG, jobs, options=WEEK)
        if j.started_at is not None and j.stopped_at is not None
    )


def _sized(jobs: list[WorkloadJob], window: ReserveWindow | None = None) -> Reservation:
    (reservation,) = size_reservations(
        ORG, TEAMS, [jobs], PRICES, options=WEEK, days=7, window=window
    )
    return reservation


def test_steady_demand_of_two_reserves_two() -> None:
    used = _instance_hours(STEADY + CV)  # 2 x 144 h
    assert used == 288.0
    reservation = _sized(STEADY + CV)
    window = 168.0
    expected = {
        k: k * window * 60.0 + max(used - min(k, 2) * used / 2, 0.0) * 100.0 for k in range(5)
    }
    assert {c.instances: round(c.total_usd, 6) for c in reservation.candidates} == expected
    assert reservation.best is not None and reservation.best.instances == 2
    best = reservation.best
    assert (best.reserved_usd, best.on_demand_usd) == (2 * window * 60.0, 0.0)
    assert best.all_on_demand_usd == used * 100.0
    assert best.utilisation == pytest.approx(used / (2 * window))
    assert best.idle_hours == pytest.approx(2 * window - used)
    assert reservation.break_even == 0.6
    assert reservation.reasons[1] == (
        "reserve 2 x ml.p5.48xlarge for 168 h: 20,160.00 USD (20,160.00 USD plan + 0.00 USD "
        "on demand) against 28,800.00 USD all on demand, saves 8,640.00 USD; the plan is used 86%"
    )
    assert reservation.reasons[2] == (
        "3 reserved: the extra instance would be used 0% (break-even 60%) and costs "
        "30,240.00 USD in all"
    )


def test_a_one_day_burst_reserves_none() -> None:
    used = _instance_hours(BURST + CV)
    assert used == 96.0
    reservation = _sized(BURST + CV)
    assert reservation.best is not None and reservation.best.instances == 0
    one = reservation.candidates[1]
    assert one.utilisation == pytest.approx(24 / 168)
    assert one.total_usd == pytest.approx(168 * 60.0 + (used - 24) * 100.0)
    assert reservation.reasons[1] == (
        "reserve no ml.p5.48xlarge: on demand costs 9,600.00 USD (1 instance would be used 14%)"
    )


def test_a_plan_for_the_burst_day_alone_reserves_all_four() -> None:
    reservation = _sized(BURST + CV, window=ReserveWindow(0, 25))  # runs 24.5 h of 25
    assert reservation.best is not None and reservation.best.instances == 4
    assert reservation.best.total_usd == pytest.approx(4 * 25 * 60.0)
    assert reservation.best.utilisation == pytest.approx(96 / 100)


A_B = [WorkloadJob(0.0, "llm", P5, 4, 11.6 * H, 1), WorkloadJob(11.55 * H, "llm", P5, 4, H, 1)]


def test_a_run_the_plans_stop_ends_runs_again_on_demand_and_is_billed_as_such() -> None:
    # A (4 instances) runs to 11.6 h; B (4) comes at 11.55 h and runs 11.6-12.6 h. A 12 h plan
    # of k: SageMaker stops its instances at 11.5 h, A ends there (11.5 h of it on the plan)
    # and runs again on demand: the 0.1 h left of it and the 11.5 h it lost (no checkpoints).
    reservation = _sized([*A_B, *CV], window=ReserveWindow(0, 12))
    lost = 4 * (0.1 + 11.5)
    for k, c in enumerate(reservation.candidates):
        on_plan = min(k, 4) * (11.5 + 0.4)  # A up to its stop, B until the plan's end
        a_billed = 4 * (11.5 if k else 11.6)  # A clipped at the stop when there is a plan
        on_demand = a_billed + 4 * 1.0 - on_plan + (lost if k else 0.0)
        assert c.reruns == (1 if k else 0)
        assert c.total_usd == pytest.approx(k * 12 * 60.0 + on_demand * 100.0)
    # the plan's end costs no target: every size keeps what on demand meets
    assert all(c.keeps(reservation.candidates[0]) for c in reservation.candidates)
    assert reservation.best is reservation.candidates[0]  # the rerun makes every plan dearer
    plan = ReserveWindow(0, 12).plan(P5, 3)
    assert [mixed_capacity_at([plan], P5, plan.start_s + t * H, 4) for t in (0, 11.5, 12)] == [
        4,
        1,
        4,
    ]


def test_a_checkpointing_run_the_plans_stop_ends_redoes_only_what_it_lost() -> None:
    jobs = [replace(job, checkpoint_interval_s=H) for job in A_B]
    reservation = _sized([*jobs, *CV], window=ReserveWindow(0, 12))
    four = reservation.candidates[4]
    # A kept 11 h by its checkpoints: it runs again for 0.1 h left + 0.5 h lost
    on_demand = 4 * 0.6 + 4 * (0.1 + 0.5)
    assert four.total_usd == pytest.approx(4 * 12 * 60.0 + on_demand * 100.0)


def test_the_recommended_size_is_the_cheapest_of_the_sweep_over_the_weeks(
    tmp_path: Path,
) -> None:
    # An hourly team on 2 p5 whose runs fill about 85 % of each hour: a plan of 2 is used
    # above the 60 % break-even; the last run of the week, stopped 30 min before the plan's
    # end, runs again on demand and does not exclude the plan.
    teams = (
        "organisation: lab\nteams:\n  - name: hourly\n    capacity: {ml.p5.48xlarge: 2}\n"
        "    workload: scheduled\n    schedule: hourly\n    job_minutes: {p50: 45, max: 50}\n"
    )
    result = _cli(
        tmp_path,
        teams,
        "ml.p5.48xlarge: {on_demand: 100, training_plan: 60}\n",
        "--json",
        "--weeks",
        "3",
    )
    assert result.exit_code == 0, result.output
    reserve = json.loads(result.stdout)["reserve"]
    sizes = reserve["sizes"]
    assert [s["instances"] for s in sizes] == [0, 1, 2]
    assert all(s["targetsKept"] for s in sizes)
    cheapest = min(sizes, key=lambda s: s["expectedTotalUsd"])
    assert reserve["recommended"] == {P5: cheapest["instances"]} == {P5: 2}
    for s in sizes:
        assert s["worstTotalUsd"] >= s["expectedTotalUsd"]
        assert set(s) == {
            "instanceType",
            "instances",
            "expectedTotalUsd",
            "worstTotalUsd",
            "planUtilisation",
            "targetsKept",
        }
    assert sizes[2]["planUtilisation"] > 0.6


def test_rejects_a_missing_price_naming_the_type() -> None:
    with pytest.raises(MissingPrice) as error:
        size_reservations(ORG, TEAMS, [STEADY], {G5: Price(1.0)}, options=WEEK, days=7)
    assert str(error.value).splitlines()[-1].strip() == (
        "--prices: no price for instance type ml.p5.48xlarge (prices given: "
        "ml.g5.xlarge) (got 'ml.p5.48xlarge'); fix: add 'ml.p5.48xlarge: USD per "
        "instance-hour' to the prices file"
    )


def test_rejects_a_price_without_a_training_plan_rate() -> None:
    with pytest.raises(QuotaConfigError) as error:
        size_reservations(ORG, TEAMS, [STEADY], {P5: Price(100.0)}, options=WEEK, days=7)
    assert str(error.value).splitlines()[-1].strip() == (
        "--prices: ml.p5.48xlarge: no training_plan price for ml.p5.48xlarge: reserving it "
        "cannot be priced (got 100.0); fix: write 'ml.p5.48xlarge: {on_demand: USD, "
        "training_plan: USD}' (USD per instance-hour; the plan's up-front fee over its hours)"
    )


def _cli(tmp_path: Path, teams: str, prices: str, *extra: str) -> Result:
    (tmp_path / "teams.yaml").write_text(teams, encoding="utf-8")
    (tmp_path / "prices.yaml").write_text(prices, encoding="utf-8")
    args = ["recommend", str(tmp_path / "teams.yaml"), "--reserve"]
    return CliRunner().invoke(app, [*args, "--prices", str(tmp_path / "prices.yaml"), *extra])


ML_PLATFORM = Path(__file__).resolve().parents[2] / "stacks" / "teams" / "ml-platform.yaml"
ML_PRICES = "ml.p4d.24xlarge: {on_demand: 32.77, training_plan: 20.0}\n"


def test_quota_recommend_reserve_json_lists_every_size_and_the_one_to_buy(tmp_path: Path) -> None:
    result = _cli(tmp_path, ML_PLATFORM.read_text(), ML_PRICES, "--json")
    data = json.loads(result.stdout)
    (p4d,) = data["reservations"]
    assert data["notReservable"] == ["ml.g5.12xlarge"]
    assert (p4d["instanceType"], p4d["capacity"]) == ("ml.p4d.24xlarge", 3)
    assert [c["instances"] for c in p4d["candidates"]] == [0, 1, 2, 3]
    assert p4d["window"] == {
        "start": "2024-01-01T00:00:00Z",
        "startHours": 0,
        "durationHours": 168,
        "planStopBeforeEndS": 1800.0,
    }
    for c in p4d["candidates"]:
        assert c["totalUsd"] == pytest.approx(c["reservedUsd"] + c["onDemandUsd"])
        assert c["reservedUsd"] == pytest.approx(c["instances"] * 168 * 20.0)
        assert c["idleInstanceHours"] == pytest.approx(
            c["reservedInstanceHours"] - c["planInstanceHours"]
        )
    cheapest = min(p4d["candidates"], key=lambda c: c["totalUsd"])
    assert p4d["recommendedInstances"] == cheapest["instances"]
    assert data["reserve"]["recommended"] == {"ml.p4d.24xlarge": cheapest["instances"]}
    # its teams miss targets on demand already (capacity): exit 1, named on stderr
    assert result.exit_code == 1
    assert "3 target(s) missed with 0 reserved, teams: cv, research-llm" in result.stderr


def test_rejects_reserve_without_prices(tmp_path: Path) -> None:
    (tmp_path / "teams.yaml").write_text(ML_PLATFORM.read_text(), encoding="utf-8")
    result = CliRunner().invoke(app, ["recommend", str(tmp_path / "teams.yaml"), "--reserve"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: --prices: --reserve needs a prices file (got None); fix: pass --prices FILE with "
        "'TYPE: {on_demand: USD, training_plan: USD}' entries"
    )


def test_rejects_a_prices_file_missing_a_reservable_type(tmp_path: Path) -> None:
    result = _cli(tmp_path, ML_PLATFORM.read_text(), "ml.g5.12xlarge: 7.09\n")
    assert result.exit_code == 2
    assert "no price for instance type ml.p4d.24xlarge (prices given: ml.g5.12xlarge)" in (
        result.stderr
    )


def test_rejects_a_plan_window_outside_the_simulation(tmp_path: Path) -> None:
    result = _cli(tmp_path, ML_PLATFORM.read_text(), ML_PRICES, "--reserve-start-hours", "200")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: --reserve-start-hours: the plan must start inside the simulated 168 hours "
        "(got 200); fix: use 0 to 167"
    )


BUSY_P5 = """organisation: lab
teams:
  - name: hourly
    capacity: {ml.p5.48xlarge: 4}
    workload: scheduled
    schedule: hourly
    job_minutes: {p50: 45, max: 50}
    instances_per_job: 2
  - name: llm
    capacity: {ml.p5.48xlarge: 4}
    workload: experimental
    preemption_tolerant: true
    checkpointing: true
    needs_burst: true
    lends_when_idle: true
"""


def test_the_recommended_size_is_the_same_for_disjoint_blocks_of_weeks(tmp_path: Path) -> None:
    # over one week the same profile gets 3, 2, 4 and 4 for seeds 0-3 (docs/advisor.md)
    prices = "ml.p5.48xlarge: {on_demand: 100, training_plan: 60}\n"
    recommended = []
    for seed in ("0", "20"):
        result = _cli(tmp_path, BUSY_P5, prices, "--json", "--seed", seed)
        recommended.append(json.loads(result.stdout)["reserve"]["recommended"])
    assert recommended == [{P5: 4}, {P5: 4}]
