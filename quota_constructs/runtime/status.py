"""Owns the live status of a queue: per share and instance type, capacity, loans, jobs, head job.

:func:`read_status` reads the queue with as few calls as the API allows, per refresh:
``ListQuotaShares`` (limits, strategies, states: one call, at most 20 shares),
``GetJobQueueSnapshot`` (capacity in use per share, the first RUNNABLE job of each share: one
call) and
``ListServiceJobs`` once per active status (jobs running and waiting, their instance types and
``statusReason``: six calls, one more per further page of 100 jobs); eight calls in all, plus
``DescribeJobQueues`` once per client (and ``GetParameter`` for an organisation).

The API says how much each share holds, not whose capacity it holds. :func:`derive_status`
attributes loans by the scheduling rules (docs/runtime.md, "Status"): a share's jobs use its own
capacity first; what it holds beyond its limit is borrowed; borrowers, in the queue's share order,
take from the idle capacity of the lending shares (``LEND``, ``LEND_AND_BORROW``) in that order.
Loans are therefore marked *derived*: after a history of dispatches and releases, Batch may
have lent from another lender than the one named here; the totals are exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from quota_constructs.api_shapes import share_from_api
from quota_constructs.model import (
    MISCONFIGURATION_REASONS,
    QuotaShareSpec,
    ShareState,
    SharingStrategy,
    TypeFigures,
    head_wait_reason,
)
from quota_constructs.runtime.jobs import ACTIVE_STATUSES, JobSummary, QueueSnapshot
from quota_constructs.runtime.queue import QueueClient

BATCH_WAIT_REASONS = (*MISCONFIGURATION_REASONS, "CAPACITY:")
"""``statusReason`` prefixes that say why a RUNNABLE job waits; shown as Batch gives them."""
CALLS_PER_REFRESH = 2 + len(ACTIVE_STATUSES)
"""API calls of one :func:`read_status` when every status fits in one page."""


@dataclass(frozen=True)
class Loan:
    """Instances of one type lent between two shares (``share``: the other side)."""

    share: str
    quantity: int


@dataclass(frozen=True)
class HeadJob:
    """A share's first RUNNABLE job and why it waits.

    ``status_reason`` is Batch's ``statusReason`` as given (it may tell why the job was last
    requeued, not why it waits now). ``reason`` is why it waits: Batch's reason when it is a
    MISCONFIGURATION or CAPACITY one (``derived`` false), else derived from the share's figures
    by the scheduling rules (``derived`` true).
    """

    job_id: str
    job_name: str
    since: datetime | None
    status_reason: str
    reason: str
    derived: bool


@dataclass(frozen=True)
class ShareStatus:
    """One share and instance type: limit, use, loans, jobs, head job."""

    share: str
    instance_type: str
    strategy: SharingStrategy
    state: ShareState
    limit: int
    in_use: int
    borrowed: tuple[Loan, ...] = ()
    lent: tuple[Loan, ...] = ()
    idle: int = 0
    running: int = 0
    waiting: int = 0
    head: HeadJob | None = None

    @property
    def borrowed_total(self) -> int:
        return sum(loan.quantity for loan in self.borrowed)

    @property
    def lent_total(self) -> int:
        return sum(loan.quantity for loan in self.lent)


@dataclass(frozen=True)
class QueueStatus:
    """Every share's :class:`ShareStatus`, in the queue's share order, as read at ``read_at``."""

    queue: str
    read_at: datetime
    rows: tuple[ShareStatus, ...]
    api_calls: int = 0
    unattributed: Mapping[str, int] = field(default_factory=dict)
    """Borrowed instances per type that no lender's idle capacity accounts for."""
    jobs: tuple[JobSummary, ...] = field(default=(), repr=False)
    """The active jobs read (every active status, in :data:`ACTIVE_STATUSES` order): the
    forecast of the same refresh reads these instead of listing them again."""

    def row(self, share: str, instance_type: str) -> ShareStatus:
        """The row of ``share`` and ``instance_type``; ``KeyError`` if there is none."""
        for row in self.rows:
            if row.share == share and row.instance_type == instance_type:
                return row
        raise KeyError(f"no status row for quota share {share!r} and {instance_type!r}")


def read_status(client: QueueClient) -> QueueStatus:
    """The queue's status now (see the module docstring for the calls made)."""
    detail = client.queue_detail()
    queue_arn = detail["jobQueueArn"]
    pages = list(client.batch.get_paginator("list_quota_shares").paginate(jobQueue=queue_arn))
    shares = [share_from_api(s) for page in pages for s in page.get("quotaShares", [])]
    snapshot = client.snapshot()
    calls = len(pages) + 1
    jobs: list[JobSummary] = []
    for status in ACTIVE_STATUSES:
        for page in client.list_pages(status):
            calls += 1
            jobs += page
    queue = str(detail.get("jobQueueName") or queue_arn)
    return derive_status(
        shares, snapshot, jobs, queue=queue, read_at=datetime.now(UTC), api_calls=calls
    )


def derive_status(
    shares: Sequence[QuotaShareSpec],
    snapshot: QueueSnapshot,
    jobs: Sequence[JobSummary],
    *,
    queue: str,
    read_at: datetime,
    api_calls: int = 0,
) -> QueueStatus:
    """Rows from the shares (in queue order), the snapshot's use and heads, and active jobs."""
    loans, unattributed = _loans(shares, snapshot.usage)
    by_id = {job.job_id: job for job in jobs}
    rows = []
    for spec in shares:
        used = snapshot.usage.get(spec.name, {})
        types = list(spec.capacity) + sorted(set(used) - set(spec.capacity))
        for itype in types:
            borrowed, lent = loans.get((spec.name, itype), ((), ()))
            in_use = used.get(itype, 0)
            own = min(in_use, spec.limit(itype))
            row = ShareStatus(
                share=spec.name,
                instance_type=itype,
                strategy=spec.strategy,
                state=spec.state,
                limit=spec.limit(itype),
                in_use=in_use,
                borrowed=borrowed,
                lent=lent,
                idle=max(0, spec.limit(itype) - own - sum(loan.quantity for loan in lent)),
            )
            rows.append(row)
    rows = _with_jobs(rows, shares, jobs)
    rows = _with_heads(rows, shares, snapshot, by_id)
    return QueueStatus(queue, read_at, tuple(rows), api_calls, unattributed, tuple(jobs))


# --- loans: who borrows from whom (derived) ---------------------------------------------------

LoanKey = tuple[str, str]


def _loans(
    shares: Sequence[QuotaShareSpec], usage: Mapping[str, Mapping[str, int]]
) -> tuple[dict[LoanKey, tuple[tuple[Loan, ...], tuple[Loan, ...]]], dict[str, int]]:
    """(share, type) -> (borrowed from, lent to), and what no lender accounts for, per type."""
    types = {t for spec in shares for t in spec.capacity} | {t for u in usage.values() for t in u}
    borrowed: dict[LoanKey, list[Loan]] = {}
    lent: dict[LoanKey, list[Loan]] = {}
    unattributed: dict[str, int] = {}
    for itype in sorted(types):
        spare = {
            s.name: max(0, s.limit(itype) - usage.get(s.name, {}).get(itype, 0))
            for s in shares
            if s.strategy.lends
        }
        for spec in shares:
            need = usage.get(spec.name, {}).get(itype, 0) - spec.limit(itype)
            for lender in spare:
                if need <= 0:
                    break
                take = min(need, spare[lender]) if lender != spec.name else 0
                if take:
                    spare[lender] -= take
                    need -= take
                    borrowed.setdefault((spec.name, itype), []).append(Loan(lender, take))
                    lent.setdefault((lender, itype), []).append(Loan(spec.name, take))
            if need > 0:
                unattributed[itype] = unattributed.get(itype, 0) + need
    keys = set(borrowed) | set(lent)
    return {
        key: (tuple(borrowed.get(key, ())), tuple(lent.get(key, ()))) for key in keys
    }, unattributed


# --- jobs and heads ---------------------------------------------------------------------------


def _row_type(spec: QuotaShareSpec | None, job: JobSummary) -> list[str]:
    """The instance types a job counts under; its share's first type when Batch names none."""
    if job.capacity_usage:
        return list(job.capacity_usage)
    return list(spec.capacity)[:1] if spec is not None else []


def _with_jobs(
    rows: list[ShareStatus], shares: Sequence[QuotaShareSpec], jobs: Sequence[JobSummary]
) -> list[ShareStatus]:
    specs = {s.name: s for s in shares}
    running: dict[LoanKey, int] = {}
    waiting: dict[LoanKey, int] = {}
    for job in jobs:
        counts = running if job.status.is_dispatched else waiting
        for itype in _row_type(specs.get(job.share or ""), job):
            key = (job.share or "", itype)
            counts[key] = counts.get(key, 0) + 1
    return [
        replace(
            row,
            running=running.get((row.share, row.instance_type), 0),
            waiting=waiting.get((row.share, row.instance_type), 0),
        )
        for row in rows
    ]


def _with_heads(
    rows: list[ShareStatus],
    shares: Sequence[QuotaShareSpec],
    snapshot: QueueSnapshot,
    jobs: Mapping[str, JobSummary],
) -> list[ShareStatus]:
    specs = {s.name: s for s in shares}
    out = []
    for row in rows:
        spec = specs[row.share]
        head = None
        for position in snapshot.share_heads.get(row.share, ())[:1]:
            job = jobs.get(position.job_id)
            types = _row_type(spec, job) if job is not None else list(spec.capacity)[:1]
            if row.instance_type in types:
                given = job.status_reason if job is not None else ""
                name = job.job_name if job is not None else ""
                if given.startswith(BATCH_WAIT_REASONS):
                    head = HeadJob(position.job_id, name, position.since, given, given, False)
                else:
                    why = _derived_reason(row, spec, rows, job)
                    head = HeadJob(position.job_id, name, position.since, given, why, True)
        out.append(replace(row, head=head))
    return out


def _derived_reason(
    row: ShareStatus, spec: QuotaShareSpec, rows: Sequence[ShareStatus], job: JobSummary | None
) -> str:
    """Why the head job waits, from the row's figures: the model's words, as the emulator's
    pending reasons give them (no service-environment figure: not checked)."""
    itype = row.instance_type
    figures = TypeFigures(
        instance_type=itype,
        needed=(job.capacity_usage.get(itype, 0) if job is not None else 0) or 1,
        limit=row.limit,
        own_use=row.in_use - row.borrowed_total,
        lent=row.lent_total,
        borrowed=row.borrowed_total,
        borrow_cap=spec.borrow_cap(itype),
        lendable=sum(
            r.idle
            for r in rows
            if r.instance_type == itype and r.share != row.share and r.strategy.lends
        ),
    )
    return head_wait_reason(row.share, spec.strategy.borrows, [figures])[1]


# --- JSON -------------------------------------------------------------------------------------


def status_json(status: QueueStatus) -> dict[str, Any]:
    """The status in the CLI's JSON convention: camelCase, AWS names for AWS fields."""
    return {
        "jobQueue": status.queue,
        "readAt": status.read_at.isoformat(),
        "apiCalls": status.api_calls,
        "loansDerived": True,
        "unattributedBorrowing": [
            {"capacityUnit": t, "quantity": n} for t, n in status.unattributed.items()
        ],
        "quotaShares": [_row_json(row) for row in status.rows],
    }


def _row_json(row: ShareStatus) -> dict[str, Any]:
    head = row.head
    return {
        "quotaShareName": row.share,
        "capacityUnit": row.instance_type,
        "state": row.state.value,
        "strategy": row.strategy.value,
        "maxCapacity": row.limit,
        "inUse": row.in_use,
        "borrowed": [{"quotaShareName": ln.share, "quantity": ln.quantity} for ln in row.borrowed],
        "lent": [{"quotaShareName": ln.share, "quantity": ln.quantity} for ln in row.lent],
        "idle": row.idle,
        "running": row.running,
        "waiting": row.waiting,
        "headJob": None
        if head is None
        else {
            "jobId": head.job_id,
            "jobName": head.job_name,
            "earliestTimeAtPosition": head.since.isoformat() if head.since else None,
            "statusReason": head.status_reason,
            "waitingReason": head.reason,
            "reasonDerived": head.derived,
        },
    }
