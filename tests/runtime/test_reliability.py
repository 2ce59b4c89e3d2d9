"""Under injected throttling, server errors and lost responses, 1,000 submissions make exactly
1,000 jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from quota_constructs.commands.demo import emulator_client
from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime import (
    Backoff,
    JobStatus,
    JobSubmission,
    RetryOptions,
    Until,
)
from tests.runtime.helpers import FAST_RETRIES, faulty_emulator, runs_for, training_job, write_org

pytestmark = pytest.mark.slow  # minutes of requests: `make test`, not `make check`

JOBS = 1000


def test_thousand_submissions_under_faults_make_exactly_a_thousand_jobs(tmp_path: Path) -> None:
    org = write_org(
        tmp_path,
        "bulk",
        "  - name: A\n    capacity: {ml.g5.xlarge: 400}\n    strategy: LEND\n"
        "  - name: B\n    capacity: {ml.g5.xlarge: 100}\n    strategy: LEND_AND_BORROW\n",
    )
    with faulty_emulator(org, throttle=0.20, server_error=0.05) as emu:
        client = emulator_client(
            emu,
            organisation="bulk",
            retry=FAST_RETRIES,
            submit_retry=FAST_RETRIES,  # adaptive mode would rate-limit in real time
            backoff=Backoff(initial=30, maximum=120),
        )
        submissions = [
            JobSubmission(f"job-{i}", "AB"[i % 2], training_job(), tags=runs_for(300 + i % 7))
            for i in range(JOBS)
        ]
        outcomes = client.submit_many(submissions)
        assert [o.error for o in outcomes if not o.ok] == []
        ids = [o.job_id for o in outcomes if o.job_id]
        assert len(set(ids)) == JOBS

        result = client.wait(ids, until=Until.TERMINAL, timeout=6 * 3600)
        assert len(result.jobs) == JOBS
        assert {j.status for j in result.jobs.values()} == {JobStatus.SUCCEEDED}

        every = client.list(statuses=[JobStatus.SUCCEEDED, JobStatus.FAILED])
        assert sorted(j.job_id for j in every) == sorted(ids)  # none lost, none duplicated
        counts = emu.request_counts
        assert counts["SubmitServiceJob"] > JOBS  # faults happened and were retried


def every_job_id(emu: EmulatorServer, queue: str) -> list[str]:
    """Ids of every job of ``queue`` in every status (a ``JOB_NAME`` filter lists them all)."""
    batch = FAST_RETRIES.apply(
        emu.client("batch", retries={"mode": "standard", "total_max_attempts": 12})
    )
    pages = batch.get_paginator("list_service_jobs").paginate(
        jobQueue=queue, filters=[{"name": "JOB_NAME", "values": ["*"]}]
    )
    return [job["jobId"] for page in pages for job in page["jobSummaryList"]]


def test_thousand_submissions_with_lost_responses_make_exactly_a_thousand_jobs(
    tmp_path: Path,
) -> None:
    """5 % of submits take effect but answer 500; retries must find the first job, not add one."""
    org = write_org(
        tmp_path,
        "lossy",
        "  - name: A\n    capacity: {ml.g5.xlarge: 400}\n    strategy: LEND\n"
        "  - name: B\n    capacity: {ml.g5.xlarge: 100}\n    strategy: LEND_AND_BORROW\n",
    )
    plan = FaultPlan(
        throttle={"*": 0.20},
        server_error={"*": 0.05},
        lost_response={"SubmitServiceJob": 0.05},
        seed=5,
    )
    with EmulatorServer(org_files=[org], clock="virtual", faults=plan) as emu:
        client = emulator_client(
            emu,
            organisation="lossy",
            retry=FAST_RETRIES,
            submit_retry=FAST_RETRIES,
            backoff=Backoff(initial=30, maximum=120),
        )
        submissions = [
            JobSubmission(f"job-{i}", "AB"[i % 2], training_job(), tags=runs_for(300 + i % 7))
            for i in range(JOBS)
        ]
        outcomes = client.submit_many(submissions, resubmit_rounds=6)
        # At these rates botocore's retry quota (500 tokens a client; a retry takes 5 after
        # throttling, 14 after a 500, and only a 2xx answer gives one back) runs dry and some
        # submits end in a 500 after its retries; submit_many submits those again with the same
        # clientToken. The emulator rejects a repeated token as AWS documents (a 400, which
        # gives no token back, hence more rounds than the default 3), and the runtime finds the
        # job the lost request created rather than creating a second one.
        assert emu.emulator.jobs.client_token_mode == "reject"
        assert [o.error for o in outcomes if not o.ok] == []
        ids = [o.job_id for o in outcomes if o.job_id]
        assert len(set(ids)) == JOBS
        lost = emu.fault_counts["SubmitServiceJob"]["lost"]
        assert lost >= 25  # the fault really hit: about 5 % of the submit requests
        assert sorted(every_job_id(emu, "lossy-queue")) == sorted(ids)  # none lost, none extra
        assert len(emu.emulator.jobs.submitted) == JOBS

        # The caller runs its script again (say after a crash): the derived clientToken finds
        # the jobs already there instead of submitting them twice.
        rerun = client.submit_many(submissions[:200], resubmit_rounds=6)
        assert [o.job_id for o in rerun] == ids[:200]
        assert len(every_job_id(emu, "lossy-queue")) == JOBS
        # already_submitted is certain only when the rerun's first request was the one rejected
        # (not after a throttled or lost attempt of the same call)
        assert sum(o.already_submitted for o in rerun) > 100

        result = client.wait(ids, until=Until.TERMINAL, timeout=6 * 3600)
        assert len(result.jobs) == JOBS
        assert {j.status for j in result.jobs.values()} == {JobStatus.SUCCEEDED}
        every = client.list(statuses=[JobStatus.SUCCEEDED, JobStatus.FAILED])
        assert sorted(j.job_id for j in every) == sorted(ids)
        counts = emu.request_counts
        assert counts["SubmitServiceJob"] > JOBS + 200 + lost  # faults were retried


def test_terminate_many_reports_failed_batches_per_job_and_carries_on(tmp_path: Path) -> None:
    org = write_org(
        tmp_path, "small", "  - name: A\n    capacity: {ml.g5.xlarge: 2}\n    strategy: RESERVE\n"
    )
    plan = FaultPlan(server_error={"TerminateServiceJobs": 1.0})
    with EmulatorServer(org_files=[org], clock="virtual", faults=plan) as emu:
        client = emulator_client(
            emu, organisation="small", retry=RetryOptions(max_attempts=2, backoff_scale=0.01)
        )
        jobs = [client.submit(f"j{i}", "A", training_job()) for i in range(60)]
        result = client.terminate_many(jobs, reason="cleanup")
        assert not result.ok and result.terminated == ()
        assert set(result.errors) == {j.job_id for j in jobs}
        assert all(m.startswith("ServerException") for m in result.errors.values())
        assert emu.request_counts["TerminateServiceJobs"] == 4  # 2 batches x 2 attempts
