"""Preemption: plan victims from the capacity state as it stands (no change), then issue them.

As in Kueue (``Preemptor.GetTargets`` apart from ``IssuePreemptions``): the ``plan_*`` methods
only read the ledger and return :class:`PreemptionTarget` lists; :meth:`Preemptor.issue`
starts the preemptions (and completes them at once when ``preemption_duration_s`` is 0).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from quota_constructs.scheduling.capacity import Capacity, add_capacity, positive
from quota_constructs.scheduling.changes import ShareChanges
from quota_constructs.scheduling.event_queue import EventQueue, TimedEvent
from quota_constructs.scheduling.job import Job
from quota_constructs.scheduling.ledger import CapacityLedger, ShareAccount
from quota_constructs.scheduling.lifecycle import JobLifecycle
from quota_constructs.scheduling.options import SchedulerOptions
from quota_constructs.scheduling.preemptions_in_progress import PreemptionsInProgress
from quota_constructs.scheduling.queues import RunnableQueues
from quota_constructs.scheduling.records import (
    PREEMPTION_IN_PROGRESS,
    REASON_CROSS_SHARE,
    REASON_IN_SHARE,
    REASON_LIMIT_LOWERED,
    EventKind,
    PreemptionRecord,
    PreemptionRule,
    ReclaimScope,
)
from quota_constructs.scheduling.victims import VictimCandidate

_REASONS = {
    PreemptionRule.CROSS_SHARE: REASON_CROSS_SHARE,
    PreemptionRule.IN_SHARE: REASON_IN_SHARE,
    PreemptionRule.LIMIT_LOWERED: REASON_LIMIT_LOWERED,
}


@dataclass(frozen=True)
class PreemptionTarget:
    """A job to preempt, by which rule, and the job it makes room for (``None``: a limit)."""

    job: Job
    rule: PreemptionRule
    preemptor: Job | None
    relabel: Capacity | None = None
    """Cross-share, ``ReclaimScope.SHARE``: the lender's instances the job is made to hold
    (labels swapped with its share's other jobs) before it stops."""


class Preemptor:
    """Chooses victims (cross-share reclaim, in-share, limit-lowering) and preempts them."""

    def __init__(
        self,
        options: SchedulerOptions,
        ledger: CapacityLedger,
        queues: RunnableQueues,
        events: EventQueue,
        preemptions: PreemptionsInProgress,
        lifecycle: JobLifecycle,
        changes: ShareChanges,
    ) -> None:
        self.options = options
        self._changes = changes
        self._ledger = ledger
        self._queues = queues
        self._events = events
        self._preemptions = preemptions
        self._lifecycle = lifecycle

    # --- planning: reads the ledger, changes nothing ------------------------------------------

    def plan_reclaim(self, account: ShareAccount, head: Job) -> list[PreemptionTarget]:
        """Cross-share: the head fits its share's own limit but that capacity is lent out."""
        if account.lent_total <= 0:
            return []
        ledger = self._ledger
        need: dict[str, int] = {}
        for itype, n in head.demand.items():
            if n > account.free_after_reclaim(itype):
                return []
            short = n - max(0, account.free(itype))
            if ledger.se_binding:  # borrowers of this share also hold the SE instances it needs
                short = max(short, n - ledger.service_environment_free(itype))
            short = min(short, account.lent.get(itype, 0))
            if short > 0:
                need[itype] = short
        if not need:
            return []
        victims = self.options.victim_policy.choose(self._reclaim_candidates(account, head), need)
        if not victims or not self._fits_se_after(head, victims):
            return []
        return [self._reclaim_target(v, head) for v in victims]

    def plan_in_share(self, account: ShareAccount, head: Job) -> list[PreemptionTarget]:
        """In-share: lower-priority jobs of the share make room for a higher-priority head.

        Only a complete plan: the in-share victims free the head's shortfall against the
        share's own limit, and borrowers of the share's lent instances (cross-share victims)
        free the rest, so the head is dispatched at the next round.
        """
        priority = head.priority
        lower = [j for j in account.holding.values() if j.priority < priority]
        if not lower:
            return []  # no candidates, so no victims whatever the policy
        need: dict[str, int] = {}
        for itype, n in head.demand.items():
            short = n - max(0, account.free_after_reclaim(itype))
            if short > 0:
                need[itype] = short
        if not need:
            return []
        policy = self.options.victim_policy
        own = policy.choose(self._candidates(lower, _held_of(account), head), need)
        if not own:
            return []
        freed: dict[str, int] = {}
        for victim in own:
            add_capacity(freed, victim.job.alloc.get(account.name, {}))
        lent_need = positive(
            {t: n - max(0, account.free(t) + freed.get(t, 0)) for t, n in head.demand.items()}
        )
        lenders: list[VictimCandidate] = []
        if lent_need:
            chosen = policy.choose(self._reclaim_candidates(account, head), lent_need)
            if not chosen:
                return []
            lenders = chosen
        if not self._fits_se_after(head, [*own, *lenders]):
            return []
        return [
            PreemptionTarget(job=v.job, rule=PreemptionRule.IN_SHARE, preemptor=head) for v in own
        ] + [self._reclaim_target(v, head) for v in lenders]

    def plan_give_back(
        self, jobs: Iterable[Job], lender: str | None, need: dict[str, int]
    ) -> list[PreemptionTarget]:
        """LIMIT_LOWERED: enough of ``jobs`` to give back ``need``.

        ``lender``: count what each job holds of that share's capacity; ``None``: what it
        borrows. Jobs already being preempted count as given back.
        """

        def frees(job: Job) -> dict[str, int]:
            if lender is not None:
                return positive(job.alloc.get(lender, {}))
            return positive(job.borrowed)

        need = dict(need)
        now = self._events.now
        candidates = []
        for job in jobs:
            amount = frees(job)
            if self._preemptions.in_progress(job):
                add_capacity(need, amount, -1)
            elif amount:
                since = job.scheduled_at if job.scheduled_at is not None else now
                borrowing = any(k != job.share_name for k in job.alloc)
                candidates.append(VictimCandidate(job, amount, borrowing, now - since))
        need = positive(need)
        if not need:
            return []
        victims = self.options.victim_policy.choose(candidates, need) or candidates
        return [
            PreemptionTarget(job=v.job, rule=PreemptionRule.LIMIT_LOWERED, preemptor=None)
            for v in victims
        ]

    def _reclaim_target(self, victim: VictimCandidate, head: Job) -> PreemptionTarget:
        share_scope = self.options.reclaim_scope is ReclaimScope.SHARE
        return PreemptionTarget(
            job=victim.job,
            rule=PreemptionRule.CROSS_SHARE,
            preemptor=head,
            relabel=dict(victim.frees) if share_scope else None,
        )

    def _reclaim_candidates(self, lender: ShareAccount, head: Job) -> list[VictimCandidate]:
        """Cross-share candidates for ``lender``'s ``head`` (``SchedulerOptions.reclaim_scope``)."""
        if self.options.reclaim_scope is ReclaimScope.JOB:
            return self._candidates(lender.borrowers.values(), _held_of(lender), head)
        return self._share_candidates(lender, head)

    def _share_candidates(self, lender: ShareAccount, head: Job) -> list[VictimCandidate]:
        """Each borrowing share's instances of ``lender`` counted on its least protected jobs
        (lowest priority, then shortest run, then latest submitted): those jobs are the
        candidates, each freeing what is counted on it. Instances held by jobs already being
        preempted are on their way back and counted on no one."""
        in_progress = self._preemptions.in_progress
        name = lender.name
        lent_to: dict[str, dict[str, int]] = {}
        for job in lender.borrowers.values():
            if not in_progress(job):
                add_capacity(lent_to.setdefault(job.share_name, {}), job.alloc.get(name, _NOTHING))
        out: list[VictimCandidate] = []
        accounts = self._ledger.accounts
        for share_name, lent in lent_to.items():
            left = positive(lent)
            jobs = accounts[share_name].holding.values()
            for cand in sorted(self._candidates(jobs, _held_total, head), key=_least_protected):
                label = {t: min(n, cand.frees.get(t, 0)) for t, n in left.items()}
                label = positive(label)
                if not label:
                    continue
                add_capacity(left, label, -1)
                left = positive(left)
                out.append(VictimCandidate(cand.job, label, True, cand.running_for))
                if not left:
                    break
        return out

    def _candidates(
        self, jobs: Iterable[Job], frees: Callable[[Job], Capacity], preemptor: Job
    ) -> list[VictimCandidate]:
        preemptions = self._preemptions
        dispatch_count = self._lifecycle.dispatch_count
        now = self._events.now
        out = []
        for job in jobs:
            if preemptions.in_progress(job):
                continue
            if preemptions.shielded_dispatch(preemptor, job) == dispatch_count(job):
                continue  # no ping-pong: a victim never preempts its own preemptor back
            amount = positive(frees(job))
            if not amount:
                continue
            since = job.scheduled_at if job.scheduled_at is not None else now
            alloc = job.alloc
            out.append(
                VictimCandidate(
                    job=job,
                    frees=amount,
                    # holds some other share's capacity
                    borrowing=len(alloc) > 1 or (bool(alloc) and job.share_name not in alloc),
                    running_for=now - since,
                )
            )
        return out

    def _fits_se_after(self, head: Job, victims: Sequence[VictimCandidate]) -> bool:
        """Whether the head fits the service environment once the victims are gone.

        Only matters when the SE is smaller than the shares' sum; otherwise share limits imply
        it (and a following cross-share reclaim frees the rest).
        """
        ledger = self._ledger
        if not ledger.se_binding:
            return True
        freed: dict[str, int] = {}
        for victim in victims:
            for amounts in victim.job.alloc.values():
                add_capacity(freed, amounts)
        return all(
            ledger.service_environment_free(t) + freed.get(t, 0) >= n
            for t, n in head.demand.items()
        )

    # --- issuing ------------------------------------------------------------------------------

    def issue(self, targets: Iterable[PreemptionTarget]) -> None:
        """Start the preemptions, in order."""
        for target in targets:
            self._start(target)

    def enforce_limits(self) -> None:
        """After a share update: preempt until every share is within limits and borrow caps.

        Share by share, each step planned on the ledger as the previous steps left it.
        """
        for account in self._ledger.ordered():
            spec = account.spec
            # lent capacity beyond what the share may lend
            over_lent = {
                t: n - max(0, spec.limit(t) - account.own.get(t, 0)) if spec.strategy.lends else n
                for t, n in account.lent.items()
            }
            self.issue(
                self.plan_give_back(account.borrowers.values(), account.name, positive(over_lent))
            )
            over_own = {t: n - spec.limit(t) for t, n in account.own.items()}
            self.issue(
                self.plan_give_back(account.holding.values(), account.name, positive(over_own))
            )
            over_borrow: dict[str, int] = {}
            for t, n in account.borrowed.items():
                cap = spec.borrow_cap(t)
                if n > cap:
                    over_borrow[t] = int(n - cap)
            if over_borrow:
                self.issue(self.plan_give_back(account.holding.values(), None, over_borrow))

    def _touch_planners(self, victim: Job, account: ShareAccount | None) -> None:
        """A preemption of ``victim`` started: touch the shares whose plans may change now that
        it is no candidate any more. With the default policy fewer candidates never let a
        failed plan succeed, except an in-share plan of the victim's own share (its choice of
        own victims, hence what is left to reclaim, changes). (With any other policy the
        dispatcher's broad wake-ups make every share look again.)"""
        if account is not None and account.spec.in_share_preemption:
            self._changes.touch(victim.share_name)

    def _start(self, target: PreemptionTarget) -> None:
        job, rule, preemptor = target.job, target.rule, target.preemptor
        events = self._events
        now = events.now
        account = self._ledger.accounts.get(job.share_name)
        if target.relabel and preemptor is not None and account is not None:
            in_progress = self._preemptions.in_progress
            movable = {i for i, j in account.holding.items() if not in_progress(j)}
            self._ledger.relabel(job, preemptor.share_name, target.relabel, movable)
        before = positive(account.borrowed) if account is not None else {}
        reason = _REASONS[rule]
        after = dict(before)
        add_capacity(after, job.borrowed, -1)
        record = PreemptionRecord(
            time=now,
            rule=rule,
            preemptor_job_id=preemptor.job_id if preemptor else None,
            preemptor_share=preemptor.share_name if preemptor else None,
            borrowed_before=before,
            borrowed_after=positive(after),
            reason=reason,
            attempt=len(job.attempts) + 1,
            attempt_started_at=job.started_at,
        )
        self._preemptions.start(job, record)
        self._touch_planners(job, account)
        job.status_reason = PREEMPTION_IN_PROGRESS + reason
        events.cancel(job)  # the attempt stops: its completion and timeout are void
        if preemptor is not None:
            self._queues.reset_position(preemptor)
            self._changes.touch(preemptor.share_name)  # its next pass notes the place anew
        self._lifecycle.notify(EventKind.PREEMPTION_STARTED, job, job.status, record)
        log = self._lifecycle.usage_log
        if log is not None:
            log.preemptions.append((now, job.share_name, rule.value))
        if preemptor is not None:
            dispatch = self._lifecycle.dispatch_count(preemptor) + 1
            self._preemptions.shield(preemptor, job, dispatch)
        if self.options.preemption_duration_s > 0:
            if preemptor is not None:
                self._preemptions.make_wait(job, preemptor)
            events.schedule(
                now + self.options.preemption_duration_s, TimedEvent.PREEMPTION_COMPLETE, job
            )
        else:
            self._lifecycle.complete_preemption(job)


def _held_of(account: ShareAccount) -> Callable[[Job], Capacity]:
    """What a job holds of ``account``'s capacity."""
    name = account.name
    return lambda job: job.alloc.get(name, _NOTHING)


def _held_total(job: Job) -> Capacity:
    """Every instance a job holds, whichever share's capacity it is."""
    total: dict[str, int] = {}
    for amounts in job.alloc.values():
        add_capacity(total, amounts)
    return total


def _least_protected(cand: VictimCandidate) -> tuple[int, float, int]:
    """Lowest priority first, then the shorter run, then the later submitted."""
    return (cand.job.priority, cand.running_for, -cand.job.seq)


_NOTHING: Capacity = {}
"""What a job holds of a share it holds nothing of (read only)."""
