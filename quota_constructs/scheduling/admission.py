"""Admission: the problems that make a queue refuse a submitted job request."""

from __future__ import annotations

import math
from collections.abc import Mapping

from quota_constructs.model import (
    NAME_PATTERN,
    Problem,
    QuotaShareSpec,
    ShareState,
    check_instance_type,
    check_int_range,
    check_job_settings,
    check_name,
    check_scheduling_priority,
    check_tags,
)
from quota_constructs.scheduling.capacity import Capacity
from quota_constructs.scheduling.records import JobRequest, Outcome


def request_problems(
    request: JobRequest, queue_name: str, shares: Mapping[str, QuotaShareSpec]
) -> list[Problem]:
    """Why ``queue_name`` (with ``shares``) refuses ``request``; empty when it accepts it."""
    name = request.job_name
    if type(name) is str and _NAME(name):
        problems = []  # the usual name, checked without the model's call (its same pattern)
    else:
        problems = check_name(name, "jobName", what="job name")
    problems += _share_problems(request.share_name, queue_name, shares)
    problems += _settings_problems(request)
    for name, value in (
        ("duration_s", request.duration_s),
        ("timeoutConfig.attemptDurationSeconds", request.attempt_duration_s),
        ("StoppingCondition.MaxRuntimeInSeconds", request.max_runtime_s),
        ("checkpoint_interval_s", request.checkpoint_interval_s),
    ):
        if value is None or (type(value) is float and value >= 0):
            continue  # the usual values, checked without the calls below
        if not isinstance(value, int | float) or math.isnan(value) or value < 0:
            problems.append(Problem(name, value, "must be a number >= 0", "set it >= 0"))
    if request.outcome not in _OUTCOMES:
        problems.append(
            Problem("outcome", request.outcome, "unknown outcome", "use SUCCEEDED or FAILED")
        )
    if request.tags:
        problems += check_tags(request.tags)
    return problems


_OUTCOMES = (Outcome.SUCCEEDED, Outcome.FAILED)
_NAME = NAME_PATTERN.fullmatch
_DISABLED = ShareState.DISABLED


_SETTINGS_MEMO: dict[tuple[object, ...], tuple[Problem, ...]] = {}
_SETTINGS_MEMO_SIZE = 4096


def _settings_problems(request: JobRequest) -> tuple[Problem, ...]:
    """Problems of the priority, the demand and the retry settings: the same few values come
    again and again, so the problems of plain integer values are remembered."""
    priority, retries, preemptions = (
        request.priority,
        request.retry_attempts,
        request.preemption_retries,
    )
    items = tuple(request.demand.items())
    plain = (
        (priority is None or type(priority) is int)
        and type(retries) is int
        and (preemptions is None or type(preemptions) is int)
    )
    for itype, n in items:
        if type(itype) is not str or type(n) is not int:
            plain = False
    if not plain:
        return tuple(_settings_problems_afresh(request))
    key = (priority, retries, preemptions, items)
    known = _SETTINGS_MEMO.get(key)
    if known is None:
        if len(_SETTINGS_MEMO) >= _SETTINGS_MEMO_SIZE:
            _SETTINGS_MEMO.clear()
        known = _SETTINGS_MEMO[key] = tuple(_settings_problems_afresh(request))
    return known


def _settings_problems_afresh(request: JobRequest) -> list[Problem]:
    problems: list[Problem] = []
    if request.priority is not None:
        problems += check_scheduling_priority(request.priority)
    problems += demand_problems(request.demand)
    problems += check_job_settings(request.retry_attempts, request.preemption_retries)
    return problems


def _share_problems(
    share_name: str, queue_name: str, shares: Mapping[str, QuotaShareSpec]
) -> list[Problem]:
    spec = shares.get(share_name) if share_name else None
    if spec is not None and spec.state is not _DISABLED:
        return []
    known = ", ".join(shares) or "none"
    if not share_name:
        return [
            Problem(
                "quotaShareName",
                share_name,
                f"quotaShareName is required on the quota-managed job queue {queue_name!r}",
                f"name one of its shares: {known}",
            )
        ]
    if spec is None:
        return [
            Problem(
                "quotaShareName",
                share_name,
                f"no quota share of that name on job queue {queue_name!r}",
                f"use one of: {known}",
            )
        ]
    return [
        Problem(
            "quotaShareName",
            share_name,
            "the quota share is DISABLED and accepts no new jobs",
            "enable the share (state ENABLED) or submit to another share",
        )
    ]


def demand_problems(demand: Capacity) -> list[Problem]:
    """Problems of a demand: empty, a bad instance type or a count below 1."""
    problems: list[Problem] = []
    if not demand:
        problems.append(
            Problem("demand", dict(demand), "a job needs at least one instance", "set a demand")
        )
    for itype, count in demand.items():
        problems += check_instance_type(itype, f"ResourceConfig.InstanceType[{itype}]")
        problems += check_int_range(
            count, f"ResourceConfig.InstanceCount[{itype}]", 1, None, what="instance count"
        )
    return problems
