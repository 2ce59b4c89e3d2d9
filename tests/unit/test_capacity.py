"""model/capacity.py: why a head job waits, branch by branch, and the borrow-cap rule."""

from __future__ import annotations

import math

import pytest

from quota_constructs.model import PendingKind, TypeFigures, exceeds_borrow_cap, head_wait_reason

GPU = "ml.g5.xlarge"


def figures(**changes: int | float | None) -> TypeFigures:
    """One instance type: limit 2, nothing used, lent or borrowed, unlimited borrowing."""
    base: dict[str, int | float | None] = {
        "needed": 1,
        "limit": 2,
        "own_use": 0,
        "lent": 0,
        "borrowed": 0,
        "borrow_cap": math.inf,
        "lendable": 0,
        "service_environment_free": None,
    }
    return TypeFigures(GPU, **{**base, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("borrows", "changes", "awaited", "kind", "words"),
    [
        (True, {}, 2, PendingKind.WAITING_FOR_PREEMPTION,
         "waiting for 2 preemption(s) in progress to release capacity"),
        (False, {"own_use": 2}, 0, PendingKind.WAITING_FOR_OWN_CAPACITY,
         f"quota share A uses 2 of its 2 x {GPU}; the job needs 1"),
        (True, {"own_use": 1, "lent": 1}, 0, PendingKind.WAITING_FOR_OWN_CAPACITY,
         f"1 x {GPU} of quota share A are lent out and cannot be reclaimed yet"),
        (True, {"own_use": 2, "borrowed": 1, "borrow_cap": 1}, 0,
         PendingKind.BORROW_LIMIT_REACHED,
         f"quota share A borrows 1 x {GPU}; borrowing 1 more would exceed its borrow limit of 1"),
        (True, {"own_use": 2, "needed": 2, "lendable": 1}, 0, PendingKind.NO_LENDABLE_CAPACITY,
         f"needs to borrow 2 x {GPU}; lending shares have 1 idle"),
        (True, {"service_environment_free": -1}, 0, PendingKind.WAITING_FOR_SERVICE_ENVIRONMENT,
         f"service environment has 0 x {GPU} free; the job needs 1"),
        (True, {"own_use": 2, "lendable": 1}, 0, PendingKind.WAITING_FOR_DISPATCH,
         "fits; dispatched at the next pass"),
    ],
)  # fmt: skip
def test_head_wait_reason(
    borrows: bool,
    changes: dict[str, int | float | None],
    awaited: int,
    kind: PendingKind,
    words: str,
) -> None:
    assert head_wait_reason("A", borrows, [figures(**changes)], awaited) == (kind, words)


def test_the_first_type_that_blocks_gives_the_reason() -> None:
    fits = figures()
    full = TypeFigures("ml.p4d.24xlarge", 1, 1, 1, 0, 0, 0.0, 0)
    kind, words = head_wait_reason("A", False, [fits, full])
    assert kind is PendingKind.WAITING_FOR_OWN_CAPACITY
    assert words == "quota share A uses 1 of its 1 x ml.p4d.24xlarge; the job needs 1"


def test_exceeds_borrow_cap() -> None:
    assert not exceeds_borrow_cap(1, 1, 2)
    assert exceeds_borrow_cap(1, 2, 2)
    assert not exceeds_borrow_cap(10**6, 1, math.inf)
    assert exceeds_borrow_cap(0, 1, 0)
