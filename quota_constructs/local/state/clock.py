"""Owns the emulator's time: virtual (advanced explicitly) or real time times a speed factor.

Both give the scheduler core its time as float seconds since the emulator started, and map
that time to epoch seconds for the timestamps the API returns.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Protocol

MAX_SPEED = 1_000_000.0
"""Fastest wall clock: about 11.6 emulated days per real second."""


class EmulatorClock(Protocol):
    """Emulator time: ``now()`` in seconds since start; ``epoch(t)`` as Unix epoch seconds."""

    def now(self) -> float: ...

    def epoch(self, t: float) -> float: ...


class VirtualClock:
    """Time moves only when :meth:`advance` or :meth:`set` is called (tests, demos)."""

    def __init__(self, *, start_epoch: float | None = None) -> None:
        self.start_epoch = time.time() if start_epoch is None else start_epoch
        self._now = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (finite, >= 0); returns the new time."""
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"seconds must be finite and >= 0 to advance a clock (got {seconds})")
        with self._lock:
            self._now += seconds
            return self._now

    def set(self, t: float) -> float:
        """Move time to ``t``, which may not be earlier than now."""
        if not math.isfinite(t):
            raise ValueError(f"time must be finite (got {t})")
        with self._lock:
            if t < self._now:
                raise ValueError(f"time cannot go back: now is {self._now}, asked for {t}")
            self._now = t
            return self._now

    def epoch(self, t: float) -> float:
        return self.start_epoch + t


class RealTimeClock:
    """Real time since start, multiplied by ``speed`` (``speed=60``: one hour a minute)."""

    def __init__(self, *, speed: float = 1.0) -> None:
        if not 0 < speed <= MAX_SPEED:  # NaN fails the comparison too
            raise ValueError(
                f"speed must be a number above 0 and at most {MAX_SPEED:g} (got {speed}); "
                "use 1 for real time"
            )
        self.speed = speed
        self.start_epoch = time.time()
        self._start = time.monotonic()

    def now(self) -> float:
        return (time.monotonic() - self._start) * self.speed

    def epoch(self, t: float) -> float:
        return self.start_epoch + t
