"""The shares' calendars as ``quota status`` and ``quota org diff`` show them: the window in
force at a moment, the settings it puts in force and the next change (the model's functions)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from rich.table import Table

from quota_constructs.api_shapes import share_sharing_settings
from quota_constructs.commands._common import data_table
from quota_constructs.model import Organisation


def organisation_in_force(org: Organisation, when: datetime) -> Organisation:
    """``org`` with each share's settings as its calendar has them at ``when``."""
    return replace(org, queue=replace(org.queue, shares=org.shares_in_force(when)))


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def calendar_rows(org: Organisation, when: datetime) -> list[dict[str, Any]]:
    """Per share with a calendar: the window in force at ``when`` (``None``: the share's own
    settings), the settings in force, and the next change (time and settings), for ``--json``."""
    rows = []
    for share in org.queue.shares:
        calendar = org.calendars.get(share.name)
        if calendar is None:
            continue
        index = calendar.window_at(when)
        change = calendar.next_change(share, when)
        rows.append(
            {
                "quotaShareName": share.name,
                "timezone": calendar.timezone,
                "window": None if index is None else calendar.windows[index].label(),
                "inForce": share_sharing_settings(calendar.in_force(share, when)),
                "nextChange": None if change is None else _iso(change.time),
                "nextSettings": None if change is None else share_sharing_settings(change.settings),
            }
        )
    return rows


def _settings_cell(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items() if v is not None)


def calendar_table(org: Organisation, when: datetime) -> Table:
    """The calendar rows as a table titled with the moment they are for."""
    table = data_table(
        "share",
        "window now",
        "in force",
        "next change",
        "then",
        title=f"{org.name}: share calendars at {_iso(when)}",
        drop=("then", "in force"),
    )
    for row in calendar_rows(org, when):
        table.add_row(
            row["quotaShareName"],
            f"{row['window']} ({row['timezone']})" if row["window"] else "(own settings)",
            _settings_cell(row["inForce"]),
            row["nextChange"] or "never",
            _settings_cell(row["nextSettings"]) if row["nextSettings"] else "-",
        )
    return table
