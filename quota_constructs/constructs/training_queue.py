"""Owns the composite: a whole quota-managed training queue from the domain model.

One ``QuotaManagedTrainingQueue`` = quota-share scheduling policy + SAGEMAKER_TRAINING service
environment sized to the sum of the shares' limits per instance type + job queue + one quota
share per spec. Construct ids (and so logical IDs) are fixed: ``SchedulingPolicy``,
``ServiceEnvironment``, ``JobQueue`` and ``JobQueue/<share name>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import jsii
from aws_cdk import aws_iam as iam
from aws_cdk.interfaces import ResourceEnvironment
from aws_cdk.interfaces.aws_batch import IJobQueueRef, JobQueueReference
from constructs import Construct

from quota_constructs.constructs._base import apply_tags, raise_construct_error, warn
from quota_constructs.constructs.job_queue import QuotaManagedJobQueue
from quota_constructs.constructs.parameters import publish_queue
from quota_constructs.constructs.quota_share import QuotaShare
from quota_constructs.constructs.scheduling_policy import QuotaShareSchedulingPolicy
from quota_constructs.constructs.service_environment import SageMakerTrainingServiceEnvironment
from quota_constructs.model import JobQueueSpec, Problem, QuotaShareSpec, check_organisation_name

PARAMETERS_ID = "Parameters"
"""Construct id of the SSM contract a queue publishes (``publish_parameters``)."""


@jsii.implements(IJobQueueRef)
class QuotaManagedTrainingQueue(Construct):
    """Everything a quota-managed SageMaker training queue needs, from a model ``JobQueueSpec``.

    :param spec: a ``JobQueueSpec`` (priority, runnable timeout, shares) or a list of
        ``QuotaShareSpec`` (priority 1, no runnable timeout).
    :param job_queue_name: default generated (a fixed name turns a replacement into a failure).
    :param service_environment_name: default generated.
    :param scheduling_policy_name: default generated.
    :param tags: default none; applied to every taggable resource below this construct.
    :param organisation: default none. An organisation name publishes the queue's SSM contract
        under ``/quota/<organisation>/`` (:meth:`publish_parameters`), so ``quota jobs -o``,
        ``quota status -o`` and the runtime find this queue by that name.
    :raises QuotaConfigError: every rule the spec breaks, at once, naming this construct's path.

    Warns (``quota-constructs:borrowLimitUnreachable``) when a ``LEND_AND_BORROW`` share's
    borrow limit can never be reached because the other shares cannot lend that much.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        spec: JobQueueSpec | Sequence[QuotaShareSpec],
        job_queue_name: str | None = None,
        service_environment_name: str | None = None,
        scheduling_policy_name: str | None = None,
        tags: Mapping[str, str] | None = None,
        organisation: str | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        queue_spec = spec if isinstance(spec, JobQueueSpec) else JobQueueSpec(shares=tuple(spec))
        problems = queue_spec.problems()
        if organisation is not None:
            problems += check_organisation_name(organisation, "organisation")
        raise_construct_error(self, problems)
        self.spec = queue_spec
        self.scheduling_policy = QuotaShareSchedulingPolicy(
            self, "SchedulingPolicy", scheduling_policy_name=scheduling_policy_name
        )
        self.service_environment = SageMakerTrainingServiceEnvironment(
            self,
            "ServiceEnvironment",
            capacity_limits=queue_spec.service_environment_capacity(),
            service_environment_name=service_environment_name,
        )
        self.job_queue = QuotaManagedJobQueue(
            self,
            "JobQueue",
            service_environment=self.service_environment,
            scheduling_policy=self.scheduling_policy,
            job_queue_name=job_queue_name,
            spec=queue_spec,
        )
        self._warn_unreachable_borrow_limits()
        apply_tags(self, tags)
        self.organisation: str | None = None
        if organisation is not None:
            self.publish_parameters(organisation)

    def publish_parameters(self, organisation: str) -> None:
        """Publish this queue's SSM contract for ``organisation`` (once per queue).

        String parameters ``/quota/<organisation>/job-queue/name``, ``.../job-queue/arn`` and
        ``.../quota-shares/<share>/arn`` with the same values as stack outputs, under the child
        ``Parameters``: what an ``OrganisationStack`` publishes for its queue. Team access
        parameters come with ``QuotaShareTeamAccess(parameter_path=...)``.

        :raises QuotaConfigError: a bad organisation name, or a second call on this queue.
        """
        problems = check_organisation_name(organisation, "organisation")
        if self.organisation is not None:
            problems.append(
                Problem(
                    "organisation",
                    organisation,
                    f"the parameters are published already, for {self.organisation!r}",
                    "publish them once per queue (an SSM parameter has one value)",
                )
            )
        raise_construct_error(self, problems)
        self.organisation = organisation
        publish_queue(
            Construct(self, PARAMETERS_ID),
            organisation,
            job_queue_name=self.job_queue_name,
            job_queue_arn=self.job_queue_arn,
            share_arns={name: share.quota_share_arn for name, share in self.quota_shares.items()},
        )

    def _warn_unreachable_borrow_limits(self) -> None:
        for share in self.spec.shares:
            if not share.strategy.borrows:
                continue
            for itype, own in share.capacity.items():
                wanted = own + share.borrow_cap(itype)
                usable = self.spec.max_usable(share.name, itype)
                if usable >= wanted:
                    continue
                limit = share.effective_borrow_limit
                allowed = "unlimited" if limit == -1 else f"{limit}% of {own}"
                warn(
                    self.share(share.name),
                    "borrowLimitUnreachable",
                    f"quota share {share.name}: borrow limit ({allowed}) for {itype} can never "
                    f"be reached; the other LEND/LEND_AND_BORROW shares can lend only "
                    f"{usable - own}, so jobs there can use at most {usable} x {itype}",
                )

    @property
    def quota_shares(self) -> dict[str, QuotaShare]:
        """The queue's share constructs by share name, in creation order."""
        return {share.quota_share_name: share for share in self.job_queue.quota_shares}

    def register_quota_share(self, share: QuotaShare) -> None:
        """``QuotaManagedJobQueue.register_quota_share`` of the queue (``IQuotaShareRegistry``)."""
        self.job_queue.register_quota_share(share)

    def share(self, name: str) -> QuotaShare:
        """The share construct called ``name``; ``KeyError`` naming the known shares."""
        shares = self.quota_shares
        try:
            return shares[name]
        except KeyError:
            known = ", ".join(shares) or "none"
            raise KeyError(
                f"no quota share {name!r} in {self.node.path} (shares: {known})"
            ) from None

    @property
    def job_queue_arn(self) -> str:
        return self.job_queue.job_queue_arn

    @property
    def job_queue_name(self) -> str:
        return self.job_queue.job_queue_name

    @property
    def job_queue_ref(self) -> JobQueueReference:
        return self.job_queue.job_queue_ref

    @property
    def env(self) -> ResourceEnvironment:
        return self.job_queue.env

    def grant_submit(self, grantee: iam.IGrantable, share_name: str) -> iam.Grant:
        """``QuotaShare.grant_submit`` of the share called ``share_name``."""
        return self.share(share_name).grant_submit(grantee)

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """``QuotaManagedJobQueue.grant_read``: watch the queue and every share's jobs."""
        return self.job_queue.grant_read(grantee)
