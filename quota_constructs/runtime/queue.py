"""Owns the queue client: submit, re-prioritise, list, describe, wait for, terminate jobs.

One :class:`QueueClient` is bound to one quota-managed job queue (by name, ARN, or organisation
name resolved from the stack's SSM parameters), optionally acting as a team
(:meth:`QueueClient.for_team`). Every call goes through boto3 with botocore's retry modes and
paginators; pre-submit checks read the live queue once, convert it to the domain model
(:func:`queue_spec_from_api`) and reuse the model's answers. Every submit into a share that
carries a team tag carries that tag too.

A submit refused as a repeat of its ``clientToken`` (AWS rejects the second identical request)
is answered with the job the first request created, found by :meth:`QueueClient.find_existing`
(job name, share, payload and tags); see ``docs/runtime.md``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import boto3
from botocore.client import BaseClient
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    HTTPClientError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
)
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from quota_constructs.api_shapes import quota_share_arn, share_from_api
from quota_constructs.contracts import (
    TEAM_TAG_KEY,
    job_queue_arn_parameter,
    training_plans_from_value,
    training_plans_parameter,
)
from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    Problem,
    QuotaConfigError,
    QuotaShareSpec,
    capacity_demand,
    check_scheduling_priority,
    raise_if,
    training_job_prefix,
)
from quota_constructs.runtime.jobs import (
    ACTIVE_STATUSES,
    JobDetails,
    JobStatus,
    JobSummary,
    QueueSnapshot,
    SubmitOutcome,
    TerminateOutcome,
    job_id_from_arn,
)
from quota_constructs.runtime.pacing import (
    SUBMIT_RATE_PER_S,
    Backoff,
    MonotonicClock,
    PacingClock,
    RateLimiter,
    RetryOptions,
)
from quota_constructs.runtime.payload import (
    JobSubmission,
    TrainingJob,
    payload_team_tag_problems,
    team_tag_problems,
    training_plan_problems,
)
from quota_constructs.runtime.team import (
    assumed_role_session,
    default_session_name,
    read_team_parameters,
)
from quota_constructs.runtime.training_plans import PlanOverflow, has_room
from quota_constructs.runtime.training_plans import plan_overflow as _plan_overflow
from quota_constructs.runtime.waiting import Transition, Until, Waiter, WaitResult, WaitTarget

if TYPE_CHECKING:  # the forecast runs the scheduling core: imported only when asked for
    from quota_constructs.forecast import Calibration, Forecast, QueueState, WhatIf
    from quota_constructs.forecast.engine import Arrivals


class ForecastOptions(TypedDict, total=False):
    """The options of :meth:`QueueClient.forecast` and :meth:`QueueClient.what_if`, given as
    keywords (``client.forecast(seed=3)``) or as one record
    (``client.forecast(**ForecastOptions(seed=3))``); an option left out takes the forecast's
    default.

    ``now_s``: the queue's clock (epoch seconds; default this machine's); ``org``: the
    organisation file's calendars, plans and priority caps (the API has none of them);
    ``samples``: runs of the core (default: from ``engine.JOB_BUDGET``); ``horizon_s``: how far
    ahead (default 7 days); ``seed``: the random draws (default 0); ``arrivals``: jobs that may
    arrive meanwhile (default ``None``, "auto": each share's past whole days where the history
    holds one; ``True`` forces it on, ``False`` off;
    :data:`quota_constructs.forecast.engine.Arrivals`); ``watch``: the ids of the waiting jobs
    to forecast (default every one; a what-if's job always), with the same answer as in the
    whole forecast (a sample ends once they are placed); ``calibration``: the bounds of the
    jobs forecast to wait calibrated as a backtest showed they must be
    (:class:`~quota_constructs.forecast.Calibration`; default
    :func:`~quota_constructs.forecast.default_calibration`; ``None``: as sampled).
    """

    now_s: float | None
    org: Organisation | None
    samples: int | None
    horizon_s: float
    seed: int
    arrivals: Arrivals
    watch: Collection[str] | None
    calibration: Calibration | None


_READ_OPTIONS = ("now_s", "org")
"""The :class:`ForecastOptions` that say how the queue is read; the others, how it is run."""
TEAM_DEFAULT_PRIORITY = 0
"""``schedulingPriority`` sent for a team's share when none is given: the submitter policy's
priority cap is a condition on ``batch:SchedulingPriority``, which a request without the key
fails (docs/security.md)."""
TERMINATE_BATCH = 50
"""TerminateServiceJobs takes at most 50 job ids per call (docs/aws-semantics.md §1.1)."""
RESUBMIT_ROUNDS = 3
"""Extra rounds in which :meth:`QueueClient.submit_many` retries transiently refused jobs."""
_EPOCH = datetime.fromtimestamp(0, tz=UTC)
MAX_LISTED_MATCHES = 10
"""Most matching jobs an :class:`AmbiguousJobName` message lists."""
_THROTTLING_CODES = frozenset(
    {"ThrottlingException", "Throttling", "TooManyRequestsException", "RequestLimitExceeded"}
)


def is_transient(error: ClientError | BotoCoreError) -> bool:
    """Throttling, a 5xx answer or a broken connection: the same request may succeed later."""
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code", "")
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return code in _THROTTLING_CODES or status >= 500 or status == 429
    return isinstance(error, (BotocoreConnectionError, HTTPClientError))


_EMULATOR_HINT = "for the local emulator, export the variables `quota local serve` prints"


def error_text(error: Exception) -> str:
    """One line for a boto3/botocore error: ``Code: message``, with the fix where it is ours."""
    if isinstance(error, ClientError):
        info = error.response.get("Error", {})
        return f"{info.get('Code', 'Error')}: {info.get('Message', str(error))}"
    if isinstance(error, NoRegionError):
        return f"no AWS region: pass --region REGION or set AWS_DEFAULT_REGION ({_EMULATOR_HINT})"
    if isinstance(error, NoCredentialsError | PartialCredentialsError):
        return f"{error}: configure AWS credentials (AWS_PROFILE, ...; {_EMULATOR_HINT})"
    if isinstance(error, EndpointConnectionError):
        return f"{error}: is the endpoint up? (for the local emulator: `quota local serve`)"
    return str(error)


def is_setup_error(error: Exception) -> bool:
    """True for a missing region or credentials: the caller's set-up, exit 2, not an AWS
    failure."""
    return isinstance(error, NoRegionError | NoCredentialsError | PartialCredentialsError)


class JobNotFound(LookupError):
    """No job of this queue has the id, ARN or (active job's) name asked for."""


class ShareNotFound(LookupError):
    """The queue has no quota share of that name."""


class AmbiguousJobName(ValueError):
    """Several active jobs of the queue have the name asked for; ``matches`` lists them."""

    def __init__(self, name: str, matches: Sequence[JobSummary]) -> None:
        self.name = name
        self.matches = tuple(matches)
        shown = ", ".join(
            f"{j.job_id} ({j.status.value}, {j.share or '-'})"
            for j in self.matches[:MAX_LISTED_MATCHES]
        )
        more = len(self.matches) - MAX_LISTED_MATCHES
        super().__init__(
            f"{len(self.matches)} active jobs are named {name!r}: {shown}"
            + (f" and {more} more" if more > 0 else "")
            + "; pass the job id instead"
        )


def queue_spec_from_api(
    queue: Mapping[str, Any], shares: Iterable[Mapping[str, Any]]
) -> JobQueueSpec:
    """``DescribeJobQueues`` entry + ``ListQuotaShares`` entries -> the model's queue.

    The one place that converts live API shapes to model objects; submit-time checks then
    ask the model (``max_usable``, ``infeasibility``), never restate a rule.
    """
    return JobQueueSpec(
        shares=tuple(share_from_api(s) for s in shares),
        priority=int(queue.get("priority", 1)),
    )


@dataclass
class JobHandle:
    """A submitted job: its ids, and shortcuts to the client's per-job calls."""

    job_id: str
    job_name: str
    job_arn: str | None
    share: str | None
    client: QueueClient = field(repr=False, compare=False)
    already_submitted: bool = False
    """True when the job existed before this call: Batch rejected the call's first request as
    a repeat of its ``clientToken`` and the job was found (:meth:`QueueClient.find_existing`)."""

    def describe(self) -> JobDetails:
        """:meth:`QueueClient.describe` for this job."""
        return self.client.describe(self.job_id)

    def update_priority(self, priority: int) -> None:
        """:meth:`QueueClient.update_priority` for this job."""
        self.client.update_priority(self.job_id, priority)

    def terminate(self, reason: str = "Terminated by user") -> None:
        """:meth:`QueueClient.terminate` for this job."""
        self.client.terminate(self.job_id, reason)

    def wait(self, until: WaitTarget = Until.TERMINAL, timeout: float | None = None) -> JobSummary:
        """:meth:`QueueClient.wait` for this job alone; returns its final summary."""
        return self.client.wait([self], until=until, timeout=timeout).jobs[self.job_id]


JobRef = JobHandle | str


class QueueClient:
    """Client for one quota-managed SAGEMAKER_TRAINING job queue.

    ``queue`` is the job queue name or ARN. ``session`` (default: a new boto3 session),
    ``region`` and ``endpoint_url`` are passed to boto3; without ``endpoint_url`` boto3's own
    settings apply (``AWS_ENDPOINT_URL_BATCH``, profiles). ``retry`` sets botocore's retry mode
    for every call. Submissions from :meth:`submit_many` are paced to ``submit_rate`` per
    second (AWS allows 5) with ``submit_retry`` (adaptive by default). ``clock`` drives
    pacing and waits (wall clock by default; tests pass an emulator's virtual clock).
    """

    def __init__(
        self,
        queue: str,
        *,
        session: boto3.Session | None = None,
        region: str | None = None,
        endpoint_url: str | None = None,
        retry: RetryOptions | None = None,
        submit_retry: RetryOptions | None = None,
        submit_rate: float = SUBMIT_RATE_PER_S,
        clock: PacingClock | None = None,
        backoff: Backoff | None = None,
        training_plans: Sequence[str] | None = None,
        plan_overflow: PlanOverflow | str = PlanOverflow.ON_DEMAND,
        org: Organisation | None = None,
        queue_clock: Callable[[], float] = time.time,
    ) -> None:
        self.queue = queue
        self.org = org
        """The organisation file's declared shares and calendars (the API has neither). With
        calendars, the submit check accepts a job whose instances fit its share in a setting
        the calendars bring within a week (it waits for it, as the what-if says), not only in
        the settings in force now. ``None`` (default): the settings in force now only."""
        self.queue_clock = queue_clock
        """Now as the queue sees it, in epoch seconds (default this machine's clock; an
        emulator's virtual clock may be elsewhere): the calendars are read at it."""
        self.training_plans = tuple(training_plans or ())
        """Names or ARNs of the organisation's SageMaker training plans (``training_plans:``):
        a job of a plan's instance type submitted while the plan is ``Active`` runs on it.
        Default (``None``): for :meth:`for_organisation` and :meth:`for_team`, the plans the
        organisation's stack publishes (``/quota/<organisation>/training-plans``); else none.
        ``()``: none (every job runs on demand)."""
        self._plans_given = training_plans is not None
        self.organisation: str | None = None
        """The organisation whose queue this is, when the client was made for one."""
        self.organisation_plans: tuple[str, ...] | None = None
        """The organisation's published training plan ARNs (:meth:`for_organisation`,
        :meth:`for_team`); ``None`` when the client does not know its organisation."""
        self.plan_overflow = _plan_overflow(plan_overflow)
        """A job the active plans have no room for at submit: ``on-demand`` (default) sends
        it without ``TrainingPlanArn``; ``wait`` sends it on the plan (:meth:`active_plan`)."""
        self.session = session or boto3.Session()
        self.region = region
        self.endpoint_url = endpoint_url
        self.retry = retry or RetryOptions()
        self.submit_retry = submit_retry or RetryOptions(
            mode="adaptive",
            max_attempts=self.retry.max_attempts,
            backoff_scale=self.retry.backoff_scale,
        )
        self.clock = clock or MonotonicClock()
        self.backoff = backoff or Backoff()
        self._sagemaker: BaseClient | None = None
        self._ssm: BaseClient | None = None
        self.batch = self._client("batch", self.retry)
        self._submit_batch: BaseClient | None = None  # made on the first submit (lazy)
        self.limiter = RateLimiter(submit_rate, self.clock)
        self.team: str | None = None  # the share whose team role this client acts as
        self._spec: JobQueueSpec | None = None
        self._queue_detail: dict[str, Any] | None = None
        self._team_tags: dict[str, str | None] = {}  # share -> its team tag's value
        self._earlier_statuses: dict[str, JobStatus] = {}  # last status each wait saw

    @property
    def submit_batch(self) -> BaseClient:
        """The Batch client submits go through (adaptive retries, ``submit_retry``); made on
        first use, so a command that only reads never builds it."""
        if self._submit_batch is None:
            self._submit_batch = self._client("batch", self.submit_retry)
        return self._submit_batch

    @submit_batch.setter
    def submit_batch(self, client: BaseClient) -> None:
        self._submit_batch = client

    @property
    def ssm(self) -> BaseClient:
        """The SSM client the organisation's parameters are read with (made on first use, once:
        a client costs tens of CPU-ms to build)."""
        if self._ssm is None:
            self._ssm = self._client("ssm", self.retry)
        return self._ssm

    def _client(self, service: str, retry: RetryOptions) -> BaseClient:
        client = self.session.client(
            service,
            region_name=self.region,
            endpoint_url=self.endpoint_url,
            config=retry.config(),
        )
        return retry.apply(client)

    @classmethod
    def for_organisation(cls, organisation: str, **kwargs: Any) -> QueueClient:
        """The client for an organisation's queue, from SSM ``/quota/<org>/job-queue/arn``,
        with the organisation's training plans from ``/quota/<org>/training-plans``.

        ``kwargs`` are the constructor's; the SSM client uses the same session, region,
        endpoint and retry settings.
        """
        client = cls(job_queue_arn_parameter(organisation), **kwargs)
        client.queue = client._resolve_organisation(organisation)
        client._know_plans(organisation, client._read_plans(organisation))
        return client

    def _know_plans(self, organisation: str, plans: tuple[str, ...]) -> None:
        """This client is ``organisation``'s, whose published plans are ``plans``: submits
        use them unless ``training_plans`` was given, and refuse any other plan."""
        self.organisation = organisation
        self.organisation_plans = plans
        if not self._plans_given:
            self.training_plans = plans

    def _read_plans(self, organisation: str) -> tuple[str, ...]:
        """``/quota/<organisation>/training-plans`` (none when a stack deployed before the
        parameter existed does not publish it)."""
        ssm = self.ssm
        name = training_plans_parameter(organisation)
        try:
            value = ssm.get_parameter(Name=name)["Parameter"]["Value"]
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ParameterNotFound":
                return ()
            raise _ssm_problem(
                organisation,
                error,
                f"SSM parameter {name}",
                f"allow ssm:GetParameter on /quota/{organisation}/* to your identity",
            ) from error
        return training_plans_from_value(str(value))

    @classmethod
    def for_team(
        cls,
        organisation: str,
        share: str,
        *,
        session_name: str | None = None,
        **kwargs: Any,
    ) -> QueueClient:
        """The client of ``share``'s team: every Batch call made as its submitter role.

        Reads ``/quota/<organisation>/job-queue/arn``,
        ``/quota/<organisation>/quota-shares/<share>/submitter-role-arn`` and the
        organisation's ``training-plans`` from SSM, then calls
        STS ``AssumeRole`` (session ``session_name``, default ``quota-<login name>``) with the
        caller's own credentials (``session``, or boto3's defaults). The client submits only
        into ``share``. ``kwargs`` are the constructor's; SSM and STS use the same endpoint,
        region and retry settings. Raises :class:`QuotaConfigError` naming the organisation or
        share and the fix when the organisation, the share or its team access is missing, or
        when the role cannot be assumed.
        """
        base = cls(job_queue_arn_parameter(organisation), **kwargs)
        try:
            found = read_team_parameters(base.ssm, organisation, share)
        except ClientError as error:
            raise _ssm_problem(
                organisation,
                error,
                "the team's SSM parameters",
                f"allow ssm:GetParameters on /quota/{organisation}/* to your identity",
            ) from error
        try:
            session = assumed_role_session(
                base._client("sts", base.retry),
                found.submitter_role_arn,
                session_name or default_session_name(),
                region=base.session.region_name,
                profile=_explicit_profile(base.session),
            )
        except ClientError as error:
            raise QuotaConfigError(
                [
                    Problem(
                        "share",
                        share,
                        f"cannot assume the team's submitter role {found.submitter_role_arn} "
                        f"({error_text(error)})",
                        "act from an identity listed in the share's access.principals, or ask "
                        "for yours to be added there and the stack deployed",
                    )
                ]
            ) from error
        client = cls(found.job_queue_arn, **{**kwargs, "session": session})
        client.team = share
        client._know_plans(organisation, found.training_plans)
        return client

    def _resolve_organisation(self, organisation: str) -> str:
        ssm = self.ssm
        name = job_queue_arn_parameter(organisation)
        try:
            arn = ssm.get_parameter(Name=name)["Parameter"]["Value"]
        except ClientError as error:
            raise _ssm_problem(
                organisation,
                error,
                f"SSM parameter {name}",
                "deploy the organisation's stack, or pass the job queue name or ARN",
            ) from error
        return str(arn)

    # --- the live queue, as the model sees it ---------------------------------------------

    def queue_detail(self, *, refresh: bool = False) -> dict[str, Any]:
        """``DescribeJobQueues`` for this queue (cached; ``refresh=True`` re-reads it)."""
        if self._queue_detail is None or refresh:
            queues = self.batch.describe_job_queues(jobQueues=[self.queue]).get("jobQueues", [])
            if not queues:
                raise QuotaConfigError(
                    [
                        Problem(
                            "jobQueue",
                            self.queue,
                            "no such job queue in this account and region",
                            "check the name/ARN, region and --endpoint-url",
                        )
                    ]
                )
            self._queue_detail = dict(queues[0])
        return self._queue_detail

    def spec(self, *, refresh: bool = False) -> JobQueueSpec:
        """The queue's shares as a model :class:`JobQueueSpec` (cached per client)."""
        if self._spec is None or refresh:
            detail = self.queue_detail(refresh=refresh)
            pages = self.batch.get_paginator("list_quota_shares").paginate(
                jobQueue=detail["jobQueueArn"]
            )
            shares = [s for page in pages for s in page.get("quotaShares", [])]
            self._spec = queue_spec_from_api(detail, shares)
            self._team_tags.clear()
        return self._spec

    def refresh(self) -> JobQueueSpec:
        """Forget the cached queue and shares and read them again."""
        return self.spec(refresh=True)

    def describe_share(self, share: str) -> QuotaShareSpec:
        """One share, read live with ``DescribeQuotaShare`` (bypasses the cache)."""
        return share_from_api(self.batch.describe_quota_share(quotaShareArn=self._share_arn(share)))

    def _share_arn(self, share: str) -> str:
        return quota_share_arn(self.queue_detail()["jobQueueArn"], share)

    def team_tag(self, share: str) -> str | None:
        """The value of ``share``'s team tag (``quota-team``), ``None`` for a share without one.

        Read from the share's tags with ``DescribeQuotaShare`` once per share, and again after
        :meth:`refresh`. Raises ``ClientError`` when the share cannot be described.
        """
        if share not in self._team_tags:
            detail = self.batch.describe_quota_share(quotaShareArn=self._share_arn(share))
            self._team_tags[share] = (detail.get("tags") or {}).get(TEAM_TAG_KEY)
        return self._team_tags[share]

    def active_plan(self, instance_type: str | None, instances: int = 1) -> str | None:
        """The ARN of an ``Active`` plan of :attr:`training_plans` reserving ``instance_type``
        with room for ``instances`` (``AvailableInstanceCount``; any active one under
        :attr:`plan_overflow` ``wait``).

        ``DescribeTrainingPlan`` per plan, at each submit (a plan's status follows its window;
        AWS: jobs on a ``Scheduled`` plan wait ``Pending`` until it is ``Active``, so only an
        active plan is used). ``None``: no such plan, the job runs on demand. Room is counted
        at submit: a job queued on the plan but not started holds none of its instances yet.
        """
        if instance_type is None:
            return None
        if self._sagemaker is None:
            self._sagemaker = self._client("sagemaker", self.retry)
        for name in self.training_plans:
            plan = self._sagemaker.describe_training_plan(TrainingPlanName=name)
            types = {c.get("InstanceType") for c in plan.get("ReservedCapacitySummaries") or []}
            if plan.get("Status") != "Active" or instance_type not in types:
                continue
            if self.plan_overflow is PlanOverflow.WAIT or has_room(plan, instances):
                return str(plan["TrainingPlanArn"])
        return None

    # --- submit ---------------------------------------------------------------------------

    def check(self, submission: JobSubmission) -> list[Problem]:
        """Every pre-submit problem of ``submission`` against the live queue."""
        return self.prepare(submission)[1]

    def prepare(self, submission: JobSubmission) -> tuple[JobSubmission, list[Problem]]:
        """The submission as it will be sent, and every pre-submit problem of it.

        As sent: with the share's team tag added (:meth:`team_tag`) to the service job and to
        the SageMaker training job (the payload's ``Tags``, for cost allocation), and the
        payload's ``TrainingJobName`` starting with the team's prefix (the only log streams the
        team's execution role may write), so its derived ``clientToken`` covers both; on an
        ``Active`` training plan of its type (:meth:`active_plan`). Problems: the team's share
        (for a team's client), a conflicting team tag, then :meth:`JobSubmission.problems`
        against the live queue. Refused besides: a payload's ``TrainingPlanArn`` outside the
        organisation's plans (:meth:`_plan_problems`), and a payload ``Tags`` entry
        ``quota-team`` other than the share's team tag (a training job's cost goes to the
        team it names).
        """
        if submission.shape_problems():  # wrong types: nothing else can be checked or sent
            return submission, submission.problems()
        spec = self.spec()
        if submission.share not in {s.name for s in spec.shares}:
            spec = self.refresh()  # a share created since the cache was filled
        problems = self._team_share_problems(submission)
        if problems or submission.share not in {s.name for s in spec.shares}:
            return submission, problems + submission.problems(spec)
        try:
            tag = self.team_tag(submission.share)
        except ClientError as error:
            problems.append(_describe_problem(submission.share, error))
            return submission, problems + submission.problems(spec)
        if submission.training_plan_arn is None and self.training_plans:
            plan = self.active_plan(submission.instance_type, _instances(submission))
            submission = replace(submission, training_plan_arn=plan)
        problems += self._plan_problems(submission)
        problems += payload_team_tag_problems(
            submission.payload_dict, submission.share, TEAM_TAG_KEY, tag
        )
        if tag is not None:
            problems += team_tag_problems(submission.tags, submission.share, TEAM_TAG_KEY, tag)
            if not problems:
                submission = submission.with_tag(TEAM_TAG_KEY, tag)
                job_tags = {**submission.training_job_tags, TEAM_TAG_KEY: tag}
                submission = replace(
                    submission,
                    training_job_tags=job_tags,
                    training_job_prefix=training_job_prefix(tag),
                )
            if submission.priority is None:  # a capped team's policy needs the condition key
                submission = replace(submission, priority=TEAM_DEFAULT_PRIORITY)
        return submission, problems + submission.problems(spec, self._settings_week(spec))

    def _settings_week(self, live: JobQueueSpec) -> Iterator[JobQueueSpec]:
        """The queue in every setting :attr:`org`'s calendars bring within a week (nothing
        without calendars): the live shares with their own settings, then each change. Lazy:
        read (the clock included) only for a job that does not fit the settings of now."""
        if self.org is None or not self.org.calendars:
            return
        from quota_constructs.runtime.forecasting import own_settings

        now_s = self.queue_clock()
        own = replace(live, shares=own_settings(live.shares, self.org, now_s))
        yield from own.settings_ahead(self.org.calendars, datetime.fromtimestamp(now_s, UTC))

    def _plan_problems(self, submission: JobSubmission) -> list[Problem]:
        """The payload's ``TrainingPlanArn`` when it is not one of the organisation's plans
        (:attr:`organisation_plans`; a client that does not know its organisation checks
        against the ``training_plans`` it was given, and not at all without them)."""
        if self.organisation_plans is not None:
            return training_plan_problems(
                submission.payload_dict,
                self.organisation_plans,
                f"organisation {self.organisation}",
            )
        if self._plans_given:
            return training_plan_problems(
                submission.payload_dict, self.training_plans, "this client's training_plans"
            )
        return []

    def _team_share_problems(self, submission: JobSubmission) -> list[Problem]:
        if self.team is None or submission.share == self.team:
            return []
        return [
            Problem(
                "quotaShareName",
                submission.share,
                f"this client acts as the team of quota share {self.team}, whose role may "
                f"submit only into {self.team}",
                f"submit into {self.team}, or act as the other share's team",
            )
        ]

    def render(self, submission: JobSubmission) -> dict[str, Any]:
        """The exact ``SubmitServiceJob`` request (dry run), team tag included; raises
        :class:`QuotaConfigError` if a check fails."""
        sent, problems = self.prepare(submission)
        raise_if(problems, context=f"job {submission.job_name}")
        return sent.request(self.queue)

    def submit(
        self,
        job_name: str,
        share: str,
        payload: Mapping[str, Any] | TrainingJob,
        **options: Any,
    ) -> JobHandle:
        """Check and submit one job into ``share``; returns its handle.

        ``options`` are :class:`JobSubmission` fields (``priority``, ``preemption_retries``,
        ``retry_attempts``, ``retry_rules``, ``timeout_s``, ``tags``, ``client_token``).
        Raises :class:`QuotaConfigError` naming every failed check, or botocore's
        ``ClientError`` if Batch refuses the request.
        """
        return self.submit_job(JobSubmission(job_name, share, payload, **options))

    def submit_job(self, submission: JobSubmission) -> JobHandle:
        """Check and submit a prepared :class:`JobSubmission`.

        When Batch refuses the request and :meth:`find_existing` finds the job an earlier
        request with the same ``clientToken`` created, returns that job's handle
        (``already_submitted`` True when this call's first request was the one refused).
        """
        request = self.render(submission)
        return self._send(submission, request, self.batch)

    def _send(
        self,
        submission: JobSubmission,
        request: dict[str, Any],
        client: BaseClient,
        *,
        sent_before: bool = False,
    ) -> JobHandle:
        """Submit ``request``; a refusal is answered with the job an earlier request made.

        ``sent_before``: an earlier request of this call carried the same token (a resubmit
        round), so a job found may be this call's own.
        """
        try:
            response = client.submit_service_job(**request)
        except ClientError as error:
            if is_transient(error):
                raise
            existing = self._existing(request)
            if existing is None:
                raise
            retried = sent_before or _retry_attempts(error) > 0
            return self._handle_of_existing(existing, already_submitted=not retried)
        return JobHandle(
            job_id=response["jobId"],
            job_name=response.get("jobName", submission.job_name),
            job_arn=response.get("jobArn"),
            share=submission.share,
            client=self,
        )

    def _handle_of_existing(self, job: JobSummary, *, already_submitted: bool) -> JobHandle:
        """A :class:`JobHandle` on ``job``, a job an earlier submit created (found by
        :meth:`_existing`); ``already_submitted``: not this call's own submit."""
        return JobHandle(
            job_id=job.job_id,
            job_name=job.job_name,
            job_arn=job.job_arn,
            share=job.share,
            client=self,
            already_submitted=already_submitted,
        )

    def find_existing(self, submission: JobSubmission) -> JobDetails | None:
        """The job an earlier submit of ``submission`` created, ``None`` when there is none.

        Batch's API returns no ``clientToken``, so the job is matched on what the derived token
        covers: ``ListServiceJobs`` with a ``JOB_NAME`` filter (every status), then the jobs of
        the same exact name and share, oldest first, are described until one has the same
        payload (as JSON) and tags as ``submission`` as sent (team tag included). The oldest
        match is the one the token made: a ``--resubmit`` attempt has another token and is
        always newer. Raises :class:`QuotaConfigError` when ``submission`` fails its checks.
        """
        request = self.render(submission)
        return self._existing(request)

    def _existing(self, request: Mapping[str, Any]) -> JobDetails | None:
        name, share = request["jobName"], request["quotaShareName"]
        params = {"jobQueue": self.queue, "filters": [{"name": "JOB_NAME", "values": [name]}]}
        candidates = [
            JobSummary.from_api(summary)
            for page in self.batch.get_paginator("list_service_jobs").paginate(**params)
            for summary in page.get("jobSummaryList", [])
            if summary.get("jobName") == name and summary.get("quotaShareName") == share
        ]
        candidates.reverse()  # listed newest first: reversed, equal times stay oldest first
        candidates.sort(key=lambda job: job.created_at or _EPOCH)
        for candidate in candidates:
            details = self.describe(candidate.job_id)
            if _same_request(details, request):
                return details
        return None

    def submit_many(
        self,
        submissions: Iterable[JobSubmission],
        *,
        on_result: Callable[[SubmitOutcome], None] | None = None,
        resubmit_rounds: int = RESUBMIT_ROUNDS,
    ) -> list[SubmitOutcome]:
        """Submit many jobs, paced to ``submit_rate``; one outcome per job, in order.

        Never stops at the first error: a job that fails a check, is malformed (even an item
        that is not a :class:`JobSubmission`) or is refused gets an outcome with ``error`` set,
        and the jobs after it are still submitted. A job refused by a transient error
        (throttling, 5xx, a lost connection) once botocore's own retries are spent is submitted
        again in up to ``resubmit_rounds`` later rounds, after a :attr:`backoff` delay. Every
        request for a job carries the same ``clientToken``; Batch rejects a repeat, and the
        job the first request created is then found (:meth:`find_existing`) and reported, so a
        retry after a lost response, or a re-run of the same list, gives each submission its
        one job. A rejected repeat whose job is not listed yet (when an earlier request of this
        call carried the token) counts as transient. ``on_result`` gets each job's final
        outcome once.
        """
        pending: list[Any] = list(submissions)
        outcomes: dict[int, SubmitOutcome] = {}
        indices = list(range(len(pending)))
        delays = self.backoff.delays()
        for round_number in range(resubmit_rounds + 1):
            if round_number:
                self.clock.sleep(delays.next())
            retry_later: list[int] = []
            for index in indices:
                outcome, transient = self._submit_one(
                    pending[index], index, sent_before=round_number > 0
                )
                outcomes[index] = outcome
                if transient and round_number < resubmit_rounds:
                    retry_later.append(index)
                elif on_result is not None:
                    on_result(outcome)
            indices = retry_later
            if not indices:
                break
        return [outcomes[i] for i in range(len(pending))]

    def _submit_one(
        self, submission: Any, index: int, *, sent_before: bool
    ) -> tuple[SubmitOutcome, bool]:
        """The outcome of one submission (item ``index``), and whether its error is transient."""
        if not isinstance(submission, JobSubmission):
            return SubmitOutcome(
                f"submissions[{index}]", error=str(_not_a_submission(submission, index))
            ), False
        try:
            request = self.render(submission)
        except QuotaConfigError as error:
            return SubmitOutcome(_outcome_name(submission, index), error=str(error)), False
        except (TypeError, ValueError, AttributeError, RecursionError) as error:  # a last guard
            message = f"malformed submission ({type(error).__name__}: {error})"
            return SubmitOutcome(_outcome_name(submission, index), error=message), False
        self.limiter.acquire()
        try:
            handle = self._send(submission, request, self.submit_batch, sent_before=sent_before)
        except (ClientError, BotoCoreError) as error:
            transient = is_transient(error) or _maybe_not_listed_yet(error, sent_before)
            return SubmitOutcome(submission.job_name, error=error_text(error)), transient
        outcome = SubmitOutcome(
            submission.job_name,
            job_id=handle.job_id,
            job_arn=handle.job_arn,
            already_submitted=handle.already_submitted,
        )
        return outcome, False

    # --- change and stop jobs -------------------------------------------------------------

    def update_priority(self, job: JobRef, priority: int) -> None:
        """``UpdateServiceJob``: set the scheduling priority (0..9999, higher runs first)."""
        raise_if(check_scheduling_priority(priority), context=f"job {_job_id(job)}")
        self.batch.update_service_job(jobId=_job_id(job), schedulingPriority=priority)

    def terminate(self, job: JobRef, reason: str = "Terminated by user") -> None:
        """``TerminateServiceJob`` for one job."""
        self.batch.terminate_service_job(jobId=_job_id(job), reason=reason)

    def terminate_many(
        self, jobs: Iterable[JobRef], reason: str = "Terminated by user"
    ) -> TerminateOutcome:
        """``TerminateServiceJobs`` in batches of 50; per-job errors, never aborts early."""
        ids = list(dict.fromkeys(_job_id(j) for j in jobs))
        done: list[str] = []
        errors: dict[str, str] = {}
        for start in range(0, len(ids), TERMINATE_BATCH):
            chunk = ids[start : start + TERMINATE_BATCH]
            try:
                response = self.batch.terminate_service_jobs(jobs=chunk, reason=reason)
            except (ClientError, BotoCoreError) as error:
                errors.update(dict.fromkeys(chunk, error_text(error)))
                continue
            done += response.get("successful", [])
            for entry in response.get("errors", []):
                errors[entry["job"]] = f"{entry.get('code')}: {entry.get('message')}"
        return TerminateOutcome(terminated=tuple(done), errors=errors)

    def terminate_share(self, share: str, reason: str = "Terminated by user") -> TerminateOutcome:
        """Terminate every active job of ``share``."""
        jobs = [j.job_id for j in self.list(share=share) if not j.is_terminated]
        return self.terminate_many(jobs, reason)

    # --- forecast -------------------------------------------------------------------------

    def forecast(
        self,
        *,
        active: Sequence[JobSummary] | None = None,
        state: QueueState | None = None,
        **options: Unpack[ForecastOptions],
    ) -> Forecast:
        """When each waiting job of the queue starts: median and 90th percentile, what it
        waits on, whom it preempts (docs/runtime.md, "Forecasts").

        Reads the queue (:meth:`queue_state`, with ``now_s``, ``org`` and ``active``) and runs
        the scheduling core forward ``samples`` times with sampled run times, up to
        ``horizon_s`` seconds, deterministically for ``seed`` (:class:`ForecastOptions`);
        ``state``: a queue state already read (then nothing is read).
        """
        from quota_constructs.forecast import forecast

        if state is None:
            state = self._read_state(options, active=active)
        return forecast(state, **_run_options(options))

    def queue_state(
        self,
        *,
        now_s: float | None = None,
        org: Organisation | None = None,
        active: Sequence[JobSummary] | None = None,
        arrivals: Arrivals = None,
    ) -> QueueState:
        """The queue as the forecast sees it (:func:`~.forecasting.read_queue_state`): one
        list call per status page, one ``DescribeServiceJob`` per active job (the list tells
        no priority, ``MaxRuntimeInSeconds``, hint tag or preemption retries), the newest
        finished jobs as run history. ``now_s``: the queue's clock (epoch seconds; default this
        machine's, an emulator's own clock may differ); ``org``: the organisation file's
        calendars, plans and priority caps (the API has none of them); ``active``: the active
        jobs of the whole queue when just listed (:func:`~.jobs.active_jobs`), not
        listed again; ``arrivals``: the forecast's (:class:`ForecastOptions`): the finished
        jobs' priorities are read (a few describes per share) only when it foresees arrivals.
        """
        from quota_constructs.runtime.forecasting import read_queue_state

        return read_queue_state(self, now_s=now_s, org=org, active=active, arrivals=arrivals)

    def what_if(self, submission: JobSubmission, **options: Unpack[ForecastOptions]) -> WhatIf:
        """What would happen if ``submission`` were submitted now, without submitting it:
        ``starts_now``, ``waits`` (with its start's median and 90th percentile) or ``never``
        (with the reason), and which jobs its start preempts (:meth:`forecast`'s
        :class:`ForecastOptions`).

        Raises :class:`QuotaConfigError` for a submission the pre-submit checks refuse for any
        other reason than its instances (a bad payload, name or tag).
        """
        from quota_constructs.forecast import WHAT_IF_ID, LiveJob, runtime_hint, what_if
        from quota_constructs.runtime.forecasting import max_runtime_in

        sent, problems = self.prepare(submission)
        refused = [p for p in problems if not _demand_problem(p)]
        raise_if(refused, context=f"job {submission.job_name}")
        payload = sent.payload_dict
        job = LiveJob(
            job_id=WHAT_IF_ID,
            job_name=str(sent.job_name),
            share=sent.share,
            demand=capacity_demand(payload),
            priority=sent.priority or 0,
            max_runtime_s=max_runtime_in(payload),
            hint_s=runtime_hint(sent.tags, strict=True),
            preemption_retries=sent.preemption_retries,
            retry_attempts=sent.retry_attempts,
        )
        return what_if(self._read_state(options), job, **_run_options(options))

    def _read_state(
        self, options: ForecastOptions, *, active: Sequence[JobSummary] | None = None
    ) -> QueueState:
        return self.queue_state(
            now_s=options.get("now_s"),
            org=options.get("org"),
            active=active,
            arrivals=options.get("arrivals"),
        )

    # --- read -----------------------------------------------------------------------------

    def list_pages(
        self, status: JobStatus, *, share: str | None = None, page_size: int | None = None
    ) -> Iterator[list[JobSummary]]:
        """Pages of ``ListServiceJobs`` for one status (one API call per page)."""
        params: dict[str, Any] = {"jobQueue": self.queue, "jobStatus": str(status)}
        if share is not None:
            params["filters"] = [{"name": "QUOTA_SHARE_NAME", "values": [share]}]
        if page_size is not None:
            params["PaginationConfig"] = {"PageSize": page_size}
        for page in self.batch.get_paginator("list_service_jobs").paginate(**params):
            yield [JobSummary.from_api(s) for s in page.get("jobSummaryList", [])]

    def list(
        self, *, share: str | None = None, statuses: Sequence[JobStatus] = ACTIVE_STATUSES
    ) -> list[JobSummary]:
        """Jobs of the queue (or one share) in ``statuses`` (default: every active status)."""
        return [
            job
            for status in statuses
            for page in self.list_pages(JobStatus(status), share=share)
            for job in page
        ]

    def describe(self, job: JobRef) -> JobDetails:
        """``DescribeServiceJob``: details with typed preemption history."""
        return JobDetails.from_api(self.batch.describe_service_job(jobId=_job_id(job)))

    def snapshot(self) -> QueueSnapshot:
        """``GetJobQueueSnapshot``: front of the queue and of each share, capacity in use."""
        return QueueSnapshot.from_api(self.batch.get_job_queue_snapshot(jobQueue=self.queue))

    # --- names and ids ----------------------------------------------------------------------

    def share_names(self) -> tuple[str, ...]:
        """The queue's quota shares, in the order ``ListQuotaShares`` gives them (cached)."""
        return tuple(s.name for s in self.spec().shares)

    def check_share(self, share: str) -> QuotaShareSpec:
        """The share called ``share``, read again once if the cache does not know it.

        Raises :class:`ShareNotFound` naming the queue's shares otherwise.
        """
        for spec in (self.spec(), self.refresh()):
            for found in spec.shares:
                if found.name == share:
                    return found
        known = ", ".join(self.share_names()) or "none"
        raise ShareNotFound(f"no quota share {share!r} in job queue {self.queue} (shares: {known})")

    def resolve_job(self, ref: JobRef) -> str:
        """The id of the job ``ref`` names in this queue: its id, its ARN, or its name.

        An id or ARN costs one ``DescribeServiceJob`` call (plus ``DescribeJobQueues`` once per
        client, to check the job's queue). When Batch does not know it (``ClientException``),
        ``ref`` is taken as a job name and looked up with one ``ListServiceJobs`` ``JOB_NAME``
        call per page, keeping active jobs of exactly that name. Raises :class:`JobNotFound`
        when nothing matches, :class:`AmbiguousJobName` listing the matches when several active
        jobs have the name.
        """
        found = self._described(ref)
        return found["jobId"] if found is not None else self._job_named(_job_id(ref)).job_id

    def resolve_jobs(self, refs: Iterable[JobRef]) -> Sequence[str]:
        """:meth:`resolve_job` for each ref, in order; every unknown or ambiguous ref is named
        in the one error raised (:class:`JobNotFound` if any is unknown)."""
        ids: list[str] = []
        unknown: list[str] = []
        ambiguous: list[AmbiguousJobName] = []
        for ref in refs:
            try:
                ids.append(self.resolve_job(ref))
            except JobNotFound as error:
                unknown.append(str(error))
            except AmbiguousJobName as error:
                ambiguous.append(error)
        if unknown:
            raise JobNotFound("; ".join(unknown + [str(e) for e in ambiguous]))
        if len(ambiguous) == 1:
            raise ambiguous[0]
        if ambiguous:
            raise AmbiguousJobName(
                ambiguous[0].name, [j for e in ambiguous for j in e.matches]
            ) from ambiguous[0]
        return ids

    def find_job(self, ref: JobRef) -> JobDetails:
        """:meth:`describe` of the job ``ref`` names (id, ARN or name, as :meth:`resolve_job`)."""
        found = self._described(ref)
        if found is not None:
            return JobDetails.from_api(found)
        return self.describe(self._job_named(_job_id(ref)).job_id)

    def _described(self, ref: JobRef) -> dict[str, Any] | None:
        """``DescribeServiceJob`` of ``ref`` if it is an id or ARN of a job of this queue;
        ``None`` when Batch does not know it; :class:`JobNotFound` when another queue has it."""
        text = _job_id(ref)
        job_id = job_id_from_arn(text) if text.startswith("arn:") else text
        try:
            found = dict(self.batch.describe_service_job(jobId=job_id))
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != "ClientException":
                raise
            return None
        detail = self.queue_detail()
        queue = found.get("jobQueue")
        if queue not in (None, detail.get("jobQueueArn"), detail.get("jobQueueName")):
            raise JobNotFound(f"job {job_id} is in job queue {queue}, not in {self.queue}")
        return found

    def _job_named(self, name: str) -> JobSummary:
        """The one active job called ``name`` (one ``ListServiceJobs`` call per page)."""
        params = {"jobQueue": self.queue, "filters": [{"name": "JOB_NAME", "values": [name]}]}
        named = [
            JobSummary.from_api(s)
            for page in self.batch.get_paginator("list_service_jobs").paginate(**params)
            for s in page.get("jobSummaryList", [])
            if s.get("jobName") == name
        ]
        active = [j for j in named if j.status.is_active]
        if len(active) > 1:
            raise AmbiguousJobName(name, active)
        if active:
            return active[0]
        finished = ", ".join(f"{j.job_id} ({j.status.value})" for j in named[:MAX_LISTED_MATCHES])
        raise JobNotFound(
            f"no job with id {name!r} and no active job named {name!r} in job queue {self.queue}"
            + (f"; finished jobs of that name: {finished} (pass the id)" if finished else "")
        )

    def wait(
        self,
        jobs: Iterable[JobRef],
        *,
        until: WaitTarget = Until.TERMINAL,
        timeout: float | None = None,
        backoff: Backoff | None = None,
        on_transition: Callable[[Transition], None] | None = None,
    ) -> WaitResult:
        """Wait until every job meets ``until`` or is finished; see :class:`Waiter`.

        Raises :class:`WaitTimeout` listing the jobs not there after ``timeout`` seconds.
        """
        refs = list(jobs)
        shares = {j.share for j in refs if isinstance(j, JobHandle)}
        share = (
            shares.pop()
            if len(shares) == 1 and len(refs) == sum(isinstance(j, JobHandle) for j in refs)
            else None
        )
        waiter = Waiter(
            reader=self,
            clock=self.clock,
            job_ids=[_job_id(j) for j in refs],
            until=until,
            share=share,
            backoff=backoff or self.backoff,
            on_transition=on_transition,
            earlier_statuses=self._earlier_statuses,
        )
        try:
            return waiter.run(timeout=timeout)
        finally:
            for job in waiter.tracked.values():
                if job.status is not None:
                    self._earlier_statuses[job.job_id] = job.status


def resolve_job_in_any_queue(
    ref: str,
    *,
    session: boto3.Session | None = None,
    region: str | None = None,
    endpoint_url: str | None = None,
) -> str:
    """The id of the job ``ref`` names in any SageMaker training job queue the caller sees.

    A service-job ARN gives its id (no call); anything else is first taken as a job name: one
    ``DescribeJobQueues`` call per page, then :meth:`QueueClient.resolve_job`'s name lookup in
    each queue. When no active job has that name, ``ref`` is returned as it is (an id, for the
    caller to look up). Raises :class:`AmbiguousJobName` when several active jobs have it.
    """
    if ref.startswith("arn:"):
        return job_id_from_arn(ref)
    base = QueueClient("-", session=session, region=region, endpoint_url=endpoint_url)
    queues = [
        q["jobQueueName"]
        for page in base.batch.get_paginator("describe_job_queues").paginate()
        for q in page.get("jobQueues", [])
        if q.get("jobQueueType", "SAGEMAKER_TRAINING") == "SAGEMAKER_TRAINING"
    ]
    found: list[JobSummary] = []
    for queue in queues:
        client = QueueClient(queue, session=base.session, region=region, endpoint_url=endpoint_url)
        try:
            found.append(client._job_named(ref))
        except JobNotFound:
            continue
        except AmbiguousJobName as error:
            found += error.matches
    if len(found) > 1:
        raise AmbiguousJobName(ref, found)
    return found[0].job_id if found else ref


def _job_id(job: JobRef) -> str:
    return job.job_id if isinstance(job, JobHandle) else job


def _retry_attempts(error: ClientError) -> int:
    """How many times botocore retried the call before this error (0: its first request)."""
    return int(error.response.get("ResponseMetadata", {}).get("RetryAttempts", 0) or 0)


def _maybe_not_listed_yet(error: ClientError | BotoCoreError, sent_before: bool) -> bool:
    """A refusal with no job found, after an earlier request of the call carried the token: the
    job that request made may not be listed yet, so the refusal is worth another round."""
    if not isinstance(error, ClientError):
        return False
    return sent_before or _retry_attempts(error) > 0


def _same_request(job: JobDetails, request: Mapping[str, Any]) -> bool:
    """Whether ``job`` was made by ``request``: the same payload (as JSON) and tags."""
    if job.payload is None:
        return False
    try:
        payload = json.loads(job.payload)
    except ValueError:
        return False
    sent = json.loads(request["serviceRequestPayload"])
    return bool(payload == sent and dict(job.tags) == dict(request.get("tags") or {}))


def _outcome_name(submission: JobSubmission, index: int) -> str:
    name = submission.job_name
    return name if isinstance(name, str) else f"submissions[{index}]"


def _not_a_submission(item: Any, index: int) -> QuotaConfigError:
    return QuotaConfigError(
        [
            Problem(
                f"submissions[{index}]",
                item,
                f"not a JobSubmission but {type(item).__name__}",
                "pass JobSubmission(job_name, share, payload, ...) objects",
            )
        ]
    )


def _explicit_profile(session: boto3.Session) -> str | None:
    """The session's profile when it names one from the config files, else ``None``."""
    name = session.profile_name
    return name if name in session.available_profiles else None


def _ssm_problem(organisation: str, error: ClientError, what: str, fix: str) -> QuotaConfigError:
    message = f"cannot read {what} ({error_text(error)})"
    return QuotaConfigError([Problem("organisation", organisation, message, fix)])


def _describe_problem(share: str, error: ClientError) -> Problem:
    return Problem(
        "quotaShareName",
        share,
        f"cannot read the quota share's tags with DescribeQuotaShare ({error_text(error)}), so "
        "its team tag is unknown",
        "allow batch:DescribeQuotaShare on the share (a team's role has it), or retry",
    )


def _demand_problem(problem: Problem) -> bool:
    """A pre-submit problem about the job's instances: a what-if answers it with ``never``."""
    return problem.path.startswith("serviceRequestPayload.ResourceConfig.Instance")


def _instances(submission: JobSubmission) -> int:
    """Instances of its own type ``submission`` needs (1 for a payload too broken to count:
    its problems stop it before it is sent)."""
    try:
        demand = capacity_demand(submission.payload_dict)
    except QuotaConfigError:
        return 1
    return demand.get(submission.instance_type or "", 1)


def _run_options(options: ForecastOptions) -> dict[str, Any]:
    """The forecast engine's keywords of ``options`` (those not about reading the queue), with
    the default calibration unless ``options`` name one (or ``None``)."""
    from quota_constructs.forecast import default_calibration

    run = {key: value for key, value in options.items() if key not in _READ_OPTIONS}
    return {"calibration": default_calibration(), **run}
