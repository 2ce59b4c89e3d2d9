"""``quota status`` against the emulator over HTTP: every figure checked against its scheduler."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.commands._common import ExitCode
from quota_constructs.commands.demo import emulator_client
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.model import QuotaShareSpec, SharingStrategy
from quota_constructs.runtime import QueueClient, QueueSnapshot
from quota_constructs.runtime.jobs import JobSummary, QueuePosition
from quota_constructs.runtime.status import (
    CALLS_PER_REFRESH,
    Loan,
    QueueStatus,
    derive_status,
    read_status,
)
from quota_constructs.scheduling import Job, JobRequest, Scheduler
from tests.runtime.helpers import runs_for, training_job

ROOT = Path(__file__).resolve().parents[2]
GPU = "ml.g5.xlarge"
runner = CliRunner()


def scheduler(emu: EmulatorServer) -> Scheduler:
    return emu.emulator.jobs.schedulers[emu.organisation("seed-demo").job_queue_name]


def tutorial_step_1(client: QueueClient, emu: EmulatorServer) -> dict[int, str]:
    """QS1 submits priorities 3, 2, 1: p3 runs on its own, p2 borrows QS2's GPU, p1 waits."""
    ids = {
        p: client.submit(f"qs1-p{p}", "QS1", training_job(), priority=p, tags=runs_for(3600)).job_id
        for p in (3, 2, 1)
    }
    emu.advance(10)
    return ids


def assert_matches_scheduler(view: QueueStatus, emu: EmulatorServer) -> None:
    """Every figure of every row is what the emulator's scheduler holds."""
    core = scheduler(emu)
    ledger = core.ledger()
    loans: dict[tuple[str, str], int] = {}
    for job in core.jobs:
        for lender, amounts in job.alloc.items():
            if lender != job.share_name:
                loans[(job.share_name, lender)] = (
                    loans.get((job.share_name, lender), 0) + amounts[GPU]
                )
    fronts = core.snapshot().front_of_shares
    assert [r.share for r in view.rows] == list(ledger)
    for row in view.rows:
        share = ledger[row.share]
        assert row.limit == share.limit.get(GPU, 0)
        assert row.in_use == share.used.get(GPU, 0)
        assert row.borrowed_total == share.borrowed.get(GPU, 0)
        assert row.lent_total == share.lent.get(GPU, 0)
        assert row.idle == share.idle.get(GPU, 0)
        assert {(row.share, ln.share): ln.quantity for ln in row.borrowed} == {
            k: n for k, n in loans.items() if k[0] == row.share
        }
        assert {(ln.share, row.share): ln.quantity for ln in row.lent} == {
            k: n for k, n in loans.items() if k[1] == row.share
        }
        mine = [j for j in core.jobs if j.share_name == row.share]
        assert row.running == sum(j.status.is_dispatched for j in mine)
        assert row.waiting == sum(j.status.value in ("SUBMITTED", "RUNNABLE") for j in mine)
        front = fronts.get(row.share, ())
        assert (row.head.job_id if row.head else None) == (front[0].job_id if front else None)
        if row.head is not None:  # derived from the figures, in the scheduler's own words
            assert row.head.derived
            assert row.head.reason == emu.explain(row.head.job_id)["pending"]["message"]


def test_tutorial_borrowing_matches_the_scheduler(emu: EmulatorServer, client: QueueClient) -> None:
    ids = tutorial_step_1(client, emu)
    view = read_status(client)
    assert_matches_scheduler(view, emu)
    qs1, qs2, qs3 = (view.row(s, GPU) for s in ("QS1", "QS2", "QS3"))
    assert (qs1.limit, qs1.in_use, qs1.borrowed, qs1.idle) == (1, 2, (Loan("QS2", 1),), 0)
    assert (qs1.running, qs1.waiting) == (2, 1)
    assert qs1.head is not None and qs1.head.job_id == ids[1]
    assert "lending shares have 0 idle" in qs1.head.reason
    assert (qs2.in_use, qs2.lent, qs2.idle, qs2.head) == (0, (Loan("QS1", 1),), 0, None)
    assert (qs3.in_use, qs3.borrowed, qs3.lent, qs3.idle) == (0, (), (), 1)


def test_cross_share_preemption_ends_the_loan(emu: EmulatorServer, client: QueueClient) -> None:
    ids = tutorial_step_1(client, emu)
    client.submit("qs2-job", "QS2", training_job(), priority=1, tags=runs_for(3600))
    emu.advance(10)
    view = read_status(client)
    assert_matches_scheduler(view, emu)
    qs1, qs2 = view.row("QS1", GPU), view.row("QS2", GPU)
    assert (qs1.in_use, qs1.borrowed, qs1.running, qs1.waiting) == (1, (), 1, 2)
    assert qs1.head is not None and qs1.head.job_id == ids[2]
    assert (qs2.in_use, qs2.lent, qs2.running) == (1, (), 1)


def test_derives_why_the_head_waits_when_batch_says_nothing() -> None:
    with EmulatorServer(org_files=[SEED_DEMO], explain_pending=False) as emu:
        client = emulator_client(emu)
        tutorial_step_1(client, emu)
        for n in (1, 2):
            client.submit(f"qs3-{n}", "QS3", training_job(), tags=runs_for(3600 + n))
        emu.advance(10)
        view = read_status(client)
    qs1, qs3 = view.row("QS1", GPU), view.row("QS3", GPU)
    assert qs1.head is not None and qs1.head.derived
    assert qs1.head.reason == f"needs to borrow 1 x {GPU}; lending shares have 0 idle"
    assert qs3.head is not None and qs3.head.derived
    assert qs3.head.reason == f"quota share QS3 uses 1 of its 1 x {GPU}; the job needs 1"
    assert qs3.head.status_reason == ""


def test_shows_batchs_misconfiguration_reason(emu: EmulatorServer, client: QueueClient) -> None:
    request = {
        "jobName": "too-big",
        "jobQueue": client.queue,
        "serviceJobType": "SAGEMAKER_TRAINING",
        "quotaShareName": "QS3",
        "serviceRequestPayload": json.dumps(training_job(count=2).payload("too-big")),
    }
    job_id = emu.client("batch").submit_service_job(**request)["jobId"]
    emu.advance(10)
    head = read_status(client).row("QS3", GPU).head
    assert head is not None and head.job_id == job_id and not head.derived
    assert head.reason.startswith("MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED")


def test_one_refresh_costs_eight_calls(emu: EmulatorServer, client: QueueClient) -> None:
    tutorial_step_1(client, emu)
    read_status(client)  # the first also reads the queue's ARN once
    before = dict(emu.request_counts)
    view = read_status(client)
    after = emu.request_counts
    spent = {op: n - before.get(op, 0) for op, n in after.items() if n != before.get(op, 0)}
    assert spent == {"ListQuotaShares": 1, "GetJobQueueSnapshot": 1, "ListServiceJobs": 6}
    assert view.api_calls == CALLS_PER_REFRESH == 8


def test_loans_go_to_lenders_in_share_order() -> None:
    shares = [
        QuotaShareSpec("A", {GPU: 2}, SharingStrategy.LEND_AND_BORROW),
        QuotaShareSpec("B", {GPU: 2}, SharingStrategy.RESERVE),
        QuotaShareSpec("C", {GPU: 2}, SharingStrategy.LEND),
        QuotaShareSpec("D", {GPU: 1}, SharingStrategy.LEND),
        QuotaShareSpec("E", {GPU: 1}, SharingStrategy.LEND_AND_BORROW),
    ]
    usage = {"A": {GPU: 4}, "C": {GPU: 1}, "E": {GPU: 2}}
    snapshot = QueueSnapshot(front=(), share_heads={}, usage=usage, total_usage={})
    view = derive_status(shares, snapshot, [], queue="q", read_at=datetime.now(UTC))
    assert view.row("A", GPU).borrowed == (Loan("C", 1), Loan("D", 1))
    assert view.row("E", GPU).borrowed == ()
    assert view.unattributed == {GPU: 1}
    assert view.row("B", GPU).idle == 2 and view.row("B", GPU).lent == ()
    assert view.row("C", GPU).lent == (Loan("A", 1),) and view.row("C", GPU).idle == 0


def quota(emu: EmulatorServer, *args: str) -> subprocess.CompletedProcess[str]:
    """``quota ARGS`` as a process with stdout piped and a 40-column terminal width."""
    env = {**os.environ, **emu.env, "COLUMNS": "40", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    code = "from quota_constructs.commands import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_piped_status_prints_whole_rows(emu: EmulatorServer, client: QueueClient) -> None:
    tutorial_step_1(client, emu)
    done = quota(emu, "status", "-o", "seed-demo")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[1]: line for line in done.stdout.splitlines() if "ml.g5.xlarge" in line}
    assert set(rows) == {"QS1", "QS2", "QS3"}
    assert "LEND_AND_BORROW" in rows["QS1"] and "1 from QS2" in rows["QS1"]
    assert " qs1-p1 " in rows["QS1"] and "lending shares have 0 idle" in rows["QS1"]
    assert "1 to QS1" in rows["QS2"] and "RESERVE" in rows["QS3"]


def test_status_json(emu: EmulatorServer, client: QueueClient) -> None:
    ids = tutorial_step_1(client, emu)
    done = quota(emu, "status", "-o", "seed-demo", "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    qs1 = body["quotaShares"][0]
    assert body["loansDerived"] is True and body["apiCalls"] == 8
    assert qs1["quotaShareName"] == "QS1" and qs1["capacityUnit"] == GPU
    assert (qs1["maxCapacity"], qs1["inUse"], qs1["idle"]) == (1, 2, 0)
    assert qs1["borrowed"] == [{"quotaShareName": "QS2", "quantity": 1}]
    assert qs1["headJob"]["jobId"] == ids[1] and qs1["headJob"]["reasonDerived"] is True
    assert body["quotaShares"][1]["lent"] == [{"quotaShareName": "QS1", "quantity": 1}]


def test_watch_refreshes_until_told_to_stop(emu: EmulatorServer, client: QueueClient) -> None:
    tutorial_step_1(client, emu)
    done = quota(emu, "status", "-o", "seed-demo", "--watch", "--interval", "0", "--refreshes", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("seed-demo-queue at ") == 2
    done = quota(
        emu, "status", "-o", "seed-demo", "-w", "--interval", "0", "--refreshes", "3", "--json"
    )
    assert [len(json.loads(line)["quotaShares"]) for line in done.stdout.splitlines()] == [3, 3, 3]


def test_ctrl_c_stops_watch_with_exit_130(
    emu: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(time, "sleep", interrupted)
    args = ["status", "--endpoint-url", emu.endpoint_url, "-o", "seed-demo", "--watch"]
    result = runner.invoke(app, args)
    assert result.exit_code == ExitCode.INTERRUPTED
    assert "seed-demo-queue at " in result.stdout and "interrupted" in result.stderr


def test_rejects_status_without_a_queue(emu: EmulatorServer) -> None:
    result = runner.invoke(app, ["status"], env={"QUOTA_QUEUE": "", "QUOTA_ORGANISATION": ""})
    assert result.exit_code == ExitCode.USAGE and "--organisation" in result.stderr


def test_watch_on_a_terminal_redraws_in_place(emu: EmulatorServer, client: QueueClient) -> None:
    tutorial_step_1(client, emu)
    main, terminal = pty.openpty()
    env = {**os.environ, **emu.env, "PYTHONPATH": str(ROOT), "COLUMNS": "300", "TERM": "xterm"}
    code = "from quota_constructs.commands import main; main()"
    args = ["status", "-o", "seed-demo", "--watch", "--interval", "0", "--refreshes", "2"]
    with subprocess.Popen(
        [sys.executable, "-c", code, *args], env=env, stdout=terminal, stderr=subprocess.PIPE
    ) as process:
        os.close(terminal)
        shown = b""
        with contextlib.suppress(OSError):  # EIO once the process closed the terminal
            while chunk := os.read(main, 65536):
                shown += chunk
        assert process.wait(timeout=60) == 0
    os.close(main)
    text = shown.decode()
    assert "seed-demo-queue at " in text and "1 from QS2" in text
    assert text.count("seed-demo-queue at ") >= 2  # drawn, then redrawn...
    assert "\x1b[1A" in text  # ...in place: the cursor goes back up over the table


def test_rejects_refreshes_without_watch(emu: EmulatorServer) -> None:
    args = ["status", "--endpoint-url", emu.endpoint_url, "-o", "seed-demo", "--refreshes", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == ExitCode.USAGE and "add --watch" in result.stderr


# --- one owner of the words: the scheduler's pending reasons and quota status agree -----------

LAB, LEND, RESERVE = (
    SharingStrategy.LEND_AND_BORROW,
    SharingStrategy.LEND,
    SharingStrategy.RESERVE,
)


def summary(job: Job) -> JobSummary:
    """``job`` as ``ListServiceJobs`` would list it, with no ``statusReason``."""
    return JobSummary(
        job_id=job.job_id,
        job_name=job.request.job_name,
        job_arn=None,
        status=job.status,
        status_reason="",
        share=job.share_name,
        created_at=None,
        scheduled_at=None,
        started_at=None,
        stopped_at=None,
        capacity_usage=dict(job.demand),
    )


def status_of(core: Scheduler, shares: list[QuotaShareSpec]) -> QueueStatus:
    """``derive_status`` fed the figures the scheduler holds, as the API would report them."""
    snapshot = core.snapshot()
    view = QueueSnapshot(
        front=(),
        share_heads={
            name: tuple(QueuePosition(e.job_id, e.job_id, None) for e in entries)
            for name, entries in snapshot.front_of_shares.items()
        },
        usage=core.usage(),
        total_usage=core.total_usage(),
    )
    jobs = [summary(job) for job in core.jobs if not job.status.is_terminal]
    return derive_status(shares, view, jobs, queue="q", read_at=datetime.now(UTC))


@pytest.mark.parametrize(
    ("shares", "submits", "expected"),
    [
        pytest.param(
            [QuotaShareSpec("A", {GPU: 1}, LAB), QuotaShareSpec("B", {GPU: 1}, LEND)],
            [("A", 1)] * 3,
            f"needs to borrow 1 x {GPU}; lending shares have 0 idle",
            id="no-lendable",
        ),
        pytest.param(
            [QuotaShareSpec("A", {GPU: 2}, RESERVE), QuotaShareSpec("B", {GPU: 1}, LEND)],
            [("A", 2), ("A", 1)],
            f"quota share A uses 2 of its 2 x {GPU}; the job needs 1",
            id="own-capacity",
        ),
        pytest.param(
            [
                QuotaShareSpec("A", {GPU: 2}, LAB, borrow_limit=50),
                QuotaShareSpec("B", {GPU: 4}, LEND),
            ],
            [("A", 1)] * 4,
            f"quota share A borrows 1 x {GPU}; borrowing 1 more would exceed its borrow limit of 1",
            id="borrow-limit",
        ),
        pytest.param(
            [QuotaShareSpec("A", {GPU: 1}, LAB), QuotaShareSpec("B", {GPU: 2}, LEND)],
            [("A", 1), ("A", 3)],
            f"needs to borrow 3 x {GPU}; lending shares have 2 idle",
            id="not-enough-lendable",
        ),
    ],
)
def test_status_and_scheduler_give_the_same_words_for_the_same_figures(
    shares: list[QuotaShareSpec], submits: list[tuple[str, int]], expected: str
) -> None:
    core = Scheduler(queue_name="q", shares=shares)
    for index, (share, n) in enumerate(submits):
        request = JobRequest(f"job-{index}", share, {GPU: n}, priority=0, duration_s=None)
        core.submit(request, now=0)
    core.advance(1)
    view = status_of(core, shares)
    heads = [row.head for row in view.rows if row.head is not None]
    assert heads, "the scenario leaves a head job waiting"
    for head in heads:
        pending = core.pending_reason(head.job_id)
        assert pending is not None
        assert head.derived and head.reason == pending.message
    assert expected in [head.reason for head in heads]
