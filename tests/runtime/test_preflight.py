"""``quota org preflight``: an organisation's capacity against the account's SageMaker training
quotas, read from Service Quotas on the emulator."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.testing import EmulatorServer
from tests.helpers import ORGS_DIR

RESEARCH = ORGS_DIR / "research.yaml"  # 8 x ml.g5.xlarge in its service environment
runner = CliRunner()


@pytest.fixture
def emu() -> Iterator[EmulatorServer]:
    with EmulatorServer(org_files=[]) as server:
        yield server


def test_a_quota_below_the_capacity_names_the_increase(emu: EmulatorServer) -> None:
    quota = emu.emulator.service_quotas.set("ml.g5.xlarge", 4)
    result = runner.invoke(app, ["org", "preflight", str(RESEARCH)], env=emu.env)
    assert result.exit_code == 1, result.output
    assert "too low" in result.stdout
    assert result.stderr.strip() == (
        "error: ml.g5.xlarge: the organisation runs up to 8 x ml.g5.xlarge but the account's "
        "quota 'ml.g5.xlarge for training job usage' is 4: SageMaker would answer "
        "ResourceLimitExceeded (got 4.0); fix: aws service-quotas "
        f"request-service-quota-increase --service-code sagemaker --quota-code {quota.code} "
        "--desired-value 8"
    )


def test_enough_quota_passes(emu: EmulatorServer) -> None:
    emu.emulator.service_quotas.set("ml.g5.xlarge", 8)
    result = runner.invoke(app, ["org", "preflight", str(RESEARCH)], env=emu.env)
    assert result.exit_code == 0, result.output
    assert "ok" in result.stdout


def test_a_missing_quota_is_named(emu: EmulatorServer) -> None:
    result = runner.invoke(app, ["org", "preflight", str(RESEARCH)], env=emu.env)
    assert result.exit_code == 1
    assert "the account has no quota 'ml.g5.xlarge for training job usage'" in result.stderr


def test_get_service_quota_answers_over_http(emu: EmulatorServer) -> None:
    quota = emu.emulator.service_quotas.set("ml.p5.48xlarge", 2)
    client = emu.client("service-quotas")
    got = client.get_service_quota(ServiceCode="sagemaker", QuotaCode=quota.code)["Quota"]
    assert (got["QuotaName"], got["Value"]) == ("ml.p5.48xlarge for training job usage", 2.0)
    with pytest.raises(client.exceptions.NoSuchResourceException):
        client.get_service_quota(ServiceCode="sagemaker", QuotaCode="L-NONE")
