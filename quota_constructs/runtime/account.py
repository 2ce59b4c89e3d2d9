"""Owns reading the account's SageMaker training-job quotas from Service Quotas (read-only)."""

from __future__ import annotations

from typing import Any

from quota_constructs.model.account_quotas import TRAINING_QUOTA_SUFFIX, AccountQuota


def training_job_quotas(client: Any) -> dict[str, AccountQuota]:
    """Per instance type, the applied ``<type> for training job usage`` quota (code, value).

    ``ListServiceQuotas`` for service code ``sagemaker``, paginated by botocore.
    """
    pages = client.get_paginator("list_service_quotas").paginate(ServiceCode="sagemaker")
    found = {}
    for page in pages:
        for quota in page.get("Quotas", []):
            name = str(quota.get("QuotaName", ""))
            if name.endswith(TRAINING_QUOTA_SUFFIX) and name.startswith("ml."):
                itype = name.removesuffix(TRAINING_QUOTA_SUFFIX)
                found[itype] = AccountQuota(str(quota["QuotaCode"]), float(quota["Value"]))
    return found
