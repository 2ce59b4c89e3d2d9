"""Documented rules of SSM's parameter reads, over HTTP: each test shows one sentence of
botocore's documentation holding (listed in ``documented_rules.py`` and docs/emulator.md)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import EmulatorServer

ROOT = "/quota/seed-demo"
QUEUE_NAME = f"{ROOT}/job-queue/name"


@pytest.fixture
def ssm(emulator: EmulatorServer) -> Any:
    return emulator.client("ssm")


def refusal(call: Any, **params: Any) -> dict[str, str]:
    with pytest.raises(ClientError) as caught:
        call(**params)
    return dict(caught.value.response["Error"])


def test_spaces_around_a_name_are_removed(ssm: Any) -> None:
    found = ssm.get_parameter(Name=f"  {QUEUE_NAME} ")["Parameter"]

    assert (found["Name"], found["Value"]) == (QUEUE_NAME, "seed-demo-queue")


def test_rejects_spaces_inside_a_name(ssm: Any) -> None:
    error = refusal(ssm.get_parameter, Name="/quota/seed demo/job-queue/name")

    assert error["Code"] == "ValidationException"
    assert "parameter names can't contain spaces" in error["Message"]


def test_a_parameter_is_found_by_its_arn(ssm: Any) -> None:
    arn = ssm.get_parameter(Name=QUEUE_NAME)["Parameter"]["ARN"]

    assert ssm.get_parameter(Name=arn)["Parameter"]["Name"] == QUEUE_NAME


def test_a_version_selector_picks_the_version(ssm: Any) -> None:
    first = ssm.get_parameter(Name=f"{QUEUE_NAME}:1")["Parameter"]
    other = refusal(ssm.get_parameter, Name=f"{QUEUE_NAME}:2")
    label = refusal(ssm.get_parameter, Name=f"{QUEUE_NAME}:prod")

    assert (first["Name"], first["Version"]) == (QUEUE_NAME, 1)
    assert other["Code"] == "ParameterVersionNotFound"
    assert label["Code"] == "ParameterNotFound"


def test_get_parameters_lists_alphabetically(ssm: Any) -> None:
    names = [f"{ROOT}/quota-shares/QS2/arn", QUEUE_NAME, f"{ROOT}/job-queue/arn"]

    answer = ssm.get_parameters(Names=[*names, "/nowhere"])

    assert [p["Name"] for p in answer["Parameters"]] == sorted(names)
    assert answer["InvalidParameters"] == ["/nowhere"]


@pytest.mark.parametrize("path", ["quota/seed-demo", "/" + "/".join("l" * 16)])
def test_rejects_a_path_that_is_not_a_hierarchy(ssm: Any, path: str) -> None:
    error = refusal(ssm.get_parameters_by_path, Path=path)

    assert error["Code"] == "ValidationException"
    assert (
        "hierarchies start with a forward slash (/) and have at most 15 levels" in error["Message"]
    )


def test_accepts_a_path_of_15_levels(ssm: Any) -> None:
    path = "/" + "/".join("l" * 15)

    assert ssm.get_parameters_by_path(Path=path)["Parameters"] == []


def test_path_filters_by_type_key_id_and_label(ssm: Any) -> None:
    def names(key: str, values: list[str]) -> list[str]:
        filters = [{"Key": key, "Values": values}]
        found = ssm.get_parameters_by_path(Path=ROOT, Recursive=True, ParameterFilters=filters)
        return [p["Name"] for p in found["Parameters"]]

    assert QUEUE_NAME in names("Type", ["String"])
    assert names("Type", ["SecureString"]) == []
    assert names("Label", ["prod"]) == names("KeyId", ["alias/aws/ssm"]) == []


@pytest.mark.parametrize("key", ["tag:team", "DataType", "Name", "Path", "Tier"])
def test_rejects_path_filters_it_does_not_support(ssm: Any, key: str) -> None:
    error = refusal(
        ssm.get_parameters_by_path, Path=ROOT, ParameterFilters=[{"Key": key, "Values": ["x"]}]
    )

    assert error["Code"] == "ValidationException"
    assert f"the key {key!r} isn't supported for GetParametersByPath" in error["Message"]
