"""A quota share: sharing strategy, state, and the share spec with its rules."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from quota_constructs.model.access import TeamAccess
from quota_constructs.model.limits import (
    MAX_BORROW_LIMIT,
    MAX_CAPACITY_LIMITS_PER_SHARE,
    MAX_SHARE_DESCRIPTION_CHARS,
    MIN_CAPACITY_LIMITS_PER_SHARE,
    UNLIMITED_BORROW,
    check_capacity_limit,
    check_description,
    check_int_range,
    check_name,
)
from quota_constructs.model.notifications import Subscribers
from quota_constructs.model.problems import Problem, enum_member, join_path


class SharingStrategy(StrEnum):
    """How a quota share treats idle capacity (``resourceSharingConfiguration.strategy``)."""

    RESERVE = "RESERVE"
    """Idle capacity stays reserved for the share; never lent, never borrows."""
    LEND = "LEND"
    """Idle capacity may be lent to borrowing shares; reclaimed by cross-share preemption."""
    LEND_AND_BORROW = "LEND_AND_BORROW"
    """Lends idle capacity and borrows others' idle capacity up to the borrow limit."""

    @property
    def lends(self) -> bool:
        return self is not SharingStrategy.RESERVE

    @property
    def borrows(self) -> bool:
        return self is SharingStrategy.LEND_AND_BORROW


class ShareState(StrEnum):
    """``ENABLED`` accepts new jobs; ``DISABLED`` accepts none, submitted jobs may finish."""

    ENABLED = "ENABLED"
    DISABLED = "DISABLED"


# --- quota share ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShareField:
    """How one field of :class:`QuotaShareSpec` reaches every consumer: declared once, on the
    field (``metadata["share"]``); read with :data:`SHARE_FIELDS`.

    The organisation file, the construct, the wire, drift, calendars, the optimizer and the
    ``quota org`` output are derived from these declarations or checked against them by
    ``tests/unit/test_share_schema.py`` (a field a mirror does not carry fails there).
    """

    file_key: str
    """The key in an organisation file's share (``config.ShareConfig``)."""
    construct_prop: str | None = None
    """``QuotaShare``'s keyword for it; ``None``: not a prop of the share resource."""
    wire: bool = False
    """AWS keeps it: a quota-share API member carries it (named once, in
    ``api_shapes.SHARE_WIRE_MEMBERS``); ``False``: it lives only in the file."""
    drift: bool = False
    """Compared by ``quota org diff`` (``api_shapes.share_drift_fields``)."""
    calendar: bool = False
    """A schedule window may change it (``calendar.SETTING_KEYS``, ``ShareWindow``); the
    optimizer varies exactly these."""
    column: str | None = None
    """Its column in ``quota org validate``'s table; ``None``: not a column of it."""
    scheduling: bool = False
    """The scheduling core reads it: the simulator's and the optimizer's copies carry it."""


def _declares(declaration: ShareField) -> dict[str, ShareField]:
    """A dataclass field's ``metadata`` carrying its :class:`ShareField`."""
    return {"share": declaration}


@dataclass(frozen=True)
class QuotaShareSpec:
    """A quota share: capacity limits per instance type, sharing strategy, preemption settings.

    ``borrow_limit`` is a percent of the share's own ``max_capacity`` for each instance type;
    ``None`` means "not set", which for ``LEND_AND_BORROW`` is ``-1`` (unlimited). ``0`` is kept.
    Every field declares how it reaches the file, the construct, the wire, drift, calendars and
    the output (:class:`ShareField`).
    """

    name: str = field(
        metadata=_declares(
            ShareField(
                "name",
                "quota_share_name",
                wire=True,
                column="share",
                scheduling=True,
            )
        )
    )
    capacity: Mapping[str, int] = field(
        metadata=_declares(
            ShareField(
                "capacity",
                "capacity_limits",
                wire=True,
                drift=True,
                column="capacity",
                scheduling=True,
            )
        )
    )
    strategy: SharingStrategy = field(
        metadata=_declares(
            ShareField(
                "strategy",
                "strategy",
                wire=True,
                drift=True,
                calendar=True,
                column="strategy",
                scheduling=True,
            )
        )
    )
    borrow_limit: int | None = field(
        default=None,
        metadata=_declares(
            ShareField(
                "borrow_limit",
                "borrow_limit",
                wire=True,
                drift=True,
                calendar=True,
                column="borrow limit",
                scheduling=True,
            )
        ),
    )
    in_share_preemption: bool = field(
        default=False,
        metadata=_declares(
            ShareField(
                "in_share_preemption",
                "in_share_preemption",
                wire=True,
                drift=True,
                calendar=True,
                column="in-share preemption",
                scheduling=True,
            )
        ),
    )
    state: ShareState = field(
        default=ShareState.ENABLED,
        metadata=_declares(
            ShareField("state", "state", wire=True, drift=True, column="state", scheduling=True)
        ),
    )
    description: str = field(default="", metadata=_declares(ShareField("description")))
    access: TeamAccess | None = field(default=None, metadata=_declares(ShareField("access")))
    """Team access (submitter role, execution role, bucket); ``None``: the stack makes none."""
    notifications: Subscribers = field(
        default_factory=Subscribers, metadata=_declares(ShareField("notifications"))
    )
    """Who hears of this share's preemptions and FAILED jobs (besides the organisation's)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "capacity", MappingProxyType(dict(self.capacity)))
        strategy = enum_member(SharingStrategy, self.strategy, "strategy", what="sharing strategy")
        object.__setattr__(self, "strategy", strategy)
        object.__setattr__(
            self, "state", enum_member(ShareState, self.state, "state", what="state")
        )

    @property
    def effective_borrow_limit(self) -> int | None:
        """Borrow limit as sent to AWS: ``-1`` = unlimited, ``None`` = share cannot borrow."""
        if not self.strategy.borrows:
            return None
        return UNLIMITED_BORROW if self.borrow_limit is None else self.borrow_limit

    def limit(self, instance_type: str) -> int:
        """Own capacity limit for ``instance_type`` (0 when the share has no limit for it)."""
        return self.capacity.get(instance_type, 0)

    def borrow_cap(self, instance_type: str) -> float:
        """Most instances of ``instance_type`` this share may borrow (``inf`` when unlimited)."""
        limit = self.effective_borrow_limit
        own = self.limit(instance_type)
        if limit is None or own == 0:
            return 0
        if limit == UNLIMITED_BORROW:
            return math.inf
        return (own * limit) // 100

    def problems(self, path: str = "") -> list[Problem]:
        """Every rule this share breaks on its own (queue-level rules are on QueueSpec)."""
        return share_problems({f.name: getattr(self, f.name) for f in fields(self)}, path)

    def environment_problems(
        self, environment: Mapping[str, int], *, environment_name: str, path: str = ""
    ) -> list[Problem]:
        """The share's instance types that the service environment has no capacity limit for:
        jobs of such a type wait forever (AWS: "until a matching capacity limit is
        configured"). ``environment`` maps instance type -> its instances."""
        have = ", ".join(f"{itype}: {count}" for itype, count in environment.items()) or "none"
        return [
            Problem(
                f"{join_path(path, 'capacity')}.{itype}",
                count,
                f"service environment {environment_name} has no {itype} capacity limit "
                f"(it has {have}); jobs of this share on {itype} could never run",
                f"add {itype} to the service environment's capacity limits, "
                "or remove it from the share",
            )
            for itype, count in self.capacity.items()
            if itype not in environment
        ]

    def above_environment(self, environment: Mapping[str, int]) -> dict[str, tuple[int, int]]:
        """Instance type -> (share's limit, environment's) where the share's own limit exceeds
        what the environment has: the excess can never run (UNCONFIRMED whether AWS refuses it)."""
        return {
            itype: (count, environment[itype])
            for itype, count in self.capacity.items()
            if itype in environment and count > environment[itype]
        }


def share_problems(values: Mapping[str, Any], path: str = "") -> list[Problem]:
    """The rules of a share's fields in ``values`` (field name -> the model's value).

    A rule is checked when its fields are all there; a loader passes only the fields that
    parsed, so a share with a field that did not still has its other rules checked.
    """
    problems = []
    if "name" in values:
        problems += check_name(values["name"], join_path(path, "name"), what="quota share name")
    if "capacity" in values:
        problems += _capacity_problems(values["capacity"], join_path(path, "capacity"))
    if values.get("borrow_limit") is not None and "strategy" in values:
        problems += _borrow_problems(values["borrow_limit"], values["strategy"], path)
    if values.get("description"):
        problems += check_description(
            values["description"],
            join_path(path, "description"),
            max_chars=MAX_SHARE_DESCRIPTION_CHARS,
            what="a share's description",
        )
    if values.get("access") is not None:
        problems += values["access"].problems(join_path(path, "access"))
    if "notifications" in values:
        problems += values["notifications"].problems(join_path(path, "notifications"))
    return problems


def _capacity_problems(capacity: Mapping[str, int], cap_path: str) -> list[Problem]:
    count = len(capacity)
    problems = []
    if not MIN_CAPACITY_LIMITS_PER_SHARE <= count <= MAX_CAPACITY_LIMITS_PER_SHARE:
        problems.append(
            Problem(
                cap_path,
                dict(capacity),
                f"a quota share needs 1 to 5 capacity limits (instance types), got {count}",
                "list between one and five instance types with their instance counts",
            )
        )
    for itype, count_ in capacity.items():
        item = f"{cap_path}.{itype}"
        problems += check_capacity_limit(
            itype, count_, type_path=item, count_path=item, what="max capacity (instances)"
        )
    return problems


def _borrow_problems(borrow_limit: int, strategy: SharingStrategy, path: str) -> list[Problem]:
    bl_path = join_path(path, "borrow_limit")
    if not strategy.borrows:
        return [
            Problem(
                bl_path,
                borrow_limit,
                f"borrow_limit is only allowed with strategy LEND_AND_BORROW, not {strategy.value}",
                "remove borrow_limit or set strategy: LEND_AND_BORROW",
            )
        ]
    return check_int_range(
        borrow_limit,
        bl_path,
        UNLIMITED_BORROW,
        MAX_BORROW_LIMIT,
        what="borrow limit (percent; -1 = unlimited)",
    )


SHARE_FIELDS: Mapping[str, ShareField] = MappingProxyType(
    {f.name: f.metadata["share"] for f in fields(QuotaShareSpec)}
)
"""``QuotaShareSpec`` field name -> its :class:`ShareField`, in declaration order."""
