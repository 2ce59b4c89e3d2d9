"""The pipeline stack: only with -c pipeline_file, its stages, approval, synth step, roles."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import cx_api
from aws_cdk.assertions import Template
from cfnlint.api import lint

from quota_constructs.config import discover_org_files, load_organisation
from quota_constructs.model import QuotaConfigError
from quota_constructs.stacks.organisation_app import PIPELINE_FILE_CONTEXT, build_app
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from quota_constructs.stacks.pipeline_stack import (
    CDK_CLI_DIRECTORY,
    CDK_CLI_VERSION,
    COPY_CLI_LOCK,
    INSTALL_COMMAND,
    TEST_COMMAND,
    PipelineStack,
    synth_commands,
)
from quota_constructs.stacks.plan_gate import SUMMARY_VARIABLE, URL_VARIABLE, plan_commands
from tests.constructs.helpers import ROOT, cdk_json_context, make_app
from tests.helpers import ORGS_DIR

EXAMPLE = "stacks/pipeline.example.yaml"
SEED = ORGS_DIR / "seed-demo.yaml"


def pipeline_app(pipeline_file: str = EXAMPLE, **options: Any) -> cdk.App:
    context = {**cdk_json_context(), PIPELINE_FILE_CONTEXT: pipeline_file}
    return cdk.App(context=context, builtin_cloud_formation_validation=False, **options)


def pipeline_template(app: cdk.App, files: list[Path] | None = None) -> dict[str, Any]:
    build_app(app, files, checks=False)
    stack = app.node.find_child("Quota-Pipeline")
    assert isinstance(stack, PipelineStack)
    return dict(Template.from_stack(stack).to_json())


@pytest.fixture(scope="module")
def example() -> dict[str, Any]:
    return pipeline_template(pipeline_app())


def of_type(template: dict[str, Any], resource_type: str) -> list[dict[str, Any]]:
    return [r for r in template["Resources"].values() if r["Type"] == resource_type]


def pipeline_stages(template: dict[str, Any]) -> list[dict[str, Any]]:
    [pipeline] = of_type(template, "AWS::CodePipeline::Pipeline")
    return list(pipeline["Properties"]["Stages"])


def test_without_a_pipeline_file_the_app_is_the_organisation_stacks_as_before() -> None:
    app = make_app()
    built = build_app(app, checks=False)
    assert [c.node.id for c in app.node.children if isinstance(c, cdk.Stack)] == [
        stack_name_for(load_organisation(path)) for path in discover_org_files(ORGS_DIR)
    ]
    for stack in built:
        alone = OrganisationStack(make_app(), stack.node.id, organisation=stack.organisation)
        assert Template.from_stack(stack).to_json() == Template.from_stack(alone).to_json()


def test_with_a_pipeline_file_the_app_is_the_pipeline_stack_and_its_stages() -> None:
    app = pipeline_app()
    built = build_app(app, checks=False)
    assert [c.node.id for c in app.node.children if isinstance(c, cdk.Stack)] == ["Quota-Pipeline"]
    assert [(s.node.path, s.stack_name, s.account) for s in built] == [
        ("Quota-Pipeline/staging/Quota-seed-demo", "Quota-seed-demo", "111122223333"),
        ("Quota-Pipeline/production/Quota-research", "Quota-research", "444455556666"),
    ]


def test_stages_are_source_build_self_mutation_then_each_environment(
    example: dict[str, Any],
) -> None:
    assert [s["Name"] for s in pipeline_stages(example)] == [
        "Source", "Build", "UpdatePipeline", "staging", "production",
    ]  # fmt: skip


def test_source_is_the_files_connection_repository_and_branch(example: dict[str, Any]) -> None:
    [action] = pipeline_stages(example)[0]["Actions"]
    assert action["ActionTypeId"]["Provider"] == "CodeStarSourceConnection"
    configuration = action["Configuration"]
    assert configuration["ConnectionArn"].startswith("arn:aws:codeconnections:eu-west-1:")
    assert (configuration["FullRepositoryId"], configuration["BranchName"]) == (
        "my-org/gpu-quotas",
        "main",
    )


def test_synth_step_installs_from_the_project_runs_the_readme_tests_then_synthesizes(
    example: dict[str, Any],
) -> None:
    projects = of_type(example, "AWS::CodeBuild::Project")
    specs = [json.loads(p["Properties"]["Source"]["BuildSpec"]) for p in projects]
    [synth] = [s for s in specs if s["phases"]["build"]["commands"] == synth_commands(EXAMPLE)]
    assert synth["phases"]["install"]["commands"] == [INSTALL_COMMAND]
    assert synth["phases"]["build"]["commands"][-2].endswith(f"-c pipeline_file={EXAMPLE}")
    readme = (ROOT / "README.md").read_text()
    assert f"\n{TEST_COMMAND}   #" in readme  # the README's test command
    [mutation] = [s for s in specs if "cdk -a" in json.dumps(s)]
    assert "cdk -a" in json.dumps(mutation)  # self-mutation


def build_specs(template: dict[str, Any]) -> list[dict[str, Any]]:
    projects = of_type(template, "AWS::CodeBuild::Project")
    return [json.loads(p["Properties"]["Source"]["BuildSpec"]) for p in projects]


def test_no_step_installs_an_unlocked_npm_package(example: dict[str, Any]) -> None:
    for spec in build_specs(example):
        assert "npm install" not in json.dumps(spec), spec  # no lock, no integrity check


def test_the_self_mutation_step_installs_the_cdk_cli_from_the_lock_with_npm_ci(
    example: dict[str, Any],
) -> None:
    [synth] = [
        s for s in build_specs(example) if s["phases"]["build"]["commands"][0] == "make test"
    ]
    assert synth["phases"]["build"]["commands"][-1] == COPY_CLI_LOCK
    expected = (
        f"mkdir -p cdk.out/{CDK_CLI_DIRECTORY} && "
        f"cp package.json package-lock.json cdk.out/{CDK_CLI_DIRECTORY}/"
    )
    assert expected == COPY_CLI_LOCK
    [mutation] = [s for s in build_specs(example) if "cdk -a" in json.dumps(s)]
    assert mutation["phases"]["install"]["commands"] == [
        f"npm ci --prefix {CDK_CLI_DIRECTORY} --no-audit --no-fund --loglevel=error"
    ]
    build = mutation["phases"]["build"]["commands"]
    assert build[0] == f'export PATH="$PWD/{CDK_CLI_DIRECTORY}/node_modules/.bin:$PATH"'
    assert build[1].startswith("cdk -a . deploy Quota-Pipeline ")


def test_the_lock_pins_the_cdk_cli_of_package_json_with_an_integrity_hash() -> None:
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["aws-cdk"]
    entry = json.loads((ROOT / "package-lock.json").read_text())["packages"]["node_modules/aws-cdk"]
    assert entry["version"] == pinned == CDK_CLI_VERSION
    assert entry["integrity"].startswith("sha512-")


def test_production_waits_for_a_manual_approval_and_staging_does_not(
    example: dict[str, Any],
) -> None:
    staging, production = pipeline_stages(example)[3:]
    categories = [a["ActionTypeId"]["Category"] for a in staging["Actions"]]
    assert "Approval" not in categories
    plan, approve, *deploys = production["Actions"]
    assert (plan["Name"], approve["ActionTypeId"]["Category"]) == ("Plan-research", "Approval")
    assert all(a["RunOrder"] > approve["RunOrder"] for a in deploys)


def test_each_environment_deploys_through_its_accounts_bootstrap_roles(
    example: dict[str, Any],
) -> None:
    for stage, account in zip(
        pipeline_stages(example)[3:], ("111122223333", "444455556666"), strict=True
    ):
        deploys = [a for a in stage["Actions"] if a["ActionTypeId"]["Category"] == "Deploy"]
        assert deploys
        for action in deploys:
            role = json.dumps(action["RoleArn"])
            assert f"cdk-hnb659fds-deploy-role-{account}-eu-west-1" in role


def test_artifacts_use_a_rotated_cross_account_key(example: dict[str, Any]) -> None:
    keys = of_type(example, "AWS::KMS::Key")
    assert len(keys) == 1 and keys[0]["Properties"]["EnableKeyRotation"] is True
    [pipeline] = of_type(example, "AWS::CodePipeline::Pipeline")
    assert "EncryptionKey" in pipeline["Properties"]["ArtifactStore"]


ONE_STAGE = """\
connection_arn: arn:aws:codeconnections:eu-west-1:111122223333:connection/abcd
repository: my-org/gpu-quotas
branch: main
environments:
  - {name: staging, account: "111122223333", region: eu-west-1, organisations: [seed-demo]}
"""


def synth_pipeline(org_file: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pipeline's template and its one stage stack's, from ``org_file``."""
    app = pipeline_app("pipeline.yaml")
    [stage_stack] = build_app(app, [org_file], checks=False)
    pipeline = app.node.find_child("Quota-Pipeline")
    assert isinstance(pipeline, cdk.Stack)
    return (
        dict(Template.from_stack(pipeline).to_json()),
        dict(Template.from_stack(stage_stack).to_json()),
    )


def test_changing_an_organisation_file_changes_its_stage_not_the_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pipeline.yaml").write_text(ONE_STAGE)
    org_file = tmp_path / "seed-demo.yaml"
    shutil.copy(SEED, org_file)
    pipeline_before, stage_before = synth_pipeline(org_file)

    with org_file.open("a") as file:
        file.write("  - {name: QS4, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}\n")
    pipeline_after, stage_after = synth_pipeline(org_file)

    assert pipeline_after == pipeline_before
    shares = [r for r in stage_after["Resources"].values() if r["Type"] == "AWS::Batch::QuotaShare"]
    assert len(shares) == 4 and stage_after != stage_before


def test_adding_an_organisation_to_an_environment_changes_only_the_pipeline_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    files = [Path(shutil.copy(ORGS_DIR / n, tmp_path)) for n in ("seed-demo.yaml", "research.yaml")]
    deployed = []
    for organisations in ("[seed-demo]", "[seed-demo, research]"):
        (tmp_path / "pipeline.yaml").write_text(ONE_STAGE.replace("[seed-demo]", organisations))
        app = pipeline_app("pipeline.yaml")
        stacks = build_app(app, files, checks=False)
        template = dict(Template.from_stack(app.node.find_child("Quota-Pipeline")).to_json())  # type: ignore[arg-type]
        [staging] = pipeline_stages(template)[3:]
        names = {a["Configuration"].get("StackName") for a in staging["Actions"]}
        plans = {a["Name"] for a in staging["Actions"] if a["Name"].startswith("Plan-")}
        assert plans == {f"Plan-{name}" for name in deployed_names(stacks)}
        deployed.append(([s.stack_name for s in stacks], names - {None}))
    assert deployed == [
        (["Quota-seed-demo"], {"Quota-seed-demo"}),
        (["Quota-seed-demo", "Quota-research"], {"Quota-seed-demo", "Quota-research"}),
    ]


def deployed_names(stacks: list[OrganisationStack]) -> list[str]:
    return [s.organisation.name for s in stacks]


# --- the gate: a Plan step per organisation before the approval and the deploys ------------------


def plan_actions(stage: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in stage["Actions"] if a["Name"].startswith("Plan-")]


def project_of(template: dict[str, Any], action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    logical_id = action["Configuration"]["ProjectName"]["Ref"]
    return logical_id, template["Resources"][logical_id]


def test_each_environment_plans_each_organisation_before_the_approval_and_the_deploys(
    example: dict[str, Any],
) -> None:
    for stage, organisation in zip(
        pipeline_stages(example)[3:], ("seed-demo", "research"), strict=True
    ):
        [plan] = plan_actions(stage)
        assert plan["Name"] == f"Plan-{organisation}"
        assert plan["ActionTypeId"]["Category"] == "Build"
        later = [a for a in stage["Actions"] if a is not plan]
        assert later and all(a["RunOrder"] > plan["RunOrder"] for a in later)


def test_the_plan_step_runs_quota_org_plan_on_the_organisation_file_and_fails_unless_it_passes(
    example: dict[str, Any],
) -> None:
    production = pipeline_stages(example)[4]
    [plan] = plan_actions(production)
    _, project = project_of(example, plan)
    spec = json.loads(project["Properties"]["Source"]["BuildSpec"])
    assert spec["phases"]["install"]["commands"] == [INSTALL_COMMAND]
    commands = spec["phases"]["build"]["commands"]
    assert commands == plan_commands(
        "research", "stacks/orgs/research.yaml", "444455556666", "eu-west-1"
    )
    [run] = [c for c in commands if c.startswith("quota org plan")]
    assert run.startswith(
        "quota org plan stacks/orgs/research.yaml --region eu-west-1 --absent-ok --json >"
    )
    assert run.endswith("test $status -eq 0")  # CodeBuild fails the build on that command
    assert spec["env"]["exported-variables"] == [SUMMARY_VARIABLE, URL_VARIABLE]


def test_the_plan_step_may_only_assume_the_target_account_s_lookup_role(
    example: dict[str, Any],
) -> None:
    production = pipeline_stages(example)[4]
    [plan] = plan_actions(production)
    _, project = project_of(example, plan)
    role = project["Properties"]["ServiceRole"]["Fn::GetAtt"][0]
    [policy] = [
        r for r in of_type(example, "AWS::IAM::Policy") if {"Ref": role} in r["Properties"]["Roles"]
    ]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    beyond_codebuild = [
        s
        for s in statements
        if not all(a.split(":")[0] in ("logs", "codebuild", "s3", "kms") for a in _actions(s))
    ]
    assert beyond_codebuild == [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Resource": "arn:aws:iam::444455556666:role/cdk-hnb659fds-lookup-role-"
            "444455556666-eu-west-1",
        }
    ]
    writes = [a for s in statements for a in _actions(s) if a.startswith("s3:Put")]
    assert writes == []  # reads the source artifact only


def _actions(statement: dict[str, Any]) -> list[str]:
    actions = statement["Action"]
    return [actions] if isinstance(actions, str) else list(actions)


def test_the_approval_shows_the_plan_s_summary_and_links_its_build(
    example: dict[str, Any],
) -> None:
    production = pipeline_stages(example)[4]
    [approve] = [a for a in production["Actions"] if a["ActionTypeId"]["Category"] == "Approval"]
    [plan] = plan_actions(production)
    namespace = plan["Namespace"]
    assert approve["Configuration"] == {
        "CustomData": "Deploy research to production (444455556666, eu-west-1)? Plan: "
        f"research: #{{{namespace}.{SUMMARY_VARIABLE}}}",
        "ExternalEntityLink": f"#{{{namespace}.{URL_VARIABLE}}}",
    }


def test_rejects_an_organisation_file_outside_the_repository_naming_it_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    (tmp_path / "repo" / "pipeline.yaml").write_text(ONE_STAGE)
    outside = Path(shutil.copy(SEED, tmp_path))
    with pytest.raises(QuotaConfigError) as error:
        build_app(pipeline_app("pipeline.yaml"), [outside], checks=False)
    message = str(error.value)
    assert message.startswith("pipeline.yaml: organisation seed-demo: the pipeline's Plan step")
    assert [p.value for p in error.value.problems] == [str(outside)]  # the message clips it
    assert "fix: keep organisation files in the repository" in message


def walk(assembly: cx_api.CloudAssembly) -> Iterator[cx_api.CloudFormationStackArtifact]:
    yield from assembly.stacks
    for nested in assembly.nested_assemblies:
        yield from walk(nested.nested_assembly)


@pytest.mark.slow
def test_pipeline_and_stage_stacks_are_nag_and_cfn_lint_clean(tmp_path: Path) -> None:
    app = cdk.App(
        context={**cdk_json_context(), PIPELINE_FILE_CONTEXT: EXAMPLE}, outdir=str(tmp_path)
    )
    build_app(app)  # registers cdk-nag AwsSolutions; a finding would fail synth
    assembly = app.synth()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    assert [p["conclusion"] for p in report["pluginReports"]] == ["success", "success"]
    stacks = list(walk(assembly))
    assert sorted(s.stack_name for s in stacks) == [
        "Quota-Pipeline", "Quota-research", "Quota-seed-demo",
    ]  # fmt: skip
    for stack in stacks:
        matches = lint(json.dumps(stack.template), regions=["eu-west-1"])
        assert [f"{m.rule.id} {m.message} ({m.path})" for m in matches] == [], stack.stack_name
