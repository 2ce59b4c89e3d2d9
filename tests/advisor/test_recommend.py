"""Advisor decisions: the canonical research teams and edge cases, rules from the model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from quota_constructs.advisor.profiles import load_teams, parse_teams
from quota_constructs.advisor.recommend import Advice, recommend
from quota_constructs.advisor.simulate import SimulationOptions
from quota_constructs.advisor.sizing import capacities_needed, total_needed, with_capacities
from quota_constructs.advisor.targets import check_targets, weekly_figures
from quota_constructs.advisor.weeks import simulate_weeks, week_workloads
from quota_constructs.advisor.workload import GeneratorOptions
from quota_constructs.commands import app
from quota_constructs.config import load_organisation, parse_organisation
from quota_constructs.model import QuotaConfigError, SharingStrategy
from tests.advisor.helpers import ORG_FILE, TEAMS_FILE

GPU = "ml.g5.xlarge"


def advise(*teams: dict, prices: dict[str, float] | None = None) -> Advice:
    return recommend(parse_teams({"organisation": "lab", "teams": list(teams)}), prices=prices)


def team(name: str, capacity: int | dict[str, int] = 2, **facts: object) -> dict:
    cap = {GPU: capacity} if isinstance(capacity, int) else capacity
    return {"name": name, "capacity": cap, "workload": "experimental", **facts}


def by_name(advice: Advice) -> dict:
    return {t.share.name: t for t in advice.teams}


def test_canonical_recommendation_team_reserves_without_preemption() -> None:
    rec = by_name(recommend(load_teams(TEAMS_FILE)))["recommendation"]
    assert rec.share.strategy is SharingStrategy.RESERVE
    assert not rec.share.in_share_preemption and rec.share.borrow_limit is None
    assert rec.max_usable == {GPU: 2}
    assert "reserved capacity is never lent" in rec.rationale[0]
    assert "scheduled training that needs certainty" in rec.rationale[0]


def test_canonical_generative_team_borrows_what_data_analysis_lends() -> None:
    gen = by_name(recommend(load_teams(TEAMS_FILE)))["generative"]
    assert gen.share.strategy is SharingStrategy.LEND_AND_BORROW
    assert gen.share.in_share_preemption
    # data-analysis (LEND, 2 GPUs) is the only lender: 2 of generative's 4 = 50 %.
    assert gen.share.borrow_limit == 50
    assert gen.borrow_instances == {GPU: 2} and gen.max_usable == {GPU: 6}
    assert "s3://research-checkpoints/generative/" in gen.share.description
    assert gen.warnings == ()


def test_canonical_data_analysis_team_lends() -> None:
    data = by_name(recommend(load_teams(TEAMS_FILE)))["data-analysis"]
    assert data.share.strategy is SharingStrategy.LEND
    assert not data.share.in_share_preemption and data.share.borrow_limit is None
    assert "active sat,sun" in data.share.description


def test_committed_research_org_file_is_a_fresh_generation() -> None:
    assert ORG_FILE.read_text(encoding="utf-8") == recommend(load_teams(TEAMS_FILE)).to_yaml()


def test_generated_org_file_passes_the_loader_with_rationale_in_descriptions() -> None:
    advice = recommend(load_teams(TEAMS_FILE))
    org = parse_organisation(yaml.safe_load(advice.to_yaml()))
    assert org == advice.organisation
    assert all(s.description for s in org.queue.shares)
    assert load_organisation(ORG_FILE).name == "research"


def test_a_team_that_wants_to_borrow_but_not_to_lend_stays_reserve_with_a_warning() -> None:
    # Changed by issue 14: the wish not to lend is kept (it used to become LEND_AND_BORROW).
    t = by_name(
        advise(team("a", needs_burst=True, checkpointing=True), team("b", lends_when_idle=True))
    )["a"]
    assert t.share.strategy is SharingStrategy.RESERVE and t.share.borrow_limit is None
    assert "lends_when_idle: false is kept" in t.rationale[0]
    assert t.warnings[0].startswith("needs_burst: true but lends_when_idle: false")


def test_borrowing_without_checkpointing_is_capped_at_own_size_and_warned() -> None:
    t = by_name(
        advise(
            team("a", 2, needs_burst=True, lends_when_idle=True), team("b", 6, lends_when_idle=True)
        )
    )["a"]
    assert t.share.borrow_limit == 100 and t.borrow_instances == {GPU: 2}
    assert any(w.startswith("borrowing without checkpointing") for w in t.warnings)
    assert "others could lend 300%" in t.share.description


def test_checkpointing_borrower_may_reach_everything_lendable() -> None:
    t = by_name(
        advise(
            team("a", 2, needs_burst=True, lends_when_idle=True, checkpointing=True),
            team("b", 6, lends_when_idle=True),
            team("c", 4),
        )
    )["a"]
    # c is RESERVE: only b's 6 are lendable -> 300 % of 2.
    assert t.share.borrow_limit == 300 and t.max_usable == {GPU: 8}
    # b runs its own experiments on its 6: it leaves too little idle for a's demand
    assert [w.split(":")[0] for w in t.warnings] == ["overloaded"]


def test_borrow_limit_is_zero_and_said_when_there_is_nothing_to_borrow() -> None:
    lender = team("a", needs_burst=True, lends_when_idle=True, checkpointing=True)
    t = by_name(advise(lender, team("b")))["a"]
    assert t.share.borrow_limit == 0 and t.max_usable == {GPU: 2}
    assert "borrow limit 0: no other share lends any of the team's instance types" in " ".join(
        t.rationale
    )
    assert any(w.startswith(f"no other share lends {GPU}") for w in t.warnings)


def test_borrow_limit_never_exceeds_what_the_others_lend_of_any_type() -> None:
    # Changed by issue 14: the limit used to reach the most generous type (400 %) and overshoot.
    p4 = "ml.p4d.24xlarge"
    t = by_name(
        advise(
            team("a", {GPU: 1, p4: 2}, needs_burst=True, lends_when_idle=True, checkpointing=True),
            team("b", {GPU: 4, p4: 1}, lends_when_idle=True),
        )
    )["a"]
    # b lends 1 p4d of a's 2 (50 %) and 4 GPUs of a's 1 (400 %): the scarcer type decides.
    assert t.share.borrow_limit == 50
    assert t.share.borrow_cap(p4) == 1 and t.share.borrow_cap(GPU) == 0
    assert t.max_usable == {GPU: 1, p4: 3}
    assert f"reaches 0 of the 4 x {GPU} the other shares can lend" in " ".join(t.warnings)


def test_a_type_nobody_lends_does_not_hold_back_the_others() -> None:
    p4 = "ml.p4d.24xlarge"
    t = by_name(
        advise(
            team("a", {GPU: 2, p4: 1}, needs_burst=True, lends_when_idle=True, checkpointing=True),
            team("b", {p4: 2}, lends_when_idle=True),
            team("c", {GPU: 4}),
        )
    )["a"]
    assert t.share.borrow_limit == 200 and t.max_usable == {GPU: 2, p4: 3}
    assert any(w.startswith(f"no other share lends {GPU}") for w in t.warnings)


def test_warns_and_prices_reserved_capacity_idle_most_of_the_week() -> None:
    weekend = team("w", 2, workload="ad_hoc", active_days=["sat", "sun"])
    [warning] = by_name(advise(weekend, prices={GPU: 1.5}))["w"].warnings
    # the default weeks: about 6 ad hoc jobs a weekend of about 2.5 h on 2 instances with 5
    # min start-up each, about 29 of 336 instance-hours busy.
    assert warning.startswith("reserved capacity idle about 91% of the week (307 instance-hours")
    assert "on demand it costs nothing, on a training plan about $460 a week" in warning


def test_busy_reserved_team_gets_no_idle_warning() -> None:
    busy = team("s", 2, workload="scheduled", schedule="hourly", job_minutes={"p50": 40, "max": 50})
    assert by_name(advise(busy))["s"].warnings == ()


def test_warns_when_the_longest_run_and_start_up_reach_the_period() -> None:
    hourly = team("s", workload="scheduled", schedule="hourly", job_minutes={"p50": 55, "max": 70})
    assert by_name(advise(hourly))["s"].warnings[0] == (
        "runs of up to 70 min plus ~5 min start-up do not fit an hourly schedule: the next run "
        "waits; cap MaxRuntimeInSeconds below 55 min or schedule every 2 h"
    )


def test_a_teams_own_start_up_changes_the_fit_of_its_schedule() -> None:
    quick = team(
        "s",
        workload="scheduled",
        schedule="hourly",
        job_minutes={"p50": 40, "max": 50},
        startup_minutes=12,
    )
    [warning] = by_name(advise(quick))["s"].warnings
    assert warning.startswith("runs of up to 50 min plus ~12 min start-up do not fit an hourly")
    assert warning.endswith("cap MaxRuntimeInSeconds below 48 min or schedule every 2 h")


def test_warns_an_overloaded_team_with_instance_hours_demanded_and_available() -> None:
    # the default weeks: about 18 experiments a day of median 4 h on one GPU
    busy = team("o", 1, job_minutes={"p50": 240, "max": 480})
    advice = by_name(advise(busy))["o"]
    assert advice.warnings == (
        "overloaded: its jobs need about 613 ml.g5.xlarge instance-hours a week (the generated "
        "workload, start-up included) but it has 168 of its own (1 x ml.g5.xlarge) plus about 0 "
        "it can borrow of what the others leave idle; the organisation as a whole needs 613 of "
        "its 168 ml.g5.xlarge instance-hours (3.65x), so borrowing cannot cover it: its queue "
        "grows all week; add capacity (--simulate or --optimize find how much: capacityNeeded)",
    )
    assert round(advice.demand_instance_hours) == 613
    assert "Expected idle about 0% of the week (0 instance-hours" in advice.share.description


def _overloaded_organisation() -> Advice:
    """Three teams that each need about twice their own GPUs: every one can borrow from the
    others, but nobody leaves anything idle."""
    busy = {"job_minutes": {"p50": 240, "max": 480}, "needs_burst": True, "lends_when_idle": True}
    return advise(team("a", 1, **busy), team("b", 1, **busy), team("c", 1, **busy))


def test_every_team_of_an_overloaded_organisation_is_named() -> None:
    advice = _overloaded_organisation()
    for name, mine in by_name(advice).items():
        [warning] = [w for w in mine.warnings if w.startswith("overloaded:")]
        assert "plus about 0 it can borrow of what the others leave idle" in warning, name
        assert "the organisation as a whole needs" in warning
    [whole] = advice.warnings
    assert whole.startswith("organisation overloaded on ml.g5.xlarge: its teams' jobs need about")
    assert "teams needing more than their own: a (" in whole and ", b (" in whole
    assert ", c (" in whole


def test_a_team_borrows_only_what_the_others_leave_idle() -> None:
    # a needs about 300 h a week of its one GPU (168 h); b and c each lend one they barely use
    busy = {"job_minutes": {"p50": 120, "max": 240}, "needs_burst": True, "lends_when_idle": True}
    idle = {"workload": "ad_hoc", "lends_when_idle": True, "active_days": ["sat"]}
    advice = advise(team("a", 1, **busy), team("b", 1, **idle), team("c", 1, **idle))
    assert not [w for w in by_name(advice)["a"].warnings if w.startswith("overloaded:")]
    assert advice.warnings == ()


def test_joint_sizes_add_up_to_what_the_organisation_needs() -> None:
    # two overloaded teams that borrow from each other: each one's size depends on the other's
    busy = {
        "job_minutes": {"p50": 240, "max": 480},
        "targets": {"p90_wait_minutes": 1440},
        "needs_burst": True,
        "lends_when_idle": True,
        "preemption_tolerant": True,
        "checkpointing": True,
    }
    teams = parse_teams(
        {"organisation": "lab", "teams": [team("a", 1, **busy), team("b", 1, **busy)]}
    )
    options = SimulationOptions(window_s=7 * 86400.0)
    workloads = week_workloads(teams, days=7, seeds=range(3), options=GeneratorOptions())
    org = recommend(teams, workloads=workloads).organisation
    weeks = weekly_figures(simulate_weeks(org, workloads, options))
    checks = check_targets(teams, weeks, days=7)
    sizings = capacities_needed(
        org, teams, workloads, options=options, days=7, checks=checks, weeks=weeks
    )
    assert {s.team for s in sizings} == {"a", "b"}
    needed = {s.team: dict(s.needed or {}) for s in sizings}
    total = total_needed(sizings, org)
    assert total == {GPU: needed["a"][GPU] + needed["b"][GPU]}
    # the organisation with every size at once meets every sized target over the weeks
    grown = with_capacities(org, needed)
    after = check_targets(teams, weekly_figures(simulate_weeks(grown, workloads, options)), days=7)
    assert not [c for c in after if c.missed and c.target == "p90_wait_minutes"]


def test_recommend_cli_writes_an_org_file_that_org_validate_accepts(tmp_path: Path) -> None:
    out = tmp_path / "orgs" / "research.yaml"
    runner = CliRunner()
    result = runner.invoke(app, ["recommend", str(TEAMS_FILE), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "LEND_AND_BORROW" in result.output and "reserved capacity is never lent" in result.output
    assert out.read_text() == ORG_FILE.read_text()
    assert runner.invoke(app, ["org", "validate", str(out)]).exit_code == 0


def test_rejects_bad_profile_in_cli_with_one_line_per_problem(
    write_teams: Callable[..., Path],
) -> None:
    path = write_teams([{"name": "a b", "capacity": {GPU: 1}, "workload": "ad_hoc", "x": 1}])
    result = CliRunner().invoke(app, ["recommend", str(path)])
    assert result.exit_code == 2
    assert f"{path}: line 7: teams[0].x: unknown key" in result.output
    assert "Traceback" not in result.output


def test_rejects_malformed_price_option() -> None:
    result = CliRunner().invoke(app, ["recommend", str(TEAMS_FILE), "--price", "ml.g5.xlarge"])
    assert result.exit_code == 2
    assert "--price: expected TYPE=USD_PER_HOUR" in result.output


def test_team_access_is_copied_to_the_recommended_share() -> None:
    access = {"principals": ["444455556666"], "max_priority": 7, "bucket": "lab-data/team-a"}
    share = by_name(advise(team("a", access=access)))["a"].share
    assert share.access is not None
    assert share.access.principals == ("444455556666",)
    assert (share.access.max_priority, share.access.bucket) == (7, "lab-data/team-a")


def test_canonical_research_teams_each_get_their_access_block() -> None:
    shares = {s.name: s for s in load_organisation(ORG_FILE).queue.shares}
    assert {name: s.access.max_priority for name, s in shares.items() if s.access} == {
        "recommendation": 100,
        "generative": 50,
        "data-analysis": None,
    }


ML_PLATFORM = TEAMS_FILE.parent / "ml-platform.yaml"
P4D, G5 = "ml.p4d.24xlarge", "ml.g5.12xlarge"


def test_issue_user_case_cv_keeps_its_wish_not_to_lend() -> None:
    cv = by_name(recommend(load_teams(ML_PLATFORM)))["cv"]
    assert cv.share.strategy is SharingStrategy.RESERVE and cv.share.borrow_limit is None
    assert cv.max_usable == {G5: 4} and cv.borrow_instances == {G5: 0}
    assert cv.warnings[0].startswith("needs_burst: true but lends_when_idle: false")


def test_issue_user_case_research_llm_is_not_sized_on_capacity_nobody_lends() -> None:
    advice = recommend(load_teams(ML_PLATFORM))
    llm = by_name(advice)["research-llm"]
    queue = advice.organisation.queue
    # nlp-prod lends 2 p4d (200 % of research-llm's 1); cv lends nothing
    assert llm.share.borrow_limit == 200
    assert llm.max_usable == {P4D: 3, G5: 2} and llm.borrow_instances == {P4D: 2, G5: 0}
    assert llm.share.borrow_cap(P4D) == queue.lendable(P4D, excluding="research-llm") == 2
    assert any(w.startswith(f"no other share lends {G5}") for w in llm.warnings)
    assert not any("can never be reached" in w for w in llm.warnings)


def test_issue_user_case_daily_schedule_lends_its_idle_hours() -> None:
    nlp = by_name(recommend(load_teams(ML_PLATFORM)))["nlp-prod"]
    assert nlp.share.strategy is SharingStrategy.LEND and not nlp.share.in_share_preemption
    # one run of 3.2-4.8 h a day on 2 p4d (plus start-up): idle about 19.5 of 24 hours
    assert "Expected idle about 81% of the week" in nlp.share.description


def test_warns_when_scheduled_runs_last_longer_than_the_gap_between_them() -> None:
    hourly = team("s", workload="scheduled", schedule="hourly", job_minutes={"p50": 90, "max": 90})
    warning = by_name(advise(hourly))["s"].warnings[0]
    assert warning == (
        "runs of up to 90 min plus ~5 min start-up do not fit an hourly schedule: every run "
        "queues behind the last one; cap MaxRuntimeInSeconds below 55 min or schedule every 2 h"
    )


def test_rejects_a_price_for_an_instance_type_no_team_uses() -> None:
    with pytest.raises(QuotaConfigError) as info:
        advise(team("a"), prices={"ml.p5.48xlarge": 98.3})
    [problem] = info.value.problems
    assert str(problem).startswith(
        "prices: unknown instance type 'ml.p5.48xlarge': no team uses it (the teams use "
        f"{GPU}) (got 'ml.p5.48xlarge')"
    )


def test_rejects_negative_prices() -> None:
    with pytest.raises(QuotaConfigError, match="a price is 0 or more USD per hour"):
        advise(team("a"), prices={GPU: -1.0})


def test_cli_rejects_an_unknown_price_type_naming_the_known_ones() -> None:
    result = CliRunner().invoke(
        app, ["recommend", str(ML_PLATFORM), "--price", "ml.g5.xlarge=1.41"]
    )
    assert result.exit_code == 2
    assert "--price: unknown instance type 'ml.g5.xlarge': no team uses it" in result.output
    assert f"(the teams use {G5}, {P4D})" in result.output


def test_cli_prices_idle_reserved_capacity() -> None:
    result = CliRunner(env={"COLUMNS": "300"}).invoke(
        app, ["recommend", str(ML_PLATFORM), "--price", f"{G5}=7.09"]
    )
    assert result.exit_code == 0, result.output
    assert "reserved capacity idle about 73% of the week (488 instance-hours" in result.output
    assert "a week)" in result.output
