"""Dispatch passes at one instant: own capacity, cross-share reclaim, FIFO borrowing, in-share."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quota_constructs.model import exceeds_borrow_cap
from quota_constructs.scheduling.changes import ShareChanges
from quota_constructs.scheduling.event_queue import EventQueue
from quota_constructs.scheduling.job import Job
from quota_constructs.scheduling.ledger import CapacityLedger, ShareAccount
from quota_constructs.scheduling.lifecycle import JobLifecycle
from quota_constructs.scheduling.options import SchedulerOptions
from quota_constructs.scheduling.preemptions_in_progress import PreemptionsInProgress
from quota_constructs.scheduling.preemptor import Preemptor
from quota_constructs.scheduling.queues import RunnableQueue, RunnableQueues
from quota_constructs.scheduling.victims import DefaultVictimPolicy

MAX_PASSES = 100_000
"""Passes at one instant before the dispatcher gives up (only a bug can get there)."""


@dataclass(slots=True)
class BlockedShare:
    """A share a pass looked at and left with a blocked head (a record: never changed).

    Shares only woken by released capacity (their own state as when last looked at) are
    looked at quietly: the pass keeps them in a list of their own.
    """

    account: ShareAccount
    queue: RunnableQueue
    head: Job
    """The share's first job, which does not fit its own free capacity."""
    order_key: Any
    """Its place in the pass's share order (``CapacityLedger.ordered_subset``)."""


class Dispatcher:
    """Decides which RUNNABLE jobs take capacity, and when a preemption must make room.

    A pass looks only at the shares touched since they were last looked at
    (:class:`ShareChanges`): their queue head, capacity use, holders or preemptions changed.
    A share a pass left blocked is otherwise looked at again only when something that could
    unblock it changes: a borrowing share's head waits, indexed by instance type, until a
    release leaves enough lendable capacity for it after the pass's own-capacity step (it is
    then looked at quietly: can it borrow that capacity?); a head that fits its share's own
    free capacity but not the service environment waits for the service environment. So a
    pass costs O(changed shares) plus the work it does, whatever the number of RUNNABLE jobs.

    Broad wake-ups, when a share's decisions depend on more than its head and its own state
    (a binding service environment, a backfill window, a victim policy other than the
    default): every job queued, every release (for the shares that borrow; all shares when
    the service environment binds) and every preemption started or ended makes the shares
    concerned look afresh, as often as the previous dispatcher's blocked keys did.
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
        changes: ShareChanges,
    ) -> None:
        self.queue_name = queue_name
        self.options = options
        self._ledger = ledger
        self._queues = queues
        self._events = events
        self._preemptions = preemptions
        self._preemptor = preemptor
        self._lifecycle = lifecycle
        self._changes = changes
        self.every_share = False
        self.placing = True
        """``False`` while the service environment is DISABLED: no pass places a job."""
        """True: each pass looks at every share, as after :meth:`forget_blocked_heads` (a
        check that the indexed passes miss nothing, ``tests/scheduling/test_indexes.py``)."""
        self._wake_broadly = True
        """Broad wake-ups (see the class docstring), decided at each
        :meth:`forget_blocked_heads`."""
        self._blocked: dict[str, Job] = {}
        """Shares a full pass left blocked and untouched since, and their head."""
        self._waiting_to_borrow: dict[str, Job] = {}
        """Borrowing shares left blocked, whose head needs to borrow, and that head."""
        self._waiting_by_type: dict[str, dict[str, tuple[float, int]]] = {}
        """The same by instance type of their head: the lendable capacity (all lending shares
        counted, the share itself included) and the free service-environment capacity that
        could let the head dispatch."""
        self._waiting_for_service_environment: dict[str, Job] = {}
        """Shares that do not borrow, left blocked with a head that fits their own free
        capacity but not the service environment's (only while shares hold more than their
        limits): looked at again when a preemption starts or ends or a job is queued, as
        before every such change made passes look at every share."""
        self._borrowers_waiting_for_service_environment: dict[str, Job] = {}
        """The same for shares that borrow: looked at again when capacity is released."""

    def run_passes(self) -> None:
        """Run dispatch passes at the current instant while one is due."""
        events = self._events
        if not self.placing:
            events.pass_due = False  # a DISABLED service environment places nothing
            return
        passes = 0
        while events.pass_due:
            events.pass_due = False
            passes += 1
            if passes > MAX_PASSES:
                raise RuntimeError(
                    f"scheduler for {self.queue_name!r} did not settle at t={events.now} after "
                    f"{MAX_PASSES} passes (a bug: please report it with the workload)"
                )
            if self.every_share:
                self.forget_blocked_heads()
            self._pass()

    def forget_blocked_heads(self) -> None:
        """Look at every share afresh in the next pass (after a configuration or options
        change), and decide again whether broad wake-ups apply."""
        self._changes.touched.update(self._ledger.accounts)
        options = self.options
        self._wake_broadly = (
            self._ledger.se_binding
            or options.backfill_depth > 0
            or type(options.victim_policy) is not DefaultVictimPolicy
        )
        for queue in self._queues.by_share.values():
            queue.touch_every_push = self._wake_broadly
        self._blocked.clear()
        self._waiting_to_borrow.clear()
        self._waiting_by_type.clear()
        self._waiting_for_service_environment.clear()
        self._borrowers_waiting_for_service_environment.clear()

    # --- one pass -----------------------------------------------------------------------------

    def _pass(self) -> None:
        """One pass: own capacity, cross-share reclaim, borrowing in submit order, in-share."""
        changes = self._changes
        touched = changes.touched
        if changes.preempted:
            changes.preempted = False
            self._wake_after_preemption()
        released: set[str] | None = None
        if changes.released:
            released = changes.released
            changes.released = set()
            if self._wake_broadly:
                self._wake_broadly_after_release()
                released = None
            elif self._borrowers_waiting_for_service_environment:
                self._wake_if_service_environment_has_room(
                    self._borrowers_waiting_for_service_environment
                )
        if changes.lent_out:
            self._wake_lenders(changes.lent_out)
            changes.lent_out.clear()
        if not touched and (released is None or not self._waiting_to_borrow):
            return
        looked = self._dispatch_own_capacity() if touched else []
        quiet = self._wake_borrowers_after_release(released) if released is not None else []
        if not looked and not quiet:
            return
        if looked and self._reclaim_once(looked):
            # next round: the reclaiming head takes its capacity back first
            touched.update(entry.account.name for entry in looked)
            if released is not None:
                changes.released |= released  # the waiting shares are woken next round
            return
        borrowers = [e for e in looked if e.account.borrows]
        if borrowers or quiet:
            self._borrow_in_submit_order(borrowers + quiet)
        in_share = looked
        if quiet:
            woken = [e for e in quiet if e.account.name in touched]  # changed during the pass
            if woken:
                in_share = sorted(looked + woken, key=_order_key)
        self._preempt_in_share(in_share)
        note_what_unblocks = self._note_what_unblocks
        blocked = self._blocked
        for entry in looked:
            account = entry.account
            if account.name not in touched:  # else: changed, looked at afresh next time
                blocked[account.name] = entry.head
                note_what_unblocks(account, entry.head)

    def _dispatch_own_capacity(self) -> list[BlockedShare]:
        """Every share touched (in share order) dispatches what fits its own free capacity;
        returns those left with a blocked head."""
        ledger = self._ledger
        accounts = ledger.accounts
        touched = self._changes.touched
        if self._waiting_for_service_environment or self._borrowers_waiting_for_service_environment:
            for name in touched:
                self._forget_what_unblocks(name)
        else:
            waiting = self._waiting_to_borrow
            blocked = self._blocked
            drop = self._drop_thresholds
            for name in touched:
                blocked.pop(name, None)
                head = waiting.pop(name, None)
                if head is not None:
                    drop(name, head)
        names = [name for name in touched if name in accounts]
        touched.clear()  # from here on: what changes during the pass
        by_share = self._queues.by_share
        disabled_dispatch = self.options.disabled_share_dispatches
        looked: list[BlockedShare] = []
        arriving = self._lifecycle.waits_to_arrive if self.options.dispatch_delay_s else None
        for account, key in ledger.ordered_subset(names):
            queue = by_share[account.name]
            if not queue.heap or not (account.enabled or disabled_dispatch):
                continue
            if arriving is not None and _head_arriving(queue, arriving):
                continue  # looked at again when its dispatch delay is over
            blocked_head = self._dispatch_own(account, queue)
            touched.discard(account.name)
            if blocked_head is not None:
                looked.append(
                    BlockedShare(account=account, queue=queue, head=blocked_head, order_key=key)
                )
        return looked

    def _reclaim_once(self, blocked: list[BlockedShare]) -> bool:
        """Cross-share reclaim for the first blocked head that needs one (and waits for no
        preemption in progress); whether one was issued."""
        awaited_by = self._preemptions.awaited_by
        for entry in blocked:
            account = entry.account
            if account.lent_total > 0 and awaited_by(entry.head) == 0:
                targets = self._preemptor.plan_reclaim(account, entry.head)
                if targets:
                    self._preemptor.issue(targets)
                    return True
        return False

    def _preempt_in_share(self, looked: list[BlockedShare]) -> None:
        """In-share preemption for each blocked share's current head, share by share."""
        awaited_by = self._preemptions.awaited_by
        preemptor = self._preemptor
        for entry in looked:
            account = entry.account
            if not account.in_share_preemption:
                continue
            head = entry.queue.head()
            if head is None or awaited_by(head):
                continue
            preemptor.issue(preemptor.plan_in_share(account, head))

    def _dispatch_own(self, account: ShareAccount, queue: RunnableQueue) -> Job | None:
        """Dispatch the share's jobs that fit its free capacity; return the blocked head.

        Up to ``backfill_depth`` jobs behind a blocked head are looked at too.
        """
        if self.options.backfill_depth:
            return self._dispatch_own_backfilling(account, queue)
        plan_own = self._ledger.plan_own
        dispatch = self._lifecycle.dispatch
        while True:
            head = queue.head()
            if head is None:
                return None
            alloc = plan_own(account, head)
            if alloc is None:
                self._queues.note_position(head, self._events.now)
                return head
            queue.pop_head()
            dispatch(head, alloc)

    def _dispatch_own_backfilling(self, account: ShareAccount, queue: RunnableQueue) -> Job | None:
        """:meth:`_dispatch_own` with a backfill window behind the blocked head."""
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

    def _borrow_in_submit_order(self, candidates: list[BlockedShare]) -> None:
        """Borrowing shares' blocked heads, served in submit order (FIFO idle assignment)."""
        ledger = self._ledger
        if len(candidates) == 1:
            only = candidates[0].account
            first = candidates[0].head
            if not ledger.fits(only, first):
                return  # a single share: the heap below would try just this head
            heap = [(first.seq, only.order, only.name)]
        else:
            heap = [(e.head.seq, e.account.order, e.account.name) for e in candidates]
            heapq.heapify(heap)
        by_share = self._queues.by_share
        while heap:
            _, _, name = heapq.heappop(heap)
            account = ledger.accounts[name]
            queue = by_share[name]
            head = queue.head()
            if head is None or not ledger.fits(account, head):
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

    # --- shares waiting until something could unblock them -----------------------------------

    def _note_what_unblocks(self, account: ShareAccount, head: Job) -> None:
        """A share a full pass left blocked and untouched: note what could unblock its head
        apart from a change of its own (which touches it)."""
        if self._wake_broadly:
            return
        name = account.name
        idle = account.idle
        fits_own = True
        for itype, n in head.demand.items():
            if idle.get(itype, 0) < n:
                fits_own = False
                break
        if account.borrows:
            if fits_own:
                self._borrowers_waiting_for_service_environment[name] = head
                return
            wakes = self._borrow_thresholds(account, head)
            if wakes is None:
                return  # it may not borrow enough: only a change of its own can help
            self._waiting_to_borrow[name] = head
            by_type = self._waiting_by_type
            for itype, wake in wakes.items():
                entries = by_type.get(itype)
                if entries is None:
                    by_type[itype] = {name: wake}
                else:
                    entries[name] = wake
        elif fits_own:
            self._waiting_for_service_environment[name] = head
            self._queues.by_share[name].touch_every_push = True

    @staticmethod
    def _borrow_thresholds(account: ShareAccount, head: Job) -> dict[str, tuple[float, int]] | None:
        """Per instance type of the head: the total lendable capacity (the share's own idle
        part included when it lends) and the free service-environment capacity it needs to
        dispatch by borrowing; ``None`` when its borrow limit does not let it."""
        out: dict[str, tuple[float, int]] = {}
        idle = account.idle
        for itype, n in head.demand.items():
            free = idle.get(itype, 0)
            if free >= n:
                out[itype] = (0, n)
                continue
            need = n - free if free > 0 else n
            if exceeds_borrow_cap(
                account.borrowed.get(itype, 0), need, account.borrow_caps.get(itype, 0)
            ):
                return None
            own = free if free > 0 and account.lends_now else 0
            out[itype] = (need + own, n)
        return out

    def _forget_what_unblocks(self, name: str) -> None:
        """The share is looked at afresh: forget what it waited for."""
        self._blocked.pop(name, None)
        head = self._waiting_to_borrow.pop(name, None)
        if head is not None:
            self._drop_thresholds(name, head)
        self._borrowers_waiting_for_service_environment.pop(name, None)
        if self._waiting_for_service_environment.pop(name, None) is not None:
            queue = self._queues.by_share.get(name)
            if queue is not None:
                queue.touch_every_push = self._wake_broadly

    def _drop_thresholds(self, name: str, head: Job) -> None:
        """Forget, per instance type of ``head``, what the share waited to borrow."""
        by_type = self._waiting_by_type
        for itype in head.demand:
            by_type[itype].pop(name, None)

    def _wake_after_preemption(self) -> None:
        """A preemption started or ended: the shares that do not borrow and wait for the
        service environment (every share under broad wake-ups) look again if it has room
        for their head now."""
        if self._wake_broadly:
            self._changes.touched.update(self._ledger.accounts)
        elif self._waiting_for_service_environment:
            self._wake_if_service_environment_has_room(self._waiting_for_service_environment)

    def _wake_lenders(self, lenders: set[str]) -> None:
        """Other shares' jobs took idle capacity of ``lenders``: a blocked lender looks again
        only if that can matter. Its own capacity only shrank, so its head can neither take
        its own capacity nor borrow; only a preemption may now find the new borrower: a
        reclaim if the head fits the share's limit, an in-share preemption (whose lent part
        may reclaim it) if the share has lower-priority jobs to preempt."""
        touched = self._changes.touched
        if self._wake_broadly:
            touched.update(lenders)
            return
        accounts = self._ledger.accounts
        blocked = self._blocked
        awaited_by = self._preemptions.awaited_by
        for name in lenders:
            head = blocked.get(name)
            if head is None or name in touched or awaited_by(head):
                continue  # no blocked head, looked at anyway, or waiting for a preemption
            account = accounts[name]
            limits = account.limits
            own = account.own
            if all(n <= limits.get(t, 0) - own.get(t, 0) for t, n in head.demand.items()):
                touched.add(name)
            elif account.in_share_preemption:
                priority = head.priority
                if any(j.priority < priority for j in account.holding.values()):
                    touched.add(name)

    def _wake_if_service_environment_has_room(self, heads: dict[str, Job]) -> None:
        """Touch the shares of ``heads`` whose head the service environment has room for."""
        service_environment_free = self._ledger.service_environment_free
        touched = self._changes.touched
        for name, head in heads.items():
            if all(service_environment_free(t) >= n for t, n in head.demand.items()):
                touched.add(name)

    def _wake_broadly_after_release(self) -> None:
        """Capacity was released (broad wake-ups): every share that borrows looks again, every
        share when the service environment binds."""
        ledger = self._ledger
        binding = ledger.se_binding
        self._changes.touched.update(
            name for name, a in ledger.accounts.items() if binding or a.borrows
        )

    def _wake_borrowers_after_release(self, released: set[str]) -> list[BlockedShare]:
        """After the own-capacity step: the waiting borrowing shares that capacity released
        of ``released`` types may let borrow now, to look at quietly.

        A waiting share's own state is as when it was left blocked, so its head can borrow
        only if, for each released type it needs, the lending shares lend and the service
        environment has room for what its thresholds say.
        """
        ledger = self._ledger
        se = ledger.se
        used = ledger.used
        lendable = ledger.lendable_total
        by_type = self._waiting_by_type
        woken: list[str] = []
        for itype in released:
            entries = by_type.get(itype)
            if not entries:
                continue
            total = lendable.get(itype, 0)
            service_environment_free = se.get(itype, 0) - used.get(itype, 0)
            for name, (needed, n) in entries.items():
                if total >= needed and service_environment_free >= n and name not in woken:
                    woken.append(name)
        if not woken:
            return []
        by_share = self._queues.by_share
        waiting = self._waiting_to_borrow
        return [
            BlockedShare(
                account=account,
                queue=by_share[account.name],
                head=waiting[account.name],
                order_key=key,
            )
            for account, key in ledger.ordered_subset(woken)
        ]


def _order_key(entry: BlockedShare) -> Any:
    """Sort key: the share's place in the pass's share order."""
    return entry.order_key


def _head_arriving(queue: RunnableQueue, arriving: Callable[[Job], bool]) -> bool:
    """Whether the queue's head became RUNNABLE too recently to dispatch."""
    head = queue.head()
    return head is not None and arriving(head)
