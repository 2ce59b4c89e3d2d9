"""Job transitions: status changes and their events, queueing, attempts, retries, termination."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

from quota_constructs.model import DISPATCHED_STATUSES, JobStatus, RetryAction, exit_action
from quota_constructs.scheduling.event_queue import EventQueue, TimedEvent
from quota_constructs.scheduling.job import Job, SchedulerEvent
from quota_constructs.scheduling.ledger import Allocation, CapacityLedger
from quota_constructs.scheduling.options import SchedulerOptions
from quota_constructs.scheduling.preemptions_in_progress import PreemptionsInProgress
from quota_constructs.scheduling.queues import RunnableQueues
from quota_constructs.scheduling.records import (
    CAPACITY_CODE,
    JSTLA_REASON,
    REASON_CAPACITY,
    REASON_CAPACITY_ERROR,
    REASON_FAILED,
    REASON_MAX_RUNTIME,
    REASON_SUCCEEDED,
    REASON_TIMEOUT,
    Attempt,
    EventKind,
    Outcome,
    PreemptionRecord,
    UsageLog,
)

Listener = Callable[[SchedulerEvent], None]
LOG = logging.getLogger(__name__)

# Enum members read on every state change, bound once (an enum attribute costs a lookup
# through the enum's class each time).
_RUNNABLE = JobStatus.RUNNABLE
_SCHEDULED = JobStatus.SCHEDULED
_STARTING = JobStatus.STARTING
_RUNNING = JobStatus.RUNNING
_SUCCEEDED = JobStatus.SUCCEEDED
_FAILED = JobStatus.FAILED
_DISPATCHED = frozenset(DISPATCHED_STATUSES)
_STATE_CHANGE = EventKind.STATE_CHANGE
_QUEUE_BLOCKED = EventKind.QUEUE_BLOCKED
_TO_STARTING = TimedEvent.TO_STARTING
_TO_RUNNING = TimedEvent.TO_RUNNING
_FINISH = TimedEvent.FINISH
_TIMEOUT = TimedEvent.TIMEOUT
_MAX_RUNTIME = TimedEvent.MAX_RUNTIME
_SUCCESS = Outcome.SUCCEEDED


class JobLifecycle:
    """Carries out every change of a job's state and tells the listeners.

    Listeners are told once the job's new state is set, and cannot interrupt a transition: an
    exception a listener raises is logged (with its traceback, on this module's logger) and
    counted in :attr:`listener_failures`, and the transition goes on, so no job is ever left
    half-changed (SCHEDULED without its STARTING step, RUNNABLE off its queue).

    SUBMITTED -> RUNNABLE (queued, or held aside as infeasible) -> SCHEDULED (holding capacity)
    -> STARTING -> RUNNING -> SUCCEEDED | FAILED, with retries, timeouts, RUNNABLE time limits,
    termination and the end of preemptions. Keeps each job's attempts used and dispatches.
    """

    def __init__(
        self,
        options: SchedulerOptions,
        ledger: CapacityLedger,
        queues: RunnableQueues,
        events: EventQueue,
        preemptions: PreemptionsInProgress,
    ) -> None:
        self.options = options
        self._ledger = ledger
        self._queues = queues
        self._events = events
        self._preemptions = preemptions
        self._listeners: list[Listener] = []
        self.listener_failures = 0
        """Exceptions raised by listeners so far (each logged, none propagated)."""
        self._attempts_used: list[int] = [0]
        self._dispatches: list[int] = [0]
        self.usage_log: UsageLog | None = None
        """Holds, releases and preemptions started, when a consumer asked for them."""
        self._capacity_failures: dict[int, int] = {}
        """Job seq -> its attempts that found no capacity so far (only jobs that had one)."""
        self._capacity_since: dict[int, float] = {}
        """Job seq -> when its first attempt without capacity was SCHEDULED."""
        self._timed_head: dict[str, Job] = {}
        """Share -> its first misconfigured RUNNABLE job, whose RUNNABLE time limit runs."""
        self._arriving: dict[str, float] = {}
        """``dispatch_delay_s``: job id -> when a job made RUNNABLE from SUBMITTED may dispatch."""

    def register(self, job: Job) -> None:
        """Start keeping track of a newly submitted job (in submit order)."""
        assert job.seq == len(self._dispatches), "jobs are registered in submit order"
        self._attempts_used.append(0)
        self._dispatches.append(0)

    def timed_event_handlers(self) -> tuple[Callable[[Job], None], ...]:
        """The handler of each :class:`TimedEvent`, by its value (for
        :meth:`EventQueue.run_until`; the caller keeps it: kept here, its bound methods would
        make the lifecycle a reference cycle)."""
        return (
            self._to_runnable,
            self._to_starting,
            self._start_running,
            self._finish_run,
            self._time_out,
            self._time_limit,
            self.complete_preemption,
            self._stop_at_max_runtime,
            self._arrived,
        )

    def dispatch_count(self, job: Job) -> int:
        """How many times ``job`` was dispatched (placed on capacity)."""
        return self._dispatches[job.seq]

    # --- status and events --------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def notify(
        self,
        kind: EventKind,
        job: Job,
        previous: JobStatus | None,
        preemption: PreemptionRecord | None = None,
    ) -> None:
        """Tell every listener (synchronously) of a change to ``job``; a listener's exception is
        logged and counted, never raised."""
        if not self._listeners:
            return
        event = SchedulerEvent(
            time=self._events.now,
            kind=kind,
            job=job,
            status=job.status,
            previous_status=previous,
            status_reason=job.status_reason,
            preemption=preemption,
        )
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # a listener must not leave the job half-changed
                self.listener_failures += 1
                LOG.exception("listener %r failed on %s of job %s", listener, kind, job.job_id)

    def set_status(self, job: Job, status: JobStatus, reason: str | None) -> None:
        """Move ``job`` to ``status``; its pending timed events are void."""
        previous = job.status
        job.status = status
        job.status_reason = reason
        self._events.cancel(job)
        if status is _SUCCEEDED or status is _FAILED:
            log = self.usage_log
            if log is not None:
                log.finished.append(job)
        if self._listeners:
            self.notify(_STATE_CHANGE, job, previous)

    # --- RUNNABLE -----------------------------------------------------------------------------

    def make_runnable(self, job: Job, reason: str | None) -> None:
        events = self._events
        job.runnable_at = events.now
        self._queues.reset_position(job)
        infeasible = self._ledger.infeasibility(job)
        self.set_status(job, _RUNNABLE, infeasible or reason)
        self._enqueue(job, infeasible)
        events.pass_due = True

    def enqueue(self, job: Job) -> None:
        """Queue a RUNNABLE job, or hold it aside while its demand can never fit (the share's
        time limit re-armed by :meth:`time_heads` once all are queued again)."""
        self._enqueue(job, self._ledger.infeasibility(job), timed=False)

    def _enqueue(self, job: Job, reason: str | None, *, timed: bool = True) -> None:
        queues = self._queues
        if reason is not None:
            new = queues.hold_infeasible(job, reason)
            if new:
                job.status_reason = reason
                if self._timed_head.get(job.share_name) is job:
                    del self._timed_head[job.share_name]  # a new reason: its clock restarts
                self.notify(_QUEUE_BLOCKED, job, job.status)
            if timed:
                self.time_head(job.share_name)
            return
        if queues.clear_infeasible(job):
            if job.status_reason and job.status_reason.startswith("MISCONFIGURATION"):
                job.status_reason = None
            if timed:
                self.time_head(job.share_name)
        queues.of(job).push(job)

    def time_head(self, share: str) -> None:
        """Run the RUNNABLE time limit of ``share``'s first misconfigured job only, in its
        order (priority, then submit order), from when it became that first job: AWS takes the
        action "when a job is at the head of the job queue in the specified state for the
        specified period of time", so blocked jobs end one at a time, head first."""
        queue = self._queues.by_share.get(share)
        blocked = queue.infeasible.values() if queue is not None else ()
        head = min(blocked, key=_queue_rank, default=None)
        timed = self._timed_head.get(share)
        if head is timed:
            return
        if (
            timed is not None
            and timed.status is _RUNNABLE
            and timed.seq not in self._capacity_since
        ):
            self._events.cancel(timed)  # no longer the head: its clock stops
        if head is None:
            self._timed_head.pop(share, None)
            return
        self._timed_head[share] = head
        reason = self._queues.infeasible_reason(head) or ""
        seconds = self.options.runnable_time_limits.get(reason.split(" - ")[0])
        self._events.cancel(head)
        if seconds is not None:
            self._events.schedule(self._events.now + seconds, TimedEvent.TIME_LIMIT, head)

    def time_heads(self) -> None:
        """:meth:`time_head` of every share (after its jobs were queued again)."""
        for share in list(self._queues.by_share):
            self.time_head(share)

    # --- attempts -----------------------------------------------------------------------------

    def dispatch(self, job: Job, alloc: Allocation) -> None:
        """Place ``job`` (just taken off its queue) on ``alloc``: SCHEDULED, a new attempt."""
        events = self._events
        now = events.now
        self._ledger.hold(job, alloc)
        log = self.usage_log
        if log is not None:
            log.note(now, job.share_name, alloc, 1)
        job.scheduled_at = now
        job.starting_at = None
        job.started_at = None
        self._queues.reset_position(job)
        self._attempts_used[job.seq] += 1
        self._dispatches[job.seq] += 1
        self.set_status(job, _SCHEDULED, None)
        events.schedule(now + self.options.scheduled_to_starting_s, _TO_STARTING, job)

    def _to_runnable(self, job: Job) -> None:
        self.make_runnable(job, None)
        delay = self.options.dispatch_delay_s
        if delay > 0 and job.status is _RUNNABLE:
            at = self._events.now + delay
            self._arriving[job.job_id] = at
            self._events.schedule(at, TimedEvent.ARRIVED, job)

    def _arrived(self, job: Job) -> None:
        """``job``'s dispatch delay is over: its share is looked at again."""
        self._arriving.pop(job.job_id, None)
        self._ledger.note_priority_change(job.share_name)
        self._events.pass_due = True

    def waits_to_arrive(self, job: Job) -> bool:
        """Whether ``job`` became RUNNABLE too recently to dispatch (``dispatch_delay_s``)."""
        at = self._arriving.get(job.job_id)
        if at is None:
            return False
        if at <= self._events.now:
            del self._arriving[job.job_id]  # its event was voided (a status change)
            return False
        return True

    def _to_starting(self, job: Job) -> None:
        if job.request.capacity_errors and self._no_capacity(job):
            return
        events = self._events
        now = events.now
        job.starting_at = now
        self.set_status(job, _STARTING, None)
        events.schedule(now + self.options.starting_to_running_s, _TO_RUNNING, job)

    def _no_capacity(self, job: Job) -> bool:
        """Whether ``job``'s training job finds no capacity: AWS then retries it "until capacity
        becomes available" without using an attempt, RUNNABLE with ``REASON_CAPACITY``, and
        terminates it once the time limit of that reason has passed since its first such
        attempt was SCHEDULED (time SCHEDULED counts, service-job-retries and
        sm_job_stuck_in_runnable_capacity)."""
        seq = job.seq
        failures = self._capacity_failures.get(seq, 0)
        if failures >= job.request.capacity_errors:
            return False
        now = self._events.now
        self._capacity_failures[seq] = failures + 1
        scheduled = job.scheduled_at if job.scheduled_at is not None else now
        since = self._capacity_since.setdefault(seq, scheduled)
        limit = self.options.runnable_time_limits.get(CAPACITY_CODE)
        if limit is not None and now - since >= limit:
            self.terminate(job, JSTLA_REASON.format(reason=CAPACITY_CODE))
            return True
        self._end_attempt(job, REASON_CAPACITY_ERROR, preempted=False)
        self._attempts_used[seq] -= 1
        self.make_runnable(job, REASON_CAPACITY)
        if limit is not None:
            self._events.schedule(since + limit, TimedEvent.TIME_LIMIT, job)
        return True

    def _finish_run(self, job: Job) -> None:
        self._finish(job, job.request.outcome, None)

    def _time_out(self, job: Job) -> None:
        self._finish(job, Outcome.FAILED, REASON_TIMEOUT)

    def _stop_at_max_runtime(self, job: Job) -> None:
        self._finish(job, Outcome.FAILED, REASON_MAX_RUNTIME)

    def _time_limit(self, job: Job) -> None:
        reason = self._queues.infeasible_reason(job) or job.status_reason or ""
        self.terminate(job, JSTLA_REASON.format(reason=reason.split(" - ")[0]))

    def _start_running(self, job: Job) -> None:
        events = self._events
        now = events.now
        job.started_at = now
        self.set_status(job, _RUNNING, None)
        request = job.request
        # the first of: the work done, the attempt's timeout, the training job's max runtime
        # (ties: the work is done first, then the timeout)
        end, kind = math.inf, _FINISH
        if request.duration_s is not None:
            end = max(0.0, request.duration_s - job.progress_s)
        timeout = request.attempt_duration_s
        if timeout is not None and timeout < end:
            end, kind = timeout, _TIMEOUT
        max_runtime = request.max_runtime_s
        if max_runtime is not None and max_runtime < end:
            end, kind = max_runtime, _MAX_RUNTIME
        if end != math.inf:
            events.schedule(now + end, kind, job)

    def _finish(self, job: Job, outcome: Outcome, reason: str | None) -> None:
        now = self._events.now
        if outcome is _SUCCESS:
            self._end_attempt(job, REASON_SUCCEEDED, preempted=False)
            job.stopped_at = now
            self.set_status(job, _SUCCEEDED, REASON_SUCCEEDED)
            return
        text = reason or job.request.failure_reason or REASON_FAILED
        self._keep_checkpointed_progress(job)
        self._end_attempt(job, text, preempted=False)
        left = self._attempts_used[job.seq] < job.request.retry_attempts
        if left and exit_action(job.request.exit_rules, text) is RetryAction.RETRY:
            self.make_runnable(job, text)
        else:
            job.stopped_at = now
            self.set_status(job, _FAILED, text)

    def _keep_checkpointed_progress(self, job: Job) -> None:
        interval = job.request.checkpoint_interval_s
        if job.started_at is not None and interval:
            job.progress_s += _checkpointed(self._events.now - job.started_at, interval)

    def _end_attempt(self, job: Job, reason: str, *, preempted: bool) -> None:
        now = self._events.now
        number = len(job.attempts) + 1
        job.attempts.append(
            Attempt(
                number=number,
                job_id=job.job_id,
                scheduled_at=job.scheduled_at if job.scheduled_at is not None else now,
                started_at=job.started_at,
                stopped_at=now,
                status_reason=reason,
                preempted=preempted,
                starting_at=job.starting_at,
            )
        )
        log = self.usage_log
        if log is not None:
            log.note(now, job.share_name, job.alloc, -1)
        self._ledger.release(job)
        self._events.pass_due = True

    def terminate(self, job: Job, reason: str) -> None:
        """FAILED with ``reason`` and ``is_terminated``; a preemption in progress ends with it."""
        if job.status in _DISPATCHED:
            self._preemptions.end(job)
            self._end_attempt(job, reason, preempted=False)
        job.is_terminated = True
        job.stopped_at = self._events.now
        self._arriving.pop(job.job_id, None)
        blocked = self._queues.infeasible_reason(job) is not None
        self._queues.discard(job)
        self.set_status(job, JobStatus.FAILED, reason)
        if blocked:
            self.time_head(job.share_name)  # the next blocked job's clock starts
        self._events.pass_due = True

    def complete_preemption(self, job: Job) -> None:
        """End ``job``'s preemption in progress: requeue it, or FAILED when out of retries."""
        record = self._preemptions.end(job)
        if record is None:
            return
        now = self._events.now
        self._keep_checkpointed_progress(job)
        self._end_attempt(job, record.reason, preempted=True)
        retries = job.request.preemption_retries
        count = len(job.preemptions) + 1
        exhausted = retries is not None and count > retries
        consumes = self.options.preemption_consumes_attempt
        out_of_attempts = consumes and self._attempts_used[job.seq] >= job.request.retry_attempts
        if not consumes:
            self._attempts_used[job.seq] -= 1
        record = PreemptionRecord(  # the record, completed
            time=record.time,
            rule=record.rule,
            preemptor_job_id=record.preemptor_job_id,
            preemptor_share=record.preemptor_share,
            borrowed_before=record.borrowed_before,
            borrowed_after=record.borrowed_after,
            reason=record.reason,
            attempt=record.attempt,
            attempt_started_at=record.attempt_started_at,
            completed_at=now,
            terminated=exhausted or out_of_attempts,
        )
        job.preemptions.append(record)
        if exhausted or out_of_attempts:
            job.stopped_at = now
            job.is_terminated = exhausted  # "terminated" after its preemption retries (AWS)
            why = (
                f"preemptionRetriesBeforeTermination ({retries}) used up"
                if exhausted
                else f"retryStrategy.attempts ({job.request.retry_attempts}) used up"
            )
            self.set_status(
                job, JobStatus.FAILED, f"Preempted {count} time(s), {why}: {record.reason}"
            )
        else:
            self.make_runnable(job, record.reason)
        self.notify(EventKind.PREEMPTION_COMPLETED, job, job.status, record)


def _queue_rank(job: Job) -> tuple[int, int]:
    """A job's place in its share's order: priority (highest first), then submit order."""
    return (-job.priority, job.seq)


def _checkpointed(ran: float, interval: float) -> float:
    """Run time kept by the last checkpoint of a run of ``ran`` seconds."""
    return math.floor(ran / interval) * interval if interval > 0 else 0.0
