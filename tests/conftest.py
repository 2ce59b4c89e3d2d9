"""Shared test settings: offline, no AWS credentials, deterministic hypothesis profile."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

# jsii (aws_cdk) and every command the tests start run the Node.js LTS and the CDK CLI that
# package.json pins, whatever Node the machine has: no end-of-life banner, as with `make test`.
NODE_BIN = Path(__file__).resolve().parents[1] / "node_modules" / ".bin"
if NODE_BIN.is_dir():
    os.environ["PATH"] = f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"

# Nothing in the suite may reach AWS: dummy credentials and a region for every boto3 client.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.pop("AWS_PROFILE", None)
os.environ["CDK_DISABLE_CLI_TELEMETRY"] = "true"

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
