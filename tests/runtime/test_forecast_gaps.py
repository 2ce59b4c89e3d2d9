"""What the forecast does not model yet, and saying what it does not know (issue 44's gaps),
over real HTTP against the emulator: the caveats where people look."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.commands.demo import emulator_client
from quota_constructs.config import load_organisation
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime import JobStatus, JobSubmission, QueueClient
from tests.runtime.helpers import BUILDER, jobs, training_job
from tests.runtime.test_forecast import (  # busy: a fixture
    START,
    busy,  # noqa: F401
    hinted,
    now_of,
    quota,
)


def notes(err: str) -> list[str]:
    return [line.removeprefix("note: ") for line in err.splitlines() if line.startswith("note: ")]


def test_status_prints_the_caveats_under_the_table_and_in_its_json(busy) -> None:  # noqa: F811
    emu, client, _ = busy
    expected = list(client.forecast(now_s=now_of(emu)).caveats)
    assert any("not foreseen" in c for c in expected)
    assert any("share QS1: 0 past run(s)" in c for c in expected)
    code, out, err = quota(emu, "status")
    assert code == 0, err
    assert notes(err) == expected
    code, out, err = quota(emu, "status", "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["forecastCaveats"] == expected
    assert "forecastStartS" in view["quotaShares"][0]["headJob"]  # the contract kept


def test_status_without_a_forecast_has_no_caveats(busy) -> None:  # noqa: F811
    emu, _, _ = busy
    code, out, err = quota(emu, "status", "--json", "--no-forecast")
    assert code == 0, err
    assert "forecastCaveats" not in json.loads(out)
    assert notes(err) == []


def test_jobs_ls_prints_the_caveats_on_stderr_and_keeps_its_json_a_list(busy) -> None:  # noqa: F811
    emu, client, _ = busy
    expected = list(client.forecast(now_s=now_of(emu)).caveats)
    code, out, err = jobs(emu, "ls")
    assert code == 0, err
    assert notes(err) == expected
    code, out, err = jobs(emu, "ls", "--json")
    assert code == 0, err
    assert isinstance(json.loads(out), list)
    assert notes(err) == expected


def test_jobs_describe_and_local_why_give_the_caveats(busy) -> None:  # noqa: F811
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
    found = client.forecast(now_s=now_of(emu)).jobs[waiting]
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
