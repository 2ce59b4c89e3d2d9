"""Owns the pipeline stack: CDK Pipelines from a repository branch to every environment.

Built only when ``cdk synth -c pipeline_file=PATH`` names a pipeline file
(:mod:`quota_constructs.pipeline_config`). The synth step installs from the project's own files
(``make setup``: the hashed requirements-dev.lock, package-lock.json), runs the README's test
command (``make test``), then synthesizes the app with the same pipeline file; the pipeline updates
itself from that output (self-mutation), with the CDK CLI installed by ``npm ci`` from the
package-lock.json the synth step copies into it. One stage per environment, in file order,
deploys that environment's organisation stacks through the target account's CDK bootstrap roles
(``cdk bootstrap --trust <pipeline account>``). Each stage first runs one "Plan" step per
organisation (:mod:`.plan_gate`): ``quota org plan`` against the live queue, failing on a
destructive change the organisation file's ``allow_destructive`` does not name; an environment
with ``approval: true`` then waits for a manual approval whose comment carries each plan's
summary and links the plan's build. Organisation files are read at synth time, so changing one
changes the stage templates, never this stack's code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_codepipeline as codepipeline
from aws_cdk import aws_iam as iam
from aws_cdk import pipelines
from constructs import Construct, IConstruct

from quota_constructs.model import Organisation, Problem, QuotaConfigError
from quota_constructs.pipeline_config import Environment, Pipeline
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from quota_constructs.stacks.plan_gate import (
    SUMMARY_VARIABLE,
    URL_VARIABLE,
    lookup_role_arn,
    plan_commands,
)
from quota_constructs.stacks.region_check import refuse_unsupported_region

PIPELINE_STACK_NAME = "Quota-Pipeline"
INSTALL_COMMAND = "make setup"
TEST_COMMAND = "make test"
"""The README's test command; the synth step runs it before synthesizing."""
TOOLS_ON_PATH = 'export PATH="$PWD/.venv/bin:$PWD/node_modules/.bin:$PATH"'
OUTPUT_DIRECTORY = "cdk.out"
CDK_CLI_VERSION = "2.1148.1"
"""The CDK CLI the pipeline runs: the one this package is tested with (the repository's
package.json and package-lock.json pin the same; tests keep them equal)."""
CDK_CLI_DIRECTORY = "cdk-cli"
"""Where the synth step puts package.json and package-lock.json in its output (the cloud
assembly), for the self-mutation step's ``npm ci``."""
COPY_CLI_LOCK = (
    f"mkdir -p {OUTPUT_DIRECTORY}/{CDK_CLI_DIRECTORY} && "
    f"cp package.json package-lock.json {OUTPUT_DIRECTORY}/{CDK_CLI_DIRECTORY}/"
)
"""The synth step's last command: the repository's npm lock into the cloud assembly."""
SELF_MUTATION_INSTALL = f"npm ci --prefix {CDK_CLI_DIRECTORY} --no-audit --no-fund --loglevel=error"
"""The self-mutation step's install: the CDK CLI (and the Node.js LTS) from the repository's
package-lock.json, each package checked against its integrity hash; never ``npm install -g``."""


def cdk_cli_version() -> str:
    """The CDK CLI version the self-mutation step installs (:data:`CDK_CLI_VERSION`)."""
    return CDK_CLI_VERSION


def synth_commands(pipeline_file: str) -> list[str]:
    """The synth step's commands after the install: the tests, the synthesis, then the npm
    lock copied into the output for the self-mutation step (:data:`COPY_CLI_LOCK`)."""
    return [
        TEST_COMMAND,
        TOOLS_ON_PATH,
        f"cdk synth --quiet -c pipeline_file={pipeline_file}",
        COPY_CLI_LOCK,
    ]


def _cli_from_the_lock(pipeline: pipelines.CodePipeline) -> None:
    """The self-mutation project's build spec with its ``npm install -g aws-cdk@VERSION`` (no
    lock, no integrity check) replaced by :data:`SELF_MUTATION_INSTALL`, and that CLI first on
    the ``PATH`` of CDK Pipelines' own deploy command. CDK Pipelines has no option for it (a
    partial build spec only adds commands), so the synthesized spec is overridden."""
    project = pipeline.self_mutation_project.node.default_child
    assert isinstance(project, codebuild.CfnProject)
    source = project.source
    assert isinstance(source, codebuild.CfnProject.SourceProperty) and source.build_spec
    spec = json.loads(cdk.Stack.of(project).resolve(source.build_spec))
    spec["phases"]["install"]["commands"] = [SELF_MUTATION_INSTALL]
    on_path = f'export PATH="$PWD/{CDK_CLI_DIRECTORY}/node_modules/.bin:$PATH"'
    spec["phases"]["build"]["commands"] = [on_path, *spec["phases"]["build"]["commands"]]
    project.add_property_override("Source.BuildSpec", json.dumps(spec, indent=2))


class OrganisationsStage(cdk.Stage):
    """One environment: the stacks of its organisations, in its account and region."""

    def __init__(
        self,
        scope: Construct,
        environment: Environment,
        organisations: Mapping[str, Organisation],
    ) -> None:
        env = cdk.Environment(account=environment.account, region=environment.region)
        super().__init__(scope, environment.name, env=env)
        self.stacks = [
            OrganisationStack(self, stack_name_for(org), organisation=org)
            for org in (organisations[name] for name in environment.organisations)
        ]


class PipelineStack(cdk.Stack):
    """The CodePipeline that tests, synthesizes and deploys every environment in order.

    Other keyword arguments are ``cdk.Stack`` props; the stack is named ``Quota-Pipeline`` and
    lives in the connection's account and region.

    :param pipeline: a validated pipeline file.
    :param organisations: organisation name -> model, every name the file's environments list.
    :param organisation_files: organisation name -> its file, relative to the repository root
        (or under the working directory): the Plan steps read it in their checkout.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        pipeline: Pipeline,
        organisations: Mapping[str, Organisation],
        organisation_files: Mapping[str, str | Path],
        **stack_props: Any,
    ) -> None:
        stack_props.setdefault("stack_name", PIPELINE_STACK_NAME)
        stack_props.setdefault(
            "env", cdk.Environment(account=pipeline.account, region=pipeline.region)
        )
        stack_props.setdefault(
            "description", f"Quota sharing: {pipeline.repository}@{pipeline.branch} to production"
        )
        super().__init__(scope, construct_id, **stack_props)
        source = pipelines.CodePipelineSource.connection(
            pipeline.repository, pipeline.branch, connection_arn=pipeline.connection_arn
        )
        self.pipeline = pipelines.CodePipeline(
            self,
            "Pipeline",
            synth=pipelines.ShellStep(
                "Synth",
                input=source,
                install_commands=[INSTALL_COMMAND],
                commands=synth_commands(pipeline.path),
                primary_output_directory=OUTPUT_DIRECTORY,
            ),
            cli_version=cdk_cli_version(),
            cross_account_keys=True,
            enable_key_rotation=True,
            self_mutation=True,
        )
        files = _repository_paths(organisation_files, pipeline)
        self.stages = []
        self.plan_steps: dict[str, list[pipelines.CodeBuildStep]] = {}
        for environment in pipeline.environments:
            stage = OrganisationsStage(self, environment, organisations)
            plans = [
                _plan_step(environment, name, files[name], source)
                for name in environment.organisations
            ]
            pre: list[pipelines.Step] = list(plans)
            if environment.approval:
                pre.append(_approval(environment, plans))
            self.pipeline.add_stage(stage, pre=pre)
            self.stages.append(stage)
            self.plan_steps[environment.name] = plans
        self.pipeline.build_pipeline()
        _cli_from_the_lock(self.pipeline)
        _source_conditions_on_service_trust(self)
        plan_projects = [step.project for steps in self.plan_steps.values() for step in steps]
        _acknowledge(self, self.pipeline, plan_projects)
        _lint_clean(self, self.pipeline.pipeline)
        refuse_unsupported_region(self)


def _repository_paths(files: Mapping[str, str | Path], pipeline: Pipeline) -> dict[str, str]:
    """Each organisation file of the pipeline's environments as a path in the repository's
    checkout: relative as given, or an absolute one under the working directory (where
    ``cdk synth`` runs, the repository root); a ``QuotaConfigError`` otherwise."""
    root = Path.cwd().resolve()
    found: dict[str, str] = {}
    problems = []
    for environment in pipeline.environments:
        for name in environment.organisations:
            path = Path(files[name])
            if path.is_absolute():
                try:
                    path = path.resolve().relative_to(root)
                except ValueError:
                    problems.append(
                        Problem(
                            f"organisation {name}",
                            str(path),
                            "the pipeline's Plan step reads the organisation file in its "
                            "checkout of the repository, and this one is outside it",
                            "keep organisation files in the repository and run cdk synth from "
                            "its root",
                        )
                    )
                    continue
            found[name] = path.as_posix()
    if problems:
        raise QuotaConfigError(problems, context=pipeline.path)
    return found


def _plan_step(
    environment: Environment,
    organisation: str,
    org_file: str,
    source: pipelines.IFileSetProducer,
) -> pipelines.CodeBuildStep:
    """``Plan-<organisation>``: the gate (:mod:`.plan_gate`) on the organisation's live queue,
    its role allowed only to assume the target's lookup role."""
    return pipelines.CodeBuildStep(
        f"Plan-{organisation}",
        input=source,
        install_commands=[INSTALL_COMMAND],
        commands=plan_commands(organisation, org_file, environment.account, environment.region),
        role_policy_statements=[
            iam.PolicyStatement(
                actions=["sts:AssumeRole"],
                resources=[lookup_role_arn(environment.account, environment.region)],
            )
        ],
    )


def _approval(
    environment: Environment, plans: Sequence[pipelines.CodeBuildStep]
) -> pipelines.ManualApprovalStep:
    """After every Plan step of the stage: the comment names what deploys where and carries
    each plan's summary; the review link is the (first) plan's build."""
    summaries = "; ".join(
        f"{name}: {plan.exported_variable(SUMMARY_VARIABLE)}"
        for name, plan in zip(environment.organisations, plans, strict=True)
    )
    approval = PlanApprovalStep(
        "Approve",
        comment=f"Deploy {', '.join(environment.organisations)} to {environment.name} "
        f"({environment.account}, {environment.region})? Plan: {summaries}",
        review_url=plans[0].exported_variable(URL_VARIABLE),
    )
    for plan in plans:
        approval.add_step_dependency(plan)
    return approval


class PlanApprovalStep(pipelines.ManualApprovalStep):
    """A manual approval whose comment and review link may hold other steps' exported
    variables (``CodeBuildStep.exported_variable``): CDK Pipelines resolves a step's outputs
    only where a step declares it references them, which its ``ManualApprovalStep`` does not."""

    def __init__(self, id: str, *, comment: str, review_url: str) -> None:
        super().__init__(id, comment=comment, review_url=review_url)
        self._discover_referenced_outputs({"comment": comment, "reviewUrl": review_url})


def _source_conditions_on_service_trust(stack: cdk.Stack) -> None:
    """Give every service trust CDK Pipelines writes in ``stack`` source conditions.

    CodePipeline and CodeBuild assume their roles with ``aws:SourceAccount`` (this account)
    and ``aws:SourceArn`` (a pipeline or project of this account and region); the trust is
    limited to both, against the confused deputy. Roles of the stages' stacks are their own.
    """
    for construct in stack.node.find_all():
        if not isinstance(construct, iam.CfnRole) or cdk.Stack.of(construct) is not stack:
            continue
        document = stack.resolve(construct.assume_role_policy_document)
        for index, statement in enumerate(document["Statement"]):
            service = statement.get("Principal", {}).get("Service")
            if isinstance(service, str) and "Condition" not in statement:
                sources = stack.format_arn(service=service.split(".")[0], resource="*")
                construct.add_property_override(
                    f"AssumeRolePolicyDocument.Statement.{index}.Condition",
                    {
                        "StringEquals": {"aws:SourceAccount": stack.account},
                        "ArnLike": {"aws:SourceArn": sources},
                    },
                )


# --- cfn-lint: what CDK Pipelines generates, rewritten to the forms cfn-lint accepts ----------


def _lint_clean(stack: cdk.Stack, pipeline: codepipeline.Pipeline) -> None:
    """Drop the DependsOn the role's GetAtt already implies (W3005), and write each action's
    ``Fn::Join`` of an ARN as the equal ``Fn::Sub`` (E3703)."""
    cfn = pipeline.node.default_child
    assert isinstance(cfn, codepipeline.CfnPipeline)
    policy = _default_policy(pipeline.role)
    assert isinstance(policy, cdk.CfnElement)
    cfn.add_override("DependsOn", [stack.resolve(stack.get_logical_id(policy))])
    stages = stack.resolve(cfn.stages)
    for i, stage in enumerate(stages):
        for j, action in enumerate(stage["actions"]):
            for key, value in (action.get("configuration") or {}).items():
                sub = _as_sub(value)
                if sub is not None:
                    path = f"Stages.{i}.Actions.{j}.Configuration.{key}"
                    cfn.add_property_override(path, {"Fn::Sub": sub})


def _as_sub(value: object) -> str | None:
    """``{"Fn::Join": ["", [text | {"Ref": name}, ...]]}`` as a ``Fn::Sub`` string, else None."""
    if not isinstance(value, dict) or list(value) != ["Fn::Join"]:
        return None
    delimiter, parts = value["Fn::Join"]
    if delimiter != "" or not all(
        isinstance(p, str) or (isinstance(p, dict) and list(p) == ["Ref"]) for p in parts
    ):
        return None
    return "".join(p if isinstance(p, str) else "${" + p["Ref"] + "}" for p in parts)


# --- cdk-nag: what CDK Pipelines generates, acknowledged finding by finding -------------------

_ARTIFACT_KEY = (
    "CDK's grant on the pipeline's own artifact key: kms:GenerateDataKey* and kms:ReEncrypt* "
    "are the variants of one key operation, and the resource is that one key"
)
_ARTIFACT_BUCKET = (
    "CDK's grant on the pipeline's own artifacts bucket: artifact objects are named per "
    "execution, so the grant covers the bucket's objects and its read/write action families"
)
_BUILD_LOGS = (
    "CodeBuild names log streams and report groups per build: scoped to this project's own "
    "log group and report-group prefix"
)


def _acknowledge(
    stack: cdk.Stack,
    pipeline: pipelines.CodePipeline,
    plan_projects: Sequence[Any] = (),
) -> None:
    """Acknowledge each cdk-nag finding on CDK Pipelines' generated resources, with why."""
    account, region = stack.account, stack.region
    bucket = _logical_id(stack, pipeline.pipeline.artifact_bucket)
    artifacts = [
        ("Action::kms:GenerateDataKey*", _ARTIFACT_KEY),
        ("Action::kms:ReEncrypt*", _ARTIFACT_KEY),
        *(
            (f"Action::s3:{action}", _ARTIFACT_BUCKET)
            for action in ("Abort*", "DeleteObject*", "GetBucket*", "GetObject*", "List*")
        ),
        (f"Resource::<{bucket}.Arn>/*", _ARTIFACT_BUCKET),
    ]
    for policy in _generated_policies(pipeline):
        _ack_iam5(policy, artifacts)
    for project in (pipeline.synth_project, pipeline.self_mutation_project, *plan_projects):
        name = _logical_id(stack, project)
        logs = f"arn:aws:logs:{region}:{account}:log-group:/aws/codebuild/<{name}>:*"
        reports = f"arn:aws:codebuild:{region}:{account}:report-group/<{name}>-*"
        _ack_iam5(
            _default_policy(project.role),
            [(f"Resource::{logs}", _BUILD_LOGS), (f"Resource::{reports}", _BUILD_LOGS)],
        )
    _ack_iam5(
        _default_policy(pipeline.self_mutation_project.role),
        [
            (
                f"Resource::arn:*:iam::{account}:role/*",
                "self-mutation assumes this account's CDK bootstrap roles, which CDK names "
                "per qualifier; the policy allows only roles tagged aws-cdk:bootstrap-role",
            ),
            (
                "Resource::*",
                "cloudformation:DescribeStacks and s3:ListBucket on the stacks and assets the "
                "app names, known only at run time; both are read-only",
            ),
        ],
    )
    bucket_resource = pipeline.pipeline.artifact_bucket.node.default_child
    assert bucket_resource is not None
    cdk.Validations.of(bucket_resource).acknowledge(
        cdk.Acknowledgment(
            id="AwsSolutions::AwsSolutions-S1",
            reason="pipeline artifacts are transient build outputs, encrypted with the "
            "pipeline's key; CodePipeline and CloudTrail record who reads and writes them",
        )
    )


def _generated_policies(pipeline: pipelines.CodePipeline) -> list[Construct]:
    """The default policies of every role CDK Pipelines made (pipeline, actions, projects)."""
    return [
        construct
        for construct in pipeline.node.find_all()
        if isinstance(construct, iam.CfnPolicy)
        and construct.node.path.endswith("Role/DefaultPolicy/Resource")
    ]


def _default_policy(role: iam.IRole | None) -> Construct:
    assert role is not None
    policy = role.node.find_child("DefaultPolicy").node.default_child
    assert isinstance(policy, Construct)
    return policy


def _ack_iam5(policy: Construct, findings: list[tuple[str, str]]) -> None:
    cdk.Validations.of(policy).acknowledge(
        *(
            cdk.Acknowledgment(id=f"AwsSolutions::AwsSolutions-IAM5[{finding}]", reason=reason)
            for finding, reason in findings
        )
    )


def _logical_id(stack: cdk.Stack, resource: IConstruct) -> str:
    cfn = resource.node.default_child
    assert isinstance(cfn, cdk.CfnElement)
    return str(stack.resolve(stack.get_logical_id(cfn)))
