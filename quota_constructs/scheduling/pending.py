"""Pending reasons: why a RUNNABLE job waits, and since when it holds its place in the queue."""

from __future__ import annotations

from quota_constructs.model import JobStatus, PendingKind, TypeFigures, head_wait_reason
from quota_constructs.scheduling.job import Job
from quota_constructs.scheduling.ledger import CapacityLedger, ShareAccount
from quota_constructs.scheduling.preemptions_in_progress import PreemptionsInProgress
from quota_constructs.scheduling.queues import RunnableQueues
from quota_constructs.scheduling.records import FrontEntry, PendingReason


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
        """Why the share's head job waits: the model's words, from the ledger's figures."""
        kind, text = head_wait_reason(
            account.name,
            account.borrows,
            [self._figures(account, itype, n) for itype, n in job.demand.items()],
            self._preemptions.awaited_by(job),
        )
        return PendingReason(kind, text, 0)

    def _figures(self, account: ShareAccount, itype: str, needed: int) -> TypeFigures:
        """The share's and the service environment's figures for ``needed`` x ``itype``."""
        ledger = self._ledger
        return TypeFigures(
            instance_type=itype,
            needed=needed,
            limit=account.limits.get(itype, 0),
            own_use=account.own.get(itype, 0),
            lent=account.lent.get(itype, 0),
            borrowed=account.borrowed.get(itype, 0),
            borrow_cap=account.borrow_caps.get(itype, 0),
            lendable=ledger.lendable(account, itype),
            service_environment_free=ledger.service_environment_free(itype),
        )

    def front_entry(self, job: Job) -> FrontEntry:
        """``job`` as a snapshot lists it, with the time it reached its current place."""
        since = self._queues.position_since(job)
        if since is None:
            since = job.runnable_at if job.runnable_at is not None else job.created_at
        return FrontEntry(job.job_id, job.share_name, job.priority, since)
