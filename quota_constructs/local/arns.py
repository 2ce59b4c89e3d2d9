"""AWS-format ARNs for the emulator's resources (reference section 3.1)."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT = "123456789012"


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
        return self._arn("batch", f"job-queue/{queue_name}/quota-share/{share_name}")

    def service_job(self, job_id: str) -> str:
        return self._arn("batch", f"service-job/{job_id}")

    def training_job(self, name: str) -> str:
        return self._arn("sagemaker", f"training-job/{name.lower()}")

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
