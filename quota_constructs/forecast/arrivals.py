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
share's jobs running or waiting now, else 0; a past submission still running or waiting takes
the run time of a random finished run of its share.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
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
        if method == "days" and len(history.whole_days()) >= MIN_DAYS:
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
        found: list[Arrival] = []
        for share, rates in sorted(self.rates.items()):
            if share not in self.days:
                found += self._poisson(rng, share, rates, now_s, horizon_s, len(found))
        for share, kinds in sorted(self.days.items()):
            found += self._replay(rng, share, kinds, now_s, horizon_s, len(found))
        return sorted(found, key=lambda item: item[0])

    def _poisson(
        self,
        rng: random.Random,
        share: str,
        rates: Sequence[float],
        now_s: float,
        horizon_s: float,
        index: int,
    ) -> list[Arrival]:
        examples = self.examples.get(share) or ()
        found: list[Arrival] = []
        t = 0.0
        while examples and t < horizon_s:
            step = min(HOUR_S - (now_s + t) % HOUR_S, horizon_s - t)
            mean = rates[slot_of(now_s + t)] * step / HOUR_S
            for _ in range(_poisson(rng, mean)):
                itype, count, run_s, priority = rng.choice(examples)
                at = t + rng.random() * step
                found.append(_arrival(share, index + len(found), at, itype, count, run_s, priority))
            t += step
        return found

    def _replay(
        self,
        rng: random.Random,
        share: str,
        kinds: tuple[Sequence[Sequence[Submit]], Sequence[Sequence[Submit]]],
        now_s: float,
        horizon_s: float,
        index: int,
    ) -> list[Arrival]:
        runs = [e[2] for e in self.examples.get(share) or ()]
        jitter = self._jitters.get(share, 0.0)
        found: list[Arrival] = []
        hour = math.floor(now_s / HOUR_S) * HOUR_S
        while hour < now_s + horizon_s:
            days = kinds[weekend(hour)]
            shift = rng.randint(-self.spread_h, self.spread_h) * HOUR_S if days else 0.0
            past = rng.choice(days) if days else ()
            begin = hour % DAY_S + shift
            for offset, itype, count, run_s, priority in past:
                at = offset - begin
                if not 0.0 <= at < HOUR_S or not 0.0 < hour + at - now_s <= horizon_s:
                    continue
                base = rng.choice(runs) if run_s is None else run_s
                run = max(base * math.exp(rng.gauss(0.0, jitter)), 1.0)
                job = _arrival(
                    share, index + len(found), hour + at - now_s, itype, count, run, priority
                )
                found.append(job)
            hour += HOUR_S
        return found


def _arrival(
    share: str, index: int, at: float, itype: str, count: int, run_s: float, priority: int
) -> Arrival:
    job_id = f"arrival-{share}-{index + 1}"
    return at, LiveJob(job_id, job_id, share, {itype: count}, priority), run_s


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
        known: dict[str, list[int]] = {}
        for job in (*state.running, *state.waiting):
            known.setdefault(job.share, []).append(job.priority)
        found: list[tuple[str, float, str, int, float | None, int]] = []
        examples: dict[str, list[Example]] = {}
        for index, run in enumerate(state.history):
            seen = known.get(run.share) or [0]
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
        active = frozenset(j.share for j in (*state.running, *state.waiting))
        return cls(state.now_s, start, submits, examples, active)

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
