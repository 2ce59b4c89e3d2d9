"""The advisor's tables at a terminal: at 80, 100, 120 and 200 columns every share name,
strategy and instance type stays whole on one line and no line is wider than the terminal."""

from __future__ import annotations

import io

import pytest

from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.recommend import Advice, recommend
from quota_constructs.advisor.simulate import compare
from quota_constructs.advisor.workload import generate_workload
from quota_constructs.commands._common import TextConsole
from quota_constructs.commands._reports import results_table
from quota_constructs.commands.advise import advice_table
from quota_constructs.config import ORGS_DIR

WIDTHS = (80, 100, 120, 200)
TEAMS = ORGS_DIR.parent / "teams" / "research.yaml"


def rendered(table: object, width: int) -> list[str]:
    console = TextConsole(width=width, file=io.StringIO(), highlight=False, soft_wrap=True)
    console.print(table)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue().splitlines()


def assert_whole(lines: list[str], identifiers: set[str], width: int) -> None:
    broken = {i for i in identifiers if not any(i in line for line in lines)}
    assert not broken, f"broken over lines at {width} columns: {sorted(broken)}"
    assert max(len(line) for line in lines) <= width, f"wider than {width} columns"


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
