"""The constructs synthesize the same secure resources in any CDK app.

A representative organisation (every construct: team access with created and existing roles
and buckets, prefixes, notifications, the dashboard) synthesized in a bare ``cdk.App()``, with
no feature flags, and in an app with this project's ``cdk.json`` flags: the security
properties of every resource are equal (encryption, SSL-only, public access block, ownership,
access logs, key policies and rotation, every IAM statement, expanded to one action on one
resource so that policy minimisation cannot hide a difference).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from quota_constructs.config import load_organisation
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from tests.constructs.helpers import fleet_organisation, make_app
from tests.helpers import ORGS_DIR

BUCKET_PROPERTIES = (
    "BucketEncryption",
    "PublicAccessBlockConfiguration",
    "OwnershipControls",
    "VersioningConfiguration",
    "LoggingConfiguration",
    "AccessControl",
)
ORGANISATIONS = (load_organisation(ORGS_DIR / "research.yaml"), fleet_organisation())

Atom = tuple[str, ...]


def _templates(app: cdk.App) -> dict[str, dict[str, Any]]:
    stacks = [
        OrganisationStack(app, stack_name_for(organisation), organisation=organisation)
        for organisation in ORGANISATIONS
    ]
    return {stack.stack_name: dict(Template.from_stack(stack).to_json()) for stack in stacks}


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _principals(statement: dict[str, Any]) -> list[str]:
    principal = statement.get("Principal")
    if not isinstance(principal, dict):
        return [json.dumps(principal)]
    return [
        f"{kind}:{json.dumps(value, sort_keys=True)}"
        for kind, values in principal.items()
        for value in _listed(values)
    ]


def _atoms(statement: dict[str, Any]) -> Iterator[Atom]:
    """One (effect, principal, action, resource, condition) per principal, action, resource."""
    condition = json.dumps(statement.get("Condition"), sort_keys=True)
    for principal in _principals(statement):
        for action in _listed(statement.get("Action", statement.get("NotAction"))):
            for resource in _listed(statement.get("Resource", "-")):
                resource_text = json.dumps(resource, sort_keys=True)
                yield (statement["Effect"], principal, str(action), resource_text, condition)


def _documents(properties: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for key in ("PolicyDocument", "AssumeRolePolicyDocument", "KeyPolicy"):
        if key in properties:
            yield properties[key]
    for policy in properties.get("Policies", []):
        yield policy["PolicyDocument"]


def security_properties(template: dict[str, Any]) -> dict[str, Any]:
    """Logical id -> the security-relevant properties of each resource."""
    found: dict[str, Any] = {}
    for logical_id, resource in template["Resources"].items():
        properties = resource.get("Properties", {})
        kind = resource["Type"]
        entry: dict[str, Any] = {"type": kind}
        if kind == "AWS::S3::Bucket":
            entry.update({key: properties.get(key) for key in BUCKET_PROPERTIES})
        if kind == "AWS::KMS::Key":
            entry["rotation"] = properties.get("EnableKeyRotation")
        if kind == "AWS::SNS::Topic":
            entry["key"] = properties.get("KmsMasterKeyId")
        if kind == "AWS::SQS::Queue":
            entry["sse"] = properties.get("SqsManagedSseEnabled")
        if kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            entry["attached"] = sorted(
                json.dumps(r, sort_keys=True) for r in properties.get("Roles", [])
            )
        statements = {
            atom
            for document in _documents(properties)
            for s in document["Statement"]
            for atom in _atoms(s)
        }
        if statements:
            entry["statements"] = sorted(statements)
        entry["retained"] = resource.get("DeletionPolicy")
        found[logical_id] = entry
    return found


@pytest.fixture(scope="module")
def bare() -> dict[str, dict[str, Any]]:
    return _templates(cdk.App())


@pytest.fixture(scope="module")
def flagged() -> dict[str, dict[str, Any]]:
    return _templates(make_app())


def test_the_organisations_synthesize_in_a_bare_app_with_no_feature_flags(
    bare: dict[str, dict[str, Any]],
) -> None:
    assert set(bare) == {"Quota-research", "Quota-fleet"}


def test_bare_and_flagged_apps_give_equal_security_properties(
    bare: dict[str, dict[str, Any]], flagged: dict[str, dict[str, Any]]
) -> None:
    for stack, template in flagged.items():
        assert security_properties(bare[stack]) == security_properties(template), stack


def test_team_buckets_log_by_bucket_policy_not_by_acl_in_a_bare_app(
    bare: dict[str, dict[str, Any]],
) -> None:
    buckets = [
        resource["Properties"]
        for resource in bare["Quota-research"]["Resources"].values()
        if resource["Type"] == "AWS::S3::Bucket"
    ]
    assert len(buckets) == 4  # three teams' and the access-log bucket
    for bucket in buckets:
        assert "AccessControl" not in bucket
        assert bucket["OwnershipControls"] == {
            "Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]
        }
