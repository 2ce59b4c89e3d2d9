"""Checks of a recommendation against simulated alternatives."""

from __future__ import annotations

from quota_constructs.advisor.profiles import parse_teams
from quota_constructs.advisor.recommend import Advice, recommend
from quota_constructs.advisor.simulate import SimulationResult, alternatives, compare
from quota_constructs.advisor.targets import (
    TargetCheck,
    check_line,
    check_targets,
    mean_figures,
    team_figures,
)
from quota_constructs.advisor.verify import verify
from quota_constructs.advisor.workload import WorkloadJob

GPU = "ml.g5.xlarge"
TEAMS = parse_teams(
    {
        "organisation": "lab",
        "teams": [
            {
                "name": "steady",
                "capacity": {GPU: 1},
                "workload": "scheduled",
                "lends_when_idle": True,
            },
            {
                "name": "bursty",
                "capacity": {GPU: 1},
                "workload": "experimental",
                "preemption_tolerant": True,
                "checkpointing": True,
                "needs_burst": True,
                "lends_when_idle": True,
            },
        ],
    }
)
# bursty runs two jobs at 0 (one borrows steady's idle unit); steady's job at 10 reclaims it.
# steady (LEND, no preemption tolerance) is never a victim: it never borrows.
JOBS = [
    WorkloadJob(0, "bursty", GPU, 1, 100, 1),
    WorkloadJob(0, "bursty", GPU, 1, 100, 1),
    WorkloadJob(10, "steady", GPU, 1, 50, 1),
]


def run() -> tuple[Advice, dict[str, SimulationResult]]:
    advice = recommend(TEAMS)
    configs = alternatives(advice.organisation)
    return advice, dict(zip(configs, compare(list(configs.values()), JOBS), strict=True))


def preempted_check(result: SimulationResult) -> TargetCheck:
    # the run's jobs 30 times over as one week: enough jobs for a verdict (targets.MIN_JOBS)
    checks = check_targets(TEAMS, [mean_figures([team_figures(result)] * 30)], days=1)
    [check] = [c for c in checks if c.team == "steady" and c.target == "max_preempted_share"]
    return check


def test_recommendation_meets_each_teams_expectation() -> None:
    advice, results = run()
    findings = verify(advice, results)
    [bursty] = [f for f in findings if f.ok is not None]
    assert bursty.ok and bursty.text.startswith("bursty: borrowed")
    check = preempted_check(results["recommended"])
    assert (check.limit, check.value, check.status) == (0.0, 0.0, "met")
    assert check_line(check) == (
        "steady: preempted <= 0% of jobs (0% preempted; met in 1 of 1 week, 30 jobs)"
    )


def test_flags_a_preempted_team_that_does_not_tolerate_preemption() -> None:
    advice, _ = run()
    # pretend the recommendation let steady borrow and be reclaimed: swap in a config where
    # the non-tolerant team is the borrower.
    swapped = [
        WorkloadJob(0, "steady", GPU, 1, 100, 1),
        WorkloadJob(0, "steady", GPU, 1, 100, 1),
        WorkloadJob(10, "bursty", GPU, 1, 50, 1),
    ]
    configs = alternatives(advice.organisation)
    full = compare([configs["all-LEND_AND_BORROW"]], swapped)[0]
    check = preempted_check(full)
    assert check.status == "missed"
    assert check_line(check) == (
        "steady: preempted <= 0% of jobs (50% preempted; met in 0 of 1 week, 60 jobs)"
    )
