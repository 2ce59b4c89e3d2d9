"""State the emulator keeps for clients is bounded: STS sessions are dropped once expired,
training-plan offerings beyond the most recent ``MAX_OFFERINGS`` (issue: an emulator no local
client can grow without bound)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.errors import ResourceNotFound
from quota_constructs.local.state.identities import Identities
from quota_constructs.local.state.training_plans import MAX_OFFERINGS, TrainingPlans

ROLE = "arn:aws:iam::123456789012:role/labs-vision-submitter"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 5, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_expired_sessions_are_dropped_and_keys_never_reused() -> None:
    clock = Clock()
    identities = Identities(Account(), wall_clock=clock)
    identities.add_roles([ROLE])
    old = [identities.assume(ROLE, f"s-{n}", duration_s=900) for n in range(100)]
    assert identities.session(old[0].access_key_id) == old[0]

    clock.now += timedelta(seconds=901)
    new = identities.assume(ROLE, "fresh", duration_s=900)

    assert len(identities._sessions) == 1
    assert identities.session(old[-1].access_key_id) is None
    assert identities.caller_arn(old[-1].access_key_id) == identities.root_arn
    assert new.access_key_id not in {s.access_key_id for s in old}
    assert identities.session(new.access_key_id) == new


def test_a_session_expires_at_its_expiration_even_before_the_next_assume() -> None:
    clock = Clock()
    identities = Identities(Account(), wall_clock=clock)
    identities.add_roles([ROLE])
    session = identities.assume(ROLE, "short", duration_s=900)
    clock.now += timedelta(seconds=900)
    assert identities.session(session.access_key_id) is None


def test_offerings_beyond_the_most_recent_are_dropped() -> None:
    plans = TrainingPlans(Account())
    first = plans.offer("ml.p5.48xlarge", 1, 0.0, 24)
    for hours in range(25, 25 + MAX_OFFERINGS):
        plans.offer("ml.p5.48xlarge", 1, 0.0, hours)

    assert len(plans.offerings) == MAX_OFFERINGS
    with pytest.raises(ResourceNotFound, match="keeps the 1000 most recent"):
        plans.create("late", first.offering_id, now_s=0.0)
    recent = plans.offer("ml.p5.48xlarge", 1, 0.0, 24 + MAX_OFFERINGS)
    assert plans.create("kept", recent.offering_id, now_s=0.0).name == "kept"


def test_an_account_keeps_at_most_500_scheduling_policies() -> None:
    """AWS documents no quota on scheduling policies; the emulator's own bound keeps a client
    creating them in a loop from growing it without end (docs/input-limits.md)."""
    from quota_constructs.local.emulator import Emulator
    from quota_constructs.local.state.errors import InvalidRequest
    from quota_constructs.model import MAX_SCHEDULING_POLICIES

    registry = Emulator().registry
    for n in range(MAX_SCHEDULING_POLICIES):
        registry.create_scheduling_policy(
            f"p-{n}", quota_share_policy={"idleResourceAssignmentStrategy": "FIFO"}
        )
    with pytest.raises(InvalidRequest) as refused:
        registry.create_scheduling_policy(
            "one-too-many", quota_share_policy={"idleResourceAssignmentStrategy": "FIFO"}
        )
    assert str(refused.value) == (
        f"name: an account has at most {MAX_SCHEDULING_POLICIES} scheduling policies per Region "
        f"(the emulator's bound: AWS documents none) and this one has {MAX_SCHEDULING_POLICIES}; "
        "delete one first"
    )
