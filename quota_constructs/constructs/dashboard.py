"""Owns the per-organisation CloudWatch dashboard and its derived per-share event counts.

What CloudWatch has for this service: AWS Batch publishes job metrics in ``AWS/Batch`` with the
``JobQueueName`` dimension (shown through a SEARCH expression, so no metric name is assumed), and
SageMaker publishes training-instance metrics in ``/aws/sagemaker/TrainingJobs`` per ``Host``
(account-wide: training job names are chosen by Batch). No metric exists per quota share, so an
EventBridge rule writes this queue's service-job events to a log group, and two metric filters
count FAILED jobs and preempted attempts per share (dimension ``QuotaShare``) in
``QuotaSharing/<organisation>``.
"""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_events as events
from aws_cdk import aws_logs as logs
from constructs import Construct

from quota_constructs.constructs.notifications import (
    PREEMPTION_COMPLETED,
    PREEMPTION_STARTED,
    SHARE_FIELD,
    SOURCE,
    STATE_CHANGE,
    QueueNotifications,
)
from quota_constructs.model import Organisation, QuotaShareSpec

METRIC_NAMESPACE_PREFIX = "QuotaSharing/"
FAILED_JOBS = "FailedJobs"
PREEMPTED_ATTEMPTS = "PreemptedAttempts"
SHARE_DIMENSION = "QuotaShare"
METRIC_FILTERS = {
    # metric -> CloudWatch Logs filter pattern over the events the rule logs
    FAILED_JOBS: f'{{ ($.detail.{SHARE_FIELD} = "*") && ($.detail.status = "FAILED") }}',
    PREEMPTED_ATTEMPTS: (
        f'{{ ($.detail.{SHARE_FIELD} = "*") && ($.detail.status = "RUNNABLE") '
        '&& ($.detail.statusReason = "*preemption*") }'
    ),
}
"""A preempted attempt puts its job back to RUNNABLE with the preemption as ``statusReason``
(the emulator's wording; AWS's is UNCONFIRMED, see docs/notifications.md)."""
LOG_RETENTION = logs.RetentionDays.THREE_MONTHS
PERIOD = cdk.Duration.hours(1)


def log_group_name(organisation: str) -> str:
    """``/quota/<organisation>/service-job-events``: the log group the dashboard counts from."""
    return f"/quota/{organisation}/service-job-events"


def events_pattern(job_queue_arn: str) -> dict[str, object]:
    """The log rule's pattern: every state change of this queue and every preemption event."""
    return {
        "source": [SOURCE],
        "$or": [
            {"detail-type": [PREEMPTION_STARTED, PREEMPTION_COMPLETED]},
            {"detail-type": [STATE_CHANGE], "detail": {"jobQueue": [job_queue_arn]}},
        ],
    }


def shares_markdown(organisation: Organisation) -> str:
    """The organisation's shares, limits and strategies as a markdown table (from the model)."""
    queue = organisation.queue
    lines = [
        f"# {organisation.name}: quota shares",
        organisation.description,
        "",
        "| Share | Capacity limits | Strategy | Borrow limit | In-share preemption | State |",
        "|---|---|---|---|---|---|",
    ]
    lines += [_share_row(share) for share in queue.shares]
    pool = ", ".join(f"{n} x {t}" for t, n in queue.service_environment_capacity().items())
    lines += ["", f"Service environment: {pool}. Job queue priority {queue.priority}."]
    return "\n".join(lines)


def _share_row(share: QuotaShareSpec) -> str:
    limits = ", ".join(f"{n} x {t}" for t, n in share.capacity.items())
    borrow = share.effective_borrow_limit
    borrow_text = "-" if borrow is None else ("unlimited" if borrow == -1 else f"{borrow}%")
    preempt = "on" if share.in_share_preemption else "off"
    cells = (share.name, limits, share.strategy.value, borrow_text, preempt, share.state.value)
    return "| " + " | ".join(cells) + " |"


class OrganisationDashboard(Construct):
    """A CloudWatch dashboard of one organisation's queue (primary child ``Resource``).

    Also ``EventsRule`` (this queue's service-job events and every preemption event) to
    ``Events`` (log group, three months), with one metric filter per derived metric.

    :param organisation: the validated model organisation (shares for the text widget).
    :param job_queue_arn: the deployed queue's ARN.
    :param job_queue_name: the deployed queue's name.
    :param notifications: when given, its topic's delivery metrics and dead-letter queue depth.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        organisation: Organisation,
        job_queue_arn: str,
        job_queue_name: str,
        notifications: QueueNotifications | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.namespace = METRIC_NAMESPACE_PREFIX + organisation.name
        self.log_group = self._log_group(log_group_name(organisation.name))
        self.events_rule = events.CfnRule(
            self,
            "EventsRule",
            description="Quota queue service-job events -> log group (per-share counts)",
            event_pattern=events_pattern(job_queue_arn),
            state="ENABLED",
            targets=[events.CfnRule.TargetProperty(arn=self.log_group.log_group_arn, id="Log")],
        )
        for metric_name, pattern in METRIC_FILTERS.items():
            logs.MetricFilter(
                self,
                metric_name,
                log_group=self.log_group,
                metric_namespace=self.namespace,
                metric_name=metric_name,
                filter_pattern=logs.FilterPattern.literal(pattern),
                metric_value="1",
                dimensions={SHARE_DIMENSION: f"$.detail.{SHARE_FIELD}"},
                unit=cw.Unit.COUNT,
            )
        shares = [share.name for share in organisation.queue.shares]
        widgets: list[list[cw.IWidget]] = [
            [cw.TextWidget(markdown=shares_markdown(organisation), width=24, height=8)],
            [self._per_share(FAILED_JOBS, shares), self._per_share(PREEMPTED_ATTEMPTS, shares)],
            [_batch_widget(job_queue_name), _sagemaker_widget()],
        ]
        if notifications is not None:
            widgets.append(_notification_widgets(notifications))
        self.dashboard = cw.Dashboard(
            self, "Resource", widgets=widgets, default_interval=cdk.Duration.days(7)
        )

    def _log_group(self, name: str) -> logs.LogGroup:
        # A fixed name: the inline policy names the group's ARN (its own ARN would be a cycle).
        # Derived data, deleted with the stack: a retained group would block re-creating it.
        log_group = logs.LogGroup(
            self,
            "Events",
            log_group_name=name,
            retention=LOG_RETENTION,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        cfn = log_group.node.default_child
        assert isinstance(cfn, logs.CfnLogGroup)
        arn = cdk.Stack.of(self).format_arn(
            service="logs",
            resource="log-group",
            resource_name=f"{name}:*",
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
        )
        # This account's rules in this region: the rule's own ARN would be a cycle (it targets
        # the group).
        rules = cdk.Stack.of(self).format_arn(service="events", resource="rule", resource_name="*")
        # Inline policy: an AWS::Logs::ResourcePolicy is limited to 10 per account and region.
        cfn.resource_policy_document = {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "EventBridgeWritesThisAccountsRules",
                    "Effect": "Allow",
                    "Principal": {"Service": "events.amazonaws.com"},
                    "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                    "Resource": arn,
                    "Condition": {
                        "StringEquals": {"aws:SourceAccount": cdk.Aws.ACCOUNT_ID},
                        "ArnLike": {"aws:SourceArn": rules},
                    },
                }
            ],
        }
        return log_group

    def _per_share(self, metric_name: str, shares: Sequence[str]) -> cw.GraphWidget:
        metrics: list[cw.IMetric] = [
            cw.Metric(
                namespace=self.namespace,
                metric_name=metric_name,
                dimensions_map={SHARE_DIMENSION: share},
                statistic=cw.Stats.SUM,
                period=PERIOD,
                label=share,
            )
            for share in shares
        ]
        title = "FAILED jobs per share" if metric_name == FAILED_JOBS else "Preempted attempts"
        return cw.GraphWidget(title=f"{title} (derived from events)", left=metrics, width=12)


def _batch_widget(job_queue_name: str) -> cw.GraphWidget:
    search = cw.MathExpression(
        expression=f"SEARCH('{{AWS/Batch,JobQueueName}} JobQueueName=\"{job_queue_name}\"', "
        "'Sum', 300)",
        label="",
        period=cdk.Duration.minutes(5),
    )
    return cw.GraphWidget(title="AWS/Batch metrics of this job queue", left=[search], width=12)


def _sagemaker_widget() -> cw.GraphWidget:
    search = cw.MathExpression(
        expression="SEARCH('{/aws/sagemaker/TrainingJobs,Host} MetricName=\"GPUUtilization\"', "
        "'Average', 300)",
        label="",
        period=cdk.Duration.minutes(5),
    )
    return cw.GraphWidget(
        title="GPU utilisation of training jobs (account-wide)", left=[search], width=12
    )


def _notification_widgets(notifications: QueueNotifications) -> list[cw.IWidget]:
    topic = notifications.topic
    delivery = cw.GraphWidget(
        title="Notifications delivered / failed",
        left=[
            topic.metric_number_of_notifications_delivered(period=PERIOD),
            topic.metric_number_of_notifications_failed(period=PERIOD),
        ],
        width=12,
    )
    dead_letters = cw.GraphWidget(
        title="Undelivered (dead-letter queue)",
        left=[notifications.dead_letter_queue.metric_approximate_number_of_messages_visible()],
        width=12,
    )
    return [delivery, dead_letters]
