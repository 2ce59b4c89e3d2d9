"""Owns how the organisation contract is published: an SSM String parameter and an output each.

The runtime and the ``quota`` CLI find a deployed queue by organisation name through the
parameters of :mod:`quota_constructs.contracts` (``/quota/<organisation>/job-queue/arn``, ...).
The organisation stack publishes them, and so does a ``QuotaManagedTrainingQueue`` built in a
stack of one's own (``publish_parameters``), through :func:`publish_queue`.
"""

from __future__ import annotations

from collections.abc import Mapping

import aws_cdk as cdk
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from quota_constructs import contracts


def parameter_and_output(
    scope: Construct,
    construct_id: str,
    parameter_name: str,
    value: str,
    what: str,
    *,
    kind: str = "String",
) -> None:
    """A parameter ``<construct_id>Parameter`` (SSM type ``kind``: ``String`` or
    ``StringList``) and an output ``<construct_id>``."""
    ssm.CfnParameter(  # the L1: the L2 StringParameter adds nothing here but synth time
        scope,
        f"{construct_id}Parameter",
        type=kind,
        name=parameter_name,
        value=value,
        description=f"{what} (written by the quota-constructs organisation stack)",
    )
    cdk.CfnOutput(scope, construct_id, value=value, description=what)


def publish_queue(
    scope: Construct,
    organisation: str,
    *,
    job_queue_name: str,
    job_queue_arn: str,
    share_arns: Mapping[str, str],
) -> None:
    """The queue's name and ARN and each share's ARN, under ``/quota/<organisation>/``, as
    parameters and outputs of ``scope`` (``JobQueueName``, ``JobQueueArn``, and
    ``QuotaShareArns/<share>``): the ids the organisation stack has always used."""
    values = {
        contracts.JOB_QUEUE_NAME_OUTPUT: (
            contracts.job_queue_name_parameter(organisation),
            job_queue_name,
            "Job queue name",
        ),
        contracts.JOB_QUEUE_ARN_OUTPUT: (
            contracts.job_queue_arn_parameter(organisation),
            job_queue_arn,
            "Job queue ARN",
        ),
    }
    for output_id, (parameter, value, what) in values.items():
        parameter_and_output(scope, output_id, parameter, value, what)
    shares = Construct(scope, contracts.SHARE_ARNS_SCOPE)
    for name, arn in share_arns.items():
        parameter_and_output(
            shares,
            name,
            contracts.share_arn_parameter(organisation, name),
            arn,
            f"ARN of quota share {name}",
        )
