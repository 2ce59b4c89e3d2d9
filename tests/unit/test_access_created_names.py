"""Names an organisation stack creates (``Quota-...``) refused in ``shares[].access``."""

from __future__ import annotations

import pytest

from quota_constructs.config import parse_organisation
from quota_constructs.model import STACK_NAME_PREFIX, QuotaConfigError, is_stack_created_name

TEAM_ROLE = "arn:aws:iam::111122223333:role/GenerativeTeam"
BETA_ROLE = "arn:aws:iam::123456789012:role/Quota-research-TeamAccessbetaExecutionRole-1A2B3C"
BETA_SUBMITTER = "arn:aws:iam::123456789012:role/Quota-research-TeamAccessbetaSubmitterRole-9Z"
BETA_BUCKET = "quota-research-teamaccessbetabucket1e2f3a4b-5c6d7e8f9a0b"


def organisation(**access: object) -> dict[str, object]:
    team = {"principals": [TEAM_ROLE], **access}
    share = {"name": "alpha", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND"}
    return {"organisation": "research", "shares": [{**share, "access": team}]}


def only_problem_of(data: dict[str, object]) -> str:
    with pytest.raises(QuotaConfigError) as info:
        parse_organisation(data)
    [problem] = info.value.problems
    return str(problem)


def test_the_prefix_is_the_organisation_stacks_name_prefix() -> None:
    assert STACK_NAME_PREFIX == "Quota-"
    assert is_stack_created_name("quota-research-accesslogs")
    assert not is_stack_created_name("quotas-team-data")


def test_rejects_an_execution_role_named_like_a_role_the_stack_creates() -> None:
    message = only_problem_of(organisation(execution_role=BETA_ROLE))
    assert message.startswith("shares[0].access.execution_role: roles named Quota-... are the")
    assert "published under /quota/<organisation>/: another team's" in message
    assert BETA_ROLE in message
    assert "fix: write 'create' for a role of the team's own" in message


def test_rejects_an_execution_role_named_so_in_another_case_or_path() -> None:
    role = "arn:aws:iam::123456789012:role/teams/QUOTA-research-x"
    assert "roles named Quota-... are" in only_problem_of(organisation(execution_role=role))


def test_rejects_a_bucket_named_like_a_bucket_the_stack_creates() -> None:
    message = only_problem_of(organisation(bucket=BETA_BUCKET))
    assert message.startswith("shares[0].access.bucket: buckets named quota-... are the")
    assert "fix: write 'create' for a bucket of the team's own" in message
    assert "does not start with quota-" in message


def test_rejects_a_prefix_of_a_bucket_the_stack_creates() -> None:
    message = only_problem_of(organisation(bucket=f"{BETA_BUCKET}/alpha"))
    assert message.startswith("shares[0].access.bucket: buckets named quota-... are the")


def test_rejects_a_principal_that_is_another_teams_submitter_role() -> None:
    data = organisation()
    data["shares"][0]["access"]["principals"] = [TEAM_ROLE, BETA_SUBMITTER]  # type: ignore[index]
    message = only_problem_of(data)
    assert message.startswith("shares[0].access.principals[1]: roles and users named Quota-...")
    assert "fix: list the team's own roles, users or accounts" in message


def test_accepts_names_that_only_contain_quota() -> None:
    data = organisation(
        execution_role="arn:aws:iam::123456789012:role/team-quota-training",
        bucket="research-quota-data/alpha",
    )
    assert parse_organisation(data).queue.shares[0].access is not None
