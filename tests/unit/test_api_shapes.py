"""Quota shares in the Batch API's shape: what the emulator answers is what the runtime reads.

Properties: every field of a valid share both ways, updates over a base, the ARNs both ways.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

import botocore.session
from botocore.validate import ParamValidator
from hypothesis import given, settings
from hypothesis import strategies as st

from quota_constructs.api_shapes import (
    BORROW_LIMIT,
    CAPACITY_LIMITS,
    IN_SHARE_PREEMPTION,
    PREEMPTION,
    SHARE_NAME,
    SHARING,
    STATE,
    STRATEGY,
    QuotaShareArn,
    ServiceJobArn,
    ignored_borrow_limit,
    job_queue_arn_of_share,
    parse_quota_share_arn,
    parse_service_job_arn,
    quota_share_arn,
    service_job_arn,
    share_drift_fields,
    share_from_api,
    share_from_request,
    share_sharing_settings,
    share_to_api,
)
from quota_constructs.config import load_organisation
from quota_constructs.model import (
    MAX_BORROW_LIMIT,
    MAX_CAPACITY_LIMITS_PER_SHARE,
    MAX_INSTANCES_PER_TYPE,
    MIN_CAPACITY_LIMITS_PER_SHARE,
    NAME_PATTERN,
    UNLIMITED_BORROW,
    QuotaShareSpec,
    ShareState,
    SharingStrategy,
    training_instance_types,
)
from tests.helpers import ORGS_DIR


def test_every_committed_share_survives_the_round_trip() -> None:
    for path in ORGS_DIR.glob("*.yaml"):
        for share in load_organisation(path).queue.shares:
            back = share_from_api(share_to_api(share))
            assert back.effective_borrow_limit == share.effective_borrow_limit
            assert (back.name, dict(back.capacity), back.strategy, back.state) == (
                share.name,
                dict(share.capacity),
                share.strategy,
                share.state,
            )
            assert back.in_share_preemption == share.in_share_preemption


def test_unlimited_borrowing_is_sent_as_minus_one_and_only_for_lend_and_borrow() -> None:
    borrower = QuotaShareSpec("b", {"ml.g5.xlarge": 2}, SharingStrategy.LEND_AND_BORROW)
    lender = QuotaShareSpec("l", {"ml.g5.xlarge": 2}, SharingStrategy.LEND)
    assert share_to_api(borrower)["resourceSharingConfiguration"] == {
        "strategy": "LEND_AND_BORROW",
        "borrowLimit": -1,
    }
    assert share_to_api(lender)["resourceSharingConfiguration"] == {"strategy": "LEND"}


def test_create_request_is_valid_for_botocore() -> None:
    share = QuotaShareSpec(
        "b", {"ml.g5.xlarge": 2}, SharingStrategy.LEND_AND_BORROW, 0, True, ShareState.DISABLED
    )
    model = botocore.session.get_session().get_service_model("batch")
    shape = model.operation_model("CreateQuotaShare").input_shape
    report = ParamValidator().validate({**share_to_api(share), "jobQueue": "q"}, shape)
    assert not report.has_errors(), report.generate_report()


# --- properties: every field both ways, the ARNs through their parsers -------------------------

NAMES = st.from_regex(NAME_PATTERN, fullmatch=True)
INSTANCE_TYPES = sorted(training_instance_types())
BORROW_LIMITS = st.one_of(st.none(), st.just(UNLIMITED_BORROW), st.integers(0, MAX_BORROW_LIMIT))
REQUEST_FIELDS = (CAPACITY_LIMITS, SHARING, PREEMPTION, STATE)
"""The fields UpdateQuotaShare may change."""


@st.composite
def valid_shares(draw: st.DrawFn) -> QuotaShareSpec:
    """A share the model accepts, with every wire field drawn (borrow limit only if it borrows)."""
    strategy = draw(st.sampled_from(SharingStrategy))
    capacity = draw(
        st.dictionaries(
            st.sampled_from(INSTANCE_TYPES),
            st.integers(1, MAX_INSTANCES_PER_TYPE),
            min_size=MIN_CAPACITY_LIMITS_PER_SHARE,
            max_size=MAX_CAPACITY_LIMITS_PER_SHARE,
        )
    )
    share = QuotaShareSpec(
        name=draw(NAMES),
        capacity=capacity,
        strategy=strategy,
        borrow_limit=draw(BORROW_LIMITS) if strategy.borrows else None,
        in_share_preemption=draw(st.booleans()),
        state=draw(st.sampled_from(ShareState)),
    )
    assert share.problems() == []
    return share


def as_aws_keeps_it(share: QuotaShareSpec) -> QuotaShareSpec:
    """``share`` with its borrow limit as AWS stores it (an unset limit to borrow is ``-1``)."""
    return replace(share, borrow_limit=share.effective_borrow_limit)


@given(valid_shares())
def test_every_field_of_a_valid_share_round_trips_through_the_api_shape(
    share: QuotaShareSpec,
) -> None:
    wire = json.loads(json.dumps(share_to_api(share)))
    assert share_from_api(wire) == as_aws_keeps_it(share)
    assert share_from_request(wire) == as_aws_keeps_it(share)
    assert share_from_api(share_to_api(as_aws_keeps_it(share))) == as_aws_keeps_it(share)
    assert share_drift_fields(share_from_api(wire)) == share_drift_fields(share)


@settings(max_examples=50, deadline=None)
@given(valid_shares())
def test_every_valid_share_is_a_valid_create_request(share: QuotaShareSpec) -> None:
    shape = botocore.session.get_session().get_service_model("batch")
    request = {**share_to_api(share), "jobQueue": "q"}
    report = ParamValidator().validate(
        request, shape.operation_model("CreateQuotaShare").input_shape
    )
    assert not report.has_errors(), report.generate_report()


@given(valid_shares(), valid_shares(), st.sets(st.sampled_from(REQUEST_FIELDS)))
def test_an_update_changes_exactly_the_fields_it_sends(
    base: QuotaShareSpec, new: QuotaShareSpec, sent: set[str]
) -> None:
    request = {k: v for k, v in share_to_api(new).items() if k in sent}
    changes: dict[str, Any] = {}
    if CAPACITY_LIMITS in sent:
        changes["capacity"] = new.capacity
    if SHARING in sent:
        changes |= {"strategy": new.strategy, "borrow_limit": new.effective_borrow_limit}
    if PREEMPTION in sent:
        changes["in_share_preemption"] = new.in_share_preemption
    if STATE in sent:
        changes["state"] = new.state
    assert share_from_request(request, base=base) == replace(base, **changes)


@given(valid_shares())
def test_json_settings_are_the_values_the_api_sends(share: QuotaShareSpec) -> None:
    api = share_to_api(share)
    assert share_sharing_settings(share) == {
        STRATEGY: api[SHARING][STRATEGY],
        BORROW_LIMIT: api[SHARING].get(BORROW_LIMIT),
        IN_SHARE_PREEMPTION: api[PREEMPTION][IN_SHARE_PREEMPTION],
    }
    assert share_sharing_settings(share)[IN_SHARE_PREEMPTION] in ("ENABLED", "DISABLED")


PARTITIONS = st.sampled_from(["aws", "aws-cn", "aws-us-gov"])
REGIONS = st.from_regex(r"[a-z]{2}-[a-z]{4,9}-[1-9]", fullmatch=True)
ACCOUNTS = st.from_regex(r"[0-9]{12}", fullmatch=True)


@given(PARTITIONS, REGIONS, ACCOUNTS, st.uuids())
def test_a_service_job_arn_parses_back_into_its_parts(
    partition: str, region: str, account: str, job_id: uuid.UUID
) -> None:
    parts = ServiceJobArn(partition, region, account, str(job_id))
    arn = service_job_arn(partition, region, account, str(job_id))
    assert parse_service_job_arn(arn) == parts
    assert parse_quota_share_arn(arn) is None


@given(PARTITIONS, REGIONS, ACCOUNTS, NAMES, NAMES)
def test_a_quota_share_arn_parses_back_into_its_parts(
    partition: str, region: str, account: str, queue: str, share: str
) -> None:
    queue_arn = f"arn:{partition}:batch:{region}:{account}:job-queue/{queue}"
    arn = quota_share_arn(queue_arn, share)
    assert arn == f"{queue_arn}/quota-share/{share}"
    assert parse_quota_share_arn(arn) == QuotaShareArn(partition, region, account, queue, share)
    assert job_queue_arn_of_share(arn) == queue_arn
    assert parse_service_job_arn(arn) is None


def test_borrow_limit_with_a_strategy_that_does_not_borrow_is_dropped_and_reported() -> None:
    detail = {
        SHARE_NAME: "l",
        CAPACITY_LIMITS: [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
        SHARING: {STRATEGY: "LEND", BORROW_LIMIT: 50},
    }
    assert share_from_api(detail).borrow_limit is None
    assert share_from_request(detail).borrow_limit == 50  # kept, so the model refuses it
    assert ignored_borrow_limit(detail) == (50, "LEND")
    assert ignored_borrow_limit(share_to_api(share_from_api(detail))) is None
