"""Team access proven offline: each team's synthesized roles, decided by iam-simulate.

One app holds the research organisation (``stacks/orgs/research.yaml``, 3 teams) and a
generated organisation of 20 teams (``tests.constructs.helpers.fleet_organisation``: varied
caps and principals, existing execution roles, prefixes of a shared bucket, a share called
``generative`` like research's), so "another organisation's queue" and "another organisation's
team of the same name" exist. Every check of every team is decided in one Node process; each
test asserts one family of checks over every team (``wrong(family) == []``) and that the family
is not empty.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template
from constructs import IConstruct
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.config import load_organisation
from quota_constructs.contracts import TEAM_TAG_KEY
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import training_job_prefix
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from tests.constructs.helpers import fleet_organisation, make_app
from tests.helpers import ORGS_DIR
from tests.iam import security_review
from tests.iam.simulator import (
    ACCOUNT,
    REGION,
    ROOT,
    Batch,
    Decision,
    Principal,
    Request,
    TemplateResolver,
    evaluate_many,
    role_principal,
)
from tests.runtime.helpers import BUILDER

ALLOWED, DENIED = Decision.ALLOWED, Decision.IMPLICITLY_DENIED
EXCLUDED = Decision.EXPLICITLY_DENIED
"""Another team's execution role, bucket or key: denied by the stack's explicit Deny."""
SUBMIT, TAG = "batch:SubmitServiceJob", "batch:TagResource"
UPDATE, TERMINATE = "batch:UpdateServiceJob", "batch:TerminateServiceJob"
PASS_ROLE = "iam:PassRole"
JOB = f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/7d1f0c52-team-job"
SAGEMAKER = "sagemaker.amazonaws.com"
S3_VIA = f"s3.{REGION}.amazonaws.com"
PRIORITY = "batch:SchedulingPriority"
LOG_GROUP = f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/aws/sagemaker/TrainingJobs"
ATTEMPT = "88b610a69aa8380ca5b0a7aba3f81cb8"
REQUEST_TAG = f"aws:RequestTag/{TEAM_TAG_KEY}"
RESOURCE_TAG = f"aws:ResourceTag/{TEAM_TAG_KEY}"
ORGANISATIONS = (load_organisation(ORGS_DIR / "research.yaml"), fleet_organisation())


@dataclass(frozen=True)
class Team:
    """One team's synthesized identities and resources, resolved for the test account."""

    tag: str
    cap: int | None
    queue: str
    share: str
    other_shares: tuple[str, ...]
    submitter: Principal
    execution_role_arn: str
    execution: Principal | None  # None: an existing role, not in the template
    bucket_arn: str
    prefix: str
    key_arn: str | None
    key_policy: Mapping[str, Any] | None  # the created key's policy (KMS needs it)

    def objects(self, key: str = "checkpoints/step-100.pt") -> str:
        location = f"{self.bucket_arn}/{self.prefix}" if self.prefix else self.bucket_arn
        return f"{location}/{key}"

    @property
    def list_prefix(self) -> str:
        return f"{self.prefix}/" if self.prefix else ""

    @property
    def top(self) -> int:
        """The highest priority the team may set: its cap, or the service's maximum."""
        return 9999 if self.cap is None else self.cap


class Case(NamedTuple):
    """One request of a family and the decision it must get."""

    label: str
    request: Request
    expected: Decision
    resource_policy: Mapping[str, Any] | None = None  # of the resource (a KMS key's policy)


Family = Callable[[Team, list[Team]], Iterable[Case]]
"""The cases of one family for a team, given every other team of both organisations."""


@dataclass(frozen=True)
class Check:
    family: str
    team: Team
    principal: Principal
    case: Case


class World:
    """Every team of both organisations and the decision of every check, from one process."""

    def __init__(self, teams: list[Team]) -> None:
        self.teams = teams
        self.checks = [check for team in teams for check in _checks(team, teams)]
        batches: dict[tuple[str, str], list[Check]] = {}
        for check in self.checks:
            policy = json.dumps(check.case.resource_policy, sort_keys=True)
            batches.setdefault((check.principal.arn, policy), []).append(check)
        answers = evaluate_many(
            [
                Batch(
                    checks[0].principal,
                    [c.case.request for c in checks],
                    checks[0].case.resource_policy,
                )
                for checks in batches.values()
            ]
        )
        self.decisions = {
            id(check): decision
            for checks, decided in zip(batches.values(), answers, strict=True)
            for check, decision in zip(checks, decided, strict=True)
        }

    def wrong(self, family: str) -> list[str]:
        """Checks of ``family`` whose decision is not the expected one (the family is not empty)."""
        checks = [c for c in self.checks if c.family == family]
        assert checks, f"no checks in family {family!r}"
        return [
            f"{c.team.tag}: {c.case.label}: expected {c.case.expected}, got {self.decisions[id(c)]}"
            for c in checks
            if self.decisions[id(c)] != c.case.expected
        ]


def _team(
    stack: OrganisationStack, resolver: TemplateResolver, name: str, shares: dict[str, str]
) -> Team:
    access = stack.team_access[name]

    def value(token: str) -> str:
        return str(resolver.resolve(stack.resolve(token)))

    def logical_id(construct: IConstruct) -> str:
        element = construct.node.default_child
        assert isinstance(element, cdk.CfnElement)
        return str(stack.resolve(stack.get_logical_id(element)))

    created = access.access.creates_execution_role
    key = access.key
    return Team(
        tag=access.team,
        cap=access.access.max_priority,
        queue=value(stack.queue.job_queue_arn),
        share=shares[name],
        other_shares=tuple(arn for share, arn in shares.items() if share != name),
        submitter=role_principal(resolver, logical_id(access.submitter_role)),
        execution_role_arn=value(access.execution_role_arn),
        execution=role_principal(resolver, logical_id(access.execution_role)) if created else None,
        bucket_arn=value(access.bucket.bucket_arn),
        prefix=access.bucket_prefix,
        key_arn=value(key.key_arn) if key is not None else None,
        key_policy=resolver.resource(logical_id(key))["KeyPolicy"] if key is not None else None,
    )


def _teams(stack: OrganisationStack) -> list[Team]:
    resolver = TemplateResolver(Template.from_stack(stack).to_json(), stack_name=stack.stack_name)
    shares = {
        name: str(resolver.resolve(stack.resolve(share.quota_share_arn)))
        for name, share in stack.queue.quota_shares.items()
    }
    return [_team(stack, resolver, name, shares) for name in stack.team_access]


@pytest.fixture(scope="module")
def world() -> World:
    app = make_app()
    stacks = [
        OrganisationStack(app, stack_name_for(organisation), organisation=organisation)
        for organisation in ORGANISATIONS
    ]  # all built before the first synth (Template.from_stack synthesizes the app)
    return World([team for stack in stacks for team in _teams(stack)])


# --- requests ---------------------------------------------------------------------------------

Context = dict[str, str | int | list[str]]


def tags(tag: str) -> Context:
    """A submit's tags: the team tag and one of the team's own (``quota jobs submit --tag``)."""
    return {
        REQUEST_TAG: tag,
        "aws:RequestTag/experiment": "e1",
        "aws:TagKeys": [TEAM_TAG_KEY, "experiment"],
    }


def submit(queue: str, share: str, context: Context) -> Request:
    return Request(SUBMIT, [queue, share, JOB], context)


def job(action: str, context: Context | None = None) -> Request:
    return Request(action, JOB, context or {})


def priority(value: int, context: Context | None = None) -> Context:
    return {**(context or {}), PRIORITY: value}


def parameter(organisation: str, name: str) -> str:
    """The ARN of ``/quota/<organisation>/<name>``."""
    return f"arn:aws:ssm:{REGION}:{ACCOUNT}:parameter/quota/{organisation}/{name}"


def training_stream(tag: str) -> str:
    """The log stream of a job of team ``tag`` as Batch and SageMaker name it."""
    job = f"AWSBatch{training_job_prefix(tag)}job{ATTEMPT}"
    return f"{LOG_GROUP}:log-stream:{job}/algo-1-1764662400"


def pass_role(role_arn: str, service: str = SAGEMAKER) -> Request:
    return Request(PASS_ROLE, role_arn, {"iam:PassedToService": service})


# --- the submitter's families -----------------------------------------------------------------


def own_submit(team: Team, others: list[Team]) -> Iterator[Case]:
    yield Case(
        "at the cap", submit(team.queue, team.share, priority(team.top, tags(team.tag))), ALLOWED
    )
    yield Case("tag on create", Request(TAG, JOB, tags(team.tag)), ALLOWED)


def other_share(team: Team, others: list[Team]) -> Iterator[Case]:
    for share in team.other_shares:
        yield Case(share, submit(team.queue, share, priority(0, tags(team.tag))), DENIED)


def other_queue(team: Team, others: list[Team]) -> Iterator[Case]:
    for other in others:
        if other.queue != team.queue:
            request = submit(other.queue, other.share, priority(0, tags(team.tag)))
            yield Case(other.share, request, DENIED)


def tag_required(team: Team, others: list[Team]) -> Iterator[Case]:
    yield Case("no tags", submit(team.queue, team.share, priority(0)), DENIED)
    own_only: Context = {"aws:RequestTag/experiment": "e1", "aws:TagKeys": ["experiment"]}
    yield Case("other tags only", submit(team.queue, team.share, priority(0, own_only)), DENIED)
    for other in others:
        theirs = priority(0, tags(other.tag))
        yield Case(f"tag {other.tag}", submit(team.queue, team.share, theirs), DENIED)
        yield Case(f"tag on create {other.tag}", Request(TAG, JOB, tags(other.tag)), DENIED)


def no_retag(team: Team, others: list[Team]) -> Iterator[Case]:
    for other in others:
        retag = {**tags(team.tag), RESOURCE_TAG: other.tag}
        yield Case(f"job of {other.tag}", Request(TAG, JOB, retag), DENIED)


def cap_submit(team: Team, others: list[Team]) -> Iterator[Case]:
    if team.cap is not None:
        above = priority(team.cap + 1, tags(team.tag))
        yield Case("cap + 1", submit(team.queue, team.share, above), DENIED)
        yield Case("no priority", submit(team.queue, team.share, tags(team.tag)), DENIED)


def cap_update(team: Team, others: list[Team]) -> Iterator[Case]:
    if team.cap is not None:
        yield Case("cap + 1", job(UPDATE, priority(team.cap + 1, {RESOURCE_TAG: team.tag})), DENIED)


def own_jobs(team: Team, others: list[Team]) -> Iterator[Case]:
    mine: Context = {RESOURCE_TAG: team.tag}
    yield Case("update at the cap", job(UPDATE, priority(team.top, mine)), ALLOWED)
    yield Case("terminate", job(TERMINATE, mine), ALLOWED)


def other_jobs(team: Team, others: list[Team]) -> Iterator[Case]:
    yield Case("update untagged", job(UPDATE, priority(0)), DENIED)
    yield Case("terminate untagged", job(TERMINATE), DENIED)
    for other in others:
        theirs: Context = {RESOURCE_TAG: other.tag}
        yield Case(f"update {other.tag}", job(UPDATE, priority(0, theirs)), DENIED)
        yield Case(f"terminate {other.tag}", job(TERMINATE, theirs), DENIED)


def pass_own(team: Team, others: list[Team]) -> Iterator[Case]:
    yield Case("to sagemaker", pass_role(team.execution_role_arn), ALLOWED)


def pass_own_elsewhere(team: Team, others: list[Team]) -> Iterator[Case]:
    for service in ("ec2.amazonaws.com", "batch.amazonaws.com", "lambda.amazonaws.com"):
        yield Case(service, pass_role(team.execution_role_arn, service), DENIED)


def pass_other(team: Team, others: list[Team]) -> Iterator[Case]:
    for other in others:
        same_stack = other.queue == team.queue
        yield Case(
            other.tag, pass_role(other.execution_role_arn), EXCLUDED if same_stack else DENIED
        )


def read_own(team: Team, others: list[Team]) -> Iterator[Case]:
    yield Case("describe share", Request("batch:DescribeQuotaShare", team.share), ALLOWED)
    yield Case("queue snapshot", Request("batch:GetJobQueueSnapshot", team.queue), ALLOWED)
    yield Case("list shares", Request("batch:ListQuotaShares", team.queue), ALLOWED)


def read_any(team: Team, others: list[Team]) -> Iterator[Case]:
    for action in ("batch:DescribeServiceJob", "batch:ListServiceJobs", "batch:DescribeJobQueues"):
        yield Case(action, Request(action, "*"), ALLOWED)
    organisation = team.tag.split("/")[0]
    for name in ("job-queue/arn", f"quota-shares/{team.tag.split('/')[1]}/submitter-role-arn"):
        yield Case(name, Request("ssm:GetParameter", parameter(organisation, name)), ALLOWED)


def read_other(team: Team, others: list[Team]) -> Iterator[Case]:
    for share in team.other_shares:
        yield Case(share, Request("batch:DescribeQuotaShare", share), DENIED)
    for other in others:
        if other.queue != team.queue:
            yield Case(other.queue, Request("batch:GetJobQueueSnapshot", other.queue), DENIED)
            other_organisation = other.tag.split("/")[0]
            contract = parameter(other_organisation, "job-queue/arn")
            yield Case(contract, Request("ssm:GetParameter", contract), DENIED)
    for secret in ("/quota-secrets/x", "/quota/research-eu/job-queue/arn", "/prod/db/password"):
        arn = f"arn:aws:ssm:{REGION}:{ACCOUNT}:parameter{secret}"
        yield Case(secret, Request("ssm:GetParameter", arn), DENIED)


# --- the execution role's families ------------------------------------------------------------


def bucket_own(team: Team, others: list[Team]) -> Iterator[Case]:
    for action in ("s3:GetObject", "s3:PutObject", "s3:DeleteObject"):
        yield Case(action, Request(action, team.objects()), ALLOWED)
    listing = {"s3:prefix": f"{team.list_prefix}checkpoints/"}
    yield Case("list", Request("s3:ListBucket", team.bucket_arn, listing), ALLOWED)
    if team.key_arn is not None:
        for action in ("kms:Decrypt", "kms:GenerateDataKey"):
            request = Request(action, team.key_arn, {"kms:ViaService": S3_VIA})
            yield Case(action, request, ALLOWED, team.key_policy)


def bucket_other(team: Team, others: list[Team]) -> Iterator[Case]:
    if team.key_arn is not None:
        not_s3 = {"kms:ViaService": f"ec2.{REGION}.amazonaws.com"}
        request = Request("kms:Decrypt", team.key_arn, not_s3)
        yield Case("own key not via S3", request, DENIED, team.key_policy)
    if team.prefix:
        outside = f"{team.bucket_arn}/checkpoints/step-100.pt"
        yield Case("object outside the prefix", Request("s3:GetObject", outside), DENIED)
        yield Case("list the whole bucket", Request("s3:ListBucket", team.bucket_arn), DENIED)
    for other in others:
        excluded = EXCLUDED if other.queue == team.queue else DENIED
        for action in ("s3:GetObject", "s3:PutObject"):
            yield Case(f"{action} {other.tag}", Request(action, other.objects()), excluded)
        theirs = {"s3:prefix": f"{other.list_prefix}checkpoints/"}
        listed = excluded if not other.prefix else DENIED  # a prefix's bucket is shared
        yield Case(f"list {other.tag}", Request("s3:ListBucket", other.bucket_arn, theirs), listed)
        if other.key_arn is not None:
            request = Request("kms:Decrypt", other.key_arn, {"kms:ViaService": S3_VIA})
            yield Case(f"key of {other.tag}", request, excluded, other.key_policy)


def runtime(team: Team, others: list[Team]) -> Iterator[Case]:
    repository = f"arn:aws:ecr:{REGION}:{ACCOUNT}:repository/training/pytorch"
    yield Case("ecr login", Request("ecr:GetAuthorizationToken", "*"), ALLOWED)
    yield Case("pull", Request("ecr:BatchGetImage", repository), ALLOWED)
    for action in ("logs:CreateLogStream", "logs:PutLogEvents"):
        yield Case(action, Request(action, training_stream(team.tag)), ALLOWED)
    metrics = {"cloudwatch:namespace": "/aws/sagemaker/TrainingJobs"}
    yield Case("metrics", Request("cloudwatch:PutMetricData", "*", metrics), ALLOWED)


def runtime_limits(team: Team, others: list[Team]) -> Iterator[Case]:
    elsewhere = f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/other:log-stream:x"
    yield Case("other log group", Request("logs:PutLogEvents", elsewhere), DENIED)
    unprefixed = f"{LOG_GROUP}:log-stream:AWSBatchjob{ATTEMPT}/algo-1"
    yield Case("unprefixed job", Request("logs:PutLogEvents", unprefixed), DENIED)
    for other in others:  # both organisations: the log group is one per account and region
        request = Request("logs:PutLogEvents", training_stream(other.tag))
        yield Case(f"stream of {other.tag}", request, DENIED)
    billing = {"cloudwatch:namespace": "Custom/Billing"}
    yield Case("other namespace", Request("cloudwatch:PutMetricData", "*", billing), DENIED)
    foreign = f"arn:aws:ecr:{REGION}:999999999999:repository/training/pytorch"
    yield Case("another account's repository", Request("ecr:BatchGetImage", foreign), DENIED)


SUBMITTER_FAMILIES: dict[str, Family] = {
    "own-submit": own_submit,
    "other-share": other_share,
    "other-queue": other_queue,
    "tag-required": tag_required,
    "no-retag": no_retag,
    "cap-submit": cap_submit,
    "cap-update": cap_update,
    "own-jobs": own_jobs,
    "other-jobs": other_jobs,
    "pass-own": pass_own,
    "pass-own-elsewhere": pass_own_elsewhere,
    "pass-other": pass_other,
    "read-own": read_own,
    "read-any": read_any,
    "read-other": read_other,
}
EXECUTION_FAMILIES: dict[str, Family] = {
    "bucket-own": bucket_own,
    "bucket-other": bucket_other,
    "runtime": runtime,
    "runtime-limits": runtime_limits,
}


def _checks(team: Team, teams: list[Team]) -> Iterator[Check]:
    others = [other for other in teams if other is not team]
    for family, cases in SUBMITTER_FAMILIES.items():
        yield from (Check(family, team, team.submitter, case) for case in cases(team, others))
    if team.execution is not None:
        role = team.execution
        for family, cases in EXECUTION_FAMILIES.items():
            yield from (Check(family, team, role, case) for case in cases(team, others))


# --- submitter role ---------------------------------------------------------------------------


def test_the_app_holds_both_organisations_teams(world: World) -> None:
    assert len(world.teams) == 23
    assert {t.tag for t in world.teams} >= {"research/generative", "fleet/generative"}
    assert sum(t.execution is None for t in world.teams) == 2
    assert sum(bool(t.prefix) for t in world.teams) == 3


def test_each_team_may_submit_into_its_own_share_with_its_tag_up_to_its_cap(world: World) -> None:
    assert world.wrong("own-submit") == []


def test_each_team_is_denied_every_other_share_of_its_queue(world: World) -> None:
    assert world.wrong("other-share") == []


def test_each_team_is_denied_every_share_of_the_other_organisations_queue(world: World) -> None:
    assert world.wrong("other-queue") == []


def test_each_team_is_denied_a_submit_without_its_tag_or_with_another_teams(world: World) -> None:
    assert world.wrong("tag-required") == []


def test_each_team_cannot_retag_another_teams_job_as_its_own(world: World) -> None:
    assert world.wrong("no-retag") == []


def test_each_capped_team_is_denied_a_priority_above_its_cap_on_submit(world: World) -> None:
    assert world.wrong("cap-submit") == []


def test_each_capped_team_is_denied_a_priority_above_its_cap_on_update(world: World) -> None:
    assert world.wrong("cap-update") == []


def test_each_team_may_update_and_terminate_its_own_tagged_jobs(world: World) -> None:
    assert world.wrong("own-jobs") == []


def test_each_team_is_denied_update_and_terminate_of_other_and_untagged_jobs(
    world: World,
) -> None:
    assert world.wrong("other-jobs") == []


def test_each_team_may_pass_its_own_execution_role_to_sagemaker(world: World) -> None:
    assert world.wrong("pass-own") == []


def test_each_team_is_denied_passing_its_role_to_another_service(world: World) -> None:
    assert world.wrong("pass-own-elsewhere") == []


def test_each_team_is_denied_passing_another_teams_execution_role(world: World) -> None:
    assert world.wrong("pass-other") == []


def test_each_team_may_watch_its_own_share_and_queue(world: World) -> None:
    assert world.wrong("read-own") == []


def test_each_team_may_read_every_job_the_queues_and_its_organisations_contract(
    world: World,
) -> None:
    assert world.wrong("read-any") == []


def test_each_team_is_denied_other_shares_queues_and_other_parameters(world: World) -> None:
    assert world.wrong("read-other") == []


# --- execution role ---------------------------------------------------------------------------


def test_each_execution_role_may_read_and_write_its_bucket_or_prefix(world: World) -> None:
    assert world.wrong("bucket-own") == []


def test_each_execution_role_is_denied_other_teams_buckets_prefixes_and_keys(
    world: World,
) -> None:
    assert world.wrong("bucket-other") == []


def test_each_execution_role_may_pull_images_and_write_training_logs_and_metrics(
    world: World,
) -> None:
    assert world.wrong("runtime") == []


def test_each_execution_role_logs_and_metrics_are_limited(world: World) -> None:
    assert world.wrong("runtime-limits") == []


# --- the security review's table names real tests ---------------------------------------------


def test_every_test_named_in_the_security_review_exists() -> None:
    """docs/security.md's "Security review" table, as tools/gen_doc_tables.py writes it."""
    named = {
        tuple(test.split("::"))
        for role in security_review.ROLES
        for line in role.lines
        for test in line.tests
    }
    assert len(named) >= 20
    missing = [
        f"{path}::{name}"
        for path, name in sorted(named)
        if not re.search(rf"^def {name}\(", (ROOT / path).read_text(), re.MULTILINE)
    ]
    assert missing == []


# --- the what-if's never for a priority above the cap, against the role (issue 44) ---------
# The what-if's ``never`` for a priority above the team's cap, proven against the team's role.
#
# The emulator does not enforce IAM, so the answer is checked where the cap lives: research's
# ``generative`` team (``access.max_priority: 50``) gets its submitter role synthesized by the
# organisation stack (the team-access constructs), and the exact request ``quota jobs submit
# --dry-run`` prints is decided by iam-simulate against that role; the same command with
# ``--what-if --org-file`` over HTTP against the emulator must say ``never`` (exit 1) exactly for
# the requests the role denies.

ORG_FILE = ORGS_DIR / "research.yaml"
SHARE, CAP = "generative", 50


@pytest.fixture(scope="module")
def team() -> Team:
    """The generative team's synthesized submitter role and resources (resolved)."""
    organisation = load_organisation(ORG_FILE)
    stack = OrganisationStack(make_app(), stack_name_for(organisation), organisation=organisation)
    [found] = [t for t in _teams(stack) if t.share.endswith(f"/quota-share/{SHARE}")]
    assert found.cap == CAP  # the organisation file's cap is the role's
    Template.from_stack(stack)  # synthesized (the fixture's cost is paid once)
    return found


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer(org_files=[ORG_FILE], clock="virtual") as emu:
        yield emu


def quota_submit(emu: EmulatorServer, *args: str) -> tuple[int, str, str]:
    """``quota jobs submit probe --share generative BUILDER... ARGS`` against the emulator."""
    base = ["jobs", "--endpoint-url", emu.endpoint_url, "--organisation", "research"]
    command = [*base, "submit", "probe", "--share", SHARE, *BUILDER, *args]
    result = CliRunner().invoke(app, command, env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def as_iam(team: Team, request: Mapping[str, Any]) -> list[Request]:
    """The IAM view of a printed ``SubmitServiceJob`` request, on the team's synthesized queue
    and share: the submit with its tags and priority as context, and the dependent tagging."""
    tags: Mapping[str, str] = request.get("tags") or {}
    context: dict[str, str | int | list[str]] = {f"aws:RequestTag/{k}": v for k, v in tags.items()}
    context["aws:TagKeys"] = list(tags)
    submit_context = dict(context)
    if "schedulingPriority" in request:
        submit_context[PRIORITY] = request["schedulingPriority"]
    assert request["quotaShareName"] == SHARE
    return [
        Request(SUBMIT, [team.queue, team.share, JOB], submit_context),
        Request(TAG, JOB, context),
    ]


@pytest.mark.parametrize(
    ("priority", "allowed"),
    [(["--priority", str(CAP)], True), (["--priority", str(CAP + 1)], False), ([], True)],
    ids=["at the cap", "cap + 1", "no priority (the runtime sends 0)"],
)
def test_what_if_says_never_exactly_when_the_teams_role_denies_the_request(
    team: Team, emulator: EmulatorServer, priority: list[str], allowed: bool
) -> None:
    code, out, err = quota_submit(emulator, *priority, "--dry-run")
    assert code == 0, err
    request = json.loads(out)
    submit, tag = team.submitter.evaluate(as_iam(team, request))
    assert tag is Decision.ALLOWED  # the team tag is the team's: only the priority decides
    assert (submit is Decision.ALLOWED) is allowed
    code, out, err = quota_submit(emulator, *priority, "--what-if", "--org-file", str(ORG_FILE))
    answer = json.loads(quota_submit(
        emulator, *priority, "--what-if", "--org-file", str(ORG_FILE), "--json"
    )[1])  # fmt: skip
    if allowed:
        assert (code, answer["outcome"]) == (0, "starts_now"), err
    else:
        assert (code, answer["outcome"]) == (1, "never"), err
        assert f"team {SHARE}'s" in answer["reason"] and f"cap of {CAP}" in answer["reason"]
        assert "the submit would be denied" in answer["reason"]
        assert out.startswith("never: ")


def test_without_the_organisation_file_the_cap_is_unknown_and_not_claimed(
    emulator: EmulatorServer,
) -> None:
    code, out, err = quota_submit(emulator, "--priority", str(CAP + 1), "--what-if", "--json")
    assert (code, json.loads(out)["outcome"]) == (0, "starts_now"), err
