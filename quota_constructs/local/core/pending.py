"""Pending-reason explanation: RUNNABLE order per share and why a share's head waits."""

from __future__ import annotations

from quota_constructs.local.core.job import Job
from quota_constructs.local.core.ledger import _Ledger, _Share
from quota_constructs.local.core.records import FrontEntry, PendingKind, PendingReason


class _Pending(_Ledger):
    """Order caches behind ``pending_reason`` and ``snapshot``, and the head's typed reason."""

    def _share_order_list(self, share: _Share) -> list[Job]:
        if self._order_cache_version != self._version:
            self._order_cache = {}
            self._position_cache = {}
            self._order_cache_version = self._version
        cached = self._order_cache.get(share.name)
        if cached is not None:
            return cached
        entries = sorted(e for e in share.heap if self._entry_valid(e))
        jobs = [e[3] for e in entries]
        self._order_cache[share.name] = jobs
        self._position_cache[share.name] = {job.job_id: i for i, job in enumerate(jobs)}
        return jobs

    def _head_reason(self, share: _Share, job: Job) -> PendingReason:
        def reason(kind: PendingKind, text: str) -> PendingReason:
            return PendingReason(kind, text, 0)

        if job._awaiting:
            return reason(
                PendingKind.WAITING_FOR_PREEMPTION,
                f"waiting for {job._awaiting} preemption(s) in progress to release capacity",
            )
        for itype, n in job.demand.items():
            if n > share.room(itype) and not share.spec.strategy.borrows:
                return reason(
                    PendingKind.WAITING_FOR_OWN_CAPACITY,
                    f"quota share {share.name} uses {share.own.get(itype, 0)} of its "
                    f"{share.spec.limit(itype)} x {itype}; the job needs {n}",
                )
        for itype, n in job.demand.items():
            need = n - max(0, share.idle(itype))
            if need <= 0:
                continue
            if n <= share.room(itype):
                return reason(
                    PendingKind.WAITING_FOR_OWN_CAPACITY,
                    f"{share.lent.get(itype, 0)} x {itype} of quota share {share.name} are lent "
                    "out and cannot be reclaimed yet",
                )
            cap = share.spec.borrow_cap(itype)
            if share.borrowed.get(itype, 0) + need > cap:
                return reason(
                    PendingKind.BORROW_LIMIT_REACHED,
                    f"quota share {share.name} borrows {share.borrowed.get(itype, 0)} x {itype}; "
                    f"borrowing {need} more would exceed its borrow limit of {cap}",
                )
            lendable = sum(
                max(0, s.idle(itype))
                for s in self._shares.values()
                if s is not share and self._lends(s)
            )
            if lendable < need:
                return reason(
                    PendingKind.NO_LENDABLE_CAPACITY,
                    f"needs to borrow {need} x {itype}; lending shares have {lendable} idle",
                )
        for itype, n in job.demand.items():
            if self._se_room(itype) < n:
                return reason(
                    PendingKind.WAITING_FOR_SERVICE_ENVIRONMENT,
                    f"service environment has {max(0, self._se_room(itype))} x {itype} free; "
                    f"the job needs {n}",
                )
        return reason(PendingKind.WAITING_FOR_DISPATCH, "fits; dispatched at the next pass")

    def _front_entry(self, job: Job) -> FrontEntry:
        since = job._position_since
        if since is None:
            since = job.runnable_at if job.runnable_at is not None else job.created_at
        return FrontEntry(job.job_id, job.share_name, job.priority, since)
