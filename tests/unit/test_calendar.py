"""A share's calendar: its rules (each message exact, with the file's line), the settings in
force at a moment, the next change, and the weekly flips the infrastructure applies."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from quota_constructs.config import OrganisationFile, OrgFileError, load_organisation
from quota_constructs.model import (
    QuotaShareSpec,
    ShareCalendar,
    ShareWindow,
    SharingStrategy,
    scheduled_changes,
)

LENDER = QuotaShareSpec("weekday", {"ml.g5.xlarge": 4}, SharingStrategy.LEND)
WEEKEND_RESERVE = ShareCalendar((ShareWindow(("sat", "sun"), strategy=SharingStrategy.RESERVE),))
FRIDAY_NOON = datetime(2026, 12, 4, 12, tzinfo=UTC)  # a Friday

HEAD = """organisation: cal-demo
shares:
  - name: weekday
    capacity: {ml.g5.xlarge: 4}
    strategy: LEND
"""


def errors_of(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "org.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    with pytest.raises(OrgFileError) as info:
        load_organisation(path)
    return [str(p) for p in info.value.problems]


def test_the_simple_case_loads_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "org.yaml"
    path.write_text(HEAD + "    schedule: [{days: [sat, sun], strategy: RESERVE}]\n")
    org = load_organisation(path)
    assert org.calendars == {"weekday": WEEKEND_RESERVE}
    text = OrganisationFile.from_organisation(org).to_yaml()
    assert "schedule:" in text and "timezone" not in text
    (tmp_path / "again.yaml").write_text(text)
    assert load_organisation(tmp_path / "again.yaml") == org


def test_settings_in_force_and_next_change_in_utc() -> None:
    assert WEEKEND_RESERVE.in_force(LENDER, FRIDAY_NOON) == LENDER
    change = WEEKEND_RESERVE.next_change(LENDER, FRIDAY_NOON)
    assert change is not None
    assert change.time == datetime(2026, 12, 5, tzinfo=UTC)
    assert change.settings.strategy is SharingStrategy.RESERVE
    back = WEEKEND_RESERVE.next_change(LENDER, change.time)
    assert back is not None and back.time == datetime(2026, 12, 7, tzinfo=UTC)
    assert back.settings == LENDER
    assert WEEKEND_RESERVE.window_at(datetime(2026, 12, 6, 23, 59, tzinfo=UTC)) == 0


def test_times_are_local_to_the_stated_time_zone_across_daylight_saving() -> None:
    office = ShareCalendar(
        (
            ShareWindow(
                ("mon", "tue", "wed", "thu", "fri"),
                "08:00",
                "18:00",
                strategy=SharingStrategy.RESERVE,
            ),
        ),
        timezone="Europe/Paris",
    )
    winter = office.next_change(LENDER, datetime(2026, 12, 7, 0, tzinfo=UTC))
    summer = office.next_change(LENDER, datetime(2026, 6, 1, 0, tzinfo=UTC))
    assert winter is not None and winter.time == datetime(2026, 12, 7, 7, tzinfo=UTC)
    assert summer is not None and summer.time == datetime(2026, 6, 1, 6, tzinfo=UTC)


def test_a_window_of_a_non_borrowing_strategy_drops_the_inherited_borrow_limit() -> None:
    borrower = QuotaShareSpec("b", {"ml.g5.xlarge": 2}, SharingStrategy.LEND_AND_BORROW, 200)
    reserved = WEEKEND_RESERVE.in_force(borrower, datetime(2026, 12, 5, 1, tzinfo=UTC))
    assert reserved.strategy is SharingStrategy.RESERVE and reserved.borrow_limit is None
    assert WEEKEND_RESERVE.problems(borrower, "shares[0]") == []


def test_changes_of_every_share_come_in_time_order() -> None:
    other = QuotaShareSpec("nights", {"ml.g5.xlarge": 2}, SharingStrategy.LEND)
    nights = ShareCalendar(
        (ShareWindow(("fri",), "20:00", "24:00", strategy=SharingStrategy.RESERVE),)
    )
    found = scheduled_changes(
        {"weekday": WEEKEND_RESERVE, "nights": nights},
        [LENDER, other],
        FRIDAY_NOON,
        datetime(2026, 12, 5, tzinfo=UTC),
    )
    assert [(c.time.hour, c.settings.name) for c in found] == [
        (20, "nights"),
        (0, "weekday"),
        (0, "nights"),
    ]


def test_weekly_flips_apply_each_change_and_reapply_every_whole_hour() -> None:
    office = ShareCalendar(
        (
            ShareWindow(
                ("mon", "tue", "wed", "thu", "fri"),
                "08:30",
                "17:00",
                strategy=SharingStrategy.RESERVE,
            ),
        )
    )
    flips = {
        (f.days, f.hours, f.minute, f.settings.strategy.value) for f in office.weekly_flips(LENDER)
    }
    weekdays = ("mon", "tue", "wed", "thu", "fri")
    assert flips == {
        (weekdays, (*range(8), *range(17, 24)), 0, "LEND"),
        (weekdays, (8,), 30, "RESERVE"),
        (weekdays, tuple(range(9, 17)), 0, "RESERVE"),
        (("sat", "sun"), tuple(range(24)), 0, "LEND"),
    }


def test_every_problem_names_field_value_and_fix_with_its_line(tmp_path: Path) -> None:
    body = """    timezone: Europe/Pariss
    schedule:
      - days: [sat, sun]
        strategy: RESERVE
      - days: [sun, sunday, sun]
        from: "20:00"
        to: "08:00"
        borrow_limit: 50
      - days: [fri]
        from: "8:00"
        strategy: LEND
      - days: [sat]
        from: "10:00"
        to: "12:00"
        in_share_preemption: true
      - days: []
        strategy: RESERVE
"""
    assert errors_of(tmp_path, body) == [
        "line 6: shares[0].timezone: not an IANA time zone name (got 'Europe/Pariss'); "
        "fix: use a name like 'Europe/Paris', 'America/New_York' or 'UTC' (names only a "
        "host's files have, such as localtime, posixrules or right/UTC, mean different times "
        "on different machines)",
        "line 10: shares[0].schedule[1].days[1]: days are mon, tue, wed, thu, fri, sat, sun "
        "(got 'sunday'); fix: write the day's first three letters in lower case, e.g. sat",
        "line 10: shares[0].schedule[1].days[2]: a day is listed twice (got 'sun'); "
        "fix: list each day once",
        "line 12: shares[0].schedule[1].to: a window ends after it starts on the same day "
        "(from 20:00); an overnight window is two windows (got '08:00'); fix: set 'to' after "
        "20:00, or split it: from 20:00 to '24:00', then to the end time on the next days",
        "line 13: shares[0].schedule[1].borrow_limit: borrow_limit is only allowed with "
        "strategy LEND_AND_BORROW, not LEND (got 50); fix: remove borrow_limit or set "
        "strategy: LEND_AND_BORROW",
        "line 15: shares[0].schedule[2].from: 'from' is a local time HH:MM, 00:00 to 23:59 "
        "(got '8:00'); fix: quote it and write two digits each, e.g. '08:00'",
        "line 21: shares[0].schedule[4].days: a window needs at least one day (got []); "
        "fix: list days, e.g. [sat, sun]",
        "line 17: shares[0].schedule[3]: windows must not overlap: schedule[0] "
        "(sat,sun 00:00-24:00) also covers sat 10:00-12:00 (got 'sat 10:00-12:00'); "
        "fix: change days or from/to so that no moment is in two windows",
    ]


def test_a_window_without_a_setting_and_a_misspelt_key(tmp_path: Path) -> None:
    body = """    schedule:
      - days: [sat]
        form: "08:00"
"""
    assert errors_of(tmp_path, body) == [
        "line 8: shares[0].schedule[0].form: unknown key (got '08:00'); fix: did you mean 'from'?",
        "line 7: shares[0].schedule[0]: a window must set at least one of strategy, "
        "borrow_limit, in_share_preemption (got 'sat 00:00-24:00'); fix: add the setting "
        "that differs in this window, or remove the window",
    ]


def test_an_empty_schedule_and_too_many_windows(tmp_path: Path) -> None:
    assert errors_of(tmp_path, "    timezone: UTC\n") == [
        "line 3: shares[0].schedule: a schedule has 1 to 14 windows (got 0); fix: list at "
        "least one window, or remove schedule and timezone",
    ]
    windows = "".join(
        f"      - {{days: [mon], from: '{h:02d}:00', to: '{h:02d}:30', strategy: RESERVE}}\n"
        for h in range(15)
    )
    assert errors_of(tmp_path, "    schedule:\n" + windows) == [
        "line 6: shares[0].schedule: a schedule has 1 to 14 windows (got 15); fix: merge "
        "windows that share settings",
    ]


@pytest.mark.parametrize("name", ["localtime", "posixrules", "right/UTC", "Factory", "posix/UTC"])
def test_rejects_time_zones_only_the_host_knows(tmp_path: Path, name: str) -> None:
    body = f"""    timezone: {name}
    schedule:
      - days: [sat, sun]
        strategy: RESERVE
"""
    (error,) = errors_of(tmp_path, body)
    assert error.startswith(
        f"line 6: shares[0].timezone: not an IANA time zone name (got '{name}')"
    )


@pytest.mark.parametrize(
    "name", ["Europe/Paris", "America/Argentina/Buenos_Aires", "UTC", "Etc/GMT+5"]
)
def test_accepts_iana_time_zones_from_the_pinned_tzdata(name: str) -> None:
    from quota_constructs.model.calendar import iana_zone_names

    assert name in iana_zone_names()
    calendar = ShareCalendar(
        timezone=name, windows=(ShareWindow(days=("sat",), strategy=SharingStrategy.RESERVE),)
    )
    assert calendar.zone.key == name
