"""Owns turning what ran (a simulation's jobs, a queue's history) into the cost model's attempts.

The cost rules are the model's (:mod:`quota_constructs.model.cost`); this module only reads
attempts: the scheduler's :class:`Job` records for a simulation, the plain history records of
:func:`quota_constructs.runtime.adopt.read_job_history` for a live queue.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from quota_constructs.advisor.simulate import (
    HOUR_S,
    SimulationOptions,
    on_simulated_clocks,
    simulated_jobs,
)
from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.model import SIMULATION_START, Organisation
from quota_constructs.model.cost import (
    Attempt,
    ChargeRule,
    CostReport,
    Price,
    cost_report,
    price_of,
)
from quota_constructs.scheduling import Job, JobStatus


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


def attempts_from_jobs(
    jobs: Iterable[Job], *, offset_s: float = 0.0, billed_from_s: float | None = None
) -> list[Attempt]:
    """The attempts of simulated jobs (times shifted by ``offset_s``), checkpoints kept.

    ``billed_from_s``: seconds after an attempt's dispatch that SageMaker starts billing it
    (:attr:`SimulationOptions.unbilled_startup_s`), so the billed part of the start-up is
    billed, an attempt preempted during it too; ``None``: from the run's start (RUNNING).
    """
    out = []
    for job in jobs:
        ((itype, count),) = job.demand.items()
        interval = job.request.checkpoint_interval_s
        for a in job.attempts:
            start = _billed_start(a.scheduled_at, a.started_at, billed_from_s)
            if start is None or a.stopped_at <= start:
                continue
            ran = a.stopped_at - a.started_at if a.started_at is not None else 0.0
            kept = _kept(ran, interval) if a.preempted else 0.0
            out.append(
                Attempt(
                    job.share_name,
                    itype,
                    count,
                    start + offset_s,
                    a.stopped_at + offset_s,
                    preempted=a.preempted,
                    kept_s=kept + (a.stopped_at - start - ran) if kept else 0.0,
                )
            )
        if job.status.is_dispatched and job.scheduled_at is not None:
            start = _billed_start(job.scheduled_at, job.started_at, billed_from_s)
            if start is not None:
                out.append(Attempt(job.share_name, itype, count, start + offset_s, math.inf))
    return out


def _billed_start(
    scheduled_at: float, started_at: float | None, billed_from_s: float | None
) -> float | None:
    if billed_from_s is None:
        return started_at
    return scheduled_at + billed_from_s


def simulated_attempts(
    org: Organisation,
    jobs: Sequence[WorkloadJob],
    *,
    options: SimulationOptions | None = None,
    offset_s: float = 0.0,
) -> list[Attempt]:
    """Run ``jobs`` on ``org`` and return every attempt that ran, the billed start-up included
    (time 0 at ``offset_s``, the plans' windows placed from it)."""
    options = replace(options or SimulationOptions(), plan_epoch_s=offset_s)
    return attempts_from_jobs(
        simulated_jobs(org, jobs, options=options),
        offset_s=offset_s,
        billed_from_s=options.unbilled_startup_s,
    )


# --- money on equal work ----------------------------------------------------------------------


@dataclass(frozen=True)
class UnfinishedJob:
    """A job a run did not run to completion, and what finishing it on demand would cost."""

    job: str
    share: str
    instance_type: str
    instance_count: int
    reason: str
    left_s: float
    """Run time still to do (its duration less what checkpoints kept) plus the billed start-up."""
    would_cost_usd: float


@dataclass(frozen=True)
class Bill:
    """One configuration's bill of a whole workload, every job run to its end (no window cut).

    ``report`` bills every attempt that ran; the jobs that did not finish are named with what
    finishing them on demand would cost, so that bills of different configurations compare
    the same work: :attr:`equal_work_usd`."""

    report: CostReport
    jobs_billed: int
    """Jobs that ran to completion (SUCCEEDED)."""
    unfinished: tuple[UnfinishedJob, ...]
    baseline_usd: float | None = None
    """The all-RESERVE run's :attr:`equal_work_usd` on the same jobs (``None``: not run)."""

    @property
    def unfinished_usd(self) -> float:
        return math.fsum(u.would_cost_usd for u in self.unfinished)

    @property
    def equal_work_usd(self) -> float:
        """What the whole workload costs: the bill plus finishing the unfinished on demand."""
        return self.report.total_cost_usd + self.unfinished_usd

    @property
    def saving_usd(self) -> float | None:
        """What sharing saves against the all-RESERVE run of the same jobs."""
        return None if self.baseline_usd is None else self.baseline_usd - self.equal_work_usd


def unfinished_jobs(
    jobs: Iterable[Job], prices: Mapping[str, Price], *, billed_startup_s: float
) -> list[UnfinishedJob]:
    """Every job that did not SUCCEED, with the run time left and its on-demand price."""
    out = []
    for job in jobs:
        if job.status is JobStatus.SUCCEEDED:
            continue
        ((itype, count),) = job.demand.items()
        duration = job.request.duration_s or 0.0
        left = max(duration - job.progress_s, 0.0) + billed_startup_s
        usd = left / HOUR_S * count * price_of(prices, itype).on_demand
        reason = job.status_reason or f"{job.status.value} when the run ended"
        out.append(
            UnfinishedJob(job.request.job_name, job.share_name, itype, count, reason, left, usd)
        )
    return out


@dataclass(frozen=True)
class Run:
    """A run to bill: its organisation, its jobs after the run, the UTC epoch of its time 0
    (where the simulator placed its training plans)."""

    organisation: Organisation
    jobs: Sequence[Job]
    start_s: float = 0.0


def equal_work_bills(
    runs: Mapping[str, Run],
    prices: Mapping[str, Price],
    options: SimulationOptions,
    *,
    baseline_of: Mapping[str, str] | None = None,
    rule: ChargeRule = ChargeRule.BOTH,
) -> dict[str, Bill]:
    """Bill each run over one period: from its time 0 to the latest end of any run (at least
    the window), so plan fees cover the same hours and no attempt is cut; calendars read where
    the simulator placed them (:data:`SIMULATION_START`, :func:`on_simulated_clocks`).
    ``baseline_of``: label -> the label of
    the all-RESERVE run its saving is against."""
    billed_from = options.unbilled_startup_s
    billed_startup = options.startup_s - billed_from
    attempts = {
        label: attempts_from_jobs(run.jobs, offset_s=run.start_s, billed_from_s=billed_from)
        for label, run in runs.items()
    }
    ends = [
        a.stop_s - runs[label].start_s
        for label, run_attempts in attempts.items()
        for a in run_attempts
        if a.stop_s != math.inf
    ]
    length = max([*ends, options.window_s or 0.0], default=0.0)
    bills = {}
    for label, run in runs.items():
        report = cost_report(
            on_simulated_clocks(run.organisation),
            attempts[label],
            prices,
            start_s=run.start_s,
            end_s=run.start_s + length,
            rule=rule,
            calendar_offset_s=SIMULATION_START.timestamp() - run.start_s,
            calendar_grace_s=options.calendar_grace_s,
        )
        left = unfinished_jobs(run.jobs, prices, billed_startup_s=billed_startup)
        bills[label] = Bill(report, len(run.jobs) - len(left), tuple(left))
    for label, base in (baseline_of or {}).items():
        bills[label] = replace(bills[label], baseline_usd=bills[base].equal_work_usd)
    return bills
