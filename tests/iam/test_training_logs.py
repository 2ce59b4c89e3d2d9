"""Training logs of another team cannot be forged: every pair of 20 teams, through iam-simulate.

A generated organisation of 20 teams with created execution roles, whose share names are what
a naive prefix would confuse: ``a`` and ``a-b`` (one a string prefix of the other), ``a-b`` and
``a_b`` (the same once ``_`` becomes ``-``), ``a`` and ``A``, names a training job name cannot
hold, a 128-character name, ``AWSBatch``. Each team's job is named as the runtime names it
(``JobSubmission`` with the team's prefix) and its training job as Batch names it (the
emulator's ``AWSBatch<TrainingJobName><32 hex>``); its SageMaker log stream is
``<training job name>/algo-1-<epoch>``. Each team's execution role must be allowed
``logs:CreateLogStream`` and ``logs:PutLogEvents`` on its own stream and denied both on each of
the 19 other teams' streams (and on a stream named after another team's share without its
prefix, the old forgery).
"""

from __future__ import annotations

from collections.abc import Iterator

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from quota_constructs.contracts import team_tag_value
from quota_constructs.local.state.arns import training_job_name
from quota_constructs.model import JobQueueSpec, Organisation, TeamAccess, training_job_prefix
from quota_constructs.runtime import JobSubmission
from quota_constructs.stacks.organisation_stack import OrganisationStack
from tests.constructs.helpers import make_app, share
from tests.iam.simulator import (
    ACCOUNT,
    REGION,
    Batch,
    Decision,
    Principal,
    Request,
    TemplateResolver,
    evaluate_many,
    role_principal,
)

ORGANISATION = "logs"
SHARES = (
    "a",
    "a-b",
    "a_b",
    "A",
    "ab",
    "a-b-c",
    "b",
    "team",
    "team-1",
    "team-10",
    "team_1",
    "AWSBatch",
    "awsbatch",
    "0",
    "x" * 128,
    "x" * 127,
    "_lead",
    "trailing_",
    "generative",
    "generative-archive",
)
ATTEMPT = "88b610a69aa8380ca5b0a7aba3f81cb8"  # a 32-hex attempt id of AWS's examples
LOG_GROUP = f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/aws/sagemaker/TrainingJobs"
ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")
PRINCIPAL = "arn:aws:iam::210987654321:role/people/TeamLead"


def organisation() -> Organisation:
    shares = tuple(share(name, access=TeamAccess(principals=(PRINCIPAL,))) for name in SHARES)
    return Organisation(name=ORGANISATION, queue=JobQueueSpec(shares=shares)).validate()


def stream_of(share_name: str) -> str:
    """The log stream of the share's job ``train`` as the runtime, Batch and SageMaker name it."""
    prefix = training_job_prefix(team_tag_value(ORGANISATION, share_name))
    payload = {"RoleArn": "arn:aws:iam::123456789012:role/r"}
    sent = JobSubmission("train", share_name, payload, training_job_prefix=prefix).payload_dict
    job = training_job_name(sent["TrainingJobName"], ATTEMPT)
    return f"{LOG_GROUP}:log-stream:{job}/algo-1-1764662400"


def _roles(stack: OrganisationStack) -> dict[str, Principal]:
    resolver = TemplateResolver(Template.from_stack(stack).to_json(), stack_name=stack.stack_name)
    roles = {}
    for name, access in stack.team_access.items():
        element = access.execution_role.node.default_child
        assert isinstance(element, cdk.CfnElement)
        roles[name] = role_principal(resolver, str(stack.resolve(stack.get_logical_id(element))))
    return roles


def _requests(stream: str) -> list[Request]:
    return [Request(action, stream) for action in ACTIONS]


@pytest.fixture(scope="module")
def decisions() -> dict[tuple[str, str], list[Decision]]:
    """(team, whose stream) -> the team's execution role's decisions on that stream."""
    stack = OrganisationStack(make_app(), "Quota-logs", organisation=organisation())
    roles = _roles(stack)
    targets = {name: stream_of(name) for name in SHARES}
    forged = {f"unprefixed {name}": training_job_name(f"{name}-x", ATTEMPT) for name in SHARES}
    pairs = [(team, whose) for team in SHARES for whose in [*SHARES, *forged]]
    streams = {**targets, **{k: f"{LOG_GROUP}:log-stream:{v}/algo-1-1" for k, v in forged.items()}}
    answers = evaluate_many(
        [Batch(roles[team], _requests(streams[whose])) for team, whose in pairs]
    )
    return dict(zip(pairs, answers, strict=True))


def _wrong(decisions: dict[tuple[str, str], list[Decision]], own: bool) -> Iterator[str]:
    expected = Decision.ALLOWED if own else Decision.IMPLICITLY_DENIED
    for (team, whose), decided in decisions.items():
        if (team == whose) == own and decided != [expected] * len(ACTIONS):
            yield f"{team} on {whose}'s stream: {decided}"


def test_the_organisation_has_twenty_teams_with_distinct_prefixes() -> None:
    teams = [team_tag_value(ORGANISATION, name) for name in SHARES]
    assert len(set(SHARES)) == 20
    assert len({training_job_prefix(team) for team in teams}) == 20


def test_each_execution_role_may_write_its_own_teams_training_log_streams(
    decisions: dict[tuple[str, str], list[Decision]],
) -> None:
    assert list(_wrong(decisions, own=True)) == []


def test_rejects_each_execution_role_writing_every_other_teams_training_log_streams(
    decisions: dict[tuple[str, str], list[Decision]],
) -> None:
    assert sum(team != whose for team, whose in decisions) == 20 * 19 + 20 * 20
    assert list(_wrong(decisions, own=False)) == []
