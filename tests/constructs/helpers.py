"""Test apps for the constructs: cdk.json feature flags loaded, CloudFormation validation off."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import cx_api
from aws_cdk.assertions import Template
from cfnlint.api import lint

from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    QuotaShareSpec,
    SharingStrategy,
    TeamAccess,
)

ROOT = Path(__file__).resolve().parents[2]


@cache
def cdk_json_context() -> dict[str, Any]:
    """The feature flags of ``cdk.json`` (a bare ``cdk.App()`` does not read them)."""
    return dict(json.loads((ROOT / "cdk.json").read_text())["context"])


def make_app(*, validation: bool = False, outdir: str | None = None) -> cdk.App:
    """A fresh app with the project's feature flags; built-in CFN validation off by default."""
    return cdk.App(
        context=cdk_json_context(),
        builtin_cloud_formation_validation=validation,
        outdir=outdir,
    )


def make_stack(name: str = "Test") -> cdk.Stack:
    return cdk.Stack(make_app(), name)


def resources(stack: cdk.Stack, resource_type: str) -> dict[str, Any]:
    """Logical ID -> resource of one type in the stack's template."""
    return dict(Template.from_stack(stack).find_resources(resource_type))


def share(name: str, strategy: str = "LEND", count: int = 1, **kwargs: Any) -> QuotaShareSpec:
    return QuotaShareSpec(
        name=name,
        capacity={"ml.g5.xlarge": count},
        strategy=SharingStrategy(strategy),
        **kwargs,
    )


FLEET_CAPS = (None, 0, 1, 50, 100, 9999, 500)
"""Priority caps of the generated organisation's teams, in turn (``None``: no cap)."""
FLEET_ACCOUNT = "123456789012"
"""The account of the generated organisation's existing roles (the IAM harness's account)."""
FLEET_EXISTING_ROLES = {
    "team-01": f"arn:aws:iam::{FLEET_ACCOUNT}:role/fleet-team-01-training",
    "team-04": f"arn:aws:iam::{FLEET_ACCOUNT}:role/training/fleet-team-04",
}
FLEET_EXISTING_BUCKETS = {
    "team-02": "fleet-shared-training/team-02",
    "team-03": "fleet-shared-training/team-02-archive",
    "team-04": "fleet-shared-training/team-04",
    "team-05": "fleet-team-05-data",
}
"""Existing bucket locations: prefixes of one shared bucket (one a string prefix of another,
but not a key prefix) and a whole bucket."""


def fleet_principals(index: int) -> tuple[str, ...]:
    """Varied principal forms: an account id, a role ARN with a path, a user and a role."""
    if index % 3 == 0:
        return (f"{210000000000 + index}",)
    if index % 3 == 1:
        return (f"arn:aws:iam::210987654321:role/fleet/Team{index:02d}",)
    return (
        f"arn:aws:iam::210987654321:user/fleet-lead-{index:02d}",
        f"arn:aws:iam::210987654322:role/Team{index:02d}",
    )


def fleet_organisation(name: str = "fleet", shares: int = 20) -> Organisation:
    """An organisation whose every share has ``access``: varied caps and principals, existing
    execution roles (``FLEET_EXISTING_ROLES``) and buckets (``FLEET_EXISTING_BUCKETS``); its
    last share is called ``generative``, like one of the research organisation's."""
    specs = []
    for index in range(1, shares + 1):
        share_name = "generative" if index == shares else f"team-{index:02d}"
        access = TeamAccess(
            principals=fleet_principals(index),
            max_priority=FLEET_CAPS[index % len(FLEET_CAPS)],
            execution_role=FLEET_EXISTING_ROLES.get(share_name, "create"),
            bucket=FLEET_EXISTING_BUCKETS.get(share_name, "create"),
        )
        specs.append(
            QuotaShareSpec(
                name=share_name,
                capacity={"ml.g5.xlarge": 1},
                strategy=SharingStrategy.LEND,
                access=access,
            )
        )
    return Organisation(
        name=name,
        queue=JobQueueSpec(shares=tuple(specs)),
        description="Generated: every share with team access",
    ).validate(context=name)


def assert_clean(outdir: Path, assembly: cx_api.CloudAssembly) -> None:
    """No failing validation plugin, no cdk-nag finding, no cfn-lint error or warning."""
    report = json.loads((outdir / "validation-report.json").read_text())
    failing = [p for p in report["pluginReports"] if p["conclusion"] != "success"]
    assert failing == []
    nag = [
        v
        for p in report["pluginReports"]
        if p["pluginName"] == "AwsSolutions"
        for v in p["violations"]
    ]
    assert nag == []

    for stack in assembly.stacks:
        matches = lint(json.dumps(stack.template), regions=["us-east-1", "eu-west-1"])
        assert [f"{m.rule.id} {m.message} ({m.path})" for m in matches] == [], stack.stack_name
