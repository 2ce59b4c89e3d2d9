"""The pure Python and the mypyc-compiled scheduler core give the same answers to the same fuzzed
request sequences (nulls and wrong types included), each in its own ``quota local serve``.

Skipped when no compiled build of the current sources exists (``make setup``, or
``quota build-core``; see :mod:`quota_constructs.scheduling.compiled`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quota_constructs.scheduling.compiled import DISABLE_ENV, usable_build
from tests.helpers import QUOTA, payload, wait_for_endpoint

pytestmark = pytest.mark.skipif(
    not usable_build(),
    reason="no compiled core matches the current sources (run quota build-core)",
)
SHARES = ["QS1", "QS2", "QS3", None, 7]
ANY_VALUE = st.none() | st.integers(-3, 3) | st.text(max_size=3) | st.booleans()


def submit(share: Any, priority: Any) -> tuple[str, dict[str, Any]]:
    body = {
        "jobName": "j",
        "jobQueue": "seed-demo-queue",
        "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": payload(runtime_s=120),
        "quotaShareName": share,
        "schedulingPriority": priority,
    }
    return "/v1/submitservicejob", body


REQUESTS = st.one_of(
    st.builds(submit, st.sampled_from(SHARES), st.integers(0, 3) | ANY_VALUE),
    st.builds(lambda s: ("/_quota/advance", {"seconds": s}), st.integers(0, 200) | ANY_VALUE),
    st.builds(
        lambda status: ("/v1/listservicejobs", {"jobQueue": "seed-demo-queue", **status}),
        st.sampled_from([{}, {"jobStatus": "RUNNING"}, {"jobStatus": "RUNNABLE"}]),
    ),
    st.builds(
        lambda limits: (
            "/v1/updatequotashare",
            {
                "quotaShareArn": "arn:aws:batch:us-east-1:123456789012:job-queue/"
                "seed-demo-queue/quota-share/QS2",
                "capacityLimits": limits,
            },
        ),
        st.just([{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}]) | ANY_VALUE,
    ),
)


def without_times(value: Any) -> Any:
    """``value`` with the wall-clock-based members (``...At``) left out."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if not k.endswith("At")}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def answer(endpoint: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        endpoint + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, without_times(json.loads(response.read()))
    except urllib.error.HTTPError as error:
        return error.code, without_times(json.loads(error.read()))


def serve(compiled: bool) -> subprocess.Popen[str]:
    env = {"PATH": str(QUOTA.parent), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    if not compiled:
        env[DISABLE_ENV] = "0"
    return subprocess.Popen(
        [str(QUOTA), "local", "serve", "--port", "0", "--virtual", "--seed", "5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "COLUMNS": "200", "NO_COLOR": "1"},
    )


@pytest.fixture(scope="module")
def endpoints() -> Iterator[tuple[str, str]]:
    processes = [serve(compiled=False), serve(compiled=True)]
    try:
        pure, built = (wait_for_endpoint(p, []) for p in processes)
        yield pure, built
    finally:
        for process in processes:
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=60)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequence=st.lists(REQUESTS, min_size=1, max_size=10))
def test_both_cores_answer_every_request_alike(
    endpoints: tuple[str, str], sequence: list[tuple[str, dict[str, Any]]]
) -> None:
    pure, built = endpoints
    for path, body in sequence:
        assert answer(pure, path, body) == answer(built, path, body), (path, body)
