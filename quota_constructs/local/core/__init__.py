"""Pure scheduler core of the local AWS Batch quota-management emulator.

Deterministic and clock-free: the caller passes virtual time (float seconds) to every call that
changes state, so the HTTP server (wall clock) and the what-if simulator (virtual time) run the
same code. No HTTP, no boto3, no wall clock, no randomness. Every quota rule comes from
:mod:`quota_constructs.model`; semantics and every UNCONFIRMED choice are documented in
``docs/emulator-semantics.md``.

API (contract 2)::

    sched = Scheduler(queue_name="q", shares=[...], service_environment=None,
                      options=SchedulerOptions(), start_time=0.0)
    sched.upsert_share(spec) / sched.remove_share(name) / sched.set_service_environment(cap)
    sched.queue                      -> JobQueueSpec of the current shares
    sched.submit(JobRequest(...), now=t) -> Job      (raises SubmitRejected)
    sched.update_priority(job_id, p, now=t) / sched.terminate(job_id, reason, now=t) -> Job
    sched.advance(t)                 completions, timeouts, dispatch passes, preemptions up to t
    sched.next_event_time() / sched.run_until_idle(limit=math.inf)
    sched.job(id) / sched.jobs (submit order) / sched.snapshot() / sched.usage() / sched.ledger()
    sched.subscribe(listener)        SchedulerEvent for every state change and preemption

Jobs move SUBMITTED -> RUNNABLE -> SCHEDULED -> STARTING -> RUNNING -> SUCCEEDED | FAILED and
hold their demand (instances per instance type) from SCHEDULED until they end or are preempted.
Each RUNNABLE job has a typed :class:`PendingReason`; each preemption a :class:`PreemptionRecord`.

Modules: ``records`` (constants, enums, typed records), ``victims`` (victim policy),
``options``, ``job``, ``requests`` (SubmitServiceJob -> JobRequest) and the scheduler, one
class split over mixins: ``scheduler`` (the :class:`Scheduler` facade: configuration,
submission, queries, time, snapshot), ``dispatch`` (passes, timed events, attempt lifecycle),
``preemption`` (cross-share, in-share, limit-lowering, completion), ``pending`` (pending
reasons) and ``ledger`` (the state's fields, per-share ledger, RUNNABLE heaps, event queue,
capacity bookkeeping), each building only on the modules after it.
"""

from __future__ import annotations

from quota_constructs.local.core.job import Job
from quota_constructs.local.core.options import SchedulerOptions
from quota_constructs.local.core.records import (
    DEFAULT_MAX_RUNTIME_S,
    DURATION_TAG,
    JSTLA_REASON,
    OUTCOME_TAG,
    PREEMPTION_IN_PROGRESS,
    REASON_CROSS_SHARE,
    REASON_FAILED,
    REASON_IN_SHARE,
    REASON_LIMIT_LOWERED,
    REASON_SHARE_REMOVED,
    REASON_SUCCEEDED,
    REASON_TIMEOUT,
    Attempt,
    Capacity,
    EventKind,
    FrontEntry,
    JobRequest,
    Outcome,
    PendingKind,
    PendingReason,
    PreemptionRecord,
    PreemptionRule,
    QueueSnapshot,
    SchedulerEvent,
    ShareLedger,
    ShareOrder,
    SubmitRejected,
)
from quota_constructs.local.core.requests import request_from_submit
from quota_constructs.local.core.scheduler import Scheduler, attempt_id
from quota_constructs.local.core.victims import DefaultVictimPolicy, VictimCandidate, VictimPolicy
from quota_constructs.model import JobStatus  # the model's states, re-exported

__all__ = [
    "DEFAULT_MAX_RUNTIME_S",
    "DURATION_TAG",
    "JSTLA_REASON",
    "OUTCOME_TAG",
    "PREEMPTION_IN_PROGRESS",
    "REASON_CROSS_SHARE",
    "REASON_FAILED",
    "REASON_IN_SHARE",
    "REASON_LIMIT_LOWERED",
    "REASON_SHARE_REMOVED",
    "REASON_SUCCEEDED",
    "REASON_TIMEOUT",
    "Attempt",
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
    "QueueSnapshot",
    "Scheduler",
    "SchedulerEvent",
    "SchedulerOptions",
    "ShareLedger",
    "ShareOrder",
    "SubmitRejected",
    "VictimCandidate",
    "VictimPolicy",
    "attempt_id",
    "request_from_submit",
]
