"""Pending reasons: why a RUNNABLE job waits, and since when it holds its place in the queue."""

from __future__ import annotations

from quota_constructs.model import JobStatus
from quota_constructs.scheduling.job import Job
from quota_constructs.scheduling.ledger import CapacityLedger, ShareAccount
from quota_constructs.scheduling.preemptions_in_progress import PreemptionsInProgress
from quota_constructs.scheduling.queues import RunnableQueues
from quota_constructs.scheduling.records import FrontEntry, PendingKind, PendingReason


class PendingExplainer:
    """Explains, from the ledger and the queues as they stand, why a RUNNABLE job waits."""

    def __init__(
        self, ledger: CapacityLedger, queues: RunnableQueues, preemptions: PreemptionsInProgress
    ) -> None:
        self._ledger = ledger
        self._queues = queues
        self._preemptions = preemptions

    def reason(self, job: Job) -> PendingReason | None:
        """Typed reason a RUNNABLE job waits (``None`` for other states)."""
        if job.status is not JobStatus.RUNNABLE:
            return None
        account = self._ledger.accounts[job.share_name]
        infeasible = self._queues.infeasible_reason(job)
        if infeasible is not None:
            return PendingReason(PendingKind.EXCEEDS_LIMITS, infeasible, None)
        position = self._queues.of(job).position(job)
        if not self._ledger.dispatches(account):
            return PendingReason(
                PendingKind.SHARE_DISABLED,
                f"quota share {account.name} is DISABLED and its jobs do not dispatch",
                position,
            )
        if position > 0:
            return PendingReason(
                PendingKind.BEHIND_HIGHER_PRIORITY,
                f"behind {position} job(s) of higher priority or earlier submission in quota "
                f"share {account.name} (position {position})",
                position,
            )
        return self._head_reason(account, job)

    def _head_reason(self, account: ShareAccount, job: Job) -> PendingReason:
        def reason(kind: PendingKind, text: str) -> PendingReason:
            return PendingReason(kind, text, 0)

        awaited = self._preemptions.awaited_by(job)
        if awaited:
            return reason(
                PendingKind.WAITING_FOR_PREEMPTION,
                f"waiting for {awaited} preemption(s) in progress to release capacity",
            )
        spec = account.spec
        for itype, n in job.demand.items():
            if n > account.free_after_reclaim(itype) and not spec.strategy.borrows:
                return reason(
                    PendingKind.WAITING_FOR_OWN_CAPACITY,
                    f"quota share {account.name} uses {account.own.get(itype, 0)} of its "
                    f"{spec.limit(itype)} x {itype}; the job needs {n}",
                )
        for itype, n in job.demand.items():
            need = n - max(0, account.free(itype))
            if need <= 0:
                continue
            if n <= account.free_after_reclaim(itype):
                return reason(
                    PendingKind.WAITING_FOR_OWN_CAPACITY,
                    f"{account.lent.get(itype, 0)} x {itype} of quota share {account.name} are "
                    "lent out and cannot be reclaimed yet",
                )
            cap = spec.borrow_cap(itype)  # a whole number here; compiled, a float: int() it
            if account.borrowed.get(itype, 0) + need > cap:
                return reason(
                    PendingKind.BORROW_LIMIT_REACHED,
                    f"quota share {account.name} borrows {account.borrowed.get(itype, 0)} x "
                    f"{itype}; borrowing {need} more would exceed its borrow limit of {int(cap)}",
                )
            lendable = self._ledger.lendable(account, itype)
            if lendable < need:
                return reason(
                    PendingKind.NO_LENDABLE_CAPACITY,
                    f"needs to borrow {need} x {itype}; lending shares have {lendable} idle",
                )
        for itype, n in job.demand.items():
            free = self._ledger.se_free(itype)
            if free < n:
                return reason(
                    PendingKind.WAITING_FOR_SERVICE_ENVIRONMENT,
                    f"service environment has {max(0, free)} x {itype} free; the job needs {n}",
                )
        return reason(PendingKind.WAITING_FOR_DISPATCH, "fits; dispatched at the next pass")

    def front_entry(self, job: Job) -> FrontEntry:
        """``job`` as a snapshot lists it, with the time it reached its current place."""
        since = self._queues.position_since(job)
        if since is None:
            since = job.runnable_at if job.runnable_at is not None else job.created_at
        return FrontEntry(job.job_id, job.share_name, job.priority, since)
