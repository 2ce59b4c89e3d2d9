"""Owns Service Quotas' ``ListServiceQuotas`` and ``GetServiceQuota`` for SageMaker's
training-job instance quotas (what ``quota org preflight`` reads)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quota_constructs.local.handlers import Handler
from quota_constructs.local.handlers.pagination import CAPITALISED_PAGING, paginate
from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.service_quotas import Quota, ServiceQuotas


class ServiceQuotaHandlers:
    """The Service Quotas operations over one :class:`ServiceQuotas` store."""

    def __init__(self, quotas: ServiceQuotas, account: Account) -> None:
        self.quotas = quotas
        self.account = account

    def operations(self) -> dict[str, Handler]:
        """Operation name -> handler, for every operation of this module."""
        return {"ListServiceQuotas": self.list, "GetServiceQuota": self.get}

    def list(self, params: Mapping[str, Any]) -> dict[str, Any]:
        quotas = self.quotas.listed(params["ServiceCode"])
        if "QuotaCode" in params:
            quotas = [q for q in quotas if q.code == params["QuotaCode"]]
        page, token = paginate(
            quotas,
            params.get("MaxResults"),
            params.get("NextToken"),
            key=lambda q: (q.name, q.code),
            scope="ListServiceQuotas",
            fields=CAPITALISED_PAGING,
        )
        return {
            "Quotas": [self._shape(params["ServiceCode"], q) for q in page],
            **({"NextToken": token} if token else {}),
        }

    def get(self, params: Mapping[str, Any]) -> dict[str, Any]:
        quota = self.quotas.get(params["ServiceCode"], params["QuotaCode"])
        return {"Quota": self._shape(params["ServiceCode"], quota)}

    def _shape(self, service_code: str, quota: Quota) -> dict[str, Any]:
        return {
            "ServiceCode": service_code,
            "ServiceName": "Amazon SageMaker",
            "QuotaArn": self.account.service_quota(service_code, quota.code),
            "QuotaCode": quota.code,
            "QuotaName": quota.name,
            "Value": quota.value,
            "Unit": "None",
            "Adjustable": True,
            "GlobalQuota": False,
        }
