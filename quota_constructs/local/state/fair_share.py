"""Owns the documented rules of a fair-share scheduling policy (``fairsharePolicy``).

The emulator keeps such policies (a quota-managed queue cannot use one) and refuses what
botocore's documentation of ``FairsharePolicy`` and ``ShareAttributes`` rules out:

- ``shareDecaySeconds``: "The maximum supported value is 604800 (1 week)."
- ``computeReservation``: "The minimum value is 0 and the maximum value is 99."
- ``shareIdentifier``: "The string is limited to 255 alphanumeric characters, and can be
  followed by an asterisk (*)." and "The list of share identifiers in a fair-share policy
  can't overlap."
- ``weightFactor``: "The smallest supported value is 0.0001, and the largest supported value
  is 999.9999."
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from quota_constructs.model import Problem

MAX_SHARE_DECAY_S = 604_800
COMPUTE_RESERVATION_RANGE = (0, 99)
WEIGHT_FACTOR_RANGE = (0.0001, 999.9999)
SHARE_IDENTIFIER = re.compile(r"^[A-Za-z0-9]{1,255}\*?$")


def fair_share_problems(policy: Mapping[str, Any], path: str = "fairsharePolicy") -> list[Problem]:
    """Every documented rule ``policy`` breaks."""
    problems = _range(
        policy.get("shareDecaySeconds"), f"{path}.shareDecaySeconds", (0, MAX_SHARE_DECAY_S)
    )
    problems += _range(
        policy.get("computeReservation"),
        f"{path}.computeReservation",
        COMPUTE_RESERVATION_RANGE,
    )
    shares = policy.get("shareDistribution") or []
    for index, share in enumerate(shares):
        where = f"{path}.shareDistribution[{index}]"
        identifier = share.get("shareIdentifier", "")
        if not SHARE_IDENTIFIER.match(identifier):
            problems.append(
                Problem(
                    f"{where}.shareIdentifier",
                    identifier,
                    "a share identifier is 1-255 letters and digits, optionally followed by '*'",
                    "remove other characters",
                )
            )
        problems += _range(share.get("weightFactor"), f"{where}.weightFactor", WEIGHT_FACTOR_RANGE)
    return problems + _overlaps([s.get("shareIdentifier", "") for s in shares], path)


def _range(value: Any, path: str, bounds: tuple[float, float]) -> list[Problem]:
    low, high = bounds
    if value is None or low <= value <= high:
        return []
    return [Problem(path, value, f"must be between {low} and {high}", f"set it in {low}-{high}")]


def overlap(a: str, b: str) -> bool:
    """Whether two share identifiers (``*``: a prefix) can name the same share."""
    if a.endswith("*") and b.startswith(a[:-1]):
        return True
    return (b.endswith("*") and a.startswith(b[:-1])) or a == b


MAX_OVERLAPS_SHOWN = 10
"""Overlapping pairs a refusal names; the rest are counted."""


def _overlaps(identifiers: list[str], path: str) -> list[Problem]:
    """Each identifier that overlaps another, paired with it (at most :data:`MAX_OVERLAPS_SHOWN`
    problems). Sorted, an identifier is preceded by every prefix wildcard that covers it, so one
    pass with a stack of open prefixes finds them in O(n log n), not by comparing every pair."""
    pairs: list[tuple[str, str]] = []
    open_prefixes: list[str] = []
    previous: str | None = None
    for identifier in sorted(identifiers):
        while open_prefixes and not identifier.startswith(open_prefixes[-1][:-1]):
            open_prefixes.pop()
        stem = identifier.removesuffix("*")
        if open_prefixes:
            pairs.append((open_prefixes[-1], identifier))
        elif previous in (identifier, stem):
            pairs.append((previous, identifier))
        if identifier.endswith("*"):
            open_prefixes.append(identifier)
        previous = identifier
    problems = [
        Problem(
            f"{path}.shareDistribution",
            [a, b],
            "share identifiers can't overlap",
            "keep one of them, or make the prefixes distinct",
        )
        for a, b in pairs[:MAX_OVERLAPS_SHOWN]
    ]
    if len(pairs) > MAX_OVERLAPS_SHOWN:
        problems.append(
            Problem(
                f"{path}.shareDistribution",
                len(pairs),
                f"{len(pairs) - MAX_OVERLAPS_SHOWN} more identifiers overlap another",
                "give each share identifier once, with distinct prefixes",
            )
        )
    return problems
