"""OrganisationStack and the app builder: SSM/outputs contract, tags, names, org-file errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from quota_constructs.config import OrgFileError, load_organisation
from quota_constructs.stacks.organisation_app import ORG_FILE_CONTEXT, build_app, organisation_files
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from tests.constructs.helpers import ROOT, cdk_json_context, make_app
from tests.helpers import ORGS_DIR

SEED = load_organisation(ORGS_DIR / "seed-demo.yaml")


@pytest.fixture
def seed_stack() -> OrganisationStack:
    return OrganisationStack(make_app(), "Quota-seed-demo", organisation=SEED)


def parameters(stack: cdk.Stack) -> dict[str, object]:
    found = Template.from_stack(stack).find_resources("AWS::SSM::Parameter")
    return {r["Properties"]["Name"]: r["Properties"]["Value"] for r in found.values()}


def test_ssm_parameters_follow_the_runtime_contract(seed_stack: OrganisationStack) -> None:
    queue_arn = {"Fn::GetAtt": ["TrainingQueueJobQueueBC771182", "JobQueueArn"]}
    share_arn = {"Fn::GetAtt": ["TrainingQueueJobQueueQS13E8B82B6", "QuotaShareArn"]}
    params = parameters(seed_stack)
    assert sorted(params) == [
        "/quota/seed-demo/job-queue/arn",
        "/quota/seed-demo/job-queue/name",
        "/quota/seed-demo/quota-shares/QS1/arn",
        "/quota/seed-demo/quota-shares/QS2/arn",
        "/quota/seed-demo/quota-shares/QS3/arn",
        "/quota/seed-demo/training-plans",
    ]
    assert params["/quota/seed-demo/job-queue/arn"] == queue_arn
    assert params["/quota/seed-demo/quota-shares/QS1/arn"] == share_arn
    assert params["/quota/seed-demo/job-queue/name"] == {
        "Fn::Select": [
            1,
            {"Fn::Split": ["/", queue_arn]},
        ]
    }


def test_outputs_give_queue_name_arn_and_share_arns(seed_stack: OrganisationStack) -> None:
    outputs = Template.from_stack(seed_stack).to_json()["Outputs"]
    assert outputs["JobQueueArn"]["Value"] == {
        "Fn::GetAtt": ["TrainingQueueJobQueueBC771182", "JobQueueArn"]
    }
    assert "JobQueueName" in outputs
    share_outputs = {o["Description"]: o["Value"] for k, o in outputs.items() if "QuotaShare" in k}
    assert sorted(share_outputs) == [f"ARN of quota share QS{n}" for n in (1, 2, 3)]


def test_physical_names_are_generated(seed_stack: OrganisationStack) -> None:
    template = Template.from_stack(seed_stack).to_json()
    for resource in template["Resources"].values():
        props = resource["Properties"]
        for key in ("JobQueueName", "ServiceEnvironmentName", "Name"):
            if resource["Type"] != "AWS::SSM::Parameter":
                assert key not in props


UNTAGGABLE = {
    "AWS::Logs::MetricFilter",
    "AWS::SNS::Subscription",
    "AWS::SNS::TopicPolicy",
    "AWS::SQS::QueuePolicy",
}
"""Resource types CloudFormation cannot tag."""


def test_organisation_tags_are_on_every_resource(seed_stack: OrganisationStack) -> None:
    template = Template.from_stack(seed_stack).to_json()
    assert len(template["Resources"]) == 25
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] in UNTAGGABLE:
            continue
        tags = resource["Properties"]["Tags"]
        if isinstance(tags, list):
            tags = {tag["Key"]: tag["Value"] for tag in tags}
        assert tags == {"project": "gpu-quota-sharing"}, logical_id


def test_stack_name_and_description_are_pinned(seed_stack: OrganisationStack) -> None:
    assert stack_name_for(SEED) == "Quota-seed-demo"
    assert seed_stack.stack_name == "Quota-seed-demo"
    assert seed_stack.template_options.description == (
        "Quota-managed SageMaker training queue of seed-demo: "
        "AWS Batch quota-management tutorial, one GPU per share."
    )


def test_logical_ids_of_the_seed_demo_stack_are_pinned(seed_stack: OrganisationStack) -> None:
    template = Template.from_stack(seed_stack).to_json()
    assert sorted(template["Resources"]) == [
        "Dashboard7A06DACF",
        "DashboardEvents316E72B8",
        "DashboardEventsRule00E27FAF",
        "DashboardFailedJobs1FEDC222",
        "DashboardPreemptedAttemptsB579EB76",
        "JobQueueArnParameter",
        "JobQueueNameParameter",
        "Notifications87298708",
        "NotificationsDeadLetterQueue32AE6445",
        "NotificationsDeadLetterQueuePolicy3B123E3A",
        "NotificationsKeyADCFA950",
        "NotificationsShareSubscribersQS1https6cf19eb9532eC97FCA7E",
        "NotificationsSubscribersemailf7b088e151fb7D445209",
        "NotificationsTopicAE679CBD",
        "NotificationsTopicPolicyAF92D34A",
        "QuotaShareArnsQS1Parameter2D9FC643",
        "QuotaShareArnsQS2Parameter5A3B9CDA",
        "QuotaShareArnsQS3Parameter8816BFDE",
        "TrainingPlanArnsParameter",
        "TrainingQueueJobQueueBC771182",
        "TrainingQueueJobQueueQS13E8B82B6",
        "TrainingQueueJobQueueQS2869F6F65",
        "TrainingQueueJobQueueQS3ED17CEDE",
        "TrainingQueueSchedulingPolicyAEE32E4A",
        "TrainingQueueServiceEnvironment591980E1",
    ]


def test_builds_one_stack_per_file_in_stacks_orgs() -> None:
    app = make_app()
    stacks = build_app(app, checks=False)
    files = organisation_files(app)
    assert len(stacks) == len(files) >= 1
    assert {s.stack_name for s in stacks} == {
        stack_name_for(load_organisation(path)) for path in files
    }


def test_org_file_context_selects_one_file() -> None:
    app = cdk.App(
        context={**cdk_json_context(), ORG_FILE_CONTEXT: str(ORGS_DIR / "seed-demo.yaml")}
    )
    assert [s.stack_name for s in build_app(app, checks=False)] == ["Quota-seed-demo"]


def test_rejects_an_invalid_org_file_naming_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "organisation: bad\nshares:\n"
        "  - {name: A, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE, borrow_limit: 10}\n"
    )
    with pytest.raises(
        OrgFileError, match=r"bad.yaml: line 3: shares\[0\]\.borrow_limit: borrow_limit is"
    ):
        build_app(make_app(), [bad], checks=False)


def test_rejects_an_empty_orgs_directory(tmp_path: Path) -> None:
    with pytest.raises(OrgFileError, match="no organisation files"):
        organisation_files(make_app(), tmp_path)


def test_app_py_exits_2_with_one_clear_line_for_a_broken_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("organisation: x\nshares: [\n")
    env = {**os.environ, "CDK_CONTEXT_JSON": f'{{"{ORG_FILE_CONTEXT}": "{bad}"}}'}
    result = subprocess.run(
        [sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {bad}: <yaml line")
    assert "Traceback" not in result.stderr


def test_training_plans_are_published_as_a_string_list(tmp_path: Path) -> None:
    org_file = tmp_path / "plans.yaml"
    org_file.write_text(
        "organisation: plans\n"
        "shares:\n"
        "  - {name: llm, capacity: {ml.p5.48xlarge: 2}, strategy: LEND_AND_BORROW}\n"
        "training_plans:\n"
        "  - {name: p5-june, instance_type: ml.p5.48xlarge, instance_count: 2, "
        'start: "2027-06-01T00:00:00Z", duration_hours: 24}\n'
        "  - {arn: 'arn:aws:sagemaker:eu-west-1:123456789012:training-plan/bought'}\n",
        encoding="utf-8",
    )
    org = load_organisation(org_file)
    stack = OrganisationStack(make_app(), "Quota-plans", organisation=org)
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::SSM::Parameter",
        {
            "Name": "/quota/plans/training-plans",
            "Type": "StringList",
            "Value": {
                "Fn::Join": [
                    ",",
                    [
                        {
                            "Fn::Join": [
                                "",
                                [
                                    "arn:",
                                    {"Ref": "AWS::Partition"},
                                    ":sagemaker:",
                                    {"Ref": "AWS::Region"},
                                    ":",
                                    {"Ref": "AWS::AccountId"},
                                    ":training-plan/p5-june",
                                ],
                            ]
                        },
                        "arn:aws:sagemaker:eu-west-1:123456789012:training-plan/bought",
                    ],
                ]
            },
        },
    )
    assert "TrainingPlanArns" in template.to_json()["Outputs"]


def test_an_organisation_without_plans_publishes_the_none_sentinel(
    seed_stack: OrganisationStack,
) -> None:
    Template.from_stack(seed_stack).has_resource_properties(
        "AWS::SSM::Parameter",
        {"Name": "/quota/seed-demo/training-plans", "Type": "StringList", "Value": "none"},
    )
