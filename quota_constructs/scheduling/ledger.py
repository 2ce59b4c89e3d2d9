"""The capacity ledger: per-share accounts, the service environment, holding and releasing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quota_constructs.model import JobQueueSpec, QuotaShareSpec, ShareState, exceeds_borrow_cap
from quota_constructs.scheduling.capacity import add_capacity, positive
from quota_constructs.scheduling.changes import ShareChanges
from quota_constructs.scheduling.job import Job
from quota_constructs.scheduling.options import SchedulerOptions
from quota_constructs.scheduling.records import ShareLedger, ShareOrder

Allocation = dict[str, dict[str, int]]
"""Lender share (the job's own share included) -> instance type -> instances."""


def _sort_key(pair: tuple[ShareAccount, Any]) -> Any:
    return pair[1]


class ShareAccount:
    """One share's capacity: limits, own use, what it lends and borrows, and its holders."""

    def __init__(self, spec: QuotaShareSpec, order: int) -> None:
        self.own: dict[str, int] = {}
        """This share's capacity used by its own jobs."""
        self.lent: dict[str, int] = {}
        """This share's capacity used by other shares' jobs."""
        self.lent_total = 0
        """Instances of this share lent out, all instance types."""
        self.borrowed: dict[str, int] = {}
        """Other shares' capacity used by this share's jobs."""
        self.idle: dict[str, int] = {}
        """:meth:`free` per instance type, kept up to date (missing: 0)."""
        self.spec = spec
        self.order = order
        """Place in the declared order of the shares."""
        self.holding: dict[str, Job] = {}
        """This share's jobs that hold capacity (own or borrowed), by job id."""
        self.borrowers: dict[str, Job] = {}
        """Other shares' jobs that hold some of this share's capacity, by job id."""
        self.lends_now = False
        """Whether the share lends its idle capacity now (set by the ledger)."""

    @property
    def spec(self) -> QuotaShareSpec:
        return self._spec

    @spec.setter
    def spec(self, spec: QuotaShareSpec) -> None:
        self._spec = spec
        self.name = spec.name
        self.limits = dict(spec.capacity)
        self.borrow_caps = {t: spec.borrow_cap(t) for t in self.limits}
        """Most instances the share may borrow per instance type (missing: 0)."""
        self.borrows = spec.strategy.borrows
        self.in_share_preemption = spec.in_share_preemption
        self.enabled = spec.state is ShareState.ENABLED
        types = set(self.limits) | set(self.own) | set(self.lent)
        self.idle = {
            t: self.limits.get(t, 0) - self.own.get(t, 0) - self.lent.get(t, 0) for t in types
        }

    def free(self, itype: str) -> int:
        """Own limit minus own use minus what is lent (negative when over the limit)."""
        return self.idle.get(itype, 0)

    def free_after_reclaim(self, itype: str) -> int:
        """Own limit minus own use: what is free plus what is lent out (reclaimable)."""
        return self.limits.get(itype, 0) - self.own.get(itype, 0)

    def usage_fraction(self) -> float:
        """Instances held by the share's jobs (own and borrowed) over the sum of its limits."""
        total = sum(self.spec.capacity.values()) or 1
        return (sum(self.own.values()) + sum(self.borrowed.values())) / total


class CapacityLedger:
    """Capacity accounting of one queue: an account per share and the service environment.

    Every hold and release touches the shares whose capacity it uses in :class:`ShareChanges`
    (a lender whose idle capacity is borrowed is noted apart; a release also names its
    instance types) and keeps :attr:`lendable_total` up to date.
    """

    def __init__(
        self,
        options: SchedulerOptions,
        service_environment: Mapping[str, int] | None,
        changes: ShareChanges,
    ) -> None:
        self._options = options
        self._least_usage = options.share_order is ShareOrder.LEAST_USAGE
        """Passes serve shares by usage (else in declared order)."""
        self._changes = changes
        self.accounts: dict[str, ShareAccount] = {}
        """Every share's account, in declared order."""
        self._next_order = 0
        self._explicit_se = dict(service_environment) if service_environment is not None else None
        self.se: dict[str, int] = {}
        """Service-environment capacity in force: explicit, else the sum of the shares' limits."""
        self.used: dict[str, int] = {}
        """Instances held in the service environment per instance type."""
        self.se_binding = False
        """The service environment is smaller than the shares' sum for some instance type."""
        self.lendable_total: dict[str, int] = {}
        """Idle instances the lending shares lend now, per instance type (their free sum)."""
        self._queue_spec = JobQueueSpec(shares=())
        self.share_specs: dict[str, QuotaShareSpec] = {}
        """Every share's spec by name, as of the last :meth:`reconfigure`."""
        self._infeasible: dict[tuple[str, tuple[tuple[str, int], ...]], str | None] = {}
        self._infeasible_by_job: dict[int, str | None] = {}

    # --- configuration ------------------------------------------------------------------------

    @property
    def options(self) -> SchedulerOptions:
        return self._options

    @options.setter
    def options(self, options: SchedulerOptions) -> None:
        self._options = options
        self._least_usage = options.share_order is ShareOrder.LEAST_USAGE
        self._count_lendable()

    @property
    def queue_spec(self) -> JobQueueSpec:
        """The current shares as a model job queue."""
        return JobQueueSpec(shares=tuple(a.spec for a in self.accounts.values()))

    @property
    def service_environment(self) -> dict[str, int]:
        """Service-environment capacity: explicit, else the sum of the shares' limits."""
        if self._explicit_se is not None:
            return dict(self._explicit_se)
        return self.queue_spec.service_environment_capacity()

    def add_share(self, spec: QuotaShareSpec) -> None:
        self.accounts[spec.name] = ShareAccount(spec, self._next_order)
        self._next_order += 1

    def update_share(self, spec: QuotaShareSpec) -> None:
        """New limits, strategy or state for an existing share (act at ``reconfigure``)."""
        self.accounts[spec.name].spec = spec

    def remove_share(self, name: str) -> None:
        del self.accounts[name]

    def set_service_environment(self, capacity: Mapping[str, int] | None) -> None:
        """Set the SE capacity (``None``: follow the shares); takes effect at ``reconfigure``."""
        self._explicit_se = dict(capacity) if capacity is not None else None

    def reconfigure(self) -> None:
        """After a share or SE change: the SE in force, whether it binds, feasibility afresh."""
        self._infeasible.clear()
        self._infeasible_by_job.clear()
        self._queue_spec = self.queue_spec
        self.share_specs = {name: a.spec for name, a in self.accounts.items()}
        shares_total = self._queue_spec.service_environment_capacity()
        self.se = dict(self._explicit_se) if self._explicit_se is not None else shares_total
        self.se_binding = any(self.se.get(t, 0) < n for t, n in shares_total.items())
        self._count_lendable()

    def _count_lendable(self) -> None:
        """Which shares lend now, and :attr:`lendable_total` counted afresh."""
        lendable: dict[str, int] = {}
        disabled_lend = self._options.disabled_share_dispatches
        for account in self.accounts.values():
            account.lends_now = account.spec.strategy.lends and (account.enabled or disabled_lend)
            if account.lends_now:
                for itype in account.limits:
                    lendable[itype] = lendable.get(itype, 0) + max(0, account.free(itype))
        self.lendable_total = lendable

    def infeasibility(self, job: Job) -> str | None:
        """The MISCONFIGURATION reason why ``job`` can never run here, or ``None`` (cached per
        job and per share and demand until the next :meth:`reconfigure`)."""
        by_job = self._infeasible_by_job
        seq = job.seq
        if seq in by_job:
            return by_job[seq]
        key = (job.share_name, tuple(sorted(job.demand.items())))
        if key not in self._infeasible:
            self._infeasible[key] = self._queue_spec.infeasibility(
                job.share_name, job.demand, service_environment=self.se
            )
        by_job[seq] = reason = self._infeasible[key]
        return reason

    def forget(self, job: Job) -> None:
        """Drop what is cached of ``job`` (a finished job the scheduler forgets)."""
        self._infeasible_by_job.pop(job.seq, None)

    # --- holding and releasing ----------------------------------------------------------------

    def hold(self, job: Job, alloc: Allocation) -> None:
        """``job`` takes ``alloc`` (its own share's capacity and what it borrows)."""
        accounts = self.accounts
        touched = self._changes.touched
        own_name = job.share_name
        own_share = accounts[own_name]
        touched.add(own_name)
        job.alloc = alloc
        for lender_name, amounts in alloc.items():
            if lender_name == own_name:
                self._use(own_share, own_share.own, amounts, 1)
                continue
            lender = accounts[lender_name]
            self._changes.lent_out.add(lender_name)
            self._use(lender, lender.lent, amounts, 1)
            add_capacity(own_share.borrowed, amounts)
            lender.borrowers[job.job_id] = job
        own_share.holding[job.job_id] = job

    def release(self, job: Job) -> None:
        """``job`` gives back all it holds (shares removed meanwhile are skipped)."""
        accounts = self.accounts
        touched = self._changes.touched
        released = self._changes.released
        own_name = job.share_name
        own_share = accounts.get(own_name)
        if own_share is not None:
            touched.add(own_name)
        used = self.used
        for lender_name, amounts in job.alloc.items():
            released.update(amounts)
            lender = accounts.get(lender_name)
            if lender is None:
                add_capacity(used, amounts, -1)
                if own_share is not None:
                    add_capacity(own_share.borrowed, amounts, -1)
                continue
            touched.add(lender_name)
            if lender_name == own_name:
                self._use(lender, lender.own, amounts, -1)
                continue
            self._use(lender, lender.lent, amounts, -1)
            lender.borrowers.pop(job.job_id, None)
            if own_share is not None:
                add_capacity(own_share.borrowed, amounts, -1)
        if own_share is not None:
            own_share.holding.pop(job.job_id, None)
        job.alloc = {}

    def _use(
        self, lender: ShareAccount, use: dict[str, int], amounts: Mapping[str, int], sign: int
    ) -> None:
        """``sign`` x ``amounts`` of ``lender``'s capacity taken (1) or given back (-1), counted
        in ``use`` (its own use or what it lends), its idle capacity, the SE and the lendable."""
        used = self.used
        idle = lender.idle
        lendable = self.lendable_total if lender.lends_now else None
        lent = use is lender.lent
        for itype, n in amounts.items():
            n *= sign
            used[itype] = used.get(itype, 0) + n
            use[itype] = use.get(itype, 0) + n
            free = idle.get(itype, 0)
            after = free - n
            idle[itype] = after
            if lent:
                lender.lent_total += n
            if lendable is not None:
                delta = (after if after > 0 else 0) - (free if free > 0 else 0)
                if delta:
                    lendable[itype] = lendable.get(itype, 0) + delta

    def relabel(
        self, victim: Job, lender_name: str, amounts: Mapping[str, int], movable: set[str]
    ) -> None:
        """Make ``victim`` hold ``amounts`` of ``lender_name``'s capacity by swapping labels with
        other jobs of its share that hold it (those in ``movable``, highest priority first):
        each gives the lender's instances to ``victim`` and takes what ``victim`` held instead.
        No account's totals change; only which job's instances count as borrowed."""
        share = victim.share_name
        lender = self.accounts[lender_name]
        donors = sorted(
            (
                j
                for j in lender.borrowers.values()
                if j.share_name == share and j.job_id in movable and j is not victim
            ),
            key=lambda j: (-j.priority, j.seq),
        )
        for itype, want in amounts.items():
            short = want - victim.alloc.get(lender_name, {}).get(itype, 0)
            for donor in donors:
                if short <= 0:
                    break
                short -= self._swap(victim, donor, lender_name, itype, short)

    def _swap(self, victim: Job, donor: Job, lender_name: str, itype: str, most: int) -> int:
        """Up to ``most`` instances of ``itype``: ``donor``'s from the lender to ``victim``,
        ``victim``'s from elsewhere (its own share first) to ``donor``; how many moved."""
        moved = 0
        sources = sorted(
            (s for s in victim.alloc if s != lender_name), key=lambda s: s != victim.share_name
        )
        for source in sources:
            k = min(
                most - moved,
                donor.alloc.get(lender_name, {}).get(itype, 0),
                victim.alloc[source].get(itype, 0),
            )
            if k <= 0:
                continue
            _move(victim.alloc, source, lender_name, itype, k)
            _move(donor.alloc, lender_name, source, itype, k)
            moved += k
        for job in (victim, donor):
            self._index_borrower(job)
        return moved

    def _index_borrower(self, job: Job) -> None:
        """``job`` in the :attr:`ShareAccount.borrowers` of exactly the lenders it holds."""
        for name, account in self.accounts.items():
            if name == job.share_name:
                continue
            if name in job.alloc:
                account.borrowers[job.job_id] = job
            else:
                account.borrowers.pop(job.job_id, None)

    def note_priority_change(self, share_name: str) -> None:
        """A job of the share changed priority: passes must look at the share again."""
        self._changes.touch(share_name)

    # --- queries ------------------------------------------------------------------------------

    def service_environment_free(self, itype: str) -> int:
        """Instances of ``itype`` the service environment has not handed out."""
        return self.se.get(itype, 0) - self.used.get(itype, 0)

    def dispatches(self, account: ShareAccount) -> bool:
        """Whether the share's RUNNABLE jobs may dispatch (ENABLED, or DISABLED allowed)."""
        return account.enabled or self.options.disabled_share_dispatches

    def ordered(self) -> list[ShareAccount]:
        """The accounts in the order a pass serves them (``SchedulerOptions.share_order``)."""
        accounts = list(self.accounts.values())
        if self._least_usage:
            accounts.sort(key=lambda a: (a.usage_fraction(), a.order))
        return accounts

    def ordered_subset(self, names: list[str]) -> list[tuple[ShareAccount, Any]]:
        """The accounts of ``names`` in the order :meth:`ordered` gives them, each with its
        sort key (comparable with the keys of other accounts at the same instant)."""
        accounts = self.accounts
        keyed: list[tuple[ShareAccount, Any]]
        if self._least_usage:
            keyed = [(a, (a.usage_fraction(), a.order)) for a in map(accounts.__getitem__, names)]
        elif len(names) == 1:
            account = accounts[names[0]]
            return [(account, account.order)]
        else:
            keyed = [(a, a.order) for a in map(accounts.__getitem__, names)]
        if len(keyed) > 1:
            keyed.sort(key=_sort_key)
        return keyed

    def plan_own(self, account: ShareAccount, job: Job) -> Allocation | None:
        """``job``'s demand from its share's free capacity, or ``None`` when it does not fit."""
        idle = account.idle
        se = self.se
        used = self.used
        for itype, n in job.demand.items():
            if idle.get(itype, 0) < n or se.get(itype, 0) - used.get(itype, 0) < n:
                return None
        return {account.name: job.demand.copy()}

    def fits(self, account: ShareAccount, job: Job) -> bool:
        """Whether :meth:`plan_own` or :meth:`plan_borrow` would place ``job`` now, in time
        independent of the number of shares (from :attr:`lendable_total`)."""
        se = self.se
        used = self.used
        borrows = account.borrows
        for itype, n in job.demand.items():
            if se.get(itype, 0) - used.get(itype, 0) < n:
                return False
            free = account.idle.get(itype, 0)
            if free >= n:
                continue
            if not borrows:
                return False
            need = n - (free if free > 0 else 0)
            if exceeds_borrow_cap(
                account.borrowed.get(itype, 0), need, account.borrow_caps.get(itype, 0)
            ):
                return False
            others = self.lendable_total.get(itype, 0)
            if account.lends_now and free > 0:
                others -= free
            if others < need:
                return False
        return True

    def plan_borrow(self, account: ShareAccount, job: Job) -> Allocation | None:
        """Own free capacity first, the rest borrowed from lenders in share order."""
        if not account.borrows:
            return None
        alloc: Allocation = {}
        name = account.name
        for itype, n in job.demand.items():
            if self.service_environment_free(itype) < n:
                return None
            own = min(n, account.idle.get(itype, 0))
            need = n - own if own > 0 else n
            if own > 0:
                alloc.setdefault(name, {})[itype] = own
            if need == 0:
                continue
            if exceeds_borrow_cap(
                account.borrowed.get(itype, 0), need, account.borrow_caps.get(itype, 0)
            ):
                return None
            for lender in self.ordered():
                if lender is account or not lender.lends_now:
                    continue
                free = lender.idle.get(itype, 0)
                if free > 0:
                    take = need if need < free else free
                    alloc.setdefault(lender.name, {})[itype] = take
                    need -= take
                    if need == 0:
                        break
            if need:
                return None
        return alloc

    def lendable(self, account: ShareAccount, itype: str) -> int:
        """Free instances of ``itype`` the other shares lend now."""
        own = max(0, account.free(itype)) if account.lends_now else 0
        return self.lendable_total.get(itype, 0) - own

    def usage(self) -> dict[str, dict[str, int]]:
        """Instances held per share per instance type (own plus borrowed), zero entries omitted."""
        out: dict[str, dict[str, int]] = {}
        for account in self.accounts.values():
            used = dict(account.own)
            add_capacity(used, account.borrowed)
            out[account.name] = positive(used)
        return out

    def total_usage(self) -> dict[str, int]:
        """Instances held in the service environment per instance type."""
        return positive(self.used)

    def share_ledgers(self) -> dict[str, ShareLedger]:
        """Full capacity accounting per share (limit, used, own, borrowed, lent, idle)."""
        out = {}
        for account in self.accounts.values():
            used = dict(account.own)
            add_capacity(used, account.borrowed)
            types = set(account.spec.capacity) | set(used) | set(account.lent)
            out[account.name] = ShareLedger(
                limit=dict(account.spec.capacity),
                used=positive(used),
                own=positive(account.own),
                borrowed=positive(account.borrowed),
                lent=positive(account.lent),
                idle={t: account.free(t) for t in sorted(types) if account.spec.limit(t) > 0},
            )
        return out


def _move(alloc: Allocation, source: str, target: str, itype: str, n: int) -> None:
    """``n`` instances of ``itype`` in ``alloc`` from ``source``'s to ``target``'s capacity."""
    left = alloc[source][itype] - n
    if left:
        alloc[source][itype] = left
    else:
        del alloc[source][itype]
        if not alloc[source]:
            del alloc[source]
    amounts = alloc.setdefault(target, {})
    amounts[itype] = amounts.get(itype, 0) + n
