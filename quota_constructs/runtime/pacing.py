"""Owns the runtime's time and pacing: clocks, submit rate, polling backoff, botocore retries.

Waiting and pacing take a :class:`PacingClock`, so the same code runs on the wall clock
against AWS and on an emulator's virtual clock in tests and the demo (sleeping advances
virtual time).
Retries are botocore's own retry modes; :class:`RetryOptions` only picks the mode and attempts
and can scale botocore's exponential backoff (tests use a small scale to stay fast).
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from botocore.client import BaseClient
from botocore.config import Config
from botocore.retries import quota, standard

RetryMode = Literal["standard", "adaptive"]

SUBMIT_RATE_PER_S = 5.0
"""SubmitServiceJob requests per second per account (docs/aws-semantics.md §1.1)."""


class PacingClock(Protocol):
    """A source of time in seconds and a way to let time pass."""

    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class MonotonicClock:
    """Real time: ``time.monotonic`` and ``time.sleep``."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


@dataclass(frozen=True)
class RetryOptions:
    """botocore retry settings for every call a :class:`QueueClient` makes.

    ``mode``: ``standard`` (default) or ``adaptive`` (adds botocore's client-side rate limiter
    that slows down after throttling). ``max_attempts`` counts the first try.
    ``backoff_scale`` multiplies botocore's jittered exponential backoff (1.0 = botocore's own
    delays: up to 1 s, 2 s, 4 s ... after throttling); lower it only for tests and local runs.
    """

    mode: RetryMode = "standard"
    max_attempts: int = 8
    backoff_scale: float = 1.0

    def config(self, **extra: Any) -> Config:
        """A botocore ``Config`` with these retry settings (plus ``extra`` Config options)."""
        retries: Any = {"mode": self.mode, "total_max_attempts": self.max_attempts}
        return Config(retries=retries, **extra)

    def apply(self, client: BaseClient) -> BaseClient:
        """Install the scaled backoff on ``client`` (no-op at scale 1.0); returns ``client``."""
        if self.backoff_scale != 1.0:
            _install_scaled_backoff(client, self.max_attempts, self.backoff_scale)
        return client


def _install_scaled_backoff(client: BaseClient, max_attempts: int, scale: float) -> None:
    """Replace botocore's standard retry handler by the same one with scaled delays.

    Built from botocore's own classes (``botocore.retries.standard``); only the random factor
    of ``ExponentialBackoff`` is scaled. Adaptive mode keeps its rate limiter (other handlers).
    """
    service = client.meta.service_model.service_id.hyphenize()
    events = client.meta.events
    events.unregister(f"needs-retry.{service}", unique_id=f"retry-config-{service}")
    adapter = standard.RetryEventAdapter()
    detector = standard.ThrottlingErrorDetector(adapter)
    retry_quota = standard.RetryQuotaChecker(quota.RetryQuota(), detector)
    handler = standard.RetryHandler(
        retry_policy=standard.RetryPolicy(
            retry_checker=standard.StandardRetryConditions(max_attempts=max_attempts),
            retry_backoff=standard.ExponentialBackoff(
                random=lambda: random.random() * scale,
                service_name=service,
                throttling_detector=detector,
            ),
        ),
        retry_event_adapter=adapter,
        retry_quota=retry_quota,
        service_name=service,
    )
    events.register(f"after-call.{service}", retry_quota.release_retry_quota)
    events.register(
        f"needs-retry.{service}", handler.needs_retry, unique_id=f"retry-config-{service}"
    )


class RateLimiter:
    """At most ``rate`` acquisitions per second on ``clock`` (evenly spaced, thread-safe)."""

    def __init__(self, rate: float, clock: PacingClock | None = None) -> None:
        if rate <= 0:
            raise ValueError(f"rate must be positive requests per second, got {rate!r}")
        self.interval = 1.0 / rate
        self.clock = clock or MonotonicClock()
        self._next: float | None = None
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Block (on the clock) until the next request may go."""
        with self._lock:
            now = self.clock.now()
            start = now if self._next is None else max(now, self._next)
            self._next = start + self.interval
        self.clock.sleep(start - now)


@dataclass(frozen=True)
class Backoff:
    """Polling delays: start at ``initial``, grow by ``factor`` while nothing changes, cap at
    ``maximum``, each delay jittered by up to +-``jitter`` (a fraction). Seconds."""

    initial: float = 5.0
    maximum: float = 60.0
    factor: float = 1.5
    jitter: float = 0.2

    def delays(self, rng: random.Random | None = None) -> BackoffState:
        """A fresh sequence of delays."""
        return BackoffState(self, rng or random.Random())


class BackoffState:
    """Iterator state of a :class:`Backoff`: ``next()`` delay, ``reset()`` after progress."""

    def __init__(self, backoff: Backoff, rng: random.Random) -> None:
        self.backoff = backoff
        self.rng = rng
        self.current = backoff.initial

    def next(self) -> float:
        base = self.current
        self.current = min(self.backoff.maximum, self.current * self.backoff.factor)
        spread = base * self.backoff.jitter
        return max(0.0, base + self.rng.uniform(-spread, spread))

    def reset(self) -> None:
        self.current = self.backoff.initial
