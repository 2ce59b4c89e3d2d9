"""A team-profile, organisation or pipeline file given where another kind is expected: one line
naming what the file is and the command that takes it (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.config import FileKind, file_kind
from quota_constructs.safe_load import load_yaml

ORG = "stacks/orgs/research.yaml"
TEAMS = "stacks/teams/research.yaml"
PIPELINE = "stacks/pipeline.example.yaml"


@pytest.mark.parametrize(
    ("path", "kind"),
    [(ORG, FileKind.ORGANISATION), (TEAMS, FileKind.TEAM_PROFILES), (PIPELINE, FileKind.PIPELINE)],
)
def test_each_kind_of_file_is_told_apart(path: str, kind: FileKind) -> None:
    assert file_kind(load_yaml(path)) is kind


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["local", "serve", "--org", TEAMS, "--port", "0"],
            f"this is a team-profile file, not an organisation file (got 'teams'); fix: run "
            f"quota recommend {TEAMS} --output ORG.yaml on it",
        ),
        (["org", "validate", TEAMS], "this is a team-profile file, not an organisation file"),
        (["simulate", TEAMS, "--days", "1"], f"quota recommend {TEAMS} --output ORG.yaml"),
        (
            ["recommend", ORG],
            "this is an organisation file, not a team-profile file (got 'shares'); fix: give "
            "it to quota org validate, quota local serve --org, quota simulate or cdk synth",
        ),
        (
            ["org", "validate", PIPELINE],
            f"this is a pipeline file, not an organisation file (got 'environments'); fix: "
            f"give it to cdk synth -c pipeline_file={PIPELINE}",
        ),
        (["recommend", PIPELINE], "this is a pipeline file, not a team-profile file"),
    ],
    ids=lambda value: " ".join(value[:2]) if isinstance(value, list) else None,
)
def test_a_file_of_another_kind_is_named_in_one_line(args: list[str], says: str) -> None:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert result.exit_code == 2, result.stderr
    assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr
    assert "did you mean" not in result.stderr


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (
            ["org", "validate"],
            "<root>: an organisation file is a mapping (got 'list'); fix: start with "
            "'organisation: <name>' and 'shares:'",
        ),
        (
            ["recommend"],
            "<root>: a team-profile file is a mapping (got 'list'); fix: start with "
            "'organisation: <name>' and 'teams:'",
        ),
    ],
)
def test_a_file_that_is_not_a_mapping_says_how_each_kind_starts(
    tmp_path: Path, command: list[str], says: str
) -> None:
    listing = tmp_path / "list.yaml"
    listing.write_text("- shares\n- teams\n")
    result = CliRunner().invoke(app, [*command, str(listing)])
    assert result.exit_code == 2
    assert says in " ".join(result.output.split())
