"""Preemptions started and not yet over, the jobs waiting for them, and who preempted whom."""

from __future__ import annotations

from quota_constructs.scheduling.changes import ShareChanges
from quota_constructs.scheduling.job import Job
from quota_constructs.scheduling.records import PreemptionRecord


class PreemptionsInProgress:
    """Bookkeeping of preemptions between their start and their end, per job id.

    A delayed preemption (``preemption_duration_s > 0``) makes its beneficiary, the job it
    makes room for, wait until it ends. A victim may not preempt its preemptor back while the
    preemptor is still in the dispatch that preempted it (no ping-pong).

    An end touches the shares whose decisions read it: the victim's, those it holds capacity
    of (their preemption candidates) and the waiting beneficiary's; starts and ends are noted
    (:attr:`ShareChanges.preempted`) for the shares waiting for the service environment. (The
    preemptor decides which shares a start touches.)
    """

    def __init__(self, changes: ShareChanges) -> None:
        self._records: dict[str, PreemptionRecord] = {}
        self._beneficiaries: dict[str, Job] = {}
        self._awaited: dict[str, int] = {}
        self._shielded: dict[str, dict[str, int]] = {}
        self._changes = changes
        self._touched = changes.touched

    def _touch_holder(self, victim: Job) -> None:
        self._changes.preempted = True
        touched = self._touched
        touched.add(victim.share_name)
        touched.update(victim.alloc)

    def start(self, victim: Job, record: PreemptionRecord) -> None:
        """The preemption of ``victim`` has started."""
        self._records[victim.job_id] = record
        self._changes.preempted = True

    def shield(self, preemptor: Job, victim: Job, preemptor_dispatch: int) -> None:
        """``victim`` may not preempt ``preemptor`` during its dispatch ``preemptor_dispatch``."""
        self._shielded.setdefault(victim.job_id, {})[preemptor.job_id] = preemptor_dispatch

    def forget(self, job: Job) -> None:
        """Drop what is kept of a finished ``job`` (it preempts no one any more)."""
        self._shielded.pop(job.job_id, None)

    def shielded_dispatch(self, preemptor: Job, candidate: Job) -> int | None:
        """The dispatch of ``candidate`` during which ``preemptor`` may not preempt it."""
        shielded = self._shielded.get(preemptor.job_id)
        return shielded.get(candidate.job_id) if shielded else None

    def make_wait(self, victim: Job, beneficiary: Job) -> None:
        """``beneficiary`` waits for the delayed preemption of ``victim`` to end."""
        self._beneficiaries[victim.job_id] = beneficiary
        self._awaited[beneficiary.job_id] = self._awaited.get(beneficiary.job_id, 0) + 1
        self._touched.add(beneficiary.share_name)

    def end(self, victim: Job) -> PreemptionRecord | None:
        """The preemption of ``victim`` is over (completed, or the job was terminated): forget
        it and stop its beneficiary waiting. Returns its record (``None``: none in progress)."""
        record = self._records.pop(victim.job_id, None)
        if record is None:
            return None
        self._touch_holder(victim)
        beneficiary = self._beneficiaries.pop(victim.job_id, None)
        if beneficiary is not None:
            self._touched.add(beneficiary.share_name)
            left = self._awaited[beneficiary.job_id] - 1
            if left:
                self._awaited[beneficiary.job_id] = left
            else:
                del self._awaited[beneficiary.job_id]
        return record

    def in_progress(self, job: Job) -> bool:
        """Whether a preemption of ``job`` has started and not ended."""
        return job.job_id in self._records

    def awaited_by(self, job: Job) -> int:
        """Delayed preemptions in progress that make room for ``job``."""
        return self._awaited.get(job.job_id, 0)
