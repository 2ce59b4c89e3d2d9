"""QuotaShareTeamAccess and the organisation stack's team access: resources, ids, contract."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template

from quota_constructs.config import load_organisation
from quota_constructs.constructs import QuotaShare, QuotaShareTeamAccess, grants
from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    QuotaConfigError,
    TeamAccess,
    training_job_prefix,
)
from quota_constructs.stacks.organisation_stack import OrganisationStack
from tests.constructs.helpers import (
    FLEET_EXISTING_ROLES,
    fleet_organisation,
    make_app,
    resources,
    share,
)
from tests.helpers import ORGS_DIR

RESEARCH = load_organisation(ORGS_DIR / "research.yaml")
SHARE_ARN = "arn:aws:batch:eu-west-1:123456789012:job-queue/research/quota-share/generative"


@pytest.fixture(scope="module")
def research() -> dict[str, Any]:
    stack = OrganisationStack(make_app(), "Quota-research", organisation=RESEARCH)
    return dict(Template.from_stack(stack).to_json())


@pytest.fixture(scope="module")
def fleet() -> dict[str, Any]:
    stack = OrganisationStack(make_app(), "Quota-fleet", organisation=fleet_organisation())
    return dict(Template.from_stack(stack).to_json())


def of_type(template: dict[str, Any], resource_type: str) -> dict[str, Any]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == resource_type}


def parameters(template: dict[str, Any]) -> dict[str, Any]:
    found = of_type(template, "AWS::SSM::Parameter").values()
    return {r["Properties"]["Name"]: r["Properties"]["Value"] for r in found}


def access_stack(**access: Any) -> tuple[cdk.Stack, QuotaShareTeamAccess]:
    stack = cdk.Stack(make_app(), "Test")
    share = QuotaShare.from_quota_share_arn(stack, "Share", SHARE_ARN)
    construct = QuotaShareTeamAccess(
        stack,
        "Access",
        quota_share=share,
        team="research/generative",
        access=TeamAccess(**{"principals": ("111122223333",), **access}),
    )
    return stack, construct


# --- logical ids and the stack's contract -----------------------------------------------------


def test_logical_ids_of_the_research_stack_are_pinned(research: dict[str, Any]) -> None:
    queue = [
        "JobQueueArnParameter",
        "JobQueueNameParameter",
        "QuotaShareArnsdataanalysisParameterD49BC42D",
        "QuotaShareArnsgenerativeParameter90735ED3",
        "QuotaShareArnsrecommendationParameter8C1E22C7",
        "TrainingQueueJobQueueBC771182",
        "TrainingQueueJobQueuedataanalysis500F7773",
        "TrainingQueueJobQueuegenerativeC1F747E4",
        "TrainingQueueJobQueuerecommendation530B74D9",
        "TrainingQueueSchedulingPolicyAEE32E4A",
        "TrainingQueueServiceEnvironment591980E1",
    ]
    access = [
        "AccessLogs8B620ECA",
        "AccessLogsPolicyABDC4D2D",
        "ExecutionRoleArnsdataanalysisParameterCAEAA74E",
        "ExecutionRoleArnsgenerativeParameterB8CB53AF",
        "ExecutionRoleArnsrecommendationParameter66648158",
        "SubmitterRoleArnsdataanalysisParameterCC519971",
        "SubmitterRoleArnsgenerativeParameter0F26DA35",
        "SubmitterRoleArnsrecommendationParameterF66AE81E",
        "TeamAccessdataanalysisBucket3AEAE18B",
        "TeamAccessdataanalysisBucketKey52162481",
        "TeamAccessdataanalysisBucketPolicyEFEFB37B",
        "TeamAccessdataanalysisExecutionRoleDefaultPolicy00C408B2",
        "TeamAccessdataanalysisExecutionRoleFBFEDEC4",
        "TeamAccessdataanalysisSubmitterPolicy74442F5C",
        "TeamAccessdataanalysisSubmitterRole7B90E4EE",
        "TeamAccessgenerativeBucket3E37CC2F",
        "TeamAccessgenerativeBucketKeyC178DAB6",
        "TeamAccessgenerativeBucketPolicy26169C1D",
        "TeamAccessgenerativeExecutionRoleC385546F",
        "TeamAccessgenerativeExecutionRoleDefaultPolicy82BF7A8E",
        "TeamAccessgenerativeSubmitterPolicy75652ADE",
        "TeamAccessgenerativeSubmitterRole665492F0",
        "TeamAccessrecommendationBucket41347B6A",
        "TeamAccessrecommendationBucketKey70DDE334",
        "TeamAccessrecommendationBucketPolicy7A5FCF3A",
        "TeamAccessrecommendationExecutionRole29DCDB8E",
        "TeamAccessrecommendationExecutionRoleDefaultPolicy090A56E0",
        "TeamAccessrecommendationSubmitterPolicy18FF2025",
        "TeamAccessrecommendationSubmitterRole8F1B3A73",
        "TeamBucketsdataanalysisParameter12491DB6",
        "TeamBucketsgenerativeParameter6AC96F2C",
        "TeamBucketsrecommendationParameter40FDCB86",
        "TrainingJobPrefixesdataanalysisParameter6F53309A",
        "TrainingJobPrefixesgenerativeParameter3BBB46D7",
        "TrainingJobPrefixesrecommendationParameterD67036AC",
        "TrainingPlanArnsParameter",  # the organisation's plans (none here: "none")
    ]
    notifications_and_dashboard = [
        "Dashboard7A06DACF",
        "DashboardEvents316E72B8",
        "DashboardEventsRule00E27FAF",
        "DashboardFailedJobs1FEDC222",
        "DashboardPreemptedAttemptsB579EB76",
        "Notifications87298708",
        "NotificationsDeadLetterQueue32AE6445",
        "NotificationsDeadLetterQueuePolicy3B123E3A",
        "NotificationsKeyADCFA950",
        "NotificationsTopicAE679CBD",
        "NotificationsTopicPolicyAF92D34A",
    ]
    calendar = [  # data-analysis's weekend window (docs/constructs.md, QuotaShareCalendar)
        "CalendarsdataanalysisFlip04C517240",
        "CalendarsdataanalysisFlip13038ECC3",
        "CalendarsdataanalysisRoleBDD14133",
        "CalendarsdataanalysisRoleDefaultPolicy86BB63D3",
    ]
    assert sorted(research["Resources"]) == sorted(
        queue + access + notifications_and_dashboard + calendar
    )


def test_ssm_parameters_publish_each_teams_roles_and_bucket(research: dict[str, Any]) -> None:
    params = parameters(research)
    prefix = "/quota/research/quota-shares/generative"
    assert params[f"{prefix}/submitter-role-arn"] == {
        "Fn::GetAtt": ["TeamAccessgenerativeSubmitterRole665492F0", "Arn"]
    }
    assert params[f"{prefix}/execution-role-arn"] == {
        "Fn::GetAtt": ["TeamAccessgenerativeExecutionRoleC385546F", "Arn"]
    }
    assert params[f"{prefix}/bucket"] == {"Ref": "TeamAccessgenerativeBucket3E37CC2F"}
    assert params[f"{prefix}/training-job-prefix"] == training_job_prefix("research/generative")
    assert len(params) == 3 + 3 * 5  # queue name, ARN, training plans; 5 per team


def test_outputs_publish_each_teams_roles_and_bucket(research: dict[str, Any]) -> None:
    outputs = research["Outputs"]
    team = {k: o["Description"] for k, o in outputs.items() if "generative" in k}
    assert sorted(team.values()) == [
        "ARN of quota share generative",
        "Team generative: SageMaker execution role ARN",
        "Team generative: bucket (name or name/prefix)",
        "Team generative: prefix of every TrainingJobName",
        "Team generative: submitter role ARN",
    ]


def log_stream_resources(template: dict[str, Any], team: str) -> list[Any]:
    """The resources of the statement granting ``logs:CreateLogStream`` to ``team``'s role."""
    policy = next(
        r
        for k, r in of_type(template, "AWS::IAM::Policy").items()
        if k.startswith(f"TeamAccess{team}ExecutionRoleDefaultPolicy")
    )
    return [
        statement["Resource"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if "logs:CreateLogStream" in statement["Action"]
    ]


def streams_of(resource: Any) -> str:
    """The text after ``log-group:`` of a stream resource built with ``Fn::Join``."""
    return str(resource["Fn::Join"][1][-1]).split(":log-group:", 1)[1]


def test_each_execution_role_writes_only_its_teams_training_log_streams(
    research: dict[str, Any],
) -> None:
    (resource,) = log_stream_resources(research, "generative")
    prefix = training_job_prefix("research/generative")
    assert streams_of(resource) == f"/aws/sagemaker/TrainingJobs:log-stream:AWSBatch{prefix}*"


def test_shared_training_logs_grant_every_stream_of_the_group() -> None:
    shared = TeamAccess(principals=("111122223333",), training_logs="shared")
    organisation = Organisation(
        name="shared", queue=JobQueueSpec(shares=(share("team", access=shared),))
    ).validate()
    stack = OrganisationStack(make_app(), "Quota-shared", organisation=organisation)
    (resource,) = log_stream_resources(dict(Template.from_stack(stack).to_json()), "team")
    assert streams_of(resource) == "/aws/sagemaker/TrainingJobs:log-stream:*"


def test_existing_role_and_bucket_prefix_are_published_as_given(fleet: dict[str, Any]) -> None:
    params = parameters(fleet)
    shares = "/quota/fleet/quota-shares"
    assert params[f"{shares}/team-04/execution-role-arn"] == FLEET_EXISTING_ROLES["team-04"]
    assert params[f"{shares}/team-04/bucket"] == "fleet-shared-training/team-04"
    assert params[f"{shares}/team-05/bucket"] == "fleet-team-05-data"


def test_existing_roles_and_buckets_are_not_created(fleet: dict[str, Any]) -> None:
    roles = of_type(fleet, "AWS::IAM::Role")
    assert len([r for r in roles if "ExecutionRole" in r]) == 20 - 2
    assert not [
        r for r in roles if r.startswith(("TeamAccessteam01Execution", "TeamAccessteam04E"))
    ]
    buckets = [b for b in of_type(fleet, "AWS::S3::Bucket") if b.startswith("TeamAccess")]
    assert len(buckets) == 20 - 4
    keys = [k for k in of_type(fleet, "AWS::KMS::Key") if k.startswith("TeamAccess")]
    assert len(keys) == 20 - 4


def test_an_organisation_without_access_creates_no_team_resources() -> None:
    seed = load_organisation(ORGS_DIR / "seed-demo.yaml")
    stack = OrganisationStack(make_app(), "Quota-seed-demo", organisation=seed)
    resources = Template.from_stack(stack).to_json()["Resources"]
    types = {r["Type"] for r in resources.values()}
    assert not types & {"AWS::IAM::Role", "AWS::S3::Bucket"}
    keys = [k for k, r in resources.items() if r["Type"] == "AWS::KMS::Key"]
    assert keys == ["NotificationsKeyADCFA950"]  # the notification topic's, not a team's


# --- the submitter role -----------------------------------------------------------------------


def test_submitter_role_trusts_exactly_the_teams_principals(research: dict[str, Any]) -> None:
    role = research["Resources"]["TeamAccessgenerativeSubmitterRole665492F0"]["Properties"]
    [statement] = role["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Action"] == "sts:AssumeRole"
    assert statement["Principal"]["AWS"] == [
        "arn:aws:iam::111122223333:role/GenerativeTeam",
        {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":iam::444455556666:root"]]},
    ]


def test_submitter_role_holds_only_the_team_managed_policy(research: dict[str, Any]) -> None:
    role = research["Resources"]["TeamAccessgenerativeSubmitterRole665492F0"]["Properties"]
    assert role["ManagedPolicyArns"] == [{"Ref": "TeamAccessgenerativeSubmitterPolicy75652ADE"}]
    assert "Policies" not in role
    attached = [
        p
        for p in of_type(research, "AWS::IAM::Policy").values()
        if {"Ref": "TeamAccessgenerativeSubmitterRole665492F0"} in p["Properties"]["Roles"]
    ]
    assert attached == []


def test_submitter_policy_requires_the_team_tag_and_caps_priority(
    research: dict[str, Any],
) -> None:
    policy = research["Resources"]["TeamAccessgenerativeSubmitterPolicy75652ADE"]
    [submit] = [
        s
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if s["Action"] == "batch:SubmitServiceJob"
    ]
    assert submit["Condition"] == {
        "StringEquals": {"aws:RequestTag/quota-team": "research/generative"},
        "NumericLessThanEquals": {"batch:SchedulingPriority": "50"},
    }
    assert submit["Resource"][:2] == [
        {"Fn::GetAtt": ["TrainingQueueJobQueueBC771182", "JobQueueArn"]},
        {"Fn::GetAtt": ["TrainingQueueJobQueuegenerativeC1F747E4", "QuotaShareArn"]},
    ]


def test_the_quota_share_carries_the_team_tag(research: dict[str, Any]) -> None:
    share = research["Resources"]["TrainingQueueJobQueuegenerativeC1F747E4"]["Properties"]
    assert share["Tags"] == {"quota-team": "research/generative"}


def test_rejects_an_organisation_tag_with_the_reserved_team_key() -> None:
    tagged = Organisation(
        name=RESEARCH.name, queue=RESEARCH.queue, tags={"quota-team": "someone-else"}
    )
    with pytest.raises(QuotaConfigError, match="'quota-team' is reserved"):
        OrganisationStack(make_app(), "Quota-research", organisation=tagged)


# --- the execution role and the bucket --------------------------------------------------------


def test_execution_role_trusts_sagemaker_from_this_account_only(research: dict[str, Any]) -> None:
    role = research["Resources"]["TeamAccessgenerativeExecutionRoleC385546F"]["Properties"]
    assert role["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Condition": {
                "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
                "ArnLike": {
                    "aws:SourceArn": {
                        "Fn::Join": [
                            "",
                            [
                                "arn:",
                                {"Ref": "AWS::Partition"},
                                ":sagemaker:",
                                {"Ref": "AWS::Region"},
                                ":",
                                {"Ref": "AWS::AccountId"},
                                ":*",
                            ],
                        ]
                    }
                },
            },
            "Effect": "Allow",
            "Principal": {"Service": "sagemaker.amazonaws.com"},
        }
    ]


def test_created_bucket_is_encrypted_versioned_private_logged_and_retained(
    research: dict[str, Any],
) -> None:
    bucket = research["Resources"]["TeamAccessgenerativeBucket3E37CC2F"]
    assert bucket["DeletionPolicy"] == "Retain"
    props = bucket["Properties"]
    [encryption] = props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert encryption == {
        "BucketKeyEnabled": True,
        "ServerSideEncryptionByDefault": {
            "KMSMasterKeyID": {"Fn::GetAtt": ["TeamAccessgenerativeBucketKeyC178DAB6", "Arn"]},
            "SSEAlgorithm": "aws:kms",
        },
    }
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["LoggingConfiguration"] == {
        "DestinationBucketName": {"Ref": "AccessLogs8B620ECA"},
        "LogFilePrefix": "research/generative/",
    }
    assert props["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}


def test_created_bucket_expires_old_checkpoints_and_aborts_stale_uploads(
    research: dict[str, Any],
) -> None:
    props = research["Resources"]["TeamAccessgenerativeBucket3E37CC2F"]["Properties"]
    assert props["LifecycleConfiguration"]["Rules"] == [
        {
            "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
            "Id": "AbortIncompleteMultipartUploads",
            "Status": "Enabled",
        },
        {
            "Id": "ExpireOldCheckpointVersions",
            "NoncurrentVersionExpiration": {"NoncurrentDays": 7},
            "Prefix": "checkpoints/",
            "Status": "Enabled",
        },
    ]


def test_created_bucket_denies_requests_without_tls(research: dict[str, Any]) -> None:
    policy = research["Resources"]["TeamAccessgenerativeBucketPolicy26169C1D"]["Properties"]
    [deny] = policy["PolicyDocument"]["Statement"]
    assert deny["Effect"] == "Deny"
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_bucket_key_rotates_and_is_retained(research: dict[str, Any]) -> None:
    key = research["Resources"]["TeamAccessgenerativeBucketKeyC178DAB6"]
    assert key["DeletionPolicy"] == "Retain"
    assert key["Properties"]["EnableKeyRotation"] is True


def test_one_access_log_bucket_per_stack_encrypted_and_private(research: dict[str, Any]) -> None:
    logs = research["Resources"]["AccessLogs8B620ECA"]
    assert len(of_type(research, "AWS::S3::Bucket")) == 3 + 1
    assert logs["DeletionPolicy"] == "Retain"
    [encryption] = logs["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert encryption == {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
    assert logs["Properties"]["VersioningConfiguration"] == {"Status": "Enabled"}


# --- the construct alone ----------------------------------------------------------------------


def test_works_on_an_imported_share_and_tags_its_own_resources() -> None:
    stack, _ = access_stack(max_priority=10)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::IAM::Role", 2)
    template.has_resource_properties(
        "AWS::IAM::ManagedPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Action": "batch:SubmitServiceJob",
                                "Resource": Match.array_with([SHARE_ARN]),
                            }
                        )
                    ]
                )
            }
        },
    )
    template.has_resource_properties(
        "AWS::IAM::Role",
        {"Tags": [{"Key": "quota-team", "Value": "research/generative"}]},
    )


def test_image_repository_arns_narrow_the_image_pull_grant() -> None:
    stack = cdk.Stack(make_app(), "Test")
    repository = "arn:aws:ecr:eu-west-1:123456789012:repository/research/trainer"
    QuotaShareTeamAccess(
        stack,
        "Access",
        quota_share=QuotaShare.from_quota_share_arn(stack, "Share", SHARE_ARN),
        team="research/generative",
        access=TeamAccess(principals=("111122223333",)),
        image_repository_arns=[repository],
    )
    Template.from_stack(stack).has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        {
                            "Action": [
                                "ecr:BatchCheckLayerAvailability",
                                "ecr:BatchGetImage",
                                "ecr:GetDownloadUrlForLayer",
                            ],
                            "Effect": "Allow",
                            "Resource": repository,
                        }
                    ]
                )
            }
        },
    )


def test_warns_when_a_created_bucket_gets_no_access_logs() -> None:
    stack, _ = access_stack()
    Annotations.from_stack(stack).has_warning(
        "/Test/Access", Match.string_like_regexp("teamBucketWithoutAccessLogs")
    )


def test_rejects_every_access_problem_at_once_naming_the_construct() -> None:
    with pytest.raises(QuotaConfigError) as error:
        access_stack(principals=("*", "arn:aws:iam::1:group/x"), max_priority=10_000)
    message = str(error.value)
    assert message.startswith("Test/Access: 3 problems:")
    assert "access.principals[0]" in message
    assert "access.max_priority" in message


def test_rejects_an_empty_team_tag_value() -> None:
    stack = cdk.Stack(make_app(), "Test")
    share = QuotaShare.from_quota_share_arn(stack, "Share", SHARE_ARN)
    with pytest.raises(QuotaConfigError, match=r"Test/Access: team: the team tag's value"):
        QuotaShareTeamAccess(
            stack,
            "Access",
            quota_share=share,
            team="",
            access=TeamAccess(principals=("111122223333",)),
        )


# --- grants -----------------------------------------------------------------------------------


def test_grant_pass_role_to_sagemaker_sets_passed_to_service(stack: cdk.Stack) -> None:
    role = iam.Role(stack, "Submitter", assumed_by=iam.AccountRootPrincipal())
    grants.grant_pass_role_to_sagemaker(role, role_arn="arn:aws:iam::123456789012:role/Exec")
    [policy] = resources(stack, "AWS::IAM::Policy").values()
    assert policy["Properties"]["PolicyDocument"]["Statement"] == [
        {
            "Action": "iam:PassRole",
            "Condition": {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}},
            "Effect": "Allow",
            "Resource": "arn:aws:iam::123456789012:role/Exec",
        }
    ]


def test_policy_grantee_writes_grants_into_the_managed_policy(stack: cdk.Stack) -> None:
    policy = iam.ManagedPolicy(stack, "Team")
    grant = grants.grant_describe_job_queues(grants.policy_grantee(policy))
    assert grant.success
    [managed] = resources(stack, "AWS::IAM::ManagedPolicy").values()
    assert managed["Properties"]["PolicyDocument"]["Statement"] == [
        {"Action": "batch:DescribeJobQueues", "Effect": "Allow", "Resource": "*"}
    ]


def test_grant_team_jobs_without_a_cap_limits_only_by_tag(stack: cdk.Stack) -> None:
    role = iam.Role(stack, "Submitter", assumed_by=iam.AccountRootPrincipal())
    share = QuotaShare.from_quota_share_arn(stack, "Share", SHARE_ARN)
    share.grant_team_jobs(role, team="research/generative")
    [policy] = resources(stack, "AWS::IAM::Policy").values()
    [statement] = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Action"] == ["batch:TerminateServiceJob", "batch:UpdateServiceJob"]
    assert statement["Condition"] == {
        "StringEquals": {"aws:ResourceTag/quota-team": "research/generative"}
    }
