"""Helpers for the runtime tests: payloads, emulated durations, organisation files, faults,
`quota jobs` on an emulator, and sections and code blocks of the docs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime import RetryOptions, TrainingJob
from tests.helpers import ROLE


def last_monday() -> float:
    """This week's Monday, 00:00 UTC, in epoch seconds: like the simulator's time 0 a Monday
    midnight, so a generated Monday run on an emulator started there meets the share
    calendars at the simulator's instants whatever the day and hour the tests run (and its
    jobs are recent, as `--from-queue`'s default window of days expects)."""
    now = datetime.now(UTC)
    return (
        (now - timedelta(days=now.weekday()))
        .replace(hour=0, minute=0, second=0, microsecond=0)
        .timestamp()
    )


FAST_RETRIES = RetryOptions(mode="standard", max_attempts=12, backoff_scale=0.01)
"""botocore's standard retries with 1/100 of its backoff delays, so fault tests stay quick."""
BUILDER = [
    "--image",
    "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
    "--instance-type",
    "ml.g5.xlarge",
    "--role-arn",
    ROLE,
    "--output-s3",
    "s3://bucket/out",
]
"""The `quota jobs submit` options that build a one-instance training job."""


def training_job(instance_type: str = "ml.g5.xlarge", count: int = 1) -> TrainingJob:
    return TrainingJob(
        image="123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
        instance_type=instance_type,
        instance_count=count,
        role_arn=ROLE,
        output_s3_uri="s3://bucket/out",
        max_runtime_s=7200,
    )


def runs_for(seconds: float) -> dict[str, str]:
    """Tags telling the emulator how long the job runs."""
    return {"quota.local/duration-seconds": str(seconds)}


def write_org(tmp_path: Path, name: str, shares: str) -> Path:
    """An organisation file in ``tmp_path`` with the given YAML ``shares`` list."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"organisation: {name}\nshares:\n{shares}")
    return path


def faulty_emulator(org: Path, *, throttle: float, server_error: float) -> EmulatorServer:
    """An emulator answering a share of every operation with 429 throttling or 500 errors."""
    plan = FaultPlan(throttle={"*": throttle}, server_error={"*": server_error}, seed=4)
    return EmulatorServer(org_files=[org], clock="virtual", faults=plan)


def jobs(emu: EmulatorServer, *args: str) -> tuple[int, str, str]:
    """``quota jobs --endpoint-url EMU --organisation seed-demo ARGS...``: exit code, out, err."""
    base = ["jobs", "--endpoint-url", emu.endpoint_url, "--organisation", "seed-demo"]
    result = CliRunner().invoke(app, [*base, *args], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def submit(emu: EmulatorServer, name: str, share: str, *extra: str) -> str:
    """``quota jobs submit`` of a BUILDER job to ``share``; returns its job id."""
    code, out, err = jobs(emu, "submit", name, "--share", share, *BUILDER, *extra, "--json")
    assert code == 0, err
    return str(json.loads(out)["jobId"])


def section(text: str, heading: str) -> str:
    """The part of a Markdown ``text`` from ``heading`` to the next ``## `` heading."""
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else None]


def blocks(text: str, language: str) -> list[str]:
    """The bodies of the fenced ``language`` code blocks of ``text``."""
    return [part.split("```", 1)[0] for part in text.split(f"```{language}\n")[1:]]


P5 = "ml.p5.48xlarge"
OWN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-june"
FOREIGN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-rival"
ORGS = (("plans", "p5-june"), ("rival", "p5-rival"))
"""Two organisations of one account, each with its own p5 plan."""


def plan_org(tmp_path: Path, name: str, plan: str, start: str) -> Path:
    """Organisation ``name``: a p5 plan ``plan`` from ``start`` for 4 h, a team share ``llm``
    (2 p5, 2 g5) and a share ``open`` without a team."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"organisation: {name}\n"
        "shares:\n"
        f"  - name: llm\n"
        f"    capacity: {{{P5}: 2, ml.g5.xlarge: 2}}\n"
        "    strategy: LEND_AND_BORROW\n"
        "    access: {principals: [arn:aws:iam::111122223333:role/Team]}\n"
        "  - {name: open, capacity: {ml.g5.xlarge: 1}, strategy: LEND}\n"
        "training_plans:\n"
        f"  - {{name: {plan}, instance_type: {P5}, instance_count: 2, "
        f'start: "{start}", duration_hours: 4}}\n',
        encoding="utf-8",
    )
    return path
