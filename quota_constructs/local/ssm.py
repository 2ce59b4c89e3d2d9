"""SSM Parameter Store, read side, for the parameters of provisioned organisations.

Contract 1: each organisation stack writes String parameters ``/quota/<org>/job-queue/name``,
``/quota/<org>/job-queue/arn`` and ``/quota/<org>/quota-shares/<share>/arn``. The emulator
answers ``GetParameter``, ``GetParameters`` and ``GetParametersByPath`` for them, so runtime
code that resolves a queue by organisation name works with an SSM client on the same endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quota_constructs.local.arns import Account
from quota_constructs.local.backend import paginate
from quota_constructs.local.protocol import ApiError

MAX_BY_PATH_RESULTS = 10


@dataclass(frozen=True)
class Parameter:
    """One String parameter, as SSM describes it."""

    name: str
    value: str
    arn: str
    modified_epoch: float

    def describe(self) -> dict[str, Any]:
        return {
            "Name": self.name,
            "Type": "String",
            "Value": self.value,
            "Version": 1,
            "LastModifiedDate": self.modified_epoch,
            "ARN": self.arn,
            "DataType": "text",
        }


def _not_found(name: str) -> ApiError:
    return ApiError(
        "ParameterNotFound",
        f"Parameter {name} not found; the emulator serves /quota/<organisation>/... parameters "
        "of the organisations it provisioned",
        400,
    )


class ParameterStore:
    """Parameters by name, answering the SSM read operations."""

    def __init__(self, account: Account) -> None:
        self.account = account
        self.parameters: dict[str, Parameter] = {}

    def put(self, name: str, value: str, *, epoch: float) -> None:
        self.parameters[name] = Parameter(name, value, self.account.ssm_parameter(name), epoch)

    def get_parameter(self, params: Mapping[str, Any]) -> dict[str, Any]:
        name = params["Name"]
        parameter = self.parameters.get(name)
        if parameter is None:
            raise _not_found(name)
        return {"Parameter": parameter.describe()}

    def get_parameters(self, params: Mapping[str, Any]) -> dict[str, Any]:
        names = params["Names"]
        found = [self.parameters[n].describe() for n in names if n in self.parameters]
        return {
            "Parameters": found,
            "InvalidParameters": [n for n in names if n not in self.parameters],
        }

    def get_parameters_by_path(self, params: Mapping[str, Any]) -> dict[str, Any]:
        path = params["Path"]
        if not path.startswith("/"):
            raise ApiError(
                "ValidationException", f"Path {path!r} must start with '/', e.g. /quota/", 400
            )
        prefix = path.rstrip("/") + "/"
        recursive = bool(params.get("Recursive"))
        matches = [
            p
            for name, p in sorted(self.parameters.items())
            if name.startswith(prefix) and (recursive or "/" not in name[len(prefix) :])
        ]
        size = params.get("MaxResults") or MAX_BY_PATH_RESULTS
        if size > MAX_BY_PATH_RESULTS:
            raise ApiError(
                "ValidationException", f"MaxResults must be at most 10 (got {size})", 400
            )
        page, token = paginate(matches, size, params.get("NextToken"))
        return {"Parameters": [p.describe() for p in page], "NextToken": token}

    def operations(self) -> dict[str, Any]:
        return {
            "GetParameter": self.get_parameter,
            "GetParameters": self.get_parameters,
            "GetParametersByPath": self.get_parameters_by_path,
        }
