"""Owns the constructs' IAM: the Batch action lists and the functions that build their grants.

Every grant of a queue, a share or the composite is built here, so the exact actions and
resources of each intent are written once. Each function adds statements to ``grantee``'s
principal policy and returns the combined ``iam.Grant``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam

SUBMIT_ACTIONS = ("batch:SubmitServiceJob",)
"""Submit actions, authorised on the job-queue ARN, the quota-share ARN and ``service-job/*``."""
READ_ACTIONS_ANY = ("batch:DescribeServiceJob", "batch:ListServiceJobs")
"""Read actions that support no resource type (granted on ``*``)."""
READ_ACTIONS_QUEUE = ("batch:ListQuotaShares", "batch:GetJobQueueSnapshot")
"""Read actions authorised on the job-queue ARN."""
READ_ACTIONS_SHARE = ("batch:DescribeQuotaShare",)
"""Read actions authorised on the quota-share ARN."""
QUOTA_SHARE_ARN_SEPARATOR = "/quota-share/"
"""A quota-share ARN is ``<job-queue ARN>/quota-share/<share name>``."""


def service_job_arn(resource: cdk.Resource) -> str:
    """``arn:<partition>:batch:<region>:<account>:service-job/*`` in ``resource``'s environment."""
    env = resource.env  # each read is a jsii round-trip
    return resource.stack.format_arn(
        service="batch",
        resource="service-job",
        resource_name="*",
        account=env.account,
        region=env.region,
    )


def grant_submit(
    grantee: iam.IGrantable, *, job_queue_arn: str, quota_share_arn: str, service_job_arn: str
) -> iam.Grant:
    """``batch:SubmitServiceJob`` on exactly the queue, the share and ``service_job_arn``.

    Never ``job-queue/*``: IAM wildcards span ``/``, so it would match every share of every
    queue. Submitters also need ``iam:PassRole`` on the SageMaker execution role.
    """
    return _grant(grantee, SUBMIT_ACTIONS, [job_queue_arn, quota_share_arn, service_job_arn])


def grant_read_job_queue(grantee: iam.IGrantable, *, job_queue_arn: str) -> iam.Grant:
    """Watch the queue and every share's jobs, in this statement order:

    ``batch:ListQuotaShares`` and ``batch:GetJobQueueSnapshot`` on the queue ARN;
    ``batch:DescribeQuotaShare`` on ``<queue ARN>/quota-share/*``;
    ``batch:DescribeServiceJob`` and ``batch:ListServiceJobs`` on ``*``.
    """
    return _all(
        _grant(grantee, READ_ACTIONS_QUEUE, [job_queue_arn]),
        _grant(grantee, READ_ACTIONS_SHARE, [f"{job_queue_arn}{QUOTA_SHARE_ARN_SEPARATOR}*"]),
        _grant(grantee, READ_ACTIONS_ANY, ["*"]),
    )


def grant_read_quota_share(
    grantee: iam.IGrantable, *, job_queue_arn: str, quota_share_arn: str
) -> iam.Grant:
    """Watch one share and its jobs, in this statement order:

    ``batch:DescribeQuotaShare`` on the share ARN; ``batch:ListQuotaShares`` and
    ``batch:GetJobQueueSnapshot`` on the queue ARN; ``batch:DescribeServiceJob`` and
    ``batch:ListServiceJobs`` on ``*``.
    """
    return _all(
        _grant(grantee, READ_ACTIONS_SHARE, [quota_share_arn]),
        _grant(grantee, READ_ACTIONS_QUEUE, [job_queue_arn]),
        _grant(grantee, READ_ACTIONS_ANY, ["*"]),
    )


def _grant(
    grantee: iam.IGrantable,
    actions: Sequence[str],
    resource_arns: Sequence[str],
    conditions: Mapping[str, Mapping[str, Any]] | None = None,
) -> iam.Grant:
    """One statement on ``grantee``'s principal policy (``Grant.add_to_principal``)."""
    return iam.Grant.add_to_principal(
        grantee=grantee,
        actions=list(actions),
        resource_arns=list(resource_arns),
        conditions=conditions,
    )


def _all(first: iam.Grant, *rest: iam.Grant) -> iam.Grant:
    """The grants combined, in order (``Grant.combine``)."""
    for grant in rest:
        first = first.combine(grant)
    return first
