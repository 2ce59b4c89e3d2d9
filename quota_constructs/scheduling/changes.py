"""Changes since the dispatcher last looked: shares touched or lent from, types released.

The ledger, the runnable queues and the preemptions in progress write here whenever something a
share's dispatch or preemption decisions read changes; the dispatcher reads and clears it, so a
pass starts from the shares that changed instead of looking at every share and every job.
"""

from __future__ import annotations


class ShareChanges:
    """The shares to look at again and the instance types whose capacity was released."""

    __slots__ = ("lent_out", "preempted", "released", "touched")

    def __init__(self) -> None:
        self.touched: set[str] = set()
        """Shares whose own capacity use, holders, queue head or preemptions changed."""
        self.released: set[str] = set()
        """Instance types with capacity released since the last pass began."""
        self.lent_out: set[str] = set()
        """Shares whose idle capacity another share's job took since the last pass began."""
        self.preempted = False
        """A preemption started or ended since the last pass began."""

    def touch(self, share: str) -> None:
        self.touched.add(share)
