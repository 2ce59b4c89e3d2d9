"""Preemption notifications: the rule, the encrypted topic, its policies, subscribers, DLQ."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from quota_constructs.config import load_organisation
from quota_constructs.constructs import QueueNotifications
from quota_constructs.constructs.notifications import notification_pattern, share_filter_policy
from quota_constructs.model import Subscribers
from quota_constructs.stacks.organisation_stack import OrganisationStack
from tests.constructs.helpers import make_app, resources
from tests.helpers import ORGS_DIR

QUEUE_ARN = "arn:aws:batch:eu-west-1:111122223333:job-queue/q"
ORG = Subscribers(
    email=("ml-platform@example.com",),
    sqs=("arn:aws:sqs:eu-west-1:111122223333:quota-events",),
)
TEAM = Subscribers(https=("https://hooks.example.com/qs1",))


@pytest.fixture
def template(stack: cdk.Stack) -> Template:
    QueueNotifications(
        stack,
        "Notifications",
        job_queue_arn=QUEUE_ARN,
        subscribers=ORG,
        share_subscribers={"QS1": TEAM, "QS2": Subscribers()},
    )
    return Template.from_stack(stack)


def only(template: Template, resource_type: str) -> dict[str, Any]:
    found = template.find_resources(resource_type)
    assert len(found) == 1, resource_type
    return dict(next(iter(found.values()))["Properties"])


def test_one_rule_matches_preemptions_and_this_queues_failed_jobs(template: Template) -> None:
    rule = only(template, "AWS::Events::Rule")
    assert rule["EventPattern"] == notification_pattern(QUEUE_ARN)
    assert rule["EventPattern"]["$or"][1] == {
        "detail-type": ["Batch Service Job State Change"],
        "detail": {"status": ["FAILED"], "jobQueue": [QUEUE_ARN]},
    }
    [target] = rule["Targets"]
    assert target["Arn"]["Ref"].startswith("NotificationsTopic")
    assert "DeadLetterConfig" in target


def test_topic_is_encrypted_with_a_rotated_key_eventbridge_may_use(template: Template) -> None:
    topic = only(template, "AWS::SNS::Topic")
    assert topic["KmsMasterKeyId"]["Fn::GetAtt"][0].startswith("NotificationsKey")
    key = only(template, "AWS::KMS::Key")
    assert key["EnableKeyRotation"] is True
    events_statement = next(
        s
        for s in key["KeyPolicy"]["Statement"]
        if s["Principal"] == {"Service": "events.amazonaws.com"}
    )
    assert events_statement["Action"] == ["kms:Decrypt", "kms:GenerateDataKey*"]


def test_only_the_rule_publishes_and_only_over_ssl(template: Template) -> None:
    statements = only(template, "AWS::SNS::TopicPolicy")["PolicyDocument"]["Statement"]
    deny, allow = statements
    assert deny["Effect"] == "Deny"
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert allow["Principal"] == {"Service": "events.amazonaws.com"}
    assert allow["Action"] == "sns:Publish"
    rule_id = next(iter(template.find_resources("AWS::Events::Rule")))
    assert allow["Condition"] == {
        "ArnEquals": {"aws:SourceArn": {"Fn::GetAtt": [rule_id, "Arn"]}},
        "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
    }


def test_organisation_subscribers_get_everything_and_a_share_its_own(template: Template) -> None:
    found = template.find_resources("AWS::SNS::Subscription").values()
    subscriptions = [s["Properties"] for s in found]
    by_endpoint = {s["Endpoint"]: s for s in subscriptions}
    assert sorted((s["Protocol"], s["Endpoint"]) for s in subscriptions) == [
        ("email", "ml-platform@example.com"),
        ("https", "https://hooks.example.com/qs1"),
        ("sqs", "arn:aws:sqs:eu-west-1:111122223333:quota-events"),
    ]
    assert "FilterPolicy" not in by_endpoint["ml-platform@example.com"]
    team = by_endpoint["https://hooks.example.com/qs1"]
    assert team["FilterPolicy"] == share_filter_policy("QS1")
    assert team["FilterPolicyScope"] == "MessageBody"
    for subscription in subscriptions:
        target = subscription["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
        assert target.startswith("NotificationsDeadLetterQueue")


def test_dead_letter_queue_is_encrypted_ssl_only_and_open_to_rule_and_topic(
    template: Template,
) -> None:
    queue = only(template, "AWS::SQS::Queue")
    assert queue["SqsManagedSseEnabled"] is True
    statements = only(template, "AWS::SQS::QueuePolicy")["PolicyDocument"]["Statement"]
    assert statements[0]["Effect"] == "Deny"
    assert statements[0]["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    senders = {s["Principal"]["Service"]: s["Condition"]["ArnEquals"] for s in statements[1:]}
    assert set(senders) == {"events.amazonaws.com", "sns.amazonaws.com"}


def test_subscription_ids_follow_the_endpoint_not_its_position(stack: cdk.Stack) -> None:
    both = QueueNotifications(
        stack,
        "A",
        job_queue_arn=QUEUE_ARN,
        subscribers=Subscribers(email=("a@example.com", "b@example.com")),
    )
    one = QueueNotifications(
        stack, "B", job_queue_arn=QUEUE_ARN, subscribers=Subscribers(email=("b@example.com",))
    )
    key = "/email:b@example.com"
    assert both.subscriptions[key].node.id == one.subscriptions[key].node.id


def test_the_organisation_file_names_the_subscribers() -> None:
    seed = load_organisation(ORGS_DIR / "seed-demo.yaml")
    stack = OrganisationStack(make_app(), "Quota-seed-demo", organisation=seed)
    assert seed.notifications.email == ("ml-platform@example.com",)
    subscriptions = resources(stack, "AWS::SNS::Subscription")
    endpoints = {s["Properties"]["Endpoint"] for s in subscriptions.values()}
    assert endpoints == {"ml-platform@example.com", "https://hooks.example.com/quota/qs1"}
    outputs = Template.from_stack(stack).find_outputs("NotificationTopicArn")
    assert len(outputs) == 1
