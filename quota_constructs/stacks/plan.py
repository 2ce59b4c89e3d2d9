"""Owns synthesizing an organisation's stack in memory for ``quota org plan``: its resources.

:func:`organisation_resources` builds the stack of an organisation in a fresh app (no cdk-nag,
no CloudFormation validation, nothing written to disk) and returns the template's
``Resources``, so the logical IDs and properties the plan compares are the ones the constructs
really produce. :func:`plan_organisation_change` synthesizes both versions and calls the pure
planner, :func:`quota_constructs.deploy_plan.plan_deploy`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import aws_cdk as cdk
from aws_cdk.assertions import Template

from quota_constructs.deploy_plan import CDK_PATH, DeployPlan, LiveJob, plan_deploy
from quota_constructs.model import Organisation
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for


def organisation_resources(organisation: Organisation) -> dict[str, Any]:
    """The ``Resources`` of ``organisation``'s stack (logical ID -> resource), synthesized in
    memory; ``QuotaConfigError`` for an organisation the stack refuses."""
    app = cdk.App(builtin_cloud_formation_validation=False)
    stack = OrganisationStack(app, stack_name_for(organisation), organisation=organisation)
    resources = dict(Template.from_stack(stack).to_json()["Resources"])
    for construct in stack.node.find_all():
        if isinstance(construct, cdk.CfnResource):
            resource = resources.get(str(stack.resolve(construct.logical_id)))
            if resource is not None:  # the construct path, as ``cdk synth`` records it
                resource.setdefault("Metadata", {})[CDK_PATH] = construct.node.path
    return resources


def plan_organisation_change(
    old: Organisation,
    new: Organisation,
    *,
    jobs: Sequence[LiveJob] | None = None,
    resource_types: Iterable[str] | None = None,
) -> DeployPlan:
    """What deploying ``new`` over a stack of ``old`` does: both synthesized, then
    :func:`~quota_constructs.deploy_plan.plan_deploy` (``jobs``, ``resource_types`` its)."""
    return plan_deploy(
        organisation_resources(old),
        organisation_resources(new),
        old=old,
        new=new,
        jobs=jobs,
        resource_types=resource_types,
    )
