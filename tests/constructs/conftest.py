"""Fixtures for construct tests: a fresh stack per test (a new App is cheap)."""

from __future__ import annotations

import aws_cdk as cdk
import pytest

from tests.constructs.helpers import make_stack


@pytest.fixture
def stack() -> cdk.Stack:
    return make_stack()
