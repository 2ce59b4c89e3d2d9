"""Properties of the emulator over HTTP.

- It adds no scheduling of its own: random workloads submitted through boto3 over HTTP end in
  the same statuses, priorities and preemption counts as the same requests given directly to a
  scheduler core of the same queue, whether the jobs are named by id or by ARN.
- ListServiceJobs keeps its documented filter rules on random workloads and filters.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quota_constructs.config import load_organisation
from quota_constructs.local.handlers.submit_request import request_from_submit
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.scheduling import Job, Scheduler, SchedulerOptions
from tests.helpers import payload


@dataclass(frozen=True)
class Step:
    """Wait ``wait_s``, then submit a job (or raise an earlier job's priority)."""

    wait_s: int
    share: str
    count: int
    priority: int
    duration_s: int
    raise_job: int | None
    by_arn: bool = False
    """Name the raised job (and describe this one) by ARN instead of id."""


steps = st.lists(
    st.builds(
        Step,
        wait_s=st.integers(0, 120),
        share=st.sampled_from(["QS1", "QS2", "QS3"]),
        count=st.integers(1, 2),
        priority=st.integers(0, 5),
        duration_s=st.integers(30, 600),
        raise_job=st.none() | st.integers(0, 20),
        by_arn=st.booleans(),
    ),
    min_size=1,
    max_size=12,
)


def submit_params(index: int, step: Step) -> dict[str, Any]:
    return {
        "jobName": f"job-{index}",
        "jobQueue": "seed-demo-queue",
        "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": payload(count=step.count),
        "quotaShareName": step.share,
        "schedulingPriority": step.priority,
        "tags": {"quota.local/duration-seconds": str(step.duration_s)},
    }


def run_over_http(workload: list[Step]) -> list[tuple[str, int, int]]:
    with EmulatorServer(org_files=[SEED_DEMO]) as emu:
        batch = emu.client("batch")
        refs: list[tuple[str, str]] = []  # (jobId, jobArn)
        for index, step in enumerate(workload):
            emu.advance(step.wait_s)
            if step.raise_job is not None and step.raise_job < len(refs):
                raised = refs[step.raise_job][step.by_arn]
                batch.update_service_job(jobId=raised, schedulingPriority=9)
            answer = batch.submit_service_job(**submit_params(index, step))
            refs.append((answer["jobId"], answer["jobArn"]))
        emu.advance(300)
        out = []
        for step, ref in zip(workload, refs, strict=True):
            job = batch.describe_service_job(jobId=ref[step.by_arn])
            preempted = job.get("preemptionSummary", {}).get("preemptedAttemptCount", 0)
            out.append((job["status"], job["schedulingPriority"], preempted))
        return out


def run_on_the_core(workload: list[Step]) -> list[tuple[str, int, int]]:
    org = load_organisation(SEED_DEMO)
    limits = SchedulerOptions.time_limits_for(org.queue)
    core = Scheduler(
        queue_name="seed-demo-queue",
        shares=org.queue.shares,
        service_environment=org.queue.service_environment_capacity(),
        options=SchedulerOptions(runnable_time_limits=limits),
    )
    now = 0.0
    jobs: list[Job] = []
    for index, step in enumerate(workload):
        now += step.wait_s
        core.advance(now)
        if step.raise_job is not None and step.raise_job < len(jobs):
            core.update_priority(jobs[step.raise_job].job_id, 9, now=now)
        request = replace(request_from_submit(submit_params(index, step)), job_id=f"j{index}")
        jobs.append(core.submit(request, now=now))
    core.advance(now + 300)
    return [(j.status.value, j.priority, len(j.preemptions)) for j in jobs]


@pytest.mark.slow
@settings(max_examples=25)
@given(steps)
def test_http_and_core_agree_on_every_job(workload: list[Step]) -> None:
    assert run_over_http(workload) == run_on_the_core(workload)


# --- ListServiceJobs filters --------------------------------------------------------------------

NAMES = ["Train-a", "train-A", "train-b", "eval", "TRAIN"]


@dataclass(frozen=True)
class Listed:
    """A job as the property's oracle sees it."""

    name: str
    share: str
    status: str
    created_ms: int


@dataclass(frozen=True)
class Query:
    """A ListServiceJobs request: an optional filter (name, value) and an optional status."""

    filter_name: str | None
    value: str
    status: str | None


jobs_to_list = st.lists(
    st.tuples(st.integers(0, 90), st.sampled_from(NAMES), st.sampled_from(["QS1", "QS2", "QS3"])),
    min_size=1,
    max_size=10,
)
queries = st.builds(
    Query,
    filter_name=st.sampled_from(
        [None, "JOB_NAME", "QUOTA_SHARE_NAME", "BEFORE_CREATED_AT", "AFTER_CREATED_AT"]
    ),
    value=st.sampled_from(["train-a", "TRAIN*", "t*", "*", "eval", "QS1", "QS3"]),
    status=st.none() | st.sampled_from(["RUNNING", "RUNNABLE", "SUCCEEDED"]),
)


def expected(jobs: list[Listed], query: Query, time_ms: int) -> list[str]:
    """The documented rules, written out: which names ListServiceJobs returns, in order."""
    name, value = query.filter_name, query.value
    status: str | None = query.status or "RUNNING"
    if name in ("JOB_NAME", "BEFORE_CREATED_AT", "AFTER_CREATED_AT"):
        status = None  # "the jobStatus parameter is ignored and jobs with any status are returned"

    def keeps(job: Listed) -> bool:
        if status is not None and job.status != status:
            return False
        if name == "JOB_NAME":
            if value.endswith("*"):
                return job.name.lower().startswith(value[:-1].lower())
            return job.name.lower() == value.lower()
        if name == "QUOTA_SHARE_NAME":
            return job.share == value
        if name == "BEFORE_CREATED_AT":
            return job.created_ms < time_ms
        if name == "AFTER_CREATED_AT":
            return job.created_ms > time_ms
        return True

    newest_first = [j for j in reversed(jobs) if keeps(j)]
    if name == "JOB_NAME":  # "grouped by the job name", groups in name order (stable pages)
        newest_first.sort(key=lambda j: j.name)
    return [j.name for j in newest_first]


@pytest.mark.slow
@settings(max_examples=25)
@given(jobs_to_list, queries, st.integers(0, 100))
def test_list_filters_keep_the_documented_rules(
    workload: list[tuple[int, str, str]], query: Query, at_s: int
) -> None:
    with EmulatorServer(org_files=[SEED_DEMO]) as emu:
        batch = emu.client("batch")
        ids = []
        for wait_s, name, share in workload:
            emu.advance(wait_s)
            step = Step(0, share, 1, 0, 600, None)
            ids.append(
                batch.submit_service_job(**{**submit_params(0, step), "jobName": name})["jobId"]
            )
        emu.advance(30)
        described = [batch.describe_service_job(jobId=j) for j in ids]
        jobs = [
            Listed(d["jobName"], d["quotaShareName"], d["status"], d["createdAt"])
            for d in described
        ]
        time_ms = described[0]["createdAt"] + at_s * 1000
        params: dict[str, Any] = {"jobQueue": "seed-demo-queue"}
        if query.filter_name is not None:
            value = str(time_ms) if "CREATED" in query.filter_name else query.value
            params["filters"] = [{"name": query.filter_name, "values": [value]}]
        if query.status is not None:
            params["jobStatus"] = query.status
        pages = batch.get_paginator("list_service_jobs").paginate(
            **params, PaginationConfig={"PageSize": 3}
        )
        listed = [j["jobName"] for page in pages for j in page["jobSummaryList"]]

        assert listed == expected(jobs, query, time_ms)
