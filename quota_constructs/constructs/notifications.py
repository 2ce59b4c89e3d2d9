"""Owns preemption notifications: one EventBridge rule per queue, encrypted SNS topic, subscribers.

The rule matches AWS Batch's ``Batch Service Job Preemption Started`` and ``... Completed``
events and this queue's ``Batch Service Job State Change`` to ``FAILED``. AWS's preemption events
carry neither the queue nor the share (only the job ARN, in ``resources`` and
``detail.preemptedJobArn``), so they cannot be narrowed to this queue: every organisation's rule in
one account and region receives them. A share's own subscribers get, through an SNS payload filter
policy, the events whose ``detail.quotaShareName`` names their share and the events that name no
share at all (the preemption events). See docs/notifications.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from quota_constructs.model import Subscribers

SOURCE = "aws.batch"
PREEMPTION_STARTED = "Batch Service Job Preemption Started"
PREEMPTION_COMPLETED = "Batch Service Job Preemption Completed"
STATE_CHANGE = "Batch Service Job State Change"
NOTIFIED_DETAIL_TYPES = (PREEMPTION_STARTED, PREEMPTION_COMPLETED, STATE_CHANGE)
SHARE_FIELD = "quotaShareName"
"""The event detail field naming a job's quota share (on state changes; not on preemptions)."""
DEAD_LETTER_RETENTION = cdk.Duration.days(14)
RETRY_ATTEMPTS = 185
"""EventBridge retries to SNS (its maximum); then the event goes to the dead-letter queue."""


def notification_pattern(job_queue_arn: str) -> dict[str, Any]:
    """The rule's event pattern: every preemption event, and this queue's FAILED state changes."""
    return {
        "source": [SOURCE],
        "$or": [
            {"detail-type": [PREEMPTION_STARTED, PREEMPTION_COMPLETED]},
            {
                "detail-type": [STATE_CHANGE],
                "detail": {"status": ["FAILED"], "jobQueue": [job_queue_arn]},
            },
        ],
    }


def share_filter_policy(share_name: str) -> dict[str, Any]:
    """SNS payload filter of a share's subscribers: its jobs' events and events naming no share."""
    return {
        "$or": [
            {"detail": {SHARE_FIELD: [share_name]}},
            {"detail": {SHARE_FIELD: [{"exists": False}]}},
        ]
    }


class QueueNotifications(Construct):
    """Preemption and FAILED-job notifications of one quota-managed job queue.

    Children: ``Key`` (customer KMS key of the topic, rotation on, usable by EventBridge),
    ``Topic`` (SNS, SSL-only; only EventBridge may publish, and only for ``Rule``),
    ``Rule`` (the EventBridge rule, primary child), ``DeadLetterQueue`` (SQS, SSE-SQS, SSL-only:
    events EventBridge could not deliver and messages SNS could not deliver), ``Subscribers``
    (``subscribers``, every event) and ``ShareSubscribers/<share>`` (``share_subscribers``,
    filtered by share). Subscription ids come from the endpoint, so removing one endpoint
    leaves the others' subscriptions (and their confirmations) in place.

    :param job_queue_arn: the queue whose FAILED jobs are reported.
    :param subscribers: who hears of everything the rule matches; default nobody.
    :param share_subscribers: share name -> who hears of that share's jobs; default none.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        job_queue_arn: str,
        subscribers: Subscribers | None = None,
        share_subscribers: Mapping[str, Subscribers] | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(
            self,
            "Key",
            enable_key_rotation=True,
            description=f"Encrypts the quota notifications topic of {self.node.path}",
        )
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="EventBridgePublishesToTheEncryptedTopic",
                principals=[iam.ServicePrincipal("events.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],
                conditions=_from_this_accounts_rules(self),
            )
        )
        self.topic = sns.Topic(self, "Topic", master_key=self.key, enforce_ssl=True)
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=DEAD_LETTER_RETENTION,
        )
        cdk.Validations.of(self.dead_letter_queue).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions::AwsSolutions-SQS3",
                reason="this queue is the dead-letter queue of the rule's target and of every "
                "subscription; a dead-letter queue has none of its own",
            )
        )
        self.rule = events.CfnRule(
            self,
            "Resource",
            description="Quota share preemptions and FAILED service jobs -> SNS",
            event_pattern=notification_pattern(job_queue_arn),
            state="ENABLED",
            targets=[
                events.CfnRule.TargetProperty(
                    arn=self.topic.topic_arn,
                    id="Topic",
                    dead_letter_config=events.CfnRule.DeadLetterConfigProperty(
                        arn=self.dead_letter_queue.queue_arn
                    ),
                    retry_policy=events.CfnRule.RetryPolicyProperty(
                        maximum_retry_attempts=RETRY_ATTEMPTS
                    ),
                )
            ],
        )
        self._allow_publishing()
        self.subscriptions: dict[str, sns.CfnSubscription] = {}
        self._subscribe(Construct(self, "Subscribers"), subscribers or Subscribers(), None)
        shares = share_subscribers or {}
        if any(s.endpoints for s in shares.values()):
            scope_ = Construct(self, "ShareSubscribers")
            for share, who in shares.items():
                if who.endpoints:
                    self._subscribe(Construct(scope_, share), who, share)

    @property
    def rule_arn(self) -> str:
        return self.rule.attr_arn

    @property
    def topic_arn(self) -> str:
        return self.topic.topic_arn

    def _allow_publishing(self) -> None:
        account = {"StringEquals": {"aws:SourceAccount": cdk.Stack.of(self).account}}
        from_rule = {"ArnEquals": {"aws:SourceArn": self.rule.attr_arn}, **account}
        from_topic = {"ArnEquals": {"aws:SourceArn": self.topic.topic_arn}, **account}
        dlq = self.dead_letter_queue
        _allow(self.topic, "OnlyTheRulePublishes", "events", "sns:Publish", from_rule)
        _allow(dlq, "UndeliveredEvents", "events", "sqs:SendMessage", from_rule)
        _allow(dlq, "UndeliveredNotifications", "sns", "sqs:SendMessage", from_topic)

    def _subscribe(self, scope: Construct, who: Subscribers, share: str | None) -> None:
        for protocol, endpoint in who.endpoints:
            digest = hashlib.sha256(endpoint.lower().encode()).hexdigest()[:12]
            construct_id = f"{protocol}-{digest}"
            filters: dict[str, Any] = {}
            if share is not None:
                filters = {
                    "filter_policy": share_filter_policy(share),
                    "filter_policy_scope": "MessageBody",
                }
            subscription = sns.CfnSubscription(
                scope,
                construct_id,
                topic_arn=self.topic.topic_arn,
                protocol=protocol,
                endpoint=endpoint,
                redrive_policy={"deadLetterTargetArn": self.dead_letter_queue.queue_arn},
                **filters,
            )
            self.subscriptions[f"{share or ''}/{protocol}:{endpoint}"] = subscription


def _allow(
    target: sns.Topic | sqs.Queue, sid: str, service: str, action: str, conditions: dict[str, Any]
) -> None:
    """``target``'s resource policy lets ``<service>.amazonaws.com`` do ``action`` on it, only
    under ``conditions``."""
    arn = target.topic_arn if isinstance(target, sns.Topic) else target.queue_arn
    target.add_to_resource_policy(
        iam.PolicyStatement(
            sid=sid,
            principals=[iam.ServicePrincipal(f"{service}.amazonaws.com")],
            actions=[action],
            resources=[arn],
            conditions=conditions,
        )
    )


def _from_this_accounts_rules(scope: Construct) -> dict[str, Any]:
    """Source conditions of the key's EventBridge grant: this account's rules in this region.

    Not the rule's own ARN: the key would then depend on the rule, the rule on the topic and
    the topic on the key (a cycle). ``aws:SourceAccount`` and the rule-ARN pattern keep other
    accounts' rules (the confused deputy) out.
    """
    stack = cdk.Stack.of(scope)
    rules = stack.format_arn(service="events", resource="rule", resource_name="*")
    return {
        "StringEquals": {"aws:SourceAccount": stack.account},
        "ArnLike": {"aws:SourceArn": rules},
    }
