"""Jobs that may arrive during a forecast's horizon, from each share's own past submissions.

Two methods (docs/runtime.md, "Forecasts"):

- ``days`` (the default where the history allows): a block bootstrap of whole past days. Each
  day of the horizon (the rest of today included) replays, per share, the submissions of one
  past whole UTC day of the same kind (weekday or weekend) drawn at random from the history
  window: their times of day, instances, run times (jittered) and priorities. A day keeps its
  bursts and its day-to-day variation, which an hourly average rate loses. It needs at least
  :data:`MIN_DAYS` whole days in the window; a share also needs :data:`MIN_RUNS` finished runs
  (the run times of its copies) unless it submitted nothing in the window. A day kind the
  window does not hold (no weekend yet) replays no submissions.
- ``poisson``: each share's submit rate per hour of the day, weekdays and weekends apart (UTC),
  over the hours of that kind the window spans, replayed as a Poisson process; each arrival
  copies a random finished job of the share. The only method for a window shorter than a day.

A past job's priority the history does not know (the live list does not tell it) is one of the
priorities of its share's finished jobs that were described (:func:`sample_for_priorities`: a few
per share, spread over the window), else of its share's jobs running or waiting now, else 0. The
finished sample matters: the jobs waiting now are the share's lowest priorities (the higher ones
went first), the finished ones its higher: copying only the waiting ones foresees too few later jobs
that overtake a waiting one. A past submission still running or waiting takes the run time of a
random finished run of its share.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from quota_constructs.forecast.inputs import LiveJob, QueueState
from quota_constructs.forecast.runtimes import MIN_RUNS, kernel_width

HOUR_S = 3600.0
DAY_S = 86400.0
SLOTS = 48
"""Hours of a weekday (0-23), then of a weekend day (24-47)."""
MIN_DAYS = 1
"""Whole UTC days the history window needs before the ``days`` method (and the default
``auto`` of the commands) foresees arrivals."""
METHODS = ("days", "poisson")
SPREAD_H = 3
"""The ``days`` method replays each hour from a past hour up to this many hours earlier or
later in its day (a history of few days then still varies from day to day)."""
Example = tuple[str, int, float, int]
"""(instance type, instances, run seconds, priority) of a past job."""
Submit = tuple[float, str, int, float | None, int]
"""(seconds into its day, instance type, instances, run seconds or ``None``, priority)."""
Arrival = tuple[float, LiveJob, float]
"""(seconds from now, job, run seconds) of a job arriving in a forecast."""
PRIORITY_SAMPLE = 5
"""Finished jobs per share whose priorities a live forecast reads (one DescribeServiceJob each,
:func:`sample_for_priorities`): the share's other finished jobs take theirs."""


def sample_for_priorities(
    shares: Sequence[str], created_s: Sequence[float | None], per_share: int = PRIORITY_SAMPLE
) -> list[int]:
    """Which finished jobs to read the priorities of: up to ``per_share`` per share, spread
    evenly over its jobs in creation order (first and last included); indexes into the
    jobs, whose shares and creation times are ``shares`` and ``created_s``."""
    by_share: dict[str, list[tuple[float, int]]] = {}
    for index, (share, created) in enumerate(zip(shares, created_s, strict=True)):
        by_share.setdefault(share, []).append((created or 0.0, index))
    picked: list[int] = []
    for jobs in by_share.values():
        jobs.sort()
        count = min(per_share, len(jobs))
        step = (len(jobs) - 1) / max(count - 1, 1)
        picked += sorted({jobs[round(k * step)][1] for k in range(count)})
    return sorted(picked)


def history_spans_days(state: QueueState) -> bool:
    """Whether ``state``'s jobs, finished and active, span :data:`MIN_DAYS` whole UTC days: where
    the default ("auto") foresees arrivals by replaying past days."""
    return _History.of(state, None).spans_days()


def slot_of(epoch_s: float) -> int:
    """The :data:`SLOTS` index of an instant: hour of the day, plus 24 on Saturday or Sunday."""
    return int(epoch_s % DAY_S // HOUR_S) + (24 if weekend(epoch_s) else 0)


def weekend(epoch_s: float) -> bool:
    """Whether an instant falls on a Saturday or Sunday (UTC)."""
    return (math.floor(epoch_s / DAY_S) + 3) % 7 >= 5  # 1970-01-01 was a Thursday


@dataclass(frozen=True)
class ArrivalModel:
    """Per share, how jobs arrive: past whole days to replay (``days``: weekday days, then
    weekend days) or jobs per hour in each of the :data:`SLOTS` (``rates``) with the past jobs
    to copy (``examples``); ``missing``: active shares without a model, and why."""

    rates: Mapping[str, Sequence[float]] = field(default_factory=dict)
    examples: Mapping[str, Sequence[Example]] = field(default_factory=dict)
    days: Mapping[str, tuple[Sequence[Sequence[Submit]], Sequence[Sequence[Submit]]]] = field(
        default_factory=dict
    )
    missing: Mapping[str, str] = field(default_factory=dict)
    spread_h: int = SPREAD_H
    hours_seen: tuple[float, float] | None = None
    """The ``poisson`` method's hours of history of each kind of day (weekday, weekend): a kind
    with none has no rate to replay (``None``: not known, as for :meth:`steady`)."""

    @classmethod
    def steady(
        cls, jobs_per_hour: Mapping[str, float], examples: Mapping[str, Sequence[Example]]
    ) -> ArrivalModel:
        """The same Poisson rate at every hour."""
        return cls({s: [r] * SLOTS for s, r in jobs_per_hour.items()}, examples)

    @property
    def shares(self) -> set[str]:
        """The shares whose arrivals are foreseen."""
        return {s for s in self.rates if self.examples.get(s)} | set(self.days)

    @classmethod
    def from_state(
        cls,
        state: QueueState,
        since_s: float | None = None,
        *,
        method: str = "days",
        forced: bool = True,
    ) -> ArrivalModel:
        """The model of ``state``'s jobs created since ``since_s`` (default: the oldest job's
        creation). ``method``: ``days`` (falls back on ``poisson`` for a window of fewer than
        :data:`MIN_DAYS` whole days when ``forced``, else foresees nothing there) or
        ``poisson``; see the module docstring."""
        if method not in METHODS:
            raise ValueError(
                f"arrival method {method!r} is not one of {', '.join(METHODS)}: use 'days'"
            )
        history = _History.of(state, since_s)
        if method == "days" and history.spans_days():
            return history.day_model()
        if method == "days" and not forced:
            why = (
                f"the history spans fewer than {MIN_DAYS} whole UTC day(s) "
                f"({(state.now_s - history.start) / 3600:.1f} h)"
            )
            return cls(missing={s: why for s in history.active})
        return history.poisson_model()

    def expected(self, horizon_s: float) -> float:
        """About how many jobs arrive within ``horizon_s`` (a weekly mix of days)."""
        per_day = sum(sum(r) / SLOTS * 24 for r in self.rates.values())
        for weekdays, weekends in self.days.values():
            for kind, days in ((5 / 7, weekdays), (2 / 7, weekends)):
                per_day += kind * sum(map(len, days)) / max(len(days), 1)
        return per_day * horizon_s / DAY_S

    @cached_property
    def _jitters(self) -> dict[str, float]:
        """Per share, the jitter of a copied run: the run-time draws' kernel of its past runs
        (:func:`~.runtimes.kernel_width`)."""
        return {share: kernel_width([e[2] for e in runs]) for share, runs in self.examples.items()}

    def unseen_days(self, now_s: float, horizon_s: float) -> list[str]:
        """The kinds of day (``weekday``, ``weekend``) inside the horizon that the model
        foresees nothing for: the ``days`` method's history holds no whole day of that kind,
        or the ``poisson`` method's no hour of it."""
        if self.days:
            seen = [any(kinds[kind] for kinds in self.days.values()) for kind in (0, 1)]
        elif self.hours_seen is not None:
            seen = [hours > 0 for hours in self.hours_seen]
        else:
            return []
        ahead = {weekend(now_s + hour * HOUR_S) for hour in range(math.ceil(horizon_s / HOUR_S))}
        return [("weekday", "weekend")[kind] for kind in sorted(ahead) if not seen[kind]]

    def draw(self, rng: random.Random, now_s: float, horizon_s: float) -> list[Arrival]:
        """Arrivals over ``horizon_s`` from epoch ``now_s``: (seconds from now, job, run
        seconds), in time order."""
        return list(self.stream(rng, now_s, horizon_s))

    def stream(self, rng: random.Random, now_s: float, horizon_s: float) -> Iterator[Arrival]:
        """:meth:`draw`'s arrivals one UTC hour at a time, drawn only as far as they are read
        (a forecast's sample stops once its jobs are placed, mostly long before the horizon)."""
        end = now_s + horizon_s
        poisson = sorted((s, r) for s, r in self.rates.items() if s not in self.days)
        replayed = sorted(self._hours.items())
        ids = itertools.count(1)
        hour = math.floor(now_s / HOUR_S) * HOUR_S
        while hour < end:
            begin, stop = max(hour, now_s), min(hour + HOUR_S, end)
            found: list[tuple[float, str, Example]] = []
            for share, rates in poisson:
                found += self._poisson_hour(rng, share, rates[slot_of(begin)], begin, stop)
            kind = weekend(hour)
            for share, kinds in replayed:
                found += self._replay_hour(rng, share, kinds[kind], hour, now_s, end)
            found.sort(key=lambda item: item[0])
            for at, share, (itype, count, run_s, priority) in found:
                job_id = f"arrival-{share}-{next(ids)}"
                job = LiveJob(job_id, job_id, share, {itype: count}, priority)
                yield at - now_s, job, run_s
            hour += HOUR_S

    def _poisson_hour(
        self, rng: random.Random, share: str, rate: float, begin: float, stop: float
    ) -> list[tuple[float, str, Example]]:
        """The ``poisson`` method's arrivals of ``share`` between epochs ``begin`` and ``stop``
        (within one hour): each a copy of a random finished job of the share."""
        examples = self.examples.get(share) or ()
        if not examples:
            return []
        step = stop - begin
        return [
            (begin + rng.random() * step, share, rng.choice(examples))
            for _ in range(_poisson(rng, rate * step / HOUR_S))
        ]

    def _replay_hour(
        self,
        rng: random.Random,
        share: str,
        days: Sequence[Sequence[Sequence[Submit]]],
        hour: float,
        now_s: float,
        end: float,
    ) -> list[tuple[float, str, Example]]:
        """The ``days`` method's arrivals of ``share`` in the UTC hour from epoch ``hour``: the
        submissions of an hour of a random past day of its kind, up to :attr:`spread_h` hours
        away, at their minutes (past submissions' run times jittered, unknown ones drawn)."""
        if not days:
            return []
        width = 2 * self.spread_h + 1
        pick = int(rng.random() * len(days) * width)
        shift = pick % width - self.spread_h
        day_hour = int(hour % DAY_S // HOUR_S) + shift
        if not 0 <= day_hour < 24:
            return []
        today = hour - hour % DAY_S - shift * HOUR_S
        found: list[tuple[float, str, Example]] = []
        for offset, itype, count, run_s, priority in days[pick // width][day_hour]:
            at = today + offset
            if not now_s < at <= end:
                continue
            base = rng.choice(self._runs[share]) if run_s is None else run_s
            run = max(base * math.exp(rng.gauss(0.0, self._jitters.get(share, 0.0))), 1.0)
            found.append((at, share, (itype, count, run, priority)))
        return found

    @cached_property
    def _hours(self) -> dict[str, tuple[list[list[list[Submit]]], list[list[list[Submit]]]]]:
        """Per share, its past weekdays and weekend days, each day's submissions per hour of
        the day (0-23)."""
        hours: dict[str, tuple[list[list[list[Submit]]], list[list[list[Submit]]]]] = {}
        for share, kinds in self.days.items():
            hours[share] = ([], [])
            for kind, days in enumerate(kinds):
                for day in days:
                    by_hour: list[list[Submit]] = [[] for _ in range(24)]
                    for submit in day:
                        by_hour[min(int(submit[0] // HOUR_S), 23)].append(submit)
                    hours[share][kind].append(by_hour)
        return hours

    @cached_property
    def _runs(self) -> dict[str, list[float]]:
        """Per share, its finished runs' times (for a past submission with none)."""
        return {share: [e[2] for e in runs] for share, runs in self.examples.items()}


@dataclass(frozen=True)
class _History:
    """A state's submissions in its window, per share: (created, instance type, instances,
    run seconds or ``None``, priority); the finished runs to copy; the active shares."""

    now_s: float
    start: float
    submits: Mapping[str, Sequence[tuple[float, str, int, float | None, int]]]
    examples: Mapping[str, Sequence[Example]]
    active: frozenset[str]

    @classmethod
    def of(cls, state: QueueState, since_s: float | None) -> _History:
        active: dict[str, list[int]] = {}
        for job in (*state.running, *state.waiting):
            active.setdefault(job.share, []).append(job.priority)
        finished: dict[str, list[int]] = {}
        for run in state.history:
            if run.priority is not None:
                finished.setdefault(run.share, []).append(run.priority)
        found: list[tuple[str, float, str, int, float | None, int]] = []
        examples: dict[str, list[Example]] = {}
        for index, run in enumerate(state.history):
            seen = finished.get(run.share) or active.get(run.share) or [0]
            priority = seen[index % len(seen)] if run.priority is None else run.priority
            example = (run.instance_type, run.instance_count, run.run_s, priority)
            examples.setdefault(run.share, []).append(example)
            if run.created_s is not None:
                found.append((run.share, run.created_s, *example))
        for job in (*state.running, *state.waiting):
            (itype, count), *_ = (*job.demand.items(), ("", 0))
            found.append((job.share, job.created_s, itype, count, None, job.priority))
        start = min((f[1] for f in found), default=state.now_s) if since_s is None else since_s
        submits: dict[str, list[tuple[float, str, int, float | None, int]]] = {}
        for share, at, *rest in found:
            if start <= at <= state.now_s and rest[1]:
                submits.setdefault(share, []).append((at, *rest))  # type: ignore[arg-type]
        shares = frozenset(j.share for j in (*state.running, *state.waiting))
        return cls(state.now_s, start, submits, examples, shares)

    def spans_days(self) -> bool:
        """Whether the window holds :data:`MIN_DAYS` whole UTC days (the past days replayed)."""
        return len(self.whole_days()) >= MIN_DAYS

    def whole_days(self) -> list[float]:
        """Epoch starts of the whole UTC days inside the window."""
        first = math.ceil(self.start / DAY_S) * DAY_S
        return [d for d in range(int(first), int(self.now_s - DAY_S) + 1, int(DAY_S))]

    def day_model(self) -> ArrivalModel:
        days = self.whole_days()
        models: dict[str, tuple[list[list[Submit]], list[list[Submit]]]] = {}
        missing: dict[str, str] = {}
        for share in sorted(set(self.submits) | self.active):
            submits = self.submits.get(share, ())
            runs = len(self.examples.get(share, ()))
            if submits and runs < MIN_RUNS:
                missing[share] = f"{runs} finished run(s) to copy (fewer than {MIN_RUNS})"
                continue
            kinds: tuple[list[list[Submit]], list[list[Submit]]] = ([], [])
            for day in days:
                kinds[weekend(day)].append(
                    [(at - day, *rest) for at, *rest in submits if day <= at < day + DAY_S]  # type: ignore[misc]
                )
            models[share] = kinds
        return ArrivalModel(
            examples=self.examples,
            days={s: (tuple(map(tuple, w)), tuple(map(tuple, e))) for s, (w, e) in models.items()},
            missing=missing,
        )

    def poisson_model(self) -> ArrivalModel:
        hours = [0.0] * SLOTS
        t = self.start
        while t < self.now_s:
            step = min(HOUR_S - t % HOUR_S, self.now_s - t)
            hours[slot_of(t)] += step / HOUR_S
            t += step
        rates: dict[str, list[float]] = {}
        for share, submits in self.submits.items():
            counts = [0.0] * SLOTS
            for submit in submits:
                counts[slot_of(submit[0])] += 1
            rates[share] = [n / h if h else 0.0 for n, h in zip(counts, hours, strict=True)]
        seen = (sum(hours[:24]), sum(hours[24:]))
        return ArrivalModel(rates, self.examples, hours_seen=seen)


def _poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw (Knuth's; the means here are small)."""
    if mean <= 0:
        return 0
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k
