"""The IAM proof harness itself: real decisions from iam-simulate, intrinsics resolved.

If these fail, no IAM proof built on the harness can be trusted; they never skip (``make setup``
installs iam-simulate with ``npm ci``).
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from tests.iam.simulator import (
    ACCOUNT,
    REGION,
    ROOT,
    Batch,
    Decision,
    NamedPolicy,
    Principal,
    Request,
    SimulatorError,
    TemplateError,
    TemplateResolver,
    evaluate,
    evaluate_many,
    role_principal,
)

ALLOWED, IMPLICIT, EXPLICIT = (
    Decision.ALLOWED,
    Decision.IMPLICITLY_DENIED,
    Decision.EXPLICITLY_DENIED,
)
BATCH = f"arn:aws:batch:{REGION}:{ACCOUNT}"
QUEUE = f"{BATCH}:job-queue/research"
SHARE_A = f"{QUEUE}/quota-share/team-a"
SHARE_B = f"{QUEUE}/quota-share/team-b"
JOB = f"{BATCH}:service-job/0f3c8a2e"
PRINCIPAL = f"arn:aws:iam::{ACCOUNT}:role/TeamA"
SUBMIT, UPDATE, TERMINATE = (
    "batch:SubmitServiceJob",
    "batch:UpdateServiceJob",
    "batch:TerminateServiceJob",
)


def statement(
    action: str | list[str], resource: Any, condition: dict[str, Any] | None = None
) -> dict:
    out: dict[str, Any] = {"Effect": "Allow", "Action": action, "Resource": resource}
    if condition:
        out["Condition"] = condition
    return out


def policy(*statements: dict[str, Any]) -> NamedPolicy:
    return NamedPolicy("test", {"Version": "2012-10-17", "Statement": list(statements)})


def decide(pol: NamedPolicy, *requests: Request) -> list[Decision]:
    return evaluate(PRINCIPAL, [pol], requests)


def role_template(**resources: dict[str, Any]) -> dict[str, Any]:
    """A template with role ``Team`` (trusting an account) and the given extra resources."""
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": "sts:AssumeRole",
                "Principal": {"AWS": "arn:aws:iam::444455556666:root"},
            }
        ],
    }
    role = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust}}
    return {"Resources": {"Team": role, **resources}}


# --- decisions are real -----------------------------------------------------------------------


def test_an_action_allowed_on_one_arn_is_denied_on_another() -> None:
    pol = policy(statement(SUBMIT, [QUEUE, SHARE_A, f"{BATCH}:service-job/*"]))
    assert decide(
        pol, Request(SUBMIT, [QUEUE, SHARE_A, JOB]), Request(SUBMIT, [QUEUE, SHARE_B, JOB])
    ) == [ALLOWED, IMPLICIT]


def test_a_job_queue_wildcard_also_grants_every_share_of_every_queue() -> None:
    pol = policy(statement(SUBMIT, [f"{BATCH}:job-queue/*", f"{BATCH}:service-job/*"]))
    other = f"{BATCH}:job-queue/other/quota-share/x"
    assert decide(pol, Request(SUBMIT, [QUEUE, SHARE_B, JOB]), Request(SUBMIT, other)) == [
        ALLOWED,
        ALLOWED,
    ]


def test_a_request_tag_condition_allows_with_the_tag_and_denies_without() -> None:
    tagged = {"StringEquals": {"aws:RequestTag/team": "team-a"}}
    pol = policy(statement(SUBMIT, [SHARE_A, QUEUE, f"{BATCH}:service-job/*"], tagged))
    resources = [QUEUE, SHARE_A, JOB]
    assert decide(
        pol,
        Request(SUBMIT, resources, {"aws:RequestTag/team": "team-a", "aws:TagKeys": ["team"]}),
        Request(SUBMIT, resources, {"aws:RequestTag/team": "team-b", "aws:TagKeys": ["team"]}),
        Request(SUBMIT, resources),
    ) == [ALLOWED, IMPLICIT, IMPLICIT]


def test_a_resource_tag_condition_limits_terminate_to_the_teams_jobs() -> None:
    own = {"StringEquals": {"aws:ResourceTag/team": "team-a"}}
    pol = policy(statement(TERMINATE, f"{BATCH}:service-job/*", own))
    assert decide(
        pol,
        Request(TERMINATE, JOB, {"aws:ResourceTag/team": "team-a"}),
        Request(TERMINATE, JOB, {"aws:ResourceTag/team": "team-b"}),
        Request(TERMINATE, JOB),
    ) == [ALLOWED, IMPLICIT, IMPLICIT]


def test_scheduling_priority_numeric_less_than_equals_caps_submit_and_update() -> None:
    cap = {"NumericLessThanEquals": {"batch:SchedulingPriority": "50"}}
    pol = policy(
        statement(SUBMIT, [QUEUE, SHARE_A, f"{BATCH}:service-job/*"], cap),
        statement(UPDATE, f"{BATCH}:service-job/*", cap),
    )
    submit = [QUEUE, SHARE_A, JOB]
    assert decide(
        pol,
        Request(SUBMIT, submit, {"batch:SchedulingPriority": 50}),
        Request(SUBMIT, submit, {"batch:SchedulingPriority": 51}),
        Request(UPDATE, JOB, {"batch:SchedulingPriority": 0}),
        Request(UPDATE, JOB, {"batch:SchedulingPriority": "9999"}),
    ) == [ALLOWED, IMPLICIT, ALLOWED, IMPLICIT]


def test_passed_to_service_limits_pass_role_to_sagemaker() -> None:
    role = f"arn:aws:iam::{ACCOUNT}:role/TeamAExecution"
    sagemaker = {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}}
    pol = policy(statement("iam:PassRole", role, sagemaker))
    assert decide(
        pol,
        Request("iam:PassRole", role, {"iam:PassedToService": "sagemaker.amazonaws.com"}),
        Request("iam:PassRole", role, {"iam:PassedToService": "ec2.amazonaws.com"}),
        Request("iam:PassRole", f"arn:aws:iam::{ACCOUNT}:role/TeamBExecution"),
    ) == [ALLOWED, IMPLICIT, IMPLICIT]


def test_an_explicit_deny_wins_over_an_allow() -> None:
    deny = {"Effect": "Deny", "Action": SUBMIT, "Resource": SHARE_B}
    pol = policy(statement("batch:*", "*"), deny)
    assert decide(pol, Request(SUBMIT, [QUEUE, SHARE_B, JOB])) == [EXPLICIT]


def test_describe_and_list_service_jobs_take_only_a_wildcard_resource() -> None:
    pol = policy(statement(["batch:DescribeServiceJob", "batch:ListServiceJobs"], "*"))
    assert decide(
        pol, Request("batch:DescribeServiceJob", "*"), Request("batch:ListServiceJobs", "*")
    ) == [ALLOWED, ALLOWED]
    with pytest.raises(SimulatorError, match=r"must\.use\.wildcard"):
        decide(pol, Request("batch:DescribeServiceJob", JOB))


def test_rejects_an_unknown_action() -> None:
    with pytest.raises(SimulatorError, match=r"invalid\.action"):
        decide(policy(statement("batch:*", "*")), Request("batch:SubmitServiceJobs", QUEUE))


def test_rejects_a_resource_of_no_type_the_action_takes() -> None:
    with pytest.raises(SimulatorError, match=r"no\.resource\.types"):
        decide(policy(statement(UPDATE, "*")), Request(UPDATE, QUEUE))


def test_rejects_a_context_key_that_applies_to_no_resource_of_the_request() -> None:
    pol = policy(statement(TERMINATE, f"{BATCH}:service-job/*"))
    with pytest.raises(SimulatorError, match="batch:SchedulingPriorty"):
        decide(pol, Request(TERMINATE, JOB, {"batch:SchedulingPriorty": 1}))


def test_rejects_an_invalid_policy() -> None:
    bad = NamedPolicy("bad", {"Version": "2012-10-17", "Statement": [{"Effect": "Maybe"}]})
    with pytest.raises(SimulatorError, match=r"policy\.errors"):
        decide(bad, Request(SUBMIT, QUEUE))


def test_evaluate_many_decides_several_principals_in_one_process() -> None:
    jobs = f"{BATCH}:service-job/*"
    team_a = Principal(PRINCIPAL, (policy(statement(SUBMIT, [QUEUE, SHARE_A, jobs])),))
    team_b = Principal(
        f"arn:aws:iam::{ACCOUNT}:role/TeamB", (policy(statement(SUBMIT, [QUEUE, SHARE_B, jobs])),)
    )
    to_a, to_b = Request(SUBMIT, [QUEUE, SHARE_A, JOB]), Request(SUBMIT, [QUEUE, SHARE_B, JOB])
    assert evaluate_many([Batch(team_a, [to_a, to_b]), Batch(team_b, [to_a, to_b])]) == [
        [ALLOWED, IMPLICIT],
        [IMPLICIT, ALLOWED],
    ]


def test_a_kms_key_needs_its_key_policy_besides_the_identity_policy() -> None:
    key = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    root = {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}
    key_policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": root, "Action": "kms:*", "Resource": "*"}],
    }
    user = Principal(PRINCIPAL, (policy(statement("kms:Decrypt", key)),))
    decrypt = Request("kms:Decrypt", key)
    assert evaluate_many([Batch(user, [decrypt], key_policy), Batch(user, [decrypt])]) == [
        [ALLOWED],
        [IMPLICIT],
    ]


# --- the policies attached to a role ----------------------------------------------------------


def test_collects_inline_policy_resource_and_managed_policies_of_the_role() -> None:
    template = role_template(
        Inline={
            "Type": "AWS::IAM::Policy",
            "Properties": {
                "PolicyName": "inline",
                "Roles": [{"Ref": "Team"}],
                "PolicyDocument": policy(statement(TERMINATE, f"{BATCH}:service-job/*")).document,
            },
        },
        Managed={
            "Type": "AWS::IAM::ManagedPolicy",
            "Properties": {
                "Roles": [{"Ref": "Team"}],
                "PolicyDocument": policy(statement(UPDATE, f"{BATCH}:service-job/*")).document,
            },
        },
        ByArn={
            "Type": "AWS::IAM::ManagedPolicy",
            "Properties": {
                "PolicyDocument": policy(statement("batch:ListServiceJobs", "*")).document,
            },
        },
    )
    template["Resources"]["Team"]["Properties"].update(
        Policies=[{"PolicyName": "own", "PolicyDocument": policy(statement(SUBMIT, "*")).document}],
        ManagedPolicyArns=[{"Ref": "ByArn"}],
    )
    principal = role_principal(template, "Team")
    assert sorted(p.name for p in principal.policies) == ["ByArn", "Inline", "Managed", "Team/own"]
    assert principal.evaluate(
        [
            Request(SUBMIT, [QUEUE, JOB]),
            Request(TERMINATE, JOB),
            Request(UPDATE, JOB),
            Request("batch:ListServiceJobs", "*"),
            Request("batch:DescribeServiceJob", "*"),
        ]
    ) == [ALLOWED, ALLOWED, ALLOWED, ALLOWED, IMPLICIT]


def test_ignores_policies_attached_to_another_role() -> None:
    template = role_template(
        Other={"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {}}},
        OthersPolicy={
            "Type": "AWS::IAM::Policy",
            "Properties": {
                "PolicyName": "others",
                "Roles": [{"Ref": "Other"}],
                "PolicyDocument": policy(statement(SUBMIT, "*")).document,
            },
        },
    )
    principal = role_principal(template, "Team")
    assert principal.policies == ()
    assert principal.decide(SUBMIT, [QUEUE, JOB]) is IMPLICIT


def test_a_permissions_boundary_of_the_template_limits_the_role() -> None:
    template = role_template(
        Boundary={
            "Type": "AWS::IAM::ManagedPolicy",
            "Properties": {"PolicyDocument": policy(statement(SUBMIT, "*")).document},
        },
    )
    template["Resources"]["Team"]["Properties"].update(
        PermissionsBoundary={"Ref": "Boundary"},
        Policies=[
            {"PolicyName": "all", "PolicyDocument": policy(statement("batch:*", "*")).document}
        ],
    )
    principal = role_principal(template, "Team")
    assert principal.evaluate([Request(SUBMIT, [QUEUE, JOB]), Request(UPDATE, JOB)]) == [
        ALLOWED,
        IMPLICIT,
    ]


def test_rejects_an_aws_managed_policy_it_cannot_read() -> None:
    template = role_template()
    template["Resources"]["Team"]["Properties"]["ManagedPolicyArns"] = [
        "arn:aws:iam::aws:policy/AmazonSageMakerFullAccess"
    ]
    with pytest.raises(TemplateError, match="AmazonSageMakerFullAccess is not in the template"):
        role_principal(template, "Team")


def test_rejects_a_logical_id_that_is_not_a_role() -> None:
    with pytest.raises(TemplateError, match="not an AWS::IAM::Role"):
        role_principal(role_template(), "Nope")


# --- intrinsics -------------------------------------------------------------------------------


def batch_template() -> dict[str, Any]:
    return {
        "Conditions": {"IsEu": {"Fn::Equals": [{"Ref": "AWS::Region"}, "eu-west-1"]}},
        "Resources": {
            "Queue": {"Type": "AWS::Batch::JobQueue", "Properties": {"JobQueueName": "research"}},
            "Unnamed": {"Type": "AWS::Batch::JobQueue", "Properties": {}},
            "Share": {
                "Type": "AWS::Batch::QuotaShare",
                "Properties": {
                    "QuotaShareName": "team-a",
                    "JobQueue": {"Fn::GetAtt": ["Queue", "JobQueueArn"]},
                },
            },
            "Named": {"Type": "AWS::IAM::Role", "Properties": {"RoleName": "TeamA", "Path": "/t/"}},
            "Generated": {"Type": "AWS::IAM::Role", "Properties": {}},
            "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {}},
            "Key": {"Type": "AWS::KMS::Key", "Properties": {}},
            "Policy": {"Type": "AWS::IAM::ManagedPolicy", "Properties": {}},
            "Thing": {"Type": "AWS::Made::Up", "Properties": {}},
        },
    }


@pytest.fixture
def resolver() -> TemplateResolver:
    return TemplateResolver(batch_template())


def test_pseudo_parameters_are_the_test_account_and_region(resolver: TemplateResolver) -> None:
    assert resolver.resolve(
        {"Fn::Join": [":", [{"Ref": "AWS::Partition"}, {"Ref": "AWS::Region"}]]}
    ) == ("aws:eu-west-1")
    assert resolver.resolve({"Ref": "AWS::AccountId"}) == "123456789012"


def test_job_queue_and_quota_share_arns_have_the_batch_shapes(resolver: TemplateResolver) -> None:
    queue = "arn:aws:batch:eu-west-1:123456789012:job-queue/research"
    assert resolver.resolve({"Ref": "Queue"}) == queue
    assert resolver.resolve({"Fn::GetAtt": ["Share", "QuotaShareArn"]}) == (
        f"{queue}/quota-share/team-a"
    )
    assert resolver.resolve({"Ref": "Share"}) == f"{queue}/quota-share/team-a"


def test_an_unnamed_resource_gets_a_generated_name(resolver: TemplateResolver) -> None:
    arn = resolver.resolve({"Fn::GetAtt": ["Unnamed", "JobQueueArn"]})
    assert arn.startswith("arn:aws:batch:eu-west-1:123456789012:job-queue/Unnamed-")


def test_iam_role_ref_is_its_name_and_arn_keeps_its_path(resolver: TemplateResolver) -> None:
    assert resolver.resolve({"Ref": "Named"}) == "TeamA"
    assert resolver.get_att("Named", "Arn") == "arn:aws:iam::123456789012:role/t/TeamA"
    generated = resolver.get_att("Generated", "Arn")
    assert generated.startswith("arn:aws:iam::123456789012:role/TestStack-Generated-")
    assert len(generated.rsplit("/", 1)[1]) <= 64


def test_bucket_key_and_managed_policy_have_their_arn_shapes(resolver: TemplateResolver) -> None:
    bucket = resolver.resolve({"Ref": "Bucket"})
    assert bucket == bucket.lower() and 3 <= len(bucket) <= 63
    assert resolver.get_att("Bucket", "Arn") == f"arn:aws:s3:::{bucket}"
    assert resolver.get_att("Key", "Arn").startswith("arn:aws:kms:eu-west-1:123456789012:key/")
    assert resolver.resolve({"Ref": "Policy"}).startswith("arn:aws:iam::123456789012:policy/")


def test_kms_key_ids_differ_between_stacks_with_the_same_logical_id() -> None:
    template = batch_template()
    one = TemplateResolver(template, stack_name="Quota-a").get_att("Key", "Arn")
    other = TemplateResolver(template, stack_name="Quota-b").get_att("Key", "Arn")
    assert one != other


def test_sub_replaces_pseudo_parameters_refs_attributes_and_variables(
    resolver: TemplateResolver,
) -> None:
    text = "${AWS::Region}|${Named}|${Named.Arn}|${x}|${!Literal}"
    assert resolver.resolve({"Fn::Sub": [text, {"x": {"Ref": "AWS::AccountId"}}]}) == (
        "eu-west-1|TeamA|arn:aws:iam::123456789012:role/t/TeamA|123456789012|${Literal}"
    )


def test_select_of_split_picks_a_part(resolver: TemplateResolver) -> None:
    node = {"Fn::Select": [1, {"Fn::Split": ["/quota-share/", {"Ref": "Share"}]}]}
    assert resolver.resolve(node) == "team-a"


def test_if_follows_the_condition_and_no_value_removes_the_key(resolver: TemplateResolver) -> None:
    node = {
        "A": {"Fn::If": ["IsEu", "eu", "other"]},
        "B": {"Fn::If": ["IsEu", {"Ref": "AWS::NoValue"}, "kept"]},
        "C": [1, {"Fn::If": ["IsEu", {"Ref": "AWS::NoValue"}, 2]}],
    }
    assert resolver.resolve(node) == {"A": "eu", "C": [1]}


def test_rejects_an_unknown_intrinsic(resolver: TemplateResolver) -> None:
    with pytest.raises(TemplateError, match="Fn::ImportValue is not supported"):
        resolver.resolve({"Fn::ImportValue": "x"})


def test_rejects_a_resource_type_it_cannot_name(resolver: TemplateResolver) -> None:
    with pytest.raises(TemplateError, match=r"AWS::Made::Up is unknown to the resolver"):
        resolver.resolve({"Ref": "Thing"})


def test_rejects_an_unknown_attribute(resolver: TemplateResolver) -> None:
    with pytest.raises(TemplateError, match=r"Queue\.Arn: attribute unknown"):
        resolver.resolve({"Fn::GetAtt": ["Queue", "Arn"]})


def test_rejects_a_ref_to_nothing(resolver: TemplateResolver) -> None:
    with pytest.raises(TemplateError, match="no such resource"):
        resolver.resolve({"Ref": "Missing"})


def test_logical_ids_finds_resources_by_resolved_properties(resolver: TemplateResolver) -> None:
    assert resolver.logical_ids("AWS::Batch::QuotaShare", QuotaShareName="team-a") == ["Share"]
    assert resolver.logical_ids("AWS::Batch::QuotaShare", QuotaShareName="team-b") == []


# --- a template as CDK synthesizes it ---------------------------------------------------------


def test_a_cdk_synthesized_role_is_resolved_and_decided() -> None:
    stack = cdk.Stack(cdk.App(), "Org")
    queue = batch.CfnJobQueue(
        stack,
        "Queue",
        priority=1,
        job_queue_type="SAGEMAKER_TRAINING",
        service_environment_order=[],
    )
    share = batch.CfnQuotaShare(
        stack,
        "Share",
        quota_share_name="team-a",
        job_queue=queue.attr_job_queue_arn,
        capacity_limits=[],
        resource_sharing_configuration={"strategy": "LEND"},
        preemption_configuration={"inSharePreemption": "DISABLED"},
    )
    role = iam.Role(stack, "Team", assumed_by=iam.AccountPrincipal("444455556666"))
    role.add_to_policy(
        iam.PolicyStatement(
            actions=[SUBMIT],
            resources=[
                queue.attr_job_queue_arn,
                share.attr_quota_share_arn,
                stack.format_arn(service="batch", resource="service-job", resource_name="*"),
            ],
        )
    )
    template = Template.from_stack(stack).to_json()
    resolver = TemplateResolver(template)
    queue_arn = resolver.get_att("Queue", "JobQueueArn")
    own = resolver.get_att("Share", "QuotaShareArn")
    job = f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/1"
    role_id = stack.resolve(stack.get_logical_id(role.node.default_child))  # type: ignore[arg-type]
    principal = role_principal(resolver, role_id)
    assert principal.evaluate(
        [
            Request(SUBMIT, [queue_arn, own, job]),
            Request(SUBMIT, [queue_arn, f"{queue_arn}/quota-share/team-b", job]),
        ]
    ) == [ALLOWED, IMPLICIT]


def test_the_example_in_docs_security_runs_as_written() -> None:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    (block,) = [part.split("```", 1)[0] for part in text.split("```python\n")[1:]]
    exec(compile(block, "docs/security.md", "exec"), {})
