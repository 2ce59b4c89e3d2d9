"""The one cost model: on-demand, reserved (training plans) and mixed, figures by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from quota_constructs.config import parse_organisation
from quota_constructs.model import Organisation, QuotaConfigError, TrainingPlanSpec, parse_utc
from quota_constructs.model.cost import (
    Attempt,
    ChargeRule,
    CostReport,
    MissingPrice,
    Price,
    ShareCost,
    cost_report,
    parse_prices,
)

H = 3600.0
P5, G5 = "ml.p5.48xlarge", "ml.g5.xlarge"
START = parse_utc("2027-06-01T00:00:00Z") or 0.0
PLAN = {
    "name": "p5-june",
    "instance_type": P5,
    "instance_count": 8,
    "start": "2027-06-01T00:00:00Z",
    "duration_hours": 336,
}
PRICES = {P5: Price(100.0, 60.0), G5: Price(1.5)}


def org(plans: list[dict[str, object]] | None = None) -> Organisation:
    """llm: 6 x p5 LEND_AND_BORROW; vision: 2 x p5 and 4 x g5, LEND."""
    return parse_organisation(
        {
            "organisation": "money",
            "shares": [
                {"name": "llm", "capacity": {P5: 6}, "strategy": "LEND_AND_BORROW"},
                {"name": "vision", "capacity": {P5: 2, G5: 4}, "strategy": "LEND"},
            ],
            "training_plans": plans or [],
        }
    )


def row(report: CostReport, share: str, itype: str) -> ShareCost:
    return next(r for r in report.shares if (r.share, r.instance_type) == (share, itype))


def test_on_demand_bills_every_attempt_per_second_preempted_ones_included() -> None:
    attempts = [
        Attempt("llm", P5, 8, START, START + 1800.0, preempted=True),  # 8 x 0.5 h, thrown away
        Attempt("llm", P5, 8, START + 5400.0, START + 9000.0),  # 8 x 1 h
        Attempt("vision", P5, 2, START + 1800.0, START + 1801.0),  # one second
    ]
    report = cost_report(org(), attempts, PRICES, start_s=START, end_s=START + 10 * H)
    llm, vision = row(report, "llm", P5), row(report, "vision", P5)
    assert llm.cost_usd == pytest.approx((4 + 8) * 100.0)
    assert llm.lost == pytest.approx(4.0)
    assert vision.cost_usd == pytest.approx(2 * 100.0 / H)
    # idle on-demand quota costs nothing: the total is exactly what ran
    assert report.total_cost_usd == pytest.approx(1200.0 + 200.0 / H)
    assert all(r.idle == 0 for r in report.shares)
    # unused own capacity is still reported: vision's 2 sat unused from 0.5 h to 1.5 h (but one
    # second) and after 2.5 h, free of charge
    assert vision.unused == pytest.approx(2 * (1 - 1 / H) + 2 * 7.5)
    assert all(r.charge_usd == pytest.approx(r.cost_usd) for r in report.shares)
    assert report.plans == []
    assert report.fixed_pools_cost_usd == pytest.approx(report.total_cost_usd)
    # llm ran 8 on 6 of its own: 2 borrowed from vision, its only lender
    assert llm.own == pytest.approx(6 * 1.5)
    assert llm.borrowed == pytest.approx(2 * 1.5)
    assert llm.borrowed_from == {"vision": pytest.approx(3.0)}
    assert vision.lent_to == {"llm": pytest.approx(3.0)}


def reserved_report(rule: ChargeRule = ChargeRule.BOTH) -> CostReport:
    attempts = [
        Attempt("llm", P5, 8, START, START + 2 * H),
        Attempt("vision", P5, 2, START + 2 * H, START + 3 * H, preempted=True),
    ]
    return cost_report(
        org([PLAN]), attempts, PRICES, start_s=START, end_s=START + 10 * H, rule=rule
    )


def test_reserved_pays_the_fee_over_the_window_and_counts_idle_hours_as_waste() -> None:
    report = reserved_report()
    (plan,) = report.plans
    assert plan.reserved == pytest.approx(80.0)  # 8 instances x the 10 h of the period
    assert plan.used == pytest.approx(18.0)  # llm 8 x 2 h, vision 2 x 1 h
    assert plan.idle == pytest.approx(62.0)
    assert plan.utilisation == pytest.approx(18 / 80)
    assert plan.cost_usd == pytest.approx(80 * 60.0)
    assert report.total_cost_usd == pytest.approx(4800.0)
    llm, vision = row(report, "llm", P5), row(report, "vision", P5)
    # idle: llm 6 from 2 h to 3 h, 6 x 7 h after; vision 2 x 7 h after 3 h (it lent before)
    assert llm.idle == pytest.approx(48.0)
    assert vision.idle == pytest.approx(14.0)
    assert llm.charge_usd == pytest.approx(16 * 60.0 + 48 * 60.0)
    assert vision.charge_usd == pytest.approx(2 * 60.0 + 14 * 60.0)
    # on separate pools llm's 4 borrowed instance-hours would be bought on-demand
    assert report.fixed_pools_cost_usd == pytest.approx(4800.0 + 4 * 100.0)


@pytest.mark.parametrize("rule", list(ChargeRule))
def test_every_charge_rule_adds_up_to_the_total(rule: ChargeRule) -> None:
    report = reserved_report(rule)
    charges = sum(r.charge_usd for r in report.shares)
    assert charges == pytest.approx(report.total_cost_usd)


def test_usage_and_capacity_rules_split_the_plan_cost() -> None:
    usage = reserved_report(ChargeRule.USAGE)
    assert row(usage, "llm", P5).charge_usd == pytest.approx(4800 * 16 / 18)
    capacity = reserved_report(ChargeRule.CAPACITY)
    assert row(capacity, "vision", P5).charge_usd == pytest.approx(4800 * 2 / 8)


def test_mixed_plan_type_outside_its_window_and_another_type_are_on_demand() -> None:
    plan = {**PLAN, "duration_hours": 2}
    attempts = [
        Attempt("llm", P5, 6, START + 1 * H, START + 4 * H),  # 1 h-2 h on the plan, 2 h after
        Attempt("vision", G5, 4, START, START + 2 * H),
    ]
    report = cost_report(org([plan]), attempts, PRICES, start_s=START, end_s=START + 4 * H)
    llm = row(report, "llm", P5)
    assert llm.plan == pytest.approx(6.0)
    assert llm.on_demand == pytest.approx(12.0)
    assert llm.cost_usd == pytest.approx(6 * 60.0 + 12 * 100.0)
    (p,) = report.plans
    assert (p.reserved, p.used, p.cost_usd) == (16.0, 6.0, 960.0)
    assert report.total_cost_usd == pytest.approx(960 + 1200 + 8 * 1.5)
    assert sum(r.charge_usd for r in report.shares) == pytest.approx(report.total_cost_usd)


def test_a_missing_price_names_the_type() -> None:
    attempts = [Attempt("vision", G5, 1, START, START + H)]
    with pytest.raises(MissingPrice) as caught:
        cost_report(org(), attempts, {P5: Price(1.0)}, start_s=START, end_s=START + H)
    assert str(caught.value) == (
        "--prices: no price for instance type ml.g5.xlarge (prices given: ml.p5.48xlarge) "
        "(got 'ml.g5.xlarge'); fix: add 'ml.g5.xlarge: USD per instance-hour' to the prices file"
    )


def test_prices_read_plain_and_with_a_plan_rate_and_refuse_bad_values() -> None:
    prices = parse_prices({G5: 1.41, P5: {"on_demand": 98.32, "training_plan": 60}}, "p.yaml")
    assert prices == {G5: Price(1.41), P5: Price(98.32, 60.0)}
    assert prices[G5].plan_rate == 1.41
    with pytest.raises(QuotaConfigError) as caught:
        parse_prices({G5: "cheap", P5: {"reserved": 1}}, "p.yaml")
    assert [str(p) for p in caught.value.problems] == [
        "p.yaml: ml.g5.xlarge: a price must be a number of USD per instance-hour, 0 or more "
        "(got 'cheap'); fix: e.g. 1.41",
        "p.yaml: ml.p5.48xlarge.reserved: unknown key (got 'reserved'); fix: use on_demand or "
        "training_plan",
        "p.yaml: ml.p5.48xlarge: on_demand is missing (got {'reserved': 1}); fix: add "
        "on_demand: USD per instance-hour",
    ]


def test_a_plan_backing_part_of_the_capacity_makes_only_its_free_instances_idle() -> None:
    # 8 x p5 held, a plan of 2 (the rest on demand, as the reservation sizing simulates it);
    # llm runs 1 instance for the plan's 10 hours: 1 plan instance is idle, not 7.
    plan = TrainingPlanSpec("p5-june", P5, 2, "2027-06-01T00:00:00Z", duration_hours=10)
    mixed = replace(org(), training_plans=(plan,))
    attempts = [Attempt("llm", P5, 1, START, START + 10 * H)]
    report = cost_report(mixed, attempts, PRICES, start_s=START, end_s=START + 10 * H)
    (p5_plan,) = report.plans
    assert (p5_plan.used, p5_plan.idle) == (pytest.approx(10.0), pytest.approx(10.0))
    idle = {s: row(report, s, P5).idle for s in ("llm", "vision")}
    assert sum(idle.values()) == pytest.approx(10.0)
    assert idle["llm"] == pytest.approx(10.0 * 5 / 7)  # its 5 unused of the 7 unused instances
    assert row(report, "llm", P5).unused == pytest.approx(50.0)
