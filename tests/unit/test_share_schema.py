"""A quota share's fields are declared once (``model.SHARE_FIELDS``): every mirror carries each
field its declaration says it must, shown by one share that sets every field away from its
default and goes through each mirror: the organisation file, the construct, the wire (and so
the stack's props, the emulator, import and the JSON output), drift, calendars, the optimizer's
candidates and the table. A new field whose declaration a mirror ignores fails here; a new field
left at its default in ``EVERY_FIELD`` fails the first test (docs/architecture.md, "Where to
change what"). ``test_share_new_field.py`` follows that recipe with a throw-away field."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import replace
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest

from quota_constructs.advisor.optimize import _organisation, plain_queue
from quota_constructs.api_shapes import (
    SHARE_WIRE_MEMBERS,
    share_drift_fields,
    share_from_api,
    share_schedule_input,
    share_to_api,
    share_to_cfn_props,
)
from quota_constructs.commands.org import organisation_json, organisation_table
from quota_constructs.config import OrganisationFile, ShareConfig, WindowConfig, load_organisation
from quota_constructs.constructs import QuotaManagedTrainingQueue, QuotaShare
from quota_constructs.constructs.quota_share import CFN_KEYWORDS
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import (
    SHARE_FIELDS,
    JobQueueSpec,
    Organisation,
    QuotaShareSpec,
    ShareState,
    ShareWindow,
    SharingStrategy,
    Subscribers,
    TeamAccess,
)
from quota_constructs.model.calendar import SETTING_KEYS
from quota_constructs.runtime.adopt import organisation_drift
from quota_constructs.scheduling import Scheduler

EVERY_FIELD = QuotaShareSpec(
    name="vision",
    capacity={"ml.g5.xlarge": 2, "ml.p4d.24xlarge": 1},
    strategy=SharingStrategy.LEND_AND_BORROW,
    borrow_limit=150,
    in_share_preemption=True,
    state=ShareState.DISABLED,
    description="why this strategy",
    access=TeamAccess(principals=("111122223333",), max_priority=50),
    notifications=Subscribers(email=("team@example.com",)),
)
"""One share with every field away from its default."""
OTHER = QuotaShareSpec(name="nlp", capacity={"ml.g5.xlarge": 1}, strategy=SharingStrategy.LEND)
ORGANISATION = Organisation(name="schema", queue=JobQueueSpec(shares=(EVERY_FIELD, OTHER)))
CHANGED: dict[str, Any] = {
    "capacity": {"ml.g5.xlarge": 3, "ml.p4d.24xlarge": 1},
    "strategy": SharingStrategy.LEND,
    "borrow_limit": 50,
    "in_share_preemption": False,
    "state": ShareState.ENABLED,
}
"""Another valid value of each drift field (LEND for strategy: the borrow limit then drifts
too, which is what AWS would hold)."""


def declared(flag: str) -> list[str]:
    return [name for name, field in SHARE_FIELDS.items() if getattr(field, flag)]


def same(spec: QuotaShareSpec, names: list[str]) -> dict[str, Any]:
    return {name: getattr(spec, name) for name in names}


def test_every_field_is_declared_and_set_in_the_example() -> None:
    fields = dataclasses.fields(QuotaShareSpec)
    assert [f.name for f in fields] == list(SHARE_FIELDS)
    for field in fields:
        default = (
            field.default_factory()
            if field.default_factory is not dataclasses.MISSING
            else field.default
        )
        assert getattr(EVERY_FIELD, field.name) != default, f"set {field.name} in EVERY_FIELD"
    assert EVERY_FIELD.problems() == []


def test_the_organisation_file_carries_every_field_both_ways(tmp_path: Path) -> None:
    file_keys = {field.file_key for field in SHARE_FIELDS.values()}
    assert set(ShareConfig.model_fields) == file_keys | {"schedule", "timezone"}
    path = tmp_path / "schema.yaml"
    path.write_text(OrganisationFile.from_organisation(ORGANISATION).to_yaml())
    assert load_organisation(path).queue.shares == (EVERY_FIELD, OTHER)


def test_the_construct_takes_every_prop_field_and_from_spec_passes_each() -> None:
    props = [
        name
        for name, p in inspect.signature(QuotaShare.__init__).parameters.items()
        if p.kind is p.KEYWORD_ONLY and name != "job_queue"
    ]
    assert props == [f.construct_prop for f in SHARE_FIELDS.values() if f.construct_prop]
    queue = QuotaManagedTrainingQueue(cdk.Stack(cdk.App(), "S"), "Q", spec=[EVERY_FIELD, OTHER])
    carried = [name for name, f in SHARE_FIELDS.items() if f.construct_prop]
    assert same(queue.share("vision").spec, carried) == same(EVERY_FIELD, carried)


def _members(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {m for v in value.values() for m in _members(v)}
    return set()


def test_the_wire_carries_every_wire_field_out_and_back() -> None:
    wire = declared("wire")
    assert list(SHARE_WIRE_MEMBERS) == wire
    api = share_to_api(EVERY_FIELD)
    assert set(SHARE_WIRE_MEMBERS.values()) <= _members(api)
    assert same(share_from_api(api), wire) == same(EVERY_FIELD, wire)
    cfn = share_to_cfn_props(EVERY_FIELD)  # the stack's props are the wire's, by name
    assert len(cfn) == len(api)
    assert set(cfn) <= CFN_KEYWORDS  # no property override for today's fields


def test_drift_compares_exactly_the_drift_fields_and_finds_each_change() -> None:
    assert set(share_drift_fields(EVERY_FIELD)) == {
        SHARE_WIRE_MEMBERS[n] for n in declared("drift")
    }
    assert set(CHANGED) == set(declared("drift"))
    for name, value in CHANGED.items():
        live = replace(
            ORGANISATION,
            queue=JobQueueSpec(
                shares=(
                    replace(
                        EVERY_FIELD,
                        **{
                            name: value,
                            **({"borrow_limit": None} if value == SharingStrategy.LEND else {}),
                        },
                    ),
                    OTHER,
                )
            ),
        )
        drift = organisation_drift(ORGANISATION, live)
        assert SHARE_WIRE_MEMBERS[name] in {f.field for f in drift.fields}, name


def test_the_emulator_provisions_and_describes_every_wire_field(tmp_path: Path) -> None:
    path = tmp_path / "schema.yaml"
    path.write_text(OrganisationFile.from_organisation(ORGANISATION).to_yaml())
    with EmulatorServer(org_files=[path], clock="virtual") as emu:
        batch = emu.client("batch")
        arn = emu.organisation("schema").quota_share_arns["vision"]
        described = batch.describe_quota_share(quotaShareArn=arn)
    wire = declared("wire")
    assert same(share_from_api(described), wire) == same(EVERY_FIELD, wire)


def test_a_window_may_change_exactly_the_calendar_fields() -> None:
    assert set(SETTING_KEYS) == set(declared("calendar"))
    when = {"days", "start", "end"}
    assert {f.name for f in dataclasses.fields(ShareWindow)} - when == set(SETTING_KEYS)
    assert set(WindowConfig.model_fields) - when == set(SETTING_KEYS)
    flip = share_schedule_input(EVERY_FIELD, "arn")  # what a calendar's schedule sends
    assert {SHARE_WIRE_MEMBERS[n].lower() for n in SETTING_KEYS} <= {
        m.lower() for m in _members(flip)
    }


def test_a_candidate_of_the_optimizer_carries_every_field_the_scheduler_reads() -> None:
    candidate = _organisation(plain_queue(ORGANISATION.queue)).queue.shares[0]
    scheduling = declared("scheduling")
    assert same(candidate, scheduling) == same(EVERY_FIELD, scheduling)


def test_the_scheduler_is_given_every_field_it_reads() -> None:
    scheduler = Scheduler.for_queue(ORGANISATION.queue, queue_name="q")
    [spec] = [s for s in scheduler.queue.shares if s.name == "vision"]
    scheduling = declared("scheduling")
    assert same(spec, scheduling) == same(EVERY_FIELD, scheduling)


def test_the_table_has_a_column_per_declared_column_and_the_json_every_wire_member() -> None:
    headers = [column.header for column in organisation_table(ORGANISATION, wide=True).columns]
    assert {f.column for f in SHARE_FIELDS.values() if f.column} <= set(headers)
    [shown, _] = organisation_json(ORGANISATION)["quotaShares"]
    assert set(SHARE_WIRE_MEMBERS.values()) <= _members(shown)


@pytest.mark.parametrize("name", declared("drift"))
def test_every_drift_field_is_a_wire_field(name: str) -> None:
    assert SHARE_FIELDS[name].wire


@pytest.mark.parametrize("name", declared("wire"))
def test_every_wire_field_is_a_construct_prop(name: str) -> None:
    """The stack's props are built from the construct's spec: a wire field no prop carries
    would never reach the stack."""
    assert SHARE_FIELDS[name].construct_prop is not None
