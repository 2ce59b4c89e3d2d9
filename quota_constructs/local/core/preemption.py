"""Preemption: cross-share reclaim, in-share, limit-lowering (shed), and its completion."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from quota_constructs.local.core.job import Job
from quota_constructs.local.core.ledger import _checkpointed, _Ev, _Ledger, _Share
from quota_constructs.local.core.records import (
    PREEMPTION_IN_PROGRESS,
    REASON_CROSS_SHARE,
    REASON_IN_SHARE,
    REASON_LIMIT_LOWERED,
    EventKind,
    JobStatus,
    PreemptionRecord,
    PreemptionRule,
    _add,
    _positive,
)
from quota_constructs.local.core.victims import VictimCandidate


class _Preemption(_Ledger):
    """Choosing victims, starting preemptions and completing them (retry or FAILED)."""

    # --- victims ------------------------------------------------------------------------------

    def _candidates(
        self, jobs: Iterable[Job], frees: Callable[[Job], dict[str, int]], exclude: Job
    ) -> list[VictimCandidate]:
        out = []
        for job in jobs:
            if job._preempting is not None:
                continue
            if exclude._preempted_by.get(job.job_id) == job._dispatches:
                continue  # no ping-pong: a victim never preempts its own preemptor back
            amount = _positive(frees(job))
            if not amount:
                continue
            since = job.scheduled_at if job.scheduled_at is not None else self.now
            out.append(
                VictimCandidate(
                    job=job,
                    frees=amount,
                    borrowing=any(k != job.share_name for k in job.alloc),
                    running_for=self.now - since,
                )
            )
        return out

    # --- cross-share and in-share -------------------------------------------------------------

    def _reclaim(self, share: _Share, head: Job) -> bool:
        """Cross-share: the head fits the share's own limit but its capacity is lent out."""
        if not any(n > 0 for n in share.lent.values()):
            return False
        need: dict[str, int] = {}
        for itype, n in head.demand.items():
            if n > share.room(itype):
                return False
            short = n - max(0, share.idle(itype))
            if self._se_binding:  # borrowers of this share also hold the SE instances it needs
                short = max(short, n - self._se_room(itype))
            short = min(short, share.lent.get(itype, 0))
            if short > 0:
                need[itype] = short
        if not need:
            return False
        victims = self.options.victim_policy.choose(
            self._candidates(
                share.borrowers.values(), lambda j: dict(j.alloc.get(share.name, {})), head
            ),
            need,
        )
        if not victims or not self._se_ok_after(head, victims):
            return False
        for victim in victims:
            self._preempt(victim.job, PreemptionRule.CROSS_SHARE, head)
        return True

    def _preempt_in_share(self, share: _Share, head: Job) -> None:
        """In-share: lower-priority jobs of the share make room for a higher-priority head.

        Acts only on a complete plan: the in-share victims free the head's shortfall against
        the share's own limit, and borrowers of the share's lent instances (cross-share
        victims) free the rest, so the head is dispatched at the next round.
        """
        need: dict[str, int] = {}
        for itype, n in head.demand.items():
            short = n - max(0, share.room(itype))
            if short > 0:
                need[itype] = short
        if not need:
            return
        own = self.options.victim_policy.choose(
            self._candidates(
                (j for j in share.holding.values() if j.priority < head.priority),
                lambda j: dict(j.alloc.get(share.name, {})),
                head,
            ),
            need,
        )
        if not own:
            return
        freed: dict[str, int] = {}
        for victim in own:
            _add(freed, victim.job.alloc.get(share.name, {}))
        lent_need = {t: n - max(0, share.idle(t) + freed.get(t, 0)) for t, n in head.demand.items()}
        lent_need = _positive(lent_need)
        lenders: list[VictimCandidate] = []
        if lent_need:
            chosen = self.options.victim_policy.choose(
                self._candidates(
                    share.borrowers.values(), lambda j: dict(j.alloc.get(share.name, {})), head
                ),
                lent_need,
            )
            if not chosen:
                return
            lenders = chosen
        if not self._se_ok_after(head, [*own, *lenders]):
            return
        for victim in own:
            self._preempt(victim.job, PreemptionRule.IN_SHARE, head)
        for victim in lenders:
            self._preempt(victim.job, PreemptionRule.CROSS_SHARE, head)

    def _se_ok_after(self, head: Job, victims: Sequence[VictimCandidate]) -> bool:
        """Whether the head fits the service environment once the victims are gone.

        Only matters when the SE is smaller than the shares' sum; otherwise share limits imply
        it (and a following cross-share reclaim frees the rest).
        """
        if not self._se_binding:
            return True
        freed: dict[str, int] = {}
        for victim in victims:
            for amounts in victim.job.alloc.values():
                _add(freed, amounts)
        return all(self._se_room(t) + freed.get(t, 0) >= n for t, n in head.demand.items())

    # --- limit-lowering -----------------------------------------------------------------------

    def _enforce_limits(self) -> None:
        """After a share update: preempt until every share is within limits and borrow caps."""
        for share in self._ordered_shares():
            spec = share.spec
            # lent capacity beyond what the share may lend
            over_lent = {
                t: n - max(0, spec.limit(t) - share.own.get(t, 0)) if spec.strategy.lends else n
                for t, n in share.lent.items()
            }
            self._shed(share.borrowers.values(), share.name, _positive(over_lent))
            over_own = {t: n - spec.limit(t) for t, n in share.own.items()}
            self._shed(share.holding.values(), share.name, _positive(over_own))
            over_borrow: dict[str, int] = {}
            for t, n in share.borrowed.items():
                cap = spec.borrow_cap(t)
                if n > cap:
                    over_borrow[t] = int(n - cap)
            if over_borrow:
                self._shed(share.holding.values(), None, over_borrow)

    def _shed(self, jobs: Iterable[Job], lender: str | None, need: dict[str, int]) -> None:
        """Preempt (LIMIT_LOWERED) enough of ``jobs`` to give back ``need``.

        ``lender``: count what each job holds of that share's capacity; ``None``: what it
        borrows. Jobs already being preempted count as given back.
        """

        def frees(job: Job) -> dict[str, int]:
            if lender is not None:
                return _positive(job.alloc.get(lender, {}))
            return _positive(job.borrowed)

        cands = []
        for job in list(jobs):
            amount = frees(job)
            if job._preempting is not None:
                _add(need, amount, -1)
            elif amount:
                since = job.scheduled_at if job.scheduled_at is not None else self.now
                borrowing = any(k != job.share_name for k in job.alloc)
                cands.append(VictimCandidate(job, amount, borrowing, self.now - since))
        need = _positive(need)
        if not need:
            return
        victims = self.options.victim_policy.choose(cands, need) or cands
        for victim in victims:
            self._preempt(victim.job, PreemptionRule.LIMIT_LOWERED, None)

    # --- starting and completing a preemption -------------------------------------------------

    def _preempt(self, job: Job, rule: PreemptionRule, preemptor: Job | None) -> None:
        share = self._shares.get(job.share_name)
        before = _positive(share.borrowed) if share is not None else {}
        reason = {
            PreemptionRule.CROSS_SHARE: REASON_CROSS_SHARE,
            PreemptionRule.IN_SHARE: REASON_IN_SHARE,
            PreemptionRule.LIMIT_LOWERED: REASON_LIMIT_LOWERED,
        }[rule]
        after = dict(before)
        _add(after, job.borrowed, -1)
        record = PreemptionRecord(
            time=self.now,
            rule=rule,
            preemptor_job_id=preemptor.job_id if preemptor else None,
            preemptor_share=preemptor.share_name if preemptor else None,
            borrowed_before=before,
            borrowed_after=_positive(after),
            reason=reason,
            attempt=len(job.attempts) + 1,
            attempt_started_at=job.started_at,
        )
        job._preempting = record
        self._preempt_epoch += 1
        job.status_reason = PREEMPTION_IN_PROGRESS + reason
        job._gen += 1  # the attempt stops: cancel its completion and timeout
        if preemptor is not None:
            preemptor._position_since = None
        self._emit(EventKind.PREEMPTION_STARTED, job, job.status, record)
        if preemptor is not None:
            job._preempted_by[preemptor.job_id] = preemptor._dispatches + 1
        if self.options.preemption_duration_s > 0:
            self._in_flight += 1
            job._in_flight = True
            if preemptor is not None:
                job._beneficiary = preemptor
                preemptor._awaiting += 1
            self._schedule(self.now + self.options.preemption_duration_s, _Ev.PREEMPT_DONE, job)
        else:
            self._complete_preemption(job)

    def _land(self, job: Job) -> None:
        """A delayed preemption of ``job`` is over (completed or the job was terminated)."""
        self._preempt_epoch += 1
        if job._in_flight:
            job._in_flight = False
            self._in_flight -= 1
        if job._beneficiary is not None:
            job._beneficiary._awaiting -= 1
            job._beneficiary = None

    def _complete_preemption(self, job: Job) -> None:
        record = job._preempting
        if record is None:
            return
        self._land(job)
        job._preempting = None
        if job.started_at is not None and job.request.checkpoint_interval_s:
            job.progress_s += _checkpointed(
                self.now - job.started_at, job.request.checkpoint_interval_s
            )
        self._end_attempt(job, record.reason, preempted=True)
        retries = job.request.preemption_retries
        count = len(job.preemptions) + 1
        exhausted = retries is not None and count > retries
        out_of_attempts = (
            self.options.preemption_consumes_attempt
            and job._attempts_used >= job.request.retry_attempts
        )
        if not self.options.preemption_consumes_attempt:
            job._attempts_used -= 1
        record = replace(record, completed_at=self.now, terminated=exhausted or out_of_attempts)
        job.preemptions.append(record)
        if exhausted or out_of_attempts:
            job.stopped_at = self.now
            why = (
                f"preemptionRetriesBeforeTermination ({retries}) used up"
                if exhausted
                else f"retryStrategy.attempts ({job.request.retry_attempts}) used up"
            )
            self._set_status(
                job, JobStatus.FAILED, f"Preempted {count} time(s), {why}: {record.reason}"
            )
        else:
            self._make_runnable(job, record.reason)
        self._emit(EventKind.PREEMPTION_COMPLETED, job, job.status, record)
