"""Owns one emulated account: builds its state and handlers, and dispatches requests to them.

Dispatch runs under one lock, with request counts, injected faults and the clock.

:class:`Emulator` is transport-free: :mod:`.wire.server` turns HTTP requests into
:meth:`Emulator.call` and answers with its results, its injected faults
(:class:`~.wire.api_errors.ApiError`) or the API error of a domain error. One lock serialises every
call (the scheduler core is single-threaded); before each call the scheduler of every queue is
advanced to the clock's now.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from quota_constructs.config import load_organisation
from quota_constructs.local.events import BatchEvents, EventSink
from quota_constructs.local.faults import FaultInjector, FaultPlan
from quota_constructs.local.handlers import Handler
from quota_constructs.local.handlers.parameters import ParameterHandlers
from quota_constructs.local.handlers.resources import ResourceHandlers
from quota_constructs.local.handlers.service_jobs import ServiceJobHandlers
from quota_constructs.local.handlers.service_quotas import ServiceQuotaHandlers
from quota_constructs.local.handlers.sts import StsHandlers
from quota_constructs.local.handlers.submit_request import PayloadValidation, PlanOwnership
from quota_constructs.local.handlers.training_jobs import TrainingJobHandlers
from quota_constructs.local.handlers.training_plans import TrainingPlanHandlers
from quota_constructs.local.provision import (
    ProvisionedOrganisation,
    ResourceNaming,
    provision,
    resource_names,
)
from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.clock import EmulatorClock, VirtualClock
from quota_constructs.local.state.errors import EmulatorError, InvalidRequest, ResourceNotFound
from quota_constructs.local.state.identities import Identities
from quota_constructs.local.state.job_service import (
    ClientTokenMode,
    DispatchMode,
    JobRetention,
    JobService,
)
from quota_constructs.local.state.parameter_store import ParameterStore
from quota_constructs.local.state.registry import JobQueue, Registry
from quota_constructs.local.state.service_quotas import ServiceQuotas
from quota_constructs.local.state.tags import TagStore
from quota_constructs.local.state.training_plans import TrainingPlans
from quota_constructs.local.wire.api_errors import DOMAIN_ERRORS
from quota_constructs.model import (
    PLAN_STOP_BEFORE_END_S,
    Organisation,
    Problem,
    QuotaConfigError,
    TrainingPlanSpec,
)
from quota_constructs.scheduling import CalendarFlip, Scheduler, SchedulerOptions
from quota_constructs.scheduling.timetable import check_calendar_grace, check_plan_stop


class Emulator:
    """An emulated account: Batch quota management, the SSM parameters of organisations and
    SageMaker's DescribeTrainingJob for the training jobs its service jobs ran.

    ``clock`` defaults to a :class:`VirtualClock`; ``faults`` injects throttling / 5xx answers
    before handling and lost responses (handled, then answered 500) after it;
    ``options`` are the scheduler core's timings and UNCONFIRMED choices (one scheduler per
    queue; RUNNABLE time limits come from each queue's ``jobStateTimeLimitActions``). Job ids
    are random UUIDs; a ``seed`` makes them reproducible (same seed and requests, same ids).
    ``explain_pending=True``: a RUNNABLE job with no AWS ``statusReason`` reports the core's
    typed pending reason; by default it has none, as on AWS (``explain`` answers either way).
    ``client_token_mode``: a repeated ``clientToken`` is rejected as AWS documents (default) or
    answered with the first job (:class:`~.state.job_service.ClientTokenMode`).
    ``dispatch``: a submitted job waits SUBMITTED for the next scheduler tick, then RUNNABLE for
    a tick (default, AWS's states) or is dispatched before the next request
    (:class:`~.state.job_service.DispatchMode`).
    ``payload_validation``: a payload naming no schedulable instance type or count fails its job
    (``passthrough``, default, as AWS passes payloads through) or the submit (``strict``;
    :class:`~.handlers.submit_request.PayloadValidation`).
    ``plan_ownership``: a payload naming a training plan outside the organisation of the queue
    is refused (``refuse``, default) or accepted as AWS accepts it (``passthrough``;
    :class:`~.handlers.submit_request.PlanOwnership`).
    ``naming``: an organisation's queue, environment and policy get fixed names
    (``<org>-queue``..., default) or names generated as CloudFormation would
    (:class:`~.provision.ResourceNaming`; reproducible with ``seed``).
    ``events``: where AWS Batch's EventBridge events of service jobs go (state changes,
    preemption started and completed; :mod:`.events`); default none are made. Their file is
    written after each request's transitions; a failed write is logged and counted
    (:attr:`~.events.EventSink.write_failures`, in ``GET /_quota/health``), the request answers
    as it would have. ``retention``: when finished jobs expire
    (:class:`~.state.job_service.JobRetention`; default 14 days, 20,000 jobs: UNCONFIRMED).
    ``calendar_grace_s``: how long borrowers of a share whose calendar stops it lending may
    finish before they are preempted (0: at the window edge; UNCONFIRMED).
    ``plan_stop_before_end_s``: when, before a training plan's end, its capacity goes and the
    jobs running on it are stopped (AWS's 30 minutes by default; 0: they run to the end). Both
    are applied by each queue's :class:`~quota_constructs.scheduling.Timetable`.
    """

    def __init__(
        self,
        *,
        clock: EmulatorClock | None = None,
        faults: FaultPlan | None = None,
        account: Account | None = None,
        options: SchedulerOptions | None = None,
        seed: int | None = None,
        explain_pending: bool = False,
        client_token_mode: ClientTokenMode = ClientTokenMode.REJECT,
        events: EventSink | None = None,
        dispatch: DispatchMode = DispatchMode.TICK,
        payload_validation: PayloadValidation = PayloadValidation.PASSTHROUGH,
        plan_ownership: PlanOwnership = PlanOwnership.REFUSE,
        naming: ResourceNaming = ResourceNaming.FIXED,
        retention: JobRetention | None = None,
        calendar_grace_s: float = 0.0,
        plan_stop_before_end_s: float = PLAN_STOP_BEFORE_END_S,
    ) -> None:
        self.clock: EmulatorClock = clock or VirtualClock()
        check_calendar_grace(calendar_grace_s)
        check_plan_stop(plan_stop_before_end_s)
        self.calendar_grace_s = calendar_grace_s
        self.plan_stop_before_end_s = plan_stop_before_end_s
        self.calendar_flips: list[CalendarFlip] = []
        """Every calendar flip applied so far, in order (tests and ``quota status`` read it)."""
        self.account = account or Account()
        self.lock = threading.RLock()
        self.tags = TagStore()
        self.jobs = JobService(
            self.account,
            self.clock,
            self.tags,
            options=options,
            seed=seed,
            client_token_mode=client_token_mode,
            dispatch=dispatch,
            retention=retention,
        )
        self.events = events
        if events is not None:
            self.jobs.listeners.append(BatchEvents(self.account, self.clock, events))
        self.registry = Registry(self.account, self.tags, listener=self.jobs)
        self.parameters = ParameterStore(self.account)
        self.identities = Identities(self.account)
        self.jobs.expiry_listeners.append(self.identities.forget_job)
        self.faults = FaultInjector(faults) if faults else None
        self.organisations: dict[str, ProvisionedOrganisation] = {}
        self.naming = naming
        self._naming_rng = random.Random(seed) if seed is not None else None
        self._counts: Counter[str] = Counter()
        self._service_jobs = ServiceJobHandlers(
            self.registry,
            self.jobs,
            self.tags,
            self.account,
            self.clock,
            explain_pending=explain_pending,
            payload_validation=payload_validation,
            plan_ownership=plan_ownership,
        )
        self._service_jobs.plan_owner = self._plan_owner
        self._batch: dict[str, Handler] = {
            **ResourceHandlers(self.registry, self.tags).operations(),
            **self._service_jobs.operations(),
        }
        training_jobs = TrainingJobHandlers(self.registry, self.jobs, self.account, self.clock)
        self.training_plans = TrainingPlans(self.account)
        self.service_quotas = ServiceQuotas(self.account)
        training_plans = TrainingPlanHandlers(
            self.training_plans, self.account, self.clock, self.jobs.plan_instances_in_use
        )
        self._tables: dict[str, dict[str, Handler]] = {
            "batch": self._batch,
            "ssm": ParameterHandlers(self.parameters).operations(),
            "sagemaker": {**training_jobs.operations(), **training_plans.operations()},
            "sts": StsHandlers(self.identities).operations(),
            "service-quotas": ServiceQuotaHandlers(self.service_quotas, self.account).operations(),
        }

    def served_operations(self) -> dict[str, tuple[str, ...]]:
        """The operations answered, per service (``batch``, ``ssm``, ``sagemaker``, ``sts``)."""
        return {service: tuple(table) for service, table in self._tables.items()}

    @property
    def request_counts(self) -> dict[str, int]:
        """Requests received per operation name (faulted ones included)."""
        with self.lock:
            return dict(self._counts)

    @property
    def fault_counts(self) -> dict[str, dict[str, int]]:
        """Faults injected so far: operation -> kind (``throttle``, ``5xx``, ``lost``) -> count."""
        return self.faults.injected if self.faults is not None else {}

    def failure_counts(self) -> dict[str, int]:
        """Failures that were logged instead of answered: ``listenerFailures`` (exceptions of
        scheduler listeners) and ``eventWriteFailures`` (events not written to the file)."""
        with self.lock:
            listeners = sum(s.listener_failures for s in self.jobs.schedulers.values())
        writes = self.events.write_failures if self.events is not None else 0
        return {"listenerFailures": listeners, "eventWriteFailures": writes}

    def call(self, service: str, operation: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Run one validated request of ``service`` (``batch``, ``ssm``, ``sagemaker`` or ``sts``).

        Raises an injected fault's :class:`~.wire.api_errors.ApiError`, or a domain error
        (:data:`DOMAIN_ERRORS`) for the wire layer to answer. A handled request is attributed
        to its caller (:meth:`~.state.identities.Identities.record`).
        """
        table = self._tables[service]
        with self.lock:
            self._counts[operation] += 1
        fault = self.faults.draw(operation) if self.faults is not None else None
        if fault is not None and not fault.after_handling:
            raise fault.error
        try:
            result = self._handle(service, operation, table.get(operation), params)
        except DOMAIN_ERRORS:
            if fault is not None:  # a lost response: the error never reaches the client either
                raise fault.error from None
            raise
        self.identities.record(operation, result)
        if fault is not None:  # a lost response: the request took effect, the client sees a 500
            raise fault.error
        return result

    def _handle(
        self, service: str, operation: str, handler: Handler | None, params: Mapping[str, Any]
    ) -> dict[str, Any]:
        if handler is None:
            served = ", ".join(self._tables[service])
            raise InvalidRequest(
                f"{operation} is not served by the quota emulator; of {service} it serves {served}"
            )
        with self.lock:
            try:
                self.jobs.advance()
                return handler(params)
            finally:
                self._flush_events()

    def _flush_events(self) -> None:
        """Write the events of the transitions just completed (a failure is logged, counted)."""
        if self.events is not None:
            self.events.flush()

    def explain(self, job_id: str) -> dict[str, Any]:
        """Typed pending reason and preemption history of a job (see
        :meth:`~.handlers.service_jobs.ServiceJobHandlers.explain`) and ``submittedBy``, the ARN
        of the caller that submitted it (an assumed role's session, or the account's root user);
        ``NotFound`` if unknown."""
        with self.lock:
            try:
                self.jobs.advance()
                explanation = self._service_jobs.explain(job_id)
            finally:
                self._flush_events()
        explanation["submittedBy"] = self.identities.submitter(explanation["jobId"])
        return explanation

    def advance(self, seconds: float) -> float:
        """Virtual clock only: let ``seconds`` pass and process what falls due; returns now."""
        if not isinstance(self.clock, VirtualClock):
            raise InvalidRequest(
                "advance needs a virtual clock (quota local serve --virtual); "
                "a wall clock moves by itself"
            )
        try:
            now = self.clock.advance(seconds)
        except ValueError as exc:
            raise InvalidRequest(str(exc)) from exc
        self.advance_to_now()
        return now

    def advance_to_now(self) -> None:
        """Process everything due up to the clock's now (completions, dispatch, preemption)."""
        with self.lock:
            try:
                self.jobs.advance(settle=True)
            finally:
                self._flush_events()

    def provision(self, org: Organisation) -> ProvisionedOrganisation:
        """Create ``org``'s resources and SSM parameters as its stack would (docs/constructs.md)."""
        org.validate(context=f"organisation {org.name!r}")
        with self.lock:
            if org.name in self.organisations:
                problem = Problem(
                    "organisation",
                    org.name,
                    "this organisation is already provisioned in the emulator",
                    "give each organisation file its own organisation name",
                )
                raise QuotaConfigError([problem])
            plans = self._known_plans(org)
            try:
                names = resource_names(org.name, self.naming, self._naming_rng)
                done = provision(org, self._call_unfaulted, account=self.account, names=names)
            except EmulatorError as exc:
                problem = Problem(
                    "organisation", org.name, exc.message, "fix the organisation file"
                )
                raise QuotaConfigError([problem]) from exc
            epoch = self.clock.epoch(self.clock.now())
            for plan in org.training_plans:
                if not plan.by_arn:  # a plan the file names is one the account has bought
                    self.training_plans.add_bought(plan, now_s=epoch)
            lists = done.string_lists
            for name, value in done.parameters().items():
                kind = "StringList" if name in lists else "String"
                self.parameters.put(name, value, epoch=epoch, kind=kind)
            self.identities.add_roles(t.submitter_role_arn for t in done.teams.values())
            self._follow_timetable(org, done, plans)
            self.organisations[org.name] = done
            return done

    def _follow_timetable(
        self, org: Organisation, done: ProvisionedOrganisation, plans: list[TrainingPlanSpec]
    ) -> None:
        """Register each share's calendar and the named plans' windows with the queue's
        scheduler, on the emulator's clock (what is in force now applies at once)."""
        queue = self.registry.queue(done.job_queue_name)
        scheduler = self._scheduler_of(done)
        scheduler.timetable.listeners.append(partial(self._calendar_flipped, queue))
        epoch_s = self.clock.epoch(0.0)
        for share in org.queue.shares:
            calendar = org.calendars.get(share.name)
            if calendar is not None:
                scheduler.follow_calendar(
                    share, calendar, epoch_s=epoch_s, grace_s=self.calendar_grace_s
                )
        scheduler.follow_plans(
            plans, epoch_s=epoch_s, stop_before_end_s=self.plan_stop_before_end_s
        )

    def _calendar_flipped(self, queue: JobQueue, flip: CalendarFlip) -> None:
        """The share's record shows the settings a calendar flip applied."""
        record = queue.shares.get(flip.share)
        if record is not None:
            record.spec = flip.spec
        self.calendar_flips.append(flip)

    def _known_plans(self, org: Organisation) -> list[TrainingPlanSpec]:
        """``org``'s plans, each ``{arn}`` one as the emulator's account bought it."""
        plans, problems = [], []
        for index, plan in enumerate(org.training_plans):
            try:
                plans.append(self.training_plans.spec_of(plan.arn) if plan.by_arn else plan)
            except ResourceNotFound:
                problems.append(
                    Problem(
                        f"training_plans[{index}].arn",
                        plan.arn,
                        "no such training plan in the emulator's account",
                        "buy it first (CreateTrainingPlan), then provision the organisation",
                    )
                )
        if problems:
            raise QuotaConfigError(problems, context=f"organisation {org.name!r}")
        return plans

    def _plan_owner(self, queue_arn: str) -> tuple[str, tuple[str, ...]] | None:
        """The organisation owning queue ``queue_arn`` and its plan ARNs (``None``: a queue
        no provisioned organisation owns)."""
        for done in self.organisations.values():
            if done.job_queue_arn == queue_arn:
                return done.name, done.training_plan_arns
        return None

    def _scheduler_of(self, done: ProvisionedOrganisation) -> Scheduler:
        return self.jobs.schedulers[self.registry.queue(done.job_queue_name).name]

    def provision_file(self, path: str | Path) -> ProvisionedOrganisation:
        """Load and provision an organisation file; ``OrgFileError`` names file, field, fix."""
        return self.provision(load_organisation(path))

    def _call_unfaulted(self, operation: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return self._batch[operation](params)
