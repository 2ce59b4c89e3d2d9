"""Owns the emulator's operation handlers: one per Batch or SSM operation, by operation name.

A handler reads the validated camelCase parameters of one request, calls typed methods of the
state (:mod:`..state.registry`, :mod:`..state.job_service`, :mod:`..state.parameter_store`,
:mod:`..state.tags`) and renders the response from the records they return. Refusals are
:mod:`..state.errors`; the wire layer maps them to AWS error codes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Handler = Callable[[Mapping[str, Any]], dict[str, Any]]
"""One operation: validated request parameters -> response in the output shape."""
