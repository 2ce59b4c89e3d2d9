"""Property tests of the scheduler core over random organisations, workloads and operations."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import PreemptionRule, SchedulerOptions
from tests.scheduling.helpers import (
    TYPES,
    lending_organisations,
    operations,
    option_sets,
    organisations,
    play,
    se_factors,
)


@settings(max_examples=250)
@given(st.one_of(organisations(), lending_organisations()), operations, option_sets, se_factors)
def test_invariants_hold_over_random_operations(
    shares: list[QuotaShareSpec],
    ops: list[tuple[Any, ...]],
    options: SchedulerOptions,
    se_factor: float | None,
) -> None:
    run = play(shares, ops, options, se_factor)
    assert run.violations == []


@given(organisations(), operations, option_sets)
def test_same_inputs_give_the_same_history(
    shares: list[QuotaShareSpec], ops: list[tuple[Any, ...]], options: SchedulerOptions
) -> None:
    first = play(shares, ops, options)
    second = play(shares, ops, options)
    assert first.log == second.log
    assert [j.job_id for j in first.sched.jobs] == [j.job_id for j in second.sched.jobs]


@given(st.one_of(organisations(), lending_organisations()), operations, se_factors)
def test_skipping_unchanged_shares_never_misses_a_dispatch(
    shares: list[QuotaShareSpec], ops: list[tuple[Any, ...]], se_factor: float | None
) -> None:
    run = play(shares, ops, SchedulerOptions(), se_factor)
    sched = run.sched
    before = len(run.log)
    sched._dispatcher.forget_blocked_heads()  # a full pass with every blocked head forgotten
    sched._events.pass_due = True
    sched._dispatcher.run_passes()
    assert len(run.log) == before


def test_in_share_preemption_with_backfill_settles() -> None:
    """Shrunk hypothesis case: in-share preemption whose lent part could not be reclaimed let
    a backfilled job retake the freed instance, preempted again at the same instant, forever."""
    g5 = TYPES[0]
    lab = SharingStrategy.LEND_AND_BORROW

    def share(name: str, n: int, preempt: bool, borrow: int | None = None) -> QuotaShareSpec:
        return QuotaShareSpec(name, {g5: n}, lab, borrow, in_share_preemption=preempt)

    shares = [share("S0", 3, False), share("S1", 2, True), share("S2", 3, False)]
    shares.append(share("S3", 2, True))
    ops: list[tuple[Any, ...]] = [
        ("submit", 2, 0, 1, None, 0, None),
        ("submit", 0, 0, 1, 24.25, 1, 2),
        ("reshape", 0, share("x", 6, True, 0)),
        ("submit", 2, 0, 3, 56.29, 2, 2),
        ("submit", 0, 0, 3, None, 4, 1),
        ("submit", 0, 0, 1, 23.08, 3, None),
        ("submit", 0, 0, 3, None, 4, 1),
        ("submit", 0, 1, 1, None, 2, None),
        ("reshape", 2, QuotaShareSpec("x", {g5: 3}, SharingStrategy.LEND)),
        ("submit", 1, 0, 5, 26.9, 0, None),
        ("submit", 1, 2, 1, None, 5, 2),
        ("submit", 1, 0, 2, None, 1, 0),
        ("advance", 1.0),
        ("priority", 11, 9),
        ("submit", 0, 0, 2, None, 4, 0),
        ("priority", 7, 3),
        ("reshape", 3, share("x", 1, True, 50)),
    ]
    options = SchedulerOptions(
        scheduled_to_starting_s=0.0, starting_to_running_s=0.0, backfill_depth=3
    )
    run = play(shares, ops, options)
    assert run.violations == []
    assert any(p.rule is PreemptionRule.IN_SHARE for j in run.sched.jobs for p in j.preemptions)
