"""The ``access`` block in organisation files: loading, every problem at once, CLI and schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.config import (
    OrganisationFile,
    OrgFileError,
    json_schema,
    load_organisation,
    load_organisations,
    parse_organisation,
)
from quota_constructs.model import TeamAccess, training_job_prefix

GOOD = """\
organisation: research
shares:
  - name: generative
    capacity: {ml.g5.xlarge: 4}
    strategy: LEND_AND_BORROW
    access:
      principals: ["arn:aws:iam::111122223333:role/GenerativeTeam", "444455556666"]
      max_priority: 50
      execution_role: create
      bucket: create
  - name: recommendation
    capacity: {ml.g5.xlarge: 2}
    strategy: RESERVE
    access:
      principals: ["arn:aws:iam::111122223333:role/RecommendationTeam"]
      execution_role: arn:aws:iam::123456789012:role/service-role/RecommendationExecution
      bucket: research-data/recommendation
  - name: data-analysis
    capacity: {ml.g5.xlarge: 2}
    strategy: LEND
"""

BAD = """\
organisation: research
shares:
  - name: generative
    capacity: {ml.g5.xlarge: 4}
    strategy: LEND
    access:
      principals: ["GenerativeTeam"]
      max_priority: 10000
      execution_role: arn:aws:iam::123456789012:role/Shared
      bucket: /team-a
  - name: recommendation
    capacity: {ml.g5.xlarge: 2}
    strategy: RESERVE
    access:
      principals: ["arn:aws:iam::111122223333:role/RecommendationTeam"]
      execution_role: arn:aws:iam::123456789012:role/Shared
"""


def write(tmp_path: Path, text: str, name: str = "org.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(path: Path) -> dict[str, str]:
    with pytest.raises(OrgFileError) as info:
        load_organisation(path)
    return {p.path: p.message for p in info.value.problems}


def test_a_good_file_loads_its_access_blocks(tmp_path: Path) -> None:
    org = load_organisation(write(tmp_path, GOOD))
    generative, recommendation, analysis = org.queue.shares
    assert generative.access == TeamAccess(
        principals=("arn:aws:iam::111122223333:role/GenerativeTeam", "444455556666"),
        max_priority=50,
    )
    assert recommendation.access is not None
    assert recommendation.access.max_priority is None
    assert recommendation.access.bucket == "research-data/recommendation"
    assert analysis.access is None


def test_execution_role_and_bucket_default_to_create(tmp_path: Path) -> None:
    text = GOOD.replace("      execution_role: create\n      bucket: create\n", "")
    access = load_organisation(write(tmp_path, text)).queue.shares[0].access
    assert access is not None and access.creates_execution_role and access.creates_bucket


def test_round_trip_through_yaml_keeps_the_access_blocks(tmp_path: Path) -> None:
    org = load_organisation(write(tmp_path, GOOD))
    text = OrganisationFile.from_organisation(org).to_yaml()
    assert parse_organisation(yaml.safe_load(text)) == org


def test_rejects_every_bad_combination_at_once(tmp_path: Path) -> None:
    problems = problems_of(write(tmp_path, BAD))
    assert set(problems) == {
        "shares[0].access.principals[0]",
        "shares[0].access.max_priority",
        "shares[0].access.bucket",
        "shares[1].access.execution_role",
    }
    assert "12-digit account id" in problems["shares[0].access.principals[0]"]
    assert "between 0 and 9999" in problems["shares[0].access.max_priority"]
    assert "a prefix needs the name of an existing bucket" in problems["shares[0].access.bucket"]
    assert "same execution role" in problems["shares[1].access.execution_role"]


def test_rejects_an_access_block_without_principals(tmp_path: Path) -> None:
    text = GOOD.replace(
        '      principals: ["arn:aws:iam::111122223333:role/RecommendationTeam"]\n', ""
    )
    with pytest.raises(OrgFileError) as info:
        load_organisation(write(tmp_path, text))
    (problem,) = info.value.problems
    assert problem.path == "shares[1].access.principals"
    assert problem.fix == "add the field"


def test_rejects_unknown_keys_in_the_access_block(tmp_path: Path) -> None:
    text = GOOD.replace("      max_priority: 50\n", "      max_prority: 50\n")
    with pytest.raises(OrgFileError) as info:
        load_organisation(write(tmp_path, text))
    (problem,) = info.value.problems
    assert problem.path == "shares[0].access.max_prority"
    assert problem.fix == "did you mean 'max_priority'?"


def test_rejects_an_unquoted_account_id_telling_to_quote_it(tmp_path: Path) -> None:
    text = GOOD.replace('"444455556666"', "444455556666")
    with pytest.raises(OrgFileError) as info:
        load_organisation(write(tmp_path, text))
    (problem,) = info.value.problems
    assert problem.path == "shares[0].access.principals[1]"
    assert "quote values YAML reads as numbers" in problem.fix


def test_rejects_true_as_max_priority(tmp_path: Path) -> None:
    text = GOOD.replace("max_priority: 50", "max_priority: true")
    with pytest.raises(OrgFileError) as info:
        load_organisation(write(tmp_path, text))
    (problem,) = info.value.problems
    assert problem.path == "shares[0].access.max_priority"
    assert problem.value is True


def test_rule_problems_of_access_are_reported_beside_shape_errors(tmp_path: Path) -> None:
    text = BAD.replace("strategy: RESERVE", "strategy: RESERVEX")
    problems = problems_of(write(tmp_path, text))
    assert "shares[1].strategy" in problems
    assert "shares[0].access.max_priority" in problems


def test_rejects_two_files_whose_teams_share_an_execution_role(tmp_path: Path) -> None:
    first = write(tmp_path, GOOD, "a.yaml")
    second = write(
        tmp_path, GOOD.replace("organisation: research", "organisation: other"), "b.yaml"
    )
    with pytest.raises(OrgFileError) as info:
        load_organisations([first, second])
    assert [p.path for p in info.value.problems] == [
        f"{second}: shares[1].access.execution_role",
        f"{second}: shares[1].access.bucket",
    ]
    assert f"{first}: shares[1].access.execution_role" in info.value.problems[0].message


def test_json_schema_describes_the_access_block() -> None:
    schema = json.loads(json_schema())
    access = schema["$defs"]["AccessConfig"]
    assert access["additionalProperties"] is False
    assert access["required"] == ["principals"]
    props = access["properties"]
    assert props["principals"]["minItems"] == 1
    assert props["principals"]["items"]["pattern"].startswith("^(?:[0-9]{12}|arn:aws:iam::")
    assert (props["max_priority"]["minimum"], props["max_priority"]["maximum"]) == (0, 9999)
    assert props["execution_role"]["pattern"].startswith("^(?:create|arn:aws:iam::")
    assert props["bucket"]["pattern"].startswith("^(?:create|[a-z0-9]")
    share = schema["$defs"]["ShareConfig"]["properties"]["access"]
    assert {"$ref": "#/$defs/AccessConfig"} in share["anyOf"]


def test_cli_validate_prints_a_team_access_table(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    result = CliRunner().invoke(app, ["org", "validate", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "research: team access" in result.output
    generative = [line for line in result.output.splitlines() if "generative" in line][-1]
    assert "arn:aws:iam::111122223333:role/GenerativeTeam" in generative
    assert " 50 " in generative and "created" in generative
    assert "research-data/recommendation" in result.output


def test_cli_validate_prints_no_access_table_without_access_blocks(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "organisation: a\nshares:\n  - {name: s, capacity: {ml.g5.xlarge: 1}, strategy: LEND}\n",
    )
    result = CliRunner().invoke(app, ["org", "validate", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "team access" not in result.output


def test_cli_validate_lists_each_access_problem_on_its_own_line(tmp_path: Path) -> None:
    path = write(tmp_path, BAD)
    result = CliRunner().invoke(app, ["org", "validate", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 2
    lines = [line.strip() for line in result.output.splitlines() if ": shares[" in line]
    assert len(lines) == 4
    assert f"{path}: line 8: shares[0].access.max_priority: " in result.output
    assert "(got 10000); fix: set it between 0 and 9999" in result.output


def test_a_shared_role_names_the_files_share_indexes_beside_a_broken_share(
    tmp_path: Path,
) -> None:
    broken = "  - {name: broken, capacity: {ml.g5.xlarge: 1}, strategy: NOPE}\n"
    text = BAD.replace("shares:\n", "shares:\n" + broken).replace("max_priority: 10000", "")
    problems = problems_of(write(tmp_path, text))
    assert problems["shares[2].access.execution_role"].startswith(
        "shares[1].access.execution_role names the same execution role"
    )


def test_cli_validate_shows_each_teams_training_job_prefix(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("      bucket: create\n", "      training_logs: shared\n"))
    runner = CliRunner()
    result = runner.invoke(app, ["org", "validate", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    rows = {line.split()[1]: line for line in result.output.splitlines() if "logs)" in line}
    assert f"{training_job_prefix('research/generative')} (shared logs)" in rows["generative"]
    prefix = training_job_prefix("research/recommendation")
    assert f"{prefix} (team-prefixed logs)" in rows["recommendation"]

    shown = runner.invoke(app, ["org", "validate", "--json", str(path)])
    (access,) = [s["access"] for s in json.loads(shown.output)[0]["quotaShares"][1:2]]
    assert access["trainingJobPrefix"] == prefix
    assert access["trainingLogs"] == "team-prefixed"
