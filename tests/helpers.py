"""Helpers shared by test folders: the execution role and training-job payload of every test,
``quota local serve`` as a real process, the AWS CLI, and the commands of the docs' shell blocks."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import boto3

from quota_constructs.commands._common import TextConsole
from quota_constructs.local.testing import DUMMY_CREDENTIALS

ROOT = Path(__file__).resolve().parents[1]
ORGS_DIR = ROOT / "stacks" / "orgs"
"""The repository's example organisation files (inputs, not package data)."""
EMULATOR_DOC = ROOT / "docs" / "emulator.md"
ROLE = "arn:aws:iam::123456789012:role/SageMakerExecutionRole"
"""The SageMaker execution role ARN of every test's training jobs."""
QUOTA = Path(sys.executable).with_name("quota")
AWS = Path(sys.executable).with_name("aws")


def tool(name: str) -> ModuleType:
    """The script ``tools/<name>.py`` loaded as a module (``tools/`` is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import does (a dataclass looks its module up there)
    spec.loader.exec_module(module)
    return module


def runs_for(seconds: float) -> dict[str, str]:
    """Tags making an emulated job's training work ``seconds``: it SUCCEEDS when that is within
    its payload's ``MaxRuntimeInSeconds`` (without them it trains until SageMaker stops it there,
    FAILED)."""
    return {"quota.local/duration-seconds": str(seconds)}


def payload(instance_type: str = "ml.g5.xlarge", count: int = 1, runtime_s: int = 3600) -> str:
    """JSON of a SageMaker CreateTrainingJob request, as ``serviceRequestPayload`` carries it."""
    return json.dumps(
        {
            "TrainingJobName": "train",
            "RoleArn": ROLE,
            "AlgorithmSpecification": {
                "TrainingImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
                "TrainingInputMode": "File",
            },
            "ResourceConfig": {
                "InstanceType": instance_type,
                "InstanceCount": count,
                "VolumeSizeInGB": 30,
            },
            "StoppingCondition": {"MaxRuntimeInSeconds": runtime_s},
            "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        }
    )


def wait_for_endpoint(process: subprocess.Popen, printed: list[str]) -> str:
    """The endpoint the server printed (lines read go to ``printed``), once it answers."""
    assert process.stdout is not None
    while "Ctrl-C" not in "".join(printed):
        line = process.stdout.readline()
        if not line:
            raise AssertionError(
                f"the server stopped: {process.stderr.read() if process.stderr else ''}"
            )
        printed.append(line)
    endpoint = "".join(printed).split("listening on ", 1)[1].split()[0]
    for _ in range(100):
        try:
            with urllib.request.urlopen(f"{endpoint}/_quota/health") as response:
                if json.loads(response.read())["status"] == "ok":
                    return endpoint
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the server did not answer its health check")


def start_serve(*options: str) -> subprocess.Popen:
    """``quota local serve --port 0 OPTIONS...`` as a real process, output piped as text."""
    return subprocess.Popen(
        [str(QUOTA), "local", "serve", "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            "COLUMNS": "200",
            "PATH": str(QUOTA.parent),
            "NO_COLOR": "1",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # the code under test
        },
    )


def run_one_job(process: subprocess.Popen[str]) -> tuple[str, list[str]]:
    """On a started ``quota local serve --virtual``: submit one QS1 job, let 30 s pass, stop the
    server; the job's ARN and what the server printed."""
    printed: list[str] = []
    try:
        endpoint = wait_for_endpoint(process, printed)
        batch = boto3.client(
            "batch", endpoint_url=endpoint, region_name="us-east-1", **DUMMY_CREDENTIALS
        )
        job = batch.submit_service_job(
            jobName="j",
            jobQueue="seed-demo-queue",
            serviceJobType="SAGEMAKER_TRAINING",
            quotaShareName="QS1",
            serviceRequestPayload=payload(),
        )["jobArn"]
        request = urllib.request.Request(
            f"{endpoint}/_quota/advance", data=b'{"seconds": 30}', method="POST"
        )
        urllib.request.urlopen(request).close()
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    return str(job), printed


@dataclass(frozen=True)
class Command:
    """One command as written (continuation lines joined), with the output a console shows."""

    text: str
    shown: tuple[str, ...] = ()

    def listed_in(self, table: dict[str, str] | dict[str, int]) -> str | None:
        return next((key for key in table if self.text.startswith(key)), None)


def _logical_lines(lines: list[str]) -> Iterator[str]:
    """Lines with ``\\`` continuations joined (as bash reads them), blank lines dropped."""
    pending = ""
    for line in lines:
        pending += line + "\n"
        if not line.endswith("\\"):
            if pending.strip():
                yield pending.rstrip("\n")
            pending = ""


def parse_commands(language: str, body: str) -> tuple[Command, ...]:
    """The commands of a block: every logical line of a script, the ``$`` lines of a console."""
    if language != "console":
        lines = [line for line in _logical_lines(body.splitlines())]
        return tuple(Command(line) for line in lines if not line.lstrip().startswith("#"))
    commands: list[Command] = []
    lines = body.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("$ "):
            text = line[2:]
            while text.endswith("\\") and index + 1 < len(lines):
                index += 1
                text += "\n" + lines[index]
            commands.append(Command(text))
        elif line.strip() and commands:
            last = commands[-1]
            commands[-1] = Command(last.text, (*last.shown, line.strip()))
        index += 1
    return tuple(commands)


def shown(line: str) -> re.Pattern[str]:
    """A shown output line as a pattern: whitespace-insensitive, ``<...>`` is one word."""
    parts = re.split(r"<[^>]+>", " ".join(line.split()))
    return re.compile(r"\S+".join(re.escape(part) for part in parts))


def rendered(table: object, width: int) -> list[str]:
    """``table`` printed as ``quota`` prints it on a terminal of ``width`` columns."""
    console = TextConsole(width=width, file=io.StringIO(), highlight=False, soft_wrap=True)
    console.print(table)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue().splitlines()


def assert_whole(lines: list[str], identifiers: set[str], width: int) -> None:
    """Each identifier whole on one line, and no line wider than ``width``."""
    broken = {i for i in identifiers if not any(i in line for line in lines)}
    assert not broken, f"broken over lines at {width} columns: {sorted(broken)}"
    assert max(len(line) for line in lines) <= width, f"wider than {width} columns"
