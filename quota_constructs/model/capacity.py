"""Why a share's head job waits, from capacity figures alone; the borrow-cap rule.

One owner for the words: the scheduler core's pending reasons (``scheduling/pending.py``) and
``quota status`` (``runtime/status.py``) both call :func:`head_wait_reason`, each with the
figures it has (the core its ledger, the status what the API reports).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class PendingKind(StrEnum):
    """Why a RUNNABLE job is not running (beyond AWS: AWS only explains misconfigurations)."""

    BEHIND_HIGHER_PRIORITY = "BEHIND_HIGHER_PRIORITY"
    WAITING_FOR_OWN_CAPACITY = "WAITING_FOR_OWN_CAPACITY"
    BORROW_LIMIT_REACHED = "BORROW_LIMIT_REACHED"
    NO_LENDABLE_CAPACITY = "NO_LENDABLE_CAPACITY"
    WAITING_FOR_SERVICE_ENVIRONMENT = "WAITING_FOR_SERVICE_ENVIRONMENT"
    WAITING_FOR_PREEMPTION = "WAITING_FOR_PREEMPTION"
    WAITING_FOR_DISPATCH = "WAITING_FOR_DISPATCH"
    SHARE_DISABLED = "SHARE_DISABLED"
    EXCEEDS_LIMITS = "EXCEEDS_LIMITS"


def exceeds_borrow_cap(borrowed: int, more: int, borrow_cap: float) -> bool:
    """Whether a share holding ``borrowed`` instances of a type may not borrow ``more``.

    ``borrow_cap`` is ``QuotaShareSpec.borrow_cap`` of that type (``inf`` when unlimited).
    """
    return borrowed + more > borrow_cap


@dataclass(frozen=True, slots=True)
class TypeFigures:
    """One instance type a head job needs, and its share's figures for that type.

    ``lendable``: idle instances the other shares lend now. ``service_environment_free``:
    instances the service environment has not handed out, ``None`` when unknown (not checked).
    """

    instance_type: str
    needed: int
    limit: int
    own_use: int
    lent: int
    borrowed: int
    borrow_cap: float
    lendable: int
    service_environment_free: int | None = None

    @property
    def free(self) -> int:
        """Own limit minus own use minus what is lent (negative when over the limit)."""
        return self.limit - self.own_use - self.lent

    @property
    def free_after_reclaim(self) -> int:
        """Own limit minus own use: what is free plus what is lent out (reclaimable)."""
        return self.limit - self.own_use


def head_wait_reason(
    share: str, borrows: bool, demand: Sequence[TypeFigures], preemptions_awaited: int = 0
) -> tuple[PendingKind, str]:
    """Why the head job of ``share`` waits, as a kind and the words shown to users.

    ``demand`` holds one :class:`TypeFigures` per instance type the job needs, in the job's
    order; ``borrows``: the share's strategy borrows; ``preemptions_awaited``: preemptions in
    progress that release capacity for the job. Checks, in order: preemptions awaited, own
    capacity (shares that do not borrow), lent-out capacity, the borrow limit, lendable
    capacity, the service environment; else the job fits.
    """
    if preemptions_awaited:
        return (
            PendingKind.WAITING_FOR_PREEMPTION,
            f"waiting for {preemptions_awaited} preemption(s) in progress to release capacity",
        )
    if not borrows:
        for figures in demand:
            if figures.needed > figures.free_after_reclaim:
                return (
                    PendingKind.WAITING_FOR_OWN_CAPACITY,
                    f"quota share {share} uses {figures.own_use} of its {figures.limit} x "
                    f"{figures.instance_type}; the job needs {figures.needed}",
                )
    for figures in demand:
        reason = _borrowing_reason(share, figures)
        if reason is not None:
            return reason
    for figures in demand:
        free = figures.service_environment_free
        if free is not None and free < figures.needed:
            return (
                PendingKind.WAITING_FOR_SERVICE_ENVIRONMENT,
                f"service environment has {max(0, free)} x {figures.instance_type} free; "
                f"the job needs {figures.needed}",
            )
    return PendingKind.WAITING_FOR_DISPATCH, "fits; dispatched at the next pass"


def _borrowing_reason(share: str, figures: TypeFigures) -> tuple[PendingKind, str] | None:
    """Why the job cannot take what it needs of ``figures``'s instance type beyond its share's
    free capacity (lent out, borrow limit, nothing to borrow); ``None`` when free or lendable
    capacity covers it."""
    more = figures.needed - max(0, figures.free)
    if more <= 0:
        return None
    itype = figures.instance_type
    if figures.needed <= figures.free_after_reclaim:
        return (
            PendingKind.WAITING_FOR_OWN_CAPACITY,
            f"{figures.lent} x {itype} of quota share {share} are lent out and cannot be "
            "reclaimed yet",
        )
    if exceeds_borrow_cap(figures.borrowed, more, figures.borrow_cap):
        return (
            PendingKind.BORROW_LIMIT_REACHED,
            f"quota share {share} borrows {figures.borrowed} x {itype}; borrowing {more} more "
            f"would exceed its borrow limit of {int(figures.borrow_cap)}",
        )
    if figures.lendable < more:
        return (
            PendingKind.NO_LENDABLE_CAPACITY,
            f"needs to borrow {more} x {itype}; lending shares have {figures.lendable} idle",
        )
    return None
