"""Owns the handlers of the SSM read operations over the emulator's parameter store.

``GetParameter``, ``GetParameters`` and ``GetParametersByPath`` (paginated, ``Recursive``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quota_constructs.local.errors import InvalidParameter
from quota_constructs.local.handlers import Handler
from quota_constructs.local.handlers.pagination import paginate
from quota_constructs.local.parameter_store import Parameter, ParameterStore

MAX_BY_PATH_RESULTS = 10


def parameter_to_api(parameter: Parameter) -> dict[str, Any]:
    """A String parameter as SSM describes it."""
    return {
        "Name": parameter.name,
        "Type": "String",
        "Value": parameter.value,
        "Version": 1,
        "LastModifiedDate": parameter.modified_epoch,
        "ARN": parameter.arn,
        "DataType": "text",
    }


class ParameterHandlers:
    """Handlers of the SSM read operations."""

    def __init__(self, store: ParameterStore) -> None:
        self.store = store

    def operations(self) -> dict[str, Handler]:
        """Operation name -> handler, for every operation of this module."""
        return {
            "GetParameter": self.get_parameter,
            "GetParameters": self.get_parameters,
            "GetParametersByPath": self.get_parameters_by_path,
        }

    def get_parameter(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"Parameter": parameter_to_api(self.store.get(params["Name"]))}

    def get_parameters(self, params: Mapping[str, Any]) -> dict[str, Any]:
        found, missing = self.store.get_many(params["Names"])
        return {"Parameters": [parameter_to_api(p) for p in found], "InvalidParameters": missing}

    def get_parameters_by_path(self, params: Mapping[str, Any]) -> dict[str, Any]:
        path = params["Path"]
        if params.get("ParameterFilters"):
            raise InvalidParameter(
                "ParameterFilters: not served by the quota emulator; filter the parameters "
                "it returns yourself"
            )
        if not path.startswith("/"):
            raise InvalidParameter(f"Path {path!r} must start with '/', e.g. /quota/")
        size = params.get("MaxResults") or MAX_BY_PATH_RESULTS
        if size > MAX_BY_PATH_RESULTS:
            raise InvalidParameter(f"MaxResults must be at most 10 (got {size})")
        found = self.store.under(path, recursive=bool(params.get("Recursive")))
        page, token = paginate(found, size, params.get("NextToken"))
        return {"Parameters": [parameter_to_api(p) for p in page], "NextToken": token}
