"""The :class:`Scheduler` facade: one queue's configuration, submissions, queries and time.

It composes the collaborators and passes each its dependencies: the capacity ledger, the
runnable queues, the event queue (virtual time), the preemptions in progress, the job
lifecycle, the preemptor, the dispatcher and the pending-reason explainer; the first three
and the preemptions in progress note in one :class:`ShareChanges` what the dispatcher must
look at again.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from quota_constructs.model import (
    MAX_SHARES_PER_QUEUE,
    NUM_INSTANCES,
    PLAN_STOP_BEFORE_END_S,
    JobQueueSpec,
    JobStatus,
    PendingKind,
    Problem,
    QuotaConfigError,
    QuotaShareSpec,
    ShareCalendar,
    SharingStrategy,
    TrainingPlanSpec,
    check_instance_type,
    check_int_range,
    check_scheduling_priority,
    share_count_allowed,
)
from quota_constructs.scheduling.admission import request_problems
from quota_constructs.scheduling.changes import ShareChanges
from quota_constructs.scheduling.dispatcher import Dispatcher
from quota_constructs.scheduling.event_queue import EventQueue, TimedEvent
from quota_constructs.scheduling.job import Job, SchedulerEvent
from quota_constructs.scheduling.ledger import CapacityLedger, ShareAccount
from quota_constructs.scheduling.lifecycle import JobLifecycle
from quota_constructs.scheduling.options import SchedulerOptions
from quota_constructs.scheduling.pending import PendingExplainer
from quota_constructs.scheduling.preemptions_in_progress import PreemptionsInProgress
from quota_constructs.scheduling.preemptor import PreemptionTarget, Preemptor
from quota_constructs.scheduling.queues import RunnableQueues
from quota_constructs.scheduling.records import (
    REASON_SHARE_REMOVED,
    EventKind,
    FrontEntry,
    JobRequest,
    PendingReason,
    PreemptionRule,
    SchedulerSnapshot,
    ShareLedger,
    SubmitRejected,
    UsageLog,
)
from quota_constructs.scheduling.timetable import Timetable

_STATE_CHANGE = EventKind.STATE_CHANGE
NOT_PLACING = "the service environment is DISABLED: no job is placed until it is ENABLED"
QUEUE_WIDE_SHARE = "(queue)"
"""The one share of a queue without quota management (:meth:`Scheduler.fifo`): no quota
share can have this name (share names are letters, digits, ``-`` and ``_``)."""
_TO_RUNNABLE = TimedEvent.TO_RUNNABLE


class Scheduler:
    """One quota-managed job queue with its shares and service environment, in virtual time."""

    def __init__(
        self,
        *,
        queue_name: str,
        shares: Iterable[QuotaShareSpec] = (),
        service_environment: Mapping[str, int] | None = None,
        options: SchedulerOptions | None = None,
        start_time: float = 0.0,
    ) -> None:
        self.queue_name = queue_name
        self._options = options = options or SchedulerOptions()
        self._events = EventQueue(start_time)
        changes = ShareChanges()
        self._ledger = CapacityLedger(options, service_environment, changes)
        self._queues = RunnableQueues(changes)
        self._preemptions = PreemptionsInProgress(changes)
        self._lifecycle = JobLifecycle(
            options, self._ledger, self._queues, self._events, self._preemptions
        )
        self._preemptor = Preemptor(
            options,
            self._ledger,
            self._queues,
            self._events,
            self._preemptions,
            self._lifecycle,
            changes,
        )
        self._dispatcher = Dispatcher(
            queue_name,
            options,
            self._ledger,
            self._queues,
            self._events,
            self._preemptions,
            self._preemptor,
            self._lifecycle,
            changes,
        )
        self._pending = PendingExplainer(self._ledger, self._queues, self._preemptions)
        self.timetable = Timetable(self._events)
        """The calendars and plan windows this queue follows (:meth:`follow_calendar`,
        :meth:`follow_plans`), applied as time advances."""
        self._handlers = self._lifecycle.timed_event_handlers()
        self._jobs: dict[str, Job] = {}
        self._positions: dict[str, tuple[int, float]] = {}
        """``track_queue_positions``: job id -> (place in the queue-wide order, since when)."""
        self._seq = 0
        self._fifo = False
        self.instants_fed = 0
        """Instants :meth:`feed` advanced to so far."""
        for spec in shares:
            self._check_share(spec)
            self._add_share(spec)
        self._config_changed()

    @classmethod
    def for_queue(
        cls,
        queue: JobQueueSpec,
        *,
        queue_name: str,
        options: SchedulerOptions | None = None,
        service_environment: Mapping[str, int] | None = None,
        start_time: float = 0.0,
    ) -> Scheduler:
        """A scheduler for a model queue; its ``runnable_timeout_minutes`` become time limits
        unless ``options.runnable_time_limits`` is set."""
        opts = options or SchedulerOptions()
        if not opts.runnable_time_limits:
            opts = replace(opts, runnable_time_limits=SchedulerOptions.time_limits_for(queue))
        return cls(
            queue_name=queue_name,
            shares=queue.shares,
            service_environment=service_environment,
            options=opts,
            start_time=start_time,
        )

    @classmethod
    def fifo(
        cls,
        *,
        queue_name: str,
        max_instances: int,
        options: SchedulerOptions | None = None,
        start_time: float = 0.0,
    ) -> Scheduler:
        """A queue without quota management: jobs dispatch in submit order while their
        instances (of any type) fit in the service environment's ``max_instances``
        (``NUM_INSTANCES``); no quota shares, no priorities, no preemption."""
        scheduler = cls(queue_name=queue_name, options=options, start_time=start_time)
        scheduler._fifo = True
        scheduler._add_share(_queue_wide_share(max_instances))
        scheduler._ledger.set_service_environment({NUM_INSTANCES: max_instances})
        scheduler._config_changed()
        return scheduler

    @property
    def is_fifo(self) -> bool:
        """Whether this is a queue without quota management (:meth:`fifo`)."""
        return self._fifo

    # --- configuration ------------------------------------------------------------------------

    @property
    def now(self) -> float:
        """Virtual time of the last change (float seconds)."""
        return self._events.now

    @property
    def options(self) -> SchedulerOptions:
        return self._options

    @options.setter
    def options(self, options: SchedulerOptions) -> None:
        """New options act from the next change on (time limits already armed stay)."""
        self._options = options
        for part in (self._ledger, self._lifecycle, self._preemptor, self._dispatcher):
            part.options = options
        self._dispatcher.forget_blocked_heads()

    @property
    def queue(self) -> JobQueueSpec:
        """The current shares as a model job queue."""
        return self._ledger.queue_spec

    @property
    def service_environment(self) -> dict[str, int]:
        """Service-environment capacity: explicit, else the sum of the shares' limits."""
        return self._ledger.service_environment

    def set_service_environment(
        self, capacity: Mapping[str, int] | None, *, now: float | None = None
    ) -> None:
        """Set SE capacity (``None``: follow the shares). Lowering it preempts nothing.

        A :meth:`fifo` queue takes ``{NUM_INSTANCES: n}``."""
        problems: list[Problem] = []
        for itype, count in (capacity or {}).items():
            if not (self._fifo and itype == NUM_INSTANCES):
                problems += check_instance_type(itype, f"service_environment.{itype}")
            problems += check_int_range(
                count, f"service_environment.{itype}", 0, None, what="max capacity"
            )
        if problems:
            raise QuotaConfigError(problems, context="service environment")
        self._catch_up(now)
        if self._fifo:
            self._ledger.update_share(_queue_wide_share((capacity or {}).get(NUM_INSTANCES, 0)))
        self._ledger.set_service_environment(capacity)
        self._config_changed()
        self._run_passes()

    @property
    def placing(self) -> bool:
        """Whether jobs are placed (``False`` while the service environment is DISABLED)."""
        return self._dispatcher.placing

    def set_placing(self, placing: bool, *, now: float | None = None) -> None:
        """Stop or resume placing jobs: a DISABLED service environment places no queued job
        ("to prevent new service jobs from being placed"); placed jobs run on."""
        self._catch_up(now)
        self._dispatcher.placing = placing
        if placing:
            self._events.pass_due = True
            self._dispatcher.forget_blocked_heads()
            self._run_passes()

    def upsert_share(self, spec: QuotaShareSpec, *, now: float | None = None) -> None:
        """Create or update a share. Lowered limits preempt jobs above them (LIMIT_LOWERED)."""
        self._check_share(spec)
        self._catch_up(now)
        if spec.name in self._ledger.accounts:
            self._ledger.update_share(spec)
        else:
            self._add_share(spec)
        self._config_changed()
        self._preemptor.enforce_limits()
        self._run_passes()

    def remove_share(self, name: str, *, now: float | None = None) -> None:
        """Delete a share: its jobs are terminated, borrowers of its capacity preempted."""
        account = self._share_or_reject(name, "remove_share")
        self._catch_up(now)
        for job in [j for j in self._jobs.values() if j.share_name == name]:
            if not job.status.is_terminal:
                self._lifecycle.terminate(job, REASON_SHARE_REMOVED)
        self._preemptor.issue(
            [
                PreemptionTarget(job=job, rule=PreemptionRule.LIMIT_LOWERED, preemptor=None)
                for job in list(account.borrowers.values())
            ]
        )
        self._ledger.remove_share(name)
        self._queues.remove_share(name)
        self.timetable.forget_share(name)
        self._config_changed()
        self._run_passes()

    def follow_calendar(
        self,
        base: QuotaShareSpec,
        calendar: ShareCalendar,
        *,
        epoch_s: float,
        grace_s: float = 0.0,
    ) -> None:
        """Flip share ``base.name``'s calendar fields at ``calendar``'s edges from now on (the
        settings in force now at once); ``epoch_s``: Unix epoch seconds at time 0; ``grace_s``:
        how long borrowers may finish first (:mod:`~quota_constructs.scheduling.timetable`)."""
        self.timetable.follow_calendar(self, base, calendar, epoch_s=epoch_s, grace_s=grace_s)

    def follow_plans(
        self,
        plans: Sequence[TrainingPlanSpec],
        *,
        epoch_s: float,
        stop_before_end_s: float = PLAN_STOP_BEFORE_END_S,
        on_demand: Mapping[str, int] | None = None,
    ) -> None:
        """Give the named ``plans``' types the plans' capacity from now on, changing at their
        windows' edges (:mod:`~quota_constructs.scheduling.timetable`)."""
        self.timetable.follow_plans(
            self, plans, epoch_s=epoch_s, stop_before_end_s=stop_before_end_s, on_demand=on_demand
        )

    def usable_capacity(self, capacity: Mapping[str, int]) -> dict[str, int]:
        """What a new service-environment ``capacity`` makes usable now: each type of the
        followed plans what they allow, up to ``capacity`` (the limit of their later edges)."""
        return self.timetable.usable_capacity(capacity, self.now)

    def share_spec(self, name: str) -> QuotaShareSpec:
        """Share ``name`` as it is now; ``KeyError`` naming it otherwise."""
        return self._share_or_reject(name, "share_spec").spec

    def lent_out(self, name: str) -> int:
        """Instances of share ``name``'s capacity other shares hold now."""
        return self._share_or_reject(name, "lent_out").lent_total

    def _share_or_reject(self, name: str, what: str) -> ShareAccount:
        account = self._ledger.accounts.get(name)
        if account is None:
            known = ", ".join(self._ledger.accounts) or "none"
            raise KeyError(f"{what}: no quota share {name!r} on {self.queue_name!r} ({known})")
        return account

    def _check_share(self, spec: QuotaShareSpec) -> None:
        problems = spec.problems(f"shares.{spec.name}")
        count = len(self._ledger.accounts)
        if spec.name not in self._ledger.accounts and not share_count_allowed(count + 1):
            problems.append(
                Problem(
                    "shares",
                    count + 1,
                    f"a quota-managed job queue holds at most {MAX_SHARES_PER_QUEUE} shares",
                    "remove a share first or use another queue",
                )
            )
        if problems:
            raise QuotaConfigError(problems, context=f"quota share {spec.name!r}")

    def _add_share(self, spec: QuotaShareSpec) -> None:
        self._ledger.add_share(spec)
        self._queues.add_share(spec.name)

    def _config_changed(self) -> None:
        """Re-check every RUNNABLE job's feasibility after a share or SE change."""
        self._ledger.reconfigure()
        self._events.pass_due = True
        self._dispatcher.forget_blocked_heads()
        for queue in self._queues.by_share.values():
            for job in queue.drain():
                self._lifecycle.enqueue(job)
        self._lifecycle.time_heads()

    # --- submission and updates ---------------------------------------------------------------

    def submit(self, request: JobRequest, *, now: float) -> Job:
        """Accept a job (SUBMITTED; RUNNABLE after ``submitted_to_runnable_s``)."""
        events = self._events
        self._catch_up(now)
        if self._fifo:
            request = self._queue_wide(request)
        problems = request_problems(request, self.queue_name, self._ledger.share_specs)
        if problems:
            raise SubmitRejected(problems, context=f"job {request.job_name!r}")
        if self._fifo:
            request = replace(request, demand={NUM_INSTANCES: sum(request.demand.values())})
        job_id = request.job_id or self._new_job_id(self._seq + 1)
        if job_id in self._jobs:
            raise SubmitRejected(
                [Problem("job_id", job_id, "a job with this id exists", "use a new id")]
            )
        self._seq = seq = self._seq + 1
        options = self._options
        priority = options.default_priority if request.priority is None else request.priority
        job = Job(job_id, request, priority, seq, created_at=events.now)
        self._jobs[job_id] = job
        events.register(job)
        self._queues.register(job)
        lifecycle = self._lifecycle
        lifecycle.register(job)
        lifecycle.notify(_STATE_CHANGE, job, None)
        events.schedule(events.now + options.submitted_to_runnable_s, _TO_RUNNABLE, job)
        return job

    def _queue_wide(self, request: JobRequest) -> JobRequest:
        """A :meth:`fifo` queue's request in its one share, at one priority (submit order)."""
        if request.share_name:
            problem = Problem(
                "quotaShareName",
                request.share_name,
                f"job queue {self.queue_name!r} has no quota management (no quota-share "
                "scheduling policy), so it has no quota shares",
                "leave quotaShareName out",
            )
            raise SubmitRejected([problem], context=f"job {request.job_name!r}")
        return replace(request, share_name=QUEUE_WIDE_SHARE, priority=None)

    def update_priority(self, job_id: str, priority: int, *, now: float) -> Job:
        """Change ``schedulingPriority``; it takes effect at the next pass (any non-final state)."""
        job = self.job(job_id)
        problems = check_scheduling_priority(priority)
        if problems:
            raise SubmitRejected(problems, context=f"job {job_id}")
        self._catch_up(now)
        if job.status.is_terminal or job.priority == priority or self._fifo:
            return job  # a FIFO queue keeps submit order (UNCONFIRMED: AWS's answer to it)
        job.priority = priority
        self._ledger.note_priority_change(job.share_name)
        queues = self._queues
        if job.status is JobStatus.RUNNABLE and queues.infeasible_reason(job) is None:
            queues.of(job).push(job)
            queues.reset_position(job)
        elif job.status is JobStatus.RUNNABLE:
            self._lifecycle.time_head(job.share_name)  # it may now be the first blocked job
        self._events.pass_due = True
        self._lifecycle.notify(EventKind.PRIORITY_CHANGE, job, job.status)
        return job

    def terminate(self, job_id: str, reason: str, *, now: float) -> Job:
        """Terminate a job: FAILED with ``reason``, ``is_terminated``; final jobs are unchanged.

        Capacity it held is free at once but placed only by the next pass, at the next
        :meth:`advance` (the same instant included): never inside the call, so a caller's
        request that terminates jobs dispatches none (AWS stops the training job; the instance
        goes to another job on the scheduler's next evaluation)."""
        return self.terminate_all([job_id], reason, now=now)[0]

    def terminate_all(self, job_ids: Sequence[str], reason: str, *, now: float) -> list[Job]:
        """Terminate every job of ``job_ids`` (as :meth:`terminate`), all of them before any
        pass: none of them is dispatched by capacity another of them frees (TerminateServiceJobs
        ends its whole batch first). Unknown ids raise ``KeyError`` before anything changes."""
        jobs = [self.job(job_id) for job_id in job_ids]
        self._catch_up(now)
        for job in jobs:
            if not job.status.is_terminal:
                self._lifecycle.terminate(job, reason)
        return jobs

    # --- queries ------------------------------------------------------------------------------

    def job(self, job_id: str) -> Job:
        """The job with ``job_id``; ``KeyError`` naming it otherwise."""
        try:
            return self._jobs[job_id]
        except KeyError:
            raise KeyError(f"no job {job_id!r} in job queue {self.queue_name!r}") from None

    @property
    def jobs(self) -> Sequence[Job]:
        """Every job, in submit order."""
        return list(self._jobs.values())

    def forget(self, job_id: str) -> None:
        """Drop a finished job (a retention policy's expiry); a job that has not finished is
        refused with ``ValueError`` naming it, an unknown one with ``KeyError``."""
        job = self.job(job_id)
        if not job.status.is_terminal:
            raise ValueError(
                f"job {job_id!r} is {job.status.value}: only a finished job can be forgotten"
            )
        del self._jobs[job_id]
        self._ledger.forget(job)
        self._preemptions.forget(job)

    def subscribe(self, listener: Callable[[SchedulerEvent], None]) -> None:
        """Call ``listener`` synchronously for every :class:`SchedulerEvent`, once the job's new
        state is set; its exceptions are logged and counted (:attr:`listener_failures`), never
        raised, so they cannot interrupt a transition."""
        self._lifecycle.subscribe(listener)

    def keep_usage_log(self) -> UsageLog:
        """Log every hold and release of capacity and every preemption started from now on
        (cheaper than a listener that sees every event); returns the log."""
        log = self._lifecycle.usage_log
        if log is None:
            log = self._lifecycle.usage_log = UsageLog()
        return log

    @property
    def listener_failures(self) -> int:
        """Exceptions listeners raised so far (each logged with its traceback)."""
        return self._lifecycle.listener_failures

    def usage(self) -> dict[str, dict[str, int]]:
        """Instances held per share per instance type (own plus borrowed), zero entries omitted."""
        return self._ledger.usage()

    def total_usage(self) -> dict[str, int]:
        """Instances held in the service environment per instance type."""
        return self._ledger.total_usage()

    def ledger(self) -> dict[str, ShareLedger]:
        """Full capacity accounting per share (limit, used, own, borrowed, lent, idle)."""
        return self._ledger.share_ledgers()

    def pending_reason(self, job_id: str) -> PendingReason | None:
        """Typed reason a RUNNABLE job waits (``None`` for other states)."""
        job = self.job(job_id)
        if not self._dispatcher.placing and job.status is JobStatus.RUNNABLE:
            return PendingReason(PendingKind.WAITING_FOR_SERVICE_ENVIRONMENT, NOT_PLACING)
        return self._pending.reason(job)

    def preemption_in_progress(self, job_id: str) -> bool:
        """Whether a preemption of the job has started and not completed."""
        return self._preemptions.in_progress(self.job(job_id))

    def snapshot(self, *, limit: int = 100) -> SchedulerSnapshot:
        """Front of the queue (first ``limit`` RUNNABLE jobs by priority, then share usage),
        the first RUNNABLE job of each share, and capacity usage per share (most instances
        held first: ``topCapacityUtilization``) and in total."""
        front_entry = self._pending.front_entry
        fronts: dict[str, tuple[FrontEntry, ...]] = {}
        for name, queue in self._queues.by_share.items():
            order_all = queue.order() + sorted(queue.infeasible.values(), key=lambda j: j.seq)
            if order_all:
                fronts[name] = (front_entry(order_all[0]),)
        if self._options.track_queue_positions:
            self._note_positions()
            positions = self._positions
            front_of_queue = tuple(
                replace(front_entry(j), earliest_time_at_position=positions[j.job_id][1])
                for j in self._queue_order(limit)
            )
        else:
            front_of_queue = tuple(front_entry(j) for j in self._queue_order(limit))
        by_use = sorted(self.usage().items(), key=lambda item: -sum(item[1].values()))
        return SchedulerSnapshot(
            time=self.now,
            front_of_queue=front_of_queue,
            front_of_shares=fronts,
            share_usage=dict(by_use),
            total_usage=self.total_usage(),
        )

    def _queue_order(self, limit: int | None = None) -> list[Job]:
        """RUNNABLE jobs in the queue-wide order (priority, then share usage, then submit
        order): the first ``limit``, or all."""
        usage = {name: a.usage_fraction() for name, a in self._ledger.accounts.items()}
        runnable: list[Job] = []
        for queue in self._queues.by_share.values():
            runnable += queue.order()
            runnable += queue.infeasible.values()

        def key(j: Job) -> tuple[int, float, int]:
            return (-j.priority, usage[j.share_name], j.seq)

        if limit is None:
            return sorted(runnable, key=key)
        return heapq.nsmallest(limit, runnable, key=key)

    def _note_positions(self) -> None:
        """Every RUNNABLE job's place in the queue-wide order now; a job whose place changed
        (or that is new) holds it from now (``track_queue_positions``)."""
        now = self._events.now
        old = self._positions
        new: dict[str, tuple[int, float]] = {}
        for place, job in enumerate(self._queue_order()):
            was = old.get(job.job_id)
            new[job.job_id] = was if was is not None and was[0] == place else (place, now)
        self._positions = new

    def _run_passes(self) -> None:
        """The dispatcher's passes at the current instant, then the places in the queue."""
        self._dispatcher.run_passes()
        if self._options.track_queue_positions:
            self._note_positions()

    def next_event_time(self) -> float | None:
        """Time of the next timed event (state delay, completion, timeout, time limit)."""
        return self._events.next_time()

    # --- time ---------------------------------------------------------------------------------

    def advance(self, now: float) -> None:
        """Process everything up to ``now``: timed events in order, a pass after each instant,
        the :attr:`timetable`'s changes at their instants."""
        now = float(now)
        events = self._events
        if now < events.now:
            raise ValueError(
                f"time must not go backwards: now={now} is before the scheduler's {events.now}"
            )
        timetable = self.timetable
        while (due := timetable.next_time()) <= now:
            self._run_until(max(due, events.now))
            timetable.apply_due(self, events.now)
        self._run_until(now)

    def _run_until(self, until: float) -> None:
        """The jobs' timed events up to ``until``, a pass after each instant."""
        events = self._events
        run_passes = self._run_passes
        if events.pass_due:
            run_passes()  # changes made at the current instant (priority updates) act now
        events.run_until(until, self._handlers, run_passes)
        if events.pass_due:
            run_passes()

    def feed(
        self,
        requests: Sequence[JobRequest],
        times: Sequence[float],
        start: int,
        before: float,
        progress: Callable[[float], None] | None = None,
        every: int = 1024,
    ) -> int:
        """Submit ``requests[start:]``, each at its time in ``times`` (sorted), advancing to
        each instant with a submit or a timed event while that instant is before ``before``:
        what a caller's loop of :meth:`submit` then :meth:`advance` at each such instant does,
        in one call. Returns the index of the first request not submitted; counts the instants
        in :attr:`instants_fed` and calls ``progress(now)`` every ``every`` of them. A refused
        request raises :class:`SubmitRejected` (the jobs before it are submitted)."""
        index = start
        count = len(requests)
        events = self._events
        submit = self.submit
        advance = self.advance
        while True:
            next_submit = times[index] if index < count else math.inf
            next_event = events.next_time()
            now = next_submit if next_event is None or next_submit < next_event else next_event
            if now >= before or now == math.inf:
                return index
            while index < count and times[index] <= now:
                submit(requests[index], now=now)
                index += 1
            advance(now)
            self.instants_fed += 1
            if progress is not None and self.instants_fed % every == 0:
                progress(now)

    def run_until_idle(self, *, limit: float = math.inf) -> float:
        """Advance event by event until nothing is scheduled (or ``limit``); return the time."""
        while True:
            nxt = self.next_event_time()
            if nxt is None or nxt > limit:
                break
            self.advance(nxt)
        if limit != math.inf and self.now < limit and self.next_event_time() is not None:
            self.advance(limit)
        return self.now

    def _catch_up(self, now: float | None) -> None:
        """Advance to ``now`` first; calls at the current instant are batched (no pass)."""
        if now is not None and now != self._events.now:
            self.advance(now)

    def _new_job_id(self, seq: int) -> str:
        digest = hashlib.sha256(f"{self.queue_name}/{seq}".encode()).digest()
        return str(uuid.UUID(bytes=digest[:16], version=4))


def _queue_wide_share(max_instances: int) -> QuotaShareSpec:
    """The one share of a :meth:`Scheduler.fifo` queue: all of its instances, lent to no one."""
    return QuotaShareSpec(QUEUE_WIDE_SHARE, {NUM_INSTANCES: max_instances}, SharingStrategy.RESERVE)
