"""Fault injection: seeded rates of throttling, 5xx answers and lost responses per operation."""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from quota_constructs.local.wire.api_errors import ApiError
from quota_constructs.model import Problem, QuotaConfigError

ALL_OPERATIONS = "*"
KINDS = ("throttle", "5xx", "lost")


@dataclass(frozen=True)
class FaultPlan:
    """Rates (0..1) of injected faults, per operation name (``"*"`` = every operation).

    Before handling: ``throttle`` answers HTTP 429 ``ThrottlingException`` (botocore retries it
    as throttling); ``server_error`` answers HTTP 500 ``ServerException``; the request has no
    effect. After handling: ``lost_response`` lets the request take effect (a submitted job
    exists) and then answers HTTP 500 ``ServerException`` instead of the real response, as when
    a response is lost on the way back; a client that retries without a ``clientToken`` makes a
    duplicate. A specific operation's rate replaces the ``"*"`` rate of the same kind. One
    seeded draw per request decides: throttle below ``t``, server error below ``t + e``, lost
    response below ``t + e + l`` (rates of one operation should add up to at most 1). The same
    ``seed`` and request sequence give the same faults.
    """

    throttle: Mapping[str, float] = field(default_factory=dict)
    server_error: Mapping[str, float] = field(default_factory=dict)
    lost_response: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self) -> None:
        problems = [
            Problem(f"{kind}[{op}]", rate, "fault rates are between 0 and 1", "use e.g. 0.05")
            for kind, rates in self.rates().items()
            for op, rate in rates.items()
            if not 0 <= rate <= 1
        ]
        if problems:
            raise QuotaConfigError(problems, context="fault plan")

    def rates(self) -> dict[str, Mapping[str, float]]:
        """The rates per operation of each kind, by the kind's ``--fault-rate`` name."""
        return {"throttle": self.throttle, "5xx": self.server_error, "lost": self.lost_response}

    @classmethod
    def parse(cls, specs: Iterable[str], *, seed: int = 0) -> FaultPlan:
        """From ``[OPERATION:]KIND=RATE`` strings, KIND ``throttle``, ``5xx`` or ``lost``.

        Example: ``["throttle=0.1", "SubmitServiceJob:5xx=0.02", "SubmitServiceJob:lost=0.05"]``.
        """
        rates: dict[str, dict[str, float]] = {kind: {} for kind in KINDS}
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
                            "expected [OPERATION:]KIND=RATE with KIND throttle, 5xx or lost and "
                            "RATE between 0 and 1",
                            "write e.g. throttle=0.1, SubmitServiceJob:5xx=0.05 or "
                            "SubmitServiceJob:lost=0.05",
                        )
                    ]
                )
            rates[kind][target or ALL_OPERATIONS] = rate
        return cls(
            throttle=rates["throttle"],
            server_error=rates["5xx"],
            lost_response=rates["lost"],
            seed=seed,
        )


@dataclass(frozen=True)
class Fault:
    """An injected fault: the error to answer with, before or after handling the request."""

    kind: str
    error: ApiError
    after_handling: bool = False


class FaultInjector:
    """Draws faults for requests from a :class:`FaultPlan` with its own seeded generator."""

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan
        self._random = random.Random(plan.seed)
        self._lock = threading.Lock()
        self._injected: Counter[tuple[str, str]] = Counter()

    @staticmethod
    def _rate(rates: Mapping[str, float], operation: str) -> float:
        return rates.get(operation, rates.get(ALL_OPERATIONS, 0.0))

    @property
    def injected(self) -> dict[str, dict[str, int]]:
        """Faults injected so far: operation -> kind (``throttle``, ``5xx``, ``lost``) -> count."""
        with self._lock:
            counts = dict(self._injected)
        out: dict[str, dict[str, int]] = {}
        for (operation, kind), count in sorted(counts.items()):
            out.setdefault(operation, {})[kind] = count
        return out

    def draw(self, operation: str) -> Fault | None:
        """The fault to answer ``operation`` with, or ``None`` to serve it normally."""
        throttle = self._rate(self.plan.throttle, operation)
        failure = self._rate(self.plan.server_error, operation)
        lost = self._rate(self.plan.lost_response, operation)
        if throttle == 0 and failure == 0 and lost == 0:
            return None
        with self._lock:
            roll = self._random.random()
            fault = self._fault(operation, roll, throttle, failure, lost)
            if fault is not None:
                self._injected[operation, fault.kind] += 1
        return fault

    @staticmethod
    def _fault(
        operation: str, roll: float, throttle: float, failure: float, lost: float
    ) -> Fault | None:
        if roll < throttle:
            message = f"Rate exceeded (injected) for {operation}"
            return Fault("throttle", ApiError("ThrottlingException", message, 429))
        if roll < throttle + failure:
            error = ApiError("ServerException", f"Internal error (injected) in {operation}", 500)
            return Fault("5xx", error)
        if roll < throttle + failure + lost:
            error = ApiError(
                "ServerException",
                f"Internal error (injected) in {operation}; the request took effect but its "
                "response was lost",
                500,
            )
            return Fault("lost", error, after_handling=True)
        return None
