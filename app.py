#!/usr/bin/env python3
"""CDK app: one stack per organisation file in stacks/orgs/ (or ``-c org_file=PATH``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

NODE_EOL_SILENCER = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"


def acknowledge_node_version() -> None:
    """Silence jsii's end-of-life banner for the Node it runs on (20 lines that reach ``cdk
    synth`` as raw Python byte strings), as ``make`` does; a value already set is kept."""
    node = shutil.which("node")
    if NODE_EOL_SILENCER in os.environ or node is None:
        return
    found = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    major = found.stdout.strip().lstrip("v").split(".")[0]
    if major.isdigit():
        os.environ[NODE_EOL_SILENCER] = major


def main() -> int:
    acknowledge_node_version()
    import aws_cdk as cdk  # after the variable is set: jsii's Node starts on this import

    from quota_constructs.model import QuotaConfigError
    from stacks.organisation_app import build_app

    app = cdk.App()
    try:
        build_app(app)
    except QuotaConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
