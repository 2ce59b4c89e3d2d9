"""Regions without a resource type the stacks create are refused at synth, from cfn-lint's
region schemas (quota_constructs/data/resource_type_regions.txt, tools/gen_region_table.py)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from quota_constructs.config import load_organisation
from quota_constructs.model import QuotaConfigError
from quota_constructs.model.regions import (
    QUEUE_RESOURCE_TYPES,
    REGIONS_FILE,
    compact_regions,
    known_regions,
    region_problems,
    resource_type_regions,
)
from quota_constructs.pipeline_config import PipelineFileError, load_pipeline
from quota_constructs.stacks.organisation_app import PIPELINE_FILE_CONTEXT, build_app
from quota_constructs.stacks.organisation_stack import OrganisationStack
from quota_constructs.stacks.region_check import REGION_RULE_ID, resource_types
from tests.constructs.helpers import ROOT, cdk_json_context, fleet_organisation, make_app
from tests.helpers import ORGS_DIR, tool

SEED = load_organisation(ORGS_DIR / "seed-demo.yaml")
NO_QUOTA_SHARE = "me-central-1"
"""The one region cfn-lint's schemas (1.58) list without AWS::Batch::QuotaShare."""
REFUSAL = (
    "CloudFormation has no AWS::Batch::QuotaShare in me-central-1 (cfn-lint's region schemas) "
    "(got 'me-central-1'); fix: deploy to a region that has it: every region cfn-lint knows "
    "but me-central-1"
)


def generator() -> ModuleType:
    return tool("gen_region_table")


def test_the_data_file_is_what_the_tool_makes_from_the_installed_cfn_lint() -> None:
    tool = generator()
    assert (ROOT / "quota_constructs" / REGIONS_FILE).read_text() == tool.render(tool.table())


def test_quota_share_is_missing_from_a_region_cfn_lint_knows() -> None:
    table = resource_type_regions()
    assert NO_QUOTA_SHARE not in table["AWS::Batch::QuotaShare"]
    assert NO_QUOTA_SHARE in table["AWS::Batch::JobQueue"]
    assert {"us-east-1", "eu-west-1"} <= table["AWS::Batch::QuotaShare"]


def test_the_table_covers_every_type_the_stacks_create() -> None:
    """The pipeline app (pipeline stack, stages of both organisation files) and the fleet."""
    context = {**cdk_json_context(), PIPELINE_FILE_CONTEXT: "stacks/pipeline.example.yaml"}
    app = cdk.App(context=context, builtin_cloud_formation_validation=False)
    stacks = build_app(app, checks=False)
    pipeline = app.node.find_child("Quota-Pipeline")
    assert isinstance(pipeline, cdk.Stack)
    fleet = OrganisationStack(make_app(), "Quota-fleet", organisation=fleet_organisation())
    created = set().union(*(resource_types(s) for s in [*stacks, pipeline, fleet]))
    assert "AWS::Scheduler::Schedule" in created  # research's calendar
    assert created == set(resource_type_regions())


def test_a_stack_in_a_region_without_quota_shares_is_refused_naming_it() -> None:
    env = cdk.Environment(account="111122223333", region=NO_QUOTA_SHARE)
    with pytest.raises(QuotaConfigError) as caught:
        OrganisationStack(make_app(), "Quota-seed-demo", organisation=SEED, env=env)
    assert str(caught.value) == f"stack Quota-seed-demo: region: {REFUSAL}"


def test_stacks_in_a_region_with_every_type_and_without_a_region_are_not_refused() -> None:
    env = cdk.Environment(account="111122223333", region="eu-west-1")
    OrganisationStack(make_app(), "Quota-seed-demo", organisation=SEED, env=env)
    agnostic = OrganisationStack(make_app(), "Quota-seed-demo", organisation=SEED)
    assert cdk.Token.is_unresolved(agnostic.region)


def holds(expression: Any, region: str) -> Any:
    """``expression`` of a CloudFormation rule evaluated with ``AWS::Region`` = ``region`` (the
    rule functions the region rule uses; any other is an error)."""
    if not isinstance(expression, dict):
        return expression
    [(function, args)] = expression.items()
    if function == "Ref":
        assert args == "AWS::Region"
        return region
    if function == "Fn::Not":
        return not holds(args[0], region)
    if function == "Fn::Equals":
        return holds(args[0], region) == holds(args[1], region)
    if function == "Fn::Contains":
        return holds(args[1], region) in args[0]
    raise AssertionError(f"unexpected rule function {function}")


def failed_assertions(stack: cdk.Stack, region: str) -> list[str]:
    """The descriptions of the region rule's assertions that fail in ``region``."""
    rule = Template.from_stack(stack).to_json()["Rules"][REGION_RULE_ID]
    return [a["AssertDescription"] for a in rule["Assertions"] if not holds(a["Assert"], region)]


@pytest.fixture(scope="module")
def agnostic() -> OrganisationStack:
    return OrganisationStack(make_app(), "Quota-seed-demo", organisation=SEED)


def test_an_environment_agnostic_stack_refuses_at_deploy_a_region_without_quota_shares(
    agnostic: OrganisationStack,
) -> None:
    assert failed_assertions(agnostic, NO_QUOTA_SHARE) == [f"AWS::Region: {REFUSAL}"]


@pytest.mark.parametrize("region", ["eu-west-1", "us-east-1", "ap-southeast-2"])
def test_an_environment_agnostic_stack_deploys_where_every_type_exists(
    agnostic: OrganisationStack, region: str
) -> None:
    assert failed_assertions(agnostic, region) == []


def test_an_environment_agnostic_stack_refuses_at_deploy_a_region_cfn_lint_does_not_know(
    agnostic: OrganisationStack,
) -> None:
    assert failed_assertions(agnostic, "xx-east-1") == [
        "AWS::Region: not a region cfn-lint's region schemas know; fix: deploy to a region that "
        "has every resource type this stack creates: every region cfn-lint knows but me-central-1"
    ]


def test_the_deploy_time_rule_is_made_from_the_table_for_the_types_the_stack_creates(
    agnostic: OrganisationStack,
) -> None:
    refused = {
        region
        for region in sorted(known_regions())
        if region_problems(region, resource_types(agnostic), "r")
    }
    assert {r for r in known_regions() if failed_assertions(agnostic, r)} == refused


def test_a_stack_with_a_concrete_region_has_no_deploy_time_rule() -> None:
    env = cdk.Environment(account="111122223333", region="eu-west-1")
    stack = OrganisationStack(make_app(), "Quota-seed-demo", organisation=SEED, env=env)
    assert REGION_RULE_ID not in Template.from_stack(stack).to_json().get("Rules", {})


def write_pipeline(tmp_path: Path, old: str, new: str) -> Path:
    text = (ROOT / "stacks" / "pipeline.example.yaml").read_text()
    assert old in text
    path = tmp_path / "pipeline.yaml"
    path.write_text(text.replace(old, new))
    return path


def test_a_pipeline_environment_in_that_region_is_refused_with_file_line_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_pipeline(
        tmp_path,
        "region: eu-west-1, organisations: [research]",
        f"region: {NO_QUOTA_SHARE}, organisations: [research]",
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PipelineFileError) as caught:
        load_pipeline("pipeline.yaml", ["seed-demo", "research"])
    assert str(caught.value) == f"pipeline.yaml: line 9: environments[1].region: {REFUSAL}"


def test_a_region_cfn_lint_does_not_know_is_refused() -> None:
    [problem] = region_problems("xx-east-1", QUEUE_RESOURCE_TYPES, "environments[0].region")
    assert str(problem) == (
        "environments[0].region: no region cfn-lint's region schemas know (got 'xx-east-1'); "
        "fix: write a region that has them: every region cfn-lint knows but me-central-1"
    )


def test_types_outside_the_table_and_types_present_are_not_judged() -> None:
    assert region_problems(NO_QUOTA_SHARE, ["AWS::Batch::JobQueue", "Custom::Thing"], "r") == []


def test_regions_are_listed_with_numbered_siblings_joined() -> None:
    assert compact_regions(["us-east-2", "eu-west-3", "eu-west-1", "us-east-1", "sa-east-1"]) == (
        "eu-west-1/3, sa-east-1, us-east-1/2"
    )
