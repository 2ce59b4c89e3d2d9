"""Owns the emulator's EventBridge events: AWS Batch's service-job event shapes, to a sink.

Four shapes, with AWS's field names (docs/aws-semantics.md §4), source ``aws.batch`` and the job's
ARN in ``resources``: ``Batch Service Job State Change`` (the DescribeServiceJob shape without
``tags`` and ``serviceRequestPayload``; none for the initial submission),
``Batch Service Job Preemption Started`` (``statusReason``, ``preemptedJobArn``, ``status``) and
``Batch Service Job Preemption Completed`` (``preemptedJobArn``, ``preemptionSummary``,
``status``) and ``Batch Service Job Queue Blocked`` (the state change's detail, for the core's
``QUEUE_BLOCKED``: a job that turns RUNNABLE with a MISCONFIGURATION reason, or gets one while
RUNNABLE when a share or the service environment shrinks below its demand). Events go to an
:class:`EventSink`: a bounded in-memory list that tests read, and optionally a JSON Lines file
(``quota local serve --events-file``).

The file is written after the transitions: an event is rendered (pure, in memory) as the
scheduler tells it, and its line is written when the request that caused it is done
(:meth:`EventSink.flush`, called by the emulator). A failed write (a full disk) is logged and
counted (:attr:`EventSink.write_failures`); it never reaches the scheduler or the client.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any

from quota_constructs.local.handlers.job_view import (
    attempt_resource,
    attempts,
    epoch_ms,
    preemption_summary,
    share_name,
)
from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.clock import EmulatorClock
from quota_constructs.model import JobStatus
from quota_constructs.scheduling import EventKind, Job, SchedulerEvent

SOURCE = "aws.batch"
STATE_CHANGE = "Batch Service Job State Change"
PREEMPTION_STARTED = "Batch Service Job Preemption Started"
PREEMPTION_COMPLETED = "Batch Service Job Preemption Completed"
QUEUE_BLOCKED = "Batch Service Job Queue Blocked"
"""Sent for the core's ``QUEUE_BLOCKED`` (a RUNNABLE job with a new MISCONFIGURATION reason):
after its state change when it turns RUNNABLE so, alone when a share or service environment
update makes a waiting job misconfigured (Batch user guide, "Service job queue blocked events";
which reasons, and whether the second case, AWS sends it for is UNCONFIRMED)."""
DETAIL_TYPES = {
    EventKind.STATE_CHANGE: STATE_CHANGE,
    EventKind.PREEMPTION_STARTED: PREEMPTION_STARTED,
    EventKind.PREEMPTION_COMPLETED: PREEMPTION_COMPLETED,
    EventKind.QUEUE_BLOCKED: QUEUE_BLOCKED,
}
DEFAULT_KEPT_EVENTS = 10_000
"""Events the in-memory list keeps (the oldest are dropped first); the file keeps every one."""
LOG = logging.getLogger(__name__)


class EventSink:
    """Where emitted events go: ``events`` (the last ``keep``) and, when given, a JSONL file.

    The file is checked when the sink is made: it is emptied and one byte is written and
    flushed, so an unwritable path or a full device (``/dev/full``) raises ``OSError`` here.
    """

    def __init__(self, path: str | Path | None = None, *, keep: int = DEFAULT_KEPT_EVENTS) -> None:
        self.path = Path(path) if path is not None else None
        self._events: deque[dict[str, Any]] = deque(maxlen=keep)
        self._unwritten: list[str] = []
        self.write_failures = 0
        """Events whose line could not be written to the file (each failure logged)."""
        if self.path is not None:
            _check_writable(self.path)

    @property
    def events(self) -> list[dict[str, Any]]:
        return list(self._events)

    def of_type(self, detail_type: str) -> list[dict[str, Any]]:
        """The kept events of one ``detail-type``, oldest first."""
        return [e for e in self._events if e["detail-type"] == detail_type]

    def emit(self, event: dict[str, Any]) -> None:
        """Keep ``event``; its line waits for :meth:`flush`."""
        self._events.append(event)
        if self.path is not None:
            self._unwritten.append(json.dumps(event) + "\n")

    def flush(self) -> None:
        """Append the events emitted since the last flush to the file; a failed write is logged
        and counted, and those events are dropped from the file (the list keeps them)."""
        if self.path is None or not self._unwritten:
            return
        lines, self._unwritten = self._unwritten, []
        try:
            with self.path.open("a", encoding="utf-8") as file:
                file.write("".join(lines))
        except OSError as error:
            self.write_failures += len(lines)
            LOG.error("could not write %d event(s) to %s: %s", len(lines), self.path, error)


def _check_writable(path: Path) -> None:
    """Empty ``path`` and prove a write reaches it (``OSError`` if not)."""
    with path.open("w", encoding="utf-8") as file:
        file.write("\n")
        file.flush()
        if path.is_file():
            file.truncate(0)


class BatchEvents:
    """Renders scheduler events as AWS Batch's EventBridge events into ``sink``."""

    def __init__(self, account: Account, clock: EmulatorClock, sink: EventSink) -> None:
        self.account = account
        self.clock = clock
        self.sink = sink

    def __call__(self, queue_name: str, event: SchedulerEvent) -> None:
        detail_type = DETAIL_TYPES.get(event.kind)
        if detail_type is None:
            return
        if event.kind is EventKind.STATE_CHANGE and event.previous_status in (None, event.status):
            return  # AWS sends none for the initial submission
        detail = self._detail(queue_name, event)
        self.sink.emit(self._envelope(detail_type, event, detail))

    def _envelope(
        self, detail_type: str, event: SchedulerEvent, detail: dict[str, Any]
    ) -> dict[str, Any]:
        seconds = self.clock.epoch(event.time)
        return {
            "version": "0",
            "id": str(uuid.uuid4()),  # EventBridge: "A Version 4 UUID ... for every event"
            "detail-type": detail_type,
            "source": SOURCE,
            "account": self.account.account_id,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds)),
            "region": self.account.region,
            "resources": [self.account.service_job(event.job.job_id)],
            "detail": detail,
        }

    def _detail(self, queue_name: str, event: SchedulerEvent) -> dict[str, Any]:
        job = event.job
        arn = self.account.service_job(job.job_id)
        if event.kind is EventKind.PREEMPTION_STARTED:
            reason = event.status_reason
            return {"statusReason": reason, "preemptedJobArn": arn, "status": event.status.value}
        if event.kind is EventKind.PREEMPTION_COMPLETED:
            summary = preemption_summary(self.account, self.clock, job)
            return {
                "preemptedJobArn": arn,
                "preemptionSummary": summary,
                "status": job.status.value,
            }
        return self._state(queue_name, job, event.status, event.status_reason)

    def _state(
        self, queue_name: str, job: Job, status: JobStatus, reason: str | None
    ) -> dict[str, Any]:
        detail = {
            "attempts": attempts(self.account, self.clock, job),
            "createdAt": epoch_ms(self.clock, job.created_at),
            "jobArn": self.account.service_job(job.job_id),
            "jobId": job.job_id,
            "jobName": job.request.job_name,
            "jobQueue": self.account.job_queue(queue_name),
            "quotaShareName": share_name(job),
            "schedulingPriority": job.priority,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "status": status.value,
            "statusReason": reason,
            "startedAt": epoch_ms(self.clock, job.started_at),
            "stoppedAt": epoch_ms(self.clock, job.stopped_at),
            "preemptionSummary": preemption_summary(self.account, self.clock, job),
        }
        if job.attempts:
            latest = attempt_resource(self.account, job, job.attempts[-1].number)
            detail["latestAttempt"] = {"serviceResourceId": latest}
        return {key: value for key, value in detail.items() if value is not None}
