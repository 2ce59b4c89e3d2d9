"""Browser-style requests are refused before any handler runs: a web page cannot drive the
emulator (no ``text/plain`` simple requests, no foreign ``Origin``, no DNS-rebound ``Host``)."""

from __future__ import annotations

import json

import pytest
from werkzeug.test import Client

from quota_constructs.local.emulator import Emulator
from quota_constructs.local.testing import SEED_DEMO
from quota_constructs.local.wire.request_guard import RequestGuard
from quota_constructs.local.wire.server import EmulatorApp

ADVANCE = json.dumps({"seconds": 60})


@pytest.fixture
def emulator() -> Emulator:
    emulator = Emulator()
    emulator.provision_file(SEED_DEMO)
    return emulator


def client_of(emulator: Emulator, guard: RequestGuard | None = None) -> Client:
    return Client(EmulatorApp(emulator, guard))


def test_rejects_a_text_plain_post_naming_the_content_type(emulator: Emulator) -> None:
    answer = client_of(emulator).post("/_quota/advance", data=ADVANCE, content_type="text/plain")

    assert answer.status_code == 415
    assert answer.headers["x-amzn-ErrorType"] == "UnsupportedMediaTypeException"
    message = answer.get_json()["message"]
    assert "Content-Type: 'text/plain' is not a type AWS protocols send" in message
    assert "application/x-amz-json-1.1" in message
    assert emulator.clock.now() == 0.0


def test_rejects_a_body_without_a_content_type(emulator: Emulator) -> None:
    answer = client_of(emulator).post("/v1/updatejobqueue", data='{"jobQueue": "x"}')

    assert answer.status_code == 415
    assert "Content-Type: '' is not a type AWS protocols send" in answer.get_json()["message"]


def test_rejects_a_foreign_origin_naming_it(emulator: Emulator) -> None:
    answer = client_of(emulator).post(
        "/_quota/advance",
        data=ADVANCE,
        content_type="application/json",
        headers={"Origin": "https://evil.example"},
    )

    assert answer.status_code == 403
    assert answer.headers["x-amzn-ErrorType"] == "AccessDeniedException"
    message = answer.get_json()["message"]
    assert "Origin: 'https://evil.example' is not allowed" in message
    assert "--allow-origin" in message
    assert emulator.clock.now() == 0.0


def test_rejects_a_foreign_host_naming_it(emulator: Emulator) -> None:
    answer = client_of(emulator).get("/_quota/health", headers={"Host": "rebind.evil.example:8771"})

    assert answer.status_code == 403
    message = answer.get_json()["message"]
    assert "Host: 'rebind.evil.example:8771' is not a name of this emulator" in message
    assert "--allow-host NAME" in message


@pytest.mark.parametrize("host", ["localhost:8771", "127.0.0.1", "[::1]:8771", "LOCALHOST"])
def test_answers_loopback_host_names(emulator: Emulator, host: str) -> None:
    answer = client_of(emulator).get("/_quota/health", headers={"Host": host})

    assert answer.status_code == 200


def test_answers_an_allowed_host_and_origin(emulator: Emulator) -> None:
    guard = RequestGuard.listening_on(
        "10.0.0.5", hosts=["emulator.internal"], origins=["http://localhost:3000"]
    )
    client = client_of(emulator, guard)

    for host in ("10.0.0.5:8771", "emulator.internal"):
        answer = client.post(
            "/_quota/advance",
            data=ADVANCE,
            content_type="application/json",
            headers={"Host": host, "Origin": "http://localhost:3000"},
        )
        assert answer.status_code == 200, answer.get_data(as_text=True)


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/x-amz-json-1.1",
        "application/x-www-form-urlencoded; charset=utf-8",
    ],
)
def test_answers_the_content_types_botocore_sends(emulator: Emulator, content_type: str) -> None:
    answer = client_of(emulator).post("/_quota/advance", data=ADVANCE, content_type=content_type)

    assert answer.headers.get("x-amzn-ErrorType") != "UnsupportedMediaTypeException"
