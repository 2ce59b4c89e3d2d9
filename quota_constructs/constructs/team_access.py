"""Owns a team's access to one quota share: submitter role and policy, execution role, bucket."""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct, IConstruct

from quota_constructs.constructs import grants
from quota_constructs.constructs._base import acknowledge_wildcards, raise_construct_error, warn
from quota_constructs.constructs.quota_share import IQuotaShare
from quota_constructs.contracts import TEAM_TAG_KEY
from quota_constructs.model import (
    MAX_TAG_VALUE_LENGTH,
    Problem,
    TeamAccess,
    training_job_prefix,
    training_log_stream_pattern,
)

CHECKPOINT_PREFIX = "checkpoints/"
"""Key prefix of a created bucket whose old object versions expire (training checkpoints)."""
CHECKPOINT_NONCURRENT_DAYS = 7
"""Days a replaced or deleted checkpoint version is kept before it expires."""
INCOMPLETE_UPLOAD_DAYS = 7
"""Days before an unfinished multipart upload is aborted (its parts cost storage)."""
TEAM_TAG_PRIORITY = 1000
"""Priority of the team tag on the quota share: above the organisation's tags (100)."""


class QuotaShareTeamAccess(Construct):
    """Everything one team needs to use its quota share, and nothing more.

    Creates, for the share's team (the organisation file's ``access`` block):

    - ``SubmitterRole``, trusted by ``access.principals`` (account ids as ``AccountPrincipal``,
      role and user ARNs as ``ArnPrincipal``), whose only policy is ``SubmitterPolicy``: a
      customer managed policy that other roles (an organisation's own) may attach too. It
      allows: submit into this share only, with ``quota-team = team`` and at most
      ``access.max_priority`` (``IQuotaShare.grant_team_submit``); update and terminate the
      jobs tagged with ``team`` (``grant_team_jobs``); watch the share (``grant_read``) and the
      queues' settings (``batch:DescribeJobQueues``); read the parameters under
      ``parameter_path``; describe the organisation's training plans
      (``training_plan_arns``); pass the execution role, to SageMaker only.
    - ``ExecutionRole`` (``access.execution_role == "create"``): trusted by
      ``sagemaker.amazonaws.com`` from this account (``aws:SourceAccount``); reads and writes
      the team's bucket or prefix only, pulls images from ``image_repository_arns``, writes
      training metrics and, in ``/aws/sagemaker/TrainingJobs``, only the log streams of the
      team's own jobs (:attr:`log_stream_pattern`; every stream with ``training_logs: shared``).
      An existing role ARN is imported immutable: the stack cannot change its policies, so its
      owner grants it access.
    - ``Bucket`` (``access.bucket == "create"``): SSE-KMS with its own ``BucketKey`` (rotation
      on, S3 bucket key on), SSL only, versioned, public access blocked, owner-enforced
      objects, server access logs to ``server_access_logs_bucket`` under ``<team>/``, old
      versions under ``checkpoints/`` expire after 7 days, unfinished multipart uploads are
      aborted after 7 days; bucket and key are retained on delete. An existing
      ``name[/prefix]`` is imported, and the execution role gets that bucket or prefix only.

    The share itself (when built here) is tagged ``quota-team = team``, and so is every
    resource created here.

    :param quota_share: the team's share (a ``QuotaShare`` or an import).
    :param team: the team tag's value, ``contracts.team_tag_value(organisation, share)``.
    :param access: the model's ``TeamAccess`` (validated here; errors name this construct).
    :param parameter_path: default none; an SSM path (``/quota/<organisation>``) whose
        parameters the submitter may read, so the project's tools work with the role.
    :param server_access_logs_bucket: default none (a created bucket then has no access logs,
        with warning ``quota-constructs:teamBucketWithoutAccessLogs``).
    :param image_repository_arns: default every ECR repository of the stack's account and
        region (``repository/*``); the repositories the execution role may pull from.
    :param training_plan_arns: default none; the organisation's training plans, which the
        submitter may ``sagemaker:DescribeTrainingPlan`` (exactly these ARNs; the runtime
        describes them at each submit to put a job on one).
    :raises QuotaConfigError: every problem of ``access`` and ``team`` at once.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        quota_share: IQuotaShare,
        team: str,
        access: TeamAccess,
        parameter_path: str | None = None,
        server_access_logs_bucket: s3.IBucket | None = None,
        image_repository_arns: Sequence[str] | None = None,
        training_plan_arns: Sequence[str] = (),
    ) -> None:
        super().__init__(scope, construct_id)
        raise_construct_error(self, access.problems("access") + _team_problems(team))
        self.team = team
        self.access = access
        stack = cdk.Stack.of(self)
        self.submitter_policy = iam.ManagedPolicy(
            self,
            "SubmitterPolicy",
            description=f"Team {team}: submit into its quota share only, manage its own jobs",
        )
        self.submitter_role = iam.Role(
            self,
            "SubmitterRole",
            assumed_by=iam.CompositePrincipal(*map(_principal, access.principal_arns)),
            description=f"Team {team}: submits service jobs into its quota share",
            managed_policies=[self.submitter_policy],
        )
        self.execution_role = self._execution_role(stack)
        self.key: kms.Key | None = None
        self.bucket, self.bucket_prefix = self._bucket(server_access_logs_bucket)
        self.training_plan_arns = tuple(training_plan_arns)
        self._grant_submitter(quota_share, stack, parameter_path)
        if access.creates_execution_role:
            self._grant_execution(stack, image_repository_arns)
        if isinstance(quota_share, Construct):
            cdk.Tags.of(quota_share).add(TEAM_TAG_KEY, team, priority=TEAM_TAG_PRIORITY)
        cdk.Tags.of(self).add(TEAM_TAG_KEY, team)

    @property
    def submitter_role_arn(self) -> str:
        return self.submitter_role.role_arn

    @property
    def execution_role_arn(self) -> str:
        return self.execution_role.role_arn

    @property
    def training_job_prefix(self) -> str:
        """What every ``TrainingJobName`` of the team starts with (the runtime adds it)."""
        return training_job_prefix(self.team)

    @property
    def log_stream_pattern(self) -> str:
        """The training-job log streams the created execution role may write:
        ``AWSBatch<prefix>*`` (``training_logs: team-prefixed``) or ``*`` (``shared``)."""
        if self.access.team_prefixed_logs:
            return training_log_stream_pattern(self.training_job_prefix)
        return "*"

    @property
    def bucket_location(self) -> str:
        """``name`` or ``name/prefix``: the value of the bucket parameter and output."""
        name = self.bucket.bucket_name
        return f"{name}/{self.bucket_prefix}" if self.bucket_prefix else name

    @property
    def bucket_resource_arns(self) -> list[str]:
        """What this team's location is in S3 policies: the bucket and its objects, or (a
        prefix) the objects under the prefix."""
        objects = grants.bucket_objects_arn(self.bucket.bucket_arn, self.bucket_prefix)
        return [objects] if self.bucket_prefix else [self.bucket.bucket_arn, objects]

    def exclude(self, others: Sequence[QuotaShareTeamAccess]) -> None:
        """Deny this team every other team's execution role, bucket (or prefix) and key.

        An explicit Deny, for names only known at deploy time (a created role or bucket's
        generated name): the submitter may never pass another team's execution role, and a
        created execution role never touches another team's location or key, whatever the
        organisation file names. Call once, with every other team of the stack.
        """
        grantee = grants.policy_grantee(self.submitter_policy)
        grants.deny_pass_roles(grantee, role_arns=[o.execution_role_arn for o in others])
        if self.access.creates_execution_role:
            grants.deny_team_resources(
                self.execution_role,
                bucket_arns=[arn for o in others for arn in o.bucket_resource_arns],
                key_arns=[o.key.key_arn for o in others if o.key is not None],
            )

    def _execution_role(self, stack: cdk.Stack) -> iam.IRole:
        if not self.access.creates_execution_role:
            return iam.Role.from_role_arn(
                self, "ExecutionRole", self.access.execution_role, mutable=False
            )
        return iam.Role(
            self,
            "ExecutionRole",
            assumed_by=iam.ServicePrincipal(
                grants.SAGEMAKER_SERVICE,
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnLike": {
                        "aws:SourceArn": stack.format_arn(service="sagemaker", resource="*")
                    },
                },
            ),
            description=f"Team {self.team}: SageMaker execution role of its training jobs",
        )

    def _bucket(self, logs: s3.IBucket | None) -> tuple[s3.IBucket, str]:
        location = self.access.existing_bucket
        if location is not None:
            return s3.Bucket.from_bucket_name(self, "Bucket", location.bucket), location.prefix
        self.key = kms.Key(
            self,
            "BucketKey",
            description=f"Team {self.team}: encrypts its training bucket",
            enable_key_rotation=True,
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        if logs is None:
            warn(
                self,
                "teamBucketWithoutAccessLogs",
                "the team bucket has no server access logs; pass server_access_logs_bucket",
            )
        bucket = s3.Bucket(
            self,
            "Bucket",
            encryption=s3.BucketEncryption.KMS,
            encryption_key=self.key,
            bucket_key_enabled=True,
            enforce_ssl=True,
            versioned=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="AbortIncompleteMultipartUploads",
                    abort_incomplete_multipart_upload_after=cdk.Duration.days(
                        INCOMPLETE_UPLOAD_DAYS
                    ),
                ),
                s3.LifecycleRule(
                    id="ExpireOldCheckpointVersions",
                    prefix=CHECKPOINT_PREFIX,
                    noncurrent_version_expiration=cdk.Duration.days(CHECKPOINT_NONCURRENT_DAYS),
                ),
            ],
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        if logs is not None:
            _log_access(bucket, logs, prefix=f"{self.team}/")
        return bucket, ""

    def _grant_submitter(
        self, share: IQuotaShare, stack: cdk.Stack, parameter_path: str | None
    ) -> None:
        grantee = grants.policy_grantee(self.submitter_policy)
        cap = self.access.max_priority
        share.grant_team_submit(grantee, team=self.team, max_priority=cap)
        share.grant_team_jobs(grantee, team=self.team, max_priority=cap)
        share.grant_read(grantee)
        grants.grant_describe_job_queues(grantee)
        grants.grant_describe_training_plans(grantee, plan_arns=self.training_plan_arns)
        reasons = {
            "*": "DescribeServiceJob, ListServiceJobs and DescribeJobQueues support no resource "
            "type",
            grants.service_job_arn(stack): "service-job ids do not exist before SubmitServiceJob "
            "creates them; update, terminate and tagging are limited by the team tag",
        }
        if parameter_path is not None:
            parameters = stack.format_arn(
                service="ssm", resource="parameter", resource_name=f"{parameter_path.strip('/')}/*"
            )
            grants.grant_read_parameters(grantee, parameter_arn=parameters)
            reasons[parameters] = (
                "the organisation's published contract (queue, share, role and bucket names; "
                "no secrets), read by the project's tools"
            )
        grants.grant_pass_role_to_sagemaker(grantee, role_arn=self.execution_role.role_arn)
        acknowledge_wildcards(_l1(self.submitter_policy), reasons)

    def _grant_execution(self, stack: cdk.Stack, repositories: Sequence[str] | None) -> None:
        role = self.execution_role
        grants.grant_bucket_read_write(
            role,
            bucket_arn=self.bucket.bucket_arn,
            prefix=self.bucket_prefix,
            key_arn=self.key.key_arn if self.key is not None else None,
            s3_endpoint=f"s3.{stack.region}.{stack.url_suffix}",
        )
        default_repositories = [
            stack.format_arn(service="ecr", resource="repository", resource_name="*")
        ]
        images = list(repositories or default_repositories)
        grants.grant_pull_images(role, repository_arns=images)
        log_group = stack.format_arn(
            service="logs",
            resource="log-group",
            resource_name=grants.TRAINING_LOG_GROUP,
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
        )
        streams = self.log_stream_pattern
        grants.grant_training_logs_and_metrics(
            role, log_group_arn=log_group, log_stream_pattern=streams
        )
        reasons = {
            "*": "ecr:GetAuthorizationToken supports no resource type; cloudwatch:PutMetricData "
            "only in the /aws/sagemaker/TrainingJobs namespace",
            grants.bucket_objects_arn(self.bucket.bucket_arn, self.bucket_prefix): (
                "the team's own bucket or prefix: training jobs choose their input, output and "
                "checkpoint keys"
            ),
            f"{log_group}:log-stream:{streams}": "SageMaker names a training job's log streams "
            "after the job, inside the training-jobs log group"
            + (
                "; Batch names the job AWSBatch<TrainingJobName><attempt id>, and the team's "
                "TrainingJobName starts with its prefix"
                if self.access.team_prefixed_logs
                else " (training_logs: shared)"
            ),
        }
        wide_images = "training images may be in any repository matching it; pass "
        wide_images += "image_repository_arns to narrow"
        reasons.update((arn, wide_images) for arn in images if "*" in arn)
        acknowledge_wildcards(_l1(role.node.find_child("DefaultPolicy")), reasons)


def _l1(construct: IConstruct) -> Construct:
    """The L1 inside ``construct`` (the narrowest construct a cdk-nag finding names)."""
    child = construct.node.default_child
    if child is None:
        raise ValueError(f"{construct.node.path} has no L1 child")
    return child  # type: ignore[return-value]


def _principal(arn: str) -> iam.IPrincipal:
    """An account's root ARN as ``AccountPrincipal``; a role or user ARN as ``ArnPrincipal``."""
    if arn.endswith(":root"):
        return iam.AccountPrincipal(arn.split(":")[4])
    return iam.ArnPrincipal(arn)


def _log_access(bucket: s3.Bucket, logs: s3.IBucket, *, prefix: str) -> None:
    """Server access logs of ``bucket`` to ``logs`` under ``prefix``, granted by bucket policy.

    Written here, not through ``server_access_logs_bucket``: without the feature flag
    ``@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy`` CDK grants log delivery by the
    ``LogDeliveryWrite`` ACL, which owner-enforced objects refuse, so the construct would fail
    in an app without this project's ``cdk.json``. The policy is what the flag produces:
    ``s3:PutObject`` for ``logging.s3.amazonaws.com`` on ``<logs>/<prefix>*``, only from this
    bucket (``aws:SourceArn``) of this account (``aws:SourceAccount``).
    """
    cfn = bucket.node.default_child
    assert isinstance(cfn, s3.CfnBucket)
    cfn.logging_configuration = s3.CfnBucket.LoggingConfigurationProperty(
        destination_bucket_name=logs.bucket_name, log_file_prefix=prefix
    )
    logs.add_to_resource_policy(
        iam.PolicyStatement(
            principals=[iam.ServicePrincipal("logging.s3.amazonaws.com")],
            actions=["s3:PutObject"],
            resources=[logs.arn_for_objects(f"{prefix}*")],
            conditions={
                "ArnLike": {"aws:SourceArn": bucket.bucket_arn},
                "StringEquals": {"aws:SourceAccount": cdk.Stack.of(bucket).account},
            },
        )
    )


def _team_problems(team: str) -> list[Problem]:
    if isinstance(team, str) and 1 <= len(team) <= MAX_TAG_VALUE_LENGTH:
        return []
    return [
        Problem(
            "team",
            team,
            f"the team tag's value must be 1-{MAX_TAG_VALUE_LENGTH} characters",
            "pass contracts.team_tag_value(organisation, share)",
        )
    ]


def access_log_bucket(scope: Construct, construct_id: str) -> s3.Bucket:
    """The bucket that receives the team buckets' server access logs (one per stack).

    SSE-S3 (server access logging cannot deliver to an SSE-KMS bucket), SSL only, versioned,
    public access blocked, owner-enforced objects, retained on delete. Its own access is not
    logged (cdk-nag ``AwsSolutions-S1`` acknowledged on it): logging it into itself would
    loop, and another log bucket would need one in turn.
    """
    bucket = s3.Bucket(
        scope,
        construct_id,
        encryption=s3.BucketEncryption.S3_MANAGED,
        enforce_ssl=True,
        versioned=True,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        removal_policy=cdk.RemovalPolicy.RETAIN,
    )
    cdk.Validations.of(bucket).acknowledge(
        cdk.Acknowledgment(
            id="AwsSolutions::AwsSolutions-S1",
            reason="the access-log bucket is the target of the team buckets' server access "
            "logs; logging it into itself would loop",
        )
    )
    return bucket
