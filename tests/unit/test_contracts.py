"""The organisation stack's contract: per-share access parameters, output ids, team tag."""

from __future__ import annotations

from quota_constructs.contracts import (
    EXECUTION_ROLE_ARNS_SCOPE,
    SHARE_ARNS_SCOPE,
    SUBMITTER_ROLE_ARNS_SCOPE,
    TEAM_BUCKETS_SCOPE,
    TEAM_TAG_KEY,
    TRAINING_JOB_PREFIXES_SCOPE,
    bucket_parameter,
    execution_role_arn_parameter,
    share_access_parameters,
    share_arn_parameter,
    share_output_id,
    submitter_role_arn_parameter,
    team_tag_value,
    training_job_prefix_parameter,
)


def test_access_parameters_sit_next_to_the_share_arn() -> None:
    assert share_arn_parameter("research", "generative") == (
        "/quota/research/quota-shares/generative/arn"
    )
    assert submitter_role_arn_parameter("research", "generative") == (
        "/quota/research/quota-shares/generative/submitter-role-arn"
    )
    assert execution_role_arn_parameter("research", "generative") == (
        "/quota/research/quota-shares/generative/execution-role-arn"
    )
    assert bucket_parameter("research", "generative") == (
        "/quota/research/quota-shares/generative/bucket"
    )
    assert training_job_prefix_parameter("research", "generative") == (
        "/quota/research/quota-shares/generative/training-job-prefix"
    )


def test_share_access_parameters_map_each_output_scope_to_its_parameter() -> None:
    assert share_access_parameters("research", "generative") == {
        SUBMITTER_ROLE_ARNS_SCOPE: "/quota/research/quota-shares/generative/submitter-role-arn",
        EXECUTION_ROLE_ARNS_SCOPE: "/quota/research/quota-shares/generative/execution-role-arn",
        TEAM_BUCKETS_SCOPE: "/quota/research/quota-shares/generative/bucket",
        TRAINING_JOB_PREFIXES_SCOPE: "/quota/research/quota-shares/generative/training-job-prefix",
    }


def test_output_scopes_are_distinct_and_outputs_are_named_after_the_share() -> None:
    scopes = {SHARE_ARNS_SCOPE, SUBMITTER_ROLE_ARNS_SCOPE, EXECUTION_ROLE_ARNS_SCOPE}
    assert len(scopes | {TEAM_BUCKETS_SCOPE, TRAINING_JOB_PREFIXES_SCOPE}) == 5
    assert share_output_id("generative") == "generative"


def test_team_tag_value_names_the_organisation_so_equal_share_names_differ() -> None:
    assert TEAM_TAG_KEY == "quota-team"
    assert team_tag_value("research", "generative") == "research/generative"
    assert team_tag_value("research", "a") != team_tag_value("other", "a")


def test_training_plans_parameter_is_the_organisations_list_of_plan_arns() -> None:
    from quota_constructs.contracts import training_plans_parameter

    assert training_plans_parameter("research") == "/quota/research/training-plans"


def test_training_plans_value_round_trips_and_none_is_the_sentinel() -> None:
    from quota_constructs.contracts import (
        NO_TRAINING_PLANS,
        training_plans_from_value,
        training_plans_value,
    )

    arns = (
        "arn:aws:sagemaker:eu-west-1:123456789012:training-plan/p5-june",
        "arn:aws:sagemaker:eu-west-1:123456789012:training-plan/p5-july",
    )
    assert training_plans_value(arns) == ",".join(arns)
    assert training_plans_from_value(training_plans_value(arns)) == arns
    assert training_plans_value(()) == NO_TRAINING_PLANS == "none"  # SSM has no empty value
    assert training_plans_from_value(NO_TRAINING_PLANS) == ()
    assert training_plans_from_value(" a , b ") == ("a", "b")
