"""Owns turning a queue's job history (plain records) into a what-if workload, and its report.

Pure: the records come from :func:`quota_constructs.runtime.adopt.read_job_history` (or any
object with the same attributes, :class:`ObservedJob`). Each job becomes one
:class:`WorkloadJob` (time 0 is the start of the history window) or is left out, and every job
is counted under one :class:`Handling` so the report says what the replay could not know.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import Protocol

from quota_constructs.advisor.workload import WorkloadJob
from quota_constructs.model import Problem, QuotaConfigError

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([smhdw])\s*$")
DURATION_FORMAT = "a number and a unit s, m, h, d or w, e.g. 90m, 1h, 7d"


def parse_duration(text: str, option: str = "--since") -> float:
    """``90m``, ``1h``, ``7d`` (also ``s``, ``w``) -> seconds; :class:`QuotaConfigError` else."""
    found = _DURATION.match(text)
    seconds = float(found[1]) * _UNITS[found[2]] if found else 0.0
    if seconds <= 0:
        raise QuotaConfigError(
            [Problem(option, text, f"not a duration; write {DURATION_FORMAT}", f"e.g. {option} 7d")]
        )
    return seconds


class ObservedJob(Protocol):
    """What the history conversion reads of one job (times in epoch seconds)."""

    @property
    def share(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def created_s(self) -> float: ...
    @property
    def first_dispatch_s(self) -> float | None: ...
    @property
    def run_started_s(self) -> float | None: ...
    @property
    def run_stopped_s(self) -> float | None: ...
    @property
    def instance_type(self) -> str | None: ...
    @property
    def instance_count(self) -> int | None: ...
    @property
    def priority(self) -> int: ...
    @property
    def is_terminated(self) -> bool: ...
    @property
    def preemptions(self) -> int: ...


class Handling(Enum):
    """How a job of the history enters the replay (the report counts each)."""

    SUCCEEDED = "succeeded: replayed with the run time of its last attempt"
    FAILED = "failed: replayed as succeeding after the run time of its last attempt"
    TERMINATED_RUNNING = "terminated after it ran: replayed until the moment it was stopped"
    RUNNING = "still running: replayed with its run time so far (a lower bound)"
    WAITING = "still waiting: left out (its run time is unknown)"
    NEVER_RAN = "ended without running (terminated or failed while waiting): left out"
    NO_INSTANCE_TYPE = "no single instance type in its request: left out"

    @property
    def replayed(self) -> bool:
        return self in _REPLAYED


_REPLAYED = frozenset(
    {Handling.SUCCEEDED, Handling.FAILED, Handling.TERMINATED_RUNNING, Handling.RUNNING}
)
_WAITING = frozenset({"SUBMITTED", "PENDING", "RUNNABLE"})
_RUNNING = frozenset({"SCHEDULED", "STARTING", "RUNNING"})


def handling(job: ObservedJob) -> Handling:
    """How ``job`` is replayed (see :class:`Handling`)."""
    if job.instance_type is None or not job.instance_count:
        return Handling.NO_INSTANCE_TYPE
    if job.status in _RUNNING:
        return Handling.RUNNING if job.run_started_s is not None else Handling.WAITING
    if job.status in _WAITING:
        return Handling.WAITING
    if job.run_started_s is None or job.run_stopped_s is None:
        return Handling.NEVER_RAN
    if job.is_terminated:
        return Handling.TERMINATED_RUNNING
    return Handling.SUCCEEDED if job.status == "SUCCEEDED" else Handling.FAILED


@dataclass(frozen=True)
class ObservedShare:
    """What the queue reported for one share: waits of jobs that started, preemptions."""

    share: str
    jobs: int
    started: int
    waits: tuple[float, ...]
    """First dispatch minus creation, seconds, sorted."""
    preemptions: int
    preempted_jobs: int

    @property
    def wait_p50_s(self) -> float:
        return statistics.median(self.waits) if self.waits else 0.0

    @property
    def wait_max_s(self) -> float:
        return self.waits[-1] if self.waits else 0.0


@dataclass(frozen=True)
class HistoryWorkload:
    """The replayable workload of a history, how every job was handled, what was observed."""

    jobs: tuple[WorkloadJob, ...]
    start_s: float
    """Epoch seconds of workload time 0 (the start of the history window)."""
    window_s: float
    counts: Mapping[Handling, int] = field(default_factory=dict)
    observed: tuple[ObservedShare, ...] = ()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def start_iso(self) -> str:
        """Workload time 0 in ISO 8601, UTC (``quota forecast calibrate --start`` takes it)."""
        return datetime.fromtimestamp(self.start_s, UTC).isoformat()

    def report(self) -> list[str]:
        """One line per kind of job found: count and how it was replayed."""
        return [f"{n} {h.value}" for h, n in self.counts.items() if n]

    def as_json(self) -> dict[str, object]:
        """The report for ``--json`` (camelCase keys)."""
        return {
            "jobsRead": self.total,
            "jobsReplayed": len(self.jobs),
            "historyStart": self.start_iso,
            "windowSeconds": self.window_s,
            "handling": {h.name: {"jobs": n, "how": h.value} for h, n in self.counts.items()},
            "observed": {
                s.share: {
                    "jobs": s.jobs,
                    "started": s.started,
                    "waitP50Seconds": s.wait_p50_s,
                    "waitMaxSeconds": s.wait_max_s,
                    "preemptions": s.preemptions,
                    "preemptedJobs": s.preempted_jobs,
                }
                for s in self.observed
            },
        }


def _duration(job: ObservedJob, handled: Handling, now_s: float) -> float:
    started = job.run_started_s or 0.0
    stopped = now_s if handled is Handling.RUNNING else (job.run_stopped_s or started)
    return max(stopped - started, 0.001)  # a job that ran for no measurable time still ran


def workload_from_history(
    records: Iterable[ObservedJob], *, start_s: float, now_s: float
) -> HistoryWorkload:
    """The workload of ``records`` (submit time: creation minus ``start_s``), counted by handling.

    Each replayed job keeps its share, instance type and count, current scheduling priority and
    run time (see :class:`Handling`); checkpoints are unknown, so none are assumed.
    """
    jobs: list[WorkloadJob] = []
    counts = dict.fromkeys(Handling, 0)
    kept = sorted(records, key=lambda r: r.created_s)
    for record in kept:
        handled = handling(record)
        counts[handled] += 1
        if not handled.replayed:
            continue
        assert record.instance_type is not None and record.instance_count
        jobs.append(
            WorkloadJob(
                submit_time_s=max(record.created_s - start_s, 0.0),
                share=record.share,
                instance_type=record.instance_type,
                instance_count=record.instance_count,
                duration_s=_duration(record, handled, now_s),
                priority=record.priority,
            )
        )
    return HistoryWorkload(
        jobs=tuple(jobs),
        start_s=start_s,
        window_s=max(now_s - start_s, 0.0),
        counts={h: n for h, n in counts.items() if n},
        observed=observed_shares(kept),
    )


def observed_shares(records: Sequence[ObservedJob]) -> tuple[ObservedShare, ...]:
    """Per share, in order of first appearance: waits and preemptions as the queue reported."""
    by_share: dict[str, list[ObservedJob]] = {}
    for record in records:
        by_share.setdefault(record.share, []).append(record)
    return tuple(
        ObservedShare(
            share=share,
            jobs=len(jobs),
            started=sum(j.first_dispatch_s is not None for j in jobs),
            waits=tuple(
                sorted(
                    j.first_dispatch_s - j.created_s for j in jobs if j.first_dispatch_s is not None
                )
            ),
            preemptions=sum(j.preemptions for j in jobs),
            preempted_jobs=sum(j.preemptions > 0 for j in jobs),
        )
        for share, jobs in by_share.items()
    )
