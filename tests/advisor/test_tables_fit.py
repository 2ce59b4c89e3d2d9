"""The advisor's tables at a terminal: at 80, 100, 120 and 200 columns every share name,
strategy and instance type stays whole on one line and no line is wider than the terminal."""

from __future__ import annotations

import pytest

from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.recommend import Advice, recommend
from quota_constructs.advisor.simulate import compare
from quota_constructs.advisor.workload import generate_workload
from quota_constructs.commands._reports import results_table
from quota_constructs.commands.advise import advice_table
from tests.helpers import ORGS_DIR, assert_whole, rendered

WIDTHS = (80, 100, 120, 200)
TEAMS = ORGS_DIR.parent / "teams" / "research.yaml"


@pytest.fixture(scope="module")
def advice() -> Advice:
    return recommend(load_teams(TEAMS))


@pytest.mark.parametrize("width", WIDTHS)
def test_the_recommendation_table_keeps_every_identifier_whole(advice: Advice, width: int) -> None:
    shares = advice.organisation.queue.shares
    identifiers = {s.name for s in shares} | {s.strategy.value for s in shares} | {"ml.g5.xlarge"}

    assert_whole(rendered(advice_table(advice), width), identifiers, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_what_if_table_keeps_every_identifier_whole(advice: Advice, width: int) -> None:
    teams = load_teams(TEAMS)
    jobs = generate_workload(teams, days=2, seed=0)
    results = compare([advice.organisation], jobs)
    shares = advice.organisation.queue.shares
    identifiers = {s.name for s in shares} | {s.strategy.value for s in shares}

    assert_whole(rendered(results_table(results, ["recommended"]), width), identifiers, width)
