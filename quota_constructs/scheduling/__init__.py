"""The scheduler core: one quota-managed job queue in virtual time, pure and deterministic.

Clock-free: the caller passes virtual time (float seconds) to every call that changes state,
so the emulator's HTTP server (wall clock) and the what-if simulator (virtual time) run the
same code. No HTTP, no wire shapes, no boto3, no wall clock, no randomness. Every quota rule
comes from :mod:`quota_constructs.model`; semantics and every UNCONFIRMED choice are
documented in ``docs/emulator-semantics.md``.

API::

    sched = Scheduler(queue_name="q", shares=[...], service_environment=None,
                      options=SchedulerOptions(), start_time=0.0)
    sched.upsert_share(spec) / sched.remove_share(name) / sched.set_service_environment(cap)
    sched.queue                      -> JobQueueSpec of the current shares
    sched.submit(JobRequest(...), now=t) -> Job      (raises SubmitRejected)
    sched.update_priority(job_id, p, now=t) / sched.terminate(job_id, reason, now=t) -> Job
    sched.advance(t)                 completions, timeouts, dispatch passes, preemptions up to t
    sched.next_event_time() / sched.run_until_idle(limit=math.inf)
    sched.job(id) / sched.jobs (submit order) / sched.snapshot() / sched.usage() / sched.ledger()
    sched.pending_reason(id) / sched.preemption_in_progress(id)
    sched.follow_calendar(spec, calendar, epoch_s=e, grace_s=g) / sched.follow_plans(...)
                                     calendar flips and plan windows applied as time advances
    sched.subscribe(listener)        SchedulerEvent for every state change, preemption step and
                                     blocked job (EventKind.QUEUE_BLOCKED)
    with collector_paused(): ...     a whole workload at once, the cyclic collector paused

Jobs move SUBMITTED -> RUNNABLE -> SCHEDULED -> STARTING -> RUNNING -> SUCCEEDED | FAILED and
hold their demand (instances per instance type) from SCHEDULED until they end or are preempted.
Each RUNNABLE job has a typed :class:`PendingReason`; each preemption a :class:`PreemptionRecord`.

Modules, each importing only those before it: ``capacity``, ``records``, ``job``, ``victims``,
``options``, ``changes`` (:class:`ShareChanges`: what the dispatcher must look at again);
``ledger`` (:class:`CapacityLedger`), ``queues`` (:class:`RunnableQueues`),
``event_queue`` (:class:`EventQueue`), ``preemptions_in_progress``; ``lifecycle``
(:class:`JobLifecycle`); ``preemptor`` (:class:`Preemptor`: pure planning, then issuing);
``dispatcher`` (:class:`Dispatcher`); ``pending``, ``admission``; ``timetable``
(:class:`Timetable`: calendars and plan windows as the scheduler's own timed events);
``scheduler`` (the facade);
``bulk`` (:func:`collector_paused`, for running a whole workload at once). ``compiled`` picks
the optional mypyc build of the others (:data:`COMPILED`) before they are imported.
"""

from __future__ import annotations

from quota_constructs.scheduling.compiled import activate

COMPILED: bool = activate(__path__)
"""Whether the mypyc build of the core is in use (``compiled``: only a build of exactly these
sources, made by ``make setup``); otherwise the pure Python modules, the reference."""

from quota_constructs.model import JobStatus, PendingKind  # the model's, re-exported
from quota_constructs.scheduling.bulk import collector_paused
from quota_constructs.scheduling.capacity import Capacity
from quota_constructs.scheduling.job import Job, SchedulerEvent
from quota_constructs.scheduling.options import SchedulerOptions
from quota_constructs.scheduling.records import (
    CAPACITY_CODE,
    JSTLA_REASON,
    PREEMPTION_IN_PROGRESS,
    REASON_CAPACITY,
    REASON_CAPACITY_ERROR,
    REASON_CROSS_SHARE,
    REASON_FAILED,
    REASON_IN_SHARE,
    REASON_LIMIT_LOWERED,
    REASON_MAX_RUNTIME,
    REASON_SHARE_REMOVED,
    REASON_SUCCEEDED,
    REASON_TIMEOUT,
    Attempt,
    EventKind,
    FrontEntry,
    JobRequest,
    Outcome,
    PendingReason,
    PreemptionRecord,
    PreemptionRule,
    ReclaimScope,
    SchedulerSnapshot,
    ShareLedger,
    ShareOrder,
    SubmitRejected,
    attempt_id,
)
from quota_constructs.scheduling.scheduler import QUEUE_WIDE_SHARE, Scheduler
from quota_constructs.scheduling.timetable import CalendarFlip, Timetable
from quota_constructs.scheduling.victims import DefaultVictimPolicy, VictimCandidate, VictimPolicy

__all__ = [
    "CAPACITY_CODE",
    "COMPILED",
    "JSTLA_REASON",
    "PREEMPTION_IN_PROGRESS",
    "QUEUE_WIDE_SHARE",
    "REASON_CAPACITY",
    "REASON_CAPACITY_ERROR",
    "REASON_CROSS_SHARE",
    "REASON_FAILED",
    "REASON_IN_SHARE",
    "REASON_LIMIT_LOWERED",
    "REASON_MAX_RUNTIME",
    "REASON_SHARE_REMOVED",
    "REASON_SUCCEEDED",
    "REASON_TIMEOUT",
    "Attempt",
    "CalendarFlip",
    "Capacity",
    "DefaultVictimPolicy",
    "EventKind",
    "FrontEntry",
    "Job",
    "JobRequest",
    "JobStatus",
    "Outcome",
    "PendingKind",
    "PendingReason",
    "PreemptionRecord",
    "PreemptionRule",
    "ReclaimScope",
    "Scheduler",
    "SchedulerEvent",
    "SchedulerOptions",
    "SchedulerSnapshot",
    "ShareLedger",
    "ShareOrder",
    "SubmitRejected",
    "Timetable",
    "VictimCandidate",
    "VictimPolicy",
    "attempt_id",
    "collector_paused",
]
