"""SageMaker training plans (reserved capacity) of an organisation: their rules and windows.

A plan is either known by name (``name``, ``instance_type``, ``instance_count``, ``start``,
``duration_hours``: a plan to buy, or bought already) or by ``arn`` alone (an existing plan,
looked up). Bounds are botocore's SageMaker model (``TrainingPlanName``, ``TrainingPlanArn``,
``ReservedCapacityInstanceCount``, ``TrainingPlanDurationHours``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from quota_constructs.model.limits import check_instance_type, check_int_range
from quota_constructs.model.problems import Problem

PLAN_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,63}$")
PLAN_ARN_PATTERN = re.compile(r"^arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:training-plan/.+$")
PLAN_INSTANCE_TYPES = (
    "ml.p4d.24xlarge",
    "ml.p5.48xlarge",
    "ml.p5e.48xlarge",
    "ml.p5en.48xlarge",
    "ml.trn1.32xlarge",
    "ml.trn2.48xlarge",
    "ml.p6-b200.48xlarge",
    "ml.p4de.24xlarge",
    "ml.p6e-gb200.36xlarge",
    "ml.p5.4xlarge",
    "ml.p6-b300.48xlarge",
)
"""The types a training plan can reserve: botocore's ``ReservedCapacityInstanceType`` enum
(botocore 1.44.8; tests/unit/test_training_plans.py keeps the two equal)."""
PLAN_INSTANCE_COUNT_RANGE = (1, 256)
PLAN_DURATION_HOURS_RANGE = (1, 87600)
HOUR_S = 3600.0
PLAN_EARLIEST_START = "2024-01-01T00:00:00Z"
"""No plan starts before 2024 (SageMaker sold the first training plans in December 2024): an
earlier start is a typo, and its jobs would wait for capacity that never existed."""
PLAN_LATEST_END = "9999-12-31T00:00:00Z"
"""No plan ends after 9999-12-31: later dates cannot be written as ISO 8601 years, and
DescribeTrainingPlan's answer and the reports would fail on them."""
_UTC_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|\+00:00)$")


def parse_utc(text: str) -> float | None:
    """An ISO 8601 UTC time (``2027-06-01T00:00:00Z``) as epoch seconds; ``None`` if not one."""
    if not isinstance(text, str) or not _UTC_TIME.fullmatch(text):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def utc_text(epoch_s: float) -> str:
    """Epoch seconds as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class TrainingPlanSpec:
    """One training plan: by name with its instances and window, or by ARN alone."""

    name: str = ""
    instance_type: str = ""
    instance_count: int = 0
    start: str = ""
    """ISO 8601 UTC, e.g. ``2027-06-01T00:00:00Z``."""
    duration_hours: int = 0
    arn: str = ""

    @property
    def by_arn(self) -> bool:
        """Known by ARN only: its type, instances and window come from DescribeTrainingPlan."""
        return bool(self.arn) and not self.name

    @property
    def label(self) -> str:
        return self.name or self.arn

    @property
    def start_s(self) -> float:
        """Start of the window, epoch seconds (0 when not a valid time)."""
        return parse_utc(self.start) or 0.0

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_hours * HOUR_S

    def active_at(self, epoch_s: float) -> bool:
        """Whether the plan's capacity exists at ``epoch_s`` (start inclusive, end exclusive)."""
        return self.start_s <= epoch_s < self.end_s

    def overlap_hours(self, start_s: float, end_s: float) -> float:
        """Hours of the plan's window inside ``[start_s, end_s]``."""
        return max(0.0, min(end_s, self.end_s) - max(start_s, self.start_s)) / HOUR_S

    def problems(self, path: str) -> list[Problem]:
        """Every rule this plan breaks, paths under ``path`` (e.g. ``training_plans[0]``)."""
        if self.arn and not self.name:
            return self._arn_problems(path)
        if self.arn:
            return [
                Problem(
                    f"{path}.arn",
                    self.arn,
                    "a plan is given either by name (with its instances and window) or by ARN",
                    "keep only 'arn' for an existing plan, or drop 'arn'",
                )
            ]
        return self._named_problems(path)

    def _arn_problems(self, path: str) -> list[Problem]:
        if PLAN_ARN_PATTERN.fullmatch(self.arn) and len(self.arn) <= 2048:
            return []
        fix = "e.g. arn:aws:sagemaker:us-east-1:111122223333:training-plan/p5-june"
        return [Problem(f"{path}.arn", self.arn, "not a SageMaker training plan ARN", fix)]

    def _named_problems(self, path: str) -> list[Problem]:
        problems: list[Problem] = []
        if not isinstance(self.name, str) or not PLAN_NAME_PATTERN.fullmatch(self.name):
            problems.append(
                Problem(
                    f"{path}.name",
                    self.name,
                    "training plan names are 1-64 letters, digits and '-', starting and "
                    "ending with a letter or digit",
                    "e.g. p5-june",
                )
            )
        type_problems = check_instance_type(self.instance_type, f"{path}.instance_type")
        if not type_problems and self.instance_type not in PLAN_INSTANCE_TYPES:
            type_problems.append(
                Problem(
                    f"{path}.instance_type",
                    self.instance_type,
                    "SageMaker training plans do not reserve this type (they reserve "
                    f"{', '.join(PLAN_INSTANCE_TYPES)})",
                    "reserve one of those types, or run this type on demand (no plan)",
                )
            )
        problems += type_problems
        low, high = PLAN_INSTANCE_COUNT_RANGE
        problems += check_int_range(
            self.instance_count, f"{path}.instance_count", low, high, what="a plan's instances"
        )
        if parse_utc(self.start) is None:
            problems.append(
                Problem(
                    f"{path}.start",
                    self.start,
                    "not an ISO 8601 UTC time",
                    "write it like 2027-06-01T00:00:00Z (quoted)",
                )
            )
        low, high = PLAN_DURATION_HOURS_RANGE
        duration = check_int_range(
            self.duration_hours, f"{path}.duration_hours", low, high, what="a plan's duration"
        )
        problems += duration
        if parse_utc(self.start) is not None and not duration:
            problems += self._window_problems(path)
        return problems

    def _window_problems(self, path: str) -> list[Problem]:
        """The window inside :data:`PLAN_EARLIEST_START` .. :data:`PLAN_LATEST_END`."""
        if self.start_s < (parse_utc(PLAN_EARLIEST_START) or 0.0):
            return [
                Problem(
                    f"{path}.start",
                    self.start,
                    f"a training plan starts on or after {PLAN_EARLIEST_START} (SageMaker "
                    "sold none earlier)",
                    "write the plan's real start, e.g. 2027-06-01T00:00:00Z",
                )
            ]
        if self.end_s > (parse_utc(PLAN_LATEST_END) or 0.0):
            return [
                Problem(
                    f"{path}.duration_hours",
                    self.duration_hours,
                    f"the plan would end after {PLAN_LATEST_END}",
                    "check the start's year and the duration (at most 87600 hours)",
                )
            ]
        return []

    def ended_at(self, epoch_s: float) -> bool:
        """Whether a named plan's window is over at ``epoch_s`` (its jobs run on demand)."""
        return not self.by_arn and self.end_s <= epoch_s


def training_plan_problems(
    plans: Iterable[TrainingPlanSpec], capacity: Mapping[str, int] | None
) -> list[Problem]:
    """Every plan's own rules, unique names and ARNs, and each type's capacity against plans.

    ``capacity``: the service environment (the shares' capacity summed per instance type;
    ``None``: not known, as some shares did not parse). A named plan's type must be one the
    shares hold, and the shares' capacity of a type may not exceed the instances of the
    largest set of that type's plans active at once.
    """
    plans = list(plans)
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for index, plan in enumerate(plans):
        path = f"training_plans[{index}]"
        problems += plan.problems(path)
        key = plan.label
        if key in seen:
            field = "arn" if plan.by_arn else "name"
            problems.append(
                Problem(
                    f"{path}.{field}",
                    key,
                    f"training_plans[{seen[key]}] has the same {field}",
                    "list each plan once",
                )
            )
        seen.setdefault(key, index)
    if problems or capacity is None:
        return problems
    return problems + _capacity_problems(plans, capacity)


def _capacity_problems(plans: list[TrainingPlanSpec], capacity: Mapping[str, int]) -> list[Problem]:
    problems = []
    for index, plan in enumerate(plans):
        if plan.by_arn:
            continue
        held = capacity.get(plan.instance_type, 0)
        if held == 0:
            problems.append(
                Problem(
                    f"training_plans[{index}].instance_type",
                    plan.instance_type,
                    "no share has capacity of this type, so no job could use the plan",
                    f"give the teams that use it capacity of {plan.instance_type}",
                )
            )
            continue
        peak = peak_plan_instances(plans, plan.instance_type)
        if held > peak:
            problems.append(
                Problem(
                    f"training_plans[{index}].instance_count",
                    plan.instance_count,
                    f"the shares hold {held} x {plan.instance_type}, more than the "
                    f"{peak} instance(s) of its plans",
                    f"lower the shares' capacity of {plan.instance_type} to {peak} or "
                    f"reserve {held} instances",
                )
            )
    return problems


def peak_plan_instances(plans: Iterable[TrainingPlanSpec], instance_type: str) -> int:
    """Most instances of ``instance_type`` that named plans hold at one time."""
    named = [p for p in plans if not p.by_arn and p.instance_type == instance_type]
    return max((active_plan_instances(named, instance_type, p.start_s) for p in named), default=0)


def active_plan_instances(
    plans: Iterable[TrainingPlanSpec], instance_type: str, epoch_s: float
) -> int:
    """Instances of ``instance_type`` the named plans hold at ``epoch_s``."""
    return sum(
        p.instance_count
        for p in plans
        if not p.by_arn and p.instance_type == instance_type and p.active_at(epoch_s)
    )


PLAN_STOP_BEFORE_END_S = 1800.0
"""AWS: SageMaker begins terminating the instances running on a plan 30 minutes before its end
(SageMaker developer guide, "Training plans utilization for SageMaker training jobs";
docs/cost.md). Plan-backed capacity is usable from the plan's start to ``end - this``."""


def plan_capacity_at(
    plans: Iterable[TrainingPlanSpec],
    instance_type: str,
    epoch_s: float,
    *,
    stop_before_end_s: float = PLAN_STOP_BEFORE_END_S,
) -> int:
    """Instances of ``instance_type`` the named plans let jobs use at ``epoch_s``: each plan's
    from its start (inclusive) to ``stop_before_end_s`` before its end (exclusive)."""
    return sum(
        p.instance_count
        for p in plans
        if not p.by_arn
        and p.instance_type == instance_type
        and p.start_s <= epoch_s < max(p.start_s, p.end_s - stop_before_end_s)
    )


def mixed_capacity_at(
    plans: Iterable[TrainingPlanSpec],
    instance_type: str,
    epoch_s: float,
    capacity: int,
    *,
    stop_before_end_s: float = PLAN_STOP_BEFORE_END_S,
) -> int:
    """Instances of ``instance_type`` usable at ``epoch_s`` when its ``capacity`` is on demand
    but for the plans' instances inside their windows: all of it, less the instances of plans
    SageMaker is stopping (from ``stop_before_end_s`` before a plan's end to its end)."""
    stopping = sum(
        p.instance_count
        for p in plans
        if not p.by_arn
        and p.instance_type == instance_type
        and max(p.start_s, p.end_s - stop_before_end_s) <= epoch_s < p.end_s
    )
    return max(capacity - stopping, 0)


def plan_capacity_edges(
    plans: Iterable[TrainingPlanSpec], *, stop_before_end_s: float = PLAN_STOP_BEFORE_END_S
) -> list[tuple[float, str]]:
    """Every ``(epoch_s, instance_type)`` at which a type's plan-backed capacity may change
    (each named plan's start and its stop, ``stop_before_end_s`` before its end), in order."""
    edges = set()
    for plan in plans:
        if not plan.by_arn:
            stop = max(plan.start_s, plan.end_s - stop_before_end_s)
            edges |= {(plan.start_s, plan.instance_type), (stop, plan.instance_type)}
    return sorted(edges)


def plan_stop_reason(instance_type: str, stop_before_end_s: float) -> str:
    """The status reason of a job whose plan instances SageMaker terminated."""
    when = (
        f"{stop_before_end_s / 60:g} minutes before its end" if stop_before_end_s else "at its end"
    )
    return (
        f"TrainingPlanEnded: SageMaker terminated the {instance_type} instances of the "
        f"training plan {when}"
    )


def jobs_to_stop(running: Iterable[tuple[str, int, float]], capacity: int) -> list[str]:
    """Which running jobs ``(job_id, instances, started_at)`` of a type stop when its
    plan-backed capacity drops to ``capacity``: the latest started first, until the rest fit
    (ours: AWS does not say which instances go first; UNCONFIRMED, docs/cost.md)."""
    ordered = sorted(running, key=lambda r: (r[2], r[0]))
    used = sum(count for _, count, _ in ordered)
    stopped = []
    while ordered and used > capacity:
        job_id, count, _ = ordered.pop()
        stopped.append(job_id)
        used -= count
    return stopped
