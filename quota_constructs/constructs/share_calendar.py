"""A quota share's calendar as infrastructure: EventBridge Scheduler schedules that apply the
settings in force at every window edge, and again every whole hour inside a setting, through the
universal target ``batch:updateQuotaShare``, with a role that may update only that share.

The share's template keeps its own (default) settings; the schedules flip it. A CloudFormation
update of the share in the middle of a window resets it to the default until the next whole
hour, when the window's settings are applied again (docs/constructs.md, "Share calendars").
"""

from __future__ import annotations

import hashlib

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_scheduler as scheduler
from constructs import Construct

from quota_constructs import api_shapes
from quota_constructs.constructs import grants
from quota_constructs.model import STACK_NAME_PREFIX, QuotaShareSpec, ShareCalendar, WeeklyFlip

SCHEDULER_SERVICE = "scheduler.amazonaws.com"
UPDATE_QUOTA_SHARE_TARGET = "arn:aws:scheduler:::aws-sdk:batch:updateQuotaShare"
"""The universal target: Batch's UpdateQuotaShare called by EventBridge Scheduler."""
SCHEDULE_GROUP = "default"
MAX_SCHEDULE_NAME = 64
DIGEST_MARK = "_"
"""Leads a digest prefix: allowed in schedule names, never the first character of an
organisation's name (a letter), so digest and name prefixes never extend one another."""
RETRY_ATTEMPTS = 10
RETRY_MAX_AGE_S = 3600
"""A failed flip is retried for up to an hour (the next re-apply comes within the hour)."""


def schedule_name_prefix(organisation: str, share: str) -> str:
    """``Quota-<organisation>.<share>.``; ``Quota-_<digest>.`` when that leaves no room for a
    number.

    ``.`` appears in no organisation or share name, so one share's prefix is never the start
    of another's schedule names (the trust policy's ``aws:SourceArn`` pattern relies on it);
    an organisation name starts with a letter, so no organisation's prefix starts with
    ``Quota-_`` and a digest prefix is never the start of a name of another organisation
    (with ``Quota-<digest>.``, an organisation named those 24 hex digits matched it).
    """
    prefix = f"{STACK_NAME_PREFIX}{organisation}.{share}."
    if len(prefix) + 3 <= MAX_SCHEDULE_NAME:
        return prefix
    digest = hashlib.sha256(f"{organisation}/{share}".encode()).hexdigest()[:24]
    return f"{STACK_NAME_PREFIX}{DIGEST_MARK}{digest}."


def cron_expression(flip: WeeklyFlip) -> str:
    """``cron(30 8 ? * MON,TUE *)``: EventBridge Scheduler's six-field cron of ``flip``."""
    days = ",".join(day.upper() for day in flip.days)
    return f"cron({flip.minute} {_hour_ranges(flip.hours)} ? * {days} *)"


def _hour_ranges(hours: tuple[int, ...]) -> str:
    """``0-7,17-23`` for the sorted ``hours``."""
    runs: list[list[int]] = []
    for hour in hours:
        if runs and hour == runs[-1][-1] + 1:
            runs[-1].append(hour)
        else:
            runs.append([hour])
    return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


class QuotaShareCalendar(Construct):
    """The schedules and the role that flip one share on its calendar.

    :param quota_share_arn: the share's ARN (a token is fine).
    :param share: the share's own settings (outside every window).
    :param calendar: its windows and time zone, valid for ``share`` (``ShareCalendar.problems``).
    :param organisation: names the schedules ``Quota-<organisation>.<share>.<n>``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        quota_share_arn: str,
        share: QuotaShareSpec,
        calendar: ShareCalendar,
        organisation: str,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.name_prefix = schedule_name_prefix(organisation, share.name)
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal(
                SCHEDULER_SERVICE,
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnLike": {
                        "aws:SourceArn": stack.format_arn(
                            service="scheduler",
                            resource="schedule",
                            resource_name=f"{SCHEDULE_GROUP}/{self.name_prefix}*",
                        )
                    },
                },
            ),
            description=f"Flips quota share {share.name} of {organisation} on its calendar",
        )
        grants.grant_update_quota_share(self.role, quota_share_arn=quota_share_arn)
        self.schedules = [
            self._schedule(index, flip, quota_share_arn, calendar.timezone)
            for index, flip in enumerate(calendar.weekly_flips(share))
        ]

    def _schedule(
        self, index: int, flip: WeeklyFlip, quota_share_arn: str, timezone: str
    ) -> scheduler.CfnSchedule:
        stack = cdk.Stack.of(self)
        settings = flip.settings
        schedule = scheduler.CfnSchedule(
            self,
            f"Flip{index}",
            name=f"{self.name_prefix}{index}",
            group_name=SCHEDULE_GROUP,
            description=f"{settings.name}: {settings.strategy.value} from {cron_expression(flip)}",
            schedule_expression=cron_expression(flip),
            schedule_expression_timezone=timezone,
            flexible_time_window=scheduler.CfnSchedule.FlexibleTimeWindowProperty(mode="OFF"),
            state="ENABLED",
            target=scheduler.CfnSchedule.TargetProperty(
                arn=UPDATE_QUOTA_SHARE_TARGET,
                role_arn=self.role.role_arn,
                input=stack.to_json_string(
                    api_shapes.share_schedule_input(settings, quota_share_arn)
                ),
                retry_policy=scheduler.CfnSchedule.RetryPolicyProperty(
                    maximum_retry_attempts=RETRY_ATTEMPTS,
                    maximum_event_age_in_seconds=RETRY_MAX_AGE_S,
                ),
            ),
        )
        policy = self.role.node.try_find_child("DefaultPolicy")
        if policy is not None:  # the grant exists before the first flip
            schedule.node.add_dependency(policy)
        return schedule
