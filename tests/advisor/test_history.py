"""Building a workload from job-history records: every kind of job, counted and handled."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from quota_constructs.advisor.history import (
    Handling,
    handling,
    parse_duration,
    workload_from_history,
)
from quota_constructs.model import QuotaConfigError

T0 = 1_800_000_000.0


@dataclass(frozen=True)
class Rec:
    """A history record with the attributes the conversion reads."""

    share: str = "A"
    status: str = "SUCCEEDED"
    created_s: float = T0 + 100
    first_dispatch_s: float | None = T0 + 130
    run_started_s: float | None = T0 + 130
    run_stopped_s: float | None = T0 + 730
    instance_type: str | None = "ml.g5.xlarge"
    instance_count: int | None = 2
    priority: int = 7
    is_terminated: bool = False
    preemptions: int = 0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90m", 5400), ("1h", 3600), ("7d", 604800), ("30s", 30), ("2w", 1209600), ("1.5h", 5400)],
)
def test_parses_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "7", "d", "1x", "0h", "-1h", "1 day"])
def test_rejects_durations_naming_value_and_format(text: str) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        parse_duration(text)
    problem = caught.value.problems[0]
    assert (problem.path, problem.value) == ("--since", text)
    assert "90m, 1h, 7d" in problem.message


def test_a_succeeded_job_keeps_share_request_priority_and_run_time() -> None:
    workload = workload_from_history([Rec()], start_s=T0, now_s=T0 + 3600)
    (job,) = workload.jobs
    assert (job.submit_time_s, job.share, job.instance_type, job.instance_count) == (
        100,
        "A",
        "ml.g5.xlarge",
        2,
    )
    assert (job.duration_s, job.priority, job.checkpoint_interval_s) == (600, 7, None)
    assert workload.window_s == 3600
    assert dict(workload.counts) == {Handling.SUCCEEDED: 1}


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (Rec(), Handling.SUCCEEDED),
        (Rec(status="FAILED"), Handling.FAILED),
        (Rec(status="FAILED", is_terminated=True), Handling.TERMINATED_RUNNING),
        (Rec(status="RUNNING", run_stopped_s=None), Handling.RUNNING),
        (Rec(status="SCHEDULED", run_started_s=None, run_stopped_s=None), Handling.WAITING),
        (Rec(status="RUNNABLE", first_dispatch_s=None, run_started_s=None), Handling.WAITING),
        (
            Rec(status="FAILED", is_terminated=True, first_dispatch_s=None, run_started_s=None),
            Handling.NEVER_RAN,
        ),
        (Rec(instance_type=None, instance_count=None), Handling.NO_INSTANCE_TYPE),
    ],
)
def test_every_kind_of_job_is_handled(record: Rec, expected: Handling) -> None:
    assert handling(record) is expected
    workload = workload_from_history([record], start_s=T0, now_s=T0 + 3600)
    assert dict(workload.counts) == {expected: 1}
    assert len(workload.jobs) == (1 if expected.replayed else 0)
    assert any(expected.value in line for line in workload.report())


def test_a_running_job_replays_its_run_time_so_far() -> None:
    record = Rec(status="RUNNING", run_stopped_s=None)
    (job,) = workload_from_history([record], start_s=T0, now_s=T0 + 1130).jobs
    assert job.duration_s == 1000


def test_observed_waits_and_preemptions_per_share() -> None:
    records = [
        Rec(),
        Rec(created_s=T0 + 200, first_dispatch_s=T0 + 500, preemptions=2),
        Rec(share="B", status="RUNNABLE", first_dispatch_s=None, run_started_s=None),
    ]
    observed = {s.share: s for s in workload_from_history(records, start_s=T0, now_s=T0).observed}
    assert observed["A"].waits == (30, 300)
    assert (observed["A"].preemptions, observed["A"].preempted_jobs) == (2, 1)
    assert (observed["B"].jobs, observed["B"].started, observed["B"].waits) == (1, 0, ())
