"""Owns reading a live queue into the forecast's inputs, and the what-if of a submission.

:func:`read_queue_state` reads, per forecast: ``ListServiceJobs`` once per active status (one call
per page of 100), ``DescribeServiceJob`` once per active job (priority, payload's
``MaxRuntimeInSeconds``, run-time hint tag, preemption retries, the finished attempts' start and
stop: the list has none of them), and the
newest finished jobs (``SUCCEEDED`` and ``FAILED``, at most ``history_jobs``, from the list) as the
run history, with ``DescribeServiceJob`` of a few of them per share for their priorities
(:func:`~quota_constructs.forecast.arrivals.sample_for_priorities`) when the forecast foresees
arrivals, which copy them; the shares come from the
client's cached ``ListQuotaShares``, the RUNNABLE time-limit actions from its cached
``DescribeJobQueues``.
Calendars, plans and the teams' priority caps are not in the API: they come from the
organisation file when one is given. The forecast itself is
:func:`quota_constructs.forecast.forecast` (docs/runtime.md, "Forecasts").
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from botocore.exceptions import ClientError

from quota_constructs.api_shapes import SAGEMAKER_DEFAULT_MAX_RUNTIME_S, time_limits_from_api
from quota_constructs.forecast import LiveJob, PastRun, QueueState, runtime_hint
from quota_constructs.forecast.arrivals import PRIORITY_SAMPLE, sample_for_priorities
from quota_constructs.forecast.engine import Arrivals, copies_past_priorities
from quota_constructs.model import JobQueueSpec, Organisation, QuotaShareSpec
from quota_constructs.runtime.jobs import ACTIVE_STATUSES, JobDetails, JobStatus, JobSummary

HISTORY_JOBS = 2000
"""Finished jobs read as the run history (newest first; 20 list calls per status at most)."""
WAITING = frozenset({JobStatus.SUBMITTED, JobStatus.PENDING, JobStatus.RUNNABLE})


class JobSource(Protocol):
    """What the reading uses of a queue client (a :class:`~.queue.QueueClient` is one)."""

    def spec(self, *, refresh: bool = False) -> JobQueueSpec: ...

    def queue_detail(self, *, refresh: bool = False) -> dict[str, Any]: ...

    def list_pages(
        self, status: JobStatus, *, share: str | None = None, page_size: int | None = None
    ) -> Iterator[list[JobSummary]]: ...

    def describe(self, job: Any) -> JobDetails: ...


@dataclass(frozen=True)
class OrganisationExtras:
    """What the organisation file adds to a live queue: calendars, plans, priority caps."""

    calendars: Mapping[str, Any]
    plans: tuple[Any, ...]
    priority_caps: Mapping[str, int]

    @classmethod
    def of(cls, org: Organisation | None) -> OrganisationExtras:
        if org is None:
            return cls({}, (), {})
        caps = {
            s.name: s.access.max_priority
            for s in org.queue.shares
            if s.access is not None and s.access.max_priority is not None
        }
        return cls(dict(org.calendars), tuple(org.training_plans), caps)


def max_runtime_of(payload: str | None) -> float:
    """``StoppingCondition.MaxRuntimeInSeconds`` of a payload as the API gives it (JSON text;
    SageMaker's default without one)."""
    try:
        parsed = json.loads(payload or "{}")
    except ValueError:
        parsed = None
    return max_runtime_in(parsed)


def max_runtime_in(payload: object) -> float:
    """``StoppingCondition.MaxRuntimeInSeconds`` of a parsed payload (SageMaker's default
    without one, or when the payload is not an object)."""
    value = None
    if isinstance(payload, dict):
        condition = payload.get("StoppingCondition")
        if isinstance(condition, dict):
            value = condition.get("MaxRuntimeInSeconds")
    return (
        float(value)
        if isinstance(value, int | float) and value > 0
        else float(SAGEMAKER_DEFAULT_MAX_RUNTIME_S)
    )


def live_job(details: JobDetails, fallback_demand: Mapping[str, int] | None = None) -> LiveJob:
    """A described job as the forecast's :class:`LiveJob`."""
    demand = dict(details.capacity_usage or fallback_demand or {})
    return LiveJob(
        job_id=details.job_id,
        job_name=details.job_name,
        share=details.share or "",
        demand=demand,
        priority=details.priority or 0,
        created_s=details.created_at.timestamp() if details.created_at else 0.0,
        started_s=_running_since(details),
        max_runtime_s=max_runtime_of(details.payload),
        hint_s=runtime_hint(details.tags),
        preemption_retries=details.preemption_retries,
        status_reason=details.status_reason,
        retry_attempts=details.retry_attempts,
        held=tuple((a.timestamp(), b.timestamp()) for a, b in details.attempt_windows),
    )


def _running_since(details: JobDetails) -> float | None:
    """When a dispatched job's run began: ``startedAt`` (RUNNING, as the history's run times
    count), else ``scheduledAt`` (still starting); ``None`` for a waiting job."""
    if not details.status.is_dispatched:
        return None
    since = details.started_at or details.scheduled_at
    return since.timestamp() if since else None


def _described(client: JobSource, summary: JobSummary) -> JobDetails:
    """The job described; a job gone since it was listed (finished and expired) keeps what
    the list said, with the defaults for the rest."""
    try:
        return client.describe(summary.job_id)
    except ClientError:
        fields = {f.name: getattr(summary, f.name) for f in dataclasses.fields(JobSummary)}
        return JobDetails(**fields)


def past_runs(jobs: Iterable[JobSummary]) -> list[PastRun]:
    """Finished jobs that ran, as :class:`PastRun` (one instance type each)."""
    return [run for job in jobs if (run := _past_run(job)) is not None]


def _past_run(job: JobSummary) -> PastRun | None:
    """A finished job as a :class:`PastRun`; ``None`` when it never ran or ran on several
    instance types."""
    if job.started_at is None or job.stopped_at is None or len(job.capacity_usage) != 1:
        return None
    (itype, count), *_ = job.capacity_usage.items()
    run_s = (job.stopped_at - job.started_at).total_seconds()
    created = job.created_at.timestamp() if job.created_at else None
    return PastRun(
        job.share or "",
        job.job_name,
        itype,
        count,
        max(run_s, 1.0),
        created_s=created,
        stopped_s=job.stopped_at.timestamp(),
    )


def read_history(
    client: JobSource, limit: int = HISTORY_JOBS, priority_sample: int = PRIORITY_SAMPLE
) -> list[PastRun]:
    """The newest ``limit`` finished jobs of each final status as past runs, with the
    priorities of ``priority_sample`` of them per share (one describe each; a job gone since
    it was listed keeps none)."""
    ids, runs = _finished_runs(client, limit)
    return _with_priorities(client, ids, runs, priority_sample)


def _finished_runs(client: JobSource, limit: int) -> tuple[list[str], list[PastRun]]:
    """The newest ``limit`` finished jobs of each final status that ran: their ids, and each
    as a past run without its priority (the list does not tell it)."""
    ids: list[str] = []
    runs: list[PastRun] = []
    for status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        seen: list[JobSummary] = []
        for page in client.list_pages(status):
            seen += page
            if len(seen) >= limit:
                break
        for job in seen[:limit]:
            if (run := _past_run(job)) is not None:
                ids.append(job.job_id)
                runs.append(run)
    return ids, runs


def _with_priorities(
    client: JobSource, ids: Sequence[str], runs: Sequence[PastRun], per_share: int
) -> list[PastRun]:
    """``runs`` (of the jobs ``ids``) with the priorities of ``per_share`` of them per share
    read (:func:`~quota_constructs.forecast.arrivals.sample_for_priorities`)."""
    found = list(runs)
    shares, created = [r.share for r in runs], [r.created_s for r in runs]
    for index in sample_for_priorities(shares, created, per_share):
        with suppress(ClientError):
            priority = client.describe(ids[index]).priority
            found[index] = dataclasses.replace(found[index], priority=priority)
    return found


def own_settings(
    shares: Sequence[QuotaShareSpec], org: Organisation | None, now_s: float
) -> tuple[QuotaShareSpec, ...]:
    """The live shares with their own settings where a calendar of ``org`` has put a window's
    in force now (read during a window, a share shows the window's: the forecast's timetable
    starts from the share's own, as the emulator's does)."""
    if org is None:
        return tuple(shares)
    when = datetime.fromtimestamp(now_s, UTC)
    declared = {s.name: s for s in org.queue.shares}
    found = []
    for live in shares:
        calendar, base = org.calendars.get(live.name), declared.get(live.name)
        if calendar is not None and base is not None:
            live = calendar.as_deployed(live, base, when)
        found.append(live)
    return tuple(found)


def read_queue_state(
    client: JobSource,
    *,
    now_s: float | None = None,
    org: Organisation | None = None,
    history_jobs: int = HISTORY_JOBS,
    active: Sequence[JobSummary] | None = None,
    arrivals: Arrivals = None,
) -> QueueState:
    """The queue as the forecast sees it now (see the module docstring for the calls).

    ``active``: the queue's active jobs when the caller has just listed them (every active
    status of the whole queue, as :func:`~.jobs.active_jobs` orders them): not listed again.
    ``arrivals``: the forecast's (:data:`~quota_constructs.forecast.engine.Arrivals`): the
    finished jobs' priorities are read only when it foresees arrivals from the history
    (:func:`~quota_constructs.forecast.engine.copies_past_priorities`), the only use of them."""
    spec = client.spec()
    limits = time_limits_from_api(client.queue_detail().get("jobStateTimeLimitActions"))
    if active is None:
        active = [
            job for status in ACTIVE_STATUSES for page in client.list_pages(status) for job in page
        ]
    running: list[LiveJob] = []
    waiting: list[LiveJob] = []
    for summary in active:
        job = live_job(_described(client, summary), summary.capacity_usage)
        (waiting if summary.status in WAITING else running).append(job)
    waiting.reverse()  # listed newest first: jobs created at the same instant in submit order
    extras = OrganisationExtras.of(org)
    now = time.time() if now_s is None else now_s
    ids, history = _finished_runs(client, history_jobs)
    state = QueueState(
        now_s=now,
        shares=own_settings(spec.shares, org, now),
        running=tuple(running),
        waiting=tuple(waiting),
        history=tuple(history),
        calendars=extras.calendars,
        plans=extras.plans,
        priority_caps=extras.priority_caps,
        time_limits=limits,
    )
    if not copies_past_priorities(state, arrivals):
        return state
    return dataclasses.replace(
        state, history=tuple(_with_priorities(client, ids, history, PRIORITY_SAMPLE))
    )
