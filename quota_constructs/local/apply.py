"""Owns applying a deploy plan to the emulator the way CloudFormation applies the template change.

``quota local apply FILE`` rehearses a deploy offline: :func:`apply_plan` takes a
:class:`~quota_constructs.deploy_plan.DeployPlan` of the Batch resources, the two templates'
``Resources`` and the deployed resources' ARNs, and makes the Batch calls CloudFormation's
resource handlers would make, in CloudFormation's order, through ``call(operation, params)``
(the same :data:`~quota_constructs.local.provision.BatchCall` provisioning uses; the command
passes a boto3 client of the emulator):

1. in dependency order (scheduling policy, service environment, job queue, quota shares): each
   new resource and the new copy of each replaced one is created, and each changed one is
   updated in place;
2. then the cleanup, in reverse dependency order: the old copies of replaced resources and the
   deleted resources are deleted (a share or queue is DISABLED first, as the API requires).
   Deleting a share terminates its jobs ("Quota share deleted: all jobs in the share are
   terminated").

A call refused in step 1 rolls the change back as CloudFormation does: what was updated is
updated back, what was created is deleted, nothing is cleaned up, and :class:`ApplyFailed`
says which call failed. Tag changes, SSM parameters and the resources the emulator does not
serve (IAM, S3, SNS, EventBridge, ...) are not applied.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from quota_constructs.api_shapes import CAPACITY_LIMITS, DISABLED, ENABLED, STATE
from quota_constructs.deploy_plan import (
    BATCH_TYPES,
    JOB_QUEUE,
    QUOTA_SHARE,
    SCHEDULING_POLICY,
    SERVICE_ENVIRONMENT,
    ChangeAction,
    DeployPlan,
)
from quota_constructs.local.provision import BatchCall
from quota_constructs.model.resource_schemas import create_only_properties

_RANK = {SCHEDULING_POLICY: 0, SERVICE_ENVIRONMENT: 1, JOB_QUEUE: 2, QUOTA_SHARE: 3}
"""CloudFormation's dependency order of the queue's resources (each names the one before)."""
_ARN_FIELD = {
    SCHEDULING_POLICY: "arn",
    SERVICE_ENVIRONMENT: "serviceEnvironmentArn",
    JOB_QUEUE: "jobQueueArn",
    QUOTA_SHARE: "quotaShareArn",
}
_KEPT_AS_IS = frozenset({"Tags"})
"""Properties whose keys are the user's (tag keys), never recased."""
_SHARE_FIXED = frozenset(
    {p[:1].lower() + p[1:] for p in create_only_properties()[QUOTA_SHARE]} | {"tags"}
)
"""A share's properties UpdateQuotaShare does not take: the create-only ones, and tags."""


class ApplyFailed(Exception):
    """A call of the update was refused: the change was rolled back (see ``steps``)."""

    def __init__(self, message: str, steps: list[str]) -> None:
        super().__init__(message)
        self.message = message
        self.steps = steps


@dataclass
class _Run:
    call: BatchCall
    arns: dict[str, str]
    """Logical ID -> ARN of the deployed resources, then of the ones this run creates."""
    steps: list[str] = field(default_factory=list)
    undo: list[Callable[[], None]] = field(default_factory=list)

    def do(self, operation: str, params: Mapping[str, Any], what: str) -> dict[str, Any]:
        result = self.call(operation, params)
        self.steps.append(f"{operation} {what}")
        return result


def _camel(value: Any) -> Any:
    """CloudFormation's PascalCase property shape as the API's camelCase one."""
    if isinstance(value, dict):
        return {
            (k[:1].lower() + k[1:]): (v if k in _KEPT_AS_IS else _camel(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _resolve(value: Any, arns: Mapping[str, str]) -> Any:
    """``Ref`` and ``Fn::GetAtt`` of the queue's resources as their ARNs."""
    if isinstance(value, dict):
        if set(value) == {"Ref"}:
            return arns[str(value["Ref"])]
        if set(value) == {"Fn::GetAtt"}:
            return arns[str(value["Fn::GetAtt"][0])]
        return {k: _resolve(v, arns) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, arns) for v in value]
    return value


def _params(resource: Mapping[str, Any], arns: Mapping[str, str]) -> dict[str, Any]:
    return dict(_camel(_resolve(dict(resource.get("Properties") or {}), arns)))


def _generated_name(logical_id: str, arns: Mapping[str, str]) -> str:
    """A name for a resource the template leaves unnamed (CloudFormation generates one)."""
    digest = hashlib.sha256(f"{logical_id}{sorted(arns.values())}".encode()).hexdigest()[:12]
    return f"{logical_id[:100]}-{digest.upper()}"


def apply_plan(
    plan: DeployPlan,
    old_resources: Mapping[str, Mapping[str, Any]],
    new_resources: Mapping[str, Mapping[str, Any]],
    deployed: Mapping[str, str],
    call: BatchCall,
    *,
    refusals: tuple[type[Exception], ...] = (Exception,),
) -> list[str]:
    """Carry out ``plan``'s Batch changes (module docstring); returns the calls made, one
    ``Operation what`` line each. ``deployed``: logical ID -> ARN of the old template's Batch
    resources. Raises :class:`ApplyFailed` after rolling back when a call is refused (raises
    one of ``refusals``: boto3's ``ClientError`` for a client)."""
    run = _Run(call, dict(deployed))
    changes = sorted(
        (c for c in plan.changes if c.resource_type in BATCH_TYPES),
        key=lambda c: _RANK[c.resource_type],
    )
    old_arns = dict(deployed)
    try:
        for change in changes:
            if change.action in (ChangeAction.CREATE, ChangeAction.REPLACE):
                _create(run, change.logical_id, new_resources[change.logical_id])
            elif change.action is ChangeAction.UPDATE:
                _update(run, change.logical_id, old_resources, new_resources[change.logical_id])
    except refusals as error:
        failed = f"{error}"
        for undo in reversed(run.undo):
            try:
                undo()
            except refusals as rollback_error:
                run.steps.append(f"rollback step failed: {rollback_error}")
        raise ApplyFailed(failed, run.steps) from error
    cleanup = [c for c in changes if c.action in (ChangeAction.DELETE, ChangeAction.REPLACE)]
    for change in sorted(cleanup, key=lambda c: -_RANK[c.resource_type]):
        if change.retained:
            run.steps.append(f"kept {change.resource_type} {change.logical_id} (Retain)")
            continue
        _delete(run, change.resource_type, old_arns[change.logical_id], change.logical_id)
    return run.steps


def _create(run: _Run, logical_id: str, resource: Mapping[str, Any]) -> None:
    resource_type = str(resource["Type"])
    params = _params(resource, run.arns)
    if not params.get("tags"):
        params.pop("tags", None)
    if resource_type == SCHEDULING_POLICY:
        params.setdefault("name", _generated_name(logical_id, run.arns))
        operation = "CreateSchedulingPolicy"
    elif resource_type == SERVICE_ENVIRONMENT:
        params.setdefault("serviceEnvironmentName", _generated_name(logical_id, run.arns))
        operation = "CreateServiceEnvironment"
    elif resource_type == JOB_QUEUE:
        params.setdefault("jobQueueName", _generated_name(logical_id, run.arns))
        operation = "CreateJobQueue"
    else:
        operation = "CreateQuotaShare"
    name = params.get("quotaShareName") or params.get("jobQueueName") or logical_id
    created = run.do(operation, params, f"{name} ({logical_id})")
    arn = str(created[_ARN_FIELD[resource_type]])
    run.arns[logical_id] = arn
    run.undo.append(lambda: _delete(run, resource_type, arn, logical_id))


def _update(
    run: _Run,
    logical_id: str,
    old_resources: Mapping[str, Mapping[str, Any]],
    resource: Mapping[str, Any],
) -> None:
    resource_type = str(resource["Type"])
    arn = run.arns[logical_id]
    before = old_resources[logical_id]

    def send(props: Mapping[str, Any]) -> None:
        params = _params(props, run.arns)
        if resource_type == QUOTA_SHARE:
            # every property but the create-only ones and tags: a new share field needs nothing
            request = {k: v for k, v in params.items() if k not in _SHARE_FIXED}
            request.setdefault(STATE, ENABLED)
            run.do("UpdateQuotaShare", {"quotaShareArn": arn, **request}, logical_id)
        elif resource_type == JOB_QUEUE:
            request = {
                "jobQueue": arn,
                "priority": params.get("priority", 1),
                STATE: params.get(STATE, ENABLED),
                "jobStateTimeLimitActions": params.get("jobStateTimeLimitActions", []),
                "schedulingPolicyArn": params.get("schedulingPolicyArn"),
            }
            run.do(
                "UpdateJobQueue", {k: v for k, v in request.items() if v is not None}, logical_id
            )
        elif resource_type == SERVICE_ENVIRONMENT:
            request = {
                "serviceEnvironment": arn,
                CAPACITY_LIMITS: params.get(CAPACITY_LIMITS, []),
                STATE: params.get(STATE, ENABLED),
            }
            run.do("UpdateServiceEnvironment", request, logical_id)
        # a scheduling policy's only setting here (FIFO) never changes; tags are not applied

    send(resource)
    run.undo.append(lambda: send(before))


def _delete(run: _Run, resource_type: str, arn: str, logical_id: str) -> None:
    """Delete as CloudFormation's handler does: a share or queue, and an environment, are
    DISABLED first (the API refuses to delete an ENABLED one)."""
    if resource_type == QUOTA_SHARE:
        run.do("UpdateQuotaShare", {"quotaShareArn": arn, STATE: DISABLED}, logical_id)
        run.do("DeleteQuotaShare", {"quotaShareArn": arn}, logical_id)
    elif resource_type == JOB_QUEUE:
        run.do("UpdateJobQueue", {"jobQueue": arn, STATE: DISABLED}, logical_id)
        run.do("DeleteJobQueue", {"jobQueue": arn}, logical_id)
    elif resource_type == SERVICE_ENVIRONMENT:
        run.do(
            "UpdateServiceEnvironment", {"serviceEnvironment": arn, "state": "DISABLED"}, logical_id
        )
        run.do("DeleteServiceEnvironment", {"serviceEnvironment": arn}, logical_id)
    else:
        run.do("DeleteSchedulingPolicy", {"arn": arn}, logical_id)
