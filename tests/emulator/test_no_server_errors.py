"""No request makes the emulator answer 5xx: bad values, wrong types and malformed bodies are
400s naming the field; a 500 means an emulator bug, logged with its traceback."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

from quota_constructs.local.emulator import Emulator
from quota_constructs.local.state.job_service import JobIds
from quota_constructs.local.testing import SEED_DEMO
from quota_constructs.local.wire.server import EmulatorApp
from tests.emulator.model_walk import served_operations
from tests.helpers import payload

SEED = 3
JSON_TYPE = "application/json"
AMZ_JSON = "application/x-amz-json-1.1"
OPERATIONS = served_operations()
QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/seed-demo-queue"
_IDS = JobIds(SEED)
JOB_IDS = [_IDS.next() for _ in range(3)]
"""The ids of the jobs the fixture submits first (same seed, same ids)."""
WORDS = [
    "seed-demo-queue",
    QUEUE_ARN,
    f"{QUEUE_ARN}/quota-share/QS1",
    "QS1",
    "QS2",
    "ml.g5.xlarge",
    "SAGEMAKER_TRAINING",
    "ENABLED",
    "DISABLED",
    "RUNNING",
    "JOB_NAME",
    "AFTER_CREATED_AT",
    "BEFORE_CREATED_AT",
    "QUOTA_SHARE_NAME",
    "quota.local/duration-seconds",
    "quota.local/outcome",
    "quota.local/failure-reason",
    "/quota/seed-demo/",
    *JOB_IDS,
    *(f"arn:aws:batch:us-east-1:123456789012:service-job/{j}" for j in JOB_IDS),
    "",
    "*",
    "-1",
    "1e99",
    "nan",
    "FAILED",
]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
PAYLOADS = st.fixed_dictionaries(
    {},
    optional={
        "ResourceConfig": st.fixed_dictionaries(
            {},
            optional={
                "InstanceType": st.sampled_from(["ml.g5.xlarge", "ml.p4d.24xlarge", "x"]) | JSON,
                "InstanceCount": st.integers(-1, 5) | JSON,
                "InstanceGroups": JSON,
            },
        )
        | JSON,
        "StoppingCondition": st.fixed_dictionaries(
            {}, optional={"MaxRuntimeInSeconds": st.integers(-5, 10**6) | JSON}
        ),
        "OutputDataConfig": JSON,
    },
).map(json.dumps)


SHARE_ARNS = [f"{QUEUE_ARN}/quota-share/QS{n}" for n in (1, 2, 3)]
NAMED: dict[str, st.SearchStrategy[Any]] = {
    "jobQueue": st.sampled_from(["seed-demo-queue", QUEUE_ARN]),
    "quotaShareName": st.sampled_from(["QS1", "QS2", "QS3", "QS4", "new-share"]),
    "quotaShareArn": st.sampled_from(SHARE_ARNS),
    "resourceArn": st.sampled_from([QUEUE_ARN, *SHARE_ARNS]),
    "jobId": st.sampled_from(WORDS[-len(JOB_IDS) * 2 - 6 : -6]),
    "jobName": st.sampled_from(["j", "train-1", "x" * 128]),
    "serviceRequestPayload": st.just(payload()) | PAYLOADS,
    "serviceEnvironment": st.sampled_from(["seed-demo-training"]),
}
"""Values that name what the emulator holds, for members that name something."""


def rarely_wrong(right: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``right`` 49 times in 50, any JSON value (probably the wrong type) otherwise."""
    return st.sampled_from(range(50)).flatmap(lambda n: JSON if n == 37 else right)


def values(shape: Any, depth: int = 0, name: str = "") -> st.SearchStrategy[Any]:
    """Plausible and implausible values of ``shape``: mostly the right type and edge values."""
    kind = shape.type_name
    if depth > 4:
        return JSON
    if name in NAMED and kind == "string":
        return rarely_wrong(NAMED[name] | NAMED[name] | st.sampled_from(WORDS))
    if kind == "structure":
        members = {n: values(m, depth + 1, n) for n, m in shape.members.items()}
        required = {n: members.pop(n) for n in shape.required_members}
        right: st.SearchStrategy[Any] = st.fixed_dictionaries(required, optional=members)
    elif kind == "list":
        right = st.lists(values(shape.member, depth + 1), max_size=3)
    elif kind == "map":
        keys = st.sampled_from(WORDS) | st.text(max_size=4)
        right = st.dictionaries(keys, values(shape.value, depth + 1), max_size=3)
    elif kind == "string" and shape.enum:
        right = st.sampled_from(shape.enum)
    elif kind == "string":
        right = st.sampled_from(WORDS) | PAYLOADS | st.text(max_size=12)
    elif kind in ("integer", "long"):
        right = st.integers(-2, 12) | st.integers(-5, 20_000) | st.integers()
    else:
        right = JSON
    return rarely_wrong(right)


def flattened(shape: Any, value: Any, prefix: str = "") -> dict[str, str]:
    """``value`` as a query-protocol form (``Tags.member.1.Key``); a value of the wrong type is
    sent as its text, as a careless client would."""
    kind = shape.type_name
    if kind == "structure" and isinstance(value, dict):
        form: dict[str, str] = {}
        for name, item in value.items():
            member = shape.members.get(name)
            key = f"{prefix}.{name}" if prefix else name
            form.update(flattened(member, item, key) if member is not None else {key: str(item)})
        return form
    if kind == "list" and isinstance(value, list):
        form = {}
        for index, item in enumerate(value, 1):
            form.update(flattened(shape.member, item, f"{prefix}.member.{index}"))
        return form or {prefix: ""}
    if isinstance(value, bool):
        return {prefix or "Value": "true" if value else "false"}
    return {prefix or "Value": "" if value is None else str(value)}


def http_request(op: Any, params: Any) -> dict[str, Any]:
    """Method, path, query, headers and body as a client would put ``params`` on the wire."""
    service = op.service_model.service_name
    if op.service_model.metadata["protocol"] == "query":
        form = {"Action": op.name, "Version": op.service_model.api_version}
        return {
            "method": "POST",
            "path": "/",
            "data": {**flattened(op.input_shape, params), **form},
        }
    if service != "batch":
        prefix = op.service_model.metadata["targetPrefix"]
        return {
            "method": "POST",
            "path": "/",
            "headers": {"X-Amz-Target": f"{prefix}.{op.name}"},
            "content_type": "application/x-amz-json-1.1",
            "data": json.dumps(params),
        }
    path = op.http["requestUri"].split("?", 1)[0]
    query: dict[str, Any] = {}
    body = dict(params) if isinstance(params, dict) else params
    for name, member in op.input_shape.members.items() if isinstance(body, dict) else ():
        location = member.serialization.get("location")
        if name in body and location == "uri":
            path = path.replace(
                "{" + member.serialization["name"] + "}", quote(str(body.pop(name)), safe="")
            )
        elif name in body and location == "querystring":
            query[member.serialization["name"]] = body.pop(name)
    path = path.replace("{resourceArn}", "x")
    return {
        "method": op.http["method"],
        "path": path + (f"?{urlencode(query, doseq=True)}" if query else ""),
        "headers": {},
        "content_type": JSON_TYPE,
        "data": json.dumps(body),
    }


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    emulator = Emulator(seed=SEED)
    emulator.provision_file(SEED_DEMO)
    for share in ("QS1", "QS1", "QS3"):
        submit = {
            "jobName": "j",
            "jobQueue": "seed-demo-queue",
            "serviceJobType": "SAGEMAKER_TRAINING",
            "quotaShareName": share,
            "serviceRequestPayload": payload(),
        }
        emulator.call("batch", "SubmitServiceJob", submit)
    emulator.advance(30)
    yield Client(EmulatorApp(emulator))


@pytest.mark.slow
@pytest.mark.parametrize("op", OPERATIONS, ids=[op.name for op in OPERATIONS])
@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_request_gets_a_server_error(client: Client, op: Any, data: st.DataObject) -> None:
    params = data.draw(values(op.input_shape))

    answer = client.open(**http_request(op, params))

    assert answer.status_code < 500, answer.get_data(as_text=True)


@pytest.mark.slow
@settings(max_examples=60)
@given(
    path=st.sampled_from([op.http["requestUri"] for op in OPERATIONS]), body=st.binary(max_size=40)
)
def test_no_body_gets_a_server_error(client: Client, path: str, body: bytes) -> None:
    answer = client.post(path, data=body, content_type=JSON_TYPE)

    assert answer.status_code < 500, answer.get_data(as_text=True)


@pytest.mark.parametrize(
    "value",
    ["yesterday", "-5", "1.5e3", "", "\uff11\uff12"],
)
def test_rejects_a_malformed_created_at_filter_naming_the_field(client: Client, value: str) -> None:
    body = {
        "jobQueue": "seed-demo-queue",
        "filters": [{"name": "AFTER_CREATED_AT", "values": [value]}],
    }

    answer = client.post("/v1/listservicejobs", data=json.dumps(body), content_type=JSON_TYPE)

    assert answer.status_code == 400
    assert answer.json is not None
    assert answer.json["__type"] == "ClientException"
    assert "filters[0].values[0]" in answer.json["message"]


def test_an_emulator_bug_is_a_logged_500_not_a_client_error(
    client: Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(params: Any) -> dict[str, Any]:
        empty: dict[str, dict[str, Any]] = {}
        return empty["missing"]  # a KeyError inside the emulator

    app = client.application
    assert isinstance(app, EmulatorApp)
    monkeypatch.setitem(app.emulator._batch, "DescribeServiceJob", broken)

    with caplog.at_level(logging.ERROR, logger="quota_constructs.local.wire.server"):
        answer = client.post(
            "/v1/describeservicejob", data=json.dumps({"jobId": "x"}), content_type=JSON_TYPE
        )

    assert answer.status_code == 500
    assert answer.json is not None and answer.json["__type"] == "ServerException"
    (record,) = caplog.records
    assert record.exc_info is not None and record.exc_info[0] is KeyError


DEEP = "[" * 50_000 + "]" * 50_000
SUBMIT = {
    "jobName": "j",
    "jobQueue": "seed-demo-queue",
    "serviceJobType": "SAGEMAKER_TRAINING",
    "quotaShareName": "QS1",
}


def payload_with(**resource_config: Any) -> str:
    """A training-job payload whose ``ResourceConfig`` is ``resource_config``."""
    return json.dumps({**json.loads(payload()), "ResourceConfig": resource_config})


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (DEEP, "nested deeper than"),
        ('{"jobQueue": ' + "[" * 21 + "]" * 21 + "}", "nested deeper than 20 levels"),
        ('{"maxResults": NaN}', "NaN is not a JSON number"),
        ('{"maxResults": 1e999}', "out of range"),
        ('{"jobQueue": "a", "jobQueue": "b"}', "duplicate key 'jobQueue'"),
        (b"\xff\xfe{}", "not UTF-8"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_rejects_an_unreadable_body_with_a_400(
    client: Client, body: str | bytes, expected: str
) -> None:
    answer = client.post("/v1/describejobqueues", data=body, content_type=JSON_TYPE)

    assert answer.status_code == 400 and answer.json is not None
    assert answer.json["__type"] == "ClientException" and expected in answer.json["message"]


@pytest.mark.parametrize("target", ["AmazonSSM.GetParameter", "SageMaker.DescribeTrainingJob"])
def test_rejects_deep_json_to_a_json_service_with_a_400(client: Client, target: str) -> None:
    answer = client.post("/", data=DEEP, headers={"X-Amz-Target": target}, content_type=AMZ_JSON)

    assert answer.status_code == 400 and answer.json is not None
    assert answer.json["__type"] == "SerializationException"


@pytest.mark.parametrize(
    ("service_payload", "expected"),
    [
        ("[" * 4000 + "]" * 4000, "nested deeper than 20 levels"),
        ('{"ResourceConfig": {"InstanceCount": NaN}}', "NaN is not a JSON number"),
        ('{"StoppingCondition": {"MaxRuntimeInSeconds": Infinity}}', "Infinity"),
        ('{"a": 1, "a": 2}', "duplicate key"),
        ("[]", "not a JSON object"),
        ('"text"', "not a JSON object"),
    ],
)
def test_rejects_a_bad_payload_with_a_400_naming_it(
    client: Client, service_payload: str, expected: str
) -> None:
    body = {**SUBMIT, "serviceRequestPayload": service_payload}

    answer = client.post("/v1/submitservicejob", data=json.dumps(body), content_type=JSON_TYPE)

    assert answer.status_code == 400 and answer.json is not None
    assert answer.json["message"].startswith("serviceRequestPayload")
    assert expected in answer.json["message"]


@pytest.mark.parametrize(
    ("service_payload", "expected"),
    [
        (payload_with(InstanceGroups=5), "InstanceGroups"),
        (payload_with(InstanceGroups=["a"]), "InstanceGroups[0]: not an object"),
        (payload_with(InstanceGroups=[{"InstanceType": 5}]), "InstanceGroups[0]"),
        (payload_with(InstanceType="ml.g5.xlarge", InstanceCount="1"), "InstanceCount"),
        (payload_with(InstanceType=["ml.g5.xlarge"], InstanceCount=1), "InstanceType"),
        (payload_with(InstanceType="ml.g5.xlarge", InstanceCount=1e308), "InstanceCount"),
    ],
)
def test_a_payload_without_schedulable_capacity_fails_its_job_naming_it(
    client: Client, service_payload: str, expected: str
) -> None:
    body = {**SUBMIT, "serviceRequestPayload": service_payload}

    answer = client.post("/v1/submitservicejob", data=json.dumps(body), content_type=JSON_TYPE)
    assert answer.status_code == 200 and answer.json is not None
    described = client.post(
        "/v1/describeservicejob",
        data=json.dumps({"jobId": answer.json["jobId"]}),
        content_type=JSON_TYPE,
    )

    assert described.json is not None and described.json["status"] == "FAILED"
    assert expected in described.json["statusReason"]


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("JOB_NAME", []),
        ("QUOTA_SHARE_NAME", []),
        ("AFTER_CREATED_AT", []),
        ("BEFORE_CREATED_AT", ["nan"]),
        ("BEFORE_CREATED_AT", ["1e400"]),
        ("AFTER_CREATED_AT", ["-99999999999999999999999999"]),
        ("AFTER_CREATED_AT", ["2026-01-01T00:00:00Z"]),
    ],
)
def test_rejects_an_empty_or_malformed_filter_with_a_400(
    client: Client, name: str, values: list[str]
) -> None:
    body = {"jobQueue": "seed-demo-queue", "filters": [{"name": name, "values": values}]}

    answer = client.post("/v1/listservicejobs", data=json.dumps(body), content_type=JSON_TYPE)

    assert answer.status_code == 400 and answer.json is not None
    assert answer.json["message"].startswith("filters[0].values")


JSON_TEXT = st.lists(
    st.sampled_from(["{", "}", "[", "]", '"', ":", ",", "1", "e", "-", "NaN", "Infinity", "a"]),
    max_size=400,
).map("".join)
"""Text made of JSON's pieces: deep, unbalanced, non-finite, mostly invalid."""


@pytest.mark.slow
@settings(max_examples=60)
@given(
    path=st.sampled_from(
        [op.http["requestUri"] for op in OPERATIONS if "{" not in op.http["requestUri"]]
    ),
    body=JSON_TEXT,
)
def test_no_json_like_text_gets_a_server_error(client: Client, path: str, body: str) -> None:
    answer = client.post(path, data=body, content_type=JSON_TYPE)

    assert answer.status_code < 500, answer.get_data(as_text=True)


@pytest.mark.slow
@settings(max_examples=60)
@given(service_payload=JSON_TEXT | PAYLOADS)
def test_no_payload_gets_a_server_error(client: Client, service_payload: str) -> None:
    body = {**SUBMIT, "serviceRequestPayload": service_payload}

    answer = client.post("/v1/submitservicejob", data=json.dumps(body), content_type=JSON_TYPE)

    assert answer.status_code < 500, answer.get_data(as_text=True)
