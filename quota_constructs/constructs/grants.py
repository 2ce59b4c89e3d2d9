"""Owns the constructs' IAM: the action lists and the functions that build every grant.

Every grant of a queue, a share, the composite or a team's access is built here, so the exact
actions, resources and conditions of each intent are written once. Each function adds
statements to ``grantee``'s principal policy and returns the combined ``iam.Grant``
(:func:`policy_grantee` makes a customer managed policy a grantee).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam

from quota_constructs import api_shapes
from quota_constructs.contracts import TEAM_TAG_KEY

SUBMIT_ACTIONS = ("batch:SubmitServiceJob",)
"""Submit actions, authorised on the job-queue ARN, the quota-share ARN and ``service-job/*``."""
READ_ACTIONS_ANY = ("batch:DescribeServiceJob", "batch:ListServiceJobs")
"""Read actions that support no resource type (granted on ``*``)."""
READ_ACTIONS_QUEUE = ("batch:ListQuotaShares", "batch:GetJobQueueSnapshot")
"""Read actions authorised on the job-queue ARN."""
READ_ACTIONS_SHARE = ("batch:DescribeQuotaShare",)
"""Read actions authorised on the quota-share ARN."""

TAG_ON_CREATE_ACTIONS = ("batch:TagResource",)
"""The dependent action of a submit that carries tags, authorised on ``service-job/*``."""
UPDATE_ACTIONS = ("batch:UpdateServiceJob",)
"""Change a job's ``schedulingPriority``; authorised only on ``service-job/*``."""
TERMINATE_ACTIONS = ("batch:TerminateServiceJob",)
"""Terminate a job (also ``TerminateServiceJobs``); authorised only on ``service-job/*``."""
DESCRIBE_QUEUES_ACTIONS = ("batch:DescribeJobQueues",)
"""Read queue settings (the runtime checks a submit against them); no resource type (``*``)."""
DESCRIBE_TRAINING_PLAN_ACTIONS = ("sagemaker:DescribeTrainingPlan",)
"""Read a training plan's status and room (the runtime picks a plan at submit)."""
PARAMETER_READ_ACTIONS = ("ssm:GetParameter", "ssm:GetParameters")
"""Read an organisation's contract parameters (``/quota/<organisation>/...``)."""
SCHEDULED_UPDATE_ACTIONS = ("batch:UpdateQuotaShare",)
"""What a share's calendar schedules call; authorised on that one quota-share ARN."""
PASS_ROLE_ACTIONS = ("iam:PassRole",)
SAGEMAKER_SERVICE = "sagemaker.amazonaws.com"
"""``iam:PassedToService`` of a SageMaker execution role (the service job's ``RoleArn``)."""

LIST_ACTIONS = ("s3:ListBucket",)
"""On the bucket ARN, limited by ``s3:prefix`` when the team has a prefix."""
BUCKET_ACTIONS = ("s3:GetBucketLocation",)
"""On the bucket ARN."""
OBJECT_ACTIONS = (
    "s3:GetObject",
    "s3:PutObject",
    "s3:DeleteObject",
    "s3:AbortMultipartUpload",
    "s3:ListMultipartUploadParts",
)
"""On ``<bucket ARN>/*`` or ``<bucket ARN>/<prefix>/*``: input, output and checkpoints."""
KEY_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey")
"""On the bucket's KMS key, only through S3 (``kms:ViaService``)."""
IMAGE_TOKEN_ACTIONS = ("ecr:GetAuthorizationToken",)
"""ECR's registry login; supports no resource type (``*``)."""
IMAGE_PULL_ACTIONS = (
    "ecr:BatchCheckLayerAvailability",
    "ecr:GetDownloadUrlForLayer",
    "ecr:BatchGetImage",
)
"""Pull an image, on repository ARNs."""
LOG_GROUP_ACTIONS = ("logs:CreateLogGroup", "logs:DescribeLogStreams")
LOG_STREAM_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")
METRIC_ACTIONS = ("cloudwatch:PutMetricData",)
"""Training metrics; resource ``*``, limited by ``cloudwatch:namespace``."""
TRAINING_LOG_GROUP = "/aws/sagemaker/TrainingJobs"
"""The log group SageMaker training jobs write to (one per account and region)."""
TRAINING_METRIC_NAMESPACE = "/aws/sagemaker/TrainingJobs"
"""The CloudWatch namespace of training-job metrics."""


def service_job_arn(resource: cdk.Resource | cdk.Stack) -> str:
    """``arn:<partition>:batch:<region>:<account>:service-job/*`` in ``resource``'s environment."""
    if isinstance(resource, cdk.Stack):
        return resource.format_arn(
            service=api_shapes.BATCH_SERVICE,
            resource=api_shapes.SERVICE_JOB_RESOURCE,
            resource_name="*",
        )
    env = resource.env  # each read is a jsii round-trip
    return resource.stack.format_arn(
        service=api_shapes.BATCH_SERVICE,
        resource=api_shapes.SERVICE_JOB_RESOURCE,
        resource_name="*",
        account=env.account,
        region=env.region,
    )


def bucket_objects_arn(bucket_arn: str, prefix: str = "") -> str:
    """``<bucket ARN>/*``, or ``<bucket ARN>/<prefix>/*`` for a prefix."""
    return f"{bucket_arn}/{prefix}/*" if prefix else f"{bucket_arn}/*"


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
        _grant(grantee, READ_ACTIONS_SHARE, [api_shapes.quota_share_arn(job_queue_arn, "*")]),
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


def grant_update_quota_share(grantee: iam.IGrantable, *, quota_share_arn: str) -> iam.Grant:
    """``batch:UpdateQuotaShare`` on exactly ``quota_share_arn`` (a calendar's flips)."""
    return _grant(grantee, SCHEDULED_UPDATE_ACTIONS, [quota_share_arn])


def grant_team_submit(
    grantee: iam.IGrantable,
    *,
    job_queue_arn: str,
    quota_share_arn: str,
    service_job_arn: str,
    team: str,
    max_priority: int | None = None,
) -> iam.Grant:
    """Submit into one share only, with the team tag, at most ``max_priority``:

    ``batch:SubmitServiceJob`` on exactly the queue, the share and ``service_job_arn``, when
    ``StringEquals aws:RequestTag/quota-team = team`` (and, with a cap,
    ``NumericLessThanEquals batch:SchedulingPriority = max_priority``: a submit that omits
    ``schedulingPriority`` is then denied, since the service's default is undocumented);
    ``batch:TagResource`` (tag on create) on ``service_job_arn`` when
    ``StringEquals aws:RequestTag/quota-team = team`` and
    ``StringEqualsIfExists aws:ResourceTag/quota-team = team`` (a team cannot re-tag another
    team's job as its own). Other tag keys are not limited (``quota jobs submit --tag``).
    """
    submit = {"StringEquals": {f"aws:RequestTag/{TEAM_TAG_KEY}": team}}
    if max_priority is not None:
        submit["NumericLessThanEquals"] = {"batch:SchedulingPriority": str(max_priority)}
    tag = {
        "StringEquals": {f"aws:RequestTag/{TEAM_TAG_KEY}": team},
        "StringEqualsIfExists": {f"aws:ResourceTag/{TEAM_TAG_KEY}": team},
    }
    return _all(
        _grant(grantee, SUBMIT_ACTIONS, [job_queue_arn, quota_share_arn, service_job_arn], submit),
        _grant(grantee, TAG_ON_CREATE_ACTIONS, [service_job_arn], tag),
    )


def grant_team_jobs(
    grantee: iam.IGrantable, *, service_job_arn: str, team: str, max_priority: int | None = None
) -> iam.Grant:
    """Update and terminate only the jobs that carry the team tag:

    ``batch:UpdateServiceJob`` on ``service_job_arn`` when
    ``StringEquals aws:ResourceTag/quota-team = team`` (and, with a cap,
    ``NumericLessThanEquals batch:SchedulingPriority = max_priority``);
    ``batch:TerminateServiceJob`` on ``service_job_arn`` with the same tag condition.
    """
    own = {"StringEquals": {f"aws:ResourceTag/{TEAM_TAG_KEY}": team}}
    update: dict[str, Mapping[str, Any]] = dict(own)
    if max_priority is not None:
        update["NumericLessThanEquals"] = {"batch:SchedulingPriority": str(max_priority)}
    return _all(
        _grant(grantee, UPDATE_ACTIONS, [service_job_arn], update),
        _grant(grantee, TERMINATE_ACTIONS, [service_job_arn], own),
    )


def grant_describe_job_queues(grantee: iam.IGrantable) -> iam.Grant:
    """``batch:DescribeJobQueues`` on ``*`` (the action supports no resource type)."""
    return _grant(grantee, DESCRIBE_QUEUES_ACTIONS, ["*"])


def grant_describe_training_plans(
    grantee: iam.IGrantable, *, plan_arns: Sequence[str]
) -> iam.Grant | None:
    """``sagemaker:DescribeTrainingPlan`` on exactly ``plan_arns`` (the runtime describes an
    organisation's plans at each submit to pick one); ``None`` and no statement without plans."""
    if not plan_arns:
        return None
    return _grant(grantee, DESCRIBE_TRAINING_PLAN_ACTIONS, list(plan_arns))


def grant_read_parameters(grantee: iam.IGrantable, *, parameter_arn: str) -> iam.Grant:
    """``ssm:GetParameter`` and ``ssm:GetParameters`` on ``parameter_arn`` (a path pattern)."""
    return _grant(grantee, PARAMETER_READ_ACTIONS, [parameter_arn])


def grant_pass_role_to_sagemaker(grantee: iam.IGrantable, *, role_arn: str) -> iam.Grant:
    """``iam:PassRole`` on exactly ``role_arn``, only to SageMaker:

    ``StringEquals iam:PassedToService = sagemaker.amazonaws.com``. Use this rather than
    ``role.grant_pass_role``, which sets no ``iam:PassedToService``.
    """
    to_sagemaker = {"StringEquals": {"iam:PassedToService": SAGEMAKER_SERVICE}}
    return _grant(grantee, PASS_ROLE_ACTIONS, [role_arn], to_sagemaker)


def grant_bucket_read_write(
    grantee: iam.IGrantable,
    *,
    bucket_arn: str,
    prefix: str = "",
    key_arn: str | None = None,
    s3_endpoint: str | None = None,
) -> iam.Grant:
    """Read and write one bucket, or one prefix of it, and nothing else there:

    ``s3:ListBucket`` on ``bucket_arn`` (with a prefix, when ``StringLike s3:prefix =
    <prefix>/*``: only keys under it are listed); ``s3:GetBucketLocation`` on ``bucket_arn``;
    ``s3:GetObject``, ``s3:PutObject``, ``s3:DeleteObject``, ``s3:AbortMultipartUpload`` and
    ``s3:ListMultipartUploadParts`` on ``<bucket_arn>/*`` or ``<bucket_arn>/<prefix>/*``; with
    ``key_arn``, ``kms:Decrypt`` and ``kms:GenerateDataKey`` on that key when
    ``StringEquals kms:ViaService = s3_endpoint`` (``s3.<region>.amazonaws.com``).
    """
    objects = bucket_objects_arn(bucket_arn, prefix)
    listing = {"StringLike": {"s3:prefix": f"{prefix}/*"}} if prefix else None
    grant = _all(
        _grant(grantee, LIST_ACTIONS, [bucket_arn], listing),
        _grant(grantee, BUCKET_ACTIONS, [bucket_arn]),
        _grant(grantee, OBJECT_ACTIONS, [objects]),
    )
    if key_arn is not None:
        if s3_endpoint is None:
            raise ValueError("grant_bucket_read_write: key_arn needs s3_endpoint")
        via_s3 = {"StringEquals": {"kms:ViaService": s3_endpoint}}
        grant = _all(grant, _grant(grantee, KEY_ACTIONS, [key_arn], via_s3))
    return grant


def grant_pull_images(grantee: iam.IGrantable, *, repository_arns: Sequence[str]) -> iam.Grant:
    """``ecr:GetAuthorizationToken`` on ``*`` (ECR's login has no resource type);
    ``ecr:BatchCheckLayerAvailability``, ``ecr:GetDownloadUrlForLayer`` and
    ``ecr:BatchGetImage`` on ``repository_arns``.
    """
    return _all(
        _grant(grantee, IMAGE_TOKEN_ACTIONS, ["*"]),
        _grant(grantee, IMAGE_PULL_ACTIONS, repository_arns),
    )


def grant_training_logs_and_metrics(
    grantee: iam.IGrantable, *, log_group_arn: str, log_stream_pattern: str = "*"
) -> iam.Grant:
    """What a SageMaker training job writes with its execution role:

    ``logs:CreateLogGroup`` and ``logs:DescribeLogStreams`` on ``log_group_arn`` (the
    ``/aws/sagemaker/TrainingJobs`` group); ``logs:CreateLogStream`` and ``logs:PutLogEvents``
    on ``<log_group_arn>:log-stream:<log_stream_pattern>`` (default ``*``; a team's
    ``AWSBatch<prefix>*``, :func:`~quota_constructs.model.training_log_stream_pattern`);
    ``cloudwatch:PutMetricData`` on ``*`` when
    ``StringEquals cloudwatch:namespace = /aws/sagemaker/TrainingJobs`` (the action has no
    condition key for dimensions).
    """
    namespace = {"StringEquals": {"cloudwatch:namespace": TRAINING_METRIC_NAMESPACE}}
    streams = f"{log_group_arn}:log-stream:{log_stream_pattern}"
    return _all(
        _grant(grantee, LOG_GROUP_ACTIONS, [log_group_arn]),
        _grant(grantee, LOG_STREAM_ACTIONS, [streams]),
        _grant(grantee, METRIC_ACTIONS, ["*"], namespace),
    )


def deny_pass_roles(grantee: iam.IGrantable, *, role_arns: Sequence[str]) -> None:
    """Deny ``iam:PassRole`` on ``role_arns`` (other teams' execution roles), whatever allows it.

    The guard for names known only at deploy time: a team whose ``execution_role`` names
    another team's created role still cannot pass it.
    """
    if role_arns:
        _deny(grantee, PASS_ROLE_ACTIONS, role_arns)


def deny_team_resources(
    grantee: iam.IGrantable, *, bucket_arns: Sequence[str], key_arns: Sequence[str]
) -> None:
    """Deny ``s3:*`` on ``bucket_arns`` (other teams' buckets and object patterns) and ``kms:*``
    on ``key_arns`` (their bucket keys), whatever allows it."""
    if bucket_arns:
        _deny(grantee, ("s3:*",), bucket_arns)
    if key_arns:
        _deny(grantee, ("kms:*",), key_arns)


def policy_grantee(policy: iam.ManagedPolicy) -> iam.IGrantable:
    """A grantee whose principal policy is ``policy``: grants add their statements to it.

    A customer managed policy is no principal; this lets the same grant functions fill it
    (for roles that attach it, e.g. an organisation's own roles).
    """
    return _ManagedPolicyPrincipal(policy)


class _ManagedPolicyPrincipal(iam.PrincipalBase):
    """The principal side of :func:`policy_grantee`; never used in a trust policy."""

    def __init__(self, policy: iam.ManagedPolicy) -> None:
        super().__init__()
        self._policy = policy

    @property
    def policy_fragment(self) -> iam.PrincipalPolicyFragment:
        raise TypeError("a managed policy is not a principal of a trust or resource policy")

    def dedupe_string(self) -> str | None:
        return None

    def add_to_principal_policy(
        self, statement: iam.PolicyStatement
    ) -> iam.AddToPrincipalPolicyResult:
        self._policy.add_statements(statement)
        return iam.AddToPrincipalPolicyResult(statement_added=True, policy_dependable=self._policy)


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


def _deny(grantee: iam.IGrantable, actions: Sequence[str], resource_arns: Sequence[str]) -> None:
    """One Deny statement on ``grantee``'s principal policy."""
    grantee.grant_principal.add_to_principal_policy(
        iam.PolicyStatement(
            effect=iam.Effect.DENY, actions=list(actions), resources=list(resource_arns)
        )
    )


def _all(first: iam.Grant, *rest: iam.Grant) -> iam.Grant:
    """The grants combined, in order (``Grant.combine``)."""
    for grant in rest:
        first = first.combine(grant)
    return first
