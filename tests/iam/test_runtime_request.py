"""The two halves of team access meet: the exact request the runtime sends, decided by
iam-simulate against a policy that requires the team tag (as the stack's submitter role does).

The runtime renders the ``SubmitServiceJob`` request against the emulator serving
``research.yaml``; its tags and priority become the IAM request context (``aws:RequestTag/<key>``,
``aws:TagKeys``, ``batch:SchedulingPriority``) and its queue and share the resources, so the
test fails if the runtime stops adding the tag, sends another value, or if the policy stops
requiring it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from quota_constructs.commands.demo import emulator_client
from quota_constructs.contracts import TEAM_TAG_KEY, team_tag_value
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime import JobSubmission, QueueClient
from tests.helpers import ORGS_DIR
from tests.iam.simulator import Decision, NamedPolicy, Request, evaluate
from tests.runtime.helpers import training_job

SUBMIT, TAG = "batch:SubmitServiceJob", "batch:TagResource"
PRINCIPAL = "arn:aws:iam::123456789012:role/research-generative-submitter"
JOB = "arn:aws:batch:us-east-1:123456789012:service-job/*"


@pytest.fixture(scope="module")
def client() -> Iterator[QueueClient]:
    with EmulatorServer(org_files=[ORGS_DIR / "research.yaml"], clock="virtual") as emu:
        yield emulator_client(emu, "research")


def team_policy(queue_arn: str, share: str) -> NamedPolicy:
    """Submit into ``share`` only with its team tag (and tag the new job with it only)."""
    team = {"StringEquals": {f"aws:RequestTag/{TEAM_TAG_KEY}": team_tag_value("research", share)}}
    return NamedPolicy(
        "team-submit",
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": SUBMIT,
                    "Resource": [queue_arn, f"{queue_arn}/quota-share/{share}", JOB],
                    "Condition": team,
                },
                {"Effect": "Allow", "Action": TAG, "Resource": JOB, "Condition": team},
            ],
        },
    )


def iam_requests(queue_arn: str, request: Mapping[str, Any]) -> list[Request]:
    """The IAM view of a rendered ``SubmitServiceJob``: the submit on queue, share and job, and
    the dependent ``TagResource`` on the job, with the request's tags and priority as context."""
    tags: Mapping[str, str] = request.get("tags") or {}
    context: dict[str, str | int | list[str]] = {f"aws:RequestTag/{k}": v for k, v in tags.items()}
    context["aws:TagKeys"] = list(tags)
    share = f"{queue_arn}/quota-share/{request['quotaShareName']}"
    submit_context = dict(context)
    if "schedulingPriority" in request:
        submit_context["batch:SchedulingPriority"] = request["schedulingPriority"]
    return [Request(SUBMIT, [queue_arn, share, JOB], submit_context), Request(TAG, JOB, context)]


def decisions(client: QueueClient, request: Mapping[str, Any], share: str) -> list[Decision]:
    queue_arn = client.queue
    return evaluate(PRINCIPAL, [team_policy(queue_arn, share)], iam_requests(queue_arn, request))


def test_the_runtimes_request_is_allowed_by_a_policy_requiring_the_team_tag(
    client: QueueClient,
) -> None:
    submission = JobSubmission("fine-tune", "generative", training_job(), priority=10)

    sent = client.render(submission)

    assert sent["tags"] == {TEAM_TAG_KEY: "research/generative"}
    assert decisions(client, sent, "generative") == [Decision.ALLOWED, Decision.ALLOWED]


def test_the_same_request_without_the_runtimes_tag_is_denied(client: QueueClient) -> None:
    submission = JobSubmission("fine-tune", "generative", training_job(), priority=10)

    untagged = submission.request(client.queue)  # what a client that adds no tag would send

    assert "tags" not in untagged
    assert decisions(client, untagged, "generative") == [Decision.IMPLICITLY_DENIED] * 2


def test_another_shares_request_is_denied_by_the_teams_policy(client: QueueClient) -> None:
    sent = client.render(JobSubmission("elsewhere", "recommendation", training_job()))

    assert sent["tags"] == {TEAM_TAG_KEY: "research/recommendation"}
    assert decisions(client, sent, "generative") == [Decision.IMPLICITLY_DENIED] * 2


def test_user_tags_next_to_the_team_tag_keep_the_request_allowed(client: QueueClient) -> None:
    submission = JobSubmission("tagged", "generative", training_job(), tags={"owner": "ana"})

    sent = client.render(submission)

    assert decisions(client, sent, "generative") == [Decision.ALLOWED, Decision.ALLOWED]
