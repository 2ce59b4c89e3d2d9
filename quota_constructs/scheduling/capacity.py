"""Capacity arithmetic: instances per instance type, added up, compared and filtered."""

from __future__ import annotations

from collections.abc import Mapping

Capacity = Mapping[str, int]
"""Instances per instance type."""


def add_capacity(target: dict[str, int], amounts: Capacity, sign: int = 1) -> None:
    """Add ``amounts`` to ``target`` in place (``sign=-1``: subtract)."""
    for itype, n in amounts.items():
        target[itype] = target.get(itype, 0) + sign * n


def positive(amounts: Capacity) -> dict[str, int]:
    """The entries of ``amounts`` above zero."""
    return {itype: n for itype, n in amounts.items() if n > 0}


def covers(freed: Capacity, need: Capacity) -> bool:
    """Whether ``freed`` holds at least ``need`` of every instance type."""
    return all(freed.get(itype, 0) >= n for itype, n in need.items())
