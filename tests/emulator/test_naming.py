"""``naming="generated"`` (``quota local serve --names generated``): queue, environment and
policy named as CloudFormation names a stack's unnamed resources, found only through SSM."""

from __future__ import annotations

import re

import pytest
from botocore.exceptions import ClientError
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from tests.emulator.helpers import status, submit

GENERATED = re.compile(
    r"Quota-seed-demo-(JobQueue|ServiceEnvironment|SchedulingPolicy)-[A-Z0-9]{12}"
)


def names(emu: EmulatorServer) -> list[str]:
    batch = emu.client("batch")
    return [
        batch.describe_job_queues()["jobQueues"][0]["jobQueueName"],
        batch.describe_service_environments()["serviceEnvironments"][0]["serviceEnvironmentName"],
        batch.list_scheduling_policies()["schedulingPolicies"][0]["arn"].rsplit("/", 1)[1],
    ]


def test_generated_names_follow_cloudformation_and_are_published_in_ssm() -> None:
    with EmulatorServer([SEED_DEMO], naming="generated") as emu:
        queue, environment, policy = names(emu)
        ssm = emu.client("ssm")
        published = ssm.get_parameter(Name="/quota/seed-demo/job-queue/name")["Parameter"]
        arn = ssm.get_parameter(Name="/quota/seed-demo/job-queue/arn")["Parameter"]["Value"]
        job = submit(emu.client("batch"), arn, "QS1", "found-through-ssm")
        emu.advance(10)

        assert [GENERATED.fullmatch(n) is not None for n in (queue, environment, policy)] == [
            True
        ] * 3
        assert published["Value"] == queue and arn.endswith(f":job-queue/{queue}")
        assert status(emu.client("batch"), job) == "RUNNING"


def test_a_hard_coded_fixed_name_is_unknown_with_generated_names() -> None:
    with (
        EmulatorServer([SEED_DEMO], naming="generated") as emu,
        pytest.raises(ClientError) as refused,
    ):
        submit(emu.client("batch"), "seed-demo-queue", "QS1", "guessed")

    assert "seed-demo-queue" in refused.value.response["Error"]["Message"]


def test_generated_names_are_reproducible_with_a_seed_and_differ_without() -> None:
    def generated(seed: int | None) -> list[str]:
        with EmulatorServer([SEED_DEMO], naming="generated", seed=seed) as emu:
            return names(emu)

    assert generated(7) == generated(7)
    assert generated(None) != generated(None)


def test_fixed_names_are_the_default() -> None:
    with EmulatorServer([SEED_DEMO]) as emu:
        assert names(emu) == ["seed-demo-queue", "seed-demo-training", "seed-demo-quota-policy"]


def test_rejects_an_unknown_naming() -> None:
    result = CliRunner().invoke(app, ["local", "serve", "--port", "0", "--names", "random"])

    assert result.exit_code == 2
    assert "'fixed', 'generated'" in " ".join(result.output.split())
