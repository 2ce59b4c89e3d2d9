"""Owns turning what ran (a simulation's jobs, a queue's history) into the cost model's attempts.

The cost rules are the model's (:mod:`quota_constructs.model.cost`); this module only reads
attempts: the scheduler's :class:`Job` records for a simulation, the plain history records of
:func:`quota_constructs.runtime.adopt.read_job_history` for a live queue.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from quota_constructs.advisor.simulate import SimulationOptions, simulated_jobs
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.model import Organisation
from quota_constructs.model.cost import Attempt
from quota_constructs.scheduling import Job


class Span(Protocol):
    """One attempt of a history record."""

    @property
    def started_s(self) -> float: ...
    @property
    def stopped_s(self) -> float | None: ...
    @property
    def preempted(self) -> bool: ...


class BilledJob(Protocol):
    """What the bill reads of one history record (``runtime.adopt.JobRecord``)."""

    @property
    def share(self) -> str: ...
    @property
    def instance_type(self) -> str | None: ...
    @property
    def instance_count(self) -> int | None: ...
    @property
    def attempt_spans(self) -> Sequence[Span]: ...


def attempts_from_history(records: Iterable[BilledJob], *, now_s: float) -> list[Attempt]:
    """Every attempt that ran, preempted ones included; one still running ends at ``now_s``.

    Jobs without a single instance type cannot be priced and are left out (the history report
    counts them). Checkpoints are unknown, so a preempted attempt's whole run is lost.
    """
    out = []
    for record in records:
        if record.instance_type is None or not record.instance_count:
            continue
        for span in record.attempt_spans:
            stop = now_s if span.stopped_s is None else span.stopped_s
            out.append(
                Attempt(
                    record.share,
                    record.instance_type,
                    record.instance_count,
                    span.started_s,
                    stop,
                    preempted=span.preempted,
                )
            )
    return out


def _kept(ran: float, interval: float | None) -> float:
    return math.floor(ran / interval) * interval if interval else 0.0


def attempts_from_jobs(jobs: Iterable[Job], *, offset_s: float = 0.0) -> list[Attempt]:
    """The attempts of simulated jobs (times shifted by ``offset_s``), checkpoints kept."""
    out = []
    for job in jobs:
        ((itype, count),) = job.demand.items()
        interval = job.request.checkpoint_interval_s
        for a in job.attempts:
            if a.started_at is None:
                continue
            ran = a.stopped_at - a.started_at
            out.append(
                Attempt(
                    job.share_name,
                    itype,
                    count,
                    a.started_at + offset_s,
                    a.stopped_at + offset_s,
                    preempted=a.preempted,
                    kept_s=_kept(ran, interval) if a.preempted else 0.0,
                )
            )
        if job.started_at is not None and job.status.is_dispatched:
            out.append(Attempt(job.share_name, itype, count, job.started_at + offset_s, math.inf))
    return out


def simulated_attempts(
    org: Organisation,
    jobs: Sequence[WorkloadJob],
    *,
    options: SimulationOptions | None = None,
    offset_s: float = 0.0,
) -> list[Attempt]:
    """Run ``jobs`` on ``org`` and return every attempt that ran (time 0 at ``offset_s``, the
    plans' windows placed from it)."""
    options = replace(options or SimulationOptions(), plan_epoch_s=offset_s)
    return attempts_from_jobs(simulated_jobs(org, jobs, options=options), offset_s=offset_s)
