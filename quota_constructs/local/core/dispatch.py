"""Dispatch passes and the attempt lifecycle: own capacity, reclaim, borrowing, in-share."""

from __future__ import annotations

import heapq

from quota_constructs.local.core.job import Job
from quota_constructs.local.core.ledger import _checkpointed, _Ev, _Share
from quota_constructs.local.core.preemption import _Preemption
from quota_constructs.local.core.records import (
    JSTLA_REASON,
    REASON_FAILED,
    REASON_SUCCEEDED,
    REASON_TIMEOUT,
    JobStatus,
    Outcome,
)

_MAX_ROUNDS = 100_000
"""Passes at one instant before the scheduler gives up (only a bug can get there)."""


class _Dispatch(_Preemption):
    """Dispatch passes at one instant, timed-event handling and the end of attempts."""

    # --- internals: dispatch passes -----------------------------------------------------------

    def _settle(self) -> None:
        """Run dispatch passes at the current time until nothing changes."""
        rounds = 0
        while self._dirty:
            self._dirty = False
            rounds += 1
            if rounds > _MAX_ROUNDS:
                raise RuntimeError(
                    f"scheduler for {self.queue_name!r} did not settle at t={self.now} after "
                    f"{_MAX_ROUNDS} passes (a bug: please report it with the workload)"
                )
            self._pass()

    def _pass(self) -> None:
        """One dispatch pass: own capacity, cross-share reclaim, borrowing FIFO, in-share.

        A share whose blocked head saw no relevant change since the last pass is skipped
        (its memo key still matches), so a pass costs O(shares) plus the work it does.
        """
        blocked: list[tuple[_Share, Job]] = []
        for share in self._ordered_shares():
            if not share.heap or not self._can_dispatch(share):
                continue
            head = self._head(share)
            if head is None or share.memo == self._memo_key(share, head):
                continue
            head = self._dispatch_own(share)
            if head is not None:
                blocked.append((share, head))
        if not blocked:
            return
        keys = [self._memo_key(share, head) for share, head in blocked]
        for share, head in blocked:
            if head._awaiting == 0 and self._reclaim(share, head):
                return  # next round: the reclaiming head takes its capacity back first
        self._borrow_fifo([b for b in blocked if b[0].spec.strategy.borrows])
        for share, _ in blocked:
            head = self._head(share)
            if head is not None and head._awaiting == 0 and share.spec.in_share_preemption:
                self._preempt_in_share(share, head)
        for (blocked_share, _), key in zip(blocked, keys, strict=True):
            head = self._head(blocked_share)
            # Remember only shares the pass evaluated fully and left untouched.
            if head is not None and self._memo_key(blocked_share, head) == key:
                blocked_share.memo = key

    def _memo_key(self, share: _Share, head: Job) -> tuple[object, ...]:
        depends_on_others = share.borrows or self._se_binding
        return (
            head.job_id,
            head._heap_ver,
            share.epoch,
            self._preempt_epoch,
            self._release_epoch if depends_on_others else 0,
        )

    def _dispatch_own(self, share: _Share) -> Job | None:
        """Dispatch the share's jobs that fit its idle capacity; return the blocked head."""
        skipped: list[Job] = []
        blocked_head: Job | None = None
        while True:
            head = self._head(share)
            if head is None:
                break
            alloc = self._plan_own(share, head)
            if alloc is None:
                if blocked_head is None:
                    blocked_head = head
                if len(skipped) >= self.options.backfill_depth:
                    break
                heapq.heappop(share.heap)
                skipped.append(head)
                continue
            heapq.heappop(share.heap)
            self._dispatch(head, alloc)
        for job in skipped:
            self._push(job)
        if blocked_head is not None:
            self._note_position(blocked_head)
        return blocked_head

    def _note_position(self, job: Job) -> None:
        if job._position_since is None:
            job._position_since = self.now

    def _borrow_fifo(self, candidates: list[tuple[_Share, Job]]) -> None:
        """Borrowing shares' blocked heads, served in submit order (FIFO idle assignment)."""
        heap = [(job.seq, share.order, share.name) for share, job in candidates]
        heapq.heapify(heap)
        while heap:
            _, _, name = heapq.heappop(heap)
            share = self._shares[name]
            head = self._head(share)
            if head is None:
                continue
            alloc = self._plan_own(share, head) or self._plan_borrow(share, head)
            if alloc is None:
                continue
            heapq.heappop(share.heap)
            self._dispatch(head, alloc)
            self._dirty = True  # the share's next head may need a reclaim: another round
            nxt = self._dispatch_own(share)
            if nxt is not None:
                heapq.heappush(heap, (nxt.seq, share.order, share.name))

    def _dispatch(self, job: Job, alloc: dict[str, dict[str, int]]) -> None:
        self._hold(job, alloc)
        job.scheduled_at = self.now
        job.starting_at = None
        job.started_at = None
        job._position_since = None
        job._attempts_used += 1
        job._dispatches += 1
        self._set_status(job, JobStatus.SCHEDULED, None)
        self._schedule(self.now + self.options.scheduled_to_starting_s, _Ev.TO_STARTING, job)

    # --- internals: attempt lifecycle ---------------------------------------------------------

    def _handle(self, kind: _Ev, job: Job) -> None:
        if kind is _Ev.TO_RUNNABLE:
            self._make_runnable(job, None)
        elif kind is _Ev.TO_STARTING:
            job.starting_at = self.now
            self._set_status(job, JobStatus.STARTING, None)
            self._schedule(self.now + self.options.starting_to_running_s, _Ev.TO_RUNNING, job)
        elif kind is _Ev.TO_RUNNING:
            self._start_running(job)
        elif kind is _Ev.FINISH:
            self._finish(job, job.request.outcome, None)
        elif kind is _Ev.TIMEOUT:
            self._finish(job, Outcome.FAILED, REASON_TIMEOUT)
        elif kind is _Ev.TIME_LIMIT:
            reason = job._infeasible_reason or ""
            self._terminate(job, JSTLA_REASON.format(reason=reason.split(" - ")[0]))
        elif kind is _Ev.PREEMPT_DONE:
            self._complete_preemption(job)

    def _start_running(self, job: Job) -> None:
        job.started_at = self.now
        self._set_status(job, JobStatus.RUNNING, None)
        if job.request.duration_s is not None:
            remaining = max(0.0, job.request.duration_s - job.progress_s)
            timeout = job.request.attempt_duration_s
            if timeout is not None and timeout < remaining:
                self._schedule(self.now + timeout, _Ev.TIMEOUT, job)
            else:
                self._schedule(self.now + remaining, _Ev.FINISH, job)
        elif job.request.attempt_duration_s is not None:
            self._schedule(self.now + job.request.attempt_duration_s, _Ev.TIMEOUT, job)

    def _finish(self, job: Job, outcome: Outcome, reason: str | None) -> None:
        if outcome is Outcome.SUCCEEDED:
            self._end_attempt(job, REASON_SUCCEEDED, preempted=False)
            job.stopped_at = self.now
            self._set_status(job, JobStatus.SUCCEEDED, REASON_SUCCEEDED)
            return
        text = reason or REASON_FAILED
        if job.started_at is not None and job.request.checkpoint_interval_s:
            job.progress_s += _checkpointed(
                self.now - job.started_at, job.request.checkpoint_interval_s
            )
        self._end_attempt(job, text, preempted=False)
        if job._attempts_used < job.request.retry_attempts:
            self._make_runnable(job, text)
        else:
            job.stopped_at = self.now
            self._set_status(job, JobStatus.FAILED, text)

    def _terminate(self, job: Job, reason: str) -> None:
        if job.status.is_dispatched:
            if job._preempting is not None:
                job._preempting = None
                self._land(job)
            self._end_attempt(job, reason, preempted=False)
        job.is_terminated = True
        job.stopped_at = self.now
        self._shares[job.share_name].infeasible.pop(job.job_id, None)
        self._set_status(job, JobStatus.FAILED, reason)
        self._dirty = True
