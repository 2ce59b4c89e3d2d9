"""Owns the handlers of Batch's service-job operations and of the emulator's job explanation.

Request parameters in, typed job-service calls, core jobs rendered in the output shapes.
Timestamps are epoch milliseconds, as Batch's ``Long`` fields are; capacity usage goes through
:func:`quota_constructs.api_shapes.capacity_usage_to_api`.

Choices where AWS is UNCONFIRMED, documented in ``docs/emulator.md``: ``capacityUsage``
reports the job's demand whatever its state; a RUNNABLE job without an AWS ``statusReason``
gets the core's typed pending reason only with ``explain_pending``; the preemption summary keeps the
last 5 preempted attempts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from quota_constructs.api_shapes import capacity_usage_to_api, parse_service_job_arn
from quota_constructs.local.handlers import Handler
from quota_constructs.local.handlers.job_filters import JobFilter
from quota_constructs.local.handlers.job_view import (
    attempt_resource,
    attempts,
    epoch_ms,
    is_quota_share,
    preemption_summary,
    share_name,
)
from quota_constructs.local.handlers.pagination import batch_page
from quota_constructs.local.handlers.resources import tags_member
from quota_constructs.local.handlers.submit_request import (
    PayloadValidation,
    PlanOwnership,
    check_plan_owner,
    read_submit,
)
from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.clock import EmulatorClock
from quota_constructs.local.state.errors import InvalidParameter, InvalidRequest, NotFound
from quota_constructs.local.state.job_service import JobService, Submission
from quota_constructs.local.state.registry import SAGEMAKER_TRAINING, JobQueue, Registry
from quota_constructs.local.state.tags import TagStore
from quota_constructs.local.wire.api_errors import DOMAIN_ERRORS, ApiError, api_error
from quota_constructs.local.wire.input_bounds import documented_bound
from quota_constructs.model import MAX_PAYLOAD_BYTES, MAX_SUBMIT_REQUEST_BYTES
from quota_constructs.scheduling import Job

MAX_TERMINATE_BATCH = documented_bound("TerminateServiceJobsRequest", "jobs")
"""TerminateServiceJobs ``jobs``: "up to 50" (the wire refuses more before any handler)."""


def _fingerprint(params: Mapping[str, Any]) -> str:
    """The request without its ``clientToken``: equal for a retry of the same request."""
    return json.dumps({k: v for k, v in params.items() if k != "clientToken"}, sort_keys=True)


def _listed_id(ref: str) -> str:
    """What TerminateServiceJobs' ``successful`` lists for ``ref``: "the service job IDs whose
    termination request was accepted", so the id of a job named by its ARN."""
    arn = parse_service_job_arn(ref)
    return ref if arn is None else arn.job_id


def _check_request(queue: JobQueue, params: Mapping[str, Any]) -> None:
    """Refusals of the request itself; share, priority and payload rules are the core's."""
    if params.get("shareIdentifier"):
        kind = "uses quota shares" if queue.quota_managed else "is a FIFO queue"
        fix = (
            "pass quotaShareName instead of shareIdentifier"
            if queue.quota_managed
            else "leave it out"
        )
        raise InvalidRequest(
            f"shareIdentifier: job queue {queue.name!r} {kind}, not fair share; {fix}"
        )
    size = len(params["serviceRequestPayload"].encode())
    if size > MAX_PAYLOAD_BYTES:
        raise InvalidRequest(
            f"serviceRequestPayload: {size} bytes exceeds the {MAX_PAYLOAD_BYTES}-byte "
            "limit; keep hyperparameters small and move large settings to S3"
        )
    whole = len(json.dumps(params, separators=(",", ":")).encode())
    if whole > MAX_SUBMIT_REQUEST_BYTES:
        raise InvalidRequest(
            f"SubmitServiceJob: the request is {whole} bytes, over the "
            f"{MAX_SUBMIT_REQUEST_BYTES}-byte limit of a SubmitServiceJob request; send fewer "
            "or shorter tags"
        )


class ServiceJobHandlers:
    """Handlers of the service-job operations over a :class:`JobService` and a :class:`Registry`.

    ``explain_pending``: a RUNNABLE job with no AWS ``statusReason`` reports the core's typed
    pending reason instead of none (off by default: AWS leaves it empty).
    ``payload_validation``: an unschedulable payload fails its job (default) or the submit
    (:class:`~.submit_request.PayloadValidation`).
    ``plan_ownership``: a payload naming a training plan outside the queue's organisation is
    refused (default) or passed through as AWS does (:class:`~.submit_request.PlanOwnership`).
    """

    def __init__(
        self,
        registry: Registry,
        jobs: JobService,
        tags: TagStore,
        account: Account,
        clock: EmulatorClock,
        *,
        explain_pending: bool = False,
        payload_validation: PayloadValidation = PayloadValidation.PASSTHROUGH,
        plan_ownership: PlanOwnership = PlanOwnership.REFUSE,
    ) -> None:
        self.registry = registry
        self.plan_ownership = plan_ownership
        self.plan_owner: Callable[[str], tuple[str, tuple[str, ...]] | None] = lambda arn: None
        """Queue ARN -> (organisation, its plan ARNs), for the queues of provisioned
        organisations (set by the emulator)."""
        self.jobs = jobs
        self.tags = tags
        self.account = account
        self.clock = clock
        self.explain_pending = explain_pending
        self.payload_validation = payload_validation

    def operations(self) -> dict[str, Handler]:
        """Operation name -> handler, for every operation of this module."""
        return {
            "SubmitServiceJob": self.submit_service_job,
            "UpdateServiceJob": self.update_service_job,
            "DescribeServiceJob": self.describe_service_job,
            "ListServiceJobs": self.list_service_jobs,
            "TerminateServiceJob": self.terminate_service_job,
            "TerminateServiceJobs": self.terminate_service_jobs,
            "GetJobQueueSnapshot": self.get_job_queue_snapshot,
        }

    # --- operations ----------------------------------------------------------------------------

    def submit_service_job(self, params: Mapping[str, Any]) -> dict[str, Any]:
        token, fingerprint = params.get("clientToken"), _fingerprint(params)
        earlier = self.jobs.replay(token, fingerprint)
        if earlier is not None:
            return self._ids(earlier)
        queue = self.registry.queue(params["jobQueue"])
        self.jobs.check_open(queue)  # before the request's own problems, as AWS reports them
        _check_request(queue, params)
        if self.plan_ownership is PlanOwnership.REFUSE:
            check_plan_owner(params["serviceRequestPayload"], self.plan_owner(queue.arn))
        submission = Submission(
            queue_arn=queue.arn,
            payload=params["serviceRequestPayload"],
            retry_strategy=params.get("retryStrategy"),
            preemption_configuration=params.get("preemptionConfiguration"),
            timeout_config=params.get("timeoutConfig"),
        )
        request, payload_failure = read_submit(params, self.payload_validation)
        job = self.jobs.submit(
            queue, request, submission, client_token=token, fingerprint=fingerprint
        )
        if payload_failure is not None:  # SageMaker refuses what Batch passed through
            self.jobs.terminate(job.job_id, payload_failure)
        return self._ids(job)

    def update_service_job(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return self._ids(self.jobs.update_priority(params["jobId"], params["schedulingPriority"]))

    def terminate_service_job(self, params: Mapping[str, Any]) -> dict[str, Any]:
        self.jobs.terminate(params["jobId"], params["reason"])
        return {}

    def terminate_service_jobs(self, params: Mapping[str, Any]) -> dict[str, Any]:
        refs = params["jobs"]
        if len(refs) > MAX_TERMINATE_BATCH:
            raise InvalidRequest(
                f"jobs: at most {MAX_TERMINATE_BATCH} job ids per call (got {len(refs)}); "
                "split the list"
            )
        successful: list[str] = []
        errors: list[dict[str, str]] = []
        now = self.jobs.now()  # one instant: the whole batch ends before any job is placed
        for index, ref in enumerate(refs):
            error = self._terminate_one(ref, params["reason"], f"jobs[{index}]", now)
            if error is None:
                successful.append(_listed_id(ref))
            else:
                errors.append({"job": ref, "code": error.code, "message": error.message})
        return {"successful": successful, "errors": errors}

    def _terminate_one(self, ref: str, reason: str, field: str, now: float) -> ApiError | None:
        """Terminate one job of a bulk request; the API error of a refusal, else ``None``.

        AWS: "Service jobs that can't be found are treated as successfully processed"; a
        malformed id is reported as ``ValidationException``.
        """
        try:
            job_id = self.jobs.job_id(ref, field)
            if self.jobs.knows(job_id):
                self.jobs.terminate(job_id, reason, now=now)
        except NotFound:
            return None
        except InvalidParameter as malformed:
            return api_error("batch-item", malformed)
        except DOMAIN_ERRORS as refused:
            return api_error("batch-item", refused)
        return None

    def describe_service_job(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return self._describe(self.jobs.job(params["jobId"]))

    def list_service_jobs(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queues = (
            [self.registry.queue(params["jobQueue"])]
            if params.get("jobQueue")
            else self.registry.job_queues()
        )
        wanted = JobFilter.from_request(params.get("filters") or [], params.get("jobStatus"))
        jobs = wanted.select(self.jobs.jobs_of(queues), created_ms=partial(epoch_ms, self.clock))
        return batch_page(
            "jobSummaryList",
            jobs,
            params,
            self._summary,
            order=wanted.order_key,
            scope=wanted.scope,
        )

    def get_job_queue_snapshot(self, params: Mapping[str, Any]) -> dict[str, Any]:
        queue = self.registry.queue(params["jobQueue"])
        snapshot = self.jobs.scheduler(queue).snapshot()
        at = epoch_ms(self.clock, snapshot.time)
        return {
            "frontOfQueue": {"jobs": self._front(snapshot.front_of_queue), "lastUpdatedAt": at},
            "frontOfQuotaShares": {
                "quotaShares": {
                    name: self._front(entries)
                    for name, entries in snapshot.front_of_shares.items()
                    if is_quota_share(name)
                },
                "lastUpdatedAt": at,
            },
            "queueUtilization": {
                "totalCapacityUsage": capacity_usage_to_api(snapshot.total_usage),
                "quotaShareUtilization": {
                    "topCapacityUtilization": [
                        {"quotaShareName": name, "capacityUsage": capacity_usage_to_api(usage)}
                        for name, usage in snapshot.share_usage.items()
                        if usage and is_quota_share(name)
                    ]
                },
                "lastUpdatedAt": at,
            },
        }

    def explain(self, job_id: str) -> dict[str, Any]:
        """Beyond AWS: why a job waits and every preemption, typed (JSON-ready, epoch ms).

        ``pending``: kind, message and position of a RUNNABLE job (``None`` otherwise);
        ``preemptions``: rule, preemptor job and share, the victim share's borrowed capacity
        before and after, and AWS's reason string.
        """
        job = self.jobs.job(job_id)
        pending = self.jobs.pending_reason(job.job_id)
        return {
            "jobId": job.job_id,
            "jobName": job.request.job_name,
            "quotaShareName": share_name(job),
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
                    "at": epoch_ms(self.clock, p.time),
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

    # --- output shapes -------------------------------------------------------------------------

    def _ids(self, job: Job) -> dict[str, Any]:
        return {
            "jobArn": self.account.service_job(job.job_id),
            "jobName": job.request.job_name,
            "jobId": job.job_id,
        }

    def _latest_attempt(self, job: Job) -> dict[str, Any] | None:
        if job.attempt_count == 0:
            return None
        return {"serviceResourceId": attempt_resource(self.account, job, job.attempt_count)}

    def _status_reason(self, job: Job) -> str | None:
        if job.status_reason is None and self.explain_pending:
            pending = self.jobs.pending_reason(job.job_id)
            if pending is not None:
                return f"{pending.kind.value} - {pending.message}"
        return job.status_reason

    def _summary(self, job: Job) -> dict[str, Any]:
        return {
            **self._ids(job),
            "latestAttempt": self._latest_attempt(job),
            "capacityUsage": capacity_usage_to_api(job.demand),
            "createdAt": epoch_ms(self.clock, job.created_at),
            "scheduledAt": epoch_ms(self.clock, job.scheduled_at),
            "serviceJobType": SAGEMAKER_TRAINING,
            "quotaShareName": share_name(job),
            "status": job.status.value,
            "statusReason": self._status_reason(job),
            "startedAt": epoch_ms(self.clock, job.started_at),
            "stoppedAt": epoch_ms(self.clock, job.stopped_at),
            "isTerminated": True if job.is_terminated else None,
        }

    def _describe(self, job: Job) -> dict[str, Any]:
        sent = self.jobs.submission(job.job_id)
        return {
            **self._summary(job),
            "attempts": attempts(self.account, self.clock, job),
            "isTerminated": job.is_terminated,
            "jobQueue": sent.queue_arn,
            "retryStrategy": sent.retry_strategy,
            "schedulingPriority": job.priority,
            "serviceRequestPayload": sent.payload,
            "preemptionConfiguration": sent.preemption_configuration,
            "preemptionSummary": preemption_summary(self.account, self.clock, job),
            "tags": tags_member(self.tags.of(self.account.service_job(job.job_id))),
            "timeoutConfig": sent.timeout_config,
        }

    def _front(self, entries: tuple[Any, ...]) -> list[dict[str, Any]]:
        return [
            {
                "jobArn": self.account.service_job(e.job_id),
                "earliestTimeAtPosition": epoch_ms(self.clock, e.earliest_time_at_position),
            }
            for e in entries
        ]
