"""``quota jobs`` and ``quota demo`` end to end against the emulator over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.runtime import QueueClient, TrainingJob
from tests.runtime.helpers import BUILDER, jobs, submit

runner = CliRunner()


@pytest.fixture
def wall_emu() -> Iterator[EmulatorServer]:
    """seed-demo on a wall clock running 1,000 times faster than real time (the CLI waits on
    the wall clock)."""
    with EmulatorServer(org_files=[SEED_DEMO], clock="wall", speed=1000) as server:
        yield server


def test_submit_list_describe_update(emu: EmulatorServer) -> None:
    job_id = submit(emu, "cli-job", "QS1", "--priority", "0", "--hp", "epochs=3")
    code, out, _ = jobs(emu, "ls", "--share", "QS1", "--json")
    assert code == 0 and [j["jobId"] for j in json.loads(out)] == [job_id]
    assert jobs(emu, "update", job_id, "--priority", "7")[0] == 0
    code, out, _ = jobs(emu, "describe", job_id, "--json")
    details = json.loads(out)
    assert details["schedulingPriority"] == 7 and details["quotaShareName"] == "QS1"
    code, out, _ = jobs(emu, "describe", job_id)
    assert code == 0 and "cli-job" in out and "preemptions" in out


def test_update_by_name_prints_json_with_the_resolved_id(emu: EmulatorServer) -> None:
    job_id = submit(emu, "named-job", "QS2")
    code, out, err = jobs(emu, "update", "named-job", "--priority", "9", "--json")
    assert code == 0, err
    assert json.loads(out) == {"jobId": job_id, "schedulingPriority": 9}
    code, out, err = jobs(emu, "update", "named-job", "--priority", "8")
    assert code == 0, err
    assert out == f"named-job ({job_id}): priority 8\n"  # the name and the id it resolved to


def test_ls_prints_a_table(emu: EmulatorServer) -> None:
    submit(emu, "table-job", "QS2")
    code, out, _ = jobs(emu, "ls")
    assert code == 0 and "table-job" in out and "1 job(s)" in out


def test_dry_run_prints_the_request_and_sends_nothing(emu: EmulatorServer) -> None:
    code, out, err = jobs(
        emu, "submit", "dry", "--share", "QS2", *BUILDER, "--priority", "0", "--dry-run"
    )
    assert code == 0, err
    request = json.loads(out)
    assert request["schedulingPriority"] == 0
    assert request["timeoutConfig"] == {"attemptDurationSeconds": 86400}
    payload = json.loads(request["serviceRequestPayload"])  # a JSON string, as the client sends
    assert payload["ResourceConfig"]["InstanceType"] == "ml.g5.xlarge"
    assert "SubmitServiceJob" not in emu.request_counts


def test_submit_from_a_payload_file(emu: EmulatorServer, tmp_path: Path) -> None:
    path = tmp_path / "payload.json"
    job = TrainingJob("img", "ml.g5.xlarge", "arn:aws:iam::123456789012:role/r", "s3://b/o")
    path.write_text(json.dumps(job.payload("from-file")))
    code, out, err = jobs(emu, "submit", "from-file", "--share", "QS3", "--payload", str(path))
    assert code == 0, err
    assert "submitted from-file to QS3" in out


def test_rejects_unknown_share_in_one_line_as_not_found(emu: EmulatorServer) -> None:
    code, _, err = jobs(emu, "submit", "x", "--share", "QS9", *BUILDER)
    assert code == 3
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "no quota share 'QS9'" in err and "QS1, QS2, QS3" in err


def test_rejects_submit_without_payload(emu: EmulatorServer) -> None:
    code, _, err = jobs(emu, "submit", "x", "--share", "QS1")
    assert code == 2 and "no payload: pass --payload" in err


def test_rejects_missing_queue() -> None:
    result = runner.invoke(app, ["jobs", "ls"], env={"QUOTA_QUEUE": "", "QUOTA_ORGANISATION": ""})
    assert result.exit_code == 2
    assert "no job queue given: pass --queue" in result.stderr


def test_rejects_unknown_job_in_one_line(emu: EmulatorServer) -> None:
    code, _, err = jobs(emu, "describe", "nope")
    assert code == 3 and err.startswith("error: no job with id 'nope'") and "Traceback" not in err


def test_rejects_bad_key_value(emu: EmulatorServer) -> None:
    code, _, err = jobs(emu, "submit", "x", "--share", "QS1", *BUILDER, "--tag", "oops")
    assert code == 2 and "--tag 'oops' is not KEY=VALUE" in err


def test_terminate_a_share(emu: EmulatorServer) -> None:
    for i in range(3):
        submit(emu, f"t{i}", "QS1")
    keep = submit(emu, "keep", "QS3")
    code, out, _ = jobs(emu, "terminate", "--share", "QS1", "--reason", "cleanup")
    assert code == 0 and "terminated 3 job(s)" in out
    code, out, _ = jobs(emu, "ls", "--json")
    assert [j["jobId"] for j in json.loads(out)] == [keep]


def test_rejects_terminate_without_target(emu: EmulatorServer) -> None:
    code, _, err = jobs(emu, "terminate")
    assert code == 2 and "pass job ids or --share" in err


def test_snapshot(emu: EmulatorServer) -> None:
    for p in ("3", "2", "1"):
        submit(emu, f"s{p}", "QS1", "--priority", p)
    emu.advance(10)
    code, out, _ = jobs(emu, "snapshot", "--json")
    snap = json.loads(out)
    usage = {u["quotaShareName"]: u["capacityUsage"] for u in snap["quotaShareUtilization"]}
    assert code == 0 and len(snap["frontOfQueue"]) == 1
    assert usage["QS1"] == [{"capacityUnit": "ml.g5.xlarge", "quantity": 2}]
    code, out, _ = jobs(emu, "snapshot")
    assert "front of the queue" in out and "QS1" in out


def test_wait_until_finished(wall_emu: EmulatorServer) -> None:
    tags = ["--tag", "quota.local/duration-seconds=60"]
    ids = [submit(wall_emu, f"w{i}", "QS2", *tags) for i in range(2)]
    code, out, err = jobs(wall_emu, "wait", *ids, "--poll", "0.02", "--timeout", "60", "--json")
    assert code == 0, err
    assert {j["status"] for j in json.loads(out)} == {"SUCCEEDED"}
    assert "RUNNING -> SUCCEEDED" in err or "-> SUCCEEDED" in err


def test_wait_times_out_with_exit_1(wall_emu: EmulatorServer) -> None:
    tags = ["--tag", "quota.local/duration-seconds=100000"]
    job_id = submit(wall_emu, "long", "QS3", *tags)
    code, _, err = jobs(wall_emu, "wait", job_id, "--poll", "0.02", "--timeout", "0.2")
    assert code == 1 and "1 job(s) not there after 0.2 s" in err


def test_rejects_unknown_wait_target(emu: EmulatorServer) -> None:
    code, _, err = jobs(emu, "wait", "x", "--until", "later")
    assert code == 2 and "until: unknown wait target (got 'later'); fix: choose one of" in err


def test_demo_replays_the_tutorial_and_checks_its_outcomes() -> None:
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.count("PASS") == 3
    assert "Cross-share preemption" in result.stdout and "In-share preemption" in result.stdout
    assert "qs1-p2 (QS1, p2) dispatched, borrowing 1 x ml.g5.xlarge" in result.stdout
    assert "preempted by qs2-job (QS2, p1) (CROSS_SHARE)" in " ".join(result.stdout.split())


def test_demo_runs_on_the_default_dispatch_with_both_preemption_lines() -> None:
    """The victim is still RUNNING until the next scheduler tick preempts it: the demo keeps
    watching it until it is requeued, so both "preempted by" lines are in the timeline."""
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.stdout + result.stderr
    timeline = " ".join(result.stdout.split())
    assert "qs2-job (QS2, p1): new -> SUBMITTED" in timeline  # next-tick dispatch: SUBMITTED seen
    assert "qs1-p2 (QS1, p2) preempted by qs2-job (QS2, p1) (CROSS_SHARE)" in timeline
    assert "qs1-p3 (QS1, p3) preempted by qs1-p1 (QS1, p1 -> p4) (IN_SHARE)" in timeline


def test_ctrl_c_while_waiting_is_one_line(
    emu: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    job_id = submit(emu, "some-job", "QS3")
    monkeypatch.setattr(QueueClient, "wait", interrupted)
    code, _, err = jobs(emu, "wait", job_id)
    assert code == 130 and "interrupted; jobs already submitted keep running" in err
    assert "Traceback" not in err


def test_demo_json_prints_the_outcomes_and_sends_the_timeline_to_stderr() -> None:
    result = runner.invoke(app, ["demo", "--json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["ok"] is True and [o["ok"] for o in outcome["outcomes"]] == [True] * 3
    assert "cross-share preemption" in outcome["outcomes"][1]["name"]
    assert "qs1-p2 (QS1, p2) dispatched" in result.stderr


def test_demo_on_a_fast_wall_clock() -> None:
    result = runner.invoke(app, ["demo", "--speed", "20"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.count("PASS") == 3


def test_rejects_demo_speed_below_real_time() -> None:
    result = runner.invoke(app, ["demo", "--speed", "0.5"])
    assert result.exit_code == 2 and "--speed" in result.stderr
