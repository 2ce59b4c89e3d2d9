"""Owns the audit of a queue's jobs for payloads the runtime would have refused.

IAM cannot see a ``SubmitServiceJob`` payload, so a caller who bypasses the runtime (a raw
call with a team's role) can name another organisation's training plan
(``ResourceConfig.TrainingPlanArn``) or book the training job's cost to another team (a
``quota-team`` entry in the payload's ``Tags``). :func:`audit_jobs` finds such jobs afterwards
with the runtime's own checks (docs/security.md); ``quota jobs -o ORG audit`` prints them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from quota_constructs.contracts import TEAM_TAG_KEY
from quota_constructs.model import Problem, QuotaConfigError
from quota_constructs.runtime.jobs import ACTIVE_STATUSES, JobStatus
from quota_constructs.runtime.payload import payload_team_tag_problems, training_plan_problems
from quota_constructs.runtime.queue import QueueClient
from quota_constructs.safe_load import InputFileError, parse_json


@dataclass(frozen=True)
class AuditFinding:
    """One job whose payload names a foreign plan or cost tag: the job, and the problem."""

    job_id: str
    job_name: str
    share: str | None
    status: str
    field: str
    """The payload field, e.g. ``serviceRequestPayload.ResourceConfig.TrainingPlanArn``."""
    value: Any
    reason: str

    def to_json(self) -> dict[str, Any]:
        """The finding with AWS's field names where they are AWS's."""
        return {
            "jobId": self.job_id,
            "jobName": self.job_name,
            "quotaShareName": self.share,
            "status": self.status,
            "field": self.field,
            "value": self.value,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Audit:
    """How many jobs were audited, and what was found."""

    jobs: int
    findings: tuple[AuditFinding, ...]


def audit_jobs(client: QueueClient, *, statuses: Sequence[JobStatus] = ACTIVE_STATUSES) -> Audit:
    """The findings of every job of ``client``'s queue in ``statuses`` (default: active ones).

    One ``ListServiceJobs`` call per status and page, one ``DescribeServiceJob`` per job, one
    ``DescribeQuotaShare`` per share (its team tag). The client must know its organisation's
    plans (:meth:`QueueClient.for_organisation` or ``for_team``); :class:`QuotaConfigError`
    otherwise. A payload that is not a JSON object is skipped (SageMaker refuses it anyway).
    """
    plans = client.organisation_plans
    if plans is None:
        raise QuotaConfigError(
            [
                Problem(
                    "jobQueue",
                    client.queue,
                    "the audit compares payloads with the organisation's published training "
                    "plans, and a client made from a queue name does not know its organisation",
                    "pass --organisation ORG (QueueClient.for_organisation in Python)",
                )
            ]
        )
    owner = f"organisation {client.organisation}"
    findings: list[AuditFinding] = []
    jobs = client.list(statuses=statuses)
    for summary in jobs:
        details = client.describe(summary.job_id)
        payload = _payload(details.payload)
        if payload is None:
            continue
        problems = training_plan_problems(payload, plans, owner)
        share = summary.share
        if share is not None:
            tag = client.team_tag(share)
            problems += payload_team_tag_problems(payload, share, TEAM_TAG_KEY, tag)
        findings += [
            AuditFinding(
                summary.job_id,
                summary.job_name,
                share,
                summary.status.value,
                problem.path,
                problem.value,
                problem.message,
            )
            for problem in problems
        ]
    return Audit(len(jobs), tuple(findings))


def _payload(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = parse_json(text, source="serviceRequestPayload")
    except InputFileError:
        return None
    return value if isinstance(value, dict) else None
