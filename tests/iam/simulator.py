"""Offline IAM proof harness: a synthesized template's policies, decided by iam-simulate.

Three steps, each usable alone:

1. :class:`TemplateResolver` turns a template's intrinsics (``Ref``, ``Fn::GetAtt``,
   ``Fn::Join``, ``Fn::Sub``, ``Fn::Select``, ``Fn::Split``, ``Fn::If``, ...) into concrete
   values for a test account and region, giving each resource type its real ARN and name shape.
2. :func:`role_principal` collects the identity policies attached to one role (inline
   ``Policies``, ``AWS::IAM::Policy`` and ``AWS::IAM::ManagedPolicy`` resources naming it in
   ``Roles``, ``ManagedPolicyArns``) and its permissions boundary.
3. :func:`evaluate` (or :meth:`Principal.evaluate`) sends a batch of requests to
   ``simulate.mjs``, one Node process per batch, which asks ``@cloud-copilot/iam-simulate`` (AWS's
   service authorisation data: actions, resource types, condition keys) for each decision;
   :func:`evaluate_many` sends the batches of several principals to one process.

Test tool only: iam-simulate is AGPL-3.0 and the library never imports it or this module.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

ACCOUNT = "123456789012"
REGION = "eu-west-1"
PARTITION = "aws"
STACK_NAME = "TestStack"

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "simulate.mjs"
PACKAGE = ROOT / "node_modules" / "@cloud-copilot" / "iam-simulate" / "package.json"

_NO_VALUE = object()


class TemplateError(ValueError):
    """The template uses something the resolver does not know; never guessed."""


class SimulatorError(RuntimeError):
    """iam-simulate refused a request or policy, or the driver failed."""


# --- 1. intrinsics ----------------------------------------------------------------------------


def _suffix(*parts: str, length: int = 12) -> str:
    """Deterministic stand-in for CloudFormation's random name suffix."""
    digest = hashlib.sha256("/".join(parts).encode()).hexdigest().upper()
    return digest[:length]


@dataclass(frozen=True)
class _Shape:
    """How a resource type names itself: name property, Ref value, attributes."""

    name_property: str | None
    ref: str  # "name" or "arn" or another attribute key
    attributes: Mapping[str, Callable[[TemplateResolver, str, Mapping[str, Any]], Any]]
    arn: Callable[[TemplateResolver, str, Mapping[str, Any]], str] | None = None


def _iam_arn(kind: str) -> Callable[[TemplateResolver, str, Mapping[str, Any]], str]:
    return lambda r, name, props: (
        f"arn:{PARTITION}:iam::{r.account}:{kind}{props.get('Path', '/')}{name}"
    )


def _regional(
    service: str, resource: str
) -> Callable[[TemplateResolver, str, Mapping[str, Any]], str]:
    return lambda r, name, props: (
        f"arn:{PARTITION}:{service}:{r.region}:{r.account}:{resource.format(name=name)}"
    )


def _quota_share_arn(r: TemplateResolver, name: str, props: Mapping[str, Any]) -> str:
    queue = r.resolve(props["JobQueue"])
    if not str(queue).startswith("arn:"):
        queue = f"arn:{PARTITION}:batch:{r.region}:{r.account}:job-queue/{queue}"
    return f"{queue}/quota-share/{name}"


def _shape(
    name_property: str | None,
    ref: str,
    arn: Callable[[TemplateResolver, str, Mapping[str, Any]], str] | None,
    arn_attributes: Sequence[str] = ("Arn",),
    **extra: Callable[[TemplateResolver, str, Mapping[str, Any]], Any],
) -> _Shape:
    attributes: dict[str, Callable[[TemplateResolver, str, Mapping[str, Any]], Any]] = {}
    if arn is not None:
        for attribute in arn_attributes:
            attributes[attribute] = arn
    attributes.update(extra)
    return _Shape(name_property, ref, attributes, arn)


def _bucket_attr(template: str) -> Callable[[TemplateResolver, str, Mapping[str, Any]], str]:
    return lambda r, name, props: template.format(name=name, region=r.region)


def _key_id(r: TemplateResolver, logical_id: str) -> str:
    """A key id of KMS's shape, unique per account, stack and logical id (like a real one)."""
    h = hashlib.sha256(f"{r.account}/{r.stack_name}/{logical_id}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


SHAPES: dict[str, _Shape] = {
    "AWS::IAM::Role": _shape(
        "RoleName",
        "name",
        _iam_arn("role"),
        RoleId=lambda r, name, props: "AROA" + _suffix(r.account, name, length=17),
    ),
    "AWS::IAM::ManagedPolicy": _shape(
        "ManagedPolicyName", "arn", _iam_arn("policy"), arn_attributes=("PolicyArn",)
    ),
    "AWS::IAM::Policy": _shape("PolicyName", "name", None),
    "AWS::IAM::InstanceProfile": _shape(
        "InstanceProfileName", "name", _iam_arn("instance-profile")
    ),
    "AWS::S3::Bucket": _shape(
        "BucketName",
        "name",
        lambda r, name, props: f"arn:{PARTITION}:s3:::{name}",
        DomainName=_bucket_attr("{name}.s3.amazonaws.com"),
        RegionalDomainName=_bucket_attr("{name}.s3.{region}.amazonaws.com"),
        DualStackDomainName=_bucket_attr("{name}.s3.dualstack.{region}.amazonaws.com"),
        WebsiteURL=_bucket_attr("http://{name}.s3-website-{region}.amazonaws.com"),
    ),
    "AWS::S3::BucketPolicy": _shape(None, "name", None),
    "AWS::Batch::JobQueue": _shape(
        "JobQueueName", "arn", _regional("batch", "job-queue/{name}"), ("JobQueueArn",)
    ),
    "AWS::Batch::QuotaShare": _shape("QuotaShareName", "arn", _quota_share_arn, ("QuotaShareArn",)),
    "AWS::Batch::SchedulingPolicy": _shape(
        "Name", "arn", _regional("batch", "scheduling-policy/{name}")
    ),
    "AWS::Batch::ServiceEnvironment": _shape(
        "ServiceEnvironmentName",
        "arn",
        _regional("batch", "service-environment/{name}"),
        ("ServiceEnvironmentArn",),
    ),
    "AWS::KMS::Key": _shape(None, "name", _regional("kms", "key/{name}"), KeyId=lambda r, n, p: n),
    "AWS::KMS::Alias": _shape("AliasName", "name", None),
    "AWS::SSM::Parameter": _shape("Name", "name", None),
    "AWS::Logs::LogGroup": _shape("LogGroupName", "name", _regional("logs", "log-group:{name}:*")),
    "AWS::SNS::Topic": _shape(
        "TopicName",
        "arn",
        _regional("sns", "{name}"),
        ("TopicArn",),
        TopicName=lambda r, name, props: name,
    ),
    "AWS::SQS::Queue": _shape(
        "QueueName",
        "QueueUrl",
        _regional("sqs", "{name}"),
        QueueName=lambda r, name, props: name,
        QueueUrl=lambda r, name, props: f"https://sqs.{r.region}.amazonaws.com/{r.account}/{name}",
    ),
    "AWS::Lambda::Function": _shape("FunctionName", "name", _regional("lambda", "function:{name}")),
    "AWS::Events::Rule": _shape("Name", "name", _regional("events", "rule/{name}")),
}
"""Resource types the resolver can name; any other type fails loudly when referenced."""

_PSEUDO = {
    "AWS::Partition": lambda r: PARTITION,
    "AWS::AccountId": lambda r: r.account,
    "AWS::Region": lambda r: r.region,
    "AWS::URLSuffix": lambda r: "amazonaws.com",
    "AWS::StackName": lambda r: r.stack_name,
    "AWS::StackId": lambda r: (
        f"arn:{PARTITION}:cloudformation:{r.region}:{r.account}:stack/{r.stack_name}/"
        "00000000-0000-4000-8000-000000000000"
    ),
    "AWS::NotificationARNs": lambda r: [],
    "AWS::NoValue": lambda r: _NO_VALUE,
}


class TemplateResolver:
    """Concrete values for a template's intrinsics, in a test account and region.

    Physical names: the resource's name property when set, else a generated name of
    CloudFormation's shape (``<stack>-<logical id>-<suffix>`` for IAM and S3, lowercase for S3;
    ``<logical id>-<suffix>`` otherwise) with a deterministic suffix. ``parameters`` overrides
    template parameters (otherwise their ``Default``; SSM-typed parameters need an override).
    """

    account: str
    region: str
    stack_name: str

    def __init__(
        self,
        template: Mapping[str, Any],
        *,
        account: str = ACCOUNT,
        region: str = REGION,
        stack_name: str = STACK_NAME,
        parameters: Mapping[str, Any] | None = None,
    ) -> None:
        self.template = template
        self.account = account
        self.region = region
        self.stack_name = stack_name
        self.parameters = dict(parameters or {})
        self._resources: Mapping[str, Any] = template.get("Resources", {})
        self._resolving: set[str] = set()

    # -- public --------------------------------------------------------------------------------

    def resolve(self, node: Any) -> Any:
        """``node`` with every intrinsic function replaced by its value."""
        if isinstance(node, list):
            items = [self.resolve(item) for item in node]
            return [item for item in items if item is not _NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, arg),) = node.items()
            if key == "Ref":
                return self.ref(arg)
            if key == "Condition" and isinstance(arg, str):
                return self.condition(arg)
            if key.startswith("Fn::"):
                return self._function(key, arg)
        out = {key: self.resolve(value) for key, value in node.items()}
        return {key: value for key, value in out.items() if value is not _NO_VALUE}

    def ref(self, name: str) -> Any:
        """``{"Ref": name}``: pseudo parameter, template parameter or resource."""
        if name in _PSEUDO:
            return _PSEUDO[name](self)
        if name in self.parameters:
            return self.parameters[name]
        if name in self.template.get("Parameters", {}):
            return self._parameter_default(name)
        shape, _ = self._shape(name)
        if shape.ref == "name":
            return self.physical_name(name)
        if shape.ref == "arn":
            return self._arn(name)
        return self.get_att(name, shape.ref)

    def get_att(self, logical_id: str, attribute: str) -> Any:
        """``{"Fn::GetAtt": [logical_id, attribute]}``."""
        shape, resource = self._shape(logical_id)
        if attribute not in shape.attributes:
            raise TemplateError(
                f"Fn::GetAtt {logical_id}.{attribute}: attribute unknown to the resolver for "
                f"{resource['Type']} (known: {', '.join(shape.attributes) or 'none'})"
            )
        name = self.physical_name(logical_id)
        return shape.attributes[attribute](self, name, self._props(logical_id))

    def physical_name(self, logical_id: str) -> str:
        """The resource's name: its name property, or a generated one of CloudFormation's shape."""
        shape, resource = self._shape(logical_id)
        props = resource.get("Properties", {})
        if shape.name_property and shape.name_property in props:
            return str(self._guarded(logical_id, lambda: self.resolve(props[shape.name_property])))
        if resource["Type"] == "AWS::KMS::Key":
            return _key_id(self, logical_id)
        suffix = _suffix(self.stack_name, logical_id)
        if resource["Type"].startswith("AWS::IAM::"):
            return f"{self.stack_name}-{logical_id}"[:51] + f"-{suffix}"
        if resource["Type"] == "AWS::S3::Bucket":
            return (f"{self.stack_name}-{logical_id}"[:50] + f"-{suffix}").lower()
        return f"{logical_id}-{suffix}"

    def condition(self, name: str) -> bool:
        """The value of the template condition ``name``."""
        conditions = self.template.get("Conditions", {})
        if name not in conditions:
            raise TemplateError(f"unknown condition {name!r}")
        return bool(self.resolve(conditions[name]))

    def resource(self, logical_id: str) -> dict[str, Any]:
        """The resource's properties, resolved."""
        return dict(self.resolve(self._props(logical_id)))

    def logical_ids(self, resource_type: str, **properties: Any) -> list[str]:
        """Logical ids of the resources of ``resource_type`` whose resolved properties match."""
        found = []
        for logical_id, resource in self._resources.items():
            if resource.get("Type") != resource_type:
                continue
            props = self.resource(logical_id) if properties else {}
            if all(props.get(key) == value for key, value in properties.items()):
                found.append(logical_id)
        return found

    # -- internals -----------------------------------------------------------------------------

    def _shape(self, logical_id: str) -> tuple[_Shape, Mapping[str, Any]]:
        resource = self._resources.get(logical_id)
        if resource is None:
            raise TemplateError(f"Ref to {logical_id!r}: no such resource, parameter or pseudo")
        shape = SHAPES.get(resource["Type"])
        if shape is None:
            raise TemplateError(
                f"{logical_id}: resource type {resource['Type']} is unknown to the resolver; "
                "add its name and ARN shape to SHAPES"
            )
        return shape, resource

    def _props(self, logical_id: str) -> Mapping[str, Any]:
        return self._resources[logical_id].get("Properties", {})

    def _arn(self, logical_id: str) -> str:
        shape, resource = self._shape(logical_id)
        arn = shape.arn
        if arn is None:
            raise TemplateError(f"{logical_id}: {resource['Type']} has no ARN in the resolver")
        name = self.physical_name(logical_id)
        return str(self._guarded(logical_id, lambda: arn(self, name, self._props(logical_id))))

    def _guarded(self, logical_id: str, compute: Callable[[], Any]) -> Any:
        if logical_id in self._resolving:
            raise TemplateError(f"{logical_id}: circular reference while resolving it")
        self._resolving.add(logical_id)
        try:
            return compute()
        finally:
            self._resolving.discard(logical_id)

    def _parameter_default(self, name: str) -> Any:
        parameter = self.template["Parameters"][name]
        if "Default" not in parameter or parameter.get("Type", "").startswith("AWS::SSM::"):
            raise TemplateError(f"parameter {name!r} has no usable default; pass parameters=")
        return parameter["Default"]

    def _function(self, key: str, arg: Any) -> Any:
        handler = _FUNCTIONS.get(key)
        if handler is None:
            raise TemplateError(f"intrinsic {key} is not supported by the resolver")
        return handler(self, arg)


def _get_att(r: TemplateResolver, arg: Any) -> Any:
    logical_id, attribute = arg.split(".", 1) if isinstance(arg, str) else arg
    return r.get_att(logical_id, r.resolve(attribute))


def _join(r: TemplateResolver, arg: Any) -> str:
    delimiter, items = arg
    values = r.resolve(items)
    if not all(isinstance(v, str | int) for v in values):
        raise TemplateError(f"Fn::Join of non-text values: {values!r}")
    return str(delimiter).join(str(v) for v in values)


def _sub(r: TemplateResolver, arg: Any) -> str:
    text, variables = (arg, {}) if isinstance(arg, str) else arg
    values = {key: r.resolve(value) for key, value in variables.items()}
    out, rest = "", text
    while "${" in rest:
        head, _, tail = rest.partition("${")
        name, closed, rest = tail.partition("}")
        if not closed:
            raise TemplateError(f"Fn::Sub: unclosed '${{' in {text!r}")
        out += head
        if name.startswith("!"):
            out += "${" + name[1:] + "}"
        elif name in values:
            out += str(values[name])
        elif "." in name and name.split(".", 1)[0] in r._resources:
            out += str(r.get_att(*name.split(".", 1)))
        else:
            out += str(r.ref(name))
    return out + rest


def _select(r: TemplateResolver, arg: Any) -> Any:
    index, items = arg
    values = r.resolve(items)
    return values[int(r.resolve(index))]


def _split(r: TemplateResolver, arg: Any) -> list[str]:
    delimiter, text = arg
    return str(r.resolve(text)).split(delimiter)


def _if(r: TemplateResolver, arg: Any) -> Any:
    name, when_true, when_false = arg
    return r.resolve(when_true if r.condition(name) else when_false)


def _find_in_map(r: TemplateResolver, arg: Any) -> Any:
    name, first, second = (r.resolve(a) for a in arg[:3])
    try:
        return r.resolve(r.template["Mappings"][name][first][second])
    except KeyError as exc:
        raise TemplateError(f"Fn::FindInMap {name}/{first}/{second}: no such entry") from exc


def _equals(r: TemplateResolver, arg: Any) -> bool:
    left, right = (r.resolve(a) for a in arg)
    return bool(left == right)


_FUNCTIONS: dict[str, Callable[[TemplateResolver, Any], Any]] = {
    "Fn::GetAtt": _get_att,
    "Fn::Join": _join,
    "Fn::Sub": _sub,
    "Fn::Select": _select,
    "Fn::Split": _split,
    "Fn::If": _if,
    "Fn::FindInMap": _find_in_map,
    "Fn::Equals": _equals,
    "Fn::Not": lambda r, arg: not r.resolve(arg[0]),
    "Fn::And": lambda r, arg: all(r.resolve(a) for a in arg),
    "Fn::Or": lambda r, arg: any(r.resolve(a) for a in arg),
    "Fn::Base64": lambda r, arg: base64.b64encode(str(r.resolve(arg)).encode()).decode(),
    "Fn::ToJsonString": lambda r, arg: json.dumps(r.resolve(arg), separators=(",", ":")),
    "Fn::Length": lambda r, arg: len(r.resolve(arg)),
}
"""Supported intrinsics; any other (Fn::ImportValue, Fn::GetAZs, ...) raises TemplateError."""


# --- 2. the policies of a role ----------------------------------------------------------------


@dataclass(frozen=True)
class NamedPolicy:
    """A policy document (resolved) and the name iam-simulate reports it under."""

    name: str
    document: Mapping[str, Any]


class Decision(StrEnum):
    """iam-simulate's decision for a request."""

    ALLOWED = "Allowed"
    IMPLICITLY_DENIED = "ImplicitlyDenied"
    EXPLICITLY_DENIED = "ExplicitlyDenied"


@dataclass(frozen=True)
class Request:
    """One API call: the action, every resource it authorises on, and the request's context.

    A call that authorises on several resources (``SubmitServiceJob``: job queue, quota share,
    service job) is allowed only if each of them is. Context values: text, whole numbers (sent
    as text) or lists of text; keys as AWS writes them (``aws:RequestTag/<key>``,
    ``aws:ResourceTag/<key>``, ``aws:TagKeys``, ``batch:SchedulingPriority``,
    ``iam:PassedToService``).
    """

    action: str
    resources: str | Sequence[str]
    context: Mapping[str, str | int | Sequence[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        resources = (self.resources,) if isinstance(self.resources, str) else self.resources
        object.__setattr__(self, "resources", tuple(resources))
        if not self.resources:
            raise ValueError(f"{self.action}: a request needs at least one resource")

    def wire_context(self) -> dict[str, str | list[str]]:
        out: dict[str, str | list[str]] = {}
        for key, value in self.context.items():
            if isinstance(value, bool):
                raise ValueError(f"context key {key}: write 'true' or 'false' as text")
            out[key] = str(value) if isinstance(value, str | int) else [str(v) for v in value]
        return out


@dataclass(frozen=True)
class Principal:
    """A principal under test: its ARN, identity policies and permissions boundary."""

    arn: str
    policies: tuple[NamedPolicy, ...]
    boundaries: tuple[NamedPolicy, ...] = ()

    def evaluate(
        self, requests: Sequence[Request], *, resource_policy: Mapping[str, Any] | None = None
    ) -> list[Decision]:
        """Decisions for ``requests``, in order, from one Node process."""
        return evaluate(
            self.arn,
            self.policies,
            requests,
            resource_policy=resource_policy,
            boundaries=self.boundaries,
        )

    def decide(
        self,
        action: str,
        resources: str | Sequence[str],
        context: Mapping[str, str | int | Sequence[str]] | None = None,
    ) -> Decision:
        """The decision for one request (a Node process per call: batch with ``evaluate``)."""
        (decision,) = self.evaluate([Request(action, resources, context or {})])
        return decision


def role_principal(template: Mapping[str, Any] | TemplateResolver, role: str) -> Principal:
    """The role with logical id ``role`` and every identity policy the template attaches to it.

    Inline ``Policies``; ``AWS::IAM::Policy`` and ``AWS::IAM::ManagedPolicy`` resources whose
    ``Roles`` name it; ``ManagedPolicyArns`` and ``PermissionsBoundary`` naming managed policies
    of the template. An AWS managed or foreign policy ARN raises :class:`TemplateError`: its
    content is not in the template.
    """
    r = template if isinstance(template, TemplateResolver) else TemplateResolver(template)
    if r.template.get("Resources", {}).get(role, {}).get("Type") != "AWS::IAM::Role":
        raise TemplateError(f"{role!r} is not an AWS::IAM::Role of the template")
    props = r.resource(role)
    name, arn = r.ref(role), r.get_att(role, "Arn")
    policies = [
        NamedPolicy(f"{role}/{p['PolicyName']}", p["PolicyDocument"])
        for p in props.get("Policies", [])
    ]
    managed = _managed_policies(r)
    for logical_id in r.logical_ids("AWS::IAM::Policy"):
        policy = r.resource(logical_id)
        if name in policy.get("Roles", []):
            policies.append(NamedPolicy(logical_id, policy["PolicyDocument"]))
    for policy_arn, (logical_id, policy) in managed.items():
        attached = name in policy.get("Roles", []) or policy_arn in props.get(
            "ManagedPolicyArns", []
        )
        if attached:
            policies.append(NamedPolicy(logical_id, policy["PolicyDocument"]))
    for policy_arn in props.get("ManagedPolicyArns", []):
        if policy_arn not in managed:
            raise TemplateError(f"{role}: managed policy {policy_arn} is not in the template")
    boundaries = []
    if "PermissionsBoundary" in props:
        boundary = props["PermissionsBoundary"]
        if boundary not in managed:
            raise TemplateError(f"{role}: permissions boundary {boundary} is not in the template")
        logical_id, policy = managed[boundary]
        boundaries.append(NamedPolicy(logical_id, policy["PolicyDocument"]))
    return Principal(arn, tuple(policies), tuple(boundaries))


def _managed_policies(r: TemplateResolver) -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        r.ref(logical_id): (logical_id, r.resource(logical_id))
        for logical_id in r.logical_ids("AWS::IAM::ManagedPolicy")
    }


# --- 3. decisions -----------------------------------------------------------------------------


def evaluate(
    principal: str,
    policies: Sequence[NamedPolicy],
    requests: Sequence[Request],
    *,
    resource_policy: Mapping[str, Any] | None = None,
    boundaries: Sequence[NamedPolicy] = (),
) -> list[Decision]:
    """Decide each request made by ``principal`` holding ``policies``; one Node process.

    Raises :class:`SimulatorError` when iam-simulate refuses a policy or request (unknown action,
    a resource of no type the action takes, a wildcard-only action on a specific resource) or
    when a context key applies to none of a request's resources (a typo would otherwise make a
    test pass for the wrong reason).
    """
    batch = _batch(principal, policies, requests, resource_policy, boundaries)
    return _decisions(requests, _run_driver(batch))


@dataclass(frozen=True)
class Batch:
    """Requests of one principal, with the resource policy of their resources (if any)."""

    principal: Principal
    requests: Sequence[Request]
    resource_policy: Mapping[str, Any] | None = None


def evaluate_many(batches: Sequence[Batch]) -> list[list[Decision]]:
    """:meth:`Principal.evaluate` of several batches in one Node process, in order."""
    wire = [
        _batch(
            b.principal.arn,
            b.principal.policies,
            b.requests,
            b.resource_policy,
            b.principal.boundaries,
        )
        for b in batches
    ]
    answers = _run_driver({"batches": wire}, expected=[len(b["requests"]) for b in wire])
    return [_decisions(b.requests, results) for b, results in zip(batches, answers, strict=True)]


def _batch(
    principal: str,
    policies: Sequence[NamedPolicy],
    requests: Sequence[Request],
    resource_policy: Mapping[str, Any] | None,
    boundaries: Sequence[NamedPolicy],
) -> dict[str, Any]:
    wire = [
        {
            "action": request.action,
            "resource": resource,
            "accountId": _account_of(resource),
            "context": request.wire_context(),
        }
        for request in requests
        for resource in request.resources
    ]
    batch: dict[str, Any] = {
        "principal": principal,
        "identityPolicies": [{"name": p.name, "policy": p.document} for p in policies],
        "requests": wire,
    }
    if resource_policy is not None:
        batch["resourcePolicy"] = resource_policy
    if boundaries:
        batch["permissionBoundaryPolicies"] = [
            {"name": p.name, "policy": p.document} for p in boundaries
        ]
    return batch


def _decisions(requests: Sequence[Request], answers: Sequence[Any]) -> list[Decision]:
    results = iter(answers)
    return [_combine(request, [next(results) for _ in request.resources]) for request in requests]


def _account_of(resource: str) -> str:
    parts = resource.split(":")
    return parts[4] if len(parts) > 5 and parts[4] else ACCOUNT


def _combine(request: Request, results: list[dict[str, Any]]) -> Decision:
    for resource, result in zip(request.resources, results, strict=True):
        if "error" in result:
            raise SimulatorError(
                f"iam-simulate refused {request.action} on {resource}: {result['error']} "
                f"{json.dumps(result.get('details'))}"
            )
    ignored = set(request.context)
    for result in results:
        ignored &= set(result["ignoredContextKeys"])
    if ignored:
        raise SimulatorError(
            f"{request.action}: context keys {sorted(ignored)} apply to none of "
            f"{list(request.resources)}; check their spelling and the action's condition keys"
        )
    decisions = {Decision(result["decision"]) for result in results}
    if Decision.EXPLICITLY_DENIED in decisions:
        return Decision.EXPLICITLY_DENIED
    if decisions == {Decision.ALLOWED}:
        return Decision.ALLOWED
    return Decision.IMPLICITLY_DENIED


def _run_driver(batch: Mapping[str, Any], expected: Sequence[int] | None = None) -> list[Any]:
    node = shutil.which("node")
    if node is None:
        raise SimulatorError("node is not on PATH; the IAM harness needs Node.js (make setup)")
    if not PACKAGE.exists():
        raise SimulatorError(
            f"{PACKAGE.parent} is missing; run `make setup` (npm ci installs iam-simulate)"
        )
    done = subprocess.run(
        [node, str(DRIVER)],
        input=json.dumps(batch),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise SimulatorError(f"simulate.mjs failed ({done.returncode}): {done.stderr.strip()}")
    results: list[Any] = json.loads(done.stdout)
    counts = [len(batch["requests"])] if expected is None else list(expected)
    answered = [len(results)] if expected is None else [len(r) for r in results]
    if answered != counts:
        raise SimulatorError("simulate.mjs answered a different number of requests")
    return results
