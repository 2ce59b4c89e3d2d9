"""Organisation files: loading, every error at once with file, field, value and fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.config import (
    OrganisationFile,
    OrgFileError,
    discover_org_files,
    json_schema,
    load_organisation,
    load_organisations,
    parse_organisation,
)
from quota_constructs.model import SharingStrategy
from tests.helpers import ORGS_DIR

SEED = ORGS_DIR / "seed-demo.yaml"


def write(tmp_path: Path, text: str, name: str = "org.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(OrgFileError) as info:
        load_organisation(path)
    return [p.path for p in info.value.problems]


def test_seed_demo_is_the_aws_tutorial_organisation() -> None:
    org = load_organisation(SEED)
    shares = {s.name: s for s in org.queue.shares}
    assert org.name == "seed-demo"
    assert shares["QS1"].strategy is SharingStrategy.LEND_AND_BORROW
    assert shares["QS1"].borrow_limit == 200 and shares["QS1"].in_share_preemption
    assert shares["QS2"].strategy is SharingStrategy.LEND and not shares["QS2"].in_share_preemption
    assert shares["QS3"].strategy is SharingStrategy.RESERVE
    assert org.queue.service_environment_capacity() == {"ml.g5.xlarge": 3}


def test_defaults_apply_when_optional_fields_are_omitted(tmp_path: Path) -> None:
    org = load_organisation(
        write(
            tmp_path,
            "organisation: a\nshares:\n"
            "  - {name: s, capacity: {ml.g5.xlarge: 1}, strategy: LEND_AND_BORROW}\n",
        )
    )
    assert org.queue.priority == 1
    assert org.queue.runnable_timeout_minutes is None
    assert org.queue.shares[0].effective_borrow_limit == -1
    assert org.queue.shares[0].in_share_preemption is False


def test_borrow_limit_zero_survives_loading(tmp_path: Path) -> None:
    org = load_organisation(
        write(
            tmp_path,
            "organisation: a\nshares:\n  - {name: s, capacity: {ml.g5.xlarge: 1}, "
            "strategy: LEND_AND_BORROW, borrow_limit: 0}\n",
        )
    )
    assert org.queue.shares[0].effective_borrow_limit == 0


def test_rejects_unknown_keys_naming_the_path(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "organisation: a\nshares:\n"
        "  - {name: s, capacity: {ml.g5.xlarge: 1}, strategy: LEND, borow_limit: 5}\n",
    )
    with pytest.raises(OrgFileError) as info:
        load_organisation(path)
    (problem,) = info.value.problems
    assert problem.path == "shares[0].borow_limit"
    assert problem.fix == "did you mean 'borrow_limit'?"
    assert str(path) in str(info.value)


def test_rejects_an_unknown_key_far_from_any_listing_the_allowed_ones(tmp_path: Path) -> None:
    share = "  - {name: s, capacity: {ml.g5.xlarge: 1}, strategy: LEND}\n"
    path = write(tmp_path, "organisation: a\nowner: me\nshares:\n" + share)
    with pytest.raises(OrgFileError) as info:
        load_organisation(path)
    (problem,) = info.value.problems
    assert problem.path == "owner"
    assert problem.fix.startswith("remove the key; the keys allowed here are organisation, ")


def test_rejects_a_misspelt_key_and_every_rule_problem_of_the_file_in_one_run(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "organisation: a\nshares:\n"
        "  - {name: s, capacity: {ml.g5.xlarge: 0}, strategy: LEND, borow_limit: 5}\n"
        "  - {name: s, capacity: {ml.g5.xlargee: 2}, strategy: LEND}\n",
    )
    with pytest.raises(OrgFileError) as info:
        load_organisation(path)
    found = {p.path: p for p in info.value.problems}
    assert set(found) == {
        "shares[0].borow_limit",
        "shares[0].capacity.ml.g5.xlarge",
        "shares[1].capacity.ml.g5.xlargee",
        "shares[1].name",
    }
    assert found["shares[0].borow_limit"].fix == "did you mean 'borrow_limit'?"
    assert "between 1 and" in found["shares[0].capacity.ml.g5.xlarge"].message
    assert "did you mean ml.g5.xlarge" in found["shares[1].capacity.ml.g5.xlargee"].fix
    assert "must be unique" in found["shares[1].name"].message


def test_rejects_every_problem_at_once(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """organisation: bad org
job_queue: {priority: 2000}
shares:
  - name: QS 1
    capacity: {ml.g5.xlarge: 0}
    strategy: RESERVE
    borrow_limit: 100
  - name: QS2
    capacity: {ml.g5.xlarge: 1}
    strategy: LENDX
""",
    )
    assert sorted(problems_of(path)) == [
        "job_queue.priority",
        "organisation",
        "shares[0].borrow_limit",
        "shares[0].capacity.ml.g5.xlarge",
        "shares[0].name",
        "shares[1].strategy",
    ]


def test_rejects_strings_where_numbers_are_expected(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "organisation: a\nshares:\n  - {name: s, capacity: {ml.g5.xlarge: '2'}, strategy: LEND}\n",
    )
    with pytest.raises(OrgFileError) as info:
        load_organisation(path)
    (problem,) = info.value.problems
    assert problem.path == "shares[0].capacity.ml.g5.xlarge"
    assert problem.fix == "write a whole number without quotes"


def test_rejects_broken_yaml_with_line_number(tmp_path: Path) -> None:
    path = write(tmp_path, "organisation: a\nshares:\n  - name: [unclosed\n")
    with pytest.raises(OrgFileError) as info:
        load_organisation(path)
    assert "line 4" in info.value.problems[0].path
    assert str(path) in str(info.value)


def test_rejects_a_file_that_is_not_a_mapping(tmp_path: Path) -> None:
    assert problems_of(write(tmp_path, "- just\n- a list\n")) == ["<root>"]


def test_rejects_missing_file() -> None:
    with pytest.raises(OrgFileError, match="cannot read the file"):
        load_organisation("does/not/exist.yaml")


def test_rejects_duplicate_organisation_names_across_files(tmp_path: Path) -> None:
    body = (
        "organisation: same\nshares:\n  - {name: s, capacity: {ml.g5.xlarge: 1}, strategy: LEND}\n"
    )
    first, second = write(tmp_path, body, "a.yaml"), write(tmp_path, body, "b.yaml")
    with pytest.raises(OrgFileError, match="already used by"):
        load_organisations([first, second])


def test_round_trip_through_yaml_keeps_the_organisation() -> None:
    org = load_organisation(SEED)
    text = OrganisationFile.from_organisation(org).to_yaml()
    import yaml

    assert parse_organisation(yaml.safe_load(text)) == org


def test_json_schema_lists_the_fields_and_forbids_unknown_keys() -> None:
    schema = json.loads(json_schema())
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"organisation", "shares"}
    share = schema["$defs"]["ShareConfig"]
    assert share["properties"]["strategy"]["$ref"].endswith("SharingStrategy")


def test_every_committed_organisation_file_is_valid() -> None:
    files = discover_org_files(ORGS_DIR)
    assert SEED in files
    assert len(load_organisations(files)) == len(files)


def test_cli_validate_prints_the_derived_environment_and_max_usable() -> None:
    result = CliRunner().invoke(app, ["org", "validate", str(SEED)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "service environment 3 x ml.g5.xlarge" in result.output
    qs1 = next(line for line in result.output.splitlines() if "QS1" in line)
    assert "200%" in qs1 and "2 x ml.g5.xlarge" in qs1


def test_cli_validate_exits_2_listing_file_field_value_and_fix(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "organisation: a\nshares:\n"
        "  - {name: s, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE, borrow_limit: 5}\n",
    )
    result = CliRunner().invoke(app, ["org", "validate", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 2
    assert f"{path}: line 3: shares[0].borrow_limit" in result.output
    assert "(got 5)" in result.output and "fix: remove borrow_limit" in result.output
