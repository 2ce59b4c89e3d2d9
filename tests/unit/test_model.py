"""Domain model rules: the single source of truth every consumer relies on."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs.model import (
    REASON_BORROWABLE,
    REASON_SE_MAX,
    REASON_SHARE_AND_BORROW_LIMIT,
    REASON_SHARE_LIMIT,
    JobQueueSpec,
    JobStatus,
    Organisation,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
    capacity_demand,
    check_job_settings,
    check_scheduling_priority,
)

G5 = "ml.g5.xlarge"
P4 = "ml.p4d.24xlarge"


def share(
    name: str = "team-a", capacity: dict[str, int] | None = None, **kw: object
) -> QuotaShareSpec:
    return QuotaShareSpec(
        name=name,
        capacity=capacity if capacity is not None else {G5: 1},
        strategy=kw.pop("strategy", SharingStrategy.LEND),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def paths(problems: list) -> list[str]:
    return [p.path for p in problems]


def test_seed_demo_capacity_is_the_sum_of_the_shares() -> None:
    queue = JobQueueSpec(
        shares=(
            share("QS1", strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=200),
            share("QS2", strategy=SharingStrategy.LEND),
            share("QS3", strategy=SharingStrategy.RESERVE),
        )
    )
    assert queue.service_environment_capacity() == {G5: 3}
    assert [queue.max_usable(s, G5) for s in ("QS1", "QS2", "QS3")] == [2, 1, 1]


def test_service_environment_sums_each_instance_type_separately() -> None:
    queue = JobQueueSpec(shares=(share("a", {G5: 2, P4: 1}), share("b", {G5: 3})))
    assert queue.service_environment_capacity() == {G5: 5, P4: 1}


def test_borrow_limit_is_a_percent_of_own_capacity_capped_by_lendable() -> None:
    queue = JobQueueSpec(
        shares=(
            share("b", {G5: 4}, strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=50),
            share("l", {G5: 10}, strategy=SharingStrategy.LEND),
            share("r", {G5: 10}, strategy=SharingStrategy.RESERVE),
        )
    )
    assert queue.max_usable("b", G5) == 4 + 2
    assert queue.max_usable("l", G5) == 10


def test_unlimited_borrow_takes_every_lender_but_never_reserve() -> None:
    queue = JobQueueSpec(
        shares=(
            share("b", {G5: 1}, strategy=SharingStrategy.LEND_AND_BORROW),
            share("l", {G5: 3}, strategy=SharingStrategy.LEND_AND_BORROW),
            share("r", {G5: 5}, strategy=SharingStrategy.RESERVE),
        )
    )
    assert queue.share("b").effective_borrow_limit == -1
    assert queue.share("b").borrow_cap(G5) == math.inf
    assert queue.max_usable("b", G5) == 4


def test_borrow_limit_zero_is_kept_and_means_no_borrowing() -> None:
    queue = JobQueueSpec(
        shares=(
            share("b", {G5: 2}, strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=0),
            share("l", {G5: 3}),
        )
    )
    assert queue.share("b").effective_borrow_limit == 0
    assert queue.max_usable("b", G5) == 2


def test_share_without_a_limit_for_a_type_cannot_run_it() -> None:
    queue = JobQueueSpec(
        shares=(share("b", {G5: 2}, strategy=SharingStrategy.LEND_AND_BORROW), share("l", {P4: 2}))
    )
    assert queue.max_usable("b", P4) == 0


@pytest.mark.parametrize(
    ("demand", "reason"),
    [
        ({G5: 9}, REASON_SE_MAX),
        ({G5: 5}, REASON_SHARE_AND_BORROW_LIMIT),
        ({G5: 4}, None),
    ],
)
def test_infeasibility_uses_the_documented_aws_reasons(demand: dict, reason: str | None) -> None:
    # Reference 2.6: limit 2, borrow 100 => at most 4.
    queue = JobQueueSpec(
        shares=(
            share("b", {G5: 2}, strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=100),
            share("l", {G5: 6}),
        )
    )
    assert queue.infeasibility("b", demand) == reason


def test_infeasibility_of_reserve_share_above_its_limit() -> None:
    queue = JobQueueSpec(
        shares=(share("r", {G5: 4}, strategy=SharingStrategy.RESERVE), share("l", {G5: 4}))
    )
    assert queue.infeasibility("r", {G5: 5}) == REASON_SHARE_LIMIT


def test_infeasibility_when_borrowing_exceeds_all_borrowable_capacity() -> None:
    # Reference 2.6: A and B 4 each, borrow limit 200; a job of 10 exceeds the 8 configured.
    queue = JobQueueSpec(
        shares=(
            share("A", {G5: 4}, strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=200),
            share("B", {G5: 4}, strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=200),
            share("C", {G5: 4}, strategy=SharingStrategy.RESERVE),
        )
    )
    assert queue.infeasibility("A", {G5: 10}) == REASON_BORROWABLE
    assert queue.max_usable("A", G5) == 8


def test_valid_queue_has_no_problems() -> None:
    queue = JobQueueSpec(shares=(share("a"), share("b")), priority=1000)
    assert queue.problems() == []
    assert queue.validate() is queue


def test_rejects_borrow_limit_without_lend_and_borrow() -> None:
    problems = JobQueueSpec(shares=(share("a", borrow_limit=10),)).problems()
    assert paths(problems) == ["shares[0].borrow_limit"]
    assert "only allowed with strategy LEND_AND_BORROW, not LEND" in problems[0].message
    assert "set strategy: LEND_AND_BORROW" in problems[0].fix


def test_rejects_borrow_limit_below_minus_one() -> None:
    problems = JobQueueSpec(
        shares=(share("a", strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=-2),)
    ).problems()
    assert paths(problems) == ["shares[0].borrow_limit"]
    assert problems[0].value == -2


@pytest.mark.parametrize("name", ["", "has space", "dot.name", "x" * 129, "ünïcode"])
def test_rejects_bad_share_names(name: str) -> None:
    problems = JobQueueSpec(shares=(share(name),)).problems()
    assert paths(problems) == ["shares[0].name"]
    assert "letters, digits, '-' or '_'" in problems[0].message


def test_rejects_duplicate_share_names_naming_the_first() -> None:
    problems = JobQueueSpec(shares=(share("a"), share("b"), share("a"))).problems()
    assert paths(problems) == ["shares[2].name"]
    assert "shares[0] has the same name" in problems[0].message


def test_rejects_more_than_twenty_shares() -> None:
    problems = JobQueueSpec(shares=tuple(share(f"s{i}") for i in range(21))).problems()
    assert paths(problems) == ["shares"]
    assert "1 to 20 quota shares" in problems[0].message


def test_rejects_queue_without_shares() -> None:
    assert paths(JobQueueSpec(shares=()).problems()) == ["shares"]


def test_rejects_six_capacity_limits() -> None:
    sizes = ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")
    capacity = {f"ml.g5.{size}": 1 for size in sizes}
    problems = JobQueueSpec(shares=(share("a", capacity),)).problems()
    assert paths(problems) == ["shares[0].capacity"]
    assert "1 to 5 capacity limits" in problems[0].message


def test_rejects_empty_capacity() -> None:
    assert paths(JobQueueSpec(shares=(share("a", {}),)).problems()) == ["shares[0].capacity"]


@pytest.mark.parametrize("itype", ["g5.xlarge", "ml.g5", "ML.G5.XLARGE", "ml..xlarge"])
def test_rejects_instance_types_that_are_not_sagemaker_training_types(itype: str) -> None:
    problems = JobQueueSpec(shares=(share("a", {itype: 1}),)).problems()
    assert paths(problems) == [f"shares[0].capacity.{itype}"]
    assert "ml.<family>.<size>" in problems[0].message


@pytest.mark.parametrize("count", [0, -1, True, 1.5])
def test_rejects_capacity_below_one_or_not_an_integer(count: object) -> None:
    problems = JobQueueSpec(shares=(share("a", {G5: count}),)).problems()  # type: ignore[dict-item]
    assert paths(problems) == [f"shares[0].capacity.{G5}"]


@pytest.mark.parametrize("priority", [-1, 1001])
def test_rejects_queue_priority_out_of_range(priority: int) -> None:
    problems = JobQueueSpec(shares=(share(),), priority=priority).problems()
    assert paths(problems) == ["job_queue.priority"]
    assert "between 0 and 1000" in problems[0].message


@pytest.mark.parametrize("minutes", [9, 1441])
def test_rejects_runnable_timeout_out_of_range(minutes: int) -> None:
    problems = JobQueueSpec(shares=(share(),), runnable_timeout_minutes=minutes).problems()
    assert paths(problems) == ["job_queue.runnable_timeout_minutes"]


@pytest.mark.parametrize("name", ["1abc", "has_underscore", "", "a" * 65])
def test_rejects_bad_organisation_names(name: str) -> None:
    org = Organisation(name=name, queue=JobQueueSpec(shares=(share(),)))
    assert paths(org.problems()) == ["organisation"]


def test_rejects_reserved_tag_prefix_and_long_values() -> None:
    org = Organisation(
        name="ok", queue=JobQueueSpec(shares=(share(),)), tags={"aws:x": "1", "k": "v" * 257}
    )
    assert paths(org.problems()) == ["tags.aws:x", "tags.k"]


def test_validate_raises_one_error_listing_every_problem() -> None:
    org = Organisation(name="bad org", queue=JobQueueSpec(shares=(share("x y", borrow_limit=5),)))
    with pytest.raises(QuotaConfigError) as info:
        org.validate(context="orgs/bad.yaml")
    message = str(info.value)
    assert message.startswith("orgs/bad.yaml: 3 problems:")
    assert "shares[0].name" in message and "shares[0].borrow_limit" in message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("priority", [0, 9999])
def test_scheduling_priority_bounds_are_inclusive(priority: int) -> None:
    assert check_scheduling_priority(priority) == []


@pytest.mark.parametrize("priority", [-1, 10000, "5"])
def test_rejects_scheduling_priority_out_of_range(priority: object) -> None:
    problems = check_scheduling_priority(priority)
    assert "between 0 and 9999" in problems[0].message


def test_capacity_demand_reads_instance_type_and_count() -> None:
    payload = {"ResourceConfig": {"InstanceType": G5, "InstanceCount": 2, "VolumeSizeInGB": 30}}
    assert capacity_demand(payload) == {G5: 2}


def test_capacity_demand_counts_heterogeneous_instance_groups() -> None:
    groups = [
        {"InstanceType": G5, "InstanceCount": 2, "InstanceGroupName": "a"},
        {"InstanceType": P4, "InstanceCount": 1, "InstanceGroupName": "b"},
        {"InstanceType": G5, "InstanceCount": 1, "InstanceGroupName": "c"},
    ]
    assert capacity_demand({"ResourceConfig": {"InstanceGroups": groups}}) == {G5: 3, P4: 1}


def test_rejects_payload_without_resource_config() -> None:
    with pytest.raises(QuotaConfigError, match=r"serviceRequestPayload.ResourceConfig"):
        capacity_demand({"AlgorithmSpecification": {}})


def test_rejects_payload_with_a_non_training_instance_type() -> None:
    with pytest.raises(QuotaConfigError, match=r"InstanceType.*ml.<family>.<size>"):
        capacity_demand({"ResourceConfig": {"InstanceType": "p4d.24xlarge", "InstanceCount": 1}})


strategies = st.sampled_from(list(SharingStrategy))
shares_st = st.lists(
    st.builds(
        lambda i, cap, strat, bl: QuotaShareSpec(
            name=f"s{i}",
            capacity={G5: cap},
            strategy=strat,
            borrow_limit=bl if strat is SharingStrategy.LEND_AND_BORROW else None,
        ),
        st.integers(0, 10_000),
        st.integers(1, 8),
        strategies,
        st.one_of(st.none(), st.integers(-1, 400)),
    ),
    min_size=1,
    max_size=20,
    unique_by=lambda s: s.name,
)


@given(shares_st)
def test_max_usable_is_between_own_limit_and_the_service_environment(shares: list) -> None:
    queue = JobQueueSpec(shares=tuple(shares))
    se = queue.service_environment_capacity()[G5]
    for s in shares:
        usable = queue.max_usable(s.name, G5)
        assert s.limit(G5) <= usable <= se
        if not s.strategy.borrows:
            assert usable == s.limit(G5)
        assert queue.infeasibility(s.name, {G5: usable}) is None
        assert queue.infeasibility(s.name, {G5: usable + 1}) is not None


def test_job_status_sets_partition_the_states() -> None:
    dispatched = {s for s in JobStatus if s.is_dispatched}
    assert dispatched == {JobStatus.SCHEDULED, JobStatus.STARTING, JobStatus.RUNNING}
    assert {s for s in JobStatus if s.is_terminal} == {JobStatus.SUCCEEDED, JobStatus.FAILED}
    assert all(s.is_active != s.is_terminal for s in JobStatus)


def test_job_settings_accept_unset_and_bounds() -> None:
    assert check_job_settings(None, None) == []
    assert check_job_settings(1, 0) == []
    assert check_job_settings(10, 100) == []


@pytest.mark.parametrize(
    ("attempts", "preemptions", "path"),
    [
        (0, None, "retryStrategy.attempts"),
        (11, None, "retryStrategy.attempts"),
        (None, -1, "preemptionConfiguration.preemptionRetriesBeforeTermination"),
    ],
)
def test_rejects_job_settings_out_of_range(
    attempts: object, preemptions: object, path: str
) -> None:
    assert paths(check_job_settings(attempts, preemptions)) == [path]
