"""Pacing, polling backoff and retry configuration (no network)."""

from __future__ import annotations

import random

import boto3
import pytest

from quota_constructs.runtime import Backoff, RateLimiter, RetryOptions


class FakeClock:
    """Virtual time that only moves when slept on."""

    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += max(0.0, seconds)


def test_rate_limiter_spaces_requests_evenly() -> None:
    clock = FakeClock()
    limiter = RateLimiter(5.0, clock)
    for _ in range(11):
        limiter.acquire()
    assert clock.t == pytest.approx(2.0)  # 11 requests at 5/s: the last goes at t = 2 s


def test_rate_limiter_does_not_wait_after_idle_time() -> None:
    clock = FakeClock()
    limiter = RateLimiter(5.0, clock)
    limiter.acquire()
    clock.t += 10
    limiter.acquire()
    assert clock.sleeps[-1] == 0


def test_rejects_non_positive_rate() -> None:
    with pytest.raises(ValueError, match="rate must be positive"):
        RateLimiter(0)


def test_backoff_grows_caps_and_resets() -> None:
    state = Backoff(initial=1, maximum=4, factor=2, jitter=0).delays(random.Random(1))
    assert [state.next() for _ in range(5)] == [1, 2, 4, 4, 4]
    state.reset()
    assert state.next() == 1


def test_backoff_jitter_stays_within_bounds() -> None:
    state = Backoff(initial=10, maximum=10, factor=1, jitter=0.2).delays(random.Random(3))
    values = [state.next() for _ in range(200)]
    assert all(8 <= v <= 12 for v in values)
    assert len(set(values)) > 100


def test_retry_options_make_a_botocore_config() -> None:
    config = RetryOptions(mode="adaptive", max_attempts=4).config()
    assert config.retries == {"mode": "adaptive", "total_max_attempts": 4}


def _throttle_delays(options: RetryOptions, attempts: int) -> list[float]:
    """Delays the client's needs-retry handlers ask for after a 429 ThrottlingException."""
    from botocore.awsrequest import AWSResponse

    client = boto3.client("batch", region_name="us-east-1", config=options.config())
    options.apply(client)
    operation = client.meta.service_model.operation_model("SubmitServiceJob")
    http = AWSResponse("https://x", 429, {}, None)
    parsed = {"Error": {"Code": "ThrottlingException", "Message": "slow down"}}
    delays = []
    for attempt in range(1, attempts + 1):
        responses = client.meta.events.emit(
            "needs-retry.batch.SubmitServiceJob",
            response=(http, parsed),
            endpoint=None,
            operation=operation,
            attempts=attempt,
            caught_exception=None,
            request_dict={"context": {}},
        )
        delays.append(next(r for _, r in responses if r is not None))
    return delays


def test_scaled_backoff_shortens_botocore_throttling_delays() -> None:
    random.seed(7)
    scaled = _throttle_delays(RetryOptions(max_attempts=5, backoff_scale=0.01), 4)
    assert all(0 <= d <= 0.01 * 2**i for i, d in enumerate(scaled))
    assert any(d > 0 for d in scaled)


def test_default_backoff_is_botocores_own() -> None:
    random.seed(7)
    default = _throttle_delays(RetryOptions(max_attempts=5), 4)
    assert all(0 <= d <= 2**i for i, d in enumerate(default))
    assert max(default) > 0.08  # botocore's 1 s throttling base, not the scaled one
