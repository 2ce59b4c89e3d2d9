"""Jobs that may arrive during a forecast's horizon: each share's past submit rate, by hour.

Off by default (a forecast then says that it does not foresee arrivals). The model counts each
share's jobs created in the history window (finished, running and waiting) per hour of the day,
weekdays and weekends apart (UTC), over the hours of that kind the window spans, and replays
that rate as a Poisson process, hour by hour; each arrival copies a random finished job of the
share (its instances, run time and priority; a past job's priority the history does not know
is one of the share's jobs running or waiting now, else 0).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from quota_constructs.forecast.inputs import LiveJob, QueueState

HOUR_S = 3600.0
SLOTS = 48
"""Hours of a weekday (0-23), then of a weekend day (24-47)."""
Example = tuple[str, int, float, int]
"""(instance type, instances, run seconds, priority) of a past job."""


def slot_of(epoch_s: float) -> int:
    """The :data:`SLOTS` index of an instant: hour of the day, plus 24 on Saturday or Sunday."""
    days = math.floor(epoch_s / 86400.0)
    weekend = (days + 3) % 7 >= 5  # 1970-01-01 was a Thursday
    return int(epoch_s % 86400.0 // HOUR_S) + (24 if weekend else 0)


@dataclass(frozen=True)
class ArrivalModel:
    """Per share, jobs per hour in each of the :data:`SLOTS`, and the past jobs to copy."""

    rates: Mapping[str, Sequence[float]] = field(default_factory=dict)
    examples: Mapping[str, Sequence[Example]] = field(default_factory=dict)

    @classmethod
    def steady(
        cls, jobs_per_hour: Mapping[str, float], examples: Mapping[str, Sequence[Example]]
    ) -> ArrivalModel:
        """The same rate at every hour."""
        return cls({s: [r] * SLOTS for s, r in jobs_per_hour.items()}, examples)

    @classmethod
    def from_state(cls, state: QueueState, since_s: float | None = None) -> ArrivalModel:
        """The rates of ``state``'s jobs created since ``since_s`` (default: the oldest job's
        creation), the examples its finished runs."""
        created = [(r.share, r.created_s) for r in state.history if r.created_s is not None]
        created += [(j.share, j.created_s) for j in (*state.running, *state.waiting)]
        start = min((t for _, t in created), default=state.now_s) if since_s is None else since_s
        hours = [0.0] * SLOTS
        t = start
        while t < state.now_s:
            step = min(HOUR_S - t % HOUR_S, state.now_s - t)
            hours[slot_of(t)] += step / HOUR_S
            t += step
        counts: dict[str, list[float]] = {}
        for share, at in created:
            if start <= at <= state.now_s:
                counts.setdefault(share, [0.0] * SLOTS)[slot_of(at)] += 1
        rates = {
            s: [n / h if h else 0.0 for n, h in zip(c, hours, strict=True)]
            for s, c in counts.items()
        }
        known: dict[str, list[int]] = {}
        for job in (*state.running, *state.waiting):
            known.setdefault(job.share, []).append(job.priority)
        examples: dict[str, list[Example]] = {}
        for index, run in enumerate(state.history):
            seen = known.get(run.share) or [0]
            priority = seen[index % len(seen)] if run.priority is None else run.priority
            found = (run.instance_type, run.instance_count, run.run_s, priority)
            examples.setdefault(run.share, []).append(found)
        return cls(rates, examples)

    def draw(
        self, rng: random.Random, now_s: float, horizon_s: float
    ) -> list[tuple[float, LiveJob, float]]:
        """Arrivals over ``horizon_s`` from epoch ``now_s``: (seconds from now, job, run
        seconds), in time order."""
        found: list[tuple[float, LiveJob, float]] = []
        for share, rates in sorted(self.rates.items()):
            examples = self.examples.get(share) or ()
            if not examples:
                continue
            t = 0.0
            while t < horizon_s:
                step = min(HOUR_S - (now_s + t) % HOUR_S, horizon_s - t)
                mean = rates[slot_of(now_s + t)] * step / HOUR_S
                for _ in range(_poisson(rng, mean)):
                    at = t + rng.random() * step
                    itype, count, run_s, priority = rng.choice(examples)
                    job_id = f"arrival-{share}-{len(found) + 1}"
                    job = LiveJob(job_id, job_id, share, {itype: count}, priority)
                    found.append((at, job, run_s))
                t += step
        return sorted(found, key=lambda item: item[0])


def _poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw (Knuth's; the means here are small)."""
    if mean <= 0:
        return 0
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k
