"""Owns ``quota status``: the live view of a queue's shares, once, or refreshed with ``--watch``.

The queue options are ``quota jobs``'s (:class:`~.jobs.QueueClientOptions`); the figures come
from :func:`~quota_constructs.runtime.status.read_status` (eight API calls per refresh).
Piped, each refresh prints whole values, one row per line; on a terminal ``--watch`` redraws in
place until Ctrl-C (exit 130).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.live import Live
from rich.table import Table

from quota_constructs.commands._calendar import calendar_rows, calendar_table
from quota_constructs.commands._common import (
    AsTeamOpt,
    EndpointOpt,
    ExitCode,
    OrganisationOpt,
    QueueOpt,
    RegionOpt,
    WideOpt,
    fail,
    handle_errors,
    json_option,
    print_json,
    stdout_console,
)
from quota_constructs.commands._control import queue_now
from quota_constructs.commands._forecast import (
    ArrivalsOpt,
    CalibrationOpt,
    NoForecastOpt,
    calibration_of,
    caveats_json,
    organisation_of,
    print_caveats,
    start_text,
)
from quota_constructs.commands._tables import fitted_table
from quota_constructs.commands.jobs import NOT_READ, QueueClientOptions
from quota_constructs.model import Organisation, ShareState
from quota_constructs.runtime.queue import QueueClient
from quota_constructs.runtime.status import QueueStatus, ShareStatus, read_status, status_json

if TYPE_CHECKING:
    from quota_constructs.forecast import Calibration, Forecast, JobForecast

COLUMNS = (
    "share",
    "instance type",
    "strategy",
    "limit",
    "in use",
    "borrowed",
    "lent",
    "idle",
    "running",
    "waiting",
    "head job",
    "why it waits",
    "head starts",
)
DROP_ORDER = ("lent", "borrowed", "idle", "running", "strategy", "why it waits", "head starts")
"""The columns a narrow terminal hides, first to last (docs/cli.md, "Tables at a terminal")."""


@handle_errors
def status(
    queue: QueueOpt = None,
    organisation: OrganisationOpt = None,
    endpoint_url: EndpointOpt = None,
    region: RegionOpt = None,
    as_team: AsTeamOpt = None,
    watch: Annotated[
        bool, typer.Option("--watch", "-w", help="Refresh every --interval seconds until Ctrl-C.")
    ] = False,
    interval: Annotated[
        float, typer.Option(min=0, help="Seconds between refreshes with --watch.")
    ] = 5.0,
    refreshes: Annotated[
        int | None,
        typer.Option(min=1, help="With --watch: stop after this many reads (default: Ctrl-C)."),
    ] = None,
    as_json: Annotated[bool, json_option("JSON (with --watch: one line per refresh).")] = False,
    org_file: Annotated[
        Path | None,
        typer.Option(
            "--org-file",
            help="Organisation file whose share calendars to show: the window in force at the "
            "read and the next change (JSON: 'calendars'), and which the forecast follows "
            "(calendars, plans); not with --watch.",
        ),
    ] = None,
    wide: WideOpt = False,
    no_forecast: NoForecastOpt = False,
    arrivals: ArrivalsOpt = None,
    calibration: CalibrationOpt = None,
) -> None:
    """Per share and instance type: limit, in use, borrowed, lent, idle, jobs, head job, and
    when the head job is forecast to start (--org-file: following the file's calendars)."""
    options = QueueClientOptions(queue, organisation, endpoint_url, region, as_team)
    if refreshes is not None and not watch:
        fail(f"--refreshes {refreshes} counts --watch refreshes: add --watch", ExitCode.USAGE)
    if org_file is not None and watch:
        fail("--org-file shows calendars once: drop --watch", ExitCode.USAGE)
    calendars = organisation_of(org_file)
    bounds = calibration_of(calibration)
    client = options.client()
    starts = _starts(client, calendars, no_forecast, arrivals, bounds)
    if not watch:
        at = queue_now(client.endpoint_url) if calendars is not None else None
        view = read_status(client)
        _show(view, as_json, wide, calendars, at, starts(view))
    else:
        _watch(client, interval, refreshes, as_json, wide, starts)


Starts = Callable[[QueueStatus | None], "Forecast | None"]


def _starts(
    client: QueueClient,
    org: Organisation | None,
    no_forecast: bool,
    arrivals: bool | None,
    calibration: Calibration | None,
) -> Starts:
    """The forecast of each refresh (``None`` with ``--no-forecast``), from the jobs the
    refresh listed (not listed twice)."""

    def starts(view: QueueStatus | None) -> Forecast | None:
        if no_forecast:
            return None
        now = queue_now(client.endpoint_url).timestamp()
        active = view.jobs if view is not None else None
        heads = None if view is None else {r.head.job_id for r in view.rows if r.head}
        return client.forecast(
            now_s=now,
            org=org,
            arrivals=arrivals,
            active=active,
            watch=heads,
            calibration=calibration,
        )

    return starts


def _json(view: QueueStatus, result: Forecast | None) -> dict[str, Any]:
    """:func:`status_json` with each head job's ``forecastStartS`` and ``forecastReason``, and
    the forecast's caveats (``forecastCaveats``)."""
    out = status_json(view)
    if result is None:
        return out
    for row in out["quotaShares"]:
        head = row["headJob"]
        if head is not None:
            found = result.jobs.get(head["jobId"])
            head.update(
                found.fields_json()
                if found is not None
                else {"forecastStartS": None, "forecastReason": NOT_READ}
            )
    return {**out, **caveats_json(result)}


def _show(
    view: QueueStatus,
    as_json: bool,
    wide: bool,
    org: Organisation | None = None,
    at: datetime | None = None,
    result: Forecast | None = None,
) -> None:
    """The status; with ``org``, its calendars at ``at`` (the queue's clock: an emulator's own,
    which a virtual clock may put on any day), else at the time of the read; the forecast's
    caveats on stderr (and in the JSON)."""
    when = at or view.read_at
    if as_json:
        extra = {"calendars": calendar_rows(org, when)} if org is not None else {}
        print_json({**_json(view, result), **extra})
    else:
        stdout_console().print(status_table(view, wide=wide, starts=_jobs(result)))
        if org is not None and org.calendars:
            stdout_console().print(calendar_table(org, when))
    print_caveats(result)


def _jobs(result: Forecast | None) -> Mapping[str, JobForecast] | None:
    return None if result is None else result.jobs


def _changed_caveats() -> Callable[[Forecast | None], None]:
    """Prints a refresh's caveats when they differ from the last refresh's (a ``--watch``
    would otherwise repeat the same notes every few seconds)."""
    last: list[tuple[str, ...]] = [()]

    def show(result: Forecast | None) -> None:
        if result is not None and result.caveats != last[0]:
            last[0] = result.caveats
            print_caveats(result)

    return show


def _watch(
    client: QueueClient,
    interval: float,
    refreshes: int | None,
    as_json: bool,
    wide: bool,
    starts: Starts,
) -> None:
    """Read and show the status every ``interval`` s, ``refreshes`` times (``None``: forever)."""
    count = 0

    def more() -> bool:
        return refreshes is None or count < refreshes

    notes = _changed_caveats()
    if as_json or not sys.stdout.isatty():
        while more():
            if count:
                time.sleep(interval)
            view = read_status(client)
            result = starts(view)
            count += 1
            if as_json:
                sys.stdout.write(json.dumps(_json(view, result)) + "\n")
                sys.stdout.flush()
            else:
                stdout_console().print(status_table(view, wide=wide, starts=_jobs(result)))
            notes(result)
        return

    def table() -> Table:
        view = read_status(client)
        result = starts(view)
        notes(result)  # stderr: rich's Live prints it above the live table
        return status_table(view, wide=wide, starts=_jobs(result))

    with Live(table(), console=stdout_console()) as live:
        count = 1
        while more():
            time.sleep(interval)
            live.update(table(), refresh=True)
            count += 1


def status_table(
    view: QueueStatus, *, wide: bool = False, starts: Mapping[str, JobForecast] | None = None
) -> Table:
    """The status as a table: one row per share and instance type; fitted to the terminal,
    :data:`DROP_ORDER` hidden first unless ``wide``; ``starts``: the forecast (``head starts``;
    without it that column shows ``-``)."""
    table = fitted_table(
        *COLUMNS,
        title=f"{view.queue} at {view.read_at:%Y-%m-%dT%H:%M:%SZ}",
        caption="borrowed/lent between shares: derived from use and limits (docs/runtime.md)",
        drop=DROP_ORDER,
        wide=wide,
        min_widths={"why it waits": 24},
    )
    for row in view.rows:
        table.add_row(*_cells(row), _head_start(row, starts))
    if view.unattributed:
        lost = ", ".join(f"{n} x {t}" for t, n in view.unattributed.items())
        table.caption = f"{table.caption}; borrowed from no idle lender: {lost}"
    return table


def _head_start(row: ShareStatus, starts: Mapping[str, JobForecast] | None) -> str:
    if row.head is None or starts is None:
        return "-"
    return start_text(starts.get(row.head.job_id))


def _cells(row: ShareStatus) -> tuple[str, ...]:
    state = "" if row.state is ShareState.ENABLED else f" ({row.state.value})"
    head = row.head
    return (
        row.share + state,
        row.instance_type,
        row.strategy.value,
        str(row.limit),
        str(row.in_use),
        ", ".join(f"{ln.quantity} from {ln.share}" for ln in row.borrowed) or "0",
        ", ".join(f"{ln.quantity} to {ln.share}" for ln in row.lent) or "0",
        str(row.idle),
        str(row.running),
        str(row.waiting),
        head.job_name if head else "-",
        (head.reason + (" (derived)" if head.derived else "")) if head else "-",
    )
