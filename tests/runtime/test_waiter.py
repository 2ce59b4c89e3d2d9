"""The waiter on its own: any JobReader and clock will do, no QueueClient, no network."""

from __future__ import annotations

from collections.abc import Iterator

from quota_constructs.runtime import JobStatus, JobSummary, TransitionKind, Until
from quota_constructs.runtime.waiting import Waiter


class ScriptedReader:
    """Jobs whose status follows a script, one step per poll; ``gone`` jobs are in no list."""

    def __init__(self, script: dict[str, list[JobStatus]], gone: frozenset[str] = frozenset()):
        self.script = script
        self.gone = gone
        self.poll = 0
        self.listed: list[JobStatus] = []
        self.described: list[str] = []

    def summary(self, job_id: str) -> JobSummary:
        steps = self.script[job_id]
        status = steps[min(self.poll, len(steps) - 1)]
        return JobSummary(job_id, job_id, None, status, "", "QS1", None, None, None, None)

    def list_pages(
        self, status: JobStatus, *, share: str | None = None
    ) -> Iterator[list[JobSummary]]:
        self.listed.append(status)
        yield [
            self.summary(job_id)
            for job_id in self.script
            if job_id not in self.gone and self.summary(job_id).status is status
        ]

    def describe(self, job_id: str, /) -> JobSummary:
        self.described.append(job_id)
        return self.summary(job_id)


class TickingClock:
    """Virtual time; every sleep is one poll interval of the scripted reader."""

    def __init__(self, reader: ScriptedReader) -> None:
        self.reader = reader
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds
        self.reader.poll += 1


def test_waits_through_a_plain_reader_and_reports_transitions() -> None:
    run = [JobStatus.RUNNABLE, JobStatus.RUNNING, JobStatus.SUCCEEDED]
    reader = ScriptedReader({"a": run, "b": [JobStatus.RUNNABLE, JobStatus.FAILED]})
    seen: list[tuple[str, TransitionKind]] = []
    waiter = Waiter(
        reader=reader,
        clock=TickingClock(reader),
        job_ids=["a", "b"],
        until=Until.TERMINAL,
        on_transition=lambda change: seen.append((change.job.job_id, change.kind)),
    )
    result = waiter.run(timeout=600)
    assert {job_id: s.status for job_id, s in result.jobs.items()} == {
        "a": JobStatus.SUCCEEDED,
        "b": JobStatus.FAILED,
    }
    assert seen == [
        ("a", TransitionKind.CHANGED),
        ("b", TransitionKind.CHANGED),
        ("a", TransitionKind.DISPATCHED),  # each poll reports in the caller's job order
        ("b", TransitionKind.FINISHED),
        ("a", TransitionKind.FINISHED),
    ]
    assert reader.described == []
    assert result.polls == 3 and result.calls == len(reader.listed)


def test_describes_only_a_job_found_in_no_list() -> None:
    reader = ScriptedReader(
        {"listed": [JobStatus.SUCCEEDED], "aged-out": [JobStatus.SUCCEEDED]},
        gone=frozenset({"aged-out"}),
    )
    waiter = Waiter(
        reader=reader,
        clock=TickingClock(reader),
        job_ids=["listed", "aged-out"],
        until=Until.TERMINAL,
    )
    result = waiter.run()
    assert set(result.jobs) == {"listed", "aged-out"}
    assert reader.described == ["aged-out"]
