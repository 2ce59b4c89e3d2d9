"""A weekday lender's calendar window as infrastructure: EventBridge Scheduler schedules that
call batch:updateQuotaShare at the edges (and every whole hour inside a setting), a role that may
update only that share and that only the share's schedules in this account may assume; cdk-nag
AwsSolutions and cfn-lint clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import assertions

from quota_constructs.config import load_organisation
from quota_constructs.constructs.share_calendar import (
    UPDATE_QUOTA_SHARE_TARGET,
    cron_expression,
    schedule_name_prefix,
)
from quota_constructs.model import (
    ORGANISATION_PATTERN,
    Organisation,
    ShareCalendar,
    ShareWindow,
    SharingStrategy,
    WeeklyFlip,
)
from quota_constructs.stacks.organisation_app import add_checks
from quota_constructs.stacks.organisation_stack import OrganisationStack
from tests.constructs.helpers import assert_clean, make_app, share

WEEKEND_TEAM = """organisation: cal-demo
shares:
  - name: weekend
    capacity: {ml.g5.xlarge: 4}
    strategy: LEND
    timezone: Europe/Paris
    schedule: [{days: [sat, sun], strategy: RESERVE}]
  - name: weekday
    capacity: {ml.g5.xlarge: 4}
    strategy: LEND_AND_BORROW
"""


@pytest.fixture(scope="module")
def weekend_org(tmp_path_factory: pytest.TempPathFactory) -> Organisation:
    path = tmp_path_factory.mktemp("org") / "cal-demo.yaml"
    path.write_text(WEEKEND_TEAM, encoding="utf-8")
    return load_organisation(path)


@pytest.fixture(scope="module")
def template(weekend_org: Organisation) -> assertions.Template:
    app = make_app()
    stack = OrganisationStack(app, "Quota-cal-demo", organisation=weekend_org)
    return assertions.Template.from_stack(stack)


def _schedules(template: assertions.Template) -> list[dict[str, Any]]:
    found = template.find_resources("AWS::Scheduler::Schedule")
    return [r["Properties"] for _, r in sorted(found.items())]


def _input(properties: dict[str, Any]) -> dict[str, Any]:
    """The schedule's Input with the share's ARN token shown as ``<share>``."""
    joined = properties["Target"]["Input"]
    if isinstance(joined, str):
        return json.loads(joined)
    parts = joined["Fn::Join"][1]
    return json.loads("".join(p if isinstance(p, str) else "<share>" for p in parts))


def test_the_weekend_window_flips_the_share_to_reserve_and_back(
    template: assertions.Template,
) -> None:
    schedules = _schedules(template)
    by_expression = {s["ScheduleExpression"]: s for s in schedules}
    assert set(by_expression) == {
        "cron(0 0-23 ? * MON,TUE,WED,THU,FRI *)",
        "cron(0 0-23 ? * SAT,SUN *)",
    }
    weekend = by_expression["cron(0 0-23 ? * SAT,SUN *)"]
    assert weekend["ScheduleExpressionTimezone"] == "Europe/Paris"
    assert weekend["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert weekend["Target"]["Arn"] == UPDATE_QUOTA_SHARE_TARGET
    assert _input(weekend) == {
        "QuotaShareArn": "<share>",
        "ResourceSharingConfiguration": {"Strategy": "RESERVE"},
        "PreemptionConfiguration": {"InSharePreemption": "DISABLED"},
    }
    weekdays = _input(by_expression["cron(0 0-23 ? * MON,TUE,WED,THU,FRI *)"])
    assert weekdays["ResourceSharingConfiguration"] == {"Strategy": "LEND"}
    assert sorted(s["Name"] for s in schedules) == [
        "Quota-cal-demo.weekend.0",
        "Quota-cal-demo.weekend.1",
    ]


def test_the_template_keeps_the_share_s_own_setting(template: assertions.Template) -> None:
    shares = template.find_resources("AWS::Batch::QuotaShare")
    strategies = {
        r["Properties"]["QuotaShareName"]: r["Properties"]["ResourceSharingConfiguration"]
        for r in shares.values()
    }
    assert strategies["weekend"] == {"Strategy": "LEND"}


def test_the_role_updates_only_that_share_and_trusts_only_its_schedules(
    template: assertions.Template,
) -> None:
    roles = template.find_resources(
        "AWS::IAM::Role",
        {"Properties": {"Description": "Flips quota share weekend of cal-demo on its calendar"}},
    )
    assert len(roles) == 1
    ((role_id, role),) = roles.items()
    (statement,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "scheduler.amazonaws.com"}
    condition = statement["Condition"]
    assert condition["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    source = json.dumps(condition["ArnLike"]["aws:SourceArn"])
    assert ":schedule/default/Quota-cal-demo.weekend.*" in source
    policies = [
        p
        for p in template.find_resources("AWS::IAM::Policy").values()
        if p["Properties"]["Roles"] == [{"Ref": role_id}]
    ]
    (policy,) = policies
    (grant,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert grant["Action"] == "batch:UpdateQuotaShare"
    shares = template.find_resources("AWS::Batch::QuotaShare")
    weekend_id = next(
        i for i, r in shares.items() if r["Properties"]["QuotaShareName"] == "weekend"
    )
    assert grant["Resource"] == {"Fn::GetAtt": [weekend_id, "QuotaShareArn"]} or grant[
        "Resource"
    ] == {"Ref": weekend_id}


def test_a_weekday_lender_with_a_calendar_is_cdk_nag_and_cfn_lint_clean(
    tmp_path: Path, weekend_org: Organisation
) -> None:
    app = make_app(validation=True, outdir=str(tmp_path))
    add_checks(app)
    OrganisationStack(app, "Quota-cal-demo", organisation=weekend_org)
    assert_clean(tmp_path, app.synth())


def test_cron_expressions_and_schedule_names() -> None:
    base = share("office")
    flip = WeeklyFlip(("mon", "fri"), (0, 1, 2, 5, 17, 18), 30, base)
    assert cron_expression(flip) == "cron(30 0-2,5,17-18 ? * MON,FRI *)"
    assert schedule_name_prefix("o", "s") == "Quota-o.s."
    long = schedule_name_prefix("o" * 64, "s" * 128)
    assert long.startswith("Quota-_") and len(long) + 3 <= 64
    office = ShareCalendar(
        (ShareWindow(("mon",), "08:30", "09:00", strategy=SharingStrategy.RESERVE),)
    )
    assert [
        cron_expression(f)
        for f in office.weekly_flips(base)
        if f.settings.strategy.value == "RESERVE"
    ] == ["cron(30 8 ? * MON *)"]


def test_no_organisation_s_schedule_names_extend_a_digest_prefix() -> None:
    """An organisation named after a long share's digest (24 hex digits starting with a
    letter) owns no schedule name under its prefix (the trust policy's aws:SourceArn pattern
    is the prefix and ``*``)."""
    for suffix in range(100):
        long = schedule_name_prefix("o" * 64, f"s{suffix}" + "s" * 120)
        digest = long.removesuffix(".")[-24:]
        if ORGANISATION_PATTERN.fullmatch(digest):
            break
    else:
        raise AssertionError("no digest starting with a letter in 100 shares")
    impostor_names = [f"{schedule_name_prefix(digest, share)}1" for share in ("s", "x-1")]
    assert not any(name.startswith(long) for name in impostor_names)
