"""Owns the organisation stack's published contract: SSM parameter paths, output ids, team tag.

Each organisation stack writes SSM parameters under ``/quota/<organisation>/`` (Strings, and the
StringList of its training plans) and the same values as stack outputs. The stack, the
emulator's provisioning and the runtime build every path through this module, so a renamed
parameter cannot break one side silently. The team tag is the other half of the contract: the
stack's policies require it, the runtime adds it. Pure Python.
"""

from __future__ import annotations

from collections.abc import Sequence

from quota_constructs.model import TEAM_TAG_KEY as TEAM_TAG_KEY  # the model reserves the key
from quota_constructs.model import team_tag_value as team_tag_value  # and builds its value

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


def submitter_role_arn_parameter(organisation: str, share: str) -> str:
    """``.../quota-shares/<share>/submitter-role-arn``: the team's submitter role (with access)."""
    return f"{share_prefix(organisation, share)}/submitter-role-arn"


def execution_role_arn_parameter(organisation: str, share: str) -> str:
    """``.../quota-shares/<share>/execution-role-arn``: the team's SageMaker execution role."""
    return f"{share_prefix(organisation, share)}/execution-role-arn"


def bucket_parameter(organisation: str, share: str) -> str:
    """``.../quota-shares/<share>/bucket``: the team's bucket, ``name`` or ``name/prefix``."""
    return f"{share_prefix(organisation, share)}/bucket"


def training_job_prefix_parameter(organisation: str, share: str) -> str:
    """``.../quota-shares/<share>/training-job-prefix``: what the team's ``TrainingJobName``
    starts with (``model.training_job_prefix`` of the team tag's value)."""
    return f"{share_prefix(organisation, share)}/training-job-prefix"


def training_plans_parameter(organisation: str) -> str:
    """``/quota/<organisation>/training-plans``: a StringList of the organisation's SageMaker
    training plan ARNs (:data:`NO_TRAINING_PLANS` when it has none)."""
    return f"{organisation_prefix(organisation)}/training-plans"


NO_TRAINING_PLANS = "none"
"""The value of :func:`training_plans_parameter` for an organisation without plans: SSM takes
no empty value (1 to 4096 characters), and ``none`` is no plan ARN, so readers take it as the
empty list (:func:`training_plans_from_value`)."""


def training_plans_value(arns: Sequence[str]) -> str:
    """The StringList value publishing ``arns``: comma-separated, or :data:`NO_TRAINING_PLANS`."""
    return ",".join(arns) if arns else NO_TRAINING_PLANS


def training_plans_from_value(value: str) -> tuple[str, ...]:
    """The plan ARNs a :func:`training_plans_parameter` value lists (none for the sentinel)."""
    items = tuple(item.strip() for item in value.split(",") if item.strip())
    return tuple(item for item in items if item != NO_TRAINING_PLANS)


JOB_QUEUE_NAME_OUTPUT = "JobQueueName"
JOB_QUEUE_ARN_OUTPUT = "JobQueueArn"
SHARE_ARNS_SCOPE = "QuotaShareArns"
"""Construct scope holding one output (id: the share's name) per share ARN."""
SUBMITTER_ROLE_ARNS_SCOPE = "SubmitterRoleArns"
"""Construct scope holding one output (id: the share's name) per team's submitter role ARN."""
EXECUTION_ROLE_ARNS_SCOPE = "ExecutionRoleArns"
"""Construct scope holding one output (id: the share's name) per team's execution role ARN."""
TEAM_BUCKETS_SCOPE = "TeamBuckets"
"""Construct scope holding one output (id: the share's name) per team bucket, ``name[/prefix]``."""
TRAINING_PLANS_OUTPUT = "TrainingPlanArns"
"""Stack output of the :func:`training_plans_parameter` value."""
TRAINING_JOB_PREFIXES_SCOPE = "TrainingJobPrefixes"
"""Construct scope holding one output (id: the share's name) per team's training-job prefix."""


def share_output_id(share: str) -> str:
    """Construct id of a share's output inside each per-share scope: the share's name."""
    return share


def share_access_parameters(organisation: str, share: str) -> dict[str, str]:
    """Output scope -> SSM parameter path, for each value a share with ``access`` publishes."""
    return {
        SUBMITTER_ROLE_ARNS_SCOPE: submitter_role_arn_parameter(organisation, share),
        EXECUTION_ROLE_ARNS_SCOPE: execution_role_arn_parameter(organisation, share),
        TEAM_BUCKETS_SCOPE: bucket_parameter(organisation, share),
        TRAINING_JOB_PREFIXES_SCOPE: training_job_prefix_parameter(organisation, share),
    }


NOTIFICATION_TOPIC_OUTPUT = "NotificationTopicArn"
"""Stack output (no SSM parameter): the SNS topic of the queue's preemption and FAILED-job
notifications, for subscribers outside the organisation file (e.g. an SQS queue's policy)."""
DASHBOARD_OUTPUT = "DashboardName"
"""Stack output (no SSM parameter): the name of the organisation's CloudWatch dashboard."""


PRICE_CACHE_VARIABLE = "QUOTA_PRICE_CACHE"
"""Environment variable naming the directory of the runtime's price cache when set (the
emulator's pytest sandbox points it at an empty directory, so a test never reads prices the
user's machine fetched from AWS)."""
