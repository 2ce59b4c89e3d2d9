"""The pure deploy planner on templates (``quota_constructs.deploy_plan``) and its create-only
table (quota_constructs/data/create_only_properties.txt, tools/gen_create_only_table.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from quota_constructs.config import load_organisation
from quota_constructs.deploy_plan import (
    BATCH_TYPES,
    QUOTA_SHARE,
    ChangeAction,
    LiveJob,
    plan_deploy,
    template_changes,
    with_file_parts,
)
from quota_constructs.model import JobStatus, ShareState
from quota_constructs.model.resource_schemas import CREATE_ONLY_FILE, create_only_properties
from quota_constructs.stacks.plan import organisation_resources, plan_organisation_change
from tests.helpers import ORGS_DIR, ROOT, tool

SEED = load_organisation(ORGS_DIR / "seed-demo.yaml")
RESEARCH = load_organisation(ORGS_DIR / "research.yaml")
SATURDAY, MONDAY = datetime(2026, 12, 5, 12, tzinfo=UTC), datetime(2026, 12, 7, 12, tzinfo=UTC)


def test_the_data_file_is_what_the_tool_makes_from_the_installed_cfn_lint() -> None:
    generator = tool("gen_create_only_table")
    text = (ROOT / "quota_constructs" / CREATE_ONLY_FILE).read_text()
    assert text == generator.render(generator.table())


def test_a_share_s_name_and_queue_are_create_only() -> None:
    assert create_only_properties()[QUOTA_SHARE] == ("JobQueue", "QuotaShareName")


def share(logical_id: str = "S", **props: Any) -> dict[str, Any]:
    base = {"QuotaShareName": "A", "JobQueue": {"Fn::GetAtt": ["Q", "JobQueueArn"]}}
    return {logical_id: {"Type": QUOTA_SHARE, "Properties": {**base, **props}}}


QUEUE = {"Q": {"Type": "AWS::Batch::JobQueue", "Properties": {"Priority": 1}}}


def test_a_changed_create_only_property_replaces_naming_it() -> None:
    [(logical_id, diff)] = template_changes(
        {**QUEUE, **share()}, {**QUEUE, **share(QuotaShareName="B")}
    ).items()
    assert (logical_id, diff.action) == ("S", ChangeAction.REPLACE)
    assert diff.reasons == ["QuotaShareName changes from A to B (create-only)"]


def test_another_property_updates_in_place() -> None:
    diffs = template_changes({**QUEUE, **share(State="ENABLED")}, {**QUEUE, **share(State="X")})
    assert diffs["S"].action is ChangeAction.UPDATE


def test_a_resource_naming_a_replaced_one_in_a_create_only_property_is_replaced_too() -> None:
    renamed = {"Q": {"Type": "AWS::Batch::JobQueue", "Properties": {"JobQueueName": "n"}}}
    diffs = template_changes({**QUEUE, **share()}, {**renamed, **share()})
    assert diffs["Q"].action is ChangeAction.REPLACE
    assert diffs["S"].action is ChangeAction.REPLACE
    assert diffs["S"].reasons == ["JobQueue changes: Q is replaced (create-only)"]


def test_a_retained_resource_deleted_is_not_destructive() -> None:
    kept = {"K": {"Type": "AWS::S3::Bucket", "DeletionPolicy": "Retain"}}
    lost = {"L": {"Type": "AWS::S3::Bucket"}}
    plan = plan_deploy({**kept, **lost}, {}, old=SEED, new=SEED)
    assert not plan.change("K").destructive
    assert plan.change("L").destructive


def test_changes_come_in_cloudformation_s_order() -> None:
    shares = SEED.queue.shares
    new = replace(
        SEED, queue=replace(SEED.queue, shares=(replace(shares[0], name="QS0"), *shares[1:]))
    )
    plan = plan_organisation_change(SEED, new)
    actions = [c.action for c in plan.changes]
    assert actions == sorted(
        actions, key=[ChangeAction.CREATE, ChangeAction.UPDATE, ChangeAction.DELETE].index
    )
    assert (
        plan.jobs_read is False and plan.change(plan.changes[-1].logical_id).jobs_terminated is None
    )


def test_an_unchanged_organisation_plans_nothing() -> None:
    resources = organisation_resources(SEED)
    assert plan_deploy(resources, resources, old=SEED, new=SEED, jobs=[]).changes == ()


def _live(org: Any, when: datetime) -> Any:
    """``org`` as read back from AWS at ``when``: its calendars' settings in force, no
    calendars, descriptions or access (AWS stores none)."""
    shares = tuple(replace(s, description="", access=None) for s in org.shares_in_force(when))
    return replace(org, calendars={}, queue=replace(org.queue, shares=shares))


@pytest.mark.parametrize("when", [SATURDAY, MONDAY], ids=["in-window", "outside"])
def test_a_setting_the_calendar_put_in_force_is_not_a_change(when: datetime) -> None:
    old = with_file_parts(_live(RESEARCH, when), RESEARCH, when)
    new = organisation_resources(RESEARCH)
    assert (
        plan_deploy(
            organisation_resources(old),
            new,
            old=old,
            new=RESEARCH,
            jobs=[],
            resource_types=BATCH_TYPES,
        ).changes
        == ()
    )


def test_a_live_setting_the_calendar_does_not_explain_is_a_change() -> None:
    live = _live(RESEARCH, SATURDAY)  # data-analysis RESERVE, as scheduled, but preempting
    shares = tuple(
        replace(s, in_share_preemption=True) if s.name == "data-analysis" else s
        for s in live.queue.shares
    )
    old = with_file_parts(
        replace(live, queue=replace(live.queue, shares=shares)), RESEARCH, SATURDAY
    )
    plan = plan_deploy(
        organisation_resources(old),
        organisation_resources(RESEARCH),
        old=old,
        new=RESEARCH,
        jobs=[],
        resource_types=BATCH_TYPES,
    )
    assert [(c.action, c.resource_type) for c in plan.changes] == [
        (ChangeAction.UPDATE, QUOTA_SHARE)
    ]


def test_borrowers_lose_their_loan_when_the_lender_is_reduced() -> None:
    """QS1 (LEND_AND_BORROW, 1 own) runs two jobs, one on QS2's lent instance; QS2 stops
    lending (RESERVE): the borrowed instance is given back."""
    shares = SEED.queue.shares
    reserve = replace(shares[1], strategy=type(shares[1].strategy)("RESERVE"))
    new = replace(SEED, queue=replace(SEED.queue, shares=(shares[0], reserve, shares[2])))
    jobs = [
        LiveJob("1", "own", "QS1", JobStatus.RUNNING, {"ml.g5.xlarge": 1}, 5, 100.0),
        LiveJob("2", "loan", "QS1", JobStatus.RUNNING, {"ml.g5.xlarge": 1}, 5, 200.0),
        LiveJob("3", "lender", "QS3", JobStatus.RUNNING, {"ml.g5.xlarge": 1}, 5, 50.0),
    ]
    plan = plan_organisation_change(SEED, new, jobs=jobs)
    [change] = plan.share_changes("QS2")
    assert [j.job_name for j in change.jobs_preempted or ()] == ["loan"]
    assert plan.destructive


def test_disabling_a_share_without_jobs_is_not_destructive() -> None:
    shares = SEED.queue.shares
    off = replace(shares[2], state=ShareState.DISABLED)
    new = replace(SEED, queue=replace(SEED.queue, shares=(*shares[:2], off)))
    plan = plan_organisation_change(SEED, new, jobs=[])
    [change] = plan.share_changes("QS3")
    assert change.action is ChangeAction.UPDATE and not plan.destructive
