"""The quota share (``AWS::Batch::QuotaShare``) and its grants."""

from __future__ import annotations

from collections.abc import Mapping

import aws_cdk as cdk
import jsii
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from aws_cdk.interfaces.aws_batch import IJobQueueRef, IQuotaShareRef, QuotaShareReference
from constructs import Construct

from quota_constructs.constructs._base import check_arn, is_unresolved, raise_problems
from quota_constructs.constructs.job_queue import (
    READ_ACTIONS_ANY,
    READ_ACTIONS_QUEUE,
    READ_ACTIONS_SHARE,
    QuotaManagedJobQueue,
)
from quota_constructs.model import (
    QuotaShareSpec,
    ShareState,
    SharingStrategy,
)

SUBMIT_ACTIONS = ("batch:SubmitServiceJob",)
_SHARE_SEPARATOR = "/quota-share/"
_RENAMES = {"name": "quota_share_name", "capacity": "capacity_limits"}


@jsii.implements(IQuotaShareRef)
class _QuotaShareBase(cdk.Resource):
    """A quota share known by ARN (created here or imported); offers the grants."""

    @property
    def quota_share_arn(self) -> str:
        raise NotImplementedError

    @property
    def job_queue_arn(self) -> str:
        """ARN of the job queue the share belongs to."""
        raise NotImplementedError

    @property
    def quota_share_ref(self) -> QuotaShareReference:
        return QuotaShareReference(quota_share_arn=self.quota_share_arn)

    def _service_job_arn(self) -> str:
        env = self.env  # each read is a jsii round-trip
        return self.stack.format_arn(
            service="batch",
            resource="service-job",
            resource_name="*",
            account=env.account,
            region=env.region,
        )

    def grant_submit(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` submit service jobs to this share, and to no other share.

        ``batch:SubmitServiceJob`` on exactly: the job-queue ARN, this share's ARN and
        ``service-job/*``. Never ``job-queue/*``: that wildcard also matches every share
        (``job-queue/Q/quota-share/X``). The caller also needs ``iam:PassRole`` on the
        SageMaker execution role named in the payload (grant it with ``role.grant_pass_role``).
        Restricting by share ARN is documented by AWS but untested (UNCONFIRMED).
        """
        return iam.Grant.add_to_principal(
            grantee=grantee,
            actions=list(SUBMIT_ACTIONS),
            resource_arns=[self.job_queue_arn, self.quota_share_arn, self._service_job_arn()],
        )

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` watch this share and its jobs.

        ``batch:DescribeQuotaShare`` on this share's ARN; ``batch:ListQuotaShares`` and
        ``batch:GetJobQueueSnapshot`` on the job-queue ARN; ``batch:DescribeServiceJob`` and
        ``batch:ListServiceJobs`` on ``*`` (they support no resource type).
        """
        return (
            iam.Grant.add_to_principal(
                grantee=grantee,
                actions=list(READ_ACTIONS_SHARE),
                resource_arns=[self.quota_share_arn],
            )
            .combine(
                iam.Grant.add_to_principal(
                    grantee=grantee,
                    actions=list(READ_ACTIONS_QUEUE),
                    resource_arns=[self.job_queue_arn],
                )
            )
            .combine(
                iam.Grant.add_to_principal(
                    grantee=grantee, actions=list(READ_ACTIONS_ANY), resource_arns=["*"]
                )
            )
        )


def _queue_arn_of_share_arn(share_arn: str) -> str:
    if is_unresolved(share_arn):
        return cdk.Fn.select(0, cdk.Fn.split(_SHARE_SEPARATOR, share_arn))
    return share_arn.split(_SHARE_SEPARATOR, 1)[0]


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

    :param job_queue: the quota-managed queue (a ``QuotaManagedJobQueue`` or the composite's
        queue also checks the queue rules: at most 20 shares, unique names).
    :param quota_share_name: required, ``[A-Za-z0-9_-]{1,128}``, unique in the queue. It is
        part of the share's ARN and replacement-only: renaming re-creates the share.
    :param capacity_limits: 1 to 5 SageMaker training instance types -> max instances (>= 1).
    :param strategy: ``RESERVE`` | ``LEND`` | ``LEND_AND_BORROW``.
    :param borrow_limit: percent of own capacity; ``LEND_AND_BORROW`` only; default ``None``
        = unlimited (written as ``-1``); ``0`` stays ``0``.
    :param in_share_preemption: default ``False``.
    :param state: default ``ENABLED``.
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
        strategy: SharingStrategy,
        borrow_limit: int | None = None,
        in_share_preemption: bool = False,
        state: ShareState = ShareState.ENABLED,
    ) -> None:
        super().__init__(scope, construct_id, physical_name=quota_share_name)
        self.spec = QuotaShareSpec(
            name=quota_share_name,
            capacity=capacity_limits,
            strategy=strategy,
            borrow_limit=borrow_limit,
            in_share_preemption=in_share_preemption,
            state=state,
        )
        raise_problems(self, self.spec.problems(), renames=_RENAMES)
        queue = getattr(job_queue, "job_queue", job_queue)  # the composite's inner queue
        if isinstance(queue, QuotaManagedJobQueue):
            queue._register(self)
        self._job_queue_arn = job_queue.job_queue_ref.job_queue_arn
        self.resource = batch.CfnQuotaShare(
            self,
            "Resource",
            quota_share_name=quota_share_name,
            job_queue=self._job_queue_arn,
            # plain dicts, not the jsii struct classes: each struct costs its own Python-side
            # type check before the L1 checks it again (same template, tests pin it)
            capacity_limits=[
                {"capacityUnit": itype, "maxCapacity": count}
                for itype, count in self.spec.capacity.items()
            ],
            resource_sharing_configuration={
                "strategy": self.spec.strategy.value,
                "borrowLimit": self.spec.effective_borrow_limit,
            },
            preemption_configuration={
                "inSharePreemption": "ENABLED" if in_share_preemption else "DISABLED"
            },
            state=self.spec.state.value,
        )
        self._arn = self.resource.attr_quota_share_arn

    @classmethod
    def from_spec(
        cls, scope: Construct, construct_id: str, *, job_queue: IJobQueueRef, spec: QuotaShareSpec
    ) -> QuotaShare:
        """A share built from a domain-model spec (the organisation file's form)."""
        return cls(
            scope,
            construct_id,
            job_queue=job_queue,
            quota_share_name=spec.name,
            capacity_limits=spec.capacity,
            strategy=spec.strategy,
            borrow_limit=spec.borrow_limit,
            in_share_preemption=spec.in_share_preemption,
            state=spec.state,
        )

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
    ) -> _QuotaShareBase:
        """Reference an existing share by ARN; supports ``grant_submit`` and ``grant_read``.

        The job-queue ARN is the part of the share ARN before ``/quota-share/``.
        """
        return _ImportedQuotaShare(scope, construct_id, quota_share_arn)
