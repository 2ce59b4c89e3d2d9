"""How many CloudFormation resources an organisation's stack holds, at most, and the rule that
keeps it within CloudFormation's limit (so a file that validates also synthesizes).

Counted per part of the organisation stack (``stacks/organisation_stack.py``), as an upper
bound: monitoring on, every team's bucket, key and roles created (an existing role or bucket
named in ``access`` creates fewer). Calendars are counted exactly: one EventBridge Scheduler
schedule per weekly flip (``ShareCalendar.weekly_flips``) and the share's calendar role and its
policy. tests/constructs/test_stack_size.py holds the bound equal to every sample stack synthesized
with monitoring (and above it without).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from quota_constructs.model.calendar import ShareCalendar
from quota_constructs.model.problems import Problem
from quota_constructs.model.share import QuotaShareSpec

MAX_STACK_RESOURCES = 500
"""CloudFormation: at most 500 resources per stack."""
QUEUE_RESOURCES = 3
"""The scheduling policy, the service environment and the job queue."""
ORGANISATION_PARAMETERS = 3
"""SSM: the job queue's name and ARN, the training plans."""
SHARE_RESOURCES = 2
"""Per share: the quota share and its ARN's SSM parameter."""
TEAM_RESOURCES = 11
"""Per share with ``access``: submitter and execution roles, their managed policy and inline
policy, the bucket, its policy and its KMS key, and four SSM parameters."""
ACCESS_LOG_RESOURCES = 2
"""With any team access: the access-log bucket and its policy."""
MONITORING_RESOURCES = 11
"""The notification key, topic and its policy, queue and its policy, two event rules, the log
group, two metric filters and the dashboard (and one subscription per subscriber)."""
CALENDAR_RESOURCES = 2
"""Per share with a calendar, beside its schedules: the role EventBridge Scheduler assumes and
its policy."""


def calendar_resources(
    shares: Sequence[QuotaShareSpec], calendars: Mapping[str, ShareCalendar]
) -> dict[str, int]:
    """Share name -> the resources its calendar adds (schedules, role and policy)."""
    return {
        share.name: CALENDAR_RESOURCES + len(calendars[share.name].weekly_flips(share))
        for share in shares
        if share.name in calendars
    }


def stack_resource_bound(
    shares: Sequence[QuotaShareSpec],
    calendars: Mapping[str, ShareCalendar],
    organisation_subscribers: int,
) -> int:
    """The most resources an organisation stack of these shares and calendars can hold
    (``organisation_subscribers``: the organisation's own notification subscribers)."""
    teams = sum(1 for s in shares if s.access is not None)
    subscriptions = organisation_subscribers + sum(len(s.notifications.endpoints) for s in shares)
    return (
        QUEUE_RESOURCES
        + ORGANISATION_PARAMETERS
        + SHARE_RESOURCES * len(shares)
        + TEAM_RESOURCES * teams
        + (ACCESS_LOG_RESOURCES if teams else 0)
        + MONITORING_RESOURCES
        + subscriptions
        + sum(calendar_resources(shares, calendars).values())
    )


def stack_size_problems(
    shares: Sequence[QuotaShareSpec],
    calendars: Mapping[str, ShareCalendar],
    organisation_subscribers: int,
    share_path: Callable[[int], str],
) -> list[Problem]:
    """The stack over :data:`MAX_STACK_RESOURCES`: one problem at the schedule of the share
    whose calendar weighs most, naming the heaviest three (schedules are what grows), with how
    many resources to shed; ``share_path``: a share's path from its index."""
    total = stack_resource_bound(shares, calendars, organisation_subscribers)
    if total <= MAX_STACK_RESOURCES:
        return []
    weights = calendar_resources(shares, calendars)
    heaviest = sorted(weights, key=lambda name: -weights[name])[:3]
    index = {s.name: i for i, s in enumerate(shares)}
    path = f"{share_path(index[heaviest[0]])}.schedule" if heaviest else "shares"
    return [
        Problem(
            path,
            _names(heaviest, weights),
            f"the organisation's stack would hold up to {total} resources, over "
            f"CloudFormation's {MAX_STACK_RESOURCES} per stack; each change of a share's "
            "settings in its calendar is an EventBridge Scheduler schedule",
            f"remove at least {total - MAX_STACK_RESOURCES} schedules: fewer windows, windows "
            "with the same hours on several days (one schedule covers them), or fewer shares "
            "with calendars",
        )
    ]


def _names(names: Sequence[str], weights: Mapping[str, int]) -> str:
    return ", ".join(f"{name} ({weights[name] - CALENDAR_RESOURCES} schedules)" for name in names)
