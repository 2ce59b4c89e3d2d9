"""Forecasts as the commands show them: the option, the column text, the what-if lines.

``quota status``, ``quota jobs ls``, ``quota jobs describe`` and ``quota jobs submit --what-if``
share these (docs/runtime.md, "Forecasts").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from quota_constructs.commands._common import stderr_console
from quota_constructs.commands._control import queue_now

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from quota_constructs.forecast import Calibration, Forecast, JobForecast, QueueState, WhatIf
    from quota_constructs.model import Organisation
    from quota_constructs.runtime.jobs import JobSummary
    from quota_constructs.runtime.queue import QueueClient

OrgFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--org-file",
        help="Organisation file whose share calendars, training plans and teams' priority caps "
        "the forecast follows (the API tells none of them).",
    ),
]
ArrivalsOpt = Annotated[
    bool | None,
    typer.Option(
        "--arrivals/--no-arrivals",
        help="Foresee jobs that may arrive meanwhile from each share's past days (default: "
        "where the history holds a whole day); --arrivals forces it on, --no-arrivals off.",
        show_default=False,
    ),
]
CALIBRATION_ENV = "QUOTA_FORECAST_CALIBRATION"
"""The environment variable naming the calibration file when ``--calibration`` is not given."""
NO_CALIBRATION = "none"
"""``--calibration none``: the bounds as sampled, not calibrated."""


CalibrationOpt = Annotated[
    Path | None,
    typer.Option(
        "--calibration",
        metavar="FILE",
        envvar=CALIBRATION_ENV,
        help="Calibrate the forecast's p10 and p90 with this file (quota forecast calibrate "
        "writes one), or 'none' for the bounds as sampled (a file called none: its path, "
        "e.g. $PWD/none). "
        "Default: the calibration fitted on the example organisations' generated weeks "
        "(docs/runtime.md, 'Calibrated bounds').",
        show_default=False,
    ),
]
NoForecastOpt = Annotated[
    bool,
    typer.Option(
        "--no-forecast",
        help="Leave out the start forecast of waiting jobs (no DescribeServiceJob per job).",
    ),
]


def organisation_of(org_file: Path | None) -> Organisation | None:
    """The organisation file ``--org-file`` names (``None`` without one). The loader (pydantic)
    is imported only then: a command without the option starts faster."""
    if org_file is None:
        return None
    from quota_constructs.config import load_organisation

    return load_organisation(org_file)


def calibration_of(path: Path | None) -> Calibration | None:
    """The calibration ``--calibration`` (or :data:`CALIBRATION_ENV`) names: the default one
    without it, ``None`` (the bounds as sampled) for :data:`NO_CALIBRATION`; a usage error
    (exit 2) naming the file, the field and the fix when it is not one. Read before the queue
    is: a bad file costs no API call."""
    from quota_constructs.forecast import CalibrationError, default_calibration, load_calibration

    if path is None:
        return default_calibration()
    if str(path) == NO_CALIBRATION:
        return None

    try:
        return load_calibration(path)
    except CalibrationError as error:
        raise typer.BadParameter(str(error), param_hint="'--calibration'") from error


def queue_state(
    client: QueueClient,
    org_file: Path | None = None,
    *,
    active: Sequence[JobSummary] | None = None,
    arrivals: bool | None = None,
) -> QueueState:
    """``client``'s queue as the forecast with ``arrivals`` sees it, at the queue's clock (an
    emulator's own); ``active``: the whole queue's active jobs when just listed (not listed
    again)."""
    now = queue_now(client.endpoint_url).timestamp()
    org = organisation_of(org_file)
    return client.queue_state(now_s=now, org=org, active=active, arrivals=arrivals)


def queue_forecast(
    client: QueueClient,
    org_file: Path | None = None,
    *,
    arrivals: bool | None = None,
    watch: Collection[str] | None = None,
    calibration: Calibration | None = None,
) -> Forecast:
    """The forecast of ``client``'s queue at the queue's clock (an emulator's own), of the
    waiting jobs ``watch`` names (default every one), its bounds calibrated with
    ``calibration``."""
    now = queue_now(client.endpoint_url).timestamp()
    org = organisation_of(org_file)
    return client.forecast(
        now_s=now, org=org, arrivals=arrivals, watch=watch, calibration=calibration
    )


def print_caveats(result: Forecast | None) -> None:
    """What ``result`` does not know (:attr:`Forecast.caveats`) as ``note:`` lines on stderr,
    under the data (nothing without a forecast)."""
    for caveat in result.caveats if result is not None else ():
        stderr_console().print(f"note: {caveat}", markup=False, highlight=False)


def caveats_json(result: Forecast | None) -> dict[str, list[str]]:
    """``{"forecastCaveats": [...]}``, the top-level field of a command's ``--json`` (empty
    without a forecast: ``--no-forecast``, or nothing waiting)."""
    return {} if result is None else {"forecastCaveats": list(result.caveats)}


def duration_text(seconds: float | None) -> str:
    """``0 s``, ``45 s``, ``12 min``, ``3.5 h``, ``2.1 d``; ``None``: beyond the horizon."""
    if seconds is None:
        return "beyond the horizon"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def start_text(job: JobForecast | None) -> str:
    """A job's forecast start for a table cell: ``now``, ``~12 min (90%: 30 min)``, or why not."""
    if job is None:
        return "-"
    if job.never:
        return "never"
    if job.cancelled:
        return "cancelled (time limit)"
    if job.p50_s is None:
        return "beyond the horizon"
    if job.p90_s == 0.0:
        return "now"
    return f"~{duration_text(job.p50_s)} (90%: {duration_text(job.p90_s)})"


def forecast_lines(job: JobForecast) -> list[str]:
    """The whole answer for one job: when it starts, what it waits on, whom it preempts."""
    if job.never:
        return [f"never starts here: {job.reason}"]
    lines = [f"forecast start: {start_text(job)}"]
    if job.reason:
        lines.append(f"  {job.reason}")
    if job.waiting_on:
        lines.append(f"waits on: {job.waiting_on}")
    lines += [
        f"would preempt: {p.job_name} ({p.job_id}) of {p.share}, {p.kind}" for p in job.preempts
    ]
    lines.append(f"run times from: {job.runtime_source}")
    return lines


def what_if_lines(answer: WhatIf) -> list[str]:
    """``quota jobs submit --what-if`` as text."""
    job = answer.job
    if answer.outcome == "never":
        return [f"never: {job.reason}"]
    if answer.outcome == "starts_now":
        head = "starts now"
    else:
        head = (
            f"waits: starts in about {duration_text(job.p50_s)} (median), "
            f"{duration_text(job.p90_s)} at the 90th percentile"
        )
    lines = [head]
    if answer.outcome == "waits" and job.waiting_on:
        lines.append(f"waits on: {job.waiting_on}")
    lines += [f"preempts: {p.job_name} ({p.job_id}) of {p.share} ({p.kind})" for p in job.preempts]
    return lines
