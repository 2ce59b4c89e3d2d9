"""What the account allows: each instance type's capacity against SageMaker's training quotas.

SageMaker refuses a training job beyond the account's quota ``<type> for training job usage``
(Service Quotas, service code ``sagemaker``) with ``ResourceLimitExceeded``, however much the
service environment allows; the organisation needs, per type, its service environment's
capacity (or its plans' instances, when larger).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from quota_constructs.model.organisation import Organisation
from quota_constructs.model.problems import Problem
from quota_constructs.model.training_plan import peak_plan_instances

TRAINING_QUOTA_SUFFIX = " for training job usage"


@dataclass(frozen=True)
class AccountQuota:
    """One applied quota: its code and value (instances)."""

    code: str
    value: float


def needed_instances(org: Organisation) -> dict[str, int]:
    """Per instance type: the most instances the organisation can run at once."""
    capacity = org.queue.service_environment_capacity()
    return {t: max(n, peak_plan_instances(org.training_plans, t)) for t, n in capacity.items()}


def quota_problems(org: Organisation, quotas: Mapping[str, AccountQuota]) -> list[Problem]:
    """One problem per type whose quota is missing or below what the organisation needs."""
    problems = []
    for itype, need in needed_instances(org).items():
        name = f"{itype}{TRAINING_QUOTA_SUFFIX}"
        quota = quotas.get(itype)
        if quota is None:
            problems.append(
                Problem(
                    itype,
                    need,
                    f"the account has no quota '{name}' (Service Quotas, sagemaker): SageMaker "
                    "would answer ResourceLimitExceeded",
                    f"request a quota of {need} for '{name}'",
                )
            )
        elif quota.value < need:
            problems.append(
                Problem(
                    itype,
                    quota.value,
                    f"the organisation runs up to {need} x {itype} but the account's quota "
                    f"'{name}' is {quota.value:g}: SageMaker would answer ResourceLimitExceeded",
                    f"aws service-quotas request-service-quota-increase --service-code sagemaker "
                    f"--quota-code {quota.code} --desired-value {need}",
                )
            )
    return problems
