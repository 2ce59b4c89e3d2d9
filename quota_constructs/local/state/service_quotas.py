"""Owns the emulator's Service Quotas: SageMaker's training-job instance quotas it starts with.

AWS names them ``<instance type> for training job usage`` under service code ``sagemaker``
(docs/cost.md); the emulator gives each a stable made-up code (``L-`` and 8 hex digits) and
holds only the quotas it was given (:meth:`ServiceQuotas.set`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.errors import ResourceNotFound

SAGEMAKER = "sagemaker"


def training_quota_name(instance_type: str) -> str:
    """The name of SageMaker's quota on ``instance_type`` instances for training jobs."""
    return f"{instance_type} for training job usage"


@dataclass(frozen=True)
class Quota:
    """One applied quota value."""

    code: str
    name: str
    value: float


class ServiceQuotas:
    """The account's SageMaker training-job quotas, by instance type."""

    def __init__(self, account: Account) -> None:
        self.account = account
        self.quotas: dict[str, Quota] = {}

    def set(self, instance_type: str, value: float) -> Quota:
        """Give the account a quota of ``value`` instances of ``instance_type`` for training."""
        code = "L-" + hashlib.sha256(instance_type.encode()).hexdigest()[:8].upper()
        quota = Quota(code, training_quota_name(instance_type), float(value))
        self.quotas[code] = quota
        return quota

    def listed(self, service_code: str) -> list[Quota]:
        """The quotas of ``service_code`` (none but SageMaker's), sorted by name."""
        if service_code != SAGEMAKER:
            return []
        return sorted(self.quotas.values(), key=lambda q: q.name)

    def get(self, service_code: str, code: str) -> Quota:
        quota = self.quotas.get(code) if service_code == SAGEMAKER else None
        if quota is None:
            raise ResourceNotFound(f"The request failed because the quota {code} does not exist.")
        return quota
