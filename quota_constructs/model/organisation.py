"""The job queue spec and the organisation: the rules across shares."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from types import MappingProxyType

from quota_constructs.model.access import shared_access_problems
from quota_constructs.model.allowance import DestructiveAllowance, allowance_problems
from quota_constructs.model.calendar import ShareCalendar, scheduled_changes
from quota_constructs.model.jobs import (
    REASON_BORROWABLE,
    REASON_SE_MAX,
    REASON_SHARE_AND_BORROW_LIMIT,
    REASON_SHARE_LIMIT,
)
from quota_constructs.model.limits import (
    MAX_INSTANCES_PER_TYPE,
    MAX_ORGANISATION_DESCRIPTION_BYTES,
    MAX_ORGANISATION_DESCRIPTION_CHARS,
    MAX_SHARES_PER_QUEUE,
    MAX_TAGS,
    QUEUE_PRIORITY_RANGE,
    RUNNABLE_TIMEOUT_MINUTES_RANGE,
    TEAM_TAG_KEY,
    check_description,
    check_int_range,
    check_organisation_name,
    check_tags,
    share_count_allowed,
    team_tag_value,
)
from quota_constructs.model.notifications import Subscribers, subscription_count_problems
from quota_constructs.model.problems import Problem, clip, join_path, raise_if
from quota_constructs.model.share import QuotaShareSpec
from quota_constructs.model.stack_size import stack_resource_bound, stack_size_problems
from quota_constructs.model.training_logs import training_prefix_problems
from quota_constructs.model.training_plan import TrainingPlanSpec, training_plan_problems

# --- queue ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SharePaths:
    """Where a queue's shares are in their file, for the paths of problems.

    ``list_path``: the list's key; ``items``: each share's path (default ``shares[i]``), for
    a queue of the shares that parsed; ``count``: the list's length, when some did not;
    ``unparsed_names``: the path and name of each share that did not parse but whose name did
    (names must be unique across all of them).
    """

    list_path: str = "shares"
    items: Sequence[str] | None = None
    count: int | None = None
    unparsed_names: Sequence[tuple[str, str]] = ()

    def item(self, index: int) -> str:
        """The path of the queue's share ``index``."""
        return self.items[index] if self.items is not None else f"{self.list_path}[{index}]"


_IN_ORDER = SharePaths()


def _index_of(item: str) -> int:
    """The list index in a share's path (``shares[3]`` -> 3)."""
    return int(item.rpartition("[")[2].rstrip("]"))


def _first_of_each_name(named: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Name -> the path of the first share in the file with it."""
    first: dict[str, str] = {}
    for item, name in sorted(named, key=lambda pair: _index_of(pair[0])):
        first.setdefault(name, item)
    return first


def duplicate_name_problem(share_path: str, name: str, first: str) -> Problem:
    """Share ``share_path`` has the name of the earlier share ``first``."""
    return Problem(
        f"{share_path}.name",
        name,
        f"quota share names must be unique in a queue; {first} has the same name",
        "give each share its own name",
    )


def unparsed_name_problems(where: SharePaths, parsed_names: Sequence[str]) -> list[Problem]:
    """The duplicate names of the shares that did not parse (``where.unparsed_names``), the
    shares that did (in ``where.items``' order) counted too."""
    first = _first_of_each_name(
        [*zip(where.items or (), parsed_names, strict=True), *where.unparsed_names]
    )
    return [
        duplicate_name_problem(join_path("", item), name, first[name])
        for item, name in where.unparsed_names
        if first[name] != item
    ]


@dataclass(frozen=True)
class JobQueueSpec:
    """A quota-managed SAGEMAKER_TRAINING job queue and its quota shares."""

    shares: tuple[QuotaShareSpec, ...]
    priority: int = 1
    runnable_timeout_minutes: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shares", tuple(self.shares))

    def share(self, name: str) -> QuotaShareSpec:
        """The share called ``name``; ``KeyError`` naming the known shares otherwise."""
        for share in self.shares:
            if share.name == name:
                return share
        known = ", ".join(s.name for s in self.shares) or "none"
        raise KeyError(f"no quota share {name!r} on this queue (shares: {known})")

    def settings_ahead(
        self, calendars: Mapping[str, ShareCalendar], now: datetime
    ) -> Iterator[JobQueueSpec]:
        """This queue with every share's settings in force at ``now`` (its shares being their
        own, declared settings), then at each moment within a week at which a calendar changes
        them (the changes of one moment together): every combination of sharing settings the
        queue goes through, lenders' included. A job that fits none of them never runs; one
        that fits some waits for it. Calendars repeat weekly, so a week holds them all. Lazy:
        most jobs fit the first."""
        if not calendars:
            yield self
            return
        shares = {
            s.name: (c.in_force(s, now) if (c := calendars.get(s.name)) else s) for s in self.shares
        }
        yield replace(self, shares=tuple(shares.values()))
        changes = scheduled_changes(calendars, self.shares, now, now + timedelta(days=7))
        seen = {_sharing(shares.values())}
        for index, change in enumerate(changes):
            shares[change.settings.name] = change.settings
            if index + 1 < len(changes) and changes[index + 1].time == change.time:
                continue  # the same moment: not a setting the queue is ever in
            key = _sharing(shares.values())
            if key not in seen:
                seen.add(key)
                yield replace(self, shares=tuple(shares.values()))

    def service_environment_capacity(self) -> dict[str, int]:
        """Capacity of the service environment: the sum of the shares' limits per instance type."""
        total: dict[str, int] = {}
        for share in self.shares:
            for itype, count in share.capacity.items():
                total[itype] = total.get(itype, 0) + count
        return dict(sorted(total.items()))

    def lendable(self, instance_type: str, *, excluding: str) -> int:
        """Configured capacity of ``instance_type`` that other lending shares could lend."""
        return sum(
            s.limit(instance_type) for s in self.shares if s.name != excluding and s.strategy.lends
        )

    def max_usable(self, share_name: str, instance_type: str) -> int:
        """Most instances of ``instance_type`` share ``share_name`` can ever hold at once.

        Own limit, plus (LEND_AND_BORROW only) borrowing capped by the borrow limit and by the
        configured capacity of the other LEND / LEND_AND_BORROW shares. A share with no limit
        for the type cannot run it at all (docs/aws-semantics.md §2.4, INFERRED).
        """
        share = self.share(share_name)
        own = share.limit(instance_type)
        lendable = self.lendable(instance_type, excluding=share.name)
        borrowable = min(share.borrow_cap(instance_type), lendable)
        return own + int(borrowable)

    def infeasibility(
        self,
        share_name: str,
        demand: Mapping[str, int],
        *,
        service_environment: Mapping[str, int] | None = None,
    ) -> str | None:
        """The AWS ``statusReason`` if a job needing ``demand`` can never run in the share.

        Checks, in AWS's order: service environment maximum, own limit (RESERVE / LEND),
        own limit times the borrow limit, then all configured borrowable capacity.
        ``service_environment``: its capacity when set apart from the shares (default: the sum
        of the shares' limits, as the constructs size it).
        """
        share = self.share(share_name)
        se = (
            dict(service_environment)
            if service_environment is not None
            else self.service_environment_capacity()
        )
        for itype, count in demand.items():
            if count > se.get(itype, 0):
                return REASON_SE_MAX
        for itype, count in demand.items():
            own = share.limit(itype)
            if count <= own:
                continue
            if not share.strategy.borrows or own == 0:
                return REASON_SHARE_LIMIT
            if count > own + share.borrow_cap(itype):
                return REASON_SHARE_AND_BORROW_LIMIT
            if count > own + self.lendable(itype, excluding=share.name):
                return REASON_BORROWABLE
        return None

    def problems(self, path: str = "", *, where: SharePaths = _IN_ORDER) -> list[Problem]:
        """Every rule the queue and its shares break, with field paths below ``path``."""
        problems: list[Problem] = []
        low, high = QUEUE_PRIORITY_RANGE
        problems += check_int_range(
            self.priority,
            join_path(path, "job_queue.priority"),
            low,
            high,
            what="job queue priority",
        )
        if self.runnable_timeout_minutes is not None:
            low, high = RUNNABLE_TIMEOUT_MINUTES_RANGE
            problems += check_int_range(
                self.runnable_timeout_minutes,
                join_path(path, "job_queue.runnable_timeout_minutes"),
                low,
                high,
                what="runnable timeout (minutes)",
            )
        shares_path = join_path(path, where.list_path)
        count = len(self.shares) if where.count is None else where.count
        if not share_count_allowed(count):
            problems.append(
                Problem(
                    shares_path,
                    count,
                    f"a quota-managed job queue needs 1 to {MAX_SHARES_PER_QUEUE} quota shares",
                    "split the teams over several organisations"
                    if count
                    else "declare at least one share",
                )
            )
        problems += self._pool_problems(shares_path)
        return problems + self._share_problems(path, where)

    def _share_problems(self, path: str, where: SharePaths) -> list[Problem]:
        """Each share's own rules, unique names, and no two teams with the same resources."""
        problems: list[Problem] = []
        first = _first_of_each_name(
            [*((where.item(i), s.name) for i, s in enumerate(self.shares)), *where.unparsed_names]
        )
        for index, share in enumerate(self.shares):
            share_path = join_path(path, where.item(index))
            problems += share.problems(share_path)
            if first[share.name] != where.item(index):
                problems.append(duplicate_name_problem(share_path, share.name, first[share.name]))
        problems += shared_access_problems(
            (f"{join_path(path, where.item(index))}.access", share.access)
            for index, share in enumerate(self.shares)
            if share.access is not None
        )
        return problems

    def _pool_problems(self, shares_path: str) -> list[Problem]:
        """The service environment (the sum of the shares per type) within the stated bound."""
        totals: dict[str, int] = {}
        for share in self.shares:
            for itype, count in share.capacity.items():
                if isinstance(count, int) and 1 <= count <= MAX_INSTANCES_PER_TYPE:
                    totals[itype] = totals.get(itype, 0) + count
        return [
            Problem(
                shares_path,
                total,
                f"the shares' capacity limits for {clip(str(itype))} add up to {total} instances; "
                f"the service environment allows at most {MAX_INSTANCES_PER_TYPE} of a type",
                "lower the shares' capacity for that type",
            )
            for itype, total in totals.items()
            if total > MAX_INSTANCES_PER_TYPE
        ]

    def validate(self, *, context: str = "") -> JobQueueSpec:
        """Return self, or raise :class:`QuotaConfigError` listing every problem."""
        raise_if(self.problems(), context=context)
        return self


# --- organisation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Organisation:
    """One organisation: a quota-managed queue, its shares and tags. One CDK stack each."""

    name: str
    queue: JobQueueSpec
    description: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)
    notifications: Subscribers = field(default_factory=Subscribers)
    """Who hears of every share's preemptions and FAILED jobs."""
    training_plans: tuple[TrainingPlanSpec, ...] = ()
    """Reserved capacity backing the shares' capacity of the plans' instance types."""
    calendars: Mapping[str, ShareCalendar] = field(default_factory=dict)
    """Share name -> its calendar (model/calendar.py); shares without one keep their settings."""
    allow_destructive: tuple[DestructiveAllowance, ...] = ()
    """The destructive changes a deploy of this file means to make (model/allowance.py): the
    pipeline's gate lets those through; nothing else reads them."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "tags", MappingProxyType(dict(self.tags)))
        object.__setattr__(self, "training_plans", tuple(self.training_plans))
        object.__setattr__(self, "allow_destructive", tuple(self.allow_destructive))
        object.__setattr__(self, "calendars", MappingProxyType(dict(self.calendars)))

    def plans_of(self, instance_type: str) -> tuple[TrainingPlanSpec, ...]:
        """The named training plans of ``instance_type``."""
        return tuple(
            p for p in self.training_plans if not p.by_arn and p.instance_type == instance_type
        )

    def shares_in_force(self, when: datetime) -> tuple[QuotaShareSpec, ...]:
        """The queue's shares with the settings their calendars put in force at ``when``."""
        return tuple(
            self.calendars[s.name].in_force(s, when) if s.name in self.calendars else s
            for s in self.queue.shares
        )

    def problems(self, *, where: SharePaths = _IN_ORDER) -> list[Problem]:
        """Every rule the organisation breaks; ``where``: the paths of its shares in the file."""
        problems = check_organisation_name(self.name, "organisation")
        if self.description:
            problems += check_description(
                self.description,
                "description",
                max_chars=MAX_ORGANISATION_DESCRIPTION_CHARS,
                max_bytes=MAX_ORGANISATION_DESCRIPTION_BYTES,
                what="the organisation's description (it goes into the stack description)",
            )
        problems += check_tags(self.tags)
        problems += self._team_tag_problems()
        problems += self.queue.problems(where=where)
        problems += training_prefix_problems(self.prefixed_teams(where))
        calendar_problems = self._calendar_problems(where)
        problems += calendar_problems
        if not calendar_problems:
            problems += stack_size_problems(
                self.queue.shares, self.calendars, len(self.notifications.endpoints), where.item
            )
        problems += self.notifications.problems()
        complete = where.count in (None, len(self.queue.shares))
        capacity = self.queue.service_environment_capacity() if complete else None
        problems += training_plan_problems(self.training_plans, capacity)
        problems += subscription_count_problems(
            len(self.notifications.endpoints),
            sum(len(s.notifications.endpoints) for s in self.queue.shares),
        )
        names = [s.name for s in self.queue.shares] if complete else None
        problems += allowance_problems(self.allow_destructive, names)
        return problems

    def stack_resource_bound(self) -> int:
        """The most CloudFormation resources the organisation's stack can hold
        (:mod:`~quota_constructs.model.stack_size`)."""
        return stack_resource_bound(
            self.queue.shares, self.calendars, len(self.notifications.endpoints)
        )

    def prefixed_teams(self, where: SharePaths = _IN_ORDER) -> list[tuple[str, str]]:
        """``(field path, team tag value)`` of each share whose team's training-job names are
        prefixed (``access.training_logs: team-prefixed``)."""
        return [
            (f"{where.item(index)}.name", team_tag_value(self.name, share.name))
            for index, share in enumerate(self.queue.shares)
            if share.access is not None and share.access.team_prefixed_logs
        ]

    def _calendar_problems(self, where: SharePaths) -> list[Problem]:
        """Each calendar's rules for its share; a calendar must name a share of the queue."""
        index = {share.name: i for i, share in enumerate(self.queue.shares)}
        problems = []
        for name, calendar in self.calendars.items():
            if name not in index:
                problems.append(
                    Problem(
                        "calendars",
                        name,
                        "a calendar names no share of this organisation",
                        "give the schedule to one of the shares",
                    )
                )
                continue
            share = self.queue.shares[index[name]]
            problems += calendar.problems(share, where.item(index[name]))
        return problems

    def _team_tag_problems(self) -> list[Problem]:
        """The team tag is reserved, and it is one more tag on every share with team access."""
        problems = [
            Problem(
                f"tags.{key}",
                key,
                f"tag key {TEAM_TAG_KEY!r} is reserved: the stack sets it on each team's share",
                "rename the tag",
            )
            for key in self.tags
            if isinstance(key, str) and key.lower() == TEAM_TAG_KEY
        ]
        if any(s.access is not None for s in self.queue.shares) and len(self.tags) >= MAX_TAGS:
            problems.append(
                Problem(
                    "tags",
                    len(self.tags),
                    f"at most {MAX_TAGS - 1} tags when a share has an access block: its quota "
                    f"share also carries the team tag {TEAM_TAG_KEY!r} (AWS allows {MAX_TAGS})",
                    f"remove {len(self.tags) - MAX_TAGS + 1} tag(s)",
                )
            )
        return problems

    def validate(self, *, context: str = "") -> Organisation:
        """Return self, or raise :class:`QuotaConfigError` listing every problem."""
        raise_if(self.problems(), context=context)
        return self


def _sharing(shares: Iterable[QuotaShareSpec]) -> tuple[tuple[str, object, object], ...]:
    """What of the shares' settings decides where a job fits (a calendar changes no capacity)."""
    return tuple((s.name, s.strategy, s.effective_borrow_limit) for s in shares)
