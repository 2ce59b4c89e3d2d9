"""The advisor proposes a calendar for a lender active on some days only: RESERVE on its active
days, LEND on the others, with the reason; the written file carries it, the table shows it and
the simulator of the written organisation honours it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from typer.testing import CliRunner

from quota_constructs.advisor.profiles import load_teams, parse_teams
from quota_constructs.advisor.recommend import recommend
from quota_constructs.commands import app
from quota_constructs.config import load_organisation
from quota_constructs.model import ShareCalendar, ShareWindow, SharingStrategy
from tests.advisor.helpers import ORG_FILE, TEAMS_FILE

GPU = "ml.g5.xlarge"
REASON = (
    "calendar: RESERVE on sat,sun (UTC), LEND on the other days: its capacity is kept for its "
    "own jobs on its active days (they never wait for a reclaim and no borrower is preempted "
    "when they arrive) and lent when it is idle"
)


def test_the_weekend_research_team_gets_reserve_at_weekends_with_the_reason() -> None:
    advice = recommend(load_teams(TEAMS_FILE))
    assert dict(advice.organisation.calendars) == {
        "data-analysis": ShareCalendar(
            (ShareWindow(("sat", "sun"), strategy=SharingStrategy.RESERVE),)
        )
    }
    (data,) = [t for t in advice.teams if t.share.name == "data-analysis"]
    assert REASON in data.rationale
    assert data.share.strategy is SharingStrategy.LEND
    saturday = datetime(2026, 12, 5, 12, tzinfo=UTC)
    assert advice.organisation.shares_in_force(saturday)[2].strategy is SharingStrategy.RESERVE


def test_the_committed_research_file_carries_the_calendar() -> None:
    org = load_organisation(ORG_FILE)
    assert set(org.calendars) == {"data-analysis"}


def test_no_calendar_for_borrowers_reservers_or_teams_active_every_day() -> None:
    base = {"capacity": {GPU: 2}, "workload": "experimental"}
    teams = parse_teams(
        {
            "organisation": "lab",
            "teams": [
                {
                    **base,
                    "name": "burst",
                    "needs_burst": True,
                    "lends_when_idle": True,
                    "active_days": ["mon"],
                },
                {**base, "name": "keep", "lends_when_idle": False, "active_days": ["mon"]},
                {**base, "name": "daily", "lends_when_idle": True},
                {
                    **base,
                    "name": "weekday",
                    "lends_when_idle": True,
                    "active_days": ["fri", "mon", "tue"],
                },
            ],
        }
    )
    calendars = recommend(teams).organisation.calendars
    assert list(calendars) == ["weekday"]
    assert calendars["weekday"].windows[0].days == ("mon", "tue", "fri")


def test_the_table_and_json_show_the_window() -> None:
    runner = CliRunner()
    table = runner.invoke(app, ["recommend", str(TEAMS_FILE)])
    assert table.exit_code == 0, table.output
    row = next(line for line in table.stdout.splitlines() if "data-analysis" in line)
    assert "LEND (RESERVE sat,sun)" in row
    data = json.loads(runner.invoke(app, ["recommend", str(TEAMS_FILE), "--json"]).stdout)
    assert data["teams"]["data-analysis"]["schedule"] == {
        "timezone": "UTC",
        "windows": [
            {"days": ["sat", "sun"], "from": "00:00", "to": "24:00", "strategy": "RESERVE"}
        ],
    }
    assert data["teams"]["generative"]["schedule"] is None
