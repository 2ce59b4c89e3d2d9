"""The emulator's control endpoints (``/_quota/*``) over HTTP: bad input is a 400 naming the
field, the value and the range, and never changes the clock."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.local.wire.server import MAX_ADVANCE_SECONDS
from tests.emulator.helpers import submit

RANGE = f"from 0 to {MAX_ADVANCE_SECONDS}"


def call(url: str, body: bytes | None = None) -> tuple[int, Any]:
    """Status and JSON body of a GET (no body) or POST."""
    method = "GET" if body is None else "POST"
    request = urllib.request.Request(url, data=body, method=method)
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        ("NaN", "nan"),
        ("Infinity", "inf"),
        ("-Infinity", "-inf"),
        ("1e308", "1e+308"),
        ("1e999", "inf"),
        ("-1", "-1"),
        ("-0.5", "-0.5"),
        (str(MAX_ADVANCE_SECONDS + 1), str(MAX_ADVANCE_SECONDS + 1)),
        ('"60"', "'60'"),
        ("true", "True"),
        ("null", "None"),
        ("[60]", "[60]"),
        ('{"s": 1}', "{'s': 1}"),
    ],
)
def test_rejects_advance_by_a_bad_number_naming_field_value_and_range(
    emulator: EmulatorServer, seconds: str, shown: str
) -> None:
    url = f"{emulator.endpoint_url}/_quota/advance"

    code, body = call(url, f'{{"seconds": {seconds}}}'.encode())

    assert code == 400 and body["__type"] == "ClientException"
    assert body["message"].startswith(f"seconds: {shown} is not a number of seconds {RANGE}")
    assert emulator.now == 0.0


@pytest.mark.parametrize(
    "body",
    [b"[", b"[]", b"60", b"[" * 100_000 + b"]" * 100_000, b'{"seconds": 1' + b"0" * 5000 + b"}"],
)
def test_rejects_an_advance_body_that_is_no_object(emulator: EmulatorServer, body: bytes) -> None:
    code, answer = call(f"{emulator.endpoint_url}/_quota/advance", body)

    assert code == 400 and answer["__type"] == "ClientException"
    assert emulator.now == 0.0


def test_a_refused_advance_leaves_the_clock_and_jobs_working(emulator: EmulatorServer) -> None:
    batch = emulator.client("batch")
    job = submit(batch, emulator.queue_arn("seed-demo"), "QS1", "after-nan")
    url = emulator.endpoint_url

    refused = [
        call(f"{url}/_quota/advance", f'{{"seconds": {v}}}'.encode())[0] for v in ("NaN", "1e308")
    ]
    advanced = call(f"{url}/_quota/advance", b'{"seconds": 60}')
    described = batch.describe_service_job(jobId=job)

    assert refused == [400, 400]
    assert advanced == (200, {"now": 60.0})
    assert described["status"] == "RUNNING"
    assert call(f"{url}/_quota/health")[1]["now"] == 60.0


def test_advances_by_the_longest_step(emulator: EmulatorServer) -> None:
    url = f"{emulator.endpoint_url}/_quota/advance"

    assert call(url, f'{{"seconds": {MAX_ADVANCE_SECONDS}}}'.encode()) == (
        200,
        {"now": float(MAX_ADVANCE_SECONDS)},
    )


def test_library_advance_refuses_a_non_finite_step(emulator: EmulatorServer) -> None:
    with pytest.raises(ValueError, match="finite"):
        emulator.advance(float("nan"))

    assert emulator.now == 0.0


@pytest.mark.parametrize("path", ["/_quota/nope", "/_quota/advance"])
def test_answers_an_unknown_control_request_404(emulator: EmulatorServer, path: str) -> None:
    code, body = call(f"{emulator.endpoint_url}{path}")

    assert code == 404 and body["__type"] == "UnknownOperationException"
