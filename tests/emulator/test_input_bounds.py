"""Every list, map and string of a served request is bounded before the emulator's lock: by
botocore's shape, by a number botocore's documentation states, or by the emulator's stated
ceiling; a refusal names the member, the value's size and the bound (issue 41 part 3)."""

from __future__ import annotations

import threading
from itertools import combinations
from typing import Any

from botocore.model import Shape
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs import model
from quota_constructs.local.state.fair_share import _overlaps, overlap
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.local.wire.input_bounds import (
    DEFAULT_LIST_ITEMS,
    MODEL_OWNED,
    default_string_chars,
    documented_limit,
    every_documented,
    member_bound,
)
from quota_constructs.local.wire.protocol import MAX_PROBLEMS_SHOWN, service_model
from tests.emulator.helpers import refusal

JOB_NAMES = "JOB_NAME"


def open_members(service: str, shape: Shape, seen: frozenset[str] = frozenset()) -> list[tuple]:
    """(owner, member, shape) of every list, map and non-enum string under ``shape`` whose own
    shape declares no ``max``."""
    found: list[tuple] = []
    if shape.type_name == "structure" and shape.name not in seen:
        for name, member in shape.members.items():
            found += _open(service, shape.name, name, member, seen | {shape.name})
    return found


def _open(service: str, owner: str, name: str, shape: Shape, seen: frozenset[str]) -> list[tuple]:
    kind = shape.type_name
    here = [(owner, name, shape)]
    if kind == "structure":
        return open_members(service, shape, seen)
    if kind == "list":
        inner = _open(service, shape.name, "member", shape.member, seen)
        return inner + (here if "max" not in shape.metadata else [])
    if kind == "map":
        inner = _open(service, shape.name, "key", shape.key, seen)
        inner += _open(service, shape.name, "value", shape.value, seen)
        return inner + (here if "max" not in shape.metadata else [])
    if kind == "string" and "max" not in shape.metadata and not shape.enum:
        return here
    return []


def test_every_open_member_of_every_served_operation_has_a_bound(emulator: EmulatorServer) -> None:
    unbounded = []
    for service, operations in emulator.emulator.served_operations().items():
        for name in operations:
            shape = service_model(service).operation_model(name).input_shape
            for owner, member, member_shape in open_members(service, shape) if shape else []:
                if member_bound(service, owner, member, member_shape) is None:
                    unbounded.append(f"{service} {owner}.{member}")

    assert unbounded == []


def test_every_documented_bound_is_still_in_botocores_documentation() -> None:
    bounds = every_documented()

    assert bounds[("batch", "TerminateServiceJobsRequest", "jobs")].limit == 50
    assert bounds[("batch", "FairsharePolicy", "shareDistribution")].limit == 500
    assert bounds[("batch", "ShareAttributes", "shareIdentifier")].limit == 256  # 255 and '*'


def test_the_models_own_bounds_are_the_documented_ones() -> None:
    assert documented_limit(MODEL_OWNED["NAME_BODY"]).limit == 128
    assert "{1,128}" in model.NAME_BODY
    assert documented_limit(MODEL_OWNED["MAX_STATUS_REASON_PATTERN"]).limit == (
        model.MAX_STATUS_REASON_PATTERN
    )


def test_rejects_a_filter_with_too_many_values_naming_member_size_and_bound(
    batch: Any, queue: str
) -> None:
    values = [f"job{n}" for n in range(DEFAULT_LIST_ITEMS + 1)]

    message = refusal(
        batch.list_service_jobs, jobQueue=queue, filters=[{"name": JOB_NAMES, "values": values}]
    )
    batch.list_service_jobs(
        jobQueue=queue, filters=[{"name": JOB_NAMES, "values": values[:DEFAULT_LIST_ITEMS]}]
    )

    assert message.startswith(
        f"ListServiceJobs: filters[0].values: a list of up to {DEFAULT_LIST_ITEMS} entries "
        f"(got {DEFAULT_LIST_ITEMS + 1}); stated by the emulator"
    )


def test_rejects_a_fair_share_policy_over_the_documented_500_identifiers(batch: Any) -> None:
    shares = [{"shareIdentifier": f"team{n}"} for n in range(501)]

    message = refusal(
        batch.create_scheduling_policy, name="big", fairsharePolicy={"shareDistribution": shares}
    )
    batch.create_scheduling_policy(name="ok", fairsharePolicy={"shareDistribution": shares[:500]})

    assert "fairsharePolicy.shareDistribution: a list of up to 500 entries (got 501)" in message
    assert "'no more than 500 share identifiers'" in message


def test_rejects_a_string_over_the_stated_ceiling(batch: Any) -> None:
    too_long = "q" * (default_string_chars() + 1)

    message = refusal(batch.list_service_jobs, jobQueue=too_long)

    assert message.startswith(
        f"ListServiceJobs: jobQueue: a string of up to {default_string_chars()} characters "
        f"(got {len(too_long)})"
    )


def test_a_refusal_lists_a_bounded_number_of_problems(batch: Any) -> None:
    refs = ["q" * (default_string_chars() + 1)] * DEFAULT_LIST_ITEMS

    message = refusal(batch.describe_job_queues, jobQueues=refs)

    assert message.count("a string of up to") == MAX_PROBLEMS_SHOWN
    assert message.endswith(f"and {DEFAULT_LIST_ITEMS - MAX_PROBLEMS_SHOWN} more problems")


def test_an_oversize_request_is_refused_while_another_request_holds_the_lock(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    values = ["x"] * (DEFAULT_LIST_ITEMS + 1)
    answered = threading.Event()
    messages: list[str] = []

    def oversize() -> None:
        messages.append(
            refusal(
                batch.list_service_jobs,
                jobQueue=queue,
                filters=[{"name": JOB_NAMES, "values": values}],
            )
        )
        answered.set()

    with emulator.emulator.lock:  # a request in progress holds the state
        caller = threading.Thread(target=oversize)
        caller.start()
        refused_under_the_lock = answered.wait(timeout=60)
    caller.join()

    assert refused_under_the_lock
    assert "filters[0].values: a list of up to" in messages[0]


def test_identical_fair_share_entries_get_one_short_refusal(batch: Any) -> None:
    shares = [{"shareIdentifier": "same"}] * 500

    message = refusal(
        batch.create_scheduling_policy, name="same", fairsharePolicy={"shareDistribution": shares}
    )

    assert "share identifiers can't overlap" in message
    assert "489 more identifiers overlap another" in message
    assert len(message) < 4096


IDENTIFIERS = st.lists(
    st.builds(
        lambda stem, wild: stem + ("*" if wild else ""),
        st.text(alphabet="ab", min_size=1, max_size=3),
        st.booleans(),
    ),
    max_size=8,
)


@given(IDENTIFIERS)
def test_overlaps_found_in_one_sorted_pass_are_the_pairwise_ones(identifiers: list[str]) -> None:
    pairwise = any(overlap(a, b) for a, b in combinations(identifiers, 2))

    assert bool(_overlaps(identifiers, "fairsharePolicy")) == pairwise
