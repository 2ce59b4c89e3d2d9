"""A ``null`` or a value of the wrong type anywhere in any served operation's JSON input is a 400
naming the member, never a 5xx (``capacityLimits: null`` and ``onStatusReason: null`` were 500s).

STS's query protocol is left out: a form has no ``null`` and no types (its values are text,
covered by ``test_no_server_errors``)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from botocore.model import OperationModel, Shape
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client, TestResponse

from quota_constructs.local.emulator import Emulator
from quota_constructs.local.testing import SEED_DEMO
from quota_constructs.local.wire.server import EmulatorApp
from quota_constructs.safe_load import MAX_INTEGER_DIGITS
from tests.emulator.model_walk import Step, member_paths, render, request_at, served_operations

JSON_OPERATIONS = [op for op in served_operations() if op.metadata["protocol"] != "query"]
MEMBERS = [
    (op, path, shape)
    for op in JSON_OPERATIONS
    for path, shape in member_paths(op)
    if "location" not in op.input_shape.members[str(path[0])].serialization
]
IDS = [f"{op.name}:{render(path, key='k0')}" for op, path, _ in MEMBERS]
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
"""Numbers JSON can carry (``NaN`` and ``Infinity`` are not JSON)."""
SCALARS = st.integers(-5, 5) | st.booleans() | st.text(max_size=4) | FLOATS
CONTAINERS = st.lists(SCALARS, max_size=2) | st.dictionaries(
    st.text(max_size=3), SCALARS, max_size=2
)
READABLE_INTEGERS = st.integers(-(10**MAX_INTEGER_DIGITS) + 1, 10**MAX_INTEGER_DIGITS - 1)
"""Integers the JSON reader reads (a longer literal is refused before any member is checked,
naming the body: docs/input-limits.md)."""
WRONG_TYPES: dict[str, st.SearchStrategy[Any]] = {
    "structure": SCALARS | st.lists(SCALARS, max_size=2),
    "map": SCALARS | st.lists(SCALARS, max_size=2),
    "list": SCALARS | st.dictionaries(st.text(max_size=3), SCALARS, max_size=2),
    "string": READABLE_INTEGERS | st.booleans() | FLOATS | CONTAINERS,
    "integer": st.text(max_size=4) | st.booleans() | st.floats(0.5, 0.9) | CONTAINERS,
    "long": st.text(max_size=4) | st.booleans() | st.floats(0.5, 0.9) | CONTAINERS,
    "double": st.text(max_size=4) | st.booleans() | CONTAINERS,
    "float": st.text(max_size=4) | st.booleans() | CONTAINERS,
    "boolean": READABLE_INTEGERS | st.text(max_size=4) | CONTAINERS,
    "timestamp": st.booleans() | CONTAINERS,
    "blob": READABLE_INTEGERS | st.booleans() | CONTAINERS,
}
"""Values of any type but the member's."""


@pytest.fixture(scope="module")
def client() -> Client:
    emulator = Emulator(seed=1)
    emulator.provision_file(SEED_DEMO)
    return Client(EmulatorApp(emulator))


def send(client: Client, op: OperationModel, request: dict[str, Any]) -> TestResponse:
    """``request`` on the wire as botocore would send it, nulls and wrong types kept."""
    if op.service_model.service_name != "batch":
        target = f"{op.metadata['targetPrefix']}.{op.name}"
        return client.post(
            "/",
            data=json.dumps(request),
            headers={"X-Amz-Target": target},
            content_type="application/x-amz-json-1.1",
        )
    path = op.http["requestUri"].split("?", 1)[0]
    for name, member in op.input_shape.members.items():
        if member.serialization.get("location") == "uri" and name in request:
            uri_name = "{" + member.serialization["name"] + "}"
            path = path.replace(uri_name, quote(str(request.pop(name)), safe=""))
    return client.open(
        method=op.http["method"],
        path=path,
        data=json.dumps(request),
        content_type="application/json",
    )


def message_of(answer: TestResponse) -> str:
    assert answer.status_code == 400, answer.get_data(as_text=True)
    return str(answer.get_json()["message"])


@pytest.mark.parametrize(("op", "path", "shape"), MEMBERS, ids=IDS)
def test_rejects_null_naming_the_member(
    client: Client, op: OperationModel, path: tuple[Step, ...], shape: Shape
) -> None:
    answer = send(client, op, request_at(op, path, None))

    assert f"{render(path, key='k0')}: must not be null" in message_of(answer)


def test_rejects_null_capacity_limits_of_update_quota_share(client: Client) -> None:
    share = "arn:aws:batch:us-east-1:123456789012:job-queue/seed-demo-queue/quota-share/QS1"
    body = {"quotaShareArn": share}
    answer = client.post(
        "/v1/updatequotashare",
        data=json.dumps({**body, "capacityLimits": None}),
        content_type="application/json",
    )

    assert message_of(answer) == (
        "UpdateQuotaShare: capacityLimits: must not be null; "
        "send a JSON array, or leave the member out"
    )


@pytest.mark.slow
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_rejects_any_wrong_type_naming_the_member(client: Client, data: st.DataObject) -> None:
    op, path, shape = data.draw(st.sampled_from(MEMBERS), label="member")
    wrong = data.draw(st.none() | WRONG_TYPES[shape.type_name], label="value")

    answer = send(client, op, request_at(op, path, wrong))

    assert f"{render(path, key='k0')}: must" in message_of(answer)
