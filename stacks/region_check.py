"""Refuse a stack whose region lacks a CloudFormation resource type it creates.

The rule and the table are the model's (:func:`quota_constructs.model.regions.region_problems`,
from cfn-lint's region schemas); an environment-agnostic stack (region a token) is not judged.
"""

from __future__ import annotations

import aws_cdk as cdk

from quota_constructs.model import QuotaConfigError
from quota_constructs.model.regions import region_problems


def resource_types(stack: cdk.Stack) -> set[str]:
    """The CloudFormation types of the resources ``stack`` itself holds (not nested stages)."""
    return {
        construct.cfn_resource_type
        for construct in stack.node.find_all()
        if isinstance(construct, cdk.CfnResource) and cdk.Stack.of(construct) is stack
    }


def refuse_unsupported_region(stack: cdk.Stack) -> None:
    """:class:`QuotaConfigError` (one line: region, missing types, the regions that have them)
    if the stack's concrete region lacks a type it creates."""
    if cdk.Token.is_unresolved(stack.region):
        return
    problems = region_problems(stack.region, resource_types(stack), "region")
    if problems:
        raise QuotaConfigError(problems, context=f"stack {stack.stack_name}")
