"""Declarative GPU quota sharing for SageMaker training on AWS Batch.

The domain model and config loader are imported eagerly (they are pure Python). The CDK
constructs are re-exported lazily, so ``import quota_constructs.runtime`` or the emulator never
imports ``aws_cdk``.
"""

from __future__ import annotations

import importlib
from typing import Any

from quota_constructs._version import __version__
from quota_constructs.config import load_organisation, load_organisations, parse_organisation
from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    Problem,
    QuotaConfigError,
    QuotaShareSpec,
    ShareState,
    SharingStrategy,
    TeamAccess,
)

# name -> module holding it; resolved on first attribute access (PEP 562).
_CONSTRUCTS = "quota_constructs.constructs"
_STACKS = "quota_constructs.stacks"
_LAZY: dict[str, str] = {
    "IQuotaManagedJobQueue": _CONSTRUCTS,
    "IQuotaShare": _CONSTRUCTS,
    "IdleResourceAssignmentStrategy": _CONSTRUCTS,
    "OrganisationDashboard": _CONSTRUCTS,
    "QueueNotifications": _CONSTRUCTS,
    "QuotaManagedJobQueue": _CONSTRUCTS,
    "QuotaManagedTrainingQueue": _CONSTRUCTS,
    "QuotaShare": _CONSTRUCTS,
    "QuotaShareCalendar": _CONSTRUCTS,
    "QuotaShareSchedulingPolicy": _CONSTRUCTS,
    "QuotaShareTeamAccess": _CONSTRUCTS,
    "SageMakerTrainingServiceEnvironment": _CONSTRUCTS,
    "access_log_bucket": _CONSTRUCTS,
    "grants": _CONSTRUCTS,
    "OrganisationStack": _STACKS,
    "PipelineStack": _STACKS,
    "build_app": _STACKS,
    "stack_name_for": _STACKS,
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'quota_constructs' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "JobQueueSpec",
    "Organisation",
    "Problem",
    "QuotaConfigError",
    "QuotaShareSpec",
    "ShareState",
    "SharingStrategy",
    "TeamAccess",
    "__version__",
    "load_organisation",
    "load_organisations",
    "parse_organisation",
    *_LAZY,
]
