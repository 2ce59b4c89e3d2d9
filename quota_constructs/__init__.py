"""Declarative GPU quota sharing for SageMaker training on AWS Batch.

The domain model and config loader are imported eagerly (they are pure Python). The CDK
constructs are re-exported lazily, so ``import quota_constructs.runtime`` or the emulator never
imports ``aws_cdk``.
"""

from __future__ import annotations

import importlib
from typing import Any

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
_LAZY: dict[str, str] = {
    "IdleResourceAssignmentStrategy": "quota_constructs.constructs",
    "QuotaManagedJobQueue": "quota_constructs.constructs",
    "QuotaManagedTrainingQueue": "quota_constructs.constructs",
    "QuotaShare": "quota_constructs.constructs",
    "QuotaShareSchedulingPolicy": "quota_constructs.constructs",
    "QuotaShareTeamAccess": "quota_constructs.constructs",
    "SageMakerTrainingServiceEnvironment": "quota_constructs.constructs",
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
    "load_organisation",
    "load_organisations",
    "parse_organisation",
    *_LAZY,
]
