"""Dispatch passes at one instant: own capacity, cross-share reclaim, FIFO borrowing, in-share."""

from __future__ import annotations

import heapq

from quota_constructs.scheduling.event_queue import EventQueue
from quota_constructs.scheduling.job import Job
from quota_constructs.scheduling.ledger import CapacityLedger, ShareAccount
from quota_constructs.scheduling.lifecycle import JobLifecycle
from quota_constructs.scheduling.options import SchedulerOptions
from quota_constructs.scheduling.preemptions_in_progress import PreemptionsInProgress
from quota_constructs.scheduling.preemptor import Preemptor
from quota_constructs.scheduling.queues import RunnableQueue, RunnableQueues

MAX_PASSES = 100_000
"""Passes at one instant before the dispatcher gives up (only a bug can get there)."""

BlockedKey = tuple[int, int, int, int, int, int]
Blocked = tuple[ShareAccount, RunnableQueue, Job]


class Dispatcher:
    """Decides which RUNNABLE jobs take capacity, and when a preemption must make room.

    A share whose blocked head saw no relevant change since the pass that found it blocked
    is skipped (its blocked key still matches), so a pass costs O(shares) plus the work it does.
    """

    def __init__(
        self,
        queue_name: str,
        options: SchedulerOptions,
        ledger: CapacityLedger,
        queues: RunnableQueues,
        events: EventQueue,
        preemptions: PreemptionsInProgress,
        preemptor: Preemptor,
        lifecycle: JobLifecycle,
    ) -> None:
        self.queue_name = queue_name
        self.options = options
        self._ledger = ledger
        self._queues = queues
        self._events = events
        self._preemptions = preemptions
        self._preemptor = preemptor
        self._lifecycle = lifecycle
        self._blocked_keys: dict[str, BlockedKey] = {}
        """Per share: the state in which the last full pass found its head blocked."""

    def run_passes(self) -> None:
        """Run dispatch passes at the current instant while one is due."""
        events = self._events
        passes = 0
        while events.pass_due:
            events.pass_due = False
            passes += 1
            if passes > MAX_PASSES:
                raise RuntimeError(
                    f"scheduler for {self.queue_name!r} did not settle at t={events.now} after "
                    f"{MAX_PASSES} passes (a bug: please report it with the workload)"
                )
            self._pass()

    def forget_blocked_heads(self) -> None:
        """Look at every share afresh in the next pass (after a configuration change)."""
        self._blocked_keys.clear()

    def _pass(self) -> None:
        """One pass: own capacity, cross-share reclaim, borrowing in submit order, in-share."""
        blocked = self._dispatch_own_capacity()
        if not blocked:
            return
        keys = [self._blocked_key(account, queue, head) for account, queue, head in blocked]
        if self._reclaim_once(blocked):
            return  # next round: the reclaiming head takes its capacity back first
        self._borrow_in_submit_order([b for b in blocked if b[0].borrows])
        self._preempt_in_share(blocked)
        for (account, queue, _), key in zip(blocked, keys, strict=True):
            head = queue.head()
            # Remember only shares the pass evaluated fully and left untouched.
            if head is not None and self._blocked_key(account, queue, head) == key:
                self._blocked_keys[account.name] = key

    def _dispatch_own_capacity(self) -> list[Blocked]:
        """Every share (in share order) dispatches what fits its own free capacity; returns
        the shares left with a blocked head, skipping those whose blocked key still matches."""
        by_share = self._queues.by_share
        blocked_keys = self._blocked_keys
        blocked_key = self._blocked_key
        disabled_dispatch = self.options.disabled_share_dispatches
        blocked: list[Blocked] = []
        for account in self._ledger.ordered():
            queue = by_share[account.name]
            if not queue.heap or not (account.enabled or disabled_dispatch):
                continue
            head = queue.head()
            if head is None or blocked_keys.get(account.name) == blocked_key(account, queue, head):
                continue
            head = self._dispatch_own(account, queue)
            if head is not None:
                blocked.append((account, queue, head))
        return blocked

    def _reclaim_once(self, blocked: list[Blocked]) -> bool:
        """Cross-share reclaim for the first blocked head that needs one (and waits for no
        preemption in progress); whether one was issued."""
        awaited_by = self._preemptions.awaited_by
        for account, _, head in blocked:
            if awaited_by(head) == 0:
                targets = self._preemptor.plan_reclaim(account, head)
                if targets:
                    self._preemptor.issue(targets)
                    return True
        return False

    def _preempt_in_share(self, blocked: list[Blocked]) -> None:
        """In-share preemption for each blocked share's current head, share by share."""
        awaited_by = self._preemptions.awaited_by
        preemptor = self._preemptor
        for account, queue, _ in blocked:
            head = queue.head()
            if head is None or awaited_by(head) or not account.spec.in_share_preemption:
                continue
            preemptor.issue(preemptor.plan_in_share(account, head))

    def _blocked_key(self, account: ShareAccount, queue: RunnableQueue, head: Job) -> BlockedKey:
        ledger = self._ledger
        depends_on_others = account.borrows or ledger.se_binding
        return (
            head.seq,
            queue.entry_version(head),
            account.changes,
            queue.changes,
            self._preemptions.changes,
            ledger.releases if depends_on_others else 0,
        )

    def _dispatch_own(self, account: ShareAccount, queue: RunnableQueue) -> Job | None:
        """Dispatch the share's jobs that fit its free capacity; return the blocked head.

        Up to ``backfill_depth`` jobs behind a blocked head are looked at too.
        """
        plan_own = self._ledger.plan_own
        dispatch = self._lifecycle.dispatch
        backfill_depth = self.options.backfill_depth
        skipped: list[Job] = []
        blocked_head: Job | None = None
        while True:
            head = queue.head()
            if head is None:
                break
            alloc = plan_own(account, head)
            if alloc is None:
                if blocked_head is None:
                    blocked_head = head
                if len(skipped) >= backfill_depth:
                    break
                queue.pop_head()
                skipped.append(head)
                continue
            queue.pop_head()
            dispatch(head, alloc)
        for job in skipped:
            queue.push(job)
        if blocked_head is not None:
            self._queues.note_position(blocked_head, self._events.now)
        return blocked_head

    def _borrow_in_submit_order(self, candidates: list[Blocked]) -> None:
        """Borrowing shares' blocked heads, served in submit order (FIFO idle assignment)."""
        ledger = self._ledger
        by_share = self._queues.by_share
        heap = [(job.seq, account.order, account.name) for account, _, job in candidates]
        heapq.heapify(heap)
        while heap:
            _, _, name = heapq.heappop(heap)
            account = ledger.accounts[name]
            queue = by_share[name]
            head = queue.head()
            if head is None:
                continue
            alloc = ledger.plan_own(account, head) or ledger.plan_borrow(account, head)
            if alloc is None:
                continue
            queue.pop_head()
            self._lifecycle.dispatch(head, alloc)
            self._events.pass_due = True  # the share's next head may need a reclaim
            nxt = self._dispatch_own(account, queue)
            if nxt is not None:
                heapq.heappush(heap, (nxt.seq, account.order, name))
