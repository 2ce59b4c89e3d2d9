"""Dispatch passes at one instant: own capacity, cross-share reclaim, FIFO borrowing, in-share."""

from __future__ import annotations

import heapq

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

Looked = tuple[ShareAccount, RunnableQueue, Job, bool]
"""A share a pass looked at, its queue, its blocked head, and whether it was only woken by
released capacity (quiet: its own state is as when it was last looked at)."""
Wake = tuple[str, int, int, int]
"""Per instance type of a waiting head: type, instances, instances to borrow, the share's own
contribution to :attr:`CapacityLedger.lendable_total`."""


class Dispatcher:
    """Decides which RUNNABLE jobs take capacity, and when a preemption must make room.

    A pass looks only at the shares touched since they were last looked at
    (:class:`ShareChanges`): their queue head, capacity use, holders or preemptions changed.
    A borrowing share whose blocked head could only be helped by capacity released elsewhere
    waits, indexed by instance type, until a release of one of its head's types leaves enough
    lendable and free service-environment capacity for it; it is then looked at quietly (can
    it take that capacity?) instead of afresh. So a pass costs O(changed shares) plus the work
    it does, whatever the number of RUNNABLE jobs.

    Coarse rules, when a share's decisions depend on more than its head and its own state
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
        self._waiting: dict[str, tuple[Job, tuple[Wake, ...]]] = {}
        """Borrowing shares left blocked by a full pass: their head and what would wake it."""
        self._waiting_by_type: dict[str, set[str]] = {}
        self._quiet: set[str] = set()
        """Waiting shares woken by released capacity, to look at quietly."""
        self._coarse = True
        """Coarse rules (see the class docstring), decided at each :meth:`forget_blocked_heads`."""
        self._se_waiting: dict[str, Job] = {}
        """Shares that do not borrow, left blocked by a full pass with a head that fits their
        own free capacity but not the service environment's (over-limit holders): looked at
        again after a preemption starts or ends, as every share is in a coarse wake."""

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
        """Look at every share afresh in the next pass (after a configuration or options
        change), and decide again whether the coarse rules apply."""
        self._changes.touched.update(self._ledger.accounts)
        options = self.options
        self._coarse = (
            self._ledger.se_binding
            or options.backfill_depth > 0
            or type(options.victim_policy) is not DefaultVictimPolicy
        )
        for queue in self._queues.by_share.values():
            queue.touch_every_push = self._coarse
        self._waiting.clear()
        self._waiting_by_type.clear()
        self._quiet.clear()
        for name in list(self._se_waiting):
            self._unwait(name)

    # --- one pass -----------------------------------------------------------------------------

    def _pass(self) -> None:
        """One pass: own capacity, cross-share reclaim, borrowing in submit order, in-share."""
        changes = self._changes
        if changes.preempted:
            changes.preempted = False
            self._wake_after_preemption()
        if changes.released:
            self._wake(changes.released)
            changes.released.clear()
        if not changes.touched and not self._quiet:
            return
        looked = self._dispatch_own_capacity()
        if not looked:
            return
        blocked = [entry for entry in looked if not entry[3]]
        if self._reclaim_once(blocked):
            # next round: the reclaiming head takes its capacity back first
            changes.touched.update(entry[0].name for entry in blocked)
            return
        self._borrow_in_submit_order([entry for entry in looked if entry[0].borrows])
        touched = changes.touched
        self._preempt_in_share([e for e in looked if not e[3] or e[0].name in touched])
        for account, _, head, quiet in looked:
            name = account.name
            if name in touched:
                continue  # changed during the pass: looked at afresh next time
            self._quiet.discard(name)
            if not quiet:
                self._wait(account, head)

    def _dispatch_own_capacity(self) -> list[Looked]:
        """Every share touched or woken (in share order) dispatches what fits its own free
        capacity; returns those left with a blocked head."""
        ledger = self._ledger
        accounts = ledger.accounts
        touched = self._changes.touched
        quiet = self._quiet
        for name in touched:
            self._unwait(name)
        quiet -= touched
        names = [name for name in (touched | quiet) if name in accounts]
        touched.clear()  # from here on: what changes during the pass
        by_share = self._queues.by_share
        disabled_dispatch = self.options.disabled_share_dispatches
        looked: list[Looked] = []
        for account in ledger.ordered_subset(names):
            name = account.name
            queue = by_share[name]
            if not queue.heap or not (account.enabled or disabled_dispatch):
                continue
            if name in quiet:
                head = self._waiting[name][0]
                if ledger.plan_own(account, head) is None:
                    looked.append((account, queue, head, True))
                    continue
                self._unwait(name)
                quiet.discard(name)
            blocked_head = self._dispatch_own(account, queue)
            touched.discard(name)
            if blocked_head is not None:
                looked.append((account, queue, blocked_head, False))
        return looked

    def _reclaim_once(self, blocked: list[Looked]) -> bool:
        """Cross-share reclaim for the first blocked head that needs one (and waits for no
        preemption in progress); whether one was issued."""
        awaited_by = self._preemptions.awaited_by
        for account, _, head, _ in blocked:
            if awaited_by(head) == 0:
                targets = self._preemptor.plan_reclaim(account, head)
                if targets:
                    self._preemptor.issue(targets)
                    return True
        return False

    def _preempt_in_share(self, looked: list[Looked]) -> None:
        """In-share preemption for each blocked share's current head, share by share."""
        awaited_by = self._preemptions.awaited_by
        preemptor = self._preemptor
        for account, queue, _, _ in looked:
            if not account.spec.in_share_preemption:
                continue
            head = queue.head()
            if head is None or awaited_by(head):
                continue
            preemptor.issue(preemptor.plan_in_share(account, head))

    # --- shares waiting for released capacity -------------------------------------------------

    def _wait(self, account: ShareAccount, head: Job) -> None:
        """A share a full pass left blocked: index it by its head's instance types if capacity
        released elsewhere alone could let that head dispatch (its own state unchanged)."""
        if self._coarse:
            return
        if not account.borrows:
            if all(account.free(t) >= n for t, n in head.demand.items()):
                self._se_waiting[account.name] = head
                # as any change of the share (a job queued behind the head included) made
                # passes look at it again: such a look may find the room since released
                self._queues.by_share[account.name].touch_every_push = True
            return
        own_fit = True
        borrow_ok = True
        wakes: list[Wake] = []
        for itype, n in head.demand.items():
            free = account.free(itype)
            need = 0 if free >= n else n - max(0, free)
            if need:
                own_fit = False
                if account.borrowed.get(itype, 0) + need > account.borrow_caps.get(itype, 0):
                    borrow_ok = False
            wakes.append((itype, n, need, max(0, free) if account.lends_now else 0))
        if not own_fit and not borrow_ok:
            return  # only a change of its own (then it is touched) can help
        self._waiting[account.name] = (head, tuple(wakes))
        for itype, *_ in wakes:
            self._waiting_by_type.setdefault(itype, set()).add(account.name)

    def _unwait(self, name: str) -> None:
        if self._se_waiting.pop(name, None) is not None:
            queue = self._queues.by_share.get(name)
            if queue is not None:
                queue.touch_every_push = self._coarse
        entry = self._waiting.pop(name, None)
        if entry is not None:
            for itype, *_ in entry[1]:
                self._waiting_by_type[itype].discard(name)

    def _wake_after_preemption(self) -> None:
        """A preemption started or ended: the shares waiting for the service environment (all
        shares in a coarse wake) look again if it has room for their head now."""
        ledger = self._ledger
        touched = self._changes.touched
        if self._coarse:
            touched.update(ledger.accounts)
            return
        se_free = ledger.se_free
        for name, head in self._se_waiting.items():
            if all(se_free(t) >= n for t, n in head.demand.items()):
                touched.add(name)

    def _wake(self, released: set[str]) -> None:
        """Capacity of ``released`` types came free: wake the waiting shares it may help."""
        ledger = self._ledger
        if self._coarse:
            binding = ledger.se_binding
            self._changes.touched.update(
                name for name, a in ledger.accounts.items() if binding or a.borrows
            )
            return
        se = ledger.se
        used = ledger.used
        lendable = ledger.lendable_total
        waiting = self._waiting
        quiet = self._quiet
        for itype in released:
            names = self._waiting_by_type.get(itype)
            if not names:
                continue
            se_free = se.get(itype, 0) - used.get(itype, 0)
            others = lendable.get(itype, 0)
            for name in names:
                if name in quiet:
                    continue
                for t, n, need, own in waiting[name][1]:
                    if t == itype and se_free >= n and (not need or others - own >= need):
                        quiet.add(name)
                        break

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

    def _borrow_in_submit_order(self, candidates: list[Looked]) -> None:
        """Borrowing shares' blocked heads, served in submit order (FIFO idle assignment)."""
        ledger = self._ledger
        by_share = self._queues.by_share
        heap = [(job.seq, account.order, account.name) for account, _, job, _ in candidates]
        heapq.heapify(heap)
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
