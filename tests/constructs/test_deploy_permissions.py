"""docs/pipeline.md lists every action CloudFormation needs for what the stacks create, from
the resource schemas' handler permissions (tools/gen_deploy_permissions.py)."""

from __future__ import annotations

from types import ModuleType

from tests.helpers import tool


def generator() -> ModuleType:
    return tool("gen_deploy_permissions")


def test_the_doc_lists_what_the_schemas_of_the_stacks_types_require() -> None:
    tool = generator()
    text = tool.DOC.read_text()
    assert tool.rewrite(text) == text


def test_the_service_environment_needs_to_create_batchs_service_linked_role() -> None:
    actions = generator().permissions("AWS::Batch::ServiceEnvironment")
    assert "iam:CreateServiceLinkedRole" in actions
    assert "batch:CreateServiceEnvironment" in actions


def test_every_type_the_stacks_create_has_handler_permissions_in_the_doc() -> None:
    tool = generator()
    section = tool.section()
    for resource_type in tool._region_table().RESOURCE_TYPES:
        actions = tool.permissions(resource_type) or tool.WITHOUT_HANDLERS[resource_type]
        assert f"| `{resource_type}` | `{actions[0]}`" in section
    for quota_action in (
        "batch:CreateQuotaShare",
        "batch:CreateJobQueue",
        "batch:CreateSchedulingPolicy",
    ):
        assert f"`{quota_action}`" in section


def test_only_types_whose_schema_lists_no_handler_permissions_are_named_by_hand() -> None:
    tool = generator()
    for resource_type in tool.WITHOUT_HANDLERS:
        assert tool.permissions(resource_type) == []
        assert resource_type in tool._region_table().RESOURCE_TYPES
