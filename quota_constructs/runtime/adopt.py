"""Owns reading a live quota-managed queue back into the model: import, drift, job history.

Describe and list calls only, through a :class:`QueueClient` (its retry settings, botocore's
paginators). :func:`read_organisation` turns the queue, its scheduling policy, service
environment and quota shares into a model :class:`Organisation` plus the identifiers
CloudFormation resource import asks for; :func:`organisation_drift` compares two
organisations field by field; :func:`read_job_history` returns every job created since a time
as a plain :class:`JobRecord` (the advisor builds workloads from those, without boto3).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from quota_constructs.api_shapes import (
    CAPACITY_LIMITS,
    capacity_limits_from_api,
    capacity_usage_from_api,
    ignored_borrow_limit,
    share_drift_fields,
    share_from_api,
    time_limits_from_api,
)
from quota_constructs.contracts import TEAM_TAG_KEY
from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    Problem,
    QuotaConfigError,
)
from quota_constructs.runtime.queue import QueueClient

AWS_TAG_PREFIX = "aws:"
"""Tags AWS itself sets (``aws:cloudformation:*``): never part of an organisation file."""
ORGANISATION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,63}$")
QUEUE_SUFFIX = "-queue"
JOB_QUEUE_TYPE = "AWS::Batch::JobQueue"


class QueueNotFound(QuotaConfigError):
    """The job queue (or the organisation's SSM parameter naming it) does not exist."""


# --- resolving a queue ---------------------------------------------------------------------------


def queue_client(queue: str, **kwargs: Any) -> QueueClient:
    """The client of ``queue``: an ARN, an organisation name (SSM), or a job queue name.

    A name is looked up as an organisation first (``/quota/<name>/job-queue/arn``); when that
    parameter does not exist the name is taken as a job queue name. ``kwargs`` are
    :class:`QueueClient`'s.
    """
    if queue.startswith("arn:"):
        return QueueClient(queue, **kwargs)
    try:
        return QueueClient.for_organisation(queue, **kwargs)
    except QuotaConfigError as error:
        if _parameter_missing(error):
            return QueueClient(queue, **kwargs)
        raise


def organisation_client(organisation: str, **kwargs: Any) -> QueueClient:
    """The client of a deployed organisation's queue; :class:`QueueNotFound` when not deployed."""
    try:
        return QueueClient.for_organisation(organisation, **kwargs)
    except QuotaConfigError as error:
        if _parameter_missing(error):
            raise QueueNotFound(error.problems) from error
        raise


def _parameter_missing(error: QuotaConfigError) -> bool:
    cause = error.__cause__
    return (
        isinstance(cause, ClientError)
        and cause.response.get("Error", {}).get("Code") == "ParameterNotFound"
    )


def queue_detail(client: QueueClient) -> dict[str, Any]:
    """``DescribeJobQueues`` of the client's queue; :class:`QueueNotFound` when there is none."""
    try:
        return client.queue_detail()
    except QuotaConfigError as error:
        raise QueueNotFound(error.problems) from error


# --- import --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceIdentifier:
    """One resource to adopt: its CloudFormation type, primary identifier and construct."""

    resource_type: str
    identifier_name: str
    """The primaryIdentifier property that ``cdk import`` asks for (resource provider schema)."""
    identifier: str
    construct_path: str
    """Path of the construct in the organisation stack (``Quota-<org>/...``)."""


@dataclass(frozen=True)
class ImportedQueue:
    """A live queue read back: the organisation, identifiers to import, what the file loses."""

    organisation: Organisation
    resources: tuple[ResourceIdentifier, ...]
    notes: tuple[str, ...] = ()
    """What the file cannot express or what a deploy of it would change, one sentence each."""

    @property
    def job_queue_arn(self) -> str:
        return next(r.identifier for r in self.resources if r.resource_type == JOB_QUEUE_TYPE)


def organisation_name_for(queue_name: str) -> str:
    """A valid organisation name from a queue name: ``research-queue`` -> ``research``."""
    base = queue_name.removesuffix(QUEUE_SUFFIX) or queue_name
    name = re.sub(r"[^A-Za-z0-9-]+", "-", base).strip("-")
    if not name or not name[0].isalpha():
        name = f"q-{name}".rstrip("-")
    return name[:64].rstrip("-")


def read_organisation(client: QueueClient, name: str | None = None) -> ImportedQueue:
    """Read the client's queue into an :class:`Organisation` (named ``name`` or after the queue).

    Reads DescribeJobQueues, DescribeSchedulingPolicies, DescribeServiceEnvironments,
    ListQuotaShares (paginated) and DescribeQuotaShare per share (for its tags).
    Raises :class:`QueueNotFound`, :class:`QuotaConfigError` for an invalid organisation name
    or shares that break the model's rules, and botocore errors from the calls.
    """
    detail = queue_detail(client)
    org_name = name or organisation_name_for(str(detail["jobQueueName"]))
    if not ORGANISATION_NAME.match(org_name):
        raise QuotaConfigError(
            [
                Problem(
                    "--name",
                    org_name,
                    "not an organisation name (letters, digits, '-', starting with a letter, "
                    "at most 64)",
                    "pass --name with e.g. research",
                )
            ]
        )
    shares = _described_shares(client, str(detail["jobQueueArn"]))
    notes: list[str] = []
    tags = _organisation_tags(detail, shares, notes)
    queue = JobQueueSpec(
        shares=tuple(share_from_api(s) for s in shares),
        priority=int(detail.get("priority", 1)),
        runnable_timeout_minutes=_runnable_timeout(detail.get("jobStateTimeLimitActions"), notes),
    )
    org = Organisation(name=org_name, tags=tags, queue=queue)
    notes += _queue_notes(detail, shares)
    notes += _environment_notes(client, detail, queue)
    policy_arn = str(detail.get("schedulingPolicyArn") or "")
    notes += _policy_notes(client, policy_arn)
    raise_problems(org)
    return ImportedQueue(org, _identifiers(org_name, detail, shares), tuple(notes))


def raise_problems(org: Organisation) -> None:
    """:class:`QuotaConfigError` with every rule the live queue breaks (the file would too)."""
    problems = org.problems()
    if problems:
        raise QuotaConfigError(problems, context=f"live queue read as organisation {org.name}")


def _described_shares(client: QueueClient, queue_arn: str) -> list[dict[str, Any]]:
    """Every share of the queue (ListQuotaShares pages), each as DescribeQuotaShare has it."""
    pages = client.batch.get_paginator("list_quota_shares").paginate(jobQueue=queue_arn)
    listed = [s for page in pages for s in page.get("quotaShares", [])]
    return [
        dict(client.batch.describe_quota_share(quotaShareArn=s["quotaShareArn"])) for s in listed
    ]


def _user_tags(tags: Mapping[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in (tags or {}).items() if not k.startswith(AWS_TAG_PREFIX)}


def _organisation_tags(
    queue: Mapping[str, Any], shares: Sequence[Mapping[str, Any]], notes: list[str]
) -> dict[str, str]:
    """The job queue's tags (the file's ``tags`` go on every resource); notes per share."""
    tags = _user_tags(queue.get("tags"))
    for share in shares:
        name = share["quotaShareName"]
        own = _user_tags(share.get("tags"))
        team = own.pop(TEAM_TAG_KEY, None)
        if team is not None:
            notes.append(
                f"quota share {name} carries the team tag {TEAM_TAG_KEY}={team}: add an "
                "'access' block (principals) for it, or a deploy removes the tag"
            )
        extra = {k: v for k, v in own.items() if tags.get(k) != v}
        missing = sorted(k for k in tags if k not in own)
        if extra:
            text = ", ".join(f"{k}={v}" for k, v in sorted(extra.items()))
            notes.append(
                f"quota share {name} has tags the file cannot express per share ({text}); "
                "a deploy replaces them with the organisation's tags"
            )
        if missing:
            notes.append(
                f"quota share {name} lacks the queue's tags {', '.join(missing)}; "
                "a deploy adds them"
            )
    return tags


def _runnable_timeout(actions: Iterable[Mapping[str, Any]] | None, notes: list[str]) -> int | None:
    """``runnable_timeout_minutes`` from ``jobStateTimeLimitActions`` (the shortest limit)."""
    limits = time_limits_from_api(actions)
    if not limits:
        return None
    seconds = min(limits.values())
    minutes = max(1, round(seconds / 60))
    if len(set(limits.values())) > 1 or seconds != minutes * 60:
        detail = ", ".join(f"{r}: {s:g} s" for r, s in sorted(limits.items()))
        notes.append(
            f"jobStateTimeLimitActions ({detail}) become one limit of {minutes} minute(s) for "
            "every MISCONFIGURATION reason (the file has one runnable_timeout_minutes)"
        )
    return minutes


def _queue_notes(queue: Mapping[str, Any], shares: Sequence[Mapping[str, Any]]) -> list[str]:
    notes = []
    if queue.get("state") == "DISABLED":
        notes.append("the job queue is DISABLED; the stack deploys it ENABLED")
    for share in shares:
        if (ignored := ignored_borrow_limit(share)) is not None:
            limit, strategy = ignored
            notes.append(
                f"quota share {share['quotaShareName']} has borrowLimit {limit} with {strategy}; "
                "the file drops it (borrow limits apply only to LEND_AND_BORROW)"
            )
    return notes


def _environment_notes(
    client: QueueClient, queue: Mapping[str, Any], spec: JobQueueSpec
) -> list[str]:
    """Differences between the live service environment and the one the stack would size."""
    order = queue.get("serviceEnvironmentOrder") or []
    if not order:
        return ["the job queue has no service environment; the stack creates one"]
    arn = str(order[0]["serviceEnvironment"])
    found = client.batch.describe_service_environments(serviceEnvironments=[arn]).get(
        "serviceEnvironments", []
    )
    if not found:
        return [f"service environment {arn} not found"]
    live = capacity_limits_from_api(found[0].get(CAPACITY_LIMITS))
    sized = spec.service_environment_capacity()
    if live == sized:
        return []
    return [
        f"service environment capacity is {_capacity(live)}; the stack sizes it from the "
        f"shares to {_capacity(sized)}"
    ]


def _policy_notes(client: QueueClient, arn: str) -> list[str]:
    if not arn:
        return ["the job queue has no scheduling policy; the stack creates a quotaSharePolicy"]
    found = client.batch.describe_scheduling_policies(arns=[arn]).get("schedulingPolicies", [])
    policy = (found[0] if found else {}).get("quotaSharePolicy")
    if not policy:
        return [f"scheduling policy {arn} has no quotaSharePolicy; the queue is not quota-managed"]
    strategy = policy.get("idleResourceAssignmentStrategy", "FIFO")
    return [] if strategy == "FIFO" else [f"idleResourceAssignmentStrategy {strategy} becomes FIFO"]


def _capacity(capacity: Mapping[str, int]) -> str:
    return ", ".join(f"{n} x {t}" for t, n in capacity.items()) or "nothing"


def _identifiers(
    org: str, queue: Mapping[str, Any], shares: Sequence[Mapping[str, Any]]
) -> tuple[ResourceIdentifier, ...]:
    """The primary identifier of each resource, as ``cdk import`` asks for it."""
    root = f"Quota-{org}/TrainingQueue"
    found = [
        ResourceIdentifier(
            "AWS::Batch::SchedulingPolicy",
            "Arn",
            str(queue.get("schedulingPolicyArn") or ""),
            f"{root}/SchedulingPolicy/Resource",
        ),
        *(
            ResourceIdentifier(
                "AWS::Batch::ServiceEnvironment",
                "ServiceEnvironmentArn",
                str(entry["serviceEnvironment"]),
                f"{root}/ServiceEnvironment/Resource",
            )
            for entry in (queue.get("serviceEnvironmentOrder") or [])[:1]
        ),
        ResourceIdentifier(
            JOB_QUEUE_TYPE,
            "JobQueueArn",
            str(queue["jobQueueArn"]),
            f"{root}/JobQueue/Resource",
        ),
    ]
    found += [
        ResourceIdentifier(
            "AWS::Batch::QuotaShare",
            "QuotaShareArn",
            str(s["quotaShareArn"]),
            f"{root}/JobQueue/{s['quotaShareName']}/Resource",
        )
        for s in shares
    ]
    return tuple(found)


# --- drift ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldDrift:
    """One field that differs: the share (``None``: the queue), AWS's field name, both values."""

    share: str | None
    field: str
    file: Any
    queue: Any


@dataclass(frozen=True)
class OrganisationDrift:
    """Every difference between a file and the live queue."""

    fields: tuple[FieldDrift, ...] = ()
    only_in_file: tuple[str, ...] = ()
    only_in_queue: tuple[str, ...] = ()

    @property
    def drifted(self) -> bool:
        return bool(self.fields or self.only_in_file or self.only_in_queue)


def organisation_drift(file: Organisation, live: Organisation) -> OrganisationDrift:
    """``file`` against ``live``: queue fields, each common share's fields, unmatched shares.

    Compared: job queue ``priority``, ``runnableTimeoutMinutes`` and ``tags``; per share
    ``capacityLimits``, ``strategy``, ``borrowLimit`` (unset with LEND_AND_BORROW is -1),
    ``inSharePreemption`` and ``state``. Descriptions, team access and notifications live only in
    the file.
    """
    fields = [
        FieldDrift(None, name, a, b)
        for name, a, b in (
            ("priority", file.queue.priority, live.queue.priority),
            (
                "runnableTimeoutMinutes",
                file.queue.runnable_timeout_minutes,
                live.queue.runnable_timeout_minutes,
            ),
            ("tags", dict(file.tags), dict(live.tags)),
        )
        if a != b
    ]
    live_shares = {s.name: s for s in live.queue.shares}
    file_names = [s.name for s in file.queue.shares]
    for share in file.queue.shares:
        other = live_shares.get(share.name)
        if other is None:
            continue
        mine, theirs = share_drift_fields(share), share_drift_fields(other)
        fields += [
            FieldDrift(share.name, k, v, theirs[k]) for k, v in mine.items() if v != theirs[k]
        ]
    return OrganisationDrift(
        fields=tuple(fields),
        only_in_file=tuple(n for n in file_names if n not in live_shares),
        only_in_queue=tuple(n for n in live_shares if n not in file_names),
    )


# --- job history ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRecord:
    """One job of the queue's history, as plain data (times in epoch seconds).

    ``first_dispatch_s``: when it first held capacity (``scheduledAt`` for a job placed once;
    for a job placed again after a preemption or retry, its first attempt's ``startedAt``).
    ``run_started_s`` / ``run_stopped_s``: its last attempt's RUNNING period (stopped ``None``
    while it runs). ``instance_type`` / ``instance_count`` come from ``serviceRequestPayload``
    ``ResourceConfig`` (``capacityUsage`` when the payload has none); ``None`` when the job
    asks for several instance types.
    """

    job_id: str
    job_name: str
    share: str
    status: str
    created_s: float
    first_dispatch_s: float | None
    run_started_s: float | None
    run_stopped_s: float | None
    instance_type: str | None
    instance_count: int | None
    priority: int
    is_terminated: bool
    preemptions: int
    attempts: int
    status_reason: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)
    attempt_spans: tuple[AttemptSpan, ...] = ()
    """Every attempt that held instances, the one running now last (what the bill counts)."""


@dataclass(frozen=True)
class AttemptSpan:
    """One attempt: started, stopped (``None`` while it runs), and whether it was preempted."""

    started_s: float
    stopped_s: float | None
    preempted: bool


def _resource(attempt: Mapping[str, Any]) -> str:
    return str((attempt.get("serviceResourceId") or {}).get("value", ""))


def attempt_spans(detail: Mapping[str, Any], running: bool) -> tuple[AttemptSpan, ...]:
    """The attempts of a ``DescribeServiceJob`` answer that started, as :class:`AttemptSpan`.

    An attempt is preempted when ``preemptionSummary.recentPreemptedAttempts`` lists its
    resource or its ``statusReason`` names a preemption; the running attempt (not yet in
    ``attempts``) starts at the job's ``startedAt``.
    """
    recent = (detail.get("preemptionSummary") or {}).get("recentPreemptedAttempts") or []
    preempted_ids = {_resource(a) for a in recent} - {""}
    spans = [
        AttemptSpan(
            started_s=float(a["startedAt"]) / 1000.0,
            stopped_s=_seconds(a.get("stoppedAt")),
            preempted=_resource(a) in preempted_ids
            or "preempt" in str(a.get("statusReason") or "").lower(),
        )
        for a in detail.get("attempts") or []
        if a.get("startedAt") is not None
    ]
    started = _seconds(detail.get("startedAt"))
    if running and started is not None and all(s.started_s != started for s in spans):
        spans.append(AttemptSpan(started, None, False))
    return tuple(spans)


def _seconds(value: Any) -> float | None:
    return None if value is None else float(value) / 1000.0


def requested_capacity(payload: str | None, usage: Mapping[str, int]) -> tuple[str | None, int]:
    """Instance type and count a job asked for: its payload's ``ResourceConfig``, else usage.

    ``(None, 0)`` when it cannot be told (no payload and no usage, or several instance types).
    """
    try:
        config = (json.loads(payload or "{}") or {}).get("ResourceConfig") or {}
    except (ValueError, AttributeError):
        config = {}
    if isinstance(config, dict) and config.get("InstanceType"):
        return str(config["InstanceType"]), int(config.get("InstanceCount", 1))
    if len(usage) == 1:
        (itype, count), *_ = usage.items()
        return itype, count
    return None, 0


def job_record(detail: Mapping[str, Any]) -> JobRecord:
    """A ``DescribeServiceJob`` answer as a :class:`JobRecord`."""
    attempts = detail.get("attempts") or []
    last = attempts[-1] if attempts else {}
    scheduled = _seconds(detail.get("scheduledAt"))
    first_started = _seconds(attempts[0].get("startedAt")) if attempts else None
    ended = detail.get("status") in ("SUCCEEDED", "FAILED")
    placed_again = len(attempts) > 1 or (len(attempts) == 1 and not ended)
    first = first_started if placed_again and first_started is not None else scheduled
    running = detail.get("status") in ("SCHEDULED", "STARTING", "RUNNING")
    usage = capacity_usage_from_api(detail.get("capacityUsage"))
    itype, count = requested_capacity(detail.get("serviceRequestPayload"), usage)
    return JobRecord(
        job_id=str(detail["jobId"]),
        job_name=str(detail.get("jobName", "")),
        share=str(detail.get("quotaShareName") or ""),
        status=str(detail.get("status", "")),
        created_s=float(detail.get("createdAt", 0)) / 1000.0,
        first_dispatch_s=first,
        run_started_s=_seconds(detail.get("startedAt") if running else last.get("startedAt")),
        run_stopped_s=None if running else _seconds(last.get("stoppedAt")),
        instance_type=itype,
        instance_count=count or None,
        priority=int(detail.get("schedulingPriority") or 0),
        is_terminated=bool(detail.get("isTerminated")),
        preemptions=int((detail.get("preemptionSummary") or {}).get("preemptedAttemptCount", 0)),
        attempts=len(attempts) + (1 if running else 0),
        status_reason=str(detail.get("statusReason") or ""),
        tags=dict(detail.get("tags") or {}),
        attempt_spans=attempt_spans(detail, running),
    )


@dataclass(frozen=True)
class JobHistory:
    """Jobs created in ``[since_s, now_s]``, oldest first."""

    jobs: tuple[JobRecord, ...]
    since_s: float
    now_s: float


def read_job_history(
    client: QueueClient, since_s: float, *, now_s: float | None = None
) -> JobHistory:
    """Every job of the queue created after ``since_s`` (epoch seconds), described one by one.

    ListServiceJobs with the ``AFTER_CREATED_AT`` filter (jobs of every status, paginated), then
    DescribeServiceJob per job for its payload, attempts, priority and preemptions. ``now_s``
    (default: the later of this machine's clock and the newest time in the history) is when
    run times of jobs still running are measured.
    """
    params = {
        "jobQueue": client.queue,
        "filters": [{"name": "AFTER_CREATED_AT", "values": [str(int(since_s * 1000))]}],
    }
    pages = client.batch.get_paginator("list_service_jobs").paginate(**params)
    newest_first = [s["jobId"] for page in pages for s in page.get("jobSummaryList", [])]
    ids = list(dict.fromkeys(reversed(newest_first)))  # oldest first, ties in listed order
    records = [job_record(client.batch.describe_service_job(jobId=job_id)) for job_id in ids]
    records.sort(key=lambda r: r.created_s)
    stamps = [t for r in records for t in (r.created_s, r.run_started_s, r.run_stopped_s) if t]
    now = now_s if now_s is not None else max([time.time(), *stamps])
    return JobHistory(tuple(records), since_s, now)
