"""Owns the forecast's calibration: its bounds widened or narrowed as a backtest shows they must be.

The samples' p10 and p90 cover fewer actual starts than they state wherever the queue's future
is less predictable than the forecast's models (bursts of submissions the arrival model does
not foresee, a team's run times drawn from too few runs: docs/runtime.md, "Calibrated
bounds"). A :class:`Calibration` corrects that by split conformal prediction, fitted on the
predictions of a backtest of the same queue (its recorded history, or its teams' generated
workloads) and applied to later forecasts:

- scores, on the jobs forecast to wait (``p90 > 0``), in log(wait + :data:`OFFSET_S`):
  ``upper = log((actual + c) / (p90 + c))`` and ``lower = log((actual + c) / (p10 + c))``;
- the upper shift is the ``ceil(0.9 (n + 1))``-th smallest upper score, the lower shift the
  ``floor(0.1 (n + 1))``-th smallest lower score (the conformal quantiles: over exchangeable
  forecasts a new start falls at or before the shifted p90 with probability at least 0.9);
- applied, ``p90' = (p90 + c) e^upper - c`` and ``p10' = (p10 + c) e^lower - c``, kept in
  order around the median (``p10' <= p50 <= p90'``, never below 0); a p90' past the horizon
  becomes "beyond the horizon".

- by the band of the forecast's median (Mondrian conformal prediction, :data:`BANDS_FROM_S`:
  under 30 minutes, to 2 hours, to 8 hours, longer): each band with :data:`BAND_MIN_JOBS`
  fitted forecasts gets its own shifts, the others the pooled ones. The sampled bounds miss in
  opposite directions at the two ends (short forecasts start later than their p90 more often
  than 10 %, forecasts of many hours earlier than their p10), which one pooled shift cannot
  correct: on research weeks held out from the fit (seeds 178-197), the forecasts of 8 hours
  or more started before their p10 27 % of the time with one pooled shift, 12 % with a shift
  per band (docs/runtime.md, "Calibrated bounds").

The median and the jobs forecast to start now (``p90 == 0``) are left as sampled: on the
held-out workloads the stated share of those starts was covered, and shifting the median made
its error larger (docs/runtime.md). A calibration is a JSON file (:meth:`Calibration.save`,
:func:`load_calibration`; ``quota forecast calibrate`` fits and writes one); ``quota status``,
``quota jobs ls``, ``quota jobs describe``, ``quota jobs submit --what-if`` and ``quota local
why`` take it with ``--calibration FILE`` (or ``QUOTA_FORECAST_CALIBRATION``). Without one they
and ``QueueClient`` use :func:`default_calibration`, fitted on the example organisations'
generated weeks (tools/default_calibration.py); ``--calibration none`` turns it off.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Protocol

OFFSET_S = 300.0
"""Seconds added to every wait before its log is taken (a 0-second and a 1-minute wait are not
worlds apart; 60 to 900 s gave the same held-out coverage within 1 point)."""
MIN_JOBS = 30
"""Jobs forecast to wait needed to fit a calibration (with fewer, the 90 % conformal quantile
is the largest score or beyond it)."""
KIND = "quota-forecast-calibration"
VERSION = 1
BANDS_FROM_S = (0.0, 1800.0, 7200.0, 28800.0)
"""Where the bands of a forecast's sampled median start (seconds; the last has no end): each
band is calibrated apart (Mondrian conformal prediction, see the module docstring)."""
BAND_MIN_JOBS = 100
"""Fitted forecasts a band needs for shifts of its own (fewer: the pooled shifts)."""
DEFAULT_FILE = "data/forecast-calibration.json"
"""The default calibration, in the package (:func:`default_calibration`)."""


class CalibrationError(ValueError):
    """A calibration that cannot be fitted or read: the message names the field, the value
    and the fix."""


class Predicted(Protocol):
    """What fitting reads of a backtest's prediction (:class:`~.backtest.Prediction` is one)."""

    @property
    def p10_s(self) -> float: ...
    @property
    def p50_s(self) -> float: ...
    @property
    def p90_s(self) -> float: ...
    @property
    def actual_s(self) -> float: ...


@dataclass(frozen=True)
class Judged:
    """How a calibration covered periods it was not fitted on (each with a fit on the others,
    :func:`~.backtest.held_out`): the waited jobs' share in p10-p90 and at or before p90."""

    interval: float
    below_p90: float
    periods: int

    def as_json(self) -> dict[str, object]:
        return {
            "intervalCoverage": round(self.interval, 3),
            "p90Coverage": round(self.below_p90, 3),
            "periods": self.periods,
        }


@dataclass(frozen=True)
class Band:
    """The shifts of the forecasts whose sampled median is ``from_s`` or more (up to the next
    band's); ``jobs``: how many of the fitted forecasts were in it; ``own``: its shifts were
    fitted on them (else they are the pooled ones: too few, :data:`BAND_MIN_JOBS`)."""

    from_s: float
    lower_shift: float
    upper_shift: float
    jobs: int
    own: bool = True

    def as_json(self) -> dict[str, object]:
        return {
            "fromS": self.from_s,
            "lowerShift": round(self.lower_shift, 6),
            "upperShift": round(self.upper_shift, 6),
            "jobs": self.jobs,
            "own": self.own,
        }


@dataclass(frozen=True)
class Calibration:
    """Shifts of a forecast's p10 and p90 in log(wait + ``offset_s``) (see the module
    docstring); ``jobs``: the forecasts to wait it was fitted on; ``fitted_on``: what they
    were (free text, shown with the forecast); ``shares``: the quota shares of the queue it was
    fitted for (a forecast of a queue with others says so); ``judged``: how such a fit covered
    periods it was not fitted on, when it was judged so (shown with the forecast too);
    ``bands``: the shifts by the band of the forecast's median (none: the pooled
    ``lower_shift`` and ``upper_shift`` for every forecast)."""

    lower_shift: float
    upper_shift: float
    jobs: int
    offset_s: float = OFFSET_S
    fitted_on: str = ""
    shares: tuple[str, ...] = ()
    judged: Judged | None = None
    bands: tuple[Band, ...] = ()

    def bounds(
        self, p10_s: float | None, p50_s: float | None, p90_s: float | None, horizon_s: float
    ) -> tuple[float | None, float | None]:
        """``(p10', p90')`` of a job forecast to wait (``p90 > 0``); the bounds unchanged for a
        job forecast to start now, or whose median is beyond the horizon (``None``)."""
        if p50_s is None or p90_s is None or p10_s is None or p90_s == 0.0:
            return p10_s, p90_s
        c = self.offset_s
        lower_shift, upper_shift = self.shifts(p50_s)
        upper = max(p50_s, (p90_s + c) * math.exp(upper_shift) - c)
        lower = min(p50_s, max(0.0, (p10_s + c) * math.exp(lower_shift) - c))
        return lower, (None if upper > horizon_s else upper)

    def shifts(self, p50_s: float) -> tuple[float, float]:
        """``(lower, upper)`` shifts of a forecast whose sampled median is ``p50_s``."""
        if not self.bands:
            return self.lower_shift, self.upper_shift
        band = self.bands[band_of(p50_s, self.band_starts)]
        return band.lower_shift, band.upper_shift

    @property
    def band_starts(self) -> list[float]:
        """Where each of :attr:`bands` starts (seconds of the forecast median)."""
        return [band.from_s for band in self.bands]

    def as_json(self) -> dict[str, object]:
        return {
            "kind": KIND,
            "version": VERSION,
            "lowerShift": round(self.lower_shift, 6),
            "upperShift": round(self.upper_shift, 6),
            "offsetS": self.offset_s,
            "jobs": self.jobs,
            "fittedOn": self.fitted_on,
            "shares": list(self.shares),
            **({} if self.judged is None else {"heldOut": self.judged.as_json()}),
            **({"bands": [b.as_json() for b in self.bands]} if self.bands else {}),
        }

    def save(self, path: Path) -> None:
        """Write the calibration as JSON (:func:`load_calibration` reads it)."""
        path.write_text(json.dumps(self.as_json(), indent=2) + "\n")

    def mismatch(self, shares: Iterable[str]) -> str:
        """Why this calibration may not fit a queue of ``shares`` (it was fitted for other
        shares); empty when it was fitted for these, or does not say."""
        live = sorted(shares)
        if not self.shares or list(self.shares) == live:
            return ""
        return (
            f"the calibration was fitted for shares {', '.join(self.shares)}, this queue has "
            f"{', '.join(live) or 'none'}: its bounds may be off; fix: fit one on this queue "
            "(quota forecast calibrate)"
        )

    def describe(self) -> str:
        """One line for a forecast's notes: what widens its bounds, by how much."""
        up, low = math.exp(self.upper_shift), math.exp(self.lower_shift)
        source = f" ({self.fitted_on})" if self.fitted_on else ""
        judged = self.judged
        bands = self._describe_bands()
        held = (
            ""
            if judged is None
            else f"; judged on each of {judged.periods} periods with a fit on the others, "
            f"{judged.interval:.1%} of the waited jobs started in p10-p90 (80 % meant) and "
            f"{judged.below_p90:.1%} by p90 (90 % meant)"
        )
        return (
            f"bounds calibrated on {self.jobs} backtest forecasts{source}: p90 of a waiting "
            f"job x{up:.2f}, p10 x{low:.2f}{' pooled' if bands else ''} (on the wait + "
            f"{self.offset_s:g} s{bands}){held}"
        )

    def _describe_bands(self) -> str:
        own = [(i, b) for i, b in enumerate(self.bands) if b.own]
        if not own:
            return ""
        starts = self.band_starts
        shown = ", ".join(
            f"{band_label(starts, i)} p90 x{math.exp(b.upper_shift):.2f} "
            f"p10 x{math.exp(b.lower_shift):.2f}"
            for i, b in own
        )
        return f"; by the forecast median: {shown}"


def band_label(starts: Sequence[float], index: int) -> str:
    """``under 30 min``, ``30 min-2 h``, ``8 h or more``: the band from ``starts[index]``."""
    start = starts[index]
    if index + 1 == len(starts):
        return f"{_duration(start)} or more"
    end = _duration(starts[index + 1])
    return f"under {end}" if start == 0 else f"{_duration(start)}-{end}"


def band_of(p50_s: float, starts: Sequence[float] = BANDS_FROM_S) -> int:
    """The index of the band of ``starts`` a forecast median of ``p50_s`` falls in."""
    return sum(p50_s >= start for start in starts[1:])


def _rise_from_zero(starts: Sequence[float]) -> bool:
    """Whether band ``starts`` begin at 0 and strictly rise."""
    return starts[0] == 0.0 and list(starts) == sorted(set(starts))


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min"


def fit_calibration(
    predictions: Iterable[Predicted],
    *,
    offset_s: float = OFFSET_S,
    fitted_on: str = "",
    shares: Iterable[str] = (),
    bands: Sequence[float] = BANDS_FROM_S,
) -> Calibration:
    """The :class:`Calibration` of a backtest's ``predictions`` (see the module docstring),
    with a band of the forecast median from each of ``bands`` (``()``: the pooled shifts
    only). Raises :class:`CalibrationError` with fewer than :data:`MIN_JOBS` jobs forecast to
    wait within the horizon."""
    if bands and not _rise_from_zero(bands):
        raise CalibrationError(
            f"bands: {list(bands)} must start at 0 and rise (seconds of the forecast median "
            "where each band starts); fix: pass e.g. (0, 1800, 7200, 28800), or () for none"
        )
    scored: list[tuple[int, float, float]] = []  # (band, upper score, lower score)
    for p in predictions:
        if not 0.0 < p.p90_s < math.inf or math.isinf(p.p10_s) or math.isnan(p.actual_s):
            continue
        actual = math.log(p.actual_s + offset_s)  # inf when it never started: scored last
        band = band_of(p.p50_s, bands)
        scored.append(
            (band, actual - math.log(p.p90_s + offset_s), actual - math.log(p.p10_s + offset_s))
        )
    if len(scored) < MIN_JOBS:
        raise CalibrationError(
            f"jobs forecast to wait: {len(scored)} in the backtest, at least {MIN_JOBS} are "
            "needed to fit a calibration; fix: backtest more days or more seeds"
        )
    low, high = _conformal(scored)
    if math.isinf(high):
        raise CalibrationError(
            f"jobs forecast to wait: {len(scored)}, of which more than 10 % never started in "
            "the backtest: the upper bound cannot be calibrated; fix: backtest a longer "
            "workload (--days) so that the jobs start before it ends"
        )
    fitted = []
    for index, start in enumerate(bands):
        inside = [s for s in scored if s[0] == index]
        own = _conformal(inside) if len(inside) >= BAND_MIN_JOBS else None
        if own is None or math.isinf(own[1]):  # too few, or > 10 % never started: pooled
            fitted.append(Band(start, low, high, len(inside), own=False))
        else:
            fitted.append(Band(start, own[0], own[1], len(inside)))
    return Calibration(
        low, high, len(scored), offset_s, fitted_on, tuple(sorted(shares)), bands=tuple(fitted)
    )


def _conformal(scored: list[tuple[int, float, float]]) -> tuple[float, float]:
    """``(lower, upper)`` shifts: the conformal quantiles of the lower and upper scores."""
    n = len(scored)
    upper = sorted(s[1] for s in scored)
    lower = sorted(s[2] for s in scored)
    high = upper[min(n, math.ceil(round(0.9 * (n + 1), 9))) - 1]
    low = lower[max(1, math.floor(round(0.1 * (n + 1), 9))) - 1]
    return low, high


@cache
def default_calibration() -> Calibration:
    """The calibration forecasts use unless given one: fitted on the generated weeks of the
    two example organisations (research, ml-platform; ``tools/default_calibration.py``), held
    out from the workloads it is judged on (docs/runtime.md, "Calibrated bounds"). A queue's
    own (``quota forecast calibrate``) fits it better."""
    text = resources.files("quota_constructs").joinpath(DEFAULT_FILE).read_text("utf-8")
    return parse_calibration(text, Path(DEFAULT_FILE))


def load_calibration(path: Path) -> Calibration:
    """The calibration a file holds (:meth:`Calibration.save`); :class:`CalibrationError`
    naming the file, the field, the value and the fix when it is not one."""
    try:
        text = path.read_text()
    except OSError as error:
        raise CalibrationError(
            f"{path}: cannot read the calibration ({error.strerror or error}); fix: pass the "
            "file written by quota forecast calibrate"
        ) from error
    return parse_calibration(text, path)


def parse_calibration(text: str, path: Path) -> Calibration:
    """The calibration ``text`` (the JSON of file ``path``, named in errors) holds."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise CalibrationError(
            f"{path}: not JSON ({error}); fix: pass the file written by quota forecast calibrate"
        ) from error
    if not isinstance(data, Mapping) or data.get("kind") != KIND:
        got = data.get("kind") if isinstance(data, Mapping) else type(data).__name__
        raise CalibrationError(
            f"{path}: kind: {got!r} is not {KIND!r}; fix: pass the file written by "
            "quota forecast calibrate"
        )
    if data.get("version") != VERSION:
        raise CalibrationError(
            f"{path}: version: {data.get('version')!r} is not {VERSION}; fix: fit the "
            "calibration again with this version (quota forecast calibrate)"
        )
    return Calibration(
        lower_shift=_number(path, data, "lowerShift"),
        upper_shift=_number(path, data, "upperShift"),
        jobs=int(_number(path, data, "jobs", low=MIN_JOBS)),
        offset_s=_number(path, data, "offsetS", low=0.0),
        fitted_on=str(data.get("fittedOn", "")),
        shares=_names(path, data.get("shares", [])),
        judged=_judged(path, data.get("heldOut")),
        bands=_bands(path, data.get("bands", [])),
    )


def _bands(path: Path, value: object) -> tuple[Band, ...]:
    """The file's ``bands`` (optional: without them the pooled shifts serve every forecast)."""
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise CalibrationError(
            f"{path}: bands: {value!r} is not a list of objects; fix: fit the calibration "
            "again (quota forecast calibrate) rather than editing it"
        )
    found = []
    for index, item in enumerate(value):
        field = f"bands[{index}]"
        found.append(
            Band(
                from_s=_number(path, item, "fromS", low=0.0, field=f"{field}.fromS"),
                lower_shift=_number(path, item, "lowerShift", field=f"{field}.lowerShift"),
                upper_shift=_number(path, item, "upperShift", field=f"{field}.upperShift"),
                jobs=int(_number(path, item, "jobs", low=0.0, field=f"{field}.jobs")),
                own=_flag(path, item, "own", field=f"{field}.own"),
            )
        )
    starts = [b.from_s for b in found]
    if found and not _rise_from_zero(starts):
        raise CalibrationError(
            f"{path}: bands: fromS {starts} must start at 0 and rise; fix: fit the "
            "calibration again (quota forecast calibrate) rather than editing it"
        )
    return tuple(found)


def _judged(path: Path, value: object) -> Judged | None:
    """The file's ``heldOut`` (optional: a calibration judged held out says how it did)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise CalibrationError(
            f"{path}: heldOut: {value!r} is not an object; fix: fit the calibration again "
            "(quota forecast calibrate) rather than editing it"
        )
    found = [_number(path, value, key, low=0.0, field=f"heldOut.{key}") for key in _COVERAGES]
    for key, share in zip(_COVERAGES, found, strict=True):
        if share > 1.0:
            raise CalibrationError(
                f"{path}: heldOut.{key}: {share!r} is not a share between 0 and 1; fix: fit "
                "the calibration again (quota forecast calibrate) rather than editing it"
            )
    periods = _number(path, value, "periods", low=2.0, field="heldOut.periods")
    return Judged(found[0], found[1], int(periods))


_COVERAGES = ("intervalCoverage", "p90Coverage")


def _names(path: Path, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CalibrationError(
            f"{path}: shares: {value!r} is not a list of share names; fix: fit the calibration "
            "again (quota forecast calibrate) rather than editing it"
        )
    return tuple(value)


def _flag(path: Path, data: Mapping[str, object], key: str, field: str) -> bool:
    value = data.get(key, True)
    if not isinstance(value, bool):
        raise CalibrationError(
            f"{path}: {field}: {value!r} is not true or false; fix: fit the calibration again "
            "(quota forecast calibrate) rather than editing it"
        )
    return value


def _number(
    path: Path,
    data: Mapping[str, object],
    key: str,
    low: float | None = None,
    field: str | None = None,
) -> float:
    value = data.get(key)
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or (low is not None and float(value) < low):  # type: ignore[arg-type]
        bound = "" if low is None else f" of at least {low:g}"
        raise CalibrationError(
            f"{path}: {field or key}: {value!r} is not a finite number{bound}; fix: fit the "
            "calibration again (quota forecast calibrate) rather than "
            "editing it"
        )
    return float(value)  # type: ignore[arg-type]
