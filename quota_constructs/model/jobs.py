"""Service jobs: states, AWS's RUNNABLE reasons, retry and exit rules, capacity demand."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from quota_constructs.model.limits import (
    MAX_EXIT_RULES,
    MAX_INSTANCES_PER_TYPE,
    MAX_STATUS_REASON_PATTERN,
    RETRY_ATTEMPTS_RANGE,
    check_instance_type,
    check_int_range,
)
from quota_constructs.model.problems import Problem, QuotaConfigError, raise_if

# --- AWS statusReason strings for RUNNABLE jobs that can never fit (docs/aws-semantics.md §2.6) ---

REASON_SE_MAX = (
    "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - Service environment(s) associated with "
    "the job queue cannot meet the capacity requirement of the job."
)
REASON_SHARE_LIMIT = (
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requirements exceed quota share "
    "capacity limits."
)
REASON_SHARE_AND_BORROW_LIMIT = (
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requirements exceed quota share "
    "capacity limits and borrow limits."
)
REASON_BORROWABLE = (
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requires borrowing that exceeds all "
    "configured borrowable capacity."
)
MISCONFIGURATION_REASONS = (
    "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED",
)


# --- service jobs -----------------------------------------------------------------------------


class JobStatus(StrEnum):
    """Service-job states with AWS names (docs/aws-semantics.md §2.3); ``PENDING`` is unused."""

    SUBMITTED = "SUBMITTED"
    PENDING = "PENDING"
    RUNNABLE = "RUNNABLE"
    SCHEDULED = "SCHEDULED"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"

    @property
    def is_active(self) -> bool:
        """Not finished yet (``SUBMITTED`` .. ``RUNNING``)."""
        return self in ACTIVE_STATUSES

    @property
    def is_dispatched(self) -> bool:
        """``SCHEDULED``, ``STARTING`` or ``RUNNING``: holds capacity and is preemptible."""
        return self in DISPATCHED_STATUSES

    @property
    def is_terminal(self) -> bool:
        """``SUCCEEDED`` or ``FAILED``."""
        return self in TERMINAL_STATUSES


ACTIVE_STATUSES: tuple[JobStatus, ...] = (
    JobStatus.SUBMITTED,
    JobStatus.PENDING,
    JobStatus.RUNNABLE,
    JobStatus.SCHEDULED,
    JobStatus.STARTING,
    JobStatus.RUNNING,
)
DISPATCHED_STATUSES: tuple[JobStatus, ...] = (
    JobStatus.SCHEDULED,
    JobStatus.STARTING,
    JobStatus.RUNNING,
)
TERMINAL_STATUSES: tuple[JobStatus, ...] = (JobStatus.SUCCEEDED, JobStatus.FAILED)


def check_job_settings(retry_attempts: Any, preemption_retries: Any) -> list[Problem]:
    """``retryStrategy.attempts`` 1-10 (``None``: not sent, one attempt) and
    ``preemptionRetriesBeforeTermination`` >= 0 (``None``: unlimited requeues)."""
    problems: list[Problem] = []
    if retry_attempts is not None:
        low, high = RETRY_ATTEMPTS_RANGE
        problems += check_int_range(
            retry_attempts, "retryStrategy.attempts", low, high, what="retry attempts"
        )
    if preemption_retries is not None:
        problems += check_int_range(
            preemption_retries,
            "preemptionConfiguration.preemptionRetriesBeforeTermination",
            0,
            None,
            what="preemption retries",
        )
    return problems


class RetryAction(StrEnum):
    """What ``retryStrategy.evaluateOnExit`` does with a failed attempt whose reason matches."""

    RETRY = "RETRY"
    EXIT = "EXIT"


@dataclass(frozen=True)
class ExitRule:
    """One ``evaluateOnExit`` entry: ``action`` when the ``statusReason`` matches the glob."""

    action: RetryAction
    on_status_reason: str


def status_reason_matches(pattern: str, reason: str) -> bool:
    """AWS's ``onStatusReason`` glob: the whole reason, exactly; a pattern ending with ``*``
    needs only "the start of the string" to match (every other character is literal)."""
    if pattern.endswith("*"):
        return reason.startswith(pattern[:-1])
    return reason == pattern


def exit_action(rules: Iterable[ExitRule], reason: str) -> RetryAction:
    """What a failed attempt with ``reason`` gets: the action of the first matching rule, and
    ``RETRY`` when none matches ("If none of the listed conditions match, then the job is
    retried"). Whether an attempt is left to retry with is the caller's to check."""
    for rule in rules:
        if status_reason_matches(rule.on_status_reason, reason):
            return rule.action
    return RetryAction.RETRY


def check_exit_rules(
    rules: Iterable[ExitRule], path: str = "retryStrategy.evaluateOnExit"
) -> list[Problem]:
    """At most ``MAX_EXIT_RULES`` rules; each ``onStatusReason``: "up to 512 characters and can
    contain all printable characters"."""
    rules = list(rules)
    problems: list[Problem] = []
    if len(rules) > MAX_EXIT_RULES:
        problems.append(
            Problem(
                path,
                len(rules),
                f"a service job has at most {MAX_EXIT_RULES} evaluateOnExit rules",
                "merge rules with a pattern ending in *",
            )
        )
    for index, rule in enumerate(rules):
        pattern, where = rule.on_status_reason, f"{path}[{index}].onStatusReason"
        if len(pattern) > MAX_STATUS_REASON_PATTERN:
            problems.append(
                Problem(
                    where, pattern[:40] + "...", "a pattern is at most 512 characters", "shorten it"
                )
            )
        elif not pattern.isprintable():
            problems.append(
                Problem(
                    where,
                    pattern,
                    "a pattern has printable characters only",
                    "remove control characters such as newlines and tabs",
                )
            )
    return problems


def capacity_demand(payload: Mapping[str, Any]) -> dict[str, int]:
    """Instances a SageMaker ``CreateTrainingJob`` payload needs, per instance type.

    ``ResourceConfig.InstanceType`` x ``InstanceCount``; heterogeneous clusters
    (``ResourceConfig.InstanceGroups``) count each group (docs/aws-semantics.md §1.3, UNCONFIRMED).
    ``InstanceCount`` is 1 to ``MAX_INSTANCES_PER_TYPE`` (SageMaker documents no maximum; no
    share or service environment can hold more). Raises :class:`QuotaConfigError` when the
    payload names no instance type or a count is out of range.
    """
    config = payload.get("ResourceConfig")
    if not isinstance(config, Mapping):
        raise QuotaConfigError(
            [
                Problem(
                    "serviceRequestPayload.ResourceConfig",
                    config,
                    "missing ResourceConfig",
                    "set ResourceConfig.InstanceType and ResourceConfig.InstanceCount",
                )
            ]
        )
    demand: dict[str, int] = {}
    groups = config.get("InstanceGroups") or [config]
    if not isinstance(groups, list):
        groups = [groups]
    for index, group in enumerate(groups):
        path = "serviceRequestPayload.ResourceConfig" + (
            f".InstanceGroups[{index}]" if "InstanceGroups" in config else ""
        )
        if not isinstance(group, Mapping):
            raise_if([Problem(path, group, "not an object", "give InstanceType and InstanceCount")])
        itype = group.get("InstanceType")
        count = group.get("InstanceCount", 1)
        problems = check_instance_type(itype, f"{path}.InstanceType")
        problems += check_int_range(
            count, f"{path}.InstanceCount", 1, MAX_INSTANCES_PER_TYPE, what="instance count"
        )
        raise_if(problems)
        demand[itype] = demand.get(itype, 0) + count
    return demand
