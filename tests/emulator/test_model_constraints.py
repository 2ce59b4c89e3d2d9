"""Every constraint botocore's model declares for a served operation is the server's to enforce.

The walk finds them in the model itself (required members, enums, min/max of numbers, lengths
of strings, lists and maps, patterns); each is refused just outside its bound and accepted just
inside, by the validator and, over HTTP, by the running server.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any
from xml.etree import ElementTree

import pytest
from botocore.serialize import create_serializer

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.local.wire.api_errors import ApiError
from quota_constructs.local.wire.protocol import validate
from tests.emulator.model_walk import (
    OMIT,
    PATTERN_SAMPLES,
    PHRASES,
    Constraint,
    constraints,
    expected_path,
    leaves,
    minimal,
    request_with,
    served_operations,
)

OPERATIONS = served_operations()
CONSTRAINTS = [c for op in OPERATIONS for c in constraints(op)]
IDS = [c.id for c in CONSTRAINTS]


def problems_of(op: Any, request: dict[str, Any]) -> list[str]:
    try:
        validate(op, request)
    except ApiError as error:
        return error.message.split(": ", 1)[1].split("; ")
    return []


def about(found: list[str], constraint: Constraint, leaf: Any) -> list[str]:
    path = expected_path(constraint, leaf)
    return [p for p in found if p.startswith(f"{path}: ") and PHRASES[constraint.kind] in p]


def test_the_walk_finds_every_kind_of_constraint() -> None:
    kinds = {c.kind for c in CONSTRAINTS}

    assert kinds == set(PHRASES)
    assert len(CONSTRAINTS) > 100


def test_every_declared_pattern_has_samples() -> None:
    declared = {c.bound for c in CONSTRAINTS if c.kind == "pattern"}

    assert declared == set(PATTERN_SAMPLES)


@pytest.mark.parametrize("op", OPERATIONS, ids=[op.name for op in OPERATIONS])
def test_accepts_the_smallest_request_of_every_served_operation(op: Any) -> None:
    assert problems_of(op, minimal(op.input_shape)) == []


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=IDS)
def test_refuses_each_constraint_just_outside(constraint: Constraint) -> None:
    for leaf in leaves(constraint)[1]:
        found = problems_of(constraint.operation, request_with(constraint, leaf))

        assert len(about(found, constraint, leaf)) == 1, found


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=IDS)
def test_accepts_each_constraint_just_inside(constraint: Constraint) -> None:
    for leaf in leaves(constraint)[0]:
        found = problems_of(constraint.operation, request_with(constraint, leaf))

        assert about(found, constraint, leaf) == []
        if constraint.kind not in ("min", "max") or "pattern" not in constraint.shape.metadata:
            assert found == [], found  # nothing else is broken either


# --- over HTTP ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(org_files=[SEED_DEMO]) as running:
        yield running


def send(server: EmulatorServer, op: Any, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """``request`` serialized as botocore would send it (without its client-side checks)."""
    protocol = op.service_model.metadata["protocol"]
    wire = create_serializer(protocol, include_validation=False).serialize_to_request(request, op)
    params = wire["query_string"] or {}
    query = urllib.parse.urlencode(params, doseq=True)
    url = server.endpoint_url + wire["url_path"] + (f"?{query}" if query else "")
    body = wire["body"]
    if isinstance(body, dict):  # the query protocol's form, encoded by botocore when sent
        body = urllib.parse.urlencode(body)
    body = body if isinstance(body, bytes) else body.encode()
    http = urllib.request.Request(url, data=body or None, method=wire["method"])
    for name, value in wire["headers"].items():
        http.add_header(name, value)
    try:
        with urllib.request.urlopen(http) as answer:
            return answer.status, {}
    except urllib.error.HTTPError as error:
        return error.code, parsed_error(error.read())


def parsed_error(body: bytes) -> dict[str, Any]:
    """``__type`` and ``message`` of a JSON error, or of a query protocol's XML ErrorResponse."""
    if body.lstrip().startswith(b"<"):
        root = ElementTree.fromstring(body)
        code = root.findtext(".//{*}Code") or ""
        return {"__type": code, "message": root.findtext(".//{*}Message") or ""}
    return dict(json.loads(body))


def expressible(constraint: Constraint) -> bool:
    """Whether HTTP can carry the outside value: a URI member cannot be left out, and an empty
    query-string list is no list at all (it is then reported as missing)."""
    location = constraint.shape.serialization.get("location")
    outside = leaves(constraint)[1]
    if not outside or (constraint.kind == "required" and location == "uri"):
        return False
    return not (location == "querystring" and outside[0] == [])


OVER_HTTP = [c for c in CONSTRAINTS if expressible(c)]


@pytest.mark.parametrize("constraint", OVER_HTTP, ids=[c.id for c in OVER_HTTP])
def test_server_answers_400_naming_the_member_just_outside(
    server: EmulatorServer, constraint: Constraint
) -> None:
    leaf = leaves(constraint)[1][0]
    assert leaf is OMIT or leaf is not None

    code, error = send(server, constraint.operation, request_with(constraint, leaf))

    assert code == 400
    assert error["__type"] in ("ClientException", "ValidationException", "ValidationError")
    assert f"{expected_path(constraint, leaf)}: " in error["message"]
    assert PHRASES[constraint.kind] in error["message"]
