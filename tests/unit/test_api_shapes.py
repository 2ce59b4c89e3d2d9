"""Quota shares in the Batch API's shape: what the emulator answers is what the runtime reads."""

from __future__ import annotations

import botocore.session
from botocore.validate import ParamValidator

from quota_constructs.api_shapes import share_from_api, share_to_api
from quota_constructs.config import ORGS_DIR, load_organisation
from quota_constructs.model import QuotaShareSpec, ShareState, SharingStrategy


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
