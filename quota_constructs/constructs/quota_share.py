"""Owns the quota share construct (``AWS::Batch::QuotaShare``), its interfaces and its import."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import aws_cdk as cdk
import jsii
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from aws_cdk.interfaces.aws_batch import IJobQueueRef, IQuotaShareRef, QuotaShareReference
from constructs import Construct

from quota_constructs.api_shapes import (
    QUOTA_SHARE_ARN_SEPARATOR,
    cfn_property_name,
    job_queue_arn_of_share,
    share_to_cfn_props,
)
from quota_constructs.constructs import grants
from quota_constructs.constructs._base import (
    check_arn,
    enum_prop,
    is_unresolved,
    raise_construct_error,
)
from quota_constructs.model import SHARE_FIELDS, QuotaShareSpec, ShareState, SharingStrategy

PROP_OF_FIELD = {
    name: declared.construct_prop
    for name, declared in SHARE_FIELDS.items()
    if declared.construct_prop not in (None, name)
}
"""A model field's name -> ``QuotaShare``'s prop, where they differ (errors name the prop)."""
CFN_KEYWORDS = frozenset(inspect.signature(batch.CfnQuotaShare.__init__).parameters)
"""``CfnQuotaShare``'s keywords in the installed aws-cdk-lib: a wire member it does not know
yet (newer than this aws-cdk-lib) is set as a property override, which gives the same
template."""


class IQuotaShare(IQuotaShareRef, Protocol):
    """A quota share known by ARN, with its grants: a ``QuotaShare`` or an import by ARN."""

    @property
    def quota_share_arn(self) -> str:
        """ARN of the share: ``<job-queue ARN>/quota-share/<name>``."""
        ...

    @property
    def job_queue_arn(self) -> str:
        """ARN of the job queue the share belongs to."""
        ...

    def grant_submit(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` submit service jobs to this share (see ``QuotaShare.grant_submit``)."""
        ...

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` watch this share and its jobs (see ``QuotaShare.grant_read``)."""
        ...

    def grant_team_submit(
        self, grantee: iam.IGrantable, *, team: str, max_priority: int | None = None
    ) -> iam.Grant:
        """Submit here only with the team tag (see ``QuotaShare.grant_team_submit``)."""
        ...

    def grant_team_jobs(
        self, grantee: iam.IGrantable, *, team: str, max_priority: int | None = None
    ) -> iam.Grant:
        """Update and terminate the team's tagged jobs (see ``QuotaShare.grant_team_jobs``)."""
        ...


@runtime_checkable
class IQuotaShareRegistry(Protocol):
    """A job queue that checks and records the shares created on it.

    A ``QuotaShare`` whose ``job_queue`` has ``register_quota_share`` calls it before creating
    its resource (``QuotaManagedJobQueue`` and the composite ``QuotaManagedTrainingQueue`` do).
    """

    def register_quota_share(self, share: QuotaShare) -> None:
        """Record ``share``; raise ``QuotaConfigError`` naming its path if a queue rule breaks."""
        ...


@jsii.implements(IQuotaShareRef)
class _QuotaShareBase(cdk.Resource):
    """A quota share known by ARN (created here or imported); offers the grants."""

    @property
    def quota_share_arn(self) -> str:
        raise NotImplementedError

    @property
    def job_queue_arn(self) -> str:
        raise NotImplementedError

    @property
    def quota_share_ref(self) -> QuotaShareReference:
        return QuotaShareReference(quota_share_arn=self.quota_share_arn)

    def grant_submit(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` submit service jobs to this share, and to no other share.

        ``batch:SubmitServiceJob`` on exactly: the job-queue ARN, this share's ARN and
        ``arn:<partition>:batch:<region>:<account>:service-job/*``. Never ``job-queue/*``: that
        wildcard also matches every share (``job-queue/Q/quota-share/X``). The caller also
        needs ``iam:PassRole`` on the SageMaker execution role named in the payload (grant it
        with ``grants.grant_pass_role_to_sagemaker``, which sets ``iam:PassedToService``).
        Restricting by share ARN is documented by AWS but untested (UNCONFIRMED).
        """
        return grants.grant_submit(
            grantee,
            job_queue_arn=self.job_queue_arn,
            quota_share_arn=self.quota_share_arn,
            service_job_arn=grants.service_job_arn(self),
        )

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` watch this share and its jobs.

        ``batch:DescribeQuotaShare`` on this share's ARN; ``batch:ListQuotaShares`` and
        ``batch:GetJobQueueSnapshot`` on the job-queue ARN; ``batch:DescribeServiceJob`` and
        ``batch:ListServiceJobs`` on ``*`` (they support no resource type).
        """
        return grants.grant_read_quota_share(
            grantee, job_queue_arn=self.job_queue_arn, quota_share_arn=self.quota_share_arn
        )

    def grant_team_submit(
        self, grantee: iam.IGrantable, *, team: str, max_priority: int | None = None
    ) -> iam.Grant:
        """Let ``grantee`` submit into this share only, tagging each job as ``team``'s.

        ``batch:SubmitServiceJob`` on exactly the job-queue ARN, this share's ARN and
        ``service-job/*`` when the request carries ``quota-team = team`` (and, with
        ``max_priority``, ``schedulingPriority <= max_priority``; omitting it is then denied);
        ``batch:TagResource`` on ``service-job/*`` for that tag, never over another team's tag
        (``grants.grant_team_submit``). ``team`` is ``contracts.team_tag_value(org, share)``.
        """
        return grants.grant_team_submit(
            grantee,
            job_queue_arn=self.job_queue_arn,
            quota_share_arn=self.quota_share_arn,
            service_job_arn=grants.service_job_arn(self),
            team=team,
            max_priority=max_priority,
        )

    def grant_team_jobs(
        self, grantee: iam.IGrantable, *, team: str, max_priority: int | None = None
    ) -> iam.Grant:
        """Let ``grantee`` update and terminate the jobs tagged ``quota-team = team``.

        ``batch:UpdateServiceJob`` (with ``max_priority``: only to ``schedulingPriority <=
        max_priority``) and ``batch:TerminateServiceJob`` on ``service-job/*`` when
        ``aws:ResourceTag/quota-team = team`` (``grants.grant_team_jobs``). Job ARNs name no
        queue or share, so the tag is what tells the team's jobs apart.
        """
        return grants.grant_team_jobs(
            grantee,
            service_job_arn=grants.service_job_arn(self),
            team=team,
            max_priority=max_priority,
        )


def _queue_arn_of_share_arn(share_arn: str) -> str:
    if is_unresolved(share_arn):
        return cdk.Fn.select(0, cdk.Fn.split(QUOTA_SHARE_ARN_SEPARATOR, share_arn))
    return job_queue_arn_of_share(share_arn)


class _ImportedQuotaShare(_QuotaShareBase):
    def __init__(self, scope: Construct, construct_id: str, arn: str) -> None:
        super().__init__(scope, construct_id, environment_from_arn=arn)
        check_arn(
            self, arn, resource="job-queue", sub_resource="quota-share", prop="quota_share_arn"
        )
        self._arn = arn

    @property
    def quota_share_arn(self) -> str:
        return self._arn

    @property
    def job_queue_arn(self) -> str:
        return _queue_arn_of_share_arn(self._arn)


class QuotaShare(_QuotaShareBase):
    """A quota share: a virtual queue inside a quota-managed job queue.

    :param job_queue: the quota-managed queue, any ``IJobQueueRef``. A queue that is an
        ``IQuotaShareRegistry`` (``QuotaManagedJobQueue``, the composite) also checks the queue
        rules at once: at most 20 shares, unique names.
    :param quota_share_name: required, ``[A-Za-z0-9_-]{1,128}``, unique in the queue. It is
        part of the share's ARN and replacement-only: renaming re-creates the share.
    :param capacity_limits: 1 to 5 SageMaker training instance types -> max instances (>= 1).
    :param strategy: ``RESERVE`` | ``LEND`` | ``LEND_AND_BORROW``: a ``SharingStrategy``, or
        the value as a string in any case (``"lend_and_borrow"``).
    :param borrow_limit: percent of own capacity; ``LEND_AND_BORROW`` only; default ``None``
        = unlimited (written as ``-1``); ``0`` stays ``0``.
    :param in_share_preemption: default ``False``.
    :param state: default ``ENABLED``; a ``ShareState`` or a string in any case.
    :raises QuotaConfigError: every broken rule at once (from the domain model), naming this
        construct's path, the prop, the value and the fix.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        job_queue: IJobQueueRef,
        quota_share_name: str,
        capacity_limits: Mapping[str, int],
        strategy: SharingStrategy | str,
        borrow_limit: int | None = None,
        in_share_preemption: bool = False,
        state: ShareState | str = ShareState.ENABLED,
    ) -> None:
        super().__init__(scope, construct_id, physical_name=quota_share_name)
        self.spec = QuotaShareSpec(
            name=quota_share_name,
            capacity=capacity_limits,
            strategy=enum_prop(
                self, SharingStrategy, strategy, "strategy", what="sharing strategy"
            ),
            borrow_limit=borrow_limit,
            in_share_preemption=in_share_preemption,
            state=enum_prop(self, ShareState, state, "state", what="quota share state"),
        )
        raise_construct_error(self, self.spec.problems(), renames=PROP_OF_FIELD)
        if isinstance(job_queue, IQuotaShareRegistry):
            job_queue.register_quota_share(self)
        self._job_queue_arn = job_queue.job_queue_ref.job_queue_arn
        props = share_to_cfn_props(self.spec)
        self.resource = batch.CfnQuotaShare(
            self,
            "Resource",
            job_queue=self._job_queue_arn,
            **{k: v for k, v in props.items() if k in CFN_KEYWORDS},
        )
        for keyword, value in props.items():
            if keyword not in CFN_KEYWORDS:
                self.resource.add_property_override(cfn_property_name(keyword), value)
        self._arn = self.resource.attr_quota_share_arn

    @classmethod
    def from_spec(
        cls, scope: Construct, construct_id: str, *, job_queue: IJobQueueRef, spec: QuotaShareSpec
    ) -> QuotaShare:
        """A share built from a domain-model spec (the organisation file's form): every field
        declared with a ``construct_prop`` (``model.SHARE_FIELDS``) passed as that prop."""
        props = {
            declared.construct_prop: getattr(spec, name)
            for name, declared in SHARE_FIELDS.items()
            if declared.construct_prop is not None
        }
        return cls(scope, construct_id, job_queue=job_queue, **props)

    @property
    def quota_share_arn(self) -> str:
        """ARN of the share (``Fn::GetAtt QuotaShareArn``)."""
        return self._arn

    @property
    def quota_share_name(self) -> str:
        return self.spec.name

    @property
    def job_queue_arn(self) -> str:
        return self._job_queue_arn

    @staticmethod
    def from_quota_share_arn(
        scope: Construct, construct_id: str, quota_share_arn: str
    ) -> IQuotaShare:
        """Reference an existing share by ARN; supports ``grant_submit`` and ``grant_read``.

        The job-queue ARN is the part of the share ARN before ``/quota-share/``.
        """
        return _ImportedQuotaShare(scope, construct_id, quota_share_arn)
