#!/usr/bin/env python3
"""CDK app: one stack per organisation file in ``stacks/orgs/`` (``cdk.json``'s ``orgs_dir``),
or ``-c org_file=PATH``, or the pipeline with ``-c pipeline_file=PATH``."""

from __future__ import annotations

import sys

import aws_cdk as cdk

from quota_constructs import QuotaConfigError, build_app


def main() -> int:
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
