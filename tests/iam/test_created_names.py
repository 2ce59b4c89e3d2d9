"""A team naming another team's created execution role or bucket, proven denied offline.

The organisation-file rule refuses names starting ``Quota-`` (what organisation stacks create);
a stack named otherwise (the constructs in someone's app) generates names the file cannot know.
Here a generated organisation of 20 teams is synthesized under the stack name ``Training``;
its names are read back, and a second organisation has teams 10-14 name the execution role,
and teams 15-19 the bucket, that the stack created for teams 0-9. The stack's explicit Deny
statements must stop every one of them.
"""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template
from constructs import IConstruct

from quota_constructs.constructs import QuotaShareTeamAccess
from quota_constructs.model import JobQueueSpec, Organisation, TeamAccess
from quota_constructs.stacks.organisation_stack import OrganisationStack
from tests.constructs.helpers import make_app, share
from tests.iam.simulator import REGION, Batch, Decision, Request, TemplateResolver, evaluate_many
from tests.iam.simulator import role_principal as principal_of

STACK = "Training"
TEAMS = 20
VICTIMS = 10
ROLE_THIEVES = range(10, 15)
BUCKET_THIEVES = range(15, 20)
PRINCIPAL = "arn:aws:iam::210987654321:role/people/TeamLead"
S3_VIA = f"s3.{REGION}.amazonaws.com"


def _organisation(taken: dict[int, TeamAccess] | None = None) -> Organisation:
    accesses = {i: TeamAccess(principals=(PRINCIPAL,)) for i in range(TEAMS)}
    accesses.update(taken or {})
    shares = tuple(share(f"team-{i:02d}", access=accesses[i]) for i in range(TEAMS))
    return Organisation(name="hijack", queue=JobQueueSpec(shares=shares)).validate()


def _synth(organisation: Organisation) -> tuple[OrganisationStack, TemplateResolver]:
    stack = OrganisationStack(make_app(), STACK, organisation=organisation, stack_name=STACK)
    template = Template.from_stack(stack).to_json()
    return stack, TemplateResolver(template, stack_name=STACK)


def _logical_id(stack: cdk.Stack, construct: IConstruct) -> str:
    element = construct.node.default_child
    assert isinstance(element, cdk.CfnElement)
    return str(stack.resolve(stack.get_logical_id(element)))


@pytest.fixture(scope="module")
def decisions() -> dict[str, list[Decision]]:
    """Label -> decisions of the thieves' requests on their victims' resources."""
    stack, resolver = _synth(_organisation())

    def value(token: str) -> str:
        return str(resolver.resolve(stack.resolve(token)))

    team = stack.team_access
    names = [f"team-{i:02d}" for i in range(TEAMS)]
    roles = [value(team[n].execution_role_arn) for n in names[:VICTIMS]]
    buckets = [value(team[n].bucket.bucket_name) for n in names[:VICTIMS]]
    keys = [value(key.key_arn) for n in names[:VICTIMS] if (key := team[n].key) is not None]
    taken = {i: TeamAccess((PRINCIPAL,), execution_role=roles[i - 10]) for i in ROLE_THIEVES}
    taken |= {i: TeamAccess((PRINCIPAL,), bucket=buckets[i - 15]) for i in BUCKET_THIEVES}
    stack, resolver = _synth(_organisation(taken))
    batches, labels = [], []
    for i in ROLE_THIEVES:
        submitter = principal_of(resolver, _logical_id(stack, team_of(stack, i).submitter_role))
        request = Request(
            "iam:PassRole", roles[i - 10], {"iam:PassedToService": "sagemaker.amazonaws.com"}
        )
        batches.append(Batch(submitter, [request]))
        labels.append("pass-role")
    for i in BUCKET_THIEVES:
        role = principal_of(resolver, _logical_id(stack, team_of(stack, i).execution_role))
        bucket = f"arn:aws:s3:::{buckets[i - 15]}"
        requests = [
            Request(action, f"{bucket}/checkpoints/step-1.pt")
            for action in ("s3:GetObject", "s3:PutObject", "s3:DeleteObject")
        ]
        requests.append(Request("s3:ListBucket", bucket, {"s3:prefix": "checkpoints/"}))
        requests.append(Request("kms:Decrypt", keys[i - 15], {"kms:ViaService": S3_VIA}))
        batches.append(Batch(role, requests))
        labels.append("bucket")
    answers: dict[str, list[Decision]] = {}
    for label, decided in zip(labels, evaluate_many(batches), strict=True):
        answers.setdefault(label, []).extend(decided)
    return answers


def team_of(stack: OrganisationStack, index: int) -> QuotaShareTeamAccess:
    return stack.team_access[f"team-{index:02d}"]


def test_rejects_passing_another_teams_created_execution_role_named_as_its_own(
    decisions: dict[str, list[Decision]],
) -> None:
    assert decisions["pass-role"] == [Decision.EXPLICITLY_DENIED] * len(ROLE_THIEVES)


def test_rejects_reading_writing_listing_and_decrypting_another_teams_created_bucket(
    decisions: dict[str, list[Decision]],
) -> None:
    assert decisions["bucket"] == [Decision.EXPLICITLY_DENIED] * 5 * len(BUCKET_THIEVES)


def test_twenty_teams_policies_stay_within_iam_size_limits() -> None:
    _, resolver = _synth(_organisation())
    limits = {"AWS::IAM::ManagedPolicy": 6144, "AWS::IAM::Policy": 10240}
    sizes = {
        logical_id: (
            resource["Type"],
            len(json.dumps(resolver.resolve(document), separators=(",", ":"))),
        )
        for logical_id, resource in resolver.template["Resources"].items()
        if resource["Type"] in limits
        for document in [resource["Properties"]["PolicyDocument"]]
    }
    assert len(sizes) >= 2 * TEAMS  # each team's submitter and execution policies, and more
    assert [lid for lid, (kind, size) in sizes.items() if size > limits[kind]] == []
