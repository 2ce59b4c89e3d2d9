"""The organisation stack, the app builder and the pipeline stack (import ``aws_cdk``).

``OrganisationStack`` turns one organisation (an organisation file, loaded) into a stack;
``build_app`` adds one per file of a folder to a ``cdk.App``; ``PipelineStack`` deploys them
through CDK Pipelines. All three are re-exported by ``quota_constructs``.
"""

from quota_constructs.stacks.organisation_app import build_app, organisation_files
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from quota_constructs.stacks.pipeline_stack import PipelineStack

__all__ = [
    "OrganisationStack",
    "PipelineStack",
    "build_app",
    "organisation_files",
    "stack_name_for",
]
