"""Owns the handlers of the SSM read operations over the emulator's parameter store.

``GetParameter``, ``GetParameters`` and ``GetParametersByPath`` (paginated, ``Recursive``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quota_constructs.local.handlers import Handler
from quota_constructs.local.handlers.pagination import CAPITALISED_PAGING, paginate
from quota_constructs.local.state.errors import InvalidParameter
from quota_constructs.local.state.parameter_store import Parameter, ParameterStore

MAX_BY_PATH_RESULTS = 10


def parameter_to_api(parameter: Parameter) -> dict[str, Any]:
    """A parameter as SSM describes it."""
    return {
        "Name": parameter.name,
        "Type": parameter.kind,
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
        size = params.get("MaxResults") or MAX_BY_PATH_RESULTS
        filters = params.get("ParameterFilters") or []
        for parameter_filter in filters:
            check_filter(parameter_filter)
        found = self.store.under(params["Path"], recursive=bool(params.get("Recursive")))
        found = [p for p in found if all(keeps(f, p) for f in filters)]
        page, token = paginate(
            found,
            size,
            params.get("NextToken"),
            key=lambda p: (p.name,),
            scope="GetParametersByPath",
            fields=CAPITALISED_PAGING,
        )
        return {"Parameters": [parameter_to_api(p) for p in page], "NextToken": token}


BY_PATH_FILTERS = ("Type", "KeyId", "Label")
"""SSM: "The following Key values are supported for GetParametersByPath: Type, KeyId, and
Label. The following Key values aren't supported for GetParametersByPath: tag, DataType, Name,
Path, and Tier."."""


def check_filter(parameter_filter: Mapping[str, Any]) -> None:
    """:class:`InvalidParameter` for a ``ParameterFilters`` key or option not supported here."""
    key = parameter_filter["Key"]
    if key not in BY_PATH_FILTERS:
        raise InvalidParameter(
            f"ParameterFilters: the key {key!r} isn't supported for GetParametersByPath; use "
            + ", ".join(BY_PATH_FILTERS)
        )
    option = parameter_filter.get("Option", "Equals")
    if option != "Equals":
        raise InvalidParameter(
            f"ParameterFilters: option {option!r} is not served by the quota emulator; use Equals"
        )


def keeps(parameter_filter: Mapping[str, Any], parameter: Parameter) -> bool:
    """Whether one (checked) ``ParameterFilters`` entry keeps ``parameter``: a parameter of
    version 1, without KMS key or labels."""
    if parameter_filter["Key"] == "Type":
        return parameter.kind in (parameter_filter.get("Values") or [])
    return False  # no parameter has a KMS key or a label
