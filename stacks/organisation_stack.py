"""Owns the organisation stack: one CloudFormation stack per organisation, from the model.

It publishes the contract of ``quota_constructs.contracts`` (the runtime finds a deployed queue
by organisation name): SSM String parameters ``/quota/<organisation>/job-queue/name``,
``.../job-queue/arn`` and ``.../quota-shares/<share name>/arn``, and the same values as stack
outputs (``JobQueueName``, ``JobQueueArn``, one ``QuotaShareArns<share>`` per share).
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from quota_constructs import contracts
from quota_constructs.constructs import QuotaManagedTrainingQueue
from quota_constructs.model import Organisation

STACK_NAME_PREFIX = "Quota-"
MAX_DESCRIPTION = 1024


def stack_name_for(organisation: Organisation) -> str:
    """The pinned stack name (and construct id) of an organisation: ``Quota-<organisation>``."""
    return f"{STACK_NAME_PREFIX}{organisation.name}"


class OrganisationStack(cdk.Stack):
    """The quota-managed training queue of one organisation, with outputs and SSM parameters.

    :param organisation: a validated model ``Organisation`` (from ``config.load_organisation``).
    Other keyword arguments are ``cdk.Stack`` props (``env``, ``synthesizer``, ...). The stack
    name defaults to ``Quota-<organisation>``; the organisation's tags go on every resource.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        organisation: Organisation,
        **stack_props: Any,
    ) -> None:
        organisation.validate(context=f"organisation {organisation.name!r}")
        description = f"Quota-managed SageMaker training queue of {organisation.name}"
        if organisation.description:
            description += f": {organisation.description}"
        stack_props.setdefault("stack_name", stack_name_for(organisation))
        stack_props.setdefault("description", description[:MAX_DESCRIPTION])
        super().__init__(scope, construct_id, **stack_props)
        self.organisation = organisation
        self.queue = QuotaManagedTrainingQueue(self, "TrainingQueue", spec=organisation.queue)
        self._publish()
        for key, value in organisation.tags.items():
            cdk.Tags.of(self).add(key, value)

    def _publish(self) -> None:
        org = self.organisation.name
        queue = self.queue
        values = {
            contracts.JOB_QUEUE_NAME_OUTPUT: (
                contracts.job_queue_name_parameter(org),
                queue.job_queue_name,
                "Job queue name",
            ),
            contracts.JOB_QUEUE_ARN_OUTPUT: (
                contracts.job_queue_arn_parameter(org),
                queue.job_queue_arn,
                "Job queue ARN",
            ),
        }
        for output_id, (parameter, value, what) in values.items():
            self._parameter_and_output(self, output_id, parameter, value, what)
        shares = Construct(self, contracts.SHARE_ARNS_SCOPE)
        for name, share in queue.quota_shares.items():
            self._parameter_and_output(
                shares,
                name,
                contracts.share_arn_parameter(org, name),
                share.quota_share_arn,
                f"ARN of quota share {name}",
            )

    @staticmethod
    def _parameter_and_output(
        scope: Construct, construct_id: str, parameter_name: str, value: str, what: str
    ) -> None:
        ssm.CfnParameter(  # the L1: the L2 StringParameter adds nothing here but synth time
            scope,
            f"{construct_id}Parameter",
            type="String",
            name=parameter_name,
            value=value,
            description=f"{what} (written by the quota-constructs organisation stack)",
        )
        cdk.CfnOutput(scope, construct_id, value=value, description=what)
