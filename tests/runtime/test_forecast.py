"""Forecasts and what-ifs over real HTTP against the emulator: each kind of answer (starts now,
waits, preempts, never) is checked against what happens when the job is really submitted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.commands.demo import emulator_client
from quota_constructs.config import load_organisation
from quota_constructs.forecast import RUNTIME_HINT_TAG, WhatIf
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import JobQueueSpec, QuotaConfigError, QuotaShareSpec, SharingStrategy
from quota_constructs.runtime import (
    ForecastOptions,
    JobDetails,
    JobStatus,
    JobSubmission,
    JobSummary,
    QueueClient,
)
from quota_constructs.runtime.forecasting import (
    max_runtime_in,
    max_runtime_of,
    read_history,
    read_queue_state,
)
from quota_constructs.runtime.jobs import ACTIVE_STATUSES, active_jobs
from tests.runtime.helpers import BUILDER, jobs, last_monday, runs_for, training_job

GPU = "ml.g5.xlarge"
ORG = """organisation: seed-demo
shares:
  - {name: QS1, capacity: {ml.g5.xlarge: 1}, strategy: LEND_AND_BORROW, borrow_limit: 200,
     in_share_preemption: true}
  - {name: QS2, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
  - {name: QS3, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}
  - {name: QS4, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}
"""
START = last_monday()


def hinted(seconds: float) -> dict[str, str]:
    """Tags: the emulator runs the job ``seconds``; its run-time hint says the same."""
    return {**runs_for(seconds), RUNTIME_HINT_TAG: str(seconds)}


@pytest.fixture
def busy(tmp_path: Path) -> Iterator[tuple[EmulatorServer, QueueClient, dict[str, str]]]:
    """Jobs running and waiting in several shares: QS1 runs p3 on its own GPU and p2 on QS2's
    (borrowed), p1 waits; QS3 runs one job and one waits; QS4 is idle."""
    org = tmp_path / "org.yaml"
    org.write_text(ORG)
    with EmulatorServer(org_files=[org], start_epoch=START) as emu:
        client = emulator_client(emu)
        ids = {}
        for name, share, priority, seconds in (
            ("qs1-p3", "QS1", 3, 3600),
            ("qs1-p2", "QS1", 2, 3600),
            ("qs1-p1", "QS1", 1, 1800),
            ("qs3-a", "QS3", 0, 1200),
            ("qs3-b", "QS3", 0, 1200),
        ):
            handle = client.submit(
                name, share, training_job(), priority=priority, tags=hinted(seconds)
            )
            ids[name] = handle.job_id
        emu.advance(60)
        yield emu, client, ids


def now_of(emu: EmulatorServer) -> float:
    return START + emu.now


def ask(
    emu: EmulatorServer, client: QueueClient, share: str, *, count: int = 1, **options: Any
) -> WhatIf:
    submission = JobSubmission("new", share, training_job(count=count), **options)
    return client.what_if(submission, now_s=now_of(emu))


def submit(client: QueueClient, share: str, seconds: float, **options: object) -> str:
    return client.submit("new", share, training_job(), tags=hinted(seconds), **options).job_id


def test_what_if_starts_now_and_the_job_then_starts_at_once(busy) -> None:
    emu, client, _ = busy
    answer = ask(emu, client, "QS4", tags=hinted(600))
    assert (answer.outcome, answer.job.preempts) == ("starts_now", ())
    job_id = submit(client, "QS4", 600)
    emu.advance(1)
    assert client.describe(job_id).status.is_dispatched


def test_jobs_submitted_at_one_instant_are_forecast_to_start_in_submit_order(busy) -> None:
    """ListServiceJobs lists the newest first; jobs created in the same millisecond (a virtual
    clock, a burst of submits) are started in the order they were submitted, and so forecast."""
    emu, client, _ = busy
    burst = [client.submit(f"burst-{n}", "QS3", training_job(), tags=hinted(600)) for n in range(3)]
    created = {client.describe(h.job_id).created_at for h in burst}
    assert len(created) == 1  # one instant
    result = client.forecast(now_s=now_of(emu), samples=12)
    medians = [result.jobs[h.job_id].p50_s for h in burst]
    assert medians == sorted(medians) and len(set(medians)) == 3
    started: list[str] = []
    while len(started) < 3:
        emu.advance(60)
        for h in burst:
            if h.job_id not in started and client.describe(h.job_id).status.is_dispatched:
                started.append(h.job_id)
    assert started == [h.job_id for h in burst]


def test_what_if_waits_and_the_job_starts_inside_the_interval(busy) -> None:
    emu, client, _ = busy
    answer = ask(emu, client, "QS3", tags=hinted(600))
    assert answer.outcome == "waits"
    job = answer.job
    assert job.p10_s is not None and job.p90_s is not None
    job_id = submit(client, "QS3", 600)
    submitted = emu.now
    while not client.describe(job_id).status.is_dispatched:
        emu.advance(30)
    started = client.describe(job_id).scheduled_at
    assert started is not None
    waited = started.timestamp() - (START + submitted)
    assert job.p10_s - 60 <= waited <= job.p90_s + 60


def test_what_if_preempts_the_borrower_and_the_submit_reclaims_it(busy) -> None:
    emu, client, ids = busy
    answer = ask(emu, client, "QS2", tags=hinted(600))
    assert answer.outcome == "starts_now"
    [preempt] = answer.job.preempts
    assert (preempt.share, preempt.kind) == ("QS1", "reclaim")
    assert preempt.job_id in (ids["qs1-p2"], ids["qs1-p3"])  # QS1's running jobs
    job_id = submit(client, "QS2", 600)
    emu.advance(5)
    for running in (ids["qs1-p2"], ids["qs1-p3"]):
        records = emu.explain(running)["preemptions"]
        if running == preempt.job_id:
            assert [(r["preemptorJobId"], r["rule"]) for r in records] == [(job_id, "CROSS_SHARE")]
        else:
            assert records == []
    assert client.describe(job_id).status.is_dispatched


def test_what_if_in_share_preemption_matches_the_submit(busy) -> None:
    emu, client, _ = busy
    answer = ask(emu, client, "QS1", priority=9, tags=hinted(600))
    assert answer.outcome == "starts_now"
    [preempt] = answer.job.preempts
    assert preempt.kind == "in_share"
    job_id = submit(client, "QS1", 600, priority=9)
    emu.advance(5)
    record = emu.explain(preempt.job_id)["preemptions"][0]
    assert (record["preemptorJobId"], record["rule"]) == (job_id, "IN_SHARE")


@pytest.fixture
def quiet(tmp_path: Path) -> Iterator[tuple[EmulatorServer, QueueClient]]:
    """The four shares of ``ORG`` with nothing submitted yet."""
    org = tmp_path / "org.yaml"
    org.write_text(ORG)
    with EmulatorServer(org_files=[org], start_epoch=START) as emu:
        yield emu, emulator_client(emu)


def qs1_job(client: QueueClient, name: str, priority: int, seconds: float) -> str:
    handle = client.submit(name, "QS1", training_job(), priority=priority, tags=hinted(seconds))
    return handle.job_id


def assert_in_share_preemption_of(
    emu: EmulatorServer, client: QueueClient, victim: str, priority: int
) -> None:
    """The what-if of a QS1 job of ``priority`` preempts ``victim`` in QS1 and starts now,
    and so does the job when submitted."""
    answer = ask(emu, client, "QS1", priority=priority, tags=hinted(600))
    assert answer.outcome == "starts_now", answer.job.waiting_on
    assert [(p.job_id, p.kind) for p in answer.job.preempts] == [(victim, "in_share")]
    job_id = submit(client, "QS1", 600, priority=priority)
    emu.advance(5)
    record = emu.explain(victim)["preemptions"][0]
    assert (record["preemptorJobId"], record["rule"]) == (job_id, "IN_SHARE")


def test_a_running_job_placed_while_a_finished_one_held_the_share_holds_what_it_borrowed(
    quiet,
) -> None:
    """QS1's own GPU is busy (``first``) when ``borrower`` arrives, so it borrows QS2's; once
    ``first`` has finished, ``own`` takes the own GPU. An in-share preemption frees only what a
    victim holds of QS1's own: a higher-priority job preempts ``own``, not ``borrower`` (the API
    does not say who holds what: the forecast places the finished run where it was)."""
    emu, client = quiet
    qs1_job(client, "first", 1, 600)
    emu.advance(60)
    qs1_job(client, "borrower", 5, 7200)
    emu.advance(700)
    own = qs1_job(client, "own", 2, 7200)
    emu.advance(60)
    assert_in_share_preemption_of(emu, client, own, priority=3)


def test_a_running_job_placed_while_a_preempted_one_held_the_share_holds_what_it_borrowed(
    quiet,
) -> None:
    """As above, with the own GPU held then by ``first``, preempted since by ``own`` and
    waiting again: its preempted attempt (DescribeServiceJob's ``attempts``) is placed too."""
    emu, client = quiet
    first = qs1_job(client, "first", 1, 7200)
    emu.advance(60)
    qs1_job(client, "borrower", 5, 7200)
    emu.advance(60)
    own = qs1_job(client, "own", 3, 7200)
    emu.advance(60)
    assert client.describe(first).status is JobStatus.RUNNABLE
    assert client.describe(first).attempt_windows
    assert_in_share_preemption_of(emu, client, own, priority=4)


def test_what_if_never_and_the_submit_waits_forever(busy) -> None:
    emu, client, _ = busy
    answer = ask(emu, client, "QS3", count=2)
    assert answer.outcome == "never"
    assert "more than quota share QS3 can ever use" in answer.reason
    with pytest.raises(QuotaConfigError, match="at most 1"):
        client.submit("new", "QS3", training_job(count=2))
    batch = client.batch  # sent as is, around the runtime's checks: Batch keeps it waiting
    request = JobSubmission("raw", "QS3", training_job(count=2)).request(client.queue)
    job_id = batch.submit_service_job(**request)["jobId"]
    emu.advance(600)
    job = client.describe(job_id)
    assert job.status is JobStatus.RUNNABLE
    assert job.status_reason.startswith("MISCONFIGURATION")


def test_forecast_covers_every_waiting_job(busy) -> None:
    emu, client, ids = busy
    result = client.forecast(now_s=now_of(emu))
    assert set(result.jobs) == {ids["qs1-p1"], ids["qs3-b"]}
    p1 = result.jobs[ids["qs1-p1"]]
    assert p1.p50_s is not None and p1.runtime_source == "hint"
    assert p1.start_json() == {"p50": round(p1.p50_s, 1), "p90": round(p1.p90_s or 0, 1)}


def test_a_forecast_from_jobs_just_listed_lists_only_the_history_and_answers_the_same(
    busy,
) -> None:
    emu, client, _ = busy
    listed_statuses: list[str] = []
    client.batch.meta.events.register(
        "before-parameter-build.batch.ListServiceJobs",
        lambda params, **_: listed_statuses.append(params["jobStatus"]),
    )
    own = client.forecast(now_s=now_of(emu))
    assert {s for s in listed_statuses if JobStatus(s) in ACTIVE_STATUSES}
    listed_statuses.clear()
    reordered = client.list(statuses=list(reversed(ACTIVE_STATUSES)))
    listed_statuses.clear()
    reused = client.forecast(now_s=now_of(emu), active=active_jobs(reordered))
    assert listed_statuses == ["SUCCEEDED", "FAILED"]  # the history only
    assert reused == own


def test_what_if_cli_json_and_exit_codes(busy) -> None:
    emu, _, _ = busy
    code, out, err = jobs(emu, "submit", "x", "--share", "QS4", *BUILDER, "--what-if", "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["outcome"] == "starts_now"
    assert set(answer) >= {"outcome", "startsInS", "preempts", "reason"}
    code, out, _ = jobs(
        emu,
        "submit",
        "x",
        "--share",
        "QS3",
        *BUILDER,
        "--instance-count",
        "2",
        "--what-if",
        "--json",
    )
    assert (code, json.loads(out)["outcome"]) == (1, "never")


def quota(emu: EmulatorServer, *args: str) -> tuple[int, str, str]:
    """``quota ARGS... --endpoint-url EMU --organisation seed-demo``: exit code, out, err."""
    base = ["--endpoint-url", emu.endpoint_url, "--organisation", "seed-demo"]
    result = CliRunner().invoke(app, [*args, *base], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def test_status_json_gives_each_share_head_its_forecast_start(busy) -> None:
    emu, client, ids = busy
    code, out, err = quota(emu, "status", "--json")
    assert code == 0, err
    heads = {r["quotaShareName"]: r["headJob"] for r in json.loads(out)["quotaShares"]}
    expected = client.forecast(now_s=now_of(emu)).jobs
    for share, name in (("QS1", "qs1-p1"), ("QS3", "qs3-b")):
        assert heads[share]["jobId"] == ids[name]
        assert heads[share]["forecastStartS"] == expected[ids[name]].start_json()
        assert heads[share]["forecastStartS"]["p50"] <= heads[share]["forecastStartS"]["p90"]
    assert heads["QS4"] is None


def test_jobs_ls_json_gives_each_waiting_job_its_forecast(busy) -> None:
    emu, _, ids = busy
    code, out, err = jobs(emu, "ls", "--json")
    assert code == 0, err
    listed = {j["jobId"]: j for j in json.loads(out)}
    for name in ("qs1-p1", "qs3-b"):
        start = listed[ids[name]]["forecastStartS"]
        assert 0 < start["p50"] <= start["p90"]
        assert listed[ids[name]]["forecastReason"] is None
    assert "forecastStartS" not in listed[ids["qs1-p3"]]  # running: nothing to forecast


def test_a_job_that_can_never_run_has_no_forecast_start_and_says_why(busy) -> None:
    emu, client, _ = busy
    request = JobSubmission("raw", "QS3", training_job(count=2)).request(client.queue)
    job_id = client.batch.submit_service_job(**request)["jobId"]
    emu.advance(5)
    code, out, err = jobs(emu, "ls", "--json")
    assert code == 0, err
    listed = {j["jobId"]: j for j in json.loads(out)}
    assert listed[job_id]["forecastStartS"] is None
    assert "can ever use" in listed[job_id]["forecastReason"]


def test_local_why_and_jobs_describe_give_the_whole_answer(busy) -> None:
    emu, client, ids = busy
    waiting = ids["qs1-p1"]
    expected = client.forecast(now_s=now_of(emu)).jobs[waiting]
    result = CliRunner().invoke(
        app, ["local", "why", waiting, "--endpoint-url", emu.endpoint_url, "--json"]
    )
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["forecast"]["forecastStartS"] == expected.start_json()
    assert answer["pending"]["kind"] in answer["forecast"]["waitingOn"]
    text = CliRunner().invoke(app, ["local", "why", waiting, "--endpoint-url", emu.endpoint_url])
    assert "forecast start: ~" in text.stdout
    code, out, err = jobs(emu, "describe", waiting, "--json")
    assert code == 0, err
    assert json.loads(out)["forecastStartS"] == expected.start_json()
    code, out, _ = jobs(emu, "describe", waiting)
    assert "forecast start" in out and "waits on" in out


class GoneJobs:
    """A queue whose one waiting job finished and expired between the list and the describe."""

    def spec(self, *, refresh: bool = False) -> JobQueueSpec:
        return JobQueueSpec(shares=(QuotaShareSpec("QS1", {GPU: 1}, SharingStrategy.RESERVE),))

    def queue_detail(self, *, refresh: bool = False) -> dict[str, Any]:
        return {}

    def list_pages(self, status: JobStatus, **_: Any) -> Iterator[list[JobSummary]]:
        if status is JobStatus.RUNNABLE:
            yield [
                JobSummary(
                    "gone", "gone", None, status, "", "QS1", None, None, None, None, {GPU: 1}
                )
            ]

    def describe(self, job: Any) -> JobDetails:
        error = {"Error": {"Code": "ClientException", "Message": "no such job"}}
        raise ClientError(error, "DescribeServiceJob")


def test_a_job_gone_between_the_list_and_the_describe_keeps_what_the_list_said() -> None:
    state = read_queue_state(GoneJobs(), now_s=START)
    [job] = state.waiting
    assert (job.job_id, job.share, dict(job.demand), job.priority) == ("gone", "QS1", {GPU: 1}, 0)


def test_quota_status_table_shows_when_each_head_starts(busy) -> None:
    emu, _, _ = busy
    code, out, err = quota(emu, "status", "--wide")
    assert code == 0, err
    assert "head starts" in out
    assert "~" in out and "(90%:" in out


def test_rejects_dry_run_with_what_if(busy) -> None:
    emu, _, _ = busy
    code, _, err = jobs(emu, "submit", "x", "--share", "QS4", *BUILDER, "--what-if", "--dry-run")
    assert code == 2
    assert "pass one of them" in err


def test_arrivals_foreseen_on_request_never_bring_a_start_forward(busy) -> None:
    emu, client, _ = busy
    for seconds in (600, 900, 1200, 300, 600):  # a history: QS4 gets five jobs in a row
        submit(client, "QS4", seconds)
    emu.advance(3600)
    calm = client.forecast(now_s=now_of(emu)).jobs
    busier = client.forecast(now_s=now_of(emu), arrivals=True)
    assert not any(c.startswith("share") and "not foreseen" in c for c in busier.caveats)
    assert any(c.startswith("no weekend hour in the history") for c in busier.caveats)
    for job_id, start in busier.jobs.items():
        assert (start.p50_s or 0) >= (calm[job_id].p50_s or 0) - 60
    code, out, err = jobs(emu, "ls", "--json", "--arrivals")
    assert code == 0, err
    assert all("forecastStartS" in j for j in json.loads(out) if j["status"] == "RUNNABLE")


# --- what the forecast does not model yet, and saying so (issue 44, gaps) -----------------


def notes(err: str) -> list[str]:
    return [line.removeprefix("note: ") for line in err.splitlines() if line.startswith("note: ")]


def test_status_prints_the_caveats_under_the_table_and_in_its_json(busy) -> None:
    emu, client, _ = busy
    expected = list(client.forecast(now_s=now_of(emu)).caveats)
    assert any("not foreseen" in c for c in expected)
    (short,) = [c for c in expected if "past run" in c]  # one note for every such share
    assert short.startswith("shares QS1 (0), ") and "fewer than 5 past runs each" in short
    code, out, err = quota(emu, "status")
    assert code == 0, err
    assert notes(err) == expected
    code, out, err = quota(emu, "status", "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["forecastCaveats"] == expected
    assert "forecastStartS" in view["quotaShares"][0]["headJob"]  # the contract kept


def test_status_without_a_forecast_has_no_caveats(busy) -> None:
    emu, _, _ = busy
    code, out, err = quota(emu, "status", "--json", "--no-forecast")
    assert code == 0, err
    assert "forecastCaveats" not in json.loads(out)
    assert notes(err) == []


def test_jobs_ls_prints_the_caveats_on_stderr_and_keeps_its_json_a_list(busy) -> None:
    emu, client, _ = busy
    expected = list(client.forecast(now_s=now_of(emu)).caveats)
    code, out, err = jobs(emu, "ls")
    assert code == 0, err
    assert notes(err) == expected
    code, out, err = jobs(emu, "ls", "--json")
    assert code == 0, err
    assert isinstance(json.loads(out), list)
    assert notes(err) == expected


def test_jobs_describe_and_local_why_give_the_caveats(busy) -> None:
    emu, client, ids = busy
    waiting = ids["qs1-p1"]
    expected = list(client.forecast(now_s=now_of(emu)).caveats)
    code, out, err = jobs(emu, "describe", waiting, "--json")
    assert code == 0, err
    assert json.loads(out)["forecastCaveats"] == expected
    code, out, err = jobs(emu, "describe", waiting)
    assert notes(err) == expected
    why = ["local", "why", waiting, "--endpoint-url", emu.endpoint_url]
    result = CliRunner().invoke(app, [*why, "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["forecastCaveats"] == expected
    result = CliRunner().invoke(app, why)
    assert notes(result.stderr) == expected


LIMITED_ORG = """organisation: seed-demo
job_queue:
  runnable_timeout_minutes: 10
shares:
  - name: QS1
    capacity: {ml.g5.xlarge: 1}
    strategy: LEND_AND_BORROW
    borrow_limit: 200
    schedule:
      - {days: [mon], from: "01:00", to: "06:00", strategy: RESERVE}
  - {name: QS2, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
  - {name: QS3, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}
"""
"""A queue whose RUNNABLE time-limit actions cancel misconfigured jobs after 10 minutes; QS1
borrows except from 01:00 to 06:00 on Mondays (the emulator starts Monday 00:00)."""


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[tuple[EmulatorServer, QueueClient, Path]]:
    org = tmp_path / "limits.yaml"
    org.write_text(LIMITED_ORG)
    with EmulatorServer(org_files=[org], start_epoch=START) as emu:
        yield emu, emulator_client(emu), org


def raw_submit(client: QueueClient, name: str, share: str, count: int) -> str:
    """Sent as is, around the runtime's checks (Batch keeps such a job RUNNABLE)."""
    request = JobSubmission(name, share, training_job(count=count)).request(client.queue)
    return str(client.batch.submit_service_job(**request)["jobId"])


def cancelled_at(emu: EmulatorServer, client: QueueClient, job_id: str) -> float:
    """Emulator seconds at which the time-limit action cancelled ``job_id``."""
    job = client.describe(job_id)
    assert job.status is JobStatus.FAILED
    assert job.status_reason.startswith("Terminated by JobStateTimeLimit action")
    assert job.stopped_at is not None
    return job.stopped_at.timestamp() - START


def test_forecast_says_when_the_time_limit_cancels_jobs_that_never_run(limited) -> None:
    emu, client, _ = limited
    first = raw_submit(client, "first", "QS3", 2)
    emu.advance(1)  # the forecast orders jobs by createdAt, as the queue does
    second = raw_submit(client, "second", "QS3", 2)
    emu.advance(5)
    asked = emu.now
    result = client.forecast(now_s=now_of(emu)).jobs
    assert all(result[j].never and result[j].cancelled for j in (first, second))
    assert "for 600 s" in result[first].reason
    forecast_s = [asked + (result[j].cancel_s or 0) for j in (first, second)]
    code, out, err = jobs(emu, "ls", "--json")
    assert code == 0, err
    listed = {j["jobId"]: j for j in json.loads(out)}
    assert "about 10 min from now" in listed[first]["forecastReason"]
    assert "about 20 min from now" in listed[second]["forecastReason"]
    emu.advance(1500)
    actual = [cancelled_at(emu, client, j) for j in (first, second)]
    for forecast_at, at in zip(forecast_s, actual, strict=True):  # from now: at the latest
        assert forecast_at - 60 <= at <= forecast_at + 5


def test_forecast_of_a_job_a_calendar_makes_misconfigured_matches_its_cancellation(
    limited,
) -> None:
    """QS1's 2-GPU job waits for QS2's GPU; at 01:00 QS1 stops borrowing, so it can never
    run, and 10 minutes later the time limit cancels it: the forecast says so, given the
    calendar (--org-file), and that is what happens."""
    emu, client, org = limited
    client.submit("lender", "QS2", training_job(), tags=hinted(2 * 3600))
    emu.advance(5)
    waiting = client.submit("wide", "QS1", training_job(count=2)).job_id
    emu.advance(5)
    asked = emu.now
    found = client.forecast(now_s=now_of(emu), org=load_organisation(org)).jobs[waiting]
    assert found.cancelled and not found.never and found.cancel_p == 1.0
    assert found.cancel_reason == "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"
    assert found.start_json() is None
    assert not client.forecast(now_s=now_of(emu)).jobs[waiting].cancelled  # no calendar given
    code, out, err = jobs(
        emu, "submit", "x", "--share", "QS1", *BUILDER, "--instance-count", "2", "--what-if",
        "--org-file", str(org), "--json",
    )  # fmt: skip
    answer = json.loads(out)
    assert (code, answer["outcome"], answer["startsInS"]) == (1, "never", None), err
    assert "time-limit action" in answer["reason"]
    emu.advance(2 * 3600)
    at = cancelled_at(emu, client, waiting)
    assert asked + (found.cancel_s or 0) - 60 <= at <= asked + (found.cancel_s or 0) + 60


def fails_after(seconds: float) -> dict[str, str]:
    """Tags: the emulator runs every attempt of the job ``seconds``, then it FAILS."""
    return {"quota.local/duration-seconds": str(seconds), "quota.local/outcome": "FAILED"}


def test_failed_runs_of_the_history_free_capacity_early_in_the_forecast_as_they_do(
    limited,
) -> None:
    """QS3's jobs fail after 2 minutes (their SageMaker default runtime is a day): the history's
    FAILED runs are among the run times drawn, so the job waiting behind a running one is
    forecast to start within minutes, and it does."""
    emu, client, _ = limited
    for index in range(5):
        client.submit(f"train-{index}", "QS3", training_job(), tags=fails_after(120))
        emu.advance(150)
    state = client.forecast(now_s=now_of(emu))
    assert state.caveats and not any("QS3: " in c for c in state.caveats)  # 5 runs: enough
    client.submit("train-5", "QS3", training_job(), tags=fails_after(120))
    emu.advance(5)
    waiting = client.submit("train-6", "QS3", training_job(), tags=fails_after(120)).job_id
    emu.advance(5)
    asked = emu.now
    found = client.forecast(now_s=now_of(emu), calibration=None).jobs[waiting]  # as sampled
    assert found.runtime_source == "history"
    assert found.p90_s is not None and found.p90_s < 300
    while not client.describe(waiting).status.is_dispatched:
        emu.advance(10)
    started = client.describe(waiting).scheduled_at
    assert started is not None
    waited = started.timestamp() - (START + asked)
    assert (found.p10_s or 0) - 30 <= waited <= found.p90_s + 30


def test_a_job_with_retries_is_a_caveat(limited) -> None:
    emu, client, _ = limited
    client.submit("busy", "QS3", training_job(), tags=hinted(600))
    client.submit("once", "QS3", training_job(), tags=hinted(600))
    emu.advance(5)
    assert not any("retry strategy" in c for c in client.forecast(now_s=now_of(emu)).caveats)
    client.submit("thrice", "QS3", training_job(), tags=hinted(600), retry_attempts=3)
    emu.advance(5)
    [note] = [c for c in client.forecast(now_s=now_of(emu)).caveats if "retry strategy" in c]
    assert note.startswith("1 job(s) have a retry strategy")
    answer = client.what_if(
        JobSubmission("probe", "QS3", training_job(), retry_attempts=2), now_s=now_of(emu)
    )
    assert any(c.startswith("2 job(s) have a retry strategy") for c in answer.forecast.caveats)


def test_a_short_history_foresees_no_arrivals_by_default_and_names_the_shares(busy) -> None:
    emu, client, _ = busy
    auto = client.forecast(now_s=now_of(emu))
    (note,) = [c for c in auto.caveats if "jobs submitted after now are not foreseen" in c]
    names = note.split(": ")[0].removeprefix("shares ").split(", ")  # one note names them all
    assert "QS1" in names and len(names) > 1 and "whole UTC day" in note
    code, _, err = jobs(
        emu, "submit", "x", "--share", "QS1", *BUILDER, "--what-if", "--no-arrivals"
    )
    assert code == 0, err
    assert "jobs submitted after now are not foreseen (no arrival model)" in err


def test_a_job_read_during_a_calendar_window_waits_for_its_end_as_it_does(tmp_path: Path) -> None:
    """Read between 01:00 and 06:00, QS1 shows its RESERVE window (no borrowing): its 2-GPU
    job does not fit the window, but does fit QS1's own settings from 06:00. Given the
    calendar, the forecast starts from QS1's own settings, says it waits (not never) until
    the window's end, and the job starts then."""
    org = tmp_path / "window.yaml"
    org.write_text(LIMITED_ORG.replace("job_queue:\n  runnable_timeout_minutes: 10\n", ""))
    with EmulatorServer(org_files=[org], start_epoch=START) as emu:
        client = emulator_client(emu)
        emu.advance(2 * 3600)  # Monday 02:00, inside the window
        waiting = raw_submit(client, "wide", "QS1", 2)
        emu.advance(5)
        asked = emu.now
        found = client.forecast(  # as sampled: the window's end makes the start certain
            now_s=now_of(emu), org=load_organisation(org), calibration=None
        ).jobs[waiting]
        assert not found.never, found.reason
        assert found.p10_s is not None and found.p90_s is not None
        assert 4 * 3600 - 60 <= found.p10_s <= found.p90_s <= 4 * 3600 + 60
        emu.advance(4 * 3600 + 120)
        started = client.describe(waiting).scheduled_at
        assert started is not None
        waited = started.timestamp() - (START + asked)
        assert found.p10_s - 30 <= waited <= found.p90_s + 30


LENDER_WINDOW_ORG = """organisation: seed-demo
shares:
  - {name: QS1, capacity: {ml.g5.xlarge: 1}, strategy: LEND_AND_BORROW, borrow_limit: 200}
  - name: QS2
    capacity: {ml.g5.xlarge: 1}
    strategy: RESERVE
    schedule:
      - {days: [mon], from: "01:00", to: "06:00", strategy: LEND}
"""
"""QS1 borrows, but QS2 lends only on Mondays from 01:00 to 06:00 (the emulator starts Monday
00:00)."""


def test_a_job_that_fits_only_while_a_lender_lends_waits_for_its_window_as_it_does(
    tmp_path: Path,
) -> None:
    """QS1's 2-GPU job needs QS2's GPU, which QS2 lends only from 01:00: given the calendars,
    the what-if says it waits (not never) until 01:00, and the job starts then; without them
    (QS2 RESERVE, as read now) it says never."""
    org = tmp_path / "lender.yaml"
    org.write_text(LENDER_WINDOW_ORG)
    with EmulatorServer(org_files=[org], start_epoch=START) as emu:
        client = emulator_client(emu)
        emu.advance(5)
        wide = JobSubmission("wide", "QS1", training_job(count=2), tags=hinted(600))
        org_ = load_organisation(org)  # as sampled: the lender's window makes it certain
        answer = client.what_if(wide, now_s=now_of(emu), org=org_, calibration=None)
        assert answer.outcome == "waits", answer.reason
        assert answer.job.p10_s is not None and answer.job.p90_s is not None
        assert 3600 - 5 - 60 <= answer.job.p10_s <= answer.job.p90_s <= 3600 - 5 + 60
        assert client.what_if(wide, now_s=now_of(emu)).outcome == "never"  # no calendars
        asked = emu.now
        job_id = raw_submit(client, "wide", "QS1", 2)
        emu.advance(3600 + 120)
        started = client.describe(job_id).scheduled_at
        assert started is not None
        waited = started.timestamp() - (START + asked)
        assert answer.job.p10_s - 30 <= waited <= answer.job.p90_s + 30


def test_the_submit_check_follows_the_calendars_it_is_given(tmp_path: Path) -> None:
    """QS1's 2-GPU job fits only once QS2 lends (01:00): the check of the settings in force now
    refuses it, naming the field; given the organisation's calendars (QueueClient(org=...),
    `quota jobs submit --org-file`) it is sent, waits, and starts at 01:00."""
    org_file = tmp_path / "lender.yaml"
    org_file.write_text(LENDER_WINDOW_ORG)
    with EmulatorServer(org_files=[org_file], start_epoch=START) as emu:
        client = emulator_client(emu)
        emu.advance(5)
        with pytest.raises(QuotaConfigError) as refused:
            client.submit("wide", "QS1", training_job(count=2), tags=hinted(600))
        [problem] = refused.value.problems
        assert problem.path == "serviceRequestPayload.ResourceConfig.InstanceCount"
        assert problem.value == 2
        client.org = load_organisation(org_file)
        client.queue_clock = lambda: now_of(emu)
        handle = client.submit("wide", "QS1", training_job(count=2), tags=hinted(600))
        code, _, err = jobs(
            emu, "submit", "cli", "--share", "QS1", *BUILDER, "--instance-count", "2"
        )
        assert code == 2 and "InstanceCount" in err
        code, _, err = jobs(
            emu, "submit", "cli", "--share", "QS1", *BUILDER, "--instance-count", "2",
            "--org-file", str(org_file),
        )  # fmt: skip
        assert code == 0, err
        emu.advance(3600 + 120)
        started = client.describe(handle.job_id).scheduled_at
        assert started is not None
        assert abs(started.timestamp() - (START + 3600)) <= 60


def test_the_submit_check_still_refuses_a_job_no_setting_of_the_week_fits(tmp_path: Path) -> None:
    org_file = tmp_path / "apart.yaml"
    org_file.write_text(APART_ORG)
    with EmulatorServer(org_files=[org_file], start_epoch=START) as emu:
        client = emulator_client(emu)
        emu.advance(2 * 3600)
        client.org = load_organisation(org_file)
        client.queue_clock = lambda: now_of(emu)
        with pytest.raises(QuotaConfigError) as refused:
            client.submit("wide", "QS1", training_job(count=2))
        assert "InstanceCount" in str(refused.value)


APART_ORG = """organisation: seed-demo
shares:
  - name: QS1
    capacity: {ml.g5.xlarge: 1}
    strategy: RESERVE
    schedule:
      - {days: [mon], from: "07:00", to: "09:00", strategy: LEND_AND_BORROW, borrow_limit: 200}
  - name: QS2
    capacity: {ml.g5.xlarge: 1}
    strategy: LEND
    schedule:
      - {days: [mon], from: "06:00", to: "10:00", strategy: RESERVE}
"""
"""QS1 borrows only on Mondays from 07:00 to 09:00, and QS2, which lends otherwise, stops lending
from 06:00 to 10:00 on Mondays: QS1 never borrows."""


def test_a_job_that_fits_only_in_windows_that_never_meet_is_never_and_never_runs(
    tmp_path: Path,
) -> None:
    """QS1's 2-GPU job fits QS1's borrowing window with QS2's own settings (LEND), but QS2 does
    not lend in that window: the what-if says never, and the job, sent anyway, is still
    RUNNABLE after the windows."""
    org = tmp_path / "apart.yaml"
    org.write_text(APART_ORG)
    with EmulatorServer(org_files=[org], start_epoch=START) as emu:
        client = emulator_client(emu)
        emu.advance(2 * 3600)  # Monday 02:00: QS2 lends now, QS1 borrows only from 07:00
        wide = JobSubmission("wide", "QS1", training_job(count=2), tags=hinted(600))
        answer = client.what_if(wide, now_s=now_of(emu), org=load_organisation(org))
        assert answer.outcome == "never"
        assert "more than quota share QS1 can ever use" in answer.reason
        job_id = raw_submit(client, "wide", "QS1", 2)
        emu.advance(9 * 3600)  # Monday 11:00, past both windows
        assert client.describe(job_id).status is JobStatus.RUNNABLE


def test_forecast_options_as_one_record_or_as_keywords_answer_alike(busy) -> None:
    emu, client, _ = busy
    options = ForecastOptions(now_s=now_of(emu), seed=3, samples=20, arrivals=False)
    assert client.forecast(**options) == client.forecast(
        now_s=now_of(emu), seed=3, samples=20, arrivals=False
    )
    probe = JobSubmission("probe", "QS3", training_job(), tags=hinted(600))
    by_record = client.what_if(probe, **options)
    assert by_record == client.what_if(probe, now_s=now_of(emu), seed=3, samples=20, arrivals=False)
    assert (by_record.forecast.samples, by_record.forecast.seed) == (20, 3)
    assert client.forecast(**options, horizon_s=60.0).horizon_s == 60.0


@pytest.mark.parametrize(
    ("payload", "seconds"),
    [
        ({"StoppingCondition": {"MaxRuntimeInSeconds": 7200}}, 7200.0),
        ({"StoppingCondition": {"MaxRuntimeInSeconds": 0}}, 86400.0),
        ({"StoppingCondition": ["not", "an", "object"]}, 86400.0),
        ({}, 86400.0),
        ([], 86400.0),
    ],
)
def test_max_runtime_is_read_alike_from_a_payload_and_from_its_json(
    payload: object, seconds: float
) -> None:
    """The what-if reads its payload as built; a described job's comes as JSON text."""
    assert max_runtime_in(payload) == seconds
    assert max_runtime_of(json.dumps(payload)) == seconds


# --- calibrated bounds (docs/runtime.md, "Calibrated bounds") ------------------------------


def test_every_forecast_command_calibrates_its_bounds_with_the_file_or_the_variable(
    busy, tmp_path: Path
) -> None:
    from quota_constructs.forecast import Calibration

    emu, client, ids = busy
    path = tmp_path / "calibration.json"
    calibration = Calibration(lower_shift=-0.3, upper_shift=0.6, jobs=50, fitted_on="tests")
    calibration.save(path)
    waiting = ids["qs1-p1"]
    plain = client.forecast(now_s=now_of(emu), calibration=None).jobs[waiting]
    wide = client.forecast(now_s=now_of(emu), calibration=calibration)
    expected = wide.jobs[waiting].start_json()
    assert expected is not None and plain.p90_s is not None
    assert expected["p90"] > plain.p90_s and expected["p50"] == plain.start_json()["p50"]
    code, out, err = jobs(emu, "ls", "--json", "--calibration", str(path))
    assert code == 0, err
    assert {j["jobId"]: j for j in json.loads(out)}[waiting]["forecastStartS"] == expected
    assert any("calibrated on 50 backtest forecasts (tests)" in n for n in notes(err))
    result = CliRunner().invoke(
        app,
        ["status", "--json", "--endpoint-url", emu.endpoint_url, "--organisation", "seed-demo"],
        env={"QUOTA_FORECAST_CALIBRATION": str(path)},
    )
    assert result.exit_code == 0, result.stderr
    heads = {r["quotaShareName"]: r["headJob"] for r in json.loads(result.stdout)["quotaShares"]}
    assert heads["QS1"]["forecastStartS"] == expected
    code, out, err = jobs(emu, "describe", waiting, "--json", "--calibration", str(path))
    assert (code, json.loads(out)["forecastStartS"]) == (0, expected), err
    why = ["local", "why", waiting, "--endpoint-url", emu.endpoint_url, "--json"]
    result = CliRunner().invoke(app, [*why, "--calibration", str(path)])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["forecast"]["forecastStartS"] == expected


def test_forecasts_use_the_default_calibration_unless_told_none(busy, tmp_path: Path) -> None:
    """Without a calibration, QueueClient and the commands widen the bounds by the packaged
    default and say so; ``calibration=None`` and ``--calibration none`` leave them as sampled."""
    from quota_constructs.forecast import default_calibration

    emu, client, ids = busy
    waiting = ids["qs1-p1"]
    default = client.forecast(now_s=now_of(emu))
    assert default == client.forecast(now_s=now_of(emu), calibration=default_calibration())
    sampled = client.forecast(now_s=now_of(emu), calibration=None)
    mine, plain = default.jobs[waiting], sampled.jobs[waiting]
    assert mine.p90_s is not None and plain.p90_s is not None and mine.p90_s > plain.p90_s
    assert mine.p50_s == plain.p50_s
    assert any("tools/default_calibration.py" in n for n in default.caveats)
    assert not any("calibrated" in n for n in sampled.caveats)
    listed = {}
    for option in ([], ["--calibration", "none"]):
        code, out, err = jobs(emu, "ls", "--json", *option)
        assert code == 0, err
        listed[bool(option)] = {j["jobId"]: j for j in json.loads(out)}[waiting]["forecastStartS"]
    assert listed == {False: mine.start_json(), True: plain.start_json()}
    named = tmp_path / "none"  # a file called none, by its path
    default_calibration().save(named)
    code, out, err = jobs(emu, "ls", "--json", "--calibration", str(named))
    assert code == 0, err
    assert {j["jobId"]: j for j in json.loads(out)}[waiting]["forecastStartS"] == listed[False]


def test_a_bad_calibration_file_is_a_usage_error_before_any_call(busy, tmp_path: Path) -> None:
    emu, _, _ = busy
    path = tmp_path / "calibration.json"
    path.write_text('{"kind": "quota-forecast-calibration", "version": 1, "upperShift": 1}')
    code, out, err = jobs(
        emu, "submit", "x", "--share", "QS3", *BUILDER, "--what-if", "--calibration", str(path)
    )
    assert code == 2 and out == ""
    assert "'--calibration'" in err and "lowerShift: None is not a finite number" in err
    assert "fix: fit the calibration again" in err


@pytest.mark.parametrize(
    "command",
    [
        ["status", "--organisation", "o"],
        ["jobs", "--organisation", "o", "ls"],
        ["jobs", "--organisation", "o", "describe", "job-1"],
        ["jobs", "--organisation", "o", "submit", "x", "--share", "QS3", *BUILDER, "--what-if"],
        ["local", "why", "job-1"],
    ],
)
def test_every_forecast_command_refuses_a_bad_calibration_before_calling_aws(
    command: list[str], tmp_path: Path
) -> None:
    """No endpoint answers on port 9: any call first would exit 1, not 2."""
    path = tmp_path / "calibration.json"
    path.write_text("[]")
    nowhere = "http://127.0.0.1:9"
    if command[0] == "local":
        args = [*command, "--endpoint-url", nowhere]
    else:
        args = [command[0], "--endpoint-url", nowhere, *command[1:]]
    env = {"QUOTA_FORECAST_CALIBRATION": str(path), "AWS_DEFAULT_REGION": "us-east-1"}
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 2, result.output
    assert "kind: 'list' is not 'quota-forecast-calibration'" in result.stderr


def finish_seven_qs4_jobs(emu: EmulatorServer, client: QueueClient) -> None:
    """Seven QS4 jobs of a minute each, priorities 0-6 in submit order, all finished."""
    for priority in range(7):
        client.submit(
            f"qs4-{priority}", "QS4", training_job(), priority=priority, tags=runs_for(60)
        )
        emu.advance(120)


def test_the_history_reads_the_priorities_of_a_few_finished_jobs_per_share(busy) -> None:
    """Seven finished QS4 jobs, priorities 0-6 in submit order: the history read over HTTP
    has the priorities of five of them spread over the seven (first and last included), as the
    backtest replays it; the others are not read (the list does not tell them)."""
    emu, client, _ = busy
    finish_seven_qs4_jobs(emu, client)
    runs = [r for r in read_history(client) if r.share == "QS4"]
    seen = sorted((r.created_s or 0.0, r.priority) for r in runs)
    assert [priority for _, priority in seen] == [0, None, 2, 3, 4, None, 6]
    none = [r for r in read_history(client, priority_sample=0) if r.share == "QS4"]
    assert [r.priority for r in none] == [None] * 7


def test_the_finished_jobs_priorities_are_read_only_for_a_forecast_that_foresees_arrivals(
    busy,
) -> None:
    """Only the jobs a forecast foresees arriving copy the finished jobs' priorities: with
    arrivals off, or "auto" on a history shorter than a whole day (this one: minutes), no
    finished job is described; forced on, five of QS4's seven are."""
    emu, client, _ = busy
    finish_seven_qs4_jobs(emu, client)
    now = emu.emulator.clock.epoch(emu.now)
    described: dict[object, int] = {}
    for arrivals in (False, None, True):
        before = emu.request_counts.get("DescribeServiceJob", 0)
        state = client.queue_state(now_s=now, arrivals=arrivals)
        described[arrivals] = emu.request_counts["DescribeServiceJob"] - before
        known = [r.priority for r in state.history if r.share == "QS4" and r.priority is not None]
        assert len(known) == (5 if arrivals else 0)
    active = len(state.running) + len(state.waiting)
    assert described == {False: active, None: active, True: active + 5}
