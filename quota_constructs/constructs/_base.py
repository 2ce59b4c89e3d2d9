"""Owns the constructs' shared plumbing: model problems -> errors naming the construct path."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any, TypeVar

import aws_cdk as cdk
from constructs import Construct

from quota_constructs.model import Problem, QuotaConfigError, check_tags, enum_member

WARNING_PREFIX = "quota-constructs"
"""Prefix of every warning id these constructs emit (``Annotations.add_warning_v2``)."""


def is_unresolved(value: object) -> bool:
    """``cdk.Token.is_unresolved`` for a string or a number; no other value is a token here."""
    return isinstance(value, str | int | float) and cdk.Token.is_unresolved(value)


def _unresolved(value: Any) -> bool:
    if isinstance(value, Mapping):
        return any(_unresolved(k) or _unresolved(v) for k, v in value.items())
    return is_unresolved(value)


def resolved_only(problems: Iterable[Problem]) -> list[Problem]:
    """Drop problems about unresolved tokens: their values are only known at deploy time."""
    return [p for p in problems if not _unresolved(p.value)]


def raise_construct_error(
    scope: Construct, problems: Iterable[Problem], *, renames: Mapping[str, str] | None = None
) -> None:
    """Raise one :class:`QuotaConfigError` naming ``scope``'s path when ``problems`` is not empty.

    Problems about unresolved tokens are dropped. ``renames`` maps the model's field names
    (first path segment) to the construct's prop names.
    """
    found = resolved_only(problems)
    if found:
        renamed = [_renamed(problem, renames or {}) for problem in found]
        raise QuotaConfigError(renamed, context=scope.node.path)


Member = TypeVar("Member", bound=Enum)


def enum_prop(
    scope: Construct, kind: type[Member], value: object, prop: str, *, what: str
) -> Member:
    """A prop of an enum type given as a member or as a string in any case (``"lend"``), as
    CloudFormation takes it; anything else is a :class:`QuotaConfigError` naming ``scope``'s
    path, ``prop``, the value and every valid value."""
    try:
        return enum_member(kind, value, prop, what=what, any_case=True)
    except QuotaConfigError as error:
        raise QuotaConfigError(error.problems, context=scope.node.path) from None


def _renamed(problem: Problem, renames: Mapping[str, str]) -> Problem:
    head, sep, rest = problem.path.partition(".")
    bracket = head.find("[")
    key = head if bracket < 0 else head[:bracket]
    if key in renames:
        head = renames[key] + head[len(key) :]
    return Problem(head + sep + rest, problem.value, problem.message, problem.fix)


def warn(scope: Construct, warning_id: str, message: str) -> None:
    """Advice that is not an error; acknowledge with ``Annotations.of(x).acknowledge_warning``."""
    cdk.Annotations.of(scope).add_warning_v2(f"{WARNING_PREFIX}:{warning_id}", message)


def apply_tags(scope: Construct, tags: Mapping[str, str] | None) -> None:
    """Tag every taggable resource below ``scope`` (checked by the model's tag rules)."""
    if not tags:
        return
    raise_construct_error(scope, check_tags(tags))
    for key, value in tags.items():
        cdk.Tags.of(scope).add(key, value)


def check_arn(
    scope: Construct, arn: str, *, resource: str, prop: str, sub_resource: str | None = None
) -> None:
    """Reject a literal ARN that is not a Batch ARN of the ``resource`` type (tokens pass).

    ``sub_resource`` (e.g. ``quota-share``) requires ``<resource>/NAME/<sub_resource>/NAME``.
    """
    if is_unresolved(arn):
        return
    parts = arn.split(":", 5)
    path = parts[5].split("/") if len(parts) == 6 else []
    expected = 2 if sub_resource is None else 4
    ok = (
        parts[0] == "arn"
        and len(path) == expected
        and parts[2] == "batch"
        and path[0] == resource
        and (sub_resource is None or path[2] == sub_resource)
        and all(path[1::2])
    )
    if not ok:
        what = sub_resource or resource
        suffix = f"{resource}/NAME" + (f"/{sub_resource}/NAME" if sub_resource else "")
        example = f"arn:aws:batch:us-east-1:123456789012:{suffix}"
        raise QuotaConfigError(
            [Problem(prop, arn, f"not an AWS Batch {what} ARN", f"pass an ARN like {example}")],
            context=scope.node.path,
        )


def nag_resource_label(scope: Construct, value: str) -> str:
    """How cdk-nag names ``value`` (an ARN, maybe with tokens) in an ``AwsSolutions-IAM5`` id.

    ``Ref`` becomes ``<Name>``, ``Fn::GetAtt`` ``<LogicalId.Attribute>``, ``Fn::Join`` the
    joined parts: ``arn:<AWS::Partition>:batch:<AWS::Region>:<AWS::AccountId>:service-job/*``.
    """
    return _nag_render(cdk.Stack.of(scope).resolve(value))


def _nag_render(node: Any) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, Mapping) and len(node) == 1:
        ((key, arg),) = node.items()
        if key == "Ref":
            return f"<{arg}>"
        if key == "Fn::GetAtt":
            return f"<{arg[0]}.{arg[1]}>"
        if key == "Fn::Join":
            return str(arg[0]).join(_nag_render(part) for part in arg[1])
    raise ValueError(f"no cdk-nag label for {node!r}")


def acknowledge_wildcards(policy: Construct, reasons: Mapping[str, str]) -> None:
    """Acknowledge cdk-nag's ``AwsSolutions-IAM5`` for each wildcard resource, with its reason.

    ``reasons``: resource (as granted, tokens allowed) -> why no narrower resource exists.
    ``policy`` is the policy's L1 (the narrowest construct the finding names).
    """
    cdk.Validations.of(policy).acknowledge(
        *(
            cdk.Acknowledgment(
                id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{nag_resource_label(policy, arn)}]",
                reason=reason,
            )
            for arn, reason in reasons.items()
        )
    )
