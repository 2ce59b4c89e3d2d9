"""Run-time estimates: what the forecast samples each job's run time from.

In order of preference, for each job:

1. its own hint (:data:`~quota_constructs.forecast.inputs.RUNTIME_HINT_TAG`): the hint times a
   log-normal spread of :data:`HINT_SPREAD` (the hint is taken as the median);
2. the team's past runs of similar jobs: the most specific group of the history with at least
   :data:`MIN_RUNS` runs among (share, instance type, instances, name stem), (share, instance
   type, instances), (share, instance type), (share); a past run is drawn at random and
   jittered by a log-normal kernel as wide as Silverman's rule gives for the group's log run
   times, at least :data:`RUN_JITTER` (:func:`kernel_width`: a few runs understate the tails);
3. the whole queue's past runs, when the team has fewer than :data:`MIN_RUNS` (flagged as a
   short history);
4. nothing known: uniform between 0 and its ``MaxRuntimeInSeconds`` (SageMaker's default of a
   day when it has none), flagged too.

Every draw is capped at the job's ``MaxRuntimeInSeconds`` (SageMaker stops it there). A job
already running is drawn from the runs longer than what it ran so far (when there are none,
uniformly up to its cap), less what it ran.
"""

from __future__ import annotations

import math
import random
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from quota_constructs.forecast.inputs import LiveJob, PastRun

MIN_RUNS = 5
"""Past runs a group needs before the forecast samples from it."""
HINT_SPREAD = 0.25
"""Sigma of the log-normal spread around a job's hint."""
RUN_JITTER = 0.1
"""Sigma of the log-normal jitter of a drawn past run."""
DEFAULT_MAX_RUNTIME_S = 86400.0
"""SageMaker's ``MaxRuntimeInSeconds`` default (one day)."""
_STEM = re.compile(r"[\W\d_]+$")


def name_stem(name: str) -> str:
    """A job name without its trailing counter (``train-0042`` -> ``train``)."""
    return _STEM.sub("", name) or name


def _keys(share: str, demand: Mapping[str, int], name: str) -> list[tuple[str, ...]]:
    if len(demand) != 1:
        return [(share,), ()]
    (itype, count), *_ = demand.items()
    return [
        (share, itype, str(count), name_stem(name)),
        (share, itype, str(count)),
        (share, itype),
        (share,),
        (),
    ]


@dataclass(frozen=True)
class Source:
    """Where a job's run time comes from: ``hint``, ``history`` (the team's runs),
    ``queue-history`` (every team's) or ``max-runtime`` (nothing known)."""

    kind: str
    runs: tuple[float, ...] = ()
    jitter: float = 0.0
    """The log-normal jitter of a draw from ``runs`` (:func:`kernel_width`)."""


class RunTimeModel:
    """Samplers of run time per job, built once from the history."""

    def __init__(self, history: Iterable[PastRun]) -> None:
        groups: dict[tuple[str, ...], list[float]] = {}
        for run in history:
            for key in _keys(run.share, {run.instance_type: run.instance_count}, run.job_name):
                groups.setdefault(key, []).append(run.run_s)
        self._groups = {k: tuple(sorted(v)) for k, v in groups.items()}
        self._widths: dict[tuple[str, ...], float] = {}

    def runs_of(self, share: str) -> int:
        """Past runs of ``share`` in the history."""
        return len(self._groups.get((share,), ()))

    def source(self, job: LiveJob) -> Source:
        """Where ``job``'s run time comes from (see the module docstring)."""
        if job.hint_s is not None:
            return Source("hint")
        for key in _keys(job.share, job.demand, job.job_name):
            runs = self._groups.get(key, ())
            if len(runs) >= MIN_RUNS:
                if key not in self._widths:  # once per group: a queue holds many jobs alike
                    self._widths[key] = kernel_width(runs)
                return Source("history" if key else "queue-history", runs, self._widths[key])
        return Source("max-runtime")

    def sampler(self, job: LiveJob, now_s: float) -> Sampler:
        """A sampler of ``job``'s remaining run time from ``now_s`` on."""
        cap = job.max_runtime_s or DEFAULT_MAX_RUNTIME_S
        elapsed = 0.0 if job.started_s is None else max(now_s - job.started_s, 0.0)
        return Sampler(self.source(job), job.hint_s, cap, elapsed)


class Sampler:
    """Draws one job's remaining run time (seconds, >= 1)."""

    __slots__ = ("_cap", "_elapsed", "_hint", "_jitter", "_runs", "_uniform")

    def __init__(self, source: Source, hint: float | None, cap: float, elapsed: float) -> None:
        self._hint = hint
        self._cap = cap
        self._elapsed = elapsed
        longer: Sequence[float] = (
            [r for r in source.runs if r > elapsed] if elapsed else source.runs
        )
        self._runs = tuple(longer)
        self._uniform = hint is None and not self._runs
        self._jitter = source.jitter

    def draw(self, rng: random.Random) -> float:
        cap, elapsed = self._cap, self._elapsed
        if self._hint is not None:
            total = self._hint * math.exp(rng.gauss(0.0, HINT_SPREAD))
            if total <= elapsed:  # ran past its hint: the rest of its cap, uniformly
                total = rng.uniform(elapsed, max(cap, elapsed))
        elif self._uniform:
            total = rng.uniform(elapsed, max(cap, elapsed))
        else:
            run = rng.choice(self._runs)
            total = run * math.exp(rng.gauss(0.0, self._jitter))
            while total <= elapsed:  # jittered on the condition that it outlasts what has run
                total = run * math.exp(rng.gauss(0.0, self._jitter))
        return max(min(total, cap) - elapsed, 1.0)


def kernel_width(runs: Sequence[float]) -> float:
    """The log-normal jitter of a draw from ``runs``: Silverman's rule of thumb on the log run
    times (1.06 x their spread x n^-1/5), at least :data:`RUN_JITTER`: a few runs of a wide
    distribution understate its tails, and the jitter widens them as a kernel density does."""
    if len(runs) < 2:
        return RUN_JITTER
    logs = [math.log(max(r, 1.0)) for r in runs]
    return max(RUN_JITTER, 1.06 * statistics.stdev(logs) * len(logs) ** -0.2)
