"""Running the core over a whole workload at once: the cyclic garbage collector paused."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a bulk run (a simulation), then restore it.

    A run keeps every job, request and record until its results are read, so the collector's
    full passes walk an ever larger heap (about a sixth of a 100k-job run's CPU time) while
    finding nothing: the scheduler makes no reference cycles, so memory is freed as usual by
    reference counting and the pause leaks nothing (``tests/scheduling/test_bulk.py`` checks).
    Nested uses are fine: the outermost one restores the collector. On the way out, every
    object the collector tracks moves to its oldest generation (``gc.freeze`` then
    ``gc.unfreeze``, no walk), so the young collections after the run do not walk the run's
    whole heap (a second, useless pass over it); they stay collectable by full collections.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()
