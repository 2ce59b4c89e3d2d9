"""Run AWS's own quota-management code, unmodified, against the local emulator.

Reads the code from a checkout of https://github.com/aws/sagemaker-python-sdk (nothing of it is
copied here) and runs it against an emulator on a free loopback port (real HTTP, wall clock):

- ``helper``: the v3 sample helper (``v3-examples/training-examples/aws_batch/utils/
  aws_batch_resource_management.py``): its quota-management set-up twice (the second run skips
  what exists), its plain FIFO set-up twice, then ``delete_resources`` of both;
- ``notebooks``: the code cells of the quota-management notebook in order (the three tutorial
  outcomes), its resource cell a second time, then the getting-started notebook's cells up to
  its log cell (CloudWatch Logs is not emulated);
- ``integ``: pytest on the SDK's ``sagemaker-train/tests/integ/train/aws_batch/`` (manager and
  test bodies), with this file as a plugin for the offline replacements below.

Only what offline forces is replaced: the ModelTrainer's S3 staging (``Session.default_bucket``
and ``Session.upload_data`` answer an ``s3://`` URI without uploading) and the image lookup
(``image_uris.retrieve`` answers the region's PyTorch training image name). The execution role
comes from the SDK's own config file (``SageMaker.TrainingJob.RoleArn``), as it would for a user
outside a SageMaker notebook. Usage (docs/emulator.md):

    python tools/run_aws_code.py CHECKOUT helper|notebooks|integ
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from quota_constructs.local.state.arns import Account
from quota_constructs.local.testing import EmulatorServer

EXAMPLES = Path("v3-examples/training-examples/aws_batch")
INTEG = Path("sagemaker-train/tests/integ/train/aws_batch")
QM_NOTEBOOK = "sm-training-queues_quota-management.ipynb"
FIFO_NOTEBOOK = "sm-training-queues_getting_started_with_model_trainer.ipynb"
ROLE_ARN = "arn:aws:iam::{account}:role/SageMakerExecutionRole"
BUCKET = "sagemaker-offline-staging"


def offline_replacements() -> None:
    """The ModelTrainer's S3 staging and the image lookup, answered without the network."""
    from sagemaker.core import image_uris
    from sagemaker.core.helper.session_helper import Session

    def default_bucket(self: Any) -> str:
        return BUCKET

    def upload_data(
        self: Any, path: str, bucket: str | None = None, key_prefix: str = "data", **_: Any
    ) -> str:
        return f"s3://{bucket or BUCKET}/{key_prefix}"

    def retrieve(framework: str, region: str, version: str | None = None, **_: Any) -> str:
        return f"763104351884.dkr.ecr.{region}.amazonaws.com/{framework}-training:{version}-gpu"

    Session.default_bucket = default_bucket
    Session.upload_data = upload_data
    image_uris.retrieve = retrieve


@contextmanager
def emulator(region: str) -> Iterator[EmulatorServer]:
    """An empty emulator (wall clock) with this process's AWS environment pointed at it; the
    SDK's execution role from its own config file (``SageMaker.TrainingJob.RoleArn``), as a
    user without a notebook role sets it, and no IAM role check (``SAGEMAKER_VALIDATE_ROLE``)."""
    with (
        EmulatorServer(clock="wall", account=Account(region=region)) as emu,
        TemporaryDirectory() as config_dir,
    ):
        os.environ.update(emu.env)
        os.environ["SAGEMAKER_VALIDATE_ROLE"] = "false"
        role = ROLE_ARN.format(account=emu.emulator.account.account_id)
        config = Path(config_dir) / "config.yaml"
        config.write_text(
            f"SchemaVersion: '1.0'\nSageMaker:\n  TrainingJob:\n    RoleArn: {role}\n"
        )
        os.environ["SAGEMAKER_USER_CONFIG_OVERRIDE"] = str(config)
        yield emu


def code_cells(notebook: Path) -> list[str]:
    """The notebook's code cells, in order, as written."""
    cells = json.loads(notebook.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def run_cells(cells: list[str], namespace: dict[str, Any], label: str) -> None:
    for index, source in enumerate(cells):
        print(f"--- {label} cell {index + 1}", flush=True)
        exec(compile(source, f"{label}[{index + 1}]", "exec"), namespace)


def helper(checkout: Path) -> None:
    """The sample helper's set-ups, each twice, then their deletion."""
    sys.path.insert(0, str(checkout / EXAMPLES))
    import boto3
    from utils import aws_batch_resource_management as m  # AWS's helper, as written

    manager = m.AwsBatchResourceManager(boto3.client("batch"))
    shares = [
        m.QuotaShareConfig("QS1", "ml.g5.xlarge", 1, True, "LEND_AND_BORROW", 200),
        m.QuotaShareConfig("QS2", "ml.g5.xlarge", 1, False, "LEND"),
        m.QuotaShareConfig("QS3", "ml.g5.xlarge", 1, False, "RESERVE"),
    ]
    for attempt in (1, 2):
        print(f"--- quota-management set-up, run {attempt}", flush=True)
        quota = m.create_quota_management_resources(
            manager, "qm-jq", "qm-se", "ml.g5.xlarge", 3, "qm-sp", shares
        )
        print(f"--- FIFO set-up, run {attempt}", flush=True)
        fifo = m.create_resources(manager, "fifo-jq", "fifo-se", max_capacity=1)
    m.delete_resources(manager, quota)
    m.delete_resources(manager, fifo)
    left = boto3.client("batch").describe_job_queues()["jobQueues"]
    assert not left, f"queues left after delete_resources: {left}"
    print("helper: OK")


def notebooks(checkout: Path) -> None:
    """Both notebooks' code cells, as written, in a namespace of their own each."""
    os.chdir(checkout / EXAMPLES)
    sys.path.insert(0, str(checkout / EXAMPLES))
    offline_replacements()
    cells = code_cells(checkout / EXAMPLES / QM_NOTEBOOK)
    run_cells(cells, {"__name__": "__main__"}, "quota-management")
    resource_cell = next(c for c in cells if "create_quota_management_resources(" in c)
    run_cells([resource_cell], {"__name__": "__main__", **_constants(cells)}, "re-run")
    fifo = code_cells(checkout / EXAMPLES / FIFO_NOTEBOOK)
    upto_logs = [c for c in fifo if "logs_for_job" not in c]
    run_cells(upto_logs, {"__name__": "__main__"}, "getting-started")
    print("notebooks: OK")


def _constants(cells: list[str]) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(cells[0], namespace)
    return namespace


def integ(checkout: Path) -> int:
    """pytest on the SDK's aws_batch integration tests, this file as the offline plugin."""
    import pytest

    os.chdir(checkout / "sagemaker-train")
    sys.path.insert(0, str(Path(__file__).parent))
    return int(
        pytest.main(
            [
                str(INTEG.relative_to("sagemaker-train")),
                "-p",
                "run_aws_code",
                "-p",
                "no:warnings",
                "-x",
                "-s",
            ]
        )
    )


def pytest_configure(config: Any) -> None:
    """As a pytest plugin (``integ``): the offline replacements."""
    offline_replacements()


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in ("helper", "notebooks", "integ"):
        print(__doc__.split("Usage (docs/emulator.md):")[1].strip(), file=sys.stderr)
        return 2
    checkout, what = Path(argv[0]).resolve(), argv[1]
    region = "us-west-2" if what == "integ" else "us-east-1"
    with emulator(region):
        if what == "integ":
            return integ(checkout)
        helper(checkout) if what == "helper" else notebooks(checkout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
