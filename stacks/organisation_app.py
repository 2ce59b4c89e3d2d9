"""Build the CDK app: one ``OrganisationStack`` per organisation file, cdk-nag registered.

``app.py`` calls :func:`build_app`; tests and the synth benchmark call it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from quota_constructs.config import ORGS_DIR, OrgFileError, discover_org_files, load_organisations
from quota_constructs.model import Problem
from stacks.organisation_stack import OrganisationStack, stack_name_for

ORG_FILE_CONTEXT = "org_file"
"""``cdk synth -c org_file=PATH`` synthesizes only that organisation file."""


def organisation_files(app: cdk.App, orgs_dir: Path = ORGS_DIR) -> list[Path]:
    """The ``-c org_file=PATH`` file, or every ``*.yaml`` in ``orgs_dir``."""
    chosen = app.node.try_get_context(ORG_FILE_CONTEXT)
    if chosen:
        return [Path(str(chosen))]
    files = discover_org_files(orgs_dir)
    if not files:
        raise OrgFileError(
            [
                Problem(
                    str(orgs_dir),
                    [],
                    "no organisation files (*.yaml) found",
                    "add one, e.g. copy stacks/orgs/seed-demo.yaml, or pass -c org_file=PATH",
                )
            ]
        )
    return files


def add_checks(app: cdk.App) -> None:
    """Register cdk-nag's AwsSolutions pack once on the app (findings fail synth)."""
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks())


def build_app(
    app: cdk.App, files: Sequence[Path] | None = None, *, checks: bool = True
) -> list[OrganisationStack]:
    """Add one stack per organisation file; :class:`OrgFileError` lists every file problem."""
    paths = list(files) if files is not None else organisation_files(app)
    organisations = load_organisations(paths)
    if checks:
        add_checks(app)
    return [OrganisationStack(app, stack_name_for(org), organisation=org) for org in organisations]
