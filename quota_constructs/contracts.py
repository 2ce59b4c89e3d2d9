"""Owns the organisation stack's published contract: SSM parameter paths and output ids.

Each organisation stack writes String SSM parameters under ``/quota/<organisation>/`` and the
same values as stack outputs. The stack, the emulator's provisioning and the runtime build every
path through this module, so a renamed parameter cannot break one side silently. Pure Python.
"""

from __future__ import annotations

PARAMETER_ROOT = "/quota"


def organisation_prefix(organisation: str) -> str:
    """Root of an organisation's parameters: ``/quota/<organisation>``."""
    return f"{PARAMETER_ROOT}/{organisation}"


def job_queue_name_parameter(organisation: str) -> str:
    """``/quota/<organisation>/job-queue/name``: the job queue's name."""
    return f"{organisation_prefix(organisation)}/job-queue/name"


def job_queue_arn_parameter(organisation: str) -> str:
    """``/quota/<organisation>/job-queue/arn``: the job queue's ARN (the runtime's entry point)."""
    return f"{organisation_prefix(organisation)}/job-queue/arn"


def share_prefix(organisation: str, share: str) -> str:
    """Root of one share's parameters: ``/quota/<organisation>/quota-shares/<share>``."""
    return f"{organisation_prefix(organisation)}/quota-shares/{share}"


def share_arn_parameter(organisation: str, share: str) -> str:
    """``/quota/<organisation>/quota-shares/<share>/arn``: the quota share's ARN."""
    return f"{share_prefix(organisation, share)}/arn"


JOB_QUEUE_NAME_OUTPUT = "JobQueueName"
JOB_QUEUE_ARN_OUTPUT = "JobQueueArn"
SHARE_ARNS_SCOPE = "QuotaShareArns"
"""Construct scope holding one output (id: the share's name) per share ARN."""
