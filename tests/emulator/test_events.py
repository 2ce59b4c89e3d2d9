"""The emulator's EventBridge events, and the synthesized rules' patterns matched against them.

Patterns are matched by moto's EventBridge pattern matcher (``moto.events.models.EventPattern``),
a maintained implementation of EventBridge's pattern language, ``$or`` and ``exists`` included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from moto.events.models import EventPattern
from moto.events.utils import EventMessageType
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.constructs.dashboard import events_pattern
from quota_constructs.constructs.notifications import notification_pattern, share_filter_policy
from quota_constructs.local.emulator import Emulator
from quota_constructs.local.events import (
    PREEMPTION_COMPLETED,
    PREEMPTION_STARTED,
    QUEUE_BLOCKED,
    STATE_CHANGE,
    EventSink,
)
from quota_constructs.scheduling import PREEMPTION_IN_PROGRESS, REASON_CROSS_SHARE
from tests.helpers import ORGS_DIR, payload, run_one_job, runs_for, start_serve


class Tutorial:
    """The AWS tutorial on seed-demo, called on the emulator without HTTP."""

    def __init__(self, sink: EventSink) -> None:
        self.emulator = Emulator(seed=13, events=sink)
        self.queue_arn = self.emulator.provision_file(ORGS_DIR / "seed-demo.yaml").job_queue_arn

    def submit(self, share: str, name: str, **extra: Any) -> str:
        params = {
            "jobName": name,
            "jobQueue": self.queue_arn,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "serviceRequestPayload": extra.pop("serviceRequestPayload", payload()),
            "quotaShareName": share,
            **extra,
        }
        return str(self.emulator.call("batch", "SubmitServiceJob", params)["jobArn"])

    def preempt_a_borrower(self) -> str:
        """QS1 borrows QS2's instance, QS2 reclaims it; returns the preempted job's ARN."""
        jobs = [self.submit("QS1", f"qs1-p{p}", schedulingPriority=p) for p in (3, 2, 1)]
        self.emulator.advance(10)
        self.submit("QS2", "qs2-job")
        self.emulator.advance(10)
        return jobs[1]


@pytest.fixture
def sink() -> EventSink:
    return EventSink()


@pytest.fixture
def tutorial(sink: EventSink) -> Tutorial:
    return Tutorial(sink)


def matches(pattern: dict[str, Any], event: dict[str, Any]) -> bool:
    return EventPattern.load(json.dumps(pattern)).matches_event(cast(EventMessageType, event))


def test_a_preemption_emits_started_and_completed_in_aws_shape(
    tutorial: Tutorial, sink: EventSink
) -> None:
    victim = tutorial.preempt_a_borrower()
    [started] = sink.of_type(PREEMPTION_STARTED)
    [completed] = sink.of_type(PREEMPTION_COMPLETED)
    for event in (started, completed):
        assert event["source"] == "aws.batch"
        assert event["resources"] == [victim]
        assert event["detail"]["preemptedJobArn"] == victim
        assert set(event) == {
            "version", "id", "detail-type", "source", "account", "time", "region", "resources",
            "detail",
        }  # fmt: skip
    assert started["detail"] == {
        "statusReason": PREEMPTION_IN_PROGRESS + REASON_CROSS_SHARE,
        "preemptedJobArn": victim,
        "status": "RUNNING",
    }
    summary = completed["detail"]["preemptionSummary"]
    assert completed["detail"]["status"] == "RUNNABLE"
    assert summary["preemptedAttemptCount"] == 1
    assert summary["recentPreemptedAttempts"][0]["serviceResourceId"]["name"] == "TrainingJobArn"


@pytest.mark.parametrize(
    ("share", "count", "code"),
    [
        ("QS3", 2, "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"),
        ("QS1", 4, "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE"),
    ],
    ids=["over the share's limit", "over the environment's capacity"],
)
def test_a_misconfigured_runnable_job_sends_a_queue_blocked_event_in_aws_shape(
    tutorial: Tutorial, sink: EventSink, share: str, count: int, code: str
) -> None:
    tutorial.submit("QS2", "fits")
    job = tutorial.submit(share, "too-big", serviceRequestPayload=payload(count=count))
    tutorial.emulator.advance(10)

    [blocked] = sink.of_type(QUEUE_BLOCKED)
    assert (blocked["source"], blocked["resources"]) == ("aws.batch", [job])
    detail = blocked["detail"]
    assert (detail["jobArn"], detail["status"]) == (job, "RUNNABLE")
    assert detail["statusReason"].startswith(f"{code} - ")
    assert detail["jobQueue"] == tutorial.queue_arn
    assert detail["serviceJobType"] == "SAGEMAKER_TRAINING"
    assert "tags" not in detail and "serviceRequestPayload" not in detail


def test_state_changes_carry_the_queue_and_share_but_not_the_submission(
    tutorial: Tutorial, sink: EventSink
) -> None:
    victim = tutorial.preempt_a_borrower()
    changes = [e for e in sink.of_type(STATE_CHANGE) if e["resources"] == [victim]]
    assert [e["detail"]["status"] for e in changes] == [
        "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "RUNNABLE",
    ]  # fmt: skip
    last = changes[-1]["detail"]
    assert (last["jobQueue"], last["quotaShareName"]) == (tutorial.queue_arn, "QS1")
    assert last["statusReason"] == REASON_CROSS_SHARE
    assert "tags" not in last and "serviceRequestPayload" not in last


def test_the_notification_rule_matches_the_tutorials_preemption(
    tutorial: Tutorial, sink: EventSink
) -> None:
    tutorial.preempt_a_borrower()
    pattern = notification_pattern(tutorial.queue_arn)
    started, completed = sink.of_type(PREEMPTION_STARTED) + sink.of_type(PREEMPTION_COMPLETED)
    assert matches(pattern, started) and matches(pattern, completed)


def test_the_notification_rule_ignores_succeeded_and_matches_failed(
    tutorial: Tutorial, sink: EventSink
) -> None:
    done = tutorial.submit(
        "QS3", "short", serviceRequestPayload=payload(runtime_s=60), tags=runs_for(60)
    )
    failed = tutorial.submit("QS3", "doomed")
    tutorial.emulator.advance(120)
    tutorial.emulator.call(
        "batch", "TerminateServiceJob", {"jobId": failed, "reason": "stopped by a test"}
    )
    tutorial.emulator.advance(1)
    last = {e["resources"][0]: e for e in sink.of_type(STATE_CHANGE)}
    assert last[done]["detail"]["status"] == "SUCCEEDED"
    assert last[failed]["detail"]["status"] == "FAILED"
    pattern = notification_pattern(tutorial.queue_arn)
    assert not matches(pattern, last[done])
    assert matches(pattern, last[failed])
    other_queue = notification_pattern(tutorial.queue_arn.replace("job-queue/", "job-queue/x"))
    assert not matches(other_queue, last[failed])


def test_the_dashboard_rule_logs_every_state_change_of_the_queue(
    tutorial: Tutorial, sink: EventSink
) -> None:
    tutorial.preempt_a_borrower()
    pattern = events_pattern(tutorial.queue_arn)
    assert sink.events and all(matches(pattern, e) for e in sink.events)


def test_a_share_filter_passes_its_jobs_and_unattributed_preemptions(
    tutorial: Tutorial, sink: EventSink
) -> None:
    """SNS payload filters share this syntax (``$or``, ``exists``) with EventBridge patterns."""
    tutorial.preempt_a_borrower()
    qs1, qs2 = share_filter_policy("QS1"), share_filter_policy("QS2")
    change = sink.of_type(STATE_CHANGE)[-1]
    assert change["detail"]["quotaShareName"] == "QS2"
    assert matches(qs2, change) and not matches(qs1, change)
    [started] = sink.of_type(PREEMPTION_STARTED)
    assert matches(qs1, started) and matches(qs2, started)


def test_events_file_holds_one_json_event_per_line(tmp_path: Path) -> None:
    sink = EventSink(tmp_path / "events.jsonl")
    Tutorial(sink).preempt_a_borrower()
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == sink.events


def test_an_emulator_without_a_sink_makes_no_events() -> None:
    emulator = Emulator()
    emulator.provision_file(ORGS_DIR / "seed-demo.yaml")
    assert emulator.events is None
    assert emulator.jobs.listeners == []


def test_serve_writes_events_to_the_events_file(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    job, printed = run_one_job(start_serve("--virtual", "--events-file", str(events)))

    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert {e["detail-type"] for e in lines} == {STATE_CHANGE}
    assert [e["detail"]["status"] for e in lines if e["resources"] == [job]][-1] == "RUNNING"
    assert f"EventBridge events of service jobs: {events}" in "".join(printed)


def test_rejects_an_events_file_that_cannot_be_written(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "events.jsonl"
    result = CliRunner().invoke(app, ["local", "serve", "--port", "0", "--events-file", str(path)])
    assert result.exit_code == 2
    assert f"error: cannot write --events-file {path}" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("update", "code"),
    [
        (
            (
                "UpdateQuotaShare",
                {"resourceSharingConfiguration": {"strategy": "RESERVE"}},
            ),
            "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED",
        ),
        (
            (
                "UpdateServiceEnvironment",
                {"capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}]},
            ),
            "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
        ),
    ],
    ids=["share stops borrowing", "environment shrinks"],
)
def test_a_waiting_job_made_misconfigured_by_an_update_sends_a_queue_blocked_event(
    tutorial: Tutorial, sink: EventSink, update: tuple[str, dict[str, Any]], code: str
) -> None:
    tutorial.submit("QS2", "busy")  # QS2 uses its instance: QS1's 2-instance job waits
    job = tutorial.submit("QS1", "two", serviceRequestPayload=payload(count=2))
    tutorial.emulator.advance(10)
    assert sink.of_type(QUEUE_BLOCKED) == []
    operation, params = update
    org = tutorial.emulator.organisations["seed-demo"]
    target = (
        {"quotaShareArn": org.quota_share_arns["QS1"]}
        if operation == "UpdateQuotaShare"
        else {"serviceEnvironment": org.service_environment_arn}
    )
    changes = len(sink.of_type(STATE_CHANGE))

    tutorial.emulator.call("batch", operation, {**target, **params})
    tutorial.emulator.advance(1)

    [blocked] = sink.of_type(QUEUE_BLOCKED)
    assert blocked["resources"] == [job]
    assert (blocked["detail"]["status"], blocked["detail"]["jobQueue"]) == (
        "RUNNABLE", tutorial.queue_arn,
    )  # fmt: skip
    assert blocked["detail"]["statusReason"].startswith(f"{code} - ")
    assert len(sink.of_type(STATE_CHANGE)) == changes  # still RUNNABLE: no state change
