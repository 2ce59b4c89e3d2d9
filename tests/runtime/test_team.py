"""Team access in the runtime, against the emulator over HTTP: the team tag on every submit,
and acting as a team by assuming its submitter role (``QueueClient.for_team``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.credentials import RefreshableCredentials
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.commands.demo import emulator_client
from quota_constructs.contracts import TEAM_TAG_KEY, submitter_role_arn_parameter
from quota_constructs.local.testing import DUMMY_CREDENTIALS, EmulatorServer
from quota_constructs.model import QuotaConfigError
from quota_constructs.runtime import JobSubmission, QueueClient, client_token
from quota_constructs.runtime.team import assumed_role_session, default_session_name
from tests.helpers import ORGS_DIR
from tests.runtime.helpers import FAST_RETRIES, training_job, write_org

RESEARCH = ORGS_DIR / "research.yaml"
TEAM = "research/generative"
SUBMITTER = "arn:aws:iam::123456789012:role/research-generative-submitter"
SESSIONS = "arn:aws:sts::123456789012:assumed-role/research-generative-submitter/"
ALICE = SESSIONS + "quota-alice"


@pytest.fixture
def research() -> Iterator[EmulatorServer]:
    with EmulatorServer(org_files=[RESEARCH], clock="virtual") as server:
        yield server


@pytest.fixture
def admin(research: EmulatorServer) -> QueueClient:
    """A client with the caller's own (dummy) credentials: no team role."""
    return emulator_client(research, "research", retry=FAST_RETRIES)


def caller_session(emu: EmulatorServer) -> boto3.Session:
    return boto3.Session(region_name=emu.emulator.account.region, **DUMMY_CREDENTIALS)


def team_client(emu: EmulatorServer, share: str = "generative", **kwargs: Any) -> QueueClient:
    return QueueClient.for_team(
        "research",
        share,
        session=caller_session(emu),
        endpoint_url=emu.endpoint_url,
        session_name="quota-alice",
        retry=FAST_RETRIES,
        **kwargs,
    )


# --- the team tag -------------------------------------------------------------------------------


def test_submit_adds_the_share_team_tag_visible_on_the_job(
    admin: QueueClient, research: EmulatorServer
) -> None:
    job = admin.submit("tagged", "generative", training_job(), tags={"owner": "ana"})

    assert job.describe().tags == {TEAM_TAG_KEY: TEAM, "owner": "ana"}
    listed = research.client("batch").list_tags_for_resource(resourceArn=job.job_arn)["tags"]
    assert listed == {TEAM_TAG_KEY: TEAM, "owner": "ana"}


def test_submit_into_a_share_without_a_team_tag_adds_nothing(client: QueueClient) -> None:
    job = client.submit("plain", "QS1", training_job(), tags={"owner": "ana"})

    assert job.describe().tags == {"owner": "ana"}
    assert "tags" not in client.render(JobSubmission("plain-2", "QS1", training_job()))


def test_rejects_a_conflicting_team_tag_naming_both_values_and_the_fix(
    admin: QueueClient, research: EmulatorServer
) -> None:
    with pytest.raises(QuotaConfigError) as raised:
        admin.submit("other", "generative", training_job(), tags={TEAM_TAG_KEY: "research/x"})

    message = str(raised.value)
    assert "tags.quota-team" in message
    assert "research/x" in message and "quota-team=research/generative" in message
    assert "drop the quota-team tag" in message
    assert "SubmitServiceJob" not in research.request_counts


def test_rejects_the_team_tag_key_in_another_letter_case(admin: QueueClient) -> None:
    with pytest.raises(QuotaConfigError, match=r"tags\.Quota-Team.*drop the Quota-Team tag"):
        admin.render(JobSubmission("case", "generative", training_job(), tags={"Quota-Team": TEAM}))


def test_accepts_the_team_tag_given_by_hand_as_the_same_request(admin: QueueClient) -> None:
    plain = admin.render(JobSubmission("same", "generative", training_job()))
    by_hand = admin.render(
        JobSubmission("same", "generative", training_job(), tags={TEAM_TAG_KEY: TEAM})
    )

    assert plain == by_hand
    assert plain["tags"] == {TEAM_TAG_KEY: TEAM}


def test_client_token_covers_the_team_tag(admin: QueueClient) -> None:
    submission = JobSubmission("token", "generative", training_job())
    request = admin.render(submission)

    sent = json.loads(request["serviceRequestPayload"])  # the training job is tagged too
    assert request["clientToken"] == client_token("token", sent, {TEAM_TAG_KEY: TEAM}, "generative")
    assert request["clientToken"] != submission.token  # the token of the untagged request


def test_the_training_job_carries_the_team_tag_for_cost_allocation(admin: QueueClient) -> None:
    payload = {**training_job().payload("tagged"), "Tags": [{"Key": "project", "Value": "x"}]}
    request = admin.render(JobSubmission("tagged", "generative", payload))
    sent = json.loads(request["serviceRequestPayload"])
    assert sent["Tags"] == [
        {"Key": "project", "Value": "x"},
        {"Key": TEAM_TAG_KEY, "Value": TEAM},
    ]
    assert request["tags"] == {TEAM_TAG_KEY: TEAM}  # and the service job


def test_repeated_submit_of_a_team_job_is_idempotent(admin: QueueClient) -> None:
    first = admin.submit("again", "generative", training_job())
    second = admin.submit("again", "generative", training_job())

    assert first.job_id == second.job_id


def test_submit_many_tags_every_job(admin: QueueClient) -> None:
    outcomes = admin.submit_many(
        JobSubmission(f"many-{i}", "generative", training_job()) for i in range(3)
    )

    assert all(o.ok for o in outcomes)
    assert {admin.describe(o.job_id or "").tags[TEAM_TAG_KEY] for o in outcomes} == {TEAM}


def test_team_tags_are_read_once_per_share_until_refreshed(
    admin: QueueClient, research: EmulatorServer
) -> None:
    admin.render(JobSubmission("a", "generative", training_job()))
    admin.render(JobSubmission("b", "generative", training_job()))
    assert research.request_counts.get("DescribeQuotaShare") == 1

    admin.refresh()
    admin.render(JobSubmission("c", "generative", training_job()))
    assert research.request_counts.get("DescribeQuotaShare") == 2


# --- acting as a team ---------------------------------------------------------------------------


def test_for_team_submits_as_the_assumed_submitter_role(research: EmulatorServer) -> None:
    team = team_client(research)
    job = team.submit("as-team", "generative", training_job())

    assert team.queue == research.queue_arn("research")
    assert research.explain(job.job_id)["submittedBy"] == ALICE
    batch_calls = research.callers[ALICE]
    assert batch_calls["SubmitServiceJob"] == 1 and batch_calls["DescribeQuotaShare"] == 1
    root_calls = research.callers["arn:aws:iam::123456789012:root"]
    assert set(root_calls) == {"GetParameters", "AssumeRole"}  # nothing of Batch


def test_a_job_submitted_without_a_role_names_the_root_user(
    admin: QueueClient, research: EmulatorServer
) -> None:
    job = admin.submit("as-admin", "generative", training_job())

    assert research.explain(job.job_id)["submittedBy"] == "arn:aws:iam::123456789012:root"


def test_for_team_refuses_another_share_before_sending(research: EmulatorServer) -> None:
    team = team_client(research)

    with pytest.raises(QuotaConfigError, match=r"quotaShareName.*may submit only into generative"):
        team.submit("elsewhere", "recommendation", training_job())
    assert "SubmitServiceJob" not in research.request_counts


def test_for_team_rejects_a_share_without_access(tmp_path: Path) -> None:
    org = write_org(
        tmp_path,
        "labs",
        "- name: open\n  capacity: {ml.g5.xlarge: 1}\n  strategy: LEND\n"
        "- name: team\n  capacity: {ml.g5.xlarge: 1}\n  strategy: LEND\n"
        "  access: {principals: ['111122223333']}\n",
    )
    with EmulatorServer(org_files=[org]) as emu, pytest.raises(QuotaConfigError) as raised:
        QueueClient.for_team(
            "labs", "open", session=caller_session(emu), endpoint_url=emu.endpoint_url
        )

    (problem,) = raised.value.problems
    assert problem.value == "open"
    assert "quota share open of organisation labs has no team access" in problem.message
    assert "/quota/labs/quota-shares/open/submitter-role-arn" in problem.message
    assert problem.fix.startswith("add an access block to the share")
    assert "deploy" in problem.fix


def test_for_team_rejects_an_unknown_share_listing_the_shares(research: EmulatorServer) -> None:
    with pytest.raises(QuotaConfigError) as raised:
        team_client(research, share="vision")

    (problem,) = raised.value.problems
    assert problem.value == "vision"
    assert "no quota share of that name" in problem.message
    assert "shares: data-analysis, generative, recommendation" in problem.message


def test_for_team_rejects_an_undeployed_organisation(research: EmulatorServer) -> None:
    with pytest.raises(QuotaConfigError, match=r"/quota/nope/job-queue/arn.*not deployed"):
        QueueClient.for_team(
            "nope",
            "generative",
            session=caller_session(research),
            endpoint_url=research.endpoint_url,
        )


def test_for_team_reports_a_role_that_cannot_be_assumed(research: EmulatorServer) -> None:
    stranger = "arn:aws:iam::123456789012:role/not-a-team"
    name = submitter_role_arn_parameter("research", "generative")
    research.emulator.parameters.put(name, stranger, epoch=0.0)

    with pytest.raises(QuotaConfigError) as raised:
        team_client(research)

    (problem,) = raised.value.problems
    assert f"cannot assume the team's submitter role {stranger}" in problem.message
    assert "AccessDenied" in problem.message and "access.principals" in problem.fix


def test_assumed_credentials_are_renewed_before_they_expire(research: EmulatorServer) -> None:
    class FifteenMinuteSessions:
        """The emulator's STS, asking for AssumeRole's shortest session (900 s): inside
        botocore's 15-minute advisory window, so every use renews the credentials."""

        def __init__(self, sts: Any) -> None:
            self.sts = sts

        def assume_role(self, **params: Any) -> Any:
            return self.sts.assume_role(DurationSeconds=900, **params)

    session = assumed_role_session(
        FifteenMinuteSessions(research.client("sts")),
        SUBMITTER,
        "quota-renew",
        region="us-east-1",
    )
    credentials = session.get_credentials()
    first = credentials.get_frozen_credentials().access_key
    assert isinstance(credentials, RefreshableCredentials)
    assert credentials.get_frozen_credentials().access_key != first
    assert research.callers["arn:aws:iam::123456789012:root"]["AssumeRole"] >= 2


def test_default_session_name_is_quota_and_a_valid_login_name() -> None:
    assert default_session_name("alice") == "quota-alice"
    assert default_session_name("ana maria/x") == "quota-ana-maria-x"
    assert len(default_session_name("a" * 100)) == 64


# --- quota jobs --as-team -----------------------------------------------------------------------

runner = CliRunner()


def quota_jobs(emu: EmulatorServer, *args: str) -> tuple[int, str]:
    result = runner.invoke(
        app, ["jobs", "--endpoint-url", emu.endpoint_url, *args], env={"COLUMNS": "300"}
    )
    return result.exit_code, result.stdout + result.stderr


def test_cli_as_team_updates_and_terminates_as_the_role(
    research: EmulatorServer, tmp_path: Path
) -> None:
    payload = tmp_path / "job.json"
    payload.write_text(json.dumps(training_job().payload("cli-team")))
    team = ("-o", "research", "--as-team", "generative")

    code, out = quota_jobs(research, *team, "submit", "cli-team", "--payload", str(payload))
    assert code == 0, out
    job_id = out.split()[-1]
    assert quota_jobs(research, *team, "update", job_id, "--priority", "5")[0] == 0
    assert quota_jobs(research, *team, "terminate", job_id)[0] == 0

    (caller,) = [c for c in research.callers if ":assumed-role/" in c]
    assert caller.startswith(SESSIONS)
    calls = research.callers[caller]
    assert {"SubmitServiceJob", "UpdateServiceJob", "TerminateServiceJobs"} <= set(calls)
    assert research.explain(job_id)["submittedBy"] == caller


def test_cli_as_team_needs_the_organisation_not_a_queue(research: EmulatorServer) -> None:
    code, out = quota_jobs(research, "--queue", "research-queue", "--as-team", "generative", "ls")

    assert code == 2
    assert "--as-team generative finds the team's role by organisation" in out
    assert "AssumeRole" not in research.request_counts


def test_cli_as_team_for_a_share_without_access_is_one_line(tmp_path: Path) -> None:
    org = write_org(
        tmp_path,
        "labs",
        "- name: open\n  capacity: {ml.g5.xlarge: 1}\n  strategy: LEND\n",
    )
    with EmulatorServer(org_files=[org]) as emu:
        code, out = quota_jobs(emu, "-o", "labs", "--as-team", "open", "ls")

    assert code == 2
    assert out.count("\n") == 1 and out.startswith("error: share: quota share open of")
    assert "has no team access" in out and "add an access block to the share" in out


def test_submit_into_a_team_share_sends_priority_zero_when_none_is_given(
    admin: QueueClient,
) -> None:
    request = admin.render(JobSubmission("capped", "generative", training_job()))

    assert request["schedulingPriority"] == 0
    job = admin.submit("capped", "generative", training_job())
    assert job.describe().priority == 0


def test_submit_into_a_team_share_keeps_the_given_priority(admin: QueueClient) -> None:
    request = admin.render(JobSubmission("urgent", "generative", training_job(), priority=40))

    assert request["schedulingPriority"] == 40
