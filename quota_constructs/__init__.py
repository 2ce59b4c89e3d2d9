"""Declarative GPU quota sharing for SageMaker training on AWS Batch.

The domain model is imported eagerly (pure Python). The config loader (pydantic) and the CDK
constructs are re-exported lazily, so ``import quota_constructs.runtime`` or the emulator never
imports ``aws_cdk``, and a command that reads no organisation file does not import pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from quota_constructs._version import __version__
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

if TYPE_CHECKING:
    from quota_constructs.config import load_organisation, load_organisations, parse_organisation

# name -> module holding it; resolved on first attribute access (PEP 562).
_CONSTRUCTS = "quota_constructs.constructs"
_STACKS = "quota_constructs.stacks"
_CONFIG = "quota_constructs.config"
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
_CONFIG_NAMES = ("load_organisation", "load_organisations", "parse_organisation")


def __getattr__(name: str) -> Any:
    module = _CONFIG if name in _CONFIG_NAMES else _LAZY.get(name)
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
