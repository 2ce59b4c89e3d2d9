"""Service-job operations of the emulator on top of the scheduler core.

One :class:`~quota_constructs.scheduling.Scheduler` per quota-managed job queue, created with
the queue and kept in step with its quota shares, service environment and RUNNABLE time-limit
actions. This module only translates: request parameters to core calls (``submit``,
``update_priority``, ``terminate``, ``snapshot``) and core jobs to the API's output shapes
(timestamps in epoch milliseconds, as Batch's ``Long`` fields are). Scheduling rules live in
the core, quota rules in the model; the core's :class:`SubmitRejected` messages (unknown or
DISABLED share, missing ``quotaShareName``, priority out of range) reach the client as
``ClientException``.

Choices where AWS is UNCONFIRMED, documented in ``docs/emulator.md``: a repeated ``clientToken``
with the same request returns the first job (idempotent retry), with a different request it is
refused; ``capacityUsage`` reports the job's demand whatever its state; a RUNNABLE job without
an AWS ``statusReason`` gets the core's typed pending reason (``explain_pending``); the
preemption summary keeps the last 5 preempted attempts.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from quota_constructs.local.arns import Account
from quota_constructs.local.backend import JobQueue, QueueListener, QuotaShare, Registry, paginate
from quota_constructs.local.clock import Clock
from quota_constructs.local.protocol import client_error
from quota_constructs.local.submit_request import request_from_submit
from quota_constructs.model import MAX_PAYLOAD_BYTES
from quota_constructs.scheduling import (
    Job,
    JobStatus,
    Scheduler,
    SchedulerOptions,
    SchedulerSnapshot,
    attempt_id,
)

STATUS_IGNORING_FILTERS = ("JOB_NAME", "BEFORE_CREATED_AT", "AFTER_CREATED_AT")
MAX_TERMINATE_BATCH = 50
RECENT_PREEMPTED_ATTEMPTS = 5


class JobService(QueueListener):
    """Service jobs of every queue: submit, update, describe, list, terminate, snapshot."""

    def __init__(
        self,
        account: Account,
        clock: Clock,
        *,
        options: SchedulerOptions | None = None,
        explain_pending: bool = True,
        seed: int = 0,
    ) -> None:
        self.account = account
        self.seed = seed
        self.clock = clock
        self.options = options or SchedulerOptions()
        self.explain_pending = explain_pending
        self.registry: Registry | None = None
        self.schedulers: dict[str, Scheduler] = {}
        self.job_queue: dict[str, str] = {}
        self.submitted: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, tuple[str, dict[str, Any]]] = {}

    # --- scheduler lifecycle (registry listener) ---------------------------------------------

    def _options(self, queue: JobQueue) -> SchedulerOptions:
        limits = {a["reason"]: float(a["maxTimeSeconds"]) for a in queue.time_limit_actions}
        return replace(self.options, runnable_time_limits=limits)

    def _scheduler(self, queue: JobQueue) -> Scheduler:
        scheduler = self.schedulers.get(queue.name)
        if scheduler is None:
            assert self.registry is not None
            env = self.registry.environment(queue.service_environment_arn)
            scheduler = Scheduler(
                queue_name=queue.name,
                shares=[s.spec for s in queue.shares.values()],
                service_environment=env.capacity,
                options=self._options(queue),
                start_time=self.clock.now(),
            )
            self.schedulers[queue.name] = scheduler
        return scheduler

    def queue_created(self, queue: JobQueue) -> None:
        self._scheduler(queue)

    def queue_changed(self, queue: JobQueue) -> None:
        self._scheduler(queue).options = self._options(queue)

    def share_changed(self, queue: JobQueue, share: QuotaShare) -> None:
        self._scheduler(queue).upsert_share(share.spec, now=self.clock.now())

    def share_deleted(self, queue: JobQueue, share: QuotaShare) -> None:
        self._scheduler(queue).remove_share(share.spec.name, now=self.clock.now())

    def capacity_changed(self, queue: JobQueue, capacity: Mapping[str, int]) -> None:
        self._scheduler(queue).set_service_environment(capacity, now=self.clock.now())

    def queue_deleted(self, queue: JobQueue) -> None:
        scheduler = self.schedulers.pop(queue.name, None)
        for job in scheduler.jobs if scheduler else ():
            self.job_queue.pop(job.job_id, None)
            self.submitted.pop(job.job_id, None)
            if self.registry is not None:
                self.registry.tags.pop(self.account.service_job(job.job_id), None)

    def advance(self, now: float) -> None:
        """Advance every queue's scheduler to ``now``."""
        for scheduler in self.schedulers.values():
            scheduler.advance(now)

    # --- helpers -----------------------------------------------------------------------------

    def _ms(self, t: float | None) -> int | None:
        return None if t is None else round(self.clock.epoch(t) * 1000)

    def _new_job_id(self) -> str:
        """A UUID-format job id, a function of the seed and the number of jobs submitted."""
        digest = hashlib.sha256(f"{self.seed}/{len(self.job_queue)}".encode()).digest()
        return str(uuid.UUID(bytes=digest[:16], version=4))

    def _find(self, job_id: str) -> tuple[Scheduler, Job]:
        queue_name = self.job_queue.get(job_id)
        if queue_name is None or queue_name not in self.schedulers:
            raise client_error(
                f"jobId: no service job {job_id!r}; use a jobId returned by SubmitServiceJob"
            )
        scheduler = self.schedulers[queue_name]
        return scheduler, scheduler.job(job_id)

    # --- operations --------------------------------------------------------------------------

    def submit_service_job(self, params: Mapping[str, Any]) -> dict[str, Any]:
        token = params.get("clientToken")
        fingerprint = json.dumps(
            {k: v for k, v in params.items() if k != "clientToken"}, sort_keys=True
        )
        if token is not None and token in self.tokens:
            seen, response = self.tokens[token]
            if seen != fingerprint:
                raise client_error(
                    f"clientToken {token!r} was already used for a different SubmitServiceJob "
                    "request; use a new token for a new job"
                )
            return response
        assert self.registry is not None
        queue = self.registry.queue(params["jobQueue"])
        self._check_submit(queue, params)
        request = replace(request_from_submit(params), job_id=self._new_job_id())
        job = self._scheduler(queue).submit(request, now=self.clock.now())
        self.job_queue[job.job_id] = queue.name
        self.submitted[job.job_id] = {**params, "jobQueue": queue.arn}
        response = self._ids(job)
        self.registry.tags[response["jobArn"]] = dict(params.get("tags") or {})
        if token is not None:
            self.tokens[token] = (fingerprint, response)
        return response

    def _check_submit(self, queue: JobQueue, params: Mapping[str, Any]) -> None:
        """Queue-level refusals; share, priority and payload rules are the core's."""
        assert self.registry is not None
        if queue.state != "ENABLED":
            raise client_error(
                f"jobQueue: job queue {queue.name!r} is DISABLED and accepts no new jobs; "
                "enable it with UpdateJobQueue state=ENABLED"
            )
        env = self.registry.environment(queue.service_environment_arn)
        if env.state != "ENABLED":
            raise client_error(
                f"jobQueue: service environment {env.name!r} of job queue {queue.name!r} is "
                "DISABLED, so the queue accepts no new jobs; enable it with "
                "UpdateServiceEnvironment state=ENABLED"
            )
        if params.get("shareIdentifier"):
            raise client_error(
                f"shareIdentifier: job queue {queue.name!r} uses quota shares, not fair share; "
                "pass quotaShareName instead of shareIdentifier"
            )
        size = len(params["serviceRequestPayload"].encode())
        if size > MAX_PAYLOAD_BYTES:
            raise client_error(
                f"serviceRequestPayload: {size} bytes exceeds the {MAX_PAYLOAD_BYTES}-byte "
                "limit; keep hyperparameters small and move large settings to S3"
            )

    def update_service_job(self, params: Mapping[str, Any]) -> dict[str, Any]:
        scheduler, job = self._find(params["jobId"])
        job = scheduler.update_priority(
            job.job_id, params["schedulingPriority"], now=self.clock.now()
        )
        return self._ids(job)

    def terminate_service_job(self, params: Mapping[str, Any]) -> dict[str, Any]:
        scheduler, job = self._find(params["jobId"])
        scheduler.terminate(job.job_id, params["reason"], now=self.clock.now())
        return {}

    def terminate_service_jobs(self, params: Mapping[str, Any]) -> dict[str, Any]:
        job_ids = params["jobs"]
        if len(job_ids) > MAX_TERMINATE_BATCH:
            raise client_error(
                f"jobs: at most {MAX_TERMINATE_BATCH} job ids per call (got {len(job_ids)}); "
                "split the list"
            )
        successful, errors = [], []
        for job_id in job_ids:
            if job_id not in self.job_queue:
                successful.append(job_id)  # AWS counts unknown ids as successful
                continue
            scheduler, _ = self._find(job_id)
            try:
                scheduler.terminate(job_id, params["reason"], now=self.clock.now())
            except ValueError as exc:
                errors.append({"job": job_id, "code": "ClientException", "message": str(exc)})
            else:
                successful.append(job_id)
        return {"successful": successful, "errors": errors}

    def describe_service_job(self, params: Mapping[str, Any]) -> dict[str, Any]:
        _, job = self._find(params["jobId"])
        return self._describe(job)

    def list_service_jobs(self, params: Mapping[str, Any]) -> dict[str, Any]:
        assert self.registry is not None
        queues = (
            [self.registry.queue(params["jobQueue"])]
            if params.get("jobQueue")
            else list(self.registry.queues.values())
        )
        keep = self._job_filter(params)
        jobs = [
            job
            for queue in queues
            if queue.name in self.schedulers
            for job in self.schedulers[queue.name].jobs
            if keep(job)
        ]
        jobs.sort(key=lambda j: (j.created_at, j.seq), reverse=True)
        page, token = paginate(jobs, params.get("maxResults"), params.get("nextToken"))
        return {"jobSummaryList": [self._summary(j) for j in page], "nextToken": token}

    def _job_filter(self, params: Mapping[str, Any]) -> Callable[[Job], bool]:
        filters = {f.get("name"): f.get("values") or [] for f in params.get("filters") or []}
        unknown = set(filters) - {*STATUS_IGNORING_FILTERS, "QUOTA_SHARE_NAME", "SHARE_IDENTIFIER"}
        if unknown:
            raise client_error(
                f"filters: unknown filter name(s) {sorted(unknown)}; use JOB_NAME, "
                "QUOTA_SHARE_NAME, BEFORE_CREATED_AT or AFTER_CREATED_AT"
            )
        status = params.get("jobStatus")
        if any(name in filters for name in STATUS_IGNORING_FILTERS):
            status = None
        elif status is None:
            status = JobStatus.RUNNING.value

        def keep(job: Job) -> bool:
            if status is not None and job.status.value != status:
                return False
            if (
                "QUOTA_SHARE_NAME" in filters
                and job.request.share_name not in filters["QUOTA_SHARE_NAME"]
            ):
                return False
            if "SHARE_IDENTIFIER" in filters:
                return False
            if "JOB_NAME" in filters and not any(
                _name_matches(job.request.job_name, v) for v in filters["JOB_NAME"]
            ):
                return False
            created = self._ms(job.created_at) or 0
            if "BEFORE_CREATED_AT" in filters and not created < int(
                filters["BEFORE_CREATED_AT"][0]
            ):
                return False
            return not (
                "AFTER_CREATED_AT" in filters and not created > int(filters["AFTER_CREATED_AT"][0])
            )

        return keep

    def get_job_queue_snapshot(self, params: Mapping[str, Any]) -> dict[str, Any]:
        assert self.registry is not None
        queue = self.registry.queue(params["jobQueue"])
        return self._snapshot(self._scheduler(queue).snapshot())

    def explain(self, job_id: str) -> dict[str, Any]:
        """Beyond AWS: why a job waits and every preemption, typed (JSON-ready, epoch ms).

        ``pending``: kind, message and position of a RUNNABLE job (``None`` otherwise);
        ``preemptions``: rule, preemptor job and share, the victim share's borrowed capacity
        before and after, and AWS's reason string.
        """
        scheduler, job = self._find(job_id)
        pending = scheduler.pending_reason(job.job_id)
        return {
            "jobId": job.job_id,
            "jobName": job.request.job_name,
            "quotaShareName": job.share_name,
            "status": job.status.value,
            "schedulingPriority": job.priority,
            "borrowed": dict(job.borrowed),
            "pending": None
            if pending is None
            else {
                "kind": pending.kind.value,
                "message": pending.message,
                "position": pending.position,
            },
            "preemptions": [
                {
                    "at": self._ms(p.time),
                    "rule": p.rule.value,
                    "preemptorJobId": p.preemptor_job_id,
                    "preemptorShare": p.preemptor_share,
                    "borrowedBefore": dict(p.borrowed_before),
                    "borrowedAfter": dict(p.borrowed_after),
                    "reason": p.reason,
                    "terminated": p.terminated,
                }
                for p in job.preemptions
            ],
        }

    def operations(self) -> dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]]:
        return {
            "SubmitServiceJob": self.submit_service_job,
            "UpdateServiceJob": self.update_service_job,
            "DescribeServiceJob": self.describe_service_job,
            "ListServiceJobs": self.list_service_jobs,
            "TerminateServiceJob": self.terminate_service_job,
            "TerminateServiceJobs": self.terminate_service_jobs,
            "GetJobQueueSnapshot": self.get_job_queue_snapshot,
        }

    # --- output shapes -----------------------------------------------------------------------

    def _ids(self, job: Job) -> dict[str, Any]:
        return {
            "jobArn": self.account.service_job(job.job_id),
            "jobName": job.request.job_name,
            "jobId": job.job_id,
        }

    def _attempt_resource(self, job: Job, number: int) -> dict[str, str]:
        """``serviceResourceId`` of attempt ``number``: its SageMaker training job ARN."""
        name = f"AWSBatch{job.request.job_name}{attempt_id(job.job_id, number)}"
        return {"name": "TrainingJobArn", "value": self.account.training_job(name)}

    def _latest_attempt(self, job: Job) -> dict[str, Any] | None:
        if job.attempt_count == 0:
            return None
        return {"serviceResourceId": self._attempt_resource(job, job.attempt_count)}

    def _status_reason(self, job: Job) -> str | None:
        if job.status_reason is None and self.explain_pending:
            pending = self._find(job.job_id)[0].pending_reason(job.job_id)
            if pending is not None:
                return f"{pending.kind.value} - {pending.message}"
        return job.status_reason

    def _capacity(self, amounts: Mapping[str, int]) -> list[dict[str, Any]]:
        return [{"capacityUnit": unit, "quantity": n} for unit, n in sorted(amounts.items())]

    def _summary(self, job: Job) -> dict[str, Any]:
        return {
            **self._ids(job),
            "latestAttempt": self._latest_attempt(job),
            "capacityUsage": self._capacity(job.demand),
            "createdAt": self._ms(job.created_at),
            "scheduledAt": self._ms(job.scheduled_at),
            "serviceJobType": "SAGEMAKER_TRAINING",
            "quotaShareName": job.share_name,
            "status": job.status.value,
            "statusReason": self._status_reason(job),
            "startedAt": self._ms(job.started_at),
            "stoppedAt": self._ms(job.stopped_at),
            "isTerminated": True if job.is_terminated else None,
        }

    def _describe(self, job: Job) -> dict[str, Any]:
        params = self.submitted[job.job_id]
        recent = job.preemptions[-RECENT_PREEMPTED_ATTEMPTS:]
        return {
            **self._summary(job),
            "attempts": [
                {
                    "serviceResourceId": self._attempt_resource(job, a.number),
                    "startedAt": self._ms(a.started_at),
                    "stoppedAt": self._ms(a.stopped_at),
                    "statusReason": a.status_reason,
                }
                for a in job.attempts
            ],
            "isTerminated": job.is_terminated,
            "jobQueue": params["jobQueue"],
            "retryStrategy": params.get("retryStrategy"),
            "schedulingPriority": job.priority,
            "serviceRequestPayload": params["serviceRequestPayload"],
            "preemptionConfiguration": params.get("preemptionConfiguration"),
            "preemptionSummary": {
                "preemptedAttemptCount": len(job.preemptions),
                "recentPreemptedAttempts": [
                    {
                        "serviceResourceId": self._attempt_resource(job, p.attempt),
                        "startedAt": self._ms(p.attempt_started_at),
                        "stoppedAt": self._ms(p.completed_at),
                        "statusReason": p.reason,
                    }
                    for p in recent
                ],
            }
            if job.preemptions
            else None,
            "tags": self.registry.tags.get(self.account.service_job(job.job_id), {})
            if self.registry
            else {},
            "timeoutConfig": params.get("timeoutConfig"),
        }

    def _front(self, entries: tuple[Any, ...]) -> list[dict[str, Any]]:
        return [
            {
                "jobArn": self.account.service_job(e.job_id),
                "earliestTimeAtPosition": self._ms(e.earliest_time_at_position),
            }
            for e in entries
        ]

    def _snapshot(self, snapshot: SchedulerSnapshot) -> dict[str, Any]:
        at = self._ms(snapshot.time)
        return {
            "frontOfQueue": {"jobs": self._front(snapshot.front_of_queue), "lastUpdatedAt": at},
            "frontOfQuotaShares": {
                "quotaShares": {
                    name: self._front(entries) for name, entries in snapshot.front_of_shares.items()
                },
                "lastUpdatedAt": at,
            },
            "queueUtilization": {
                "totalCapacityUsage": self._capacity(snapshot.total_usage),
                "quotaShareUtilization": {
                    "topCapacityUtilization": [
                        {"quotaShareName": name, "capacityUsage": self._capacity(usage)}
                        for name, usage in snapshot.share_usage.items()
                        if usage
                    ]
                },
                "lastUpdatedAt": at,
            },
        }


def _name_matches(name: str, pattern: str) -> bool:
    """``JOB_NAME`` filter: exact, or a prefix when the value ends with ``*``."""
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    return name == pattern
