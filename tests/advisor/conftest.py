"""Fixtures for advisor tests: team-profile files written to a temporary directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from quota_constructs.safe_load import dump_yaml


@pytest.fixture
def write_teams(tmp_path: Path) -> Callable[..., Path]:
    """Write a team-profile file from ``teams`` (list of dicts); returns its path."""

    def write(teams: list[dict], organisation: str = "lab", name: str = "teams.yaml") -> Path:
        path = tmp_path / name
        path.write_text(dump_yaml({"organisation": organisation, "teams": teams}))
        return path

    return write
