"""A share's calendar: weekly windows that change its sharing settings, their rules, and the
settings in force at any moment with the next change (one source for every user of it).

A window names its days (``mon``..``sun``), optionally ``from``/``to`` (``HH:MM`` local time in
the calendar's IANA time zone; default the whole day, ``to`` may be ``24:00``) and the settings
that differ in it (``strategy``, ``borrow_limit``, ``in_share_preemption``). Outside every window
the share's own settings are in force. Windows never overlap and never cross midnight (an
overnight window is two windows).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import cache, cached_property
from importlib.resources import files
from typing import Any
from zoneinfo import ZoneInfo

from quota_constructs.model.problems import Problem, join_path
from quota_constructs.model.share import SHARE_FIELDS, QuotaShareSpec, SharingStrategy

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
"""Week days as the organisation file writes them, Monday first (``datetime.weekday()``)."""
DEFAULT_TIMEZONE = "UTC"
MAX_WINDOWS_PER_SHARE = 14
"""Most windows one share's calendar may have (stated bound: two per day)."""
SIMULATION_START = datetime(2024, 1, 1, tzinfo=UTC)
"""What simulated time 0 is (the simulator's, the advisor's workloads', the forecast backtest's):
a Monday, 00:00, to share calendars in each calendar's own time zone
(``advisor.simulate.on_simulated_clock``). One home for the advisor and the forecast, which may
not import each other."""
MINUTES_PER_DAY = 24 * 60
MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY
TIME_BODY = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00"
"""``HH:MM``, 00:00 to 23:59, and 24:00 (the end of a day, for ``to``)."""
_TIME = re.compile(TIME_BODY)
SETTING_KEYS = tuple(name for name, declared in SHARE_FIELDS.items() if declared.calendar)
"""The settings a window may change: the share fields declared ``ShareField.calendar`` (their
file keys, the same as the share's; ``ShareWindow`` has one field each, a test checks it)."""


def _minute_of(text: Any) -> int | None:
    """Minutes since midnight of ``HH:MM`` (``None`` when it is not one)."""
    if not isinstance(text, str) or not _TIME.fullmatch(text):
        return None
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


SettingsKey = tuple[Any, ...]
"""The values of :data:`SETTING_KEYS` as they take effect: equal keys, the same settings."""


def _settings_key(spec: QuotaShareSpec) -> SettingsKey:
    """The settings a window may change, as they take effect (an unset borrow limit is the
    strategy's own)."""
    return tuple(
        spec.effective_borrow_limit if key == "borrow_limit" else getattr(spec, key)
        for key in SETTING_KEYS
    )


@dataclass(frozen=True)
class ShareWindow:
    """Days and hours (local time) in which some of a share's settings differ."""

    days: tuple[str, ...]
    start: str = "00:00"
    """``from`` in the file."""
    end: str = "24:00"
    """``to`` in the file."""
    strategy: SharingStrategy | None = None
    borrow_limit: int | None = None
    in_share_preemption: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "days", tuple(self.days))
        if isinstance(self.strategy, str):
            object.__setattr__(self, "strategy", SharingStrategy(self.strategy))

    @property
    def span(self) -> tuple[int, int] | None:
        """``(from, to)`` in minutes since midnight; ``None`` when either is not ``HH:MM``."""
        start, end = _minute_of(self.start), _minute_of(self.end)
        return None if start is None or end is None else (start, end)

    def week_spans(self) -> list[tuple[int, int]]:
        """``(from, to)`` in minutes since Monday 00:00 (local), one per day it names; none
        when either time is not ``HH:MM`` (an unknown day is skipped)."""
        span = self.span
        if span is None:
            return []
        offsets = [DAYS.index(day) * MINUTES_PER_DAY for day in self.days if day in DAYS]
        return [(offset + span[0], offset + span[1]) for offset in offsets]

    def covers(self, weekday: int, minute: int) -> bool:
        """Whether local ``weekday`` (0 = Monday) at ``minute`` after midnight is inside."""
        span = self.span
        return span is not None and DAYS[weekday] in self.days and span[0] <= minute < span[1]

    def apply(self, base: QuotaShareSpec) -> QuotaShareSpec:
        """``base`` with this window's settings; a borrow limit is inherited only while the
        strategy in force borrows (AWS applies it only with LEND_AND_BORROW)."""
        strategy = self.strategy or base.strategy
        borrow_limit = self.borrow_limit
        if borrow_limit is None and strategy.borrows and base.strategy.borrows:
            borrow_limit = base.borrow_limit
        preemption = self.in_share_preemption
        return replace(
            base,
            strategy=strategy,
            borrow_limit=borrow_limit,
            in_share_preemption=base.in_share_preemption if preemption is None else preemption,
        )

    def label(self) -> str:
        """``sat,sun 00:00-24:00`` (days as written, local time)."""
        return f"{','.join(self.days)} {self.start}-{self.end}"

    def problems(self, base: QuotaShareSpec, path: str) -> list[Problem]:
        """This window's own rules; its settings checked by the share's rules (``base``)."""
        problems = self._day_problems(join_path(path, "days"))
        problems += self._time_problems(path)
        if all(getattr(self, key) is None for key in SETTING_KEYS):
            problems.append(
                Problem(
                    path,
                    self.label(),
                    "a window must set at least one of strategy, borrow_limit, in_share_preemption",
                    "add the setting that differs in this window, or remove the window",
                )
            )
            return problems
        applied = self.apply(base)
        own = tuple(join_path(path, key) for key in SETTING_KEYS)
        problems += [p for p in applied.problems(path) if p.path.startswith(own)]
        if not problems and _settings_key(applied) == _settings_key(base):
            problems.append(
                Problem(
                    path,
                    self.label(),
                    "this window changes nothing: its settings are the share's own",
                    "set a strategy, borrow_limit or in_share_preemption that differs from the "
                    "share's, or remove the window",
                )
            )
        return problems

    def _day_problems(self, path: str) -> list[Problem]:
        if not self.days:
            return [
                Problem(path, [], "a window needs at least one day", "list days, e.g. [sat, sun]")
            ]
        problems = [
            Problem(
                f"{path}[{index}]",
                day,
                "days are mon, tue, wed, thu, fri, sat, sun",
                "write the day's first three letters in lower case, e.g. sat",
            )
            for index, day in enumerate(self.days)
            if day not in DAYS
        ]
        for index, day in enumerate(self.days):
            if day in self.days[:index]:
                problems.append(
                    Problem(f"{path}[{index}]", day, "a day is listed twice", "list each day once")
                )
        return problems

    def _time_problems(self, path: str) -> list[Problem]:
        problems = []
        for key, text in (("from", self.start), ("to", self.end)):
            minute = _minute_of(text)
            if minute is None or (key == "from" and minute == MINUTES_PER_DAY):
                problems.append(
                    Problem(
                        join_path(path, key),
                        text,
                        f"'{key}' is a local time HH:MM, 00:00 to 23:59"
                        + (" or 24:00" if key == "to" else ""),
                        "quote it and write two digits each, e.g. '08:00'",
                    )
                )
        span = self.span
        if not problems and span is not None and span[0] >= span[1]:
            problems.append(
                Problem(
                    join_path(path, "to"),
                    self.end,
                    f"a window ends after it starts on the same day (from {self.start}); "
                    "an overnight window is two windows",
                    f"set 'to' after {self.start}, or split it: from {self.start} to '24:00', "
                    "then to the end time on the next days",
                )
            )
        return problems


@dataclass(frozen=True)
class WeeklyFlip:
    """When a share's settings are (re)applied each week: ``minute`` past each of ``hours`` on
    each of ``days``, local time; ``settings`` the share as it is from then on."""

    days: tuple[str, ...]
    hours: tuple[int, ...]
    minute: int
    settings: QuotaShareSpec


@dataclass(frozen=True)
class ScheduledChange:
    """A share's settings changing at ``time`` (UTC) to ``settings``."""

    time: datetime
    settings: QuotaShareSpec


@dataclass(frozen=True)
class ShareCalendar:
    """A share's weekly windows in one IANA time zone (``timezone``, default UTC)."""

    windows: tuple[ShareWindow, ...]
    timezone: str = DEFAULT_TIMEZONE

    def __post_init__(self) -> None:
        object.__setattr__(self, "windows", tuple(self.windows))

    @cached_property
    def zone(self) -> ZoneInfo:
        """The time zone; ``ValueError`` when :meth:`problems` would have refused it."""
        zone = _zone(self.timezone)
        if zone is None:
            raise ValueError(f"unknown IANA time zone {self.timezone!r}")
        return zone

    # --- rules ----------------------------------------------------------------------------

    def problems(self, base: QuotaShareSpec, path: str = "") -> list[Problem]:
        """Every rule the calendar breaks for share ``base`` (field paths below ``path``)."""
        problems: list[Problem] = []
        if _zone(self.timezone) is None:
            problems.append(
                Problem(
                    join_path(path, "timezone"),
                    self.timezone,
                    "not an IANA time zone name",
                    "use a name like 'Europe/Paris', 'America/New_York' or 'UTC' (names only "
                    "a host's files have, such as localtime, posixrules or right/UTC, mean "
                    "different times on different machines)",
                )
            )
        schedule = join_path(path, "schedule")
        if not 1 <= len(self.windows) <= MAX_WINDOWS_PER_SHARE:
            problems.append(
                Problem(
                    schedule,
                    len(self.windows),
                    f"a schedule has 1 to {MAX_WINDOWS_PER_SHARE} windows",
                    "list at least one window, or remove schedule and timezone"
                    if not self.windows
                    else "merge windows that share settings",
                )
            )
        for index, window in enumerate(self.windows):
            problems += window.problems(base, f"{schedule}[{index}]")
        return problems + self._overlap_problems(schedule)

    def _overlap_problems(self, schedule: str) -> list[Problem]:
        problems = []
        for later, window in enumerate(self.windows):
            for earlier, other in enumerate(self.windows[:later]):
                clash = _overlap(other, window)
                if clash is not None:
                    problems.append(
                        Problem(
                            f"{schedule}[{later}]",
                            window.label(),
                            f"windows must not overlap: schedule[{earlier}] ({other.label()}) "
                            f"also covers {clash}",
                            "change days or from/to so that no moment is in two windows",
                        )
                    )
        return problems

    # --- the settings in force ----------------------------------------------------------------

    def window_at(self, when: datetime) -> int | None:
        """Index of the window in force at ``when`` (an aware datetime); ``None``: none is."""
        local = when.astimezone(self.zone)
        minute = local.hour * 60 + local.minute
        for index, window in enumerate(self.windows):
            if window.covers(local.weekday(), minute):
                return index
        return None

    def in_force(self, base: QuotaShareSpec, when: datetime) -> QuotaShareSpec:
        """Share ``base`` with the settings in force at ``when``."""
        index = self.window_at(when)
        return base if index is None else self.windows[index].apply(base)

    def as_deployed(
        self, live: QuotaShareSpec, base: QuotaShareSpec, when: datetime
    ) -> QuotaShareSpec:
        """``live`` (a share read back at ``when``) with ``base``'s own settings when it has
        those this calendar puts in force at ``when``: the calendar's schedule changed them,
        not a deploy, so the stack still holds ``base``'s. Otherwise ``live`` unchanged."""
        if _settings_key(live) != _settings_key(self.in_force(base, when)):
            return live
        return replace(live, **{key: getattr(base, key) for key in SETTING_KEYS})

    def next_change(self, base: QuotaShareSpec, when: datetime) -> ScheduledChange | None:
        """The first moment after ``when`` at which the settings in force change, and the
        settings from then on; ``None`` when they never change (one window all week)."""
        now = _settings_key(self.in_force(base, when))
        for edge in self._edges_after(when):
            settings = self.in_force(base, edge)
            if _settings_key(settings) != now:
                return ScheduledChange(edge.astimezone(UTC), settings)
        return None

    def changes(
        self, base: QuotaShareSpec, after: datetime, until: datetime
    ) -> Iterator[ScheduledChange]:
        """Every change after ``after`` up to and including ``until``, in order."""
        change = self.next_change(base, after)
        while change is not None and change.time <= until:
            yield change
            change = self.next_change(base, change.time)

    def _edges_after(self, when: datetime) -> Iterator[datetime]:
        """Window starts and ends after ``when``, in order, over the next eight days."""
        local = when.astimezone(self.zone)
        monday = datetime.combine(
            local.date() - timedelta(days=local.weekday()), datetime.min.time()
        )
        minutes = sorted(self._edge_minutes())
        for week in (0, 1):
            for minute in minutes:
                naive = monday + timedelta(weeks=week, minutes=minute)
                edge = naive.replace(tzinfo=self.zone)
                if edge > when:
                    yield edge

    def _edge_minutes(self) -> set[int]:
        """Minutes since Monday 00:00 (local) where a window starts or ends."""
        edges = set()
        for window in self.windows:
            for start, end in window.week_spans():
                edges |= {start, end % MINUTES_PER_WEEK}
        return edges

    # --- for infrastructure ------------------------------------------------------------------

    def weekly_flips(self, base: QuotaShareSpec) -> tuple[WeeklyFlip, ...]:
        """When to apply which settings each week: at every change, and again on every whole
        hour that is wholly inside one setting (so a change undone in between, e.g. by a
        deploy, is re-applied within the hour)."""
        settings = [base, *(w.apply(base) for w in self.windows)]
        index_at = self._index_by_minute()
        key_at = [_settings_key(settings[i]) for i in index_at]
        points = {m for m in range(MINUTES_PER_WEEK) if key_at[m] != key_at[m - 1]}
        points |= {m for m in range(0, MINUTES_PER_WEEK, 60) if len(set(key_at[m : m + 60])) == 1}
        hours: dict[tuple[SettingsKey, int, str], set[int]] = {}
        spec_of: dict[SettingsKey, QuotaShareSpec] = {}
        for m in sorted(points):
            key = key_at[m]
            spec_of.setdefault(key, settings[index_at[m]])
            day, minute = DAYS[m // MINUTES_PER_DAY], m % MINUTES_PER_DAY
            hours.setdefault((key, minute % 60, day), set()).add(minute // 60)
        grouped: dict[tuple[SettingsKey, int, tuple[int, ...]], list[str]] = {}
        for (key, minute, day), hour_set in hours.items():
            grouped.setdefault((key, minute, tuple(sorted(hour_set))), []).append(day)
        return tuple(
            WeeklyFlip(tuple(days), hour_list, minute, spec_of[key])
            for (key, minute, hour_list), days in grouped.items()
        )

    def _index_by_minute(self) -> list[int]:
        """Per minute of the week (Monday 00:00 first): 0 for the share's own settings,
        1 + the window's index inside a window (the first window wins, as in ``window_at``)."""
        index = [0] * MINUTES_PER_WEEK
        for number, window in reversed(list(enumerate(self.windows, start=1))):
            for start, end in window.week_spans():
                index[start:end] = [number] * (end - start)
        return index


@cache
def iana_zone_names() -> frozenset[str]:
    """The IANA time zone names of the tzdata package the project pins (not the host's files,
    which add ``localtime``, ``posixrules`` and ``right/...``, whose meaning depends on the
    machine), without ``Factory`` (a placeholder that names no place's time)."""
    names = files("tzdata").joinpath("zones").read_text(encoding="utf-8").split()
    return frozenset(names) - {"Factory"}


def _zone(name: Any) -> ZoneInfo | None:
    """The zone ``name`` names, read from the pinned tzdata (the same rules on every machine);
    ``None`` when it is not an IANA name."""
    if not isinstance(name, str) or name not in iana_zone_names():
        return None
    return _tzdata_zone(name)


@cache
def _tzdata_zone(name: str) -> ZoneInfo:
    with files("tzdata.zoneinfo").joinpath(*name.split("/")).open("rb") as data:
        return ZoneInfo.from_file(data, key=name)


def _overlap(one: ShareWindow, other: ShareWindow) -> str | None:
    """``sat 08:00-12:00``: the first day and time both windows cover; ``None``: none."""
    a, b = one.span, other.span
    if a is None or b is None:
        return None
    start, end = max(a[0], b[0]), min(a[1], b[1])
    if start >= end:
        return None
    for day in DAYS:
        if day in one.days and day in other.days:
            return f"{day} {start // 60:02d}:{start % 60:02d}-{end // 60:02d}:{end % 60:02d}"
    return None


def scheduled_changes(
    calendars: Mapping[str, ShareCalendar],
    shares: Iterable[QuotaShareSpec],
    after: datetime,
    until: datetime,
) -> list[ScheduledChange]:
    """Every share's calendar changes in ``(after, until]``, in time order (then share order)."""
    found: list[tuple[datetime, int, ScheduledChange]] = []
    for order, share in enumerate(shares):
        calendar = calendars.get(share.name)
        if calendar is not None:
            found += [(c.time, order, c) for c in calendar.changes(share, after, until)]
    return [change for _, _, change in sorted(found, key=lambda item: item[:2])]
