"""Property: the composite accepts exactly what the domain model accepts, and renders it whole."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template
from hypothesis import event, given, settings
from hypothesis import strategies as st

from quota_constructs.constructs import QuotaManagedTrainingQueue
from quota_constructs.model import JobQueueSpec, QuotaConfigError, QuotaShareSpec, SharingStrategy
from tests.constructs.helpers import make_stack

TYPES = ["ml.g5.xlarge", "ml.p4d.24xlarge", "ml.m5.large", "ml.trn1.32xlarge", "ml.g6.2xlarge"]
NAMES = st.sampled_from(["a", "b", "team-a", "team_b", "bad name", "c"])


@st.composite
def share_specs(draw: Any, valid: bool) -> QuotaShareSpec:
    """A share; with ``valid`` every field is within the rules, otherwise anything goes."""
    strategy = draw(st.sampled_from(list(SharingStrategy)))
    types = st.sampled_from(TYPES) if valid else st.sampled_from([*TYPES, "NUM_INSTANCES"])
    counts = st.integers(min_value=1 if valid else 0, max_value=8)
    capacity = draw(
        st.dictionaries(types, counts, min_size=1 if valid else 0, max_size=5 if valid else 6)
    )
    borrow = st.integers(min_value=-1, max_value=300) if valid else st.integers(-2, 300)
    lends_and_borrows = strategy is SharingStrategy.LEND_AND_BORROW
    return QuotaShareSpec(
        name=draw(st.text("ab-_", min_size=1, max_size=6) if valid else NAMES),
        capacity=capacity,
        strategy=strategy,
        borrow_limit=draw(
            st.one_of(st.none(), borrow) if lends_and_borrows or not valid else st.none()
        ),
        in_share_preemption=draw(st.booleans()),
    )


shares = st.one_of(
    st.lists(share_specs(valid=True), min_size=1, max_size=5, unique_by=lambda s: s.name),
    st.lists(share_specs(valid=False), min_size=0, max_size=4),
)
queue_specs = st.builds(
    JobQueueSpec,
    shares=shares.map(tuple),
    priority=st.one_of(st.integers(0, 1000), st.integers(-1, 1001)),
    runnable_timeout_minutes=st.one_of(st.none(), st.integers(10, 1440), st.integers(5, 1500)),
)


@pytest.mark.slow
@settings(max_examples=40)
@given(spec=queue_specs)
def test_composite_accepts_exactly_what_the_model_accepts(spec: JobQueueSpec) -> None:
    stack = make_stack()
    problems = spec.problems()
    event("rejected" if problems else "accepted")
    if problems:
        with pytest.raises(QuotaConfigError) as error:
            QuotaManagedTrainingQueue(stack, "Q", spec=spec)
        assert error.value.problems == tuple(problems)
        assert str(error.value).startswith("Test/Q: ")
        return
    QuotaManagedTrainingQueue(stack, "Q", spec=spec)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Batch::QuotaShare", len(spec.shares))
    [environment] = template.find_resources("AWS::Batch::ServiceEnvironment").values()
    rendered = {
        limit["CapacityUnit"]: limit["MaxCapacity"]
        for limit in environment["Properties"]["CapacityLimits"]
    }
    assert rendered == spec.service_environment_capacity()
    for share in template.find_resources("AWS::Batch::QuotaShare").values():
        props = share["Properties"]
        model = spec.share(props["QuotaShareName"])
        assert props["ResourceSharingConfiguration"].get("BorrowLimit") == (
            model.effective_borrow_limit
        )


def test_composite_is_a_construct_not_a_stack() -> None:
    stack = make_stack()
    queue = QuotaManagedTrainingQueue(
        stack, "Q", spec=[QuotaShareSpec("a", {"ml.g5.xlarge": 1}, SharingStrategy.LEND)]
    )
    assert cdk.Stack.of(queue) is stack
