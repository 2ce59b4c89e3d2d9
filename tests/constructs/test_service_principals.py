"""Every service principal in every synthesized policy has source conditions.

Walks every template of the app (every organisation file, the generated 20-team organisation,
the pipeline stack and its stages' stacks) and every policy document in it (trust policies,
key, bucket, topic, queue and log-group policies, identity policies) for statements whose
principal is an AWS service. Each must carry ``aws:SourceAccount`` and ``aws:SourceArn`` (the
confused-deputy conditions AWS advises): a service acting for another account, or for another
resource, is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import aws_cdk as cdk
import pytest

from quota_constructs.stacks.organisation_app import PIPELINE_FILE_CONTEXT, build_app
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from tests.constructs.helpers import cdk_json_context, fleet_organisation, make_app

SOURCE_KEYS = ("aws:SourceAccount", "aws:SourceArn")
ALLOWED_WITHOUT_SOURCE: dict[tuple[str, str], str] = {}
"""(service, resource type) -> why AWS supports no source condition there. Empty: every
service principal the constructs and CDK Pipelines write supports both keys."""


def _templates() -> Iterator[tuple[str, dict[str, Any]]]:
    app = make_app()
    build_app(app, checks=False)
    OrganisationStack(app, stack_name_for(fleet_organisation()), organisation=fleet_organisation())
    context = {**cdk_json_context(), PIPELINE_FILE_CONTEXT: "stacks/pipeline.example.yaml"}
    pipeline = cdk.App(context=context, builtin_cloud_formation_validation=False)
    build_app(pipeline, checks=False)
    for built in (app, pipeline):
        for stack in built.synth().stacks_recursively:
            yield stack.hierarchical_id, stack.template


def _statements(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if isinstance(node.get("Statement"), list):
            yield from (s for s in node["Statement"] if isinstance(s, dict))
        for value in node.values():
            yield from _statements(value)
    elif isinstance(node, list):
        for value in node:
            yield from _statements(value)


def _services(statement: dict[str, Any]) -> list[str]:
    principal = statement.get("Principal")
    service = principal.get("Service", []) if isinstance(principal, dict) else []
    return [service] if isinstance(service, str) else list(service)


@pytest.fixture(scope="module")
def service_statements() -> list[tuple[str, str, str, str, dict[str, Any]]]:
    """(stack, logical id, resource type, service, condition) of every service statement."""
    found = []
    for stack, template in _templates():
        for logical_id, resource in template["Resources"].items():
            for statement in _statements(resource.get("Properties", {})):
                for service in _services(statement):
                    condition = statement.get("Condition", {})
                    found.append((stack, logical_id, resource["Type"], service, condition))
    return found


def test_the_walk_finds_every_kind_of_service_statement(
    service_statements: list[tuple[str, str, str, str, dict[str, Any]]],
) -> None:
    services = {service for _, _, _, service, _ in service_statements}
    assert services >= {
        "sagemaker.amazonaws.com",
        "events.amazonaws.com",
        "sns.amazonaws.com",
        "logging.s3.amazonaws.com",
        "codebuild.amazonaws.com",
        "codepipeline.amazonaws.com",
    }
    assert any(kind == "AWS::KMS::Key" for _, _, kind, _, _ in service_statements)


def test_rejects_no_service_principal_statement_without_source_conditions(
    service_statements: list[tuple[str, str, str, str, dict[str, Any]]],
) -> None:
    missing = [
        f"{stack}/{logical_id} ({kind}): {service} lacks {key}"
        for stack, logical_id, kind, service, condition in service_statements
        if (service, kind) not in ALLOWED_WITHOUT_SOURCE
        for key in SOURCE_KEYS
        if not any(key in keys for keys in condition.values())
    ]
    assert missing == []
