"""Test apps for the constructs: cdk.json feature flags loaded, CloudFormation validation off."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk.assertions import Template

from quota_constructs.model import QuotaShareSpec, SharingStrategy

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
