"""Bad payloads and malformed submissions: one problem naming the field, never a traceback;
one bad job in ``submit_many`` fails alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import MAX_INSTANCES_PER_TYPE, QuotaConfigError
from quota_constructs.runtime import JobSubmission, QueueClient, TrainingJob
from quota_constructs.runtime.payload import MAX_PAYLOAD_DEPTH
from tests.runtime.helpers import training_job

ROOT = Path(__file__).resolve().parents[2]
QUOTA = Path(sys.executable).with_name("quota")
GOOD = training_job().payload("good")


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def resource(**fields: Any) -> dict[str, Any]:
    return {**GOOD, "ResourceConfig": fields}


CASES = {
    "a JSON list": ([GOOD], "serviceRequestPayload", "must be a JSON object"),
    "text": ("{}", "serviceRequestPayload", "not text"),
    "null": (None, "serviceRequestPayload", "not null"),
    "InstanceGroups as an int": (
        resource(InstanceGroups=5),
        "serviceRequestPayload.ResourceConfig.InstanceGroups",
        "must be a list, not a number",
    ),
    "InstanceGroups as text items": (
        resource(InstanceGroups=["ml.g5.xlarge"]),
        "serviceRequestPayload.ResourceConfig.InstanceGroups[0]",
        "must be an object, not text",
    ),
    "ResourceConfig as text": (
        {**GOOD, "ResourceConfig": "ml.g5.xlarge"},
        "serviceRequestPayload.ResourceConfig",
        "must be an object",
    ),
    "InstanceCount as text": (
        resource(InstanceType="ml.g5.xlarge", InstanceCount="2", VolumeSizeInGB=30),
        "serviceRequestPayload.ResourceConfig.InstanceCount",
        "must be an integer, not text",
    ),
    "deep JSON": (
        {**GOOD, "HyperParameters": nested(5000)},
        "serviceRequestPayload.HyperParameters" + ".a" * (MAX_PAYLOAD_DEPTH - 1),
        f"nested deeper than {MAX_PAYLOAD_DEPTH} levels",
    ),
    "NaN": (
        {**GOOD, "StoppingCondition": {"MaxRuntimeInSeconds": float("nan")}},
        "serviceRequestPayload.StoppingCondition.MaxRuntimeInSeconds",
        "must be finite",
    ),
    "an integer beyond 64 bits": (
        resource(InstanceType="ml.g5.xlarge", InstanceCount=10**30, VolumeSizeInGB=30),
        "serviceRequestPayload.ResourceConfig.InstanceCount",
        "fit in 64 bits",
    ),
    "a key that is not text": (
        {**GOOD, "Environment": {7: "x"}},
        "serviceRequestPayload.Environment.7",
        "keys must be text",
    ),
    "a set": ({**GOOD, "Environment": {"A": {1, 2}}}, "serviceRequestPayload.Environment.A", "set"),
    "an unknown field": (
        {**GOOD, "ResourceConfg": {}},
        "serviceRequestPayload.ResourceConfg",
        "not a field of CreateTrainingJob",
    ),
    "a missing field": (
        {k: v for k, v in GOOD.items() if k != "RoleArn"},
        "serviceRequestPayload.RoleArn",
        "required by CreateTrainingJob",
    ),
}


@pytest.mark.parametrize(("payload", "path", "words"), CASES.values(), ids=list(CASES))
def test_rejects_a_bad_payload_naming_the_field(payload: Any, path: str, words: str) -> None:
    problems = JobSubmission("bad", "QS1", payload).problems()

    assert any(p.path == path and words in str(p) for p in problems), problems
    assert all("\n" not in str(p) and len(str(p)) < 1000 for p in problems)


def test_rejects_an_instance_count_above_the_model_bound() -> None:
    payload = resource(
        InstanceType="ml.g5.xlarge", InstanceCount=MAX_INSTANCES_PER_TYPE + 1, VolumeSizeInGB=30
    )
    with pytest.raises(QuotaConfigError, match=f"between 1 and {MAX_INSTANCES_PER_TYPE}"):
        from quota_constructs.model import capacity_demand

        capacity_demand(payload)


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"share": ["QS1"]}, "quotaShareName"),
        ({"tags": ["a=b"]}, "tags"),
        ({"tags": {"a": 1}}, "tags.a"),
        ({"retry_rules": "RETRY"}, "retryStrategy.evaluateOnExit"),
        ({"retry_rules": [5]}, "retryStrategy.evaluateOnExit[0]"),
        ({"client_token": "x" * 65}, "clientToken"),
        ({"client_token": ""}, "clientToken"),
        (
            {"payload": TrainingJob("i", "ml.g5.xlarge", "r", "s3://b", hyperparameters=[1])},  # type: ignore[arg-type]
            "serviceRequestPayload",
        ),
    ],
)
def test_rejects_fields_of_the_wrong_type(fields: dict[str, Any], path: str) -> None:
    submission = JobSubmission(**{"job_name": "bad", "share": "QS1", "payload": GOOD, **fields})

    assert path in [p.path for p in submission.problems()]


def test_the_client_refuses_wrong_types_before_reading_the_queue(
    client: QueueClient, emu: EmulatorServer
) -> None:
    with pytest.raises(QuotaConfigError, match="quotaShareName"):
        client.submit("bad", ["QS1"], GOOD)  # type: ignore[arg-type]
    assert "SubmitServiceJob" not in emu.request_counts


def test_one_malformed_job_in_submit_many_fails_alone(client: QueueClient) -> None:
    jobs: list[Any] = [
        JobSubmission("first", "QS1", training_job()),
        JobSubmission("listed", "QS1", [GOOD]),  # type: ignore[arg-type]
        {"job_name": "a-dict", "share": "QS1"},
        None,
        JobSubmission("deep", "QS1", {**GOOD, "HyperParameters": nested(3000)}),
        JobSubmission("last", "QS2", training_job()),
    ]
    outcomes = client.submit_many(jobs)

    assert [o.ok for o in outcomes] == [True, False, False, False, False, True]
    assert [o.job_name for o in outcomes] == [
        "first",
        "listed",
        "submissions[2]",
        "submissions[3]",
        "deep",
        "last",
    ]
    assert "must be a JSON object" in (outcomes[1].error or "")
    assert "not a JobSubmission but dict" in (outcomes[2].error or "")
    assert "nested deeper" in (outcomes[4].error or "")
    assert sorted(j.job_name for j in client.list()) == ["first", "last"]


def quota(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(QUOTA), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"},
    )


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("[1, 2]", "must be a JSON object (a SageMaker CreateTrainingJob request), not a list"),
        ('{"ResourceConfig": {"InstanceGroups": 5}}', "InstanceGroups: must be a list"),
        ('{"ResourceConfig": {"InstanceGroups": ["a", "b"]}}', "InstanceGroups[0]: must be"),
        ('{"HyperParameters": ' + "[" * 5000 + "]" * 5000 + "}", "nested deeper than"),
    ],
    ids=["list", "groups-int", "groups-strings", "deep"],
)
def test_cli_refuses_a_bad_payload_file_one_line_per_problem(
    emu: EmulatorServer, tmp_path: Path, content: str, words: str
) -> None:
    path = tmp_path / "payload.json"
    path.write_text(content)

    result = quota(
        "jobs", "--endpoint-url", emu.endpoint_url, "--organisation", "seed-demo",
        "submit", "bad", "--share", "QS1", "--payload", str(path),
    )  # fmt: skip

    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert all(line.startswith("error: ") for line in result.stderr.splitlines())  # per problem
    assert words in result.stderr
    assert "SubmitServiceJob" not in emu.request_counts


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/stdin"])
def test_cli_refuses_a_payload_that_is_not_a_regular_file(
    emu: EmulatorServer, special: str
) -> None:
    result = quota(
        "jobs", "--endpoint-url", emu.endpoint_url, "--organisation", "seed-demo",
        "submit", "bad", "--share", "QS1", "--payload", special,
    )  # fmt: skip

    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "not a regular file" in result.stderr
