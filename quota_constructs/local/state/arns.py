"""AWS-format ARNs and ids for the emulator's resources (docs/aws-semantics.md §3.1).

The quota-share and service-job ARN formats are :mod:`quota_constructs.api_shapes`'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from quota_constructs.api_shapes import quota_share_arn, service_job_arn
from quota_constructs.model import BATCH_TRAINING_JOB_PREFIX, TRAINING_JOB_NAME_MAX

DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT = "123456789012"
JOB_ID_PATTERN = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
"""A service job id: a lower-case UUID, as Batch issues them."""


@dataclass(frozen=True)
class Account:
    """The emulated partition, region and account that every ARN names."""

    region: str = DEFAULT_REGION
    account_id: str = DEFAULT_ACCOUNT
    partition: str = "aws"

    def _arn(self, service: str, resource: str) -> str:
        return f"arn:{self.partition}:{service}:{self.region}:{self.account_id}:{resource}"

    def scheduling_policy(self, name: str) -> str:
        return self._arn("batch", f"scheduling-policy/{name}")

    def service_environment(self, name: str) -> str:
        return self._arn("batch", f"service-environment/{name}")

    def job_queue(self, name: str) -> str:
        return self._arn("batch", f"job-queue/{name}")

    def quota_share(self, queue_name: str, share_name: str) -> str:
        return quota_share_arn(self.job_queue(queue_name), share_name)

    def service_job(self, job_id: str) -> str:
        return service_job_arn(self.partition, self.region, self.account_id, job_id)

    def training_job(self, name: str) -> str:
        return self._arn("sagemaker", f"training-job/{name}")

    def training_plan(self, name: str) -> str:
        return self._arn("sagemaker", f"training-plan/{name}")

    def reserved_capacity(self, name: str) -> str:
        return self._arn("sagemaker", f"reserved-capacity/{name}")

    def service_quota(self, service_code: str, quota_code: str) -> str:
        return self._arn("servicequotas", f"{service_code}/{quota_code}")

    def owns(self, partition: str, region: str, account_id: str) -> bool:
        """Whether an ARN with these parts names something in this emulated account."""
        return (partition, region, account_id) == (self.partition, self.region, self.account_id)

    def ssm_parameter(self, name: str) -> str:
        return self._arn("ssm", f"parameter{name}")

    def name_from(self, ref: str, kind: str) -> str:
        """The resource name in ``ref``, which is either a name or an ARN of ``kind``.

        ``kind`` is the ARN resource prefix (``job-queue``, ``service-environment``, ...).
        """
        marker = f":{kind}/"
        if ref.startswith("arn:") and marker in ref:
            return ref.split(marker, 1)[1]
        return ref


def training_job_name(job_name: str, attempt_id: str) -> str:
    """The SageMaker training job a service-job attempt runs as: ``AWSBatch<job><attempt id>``.

    AWS's examples keep the job name as written. A training job name is at most 63 letters,
    digits and hyphens, so ``_`` becomes ``-`` and a long job name is cut (UNCONFIRMED).
    """
    room = TRAINING_JOB_NAME_MAX - len(BATCH_TRAINING_JOB_PREFIX) - len(attempt_id)
    return f"{BATCH_TRAINING_JOB_PREFIX}{job_name.replace('_', '-')[:room]}{attempt_id}"
