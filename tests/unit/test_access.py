"""Team access rules (``shares[].access``): principals, priority cap, execution role, bucket."""

from __future__ import annotations

import re

import pytest

from quota_constructs.config import parse_organisation
from quota_constructs.model import (
    BUCKET_BODY,
    PRINCIPAL_BODY,
    ROLE_ARN_BODY,
    BucketLocation,
    JobQueueSpec,
    Problem,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
    TeamAccess,
    parse_iam_principal,
    shared_access_problems,
)

TEAM_ROLE = "arn:aws:iam::111122223333:role/GenerativeTeam"
ACCOUNT = "444455556666"
EXEC_ROLE = "arn:aws:iam::123456789012:role/TeamExecution"

GOOD_PRINCIPALS = [
    ACCOUNT,
    "arn:aws:iam::444455556666:root",
    TEAM_ROLE,
    "arn:aws:iam::111122223333:role/division/ml/GenerativeTeam",
    "arn:aws:iam::111122223333:user/alice+ml@example.com",
    "arn:aws:iam::111122223333:role/" + "r" * 64,
]
GOOD_BUCKETS = ["create", "research-data", "my.bucket.1/team-a", "abc/team/a/", "a-b/x_y.z"]


def access(**kw: object) -> TeamAccess:
    kw.setdefault("principals", (TEAM_ROLE,))
    return TeamAccess(**kw)  # type: ignore[arg-type]


def only_problem(team: TeamAccess) -> Problem:
    (problem,) = team.problems()
    return problem


def share(name: str, team: TeamAccess) -> QuotaShareSpec:
    return QuotaShareSpec(name, {"ml.g5.xlarge": 1}, SharingStrategy.LEND, access=team)


# --- accepted values --------------------------------------------------------------------------


def test_the_issue_example_is_valid() -> None:
    team = TeamAccess(principals=(TEAM_ROLE, ACCOUNT), max_priority=50)
    assert team.problems() == []
    assert team.creates_execution_role and team.creates_bucket
    assert team.existing_bucket is None


@pytest.mark.parametrize("principal", GOOD_PRINCIPALS)
def test_accepts_account_ids_and_iam_root_role_and_user_arns(principal: str) -> None:
    assert access(principals=(principal,)).problems() == []


def test_principal_arns_turn_account_ids_into_root_arns() -> None:
    team = access(principals=(TEAM_ROLE, ACCOUNT))
    assert team.principal_arns == (TEAM_ROLE, "arn:aws:iam::444455556666:root")


def test_parse_keeps_the_path_and_name_of_a_role() -> None:
    parsed = parse_iam_principal("arn:aws:iam::111122223333:role/division/ml/Team")
    assert parsed is not None
    assert (parsed.account, parsed.kind, parsed.path, parsed.name) == (
        "111122223333",
        "role",
        "/division/ml/",
        "Team",
    )
    assert parsed.arn == "arn:aws:iam::111122223333:role/division/ml/Team"


@pytest.mark.parametrize("bucket", GOOD_BUCKETS)
def test_accepts_create_a_bucket_name_or_a_bucket_prefix(bucket: str) -> None:
    assert access(bucket=bucket).problems() == []


def test_existing_bucket_splits_name_and_prefix_dropping_a_trailing_slash() -> None:
    assert access(bucket="abc/team/a/").existing_bucket == BucketLocation("abc", "team/a")
    assert access(bucket="abc").existing_bucket == BucketLocation("abc", "")


@pytest.mark.parametrize("cap", [0, 50, 9999])
def test_accepts_priority_caps_in_the_service_range(cap: int) -> None:
    assert access(max_priority=cap).problems() == []


def test_accepts_an_existing_execution_role_arn_with_a_path() -> None:
    role = "arn:aws:iam::123456789012:role/service-role/SageMakerTeamA"
    assert access(execution_role=role).problems() == []
    assert not access(execution_role=role).creates_execution_role


# --- principals -------------------------------------------------------------------------------


def test_rejects_an_empty_principal_list() -> None:
    problem = only_problem(access(principals=()))
    assert problem.path == "access.principals"
    assert "at least one principal" in problem.message


def test_rejects_more_than_ten_principals() -> None:
    many = tuple(f"1111222233{n:02d}" for n in range(11))
    problem = only_problem(access(principals=many))
    assert problem.path == "access.principals"
    assert "at most 10 principals" in problem.message


@pytest.mark.parametrize(
    ("principal", "message"),
    [
        ("GenerativeTeam", "a 12-digit account id or an IAM root, role or user ARN"),
        ("4444", "exactly 12 digits, this one has 4"),
        ("4444555566667", "exactly 12 digits, this one has 13"),
        ("arn:aws:iam::111122223333:role/*", "wildcards"),
        ("arn:aws:iam::111122223333:role/Team?", "wildcards"),
        ("arn:aws:iam::111122223333:role/${aws:username}", "policy variables"),
        ("*", "wildcards"),
        ("arn:aws-cn:iam::111122223333:root", "only the aws partition is supported"),
        ("arn:aws-us-gov:iam::111122223333:root", "only the aws partition is supported"),
        ("arn:aws:sts::111122223333:assumed-role/Team/session", "service 'sts'"),
        ("arn:aws:s3:::bucket", "service 's3'"),
        ("arn:aws:iam::111122223333:group/Team", "type 'group' is not allowed"),
        ("arn:aws:iam::11112222333:root", "12-digit account"),
        ("arn:aws:iam:eu-west-1:111122223333:root", "empty region"),
        ("arn:aws:iam::111122223333:root/extra", "ends in ':root'"),
        ("arn:aws:iam::111122223333:role/", "role name is missing"),
        ("arn:aws:iam::111122223333:role/" + "r" * 65, "1-64 characters, this one has 65"),
        ("arn:aws:iam::111122223333:role/team name", "letters, digits and + = , . @ _ -"),
        ("arn:aws:iam::111122223333:role/équipe", "letters, digits and + = , . @ _ -"),
    ],
)
def test_rejects_an_unknown_principal_format(principal: str, message: str) -> None:
    problem = only_problem(access(principals=(principal,)))
    assert problem.path == "access.principals[0]"
    assert problem.value == principal
    assert message in problem.message
    assert "12-digit account id" in problem.fix


def test_rejects_a_principal_with_a_trailing_newline() -> None:
    problem = only_problem(access(principals=(ACCOUNT + "\n",)))
    assert problem.path == "access.principals[0]"
    assert "12-digit account id or an IAM" in problem.message


def test_rejects_an_arn_with_a_trailing_newline() -> None:
    problem = only_problem(access(principals=(TEAM_ROLE + "\n",)))
    assert problem.path == "access.principals[0]"
    assert "letters, digits" in problem.message


def test_rejects_an_iam_path_longer_than_512_characters() -> None:
    principal = "arn:aws:iam::111122223333:role/" + "p/" * 256 + "Team"
    problem = only_problem(access(principals=(principal,)))
    assert "at most 512 characters" in problem.message


def test_rejects_an_account_id_that_is_a_number() -> None:
    problem = only_problem(access(principals=(444455556666,)))
    assert problem.path == "access.principals[0]"
    assert "write account ids in quotes" in problem.message


def test_rejects_a_duplicate_principal() -> None:
    problem = only_problem(access(principals=(TEAM_ROLE, TEAM_ROLE)))
    assert problem.path == "access.principals[1]"
    assert problem.message == "the same principal as principals[0]"


def test_rejects_an_account_id_and_its_root_arn_as_duplicates() -> None:
    problem = only_problem(access(principals=(ACCOUNT, "arn:aws:iam::444455556666:root")))
    assert problem.path == "access.principals[1]"
    assert "the same principal as principals[0]" in problem.message


def test_rejects_role_names_differing_only_in_case_or_path_as_duplicates() -> None:
    other = "arn:aws:iam::111122223333:role/team/generativeteam"
    problem = only_problem(access(principals=(TEAM_ROLE, other)))
    assert problem.path == "access.principals[1]"


def test_a_role_and_a_user_of_the_same_name_are_different_principals() -> None:
    user = "arn:aws:iam::111122223333:user/GenerativeTeam"
    assert access(principals=(TEAM_ROLE, user)).problems() == []


# --- max_priority -----------------------------------------------------------------------------


def test_rejects_a_cap_above_9999() -> None:
    problem = only_problem(access(max_priority=10000))
    assert problem.path == "access.max_priority"
    assert "between 0 and 9999" in problem.message
    assert problem.value == 10000


def test_rejects_a_negative_cap() -> None:
    assert "between 0 and 9999" in only_problem(access(max_priority=-1)).message


def test_rejects_true_as_a_cap() -> None:
    problem = only_problem(access(max_priority=True))
    assert problem.path == "access.max_priority"
    assert "must be an integer" in problem.message


# --- execution_role ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "message"),
    [
        ("TeamExecution", "'create' or an IAM role ARN"),
        ("Create", "'create' or an IAM role ARN"),
        ("arn:aws:iam::123456789012:user/TeamExecution", "type 'user' is not allowed"),
        ("arn:aws:iam::123456789012:root", "type 'root' is not allowed"),
        ("arn:aws:iam::123456789012:role/*", "wildcards"),
        ("arn:aws-cn:iam::123456789012:role/TeamExecution", "only the aws partition"),
        (EXEC_ROLE + "\n", "letters, digits"),
    ],
)
def test_rejects_an_execution_role_that_is_not_create_or_a_role_arn(
    role: str, message: str
) -> None:
    problem = only_problem(access(execution_role=role))
    assert problem.path == "access.execution_role"
    assert message in problem.message
    assert "'create' or an existing role's ARN" in problem.fix


# --- bucket -----------------------------------------------------------------------------------


@pytest.mark.parametrize("bucket", ["/team-a", "create/team-a"])
def test_rejects_a_prefix_without_a_bucket(bucket: str) -> None:
    problem = only_problem(access(bucket=bucket))
    assert problem.path == "access.bucket"
    assert "a prefix needs" in problem.message
    assert problem.fix.startswith("write 'create' or an existing bucket's name")


@pytest.mark.parametrize(
    ("bucket", "message"),
    [
        ("ab", "3-63 characters, this one has 2"),
        ("a" * 64, "3-63 characters, this one has 64"),
        ("Research-Data", "lowercase letters"),
        ("research_data", "lowercase letters"),
        ("-research", "start and end with a letter or digit"),
        ("research.", "start and end with a letter or digit"),
        ("research..data", "two adjacent dots"),
        ("192.168.5.4", "IP address"),
        ("xn--research", "may not start with"),
        ("sthree-research", "may not start with"),
        ("amzn-s3-demo-research", "may not start with"),
        ("research-s3alias", "may not end with"),
        ("research--ol-s3", "may not end with"),
        ("research.mrap", "may not end with"),
        ("research--x-s3", "may not end with"),
        ("research--table-s3", "may not end with"),
        ("research\n", "lowercase letters"),
        ("s3://research", "without 's3://'"),
    ],
)
def test_rejects_a_bucket_name_that_breaks_s3_naming_rules(bucket: str, message: str) -> None:
    problem = only_problem(access(bucket=bucket))
    assert problem.path == "access.bucket"
    assert message in problem.message


@pytest.mark.parametrize(
    ("bucket", "message"),
    [
        ("research/", "prefix after '/' is empty"),
        ("research/team/*", "wildcards"),
        ("research/${aws:username}", "policy variables"),
        ("research/team//a", "no empty, '.' or '..' parts"),
        ("research/../other", "no empty, '.' or '..' parts"),
        ("research/./team", "no empty, '.' or '..' parts"),
        ("research/team a", "letters, digits"),
        ("research/team\n", "letters, digits"),
        ("research/" + "p" * 257, "at most 256 characters"),
    ],
)
def test_rejects_a_bad_prefix(bucket: str, message: str) -> None:
    problem = only_problem(access(bucket=bucket))
    assert problem.path == "access.bucket"
    assert message in problem.message


# --- teams sharing resources ------------------------------------------------------------------


def test_rejects_two_teams_sharing_an_execution_role() -> None:
    queue = JobQueueSpec(
        shares=(
            share("a", access(execution_role=EXEC_ROLE)),
            share("b", access(execution_role=EXEC_ROLE)),
        )
    )
    (problem,) = queue.problems()
    assert problem.path == "shares[1].access.execution_role"
    assert "shares[0].access.execution_role names the same execution role" in problem.message
    assert "own execution role" in problem.fix


def test_rejects_the_same_role_written_with_another_path_or_case() -> None:
    other = "arn:aws:iam::123456789012:role/team/teamexecution"
    queue = JobQueueSpec(
        shares=(
            share("a", access(execution_role=EXEC_ROLE)),
            share("b", access(execution_role=other)),
        )
    )
    assert [p.path for p in queue.problems()] == ["shares[1].access.execution_role"]


def test_two_teams_may_each_have_a_created_role_and_bucket() -> None:
    queue = JobQueueSpec(shares=(share("a", access()), share("b", access())))
    assert queue.problems() == []


def test_two_teams_may_use_separate_prefixes_of_one_bucket() -> None:
    queue = JobQueueSpec(
        shares=(
            share("a", access(bucket="research/team")),
            share("b", access(bucket="research/team2")),
        )
    )
    assert queue.problems() == []


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("research/team", "research/team/x"),
        ("research/team/x", "research/team/"),
        ("research", "research/team"),
        ("research/team", "research"),
        ("research/team", "research/team"),
    ],
)
def test_rejects_overlapping_bucket_locations(first: str, second: str) -> None:
    queue = JobQueueSpec(
        shares=(share("a", access(bucket=first)), share("b", access(bucket=second)))
    )
    (problem,) = queue.problems()
    assert problem.path == "shares[1].access.bucket"
    assert problem.message.startswith("overlaps shares[0].access.bucket")


def test_shared_access_problems_skips_values_that_are_invalid_on_their_own() -> None:
    bad = access(execution_role="not-a-role", bucket="/team")
    assert shared_access_problems([("x", bad), ("y", bad)]) == []


def test_shared_access_problems_checks_a_valid_role_beside_other_bad_fields() -> None:
    first = access(execution_role=EXEC_ROLE, max_priority=10000)
    second = access(execution_role=EXEC_ROLE, bucket="/team")
    problems = shared_access_problems([("x", first), ("y", second)])
    assert [p.path for p in problems] == ["y.execution_role"]


def test_share_problems_include_its_access_block() -> None:
    problems = share("a", access(max_priority=10000)).problems("shares[0]")
    assert [p.path for p in problems] == ["shares[0].access.max_priority"]


# --- the JSON Schema's patterns come from the same source -------------------------------------


@pytest.mark.parametrize("principal", GOOD_PRINCIPALS)
def test_schema_principal_pattern_accepts_every_valid_principal(principal: str) -> None:
    assert re.fullmatch(PRINCIPAL_BODY, principal)


@pytest.mark.parametrize("bucket", GOOD_BUCKETS[1:])
def test_schema_bucket_pattern_accepts_every_valid_bucket(bucket: str) -> None:
    assert re.fullmatch(BUCKET_BODY, bucket)


def test_schema_role_pattern_accepts_a_valid_role_and_not_a_user() -> None:
    assert re.fullmatch(ROLE_ARN_BODY, EXEC_ROLE)
    assert not re.fullmatch(ROLE_ARN_BODY, "arn:aws:iam::123456789012:user/TeamExecution")


def test_rejects_the_reserved_team_tag_key_as_an_organisation_tag() -> None:
    data = {
        "organisation": "lab",
        "tags": {"Quota-Team": "x"},
        "shares": [{"name": "a", "capacity": {"ml.g5.xlarge": 1}, "strategy": "RESERVE"}],
    }
    with pytest.raises(QuotaConfigError) as info:
        parse_organisation(data)
    [problem] = info.value.problems
    assert problem.path == "tags.Quota-Team" and "'quota-team' is reserved" in problem.message


def test_rejects_fifty_organisation_tags_when_a_share_has_team_access() -> None:
    access = {"principals": ["111122223333"]}
    share = {"name": "a", "capacity": {"ml.g5.xlarge": 1}, "strategy": "RESERVE", "access": access}
    data = {"organisation": "lab", "tags": {f"k{i}": "v" for i in range(50)}, "shares": [share]}
    with pytest.raises(QuotaConfigError) as info:
        parse_organisation(data)
    [problem] = info.value.problems
    assert problem.path == "tags"
    assert "at most 49 tags when a share has an access block" in problem.message
    del share["access"]
    assert len(parse_organisation(data).tags) == 50
