"""Importing the runtime must not import aws_cdk (it runs in notebooks and CI jobs)."""

from __future__ import annotations

import subprocess
import sys


def test_runtime_import_does_not_import_aws_cdk() -> None:
    code = (
        "import sys, quota_constructs.runtime, quota_constructs.commands.jobs; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'aws_cdk', 'constructs', "
        "'jsii'}); print(','.join(bad))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_runtime_import_leaves_logging_alone() -> None:
    code = (
        "import logging; root = logging.getLogger(); before = (root.level, list(root.handlers)); "
        "import quota_constructs.runtime, quota_constructs.commands.jobs; "
        "print((root.level, list(root.handlers)) == before)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "True"
