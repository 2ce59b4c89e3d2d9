"""The pipeline's Plan step reads a live queue with the least it needs: its session policy
(``stacks/plan_gate.plan_session_policy``), decided by iam-simulate, allows each read the plan
makes on the organisation's resources in the target account and region, and nothing else: no
other organisation's parameter, no other region, no write (issue 40)."""

from __future__ import annotations

import pytest

from quota_constructs.contracts import job_queue_arn_parameter
from quota_constructs.stacks.plan_gate import (
    PLAN_READ_ACTIONS,
    lookup_role_arn,
    plan_session_policy,
)
from tests.iam.simulator import ACCOUNT, Decision, NamedPolicy, Request, evaluate

REGION, ORG = "eu-west-1", "research"  # the harness's account: a "*" request is made there
SESSION = (
    f"arn:aws:sts::{ACCOUNT}:assumed-role/"
    f"{lookup_role_arn(ACCOUNT, REGION).rsplit('/', 1)[1]}/quota-plan-{ORG}"
)
QUEUE = f"arn:aws:batch:{REGION}:{ACCOUNT}:job-queue/ResearchJobQueue-AbC123"
SHARE = f"{QUEUE}/quota-share/generative"
PARAMETER = f"arn:aws:ssm:{REGION}:{ACCOUNT}:parameter{job_queue_arn_parameter(ORG)}"
HERE = {"aws:RequestedRegion": REGION}
RESOURCE_OF = {
    "ssm:GetParameter": PARAMETER,
    "batch:ListQuotaShares": QUEUE,
    "batch:DescribeQuotaShare": SHARE,
}
"""The resource each scoped read names; the others support no resource type (``*``)."""


def decide(requests: list[Request]) -> list[Decision]:
    policy = NamedPolicy("PlanSession", plan_session_policy(ORG, ACCOUNT, REGION))
    return evaluate(SESSION, [policy], requests)


def test_the_session_policy_names_exactly_the_plan_s_reads() -> None:
    statements = plan_session_policy(ORG, ACCOUNT, REGION)["Statement"]
    actions = set()
    for statement in statements:
        named = statement["Action"]
        actions |= {named} if isinstance(named, str) else set(named)
    assert actions == set(PLAN_READ_ACTIONS)
    assert {s["Effect"] for s in statements} == {"Allow"}


def test_every_read_the_plan_makes_is_allowed_on_the_organisation_s_resources() -> None:
    requests = [Request(a, RESOURCE_OF.get(a, "*"), HERE) for a in PLAN_READ_ACTIONS]
    assert decide(requests) == [Decision.ALLOWED] * len(requests)


@pytest.mark.parametrize(
    ("action", "resource", "context"),
    [
        pytest.param(
            "ssm:GetParameter",
            PARAMETER.replace("/research/", "/other-org/"),
            HERE,
            id="another-organisation's-parameter",
        ),
        pytest.param(
            "ssm:GetParameter",
            PARAMETER.replace("job-queue/arn", "quota-shares/generative/bucket"),
            HERE,
            id="another-parameter-of-the-organisation",
        ),
        pytest.param(
            "batch:ListQuotaShares",
            QUEUE.replace(REGION, "us-east-1"),
            {"aws:RequestedRegion": "us-east-1"},
            id="a-queue-in-another-region",
        ),
        pytest.param(
            "batch:ListServiceJobs",
            "*",
            {"aws:RequestedRegion": "us-east-1"},
            id="jobs-in-another-region",
        ),
        pytest.param("batch:UpdateQuotaShare", SHARE, HERE, id="update-a-share"),
        pytest.param("batch:DeleteQuotaShare", SHARE, HERE, id="delete-a-share"),
        pytest.param("batch:TerminateServiceJob", "*", HERE, id="terminate-a-job"),
        pytest.param("batch:GetJobQueueSnapshot", QUEUE, HERE, id="a-read-the-plan-does-not-make"),
        pytest.param("ssm:PutParameter", PARAMETER, HERE, id="write-the-parameter"),
    ],
)
def test_nothing_else_is_allowed(action: str, resource: str, context: dict[str, str]) -> None:
    assert decide([Request(action, resource, context)]) == [Decision.IMPLICITLY_DENIED]
