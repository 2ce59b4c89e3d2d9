"""Fault injection: a seeded rate of throttling errors and 5xx answers per operation."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from quota_constructs.local.protocol import ApiError
from quota_constructs.model import Problem, QuotaConfigError

ALL_OPERATIONS = "*"
KINDS = ("throttle", "5xx")


@dataclass(frozen=True)
class FaultPlan:
    """Rates (0..1) of injected faults, per operation name (``"*"`` = every operation).

    ``throttle``: HTTP 429 ``ThrottlingException`` (botocore retries it as throttling);
    ``server_error``: HTTP 500 ``ServerException``. A specific operation's rate replaces the
    ``"*"`` rate. The same ``seed`` and request sequence give the same faults.
    """

    throttle: Mapping[str, float] = field(default_factory=dict)
    server_error: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self) -> None:
        problems = [
            Problem(f"{kind}[{op}]", rate, "fault rates are between 0 and 1", "use e.g. 0.05")
            for kind, rates in (("throttle", self.throttle), ("5xx", self.server_error))
            for op, rate in rates.items()
            if not 0 <= rate <= 1
        ]
        if problems:
            raise QuotaConfigError(problems, context="fault plan")

    @classmethod
    def parse(cls, specs: Iterable[str], *, seed: int = 0) -> FaultPlan:
        """From ``[OPERATION:]KIND=RATE`` strings, KIND ``throttle`` or ``5xx``.

        Example: ``["throttle=0.1", "SubmitServiceJob:5xx=0.02"]``.
        """
        throttle: dict[str, float] = {}
        server_error: dict[str, float] = {}
        for spec in specs:
            target, _, kind_rate = spec.rpartition(":")
            kind, sep, rate_text = kind_rate.partition("=")
            try:
                rate = float(rate_text)
            except ValueError:
                rate = -1.0
            if not sep or kind not in KINDS or not 0 <= rate <= 1:
                raise QuotaConfigError(
                    [
                        Problem(
                            "--fault-rate",
                            spec,
                            "expected [OPERATION:]KIND=RATE with KIND throttle or 5xx and "
                            "RATE between 0 and 1",
                            "write e.g. throttle=0.1 or SubmitServiceJob:5xx=0.05",
                        )
                    ]
                )
            (throttle if kind == "throttle" else server_error)[target or ALL_OPERATIONS] = rate
        return cls(throttle=throttle, server_error=server_error, seed=seed)


class FaultInjector:
    """Draws faults for requests from a :class:`FaultPlan` with its own seeded generator."""

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan
        self._random = random.Random(plan.seed)
        self._lock = threading.Lock()

    @staticmethod
    def _rate(rates: Mapping[str, float], operation: str) -> float:
        return rates.get(operation, rates.get(ALL_OPERATIONS, 0.0))

    def draw(self, operation: str) -> ApiError | None:
        """The fault to answer ``operation`` with, or ``None`` to serve it normally."""
        throttle = self._rate(self.plan.throttle, operation)
        failure = self._rate(self.plan.server_error, operation)
        if throttle == 0 and failure == 0:
            return None
        with self._lock:
            roll = self._random.random()
        if roll < throttle:
            return ApiError("ThrottlingException", f"Rate exceeded (injected) for {operation}", 429)
        if roll < throttle + failure:
            return ApiError("ServerException", f"Internal error (injected) in {operation}", 500)
        return None
