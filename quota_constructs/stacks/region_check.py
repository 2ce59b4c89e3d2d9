"""Refuse a stack whose region lacks a CloudFormation resource type it creates.

The rule and the table are the model's (:func:`quota_constructs.model.regions.region_problems`,
from cfn-lint's region schemas). A stack with a concrete region is judged at synth. An
environment-agnostic stack (region a token, as a laptop ``cdk deploy`` builds the organisation
stacks) gets the same rule as a CloudFormation ``Rules`` entry, judged at deploy time in
whatever region it is deployed to, before any resource is created.
"""

from __future__ import annotations

import aws_cdk as cdk

from quota_constructs.model import QuotaConfigError
from quota_constructs.model.regions import (
    known_regions,
    region_problems,
    regions_refused,
    regions_with_all,
)

REGION_RULE_ID = "RegionHasResourceTypes"
"""Logical id of the deploy-time region rule of an environment-agnostic stack."""
REGION_PATH = "AWS::Region"
"""How the rule's assertions name what they judge (the stack's pseudo parameter)."""


def resource_types(stack: cdk.Stack) -> set[str]:
    """The CloudFormation types of the resources ``stack`` itself holds (not nested stages)."""
    return {
        construct.cfn_resource_type
        for construct in stack.node.find_all()
        if isinstance(construct, cdk.CfnResource) and cdk.Stack.of(construct) is stack
    }


def refuse_unsupported_region(stack: cdk.Stack) -> None:
    """:class:`QuotaConfigError` (one line: region, missing types, the regions that have them)
    if the stack's concrete region lacks a type it creates; without a concrete region, the
    deploy-time rule of :func:`add_region_rule`. Call it once every resource is added."""
    if cdk.Token.is_unresolved(stack.region):
        add_region_rule(stack)
        return
    problems = region_problems(stack.region, resource_types(stack), "region")
    if problems:
        raise QuotaConfigError(problems, context=f"stack {stack.stack_name}")


def add_region_rule(stack: cdk.Stack) -> cdk.CfnRule:
    """A ``Rules`` entry failing the deploy in a region without a type ``stack`` creates.

    One assertion per region cfn-lint knows without one (``Fn::Not`` of ``Fn::Equals`` on
    ``AWS::Region``), whose description is the synth-time refusal naming that region, and one
    that the region is known at all (``Fn::Contains``), as the synth-time check refuses regions
    cfn-lint's schemas do not list."""
    types = resource_types(stack)
    region = cdk.Aws.REGION
    assertions = [
        cdk.CfnRuleAssertion(
            assert_=cdk.Fn.condition_not(cdk.Fn.condition_equals(region, name)),
            assert_description=str(problem),
        )
        for name, problem in regions_refused(types, REGION_PATH).items()
    ]
    unknown = (
        f"{REGION_PATH}: not a region cfn-lint's region schemas know; fix: deploy to a region "
        f"that has every resource type this stack creates: {regions_with_all(types)}"
    )
    assertions.append(
        cdk.CfnRuleAssertion(
            assert_=cdk.Fn.condition_contains(sorted(known_regions()), region),
            assert_description=unknown,
        )
    )
    return cdk.CfnRule(stack, REGION_RULE_ID, assertions=assertions)
