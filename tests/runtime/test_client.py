"""QueueClient against the emulator over HTTP: resolve, check, submit, update, list, terminate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from quota_constructs.commands.demo import emulator_client
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import QuotaConfigError, SharingStrategy
from quota_constructs.runtime import JobStatus, JobSubmission, QueueClient, Until
from tests.runtime.helpers import FAST_RETRIES, runs_for, training_job, write_org


def test_resolves_the_queue_by_organisation_through_ssm(client: QueueClient) -> None:
    assert client.queue.endswith(":job-queue/seed-demo-queue")


def test_live_shares_become_the_model_queue(client: QueueClient) -> None:
    spec = client.spec()
    assert [s.name for s in spec.shares] == ["QS1", "QS2", "QS3"]
    qs1 = spec.share("QS1")
    assert qs1.strategy is SharingStrategy.LEND_AND_BORROW
    assert qs1.borrow_limit == 200 and qs1.in_share_preemption
    assert dict(qs1.capacity) == {"ml.g5.xlarge": 1}
    assert spec.share("QS3").strategy is SharingStrategy.RESERVE
    assert client.describe_share("QS2") == spec.share("QS2")


def test_rejects_unknown_organisation(emu: EmulatorServer) -> None:
    with pytest.raises(QuotaConfigError, match=r"/quota/nope/job-queue/arn.*deploy"):
        emulator_client(emu, organisation="nope")


def test_spec_is_cached_until_refreshed(client: QueueClient, emu: EmulatorServer) -> None:
    client.spec()
    client.spec()
    assert emu.request_counts.get("ListQuotaShares") == 1
    client.refresh()
    assert emu.request_counts.get("ListQuotaShares") == 2


def test_submit_sends_priority_zero_and_the_payload_timeout(client: QueueClient) -> None:
    job = client.submit("zero", "QS1", training_job(), priority=0, tags={"team": "a"})
    details = job.describe()
    assert details.priority == 0
    assert details.attempt_duration_s == 7200
    assert details.share == "QS1"
    assert details.tags["team"] == "a"
    assert json.loads(details.payload or "{}")["TrainingJobName"] == "zero"


def test_repeated_submit_is_idempotent(client: QueueClient) -> None:
    first = client.submit("same", "QS3", training_job())
    second = client.submit("same", "QS3", training_job())  # rejected by Batch, then found
    assert first.job_id == second.job_id
    assert (first.already_submitted, second.already_submitted) == (False, True)
    assert [j.job_id for j in client.list(share="QS3")] == [first.job_id]


def test_rejects_unknown_share_before_sending(client: QueueClient, emu: EmulatorServer) -> None:
    with pytest.raises(QuotaConfigError, match=r"quotaShareName.*QS1, QS2, QS3.*'QS9'"):
        client.submit("x", "QS9", training_job())
    assert "SubmitServiceJob" not in emu.request_counts


def test_rejects_more_instances_than_the_share_can_ever_hold(
    client: QueueClient, emu: EmulatorServer
) -> None:
    with pytest.raises(QuotaConfigError, match=r"at most 2 x ml.g5.xlarge"):
        client.submit("big", "QS1", training_job(count=3))
    with pytest.raises(QuotaConfigError, match=r"not a capacity unit of quota share QS2"):
        client.submit("p4d", "QS2", training_job("ml.p4d.24xlarge"))
    assert "SubmitServiceJob" not in emu.request_counts


def test_rejects_priority_out_of_range_on_submit_and_update(client: QueueClient) -> None:
    with pytest.raises(QuotaConfigError, match="between 0 and 9999"):
        client.submit("p", "QS1", training_job(), priority=10_000)
    job = client.submit("p", "QS1", training_job())
    with pytest.raises(QuotaConfigError, match="between 0 and 9999"):
        client.update_priority(job, -1)


def test_dry_run_renders_without_sending(client: QueueClient, emu: EmulatorServer) -> None:
    request = client.render(JobSubmission("dry", "QS2", training_job(), priority=7))
    assert request["schedulingPriority"] == 7 and request["quotaShareName"] == "QS2"
    assert len(request["clientToken"]) == 64
    assert "SubmitServiceJob" not in emu.request_counts


def test_update_priority_is_seen_by_describe(client: QueueClient) -> None:
    job = client.submit("up", "QS1", training_job(), priority=1)
    client.update_priority(job, 42)
    assert job.describe().priority == 42


def test_list_by_share_and_status(client: QueueClient, emu: EmulatorServer) -> None:
    for p in (3, 2, 1):
        client.submit(f"qs1-{p}", "QS1", training_job(), priority=p, tags=runs_for(3600))
    client.submit("qs3", "QS3", training_job(), tags=runs_for(3600))
    emu.advance(10)
    qs1 = client.list(share="QS1")
    assert sorted(j.job_name for j in qs1) == ["qs1-1", "qs1-2", "qs1-3"]
    runnable = client.list(share="QS1", statuses=[JobStatus.RUNNABLE])
    assert [j.job_name for j in runnable] == ["qs1-1"]
    assert len(client.list()) == 4


def test_list_follows_pages(tmp_path: Path) -> None:
    org = write_org(
        tmp_path, "wide", "  - name: A\n    capacity: {ml.g5.xlarge: 1}\n    strategy: RESERVE\n"
    )
    with EmulatorServer(org_files=[org]) as emu:
        client = emulator_client(emu, organisation="wide", retry=FAST_RETRIES)
        for i in range(230):
            client.submit(f"j{i}", "A", training_job(), tags=runs_for(3600))
        emu.advance(5)
        runnable = client.list(statuses=[JobStatus.RUNNABLE])
        assert len({j.job_id for j in runnable}) == 229
        assert emu.request_counts["ListServiceJobs"] == 3  # pages of 100, 100, 29


def test_terminate_many_batches_by_50(client: QueueClient, emu: EmulatorServer) -> None:
    jobs = [client.submit(f"t{i}", "QS2", training_job(), tags=runs_for(3600)) for i in range(60)]
    result = client.terminate_many(jobs, reason="cleanup")
    assert result.ok and sorted(result.terminated) == sorted(j.job_id for j in jobs)
    assert emu.request_counts["TerminateServiceJobs"] == 2
    final = client.wait(jobs, until=Until.TERMINAL, timeout=600)
    assert {j.status for j in final.jobs.values()} == {JobStatus.FAILED}
    assert all(j.is_terminated for j in final.jobs.values())


def test_terminate_share_leaves_other_shares_alone(
    client: QueueClient, emu: EmulatorServer
) -> None:
    for i in range(3):
        client.submit(f"a{i}", "QS1", training_job(), tags=runs_for(3600))
    keep = client.submit("b", "QS3", training_job(), tags=runs_for(3600))
    emu.advance(5)
    result = client.terminate_share("QS1", reason="share cleanup")
    assert len(result.terminated) == 3
    emu.advance(5)
    assert client.list(share="QS1") == []
    assert [j.job_id for j in client.list()] == [keep.job_id]


def test_snapshot_shows_front_heads_and_usage(client: QueueClient, emu: EmulatorServer) -> None:
    jobs = [
        client.submit(f"s{p}", "QS1", training_job(), priority=p, tags=runs_for(3600))
        for p in (3, 2, 1, 0)
    ]
    emu.advance(10)
    snap = client.snapshot()
    assert snap.usage["QS1"] == {"ml.g5.xlarge": 2}  # own 1 + borrowed 1 from QS2
    assert [p.job_id for p in snap.front] == [jobs[2].job_id, jobs[3].job_id]
    assert snap.position(jobs[2].job_id) == 1 and snap.position(jobs[0].job_id) is None
    assert snap.share_heads["QS1"][0].job_id == jobs[2].job_id


def test_describe_reports_typed_preemption_history(
    client: QueueClient, emu: EmulatorServer
) -> None:
    own = client.submit("own", "QS1", training_job(), priority=3, tags=runs_for(3600))
    borrower = client.submit("borrower", "QS1", training_job(), priority=2, tags=runs_for(3600))
    client.wait([own, borrower], until=Until.RUNNING, timeout=600)
    lender = client.submit("lender", "QS2", training_job(), tags=runs_for(3600))
    client.wait([lender], until=Until.RUNNING, timeout=600)
    history = borrower.describe().preemptions
    assert history.count == 1
    assert "Cross-share preemption" in history.reasons[0]
    assert history.recent[0].stopped_at is not None
    assert own.describe().preemptions.count == 0


def test_batch_refusal_surfaces_as_client_error(client: QueueClient) -> None:
    with pytest.raises(ClientError, match="no service job"):
        client.describe("does-not-exist")


def test_submit_many_reports_each_job_and_never_stops_early(
    client: QueueClient, emu: EmulatorServer
) -> None:
    batch = [
        JobSubmission("ok-1", "QS1", training_job()),
        JobSubmission("bad-share", "QS9", training_job()),
        JobSubmission("too-big", "QS3", training_job(count=2)),
        JobSubmission("ok-2", "QS2", training_job(), priority=0),
    ]
    seen: list[str] = []
    outcomes = client.submit_many(batch, on_result=lambda o: seen.append(o.job_name))
    assert [o.ok for o in outcomes] == [True, False, False, True]
    assert seen == ["ok-1", "bad-share", "too-big", "ok-2"]
    assert "QS9" in (outcomes[1].error or "") and "at most 1" in (outcomes[2].error or "")
    assert emu.request_counts["SubmitServiceJob"] == 2
    assert {j.job_id for j in client.list()} == {outcomes[0].job_id, outcomes[3].job_id}


def test_submit_many_is_paced_to_five_per_second(client: QueueClient, emu: EmulatorServer) -> None:
    start = emu.now
    client.submit_many(JobSubmission(f"p{i}", "QS1", training_job()) for i in range(11))
    assert emu.now - start == pytest.approx(
        2.0
    )  # 11 submissions at 5/s span two seconds of emulated time
    assert client.submit_batch.meta.config.retries["mode"] == "adaptive"
