"""Build the CDK app: one ``OrganisationStack`` per organisation file, cdk-nag registered.

The files are every ``*.yaml`` of the directory named by the ``orgs_dir`` context key (in
``cdk.json``; default ``orgs``, relative to where ``cdk`` runs the app), or the one file of
``-c org_file=PATH``. With ``-c pipeline_file=PATH`` the app is the pipeline stack instead,
whose stages hold the organisation stacks of each environment. An ``app.py`` (this repository's,
or the one ``quota init`` writes) calls :func:`build_app`; tests and the synth benchmark too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from quota_constructs.config import OrgFileError, discover_org_files, load_organisations
from quota_constructs.model import Problem
from quota_constructs.pipeline_config import load_pipeline
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from quota_constructs.stacks.pipeline_stack import PipelineStack

ORGS_DIR_CONTEXT = "orgs_dir"
"""``cdk.json``'s ``context.orgs_dir`` (or ``-c orgs_dir=DIR``): the organisation files' folder."""
DEFAULT_ORGS_DIR = "orgs"
"""The ``orgs_dir`` of an app that sets none (the layout ``quota init`` writes)."""
ORG_FILE_CONTEXT = "org_file"
"""``cdk synth -c org_file=PATH`` synthesizes only that organisation file."""
PIPELINE_FILE_CONTEXT = "pipeline_file"
"""``cdk synth -c pipeline_file=PATH`` synthesizes the pipeline stack of that pipeline file."""
PIPELINE_STACK_ID = "Quota-Pipeline"


def organisation_files(app: cdk.App, orgs_dir: str | Path | None = None) -> list[Path]:
    """The ``-c org_file=PATH`` file, or every ``*.yaml`` in ``orgs_dir`` (default: the
    app's ``orgs_dir`` context, else ``orgs``)."""
    chosen = app.node.try_get_context(ORG_FILE_CONTEXT)
    if chosen:
        return [Path(str(chosen))]
    if orgs_dir is None:
        orgs_dir = str(app.node.try_get_context(ORGS_DIR_CONTEXT) or DEFAULT_ORGS_DIR)
    files = discover_org_files(orgs_dir)
    if not files:
        raise OrgFileError(
            [
                Problem(
                    str(orgs_dir),
                    [],
                    "no organisation files (*.yaml) found",
                    "add one (`quota init DIR` writes an example), set context.orgs_dir in "
                    "cdk.json to the folder that holds them, or pass -c org_file=PATH",
                )
            ]
        )
    return files


def add_checks(app: cdk.App) -> None:
    """Register cdk-nag's AwsSolutions pack once on the app (findings fail synth)."""
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks())


def build_app(
    app: cdk.App,
    files: Sequence[Path] | None = None,
    *,
    orgs_dir: str | Path | None = None,
    checks: bool = True,
) -> list[OrganisationStack]:
    """Add one stack per organisation file; :class:`OrgFileError` lists every file problem.

    ``files`` default to :func:`organisation_files` (``orgs_dir``, the context's, or ``orgs``).
    ``checks`` registers cdk-nag's AwsSolutions pack on the app (findings fail synth).

    With ``-c pipeline_file=PATH`` add the pipeline stack instead and return the organisation
    stacks of its stages (:class:`~quota_constructs.pipeline_config.PipelineFileError` lists
    every pipeline file problem).
    """
    paths = list(files) if files is not None else organisation_files(app, orgs_dir)
    organisations = load_organisations(paths)
    pipeline_file = app.node.try_get_context(PIPELINE_FILE_CONTEXT)
    if pipeline_file:
        by_name = {org.name: org for org in organisations}
        pipeline = load_pipeline(str(pipeline_file), by_name)
        if checks:
            add_checks(app)
        org_files = {org.name: path for org, path in zip(organisations, paths, strict=True)}
        stack = PipelineStack(
            app,
            PIPELINE_STACK_ID,
            pipeline=pipeline,
            organisations=by_name,
            organisation_files=org_files,
        )
        return [org_stack for stage in stack.stages for org_stack in stage.stacks]
    if checks:
        add_checks(app)
    return [OrganisationStack(app, stack_name_for(org), organisation=org) for org in organisations]
