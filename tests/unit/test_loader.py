"""The one loader: every problem of a file at once, each with its path and line, input unchanged."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from quota_constructs.commands.report import load_prices
from quota_constructs.config import OrgFileError, load_organisation, parse_organisation
from quota_constructs.model import QuotaConfigError
from quota_constructs.safe_load import parse_yaml

BAD = """organisation: research
shares:
  - name: QS1
    capacity: {ml.g5.xlarge: 2}
    strategy: LENDX
    description: 7
  - name: QS2
    capacity: {ml.g5.xlargee: 1}
    strategy: LEND
    borow_limit: 5
  - name: QS2
    capacity: {ml.g5.xlarge: 1}
    strategy: RESERVE
    timezone: UTC
    schedule:
      - days: [sat]
        form: "08:00"
training_plans:
  - {name: p, instance_type: ml.g5.xlarge, instance_count: two, start: x, duration_hours: 1}
"""


def test_the_loader_does_not_change_its_input() -> None:
    data = {
        "organisation": "a",
        "tags": {"team": 5},
        "shares": [
            {"name": "s", "capacity": {"ml.g5.xlarge": "2"}, "strategy": "NOPE", "bogus": 1},
            {"name": "s", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND", "schedule": [{}]},
        ],
    }
    before = copy.deepcopy(data)
    with pytest.raises(OrgFileError):
        parse_organisation(data)
    assert data == before


def test_rejects_problems_of_several_items_at_once_each_with_path_and_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "org.yaml"
    path.write_text(BAD, encoding="utf-8")
    with pytest.raises(OrgFileError) as info:
        load_organisation(path)
    found = {p.path: p.line for p in info.value.problems}
    assert found == {
        "shares[0].strategy": 5,
        "shares[0].description": 6,
        "shares[1].borow_limit": 10,
        "shares[2].schedule[0].form": 17,
        "training_plans[0].instance_count": 19,
        "shares[1].capacity.ml.g5.xlargee": 8,
        "shares[2].name": 11,
        "shares[2].schedule[0]": 16,
        "training_plans[0].instance_type": 19,
        "training_plans[0].start": 19,
    }
    messages = {p.path: p.message for p in info.value.problems}
    assert messages["shares[2].name"].endswith("shares[1] has the same name")
    assert messages["shares[2].schedule[0]"].startswith("a window must set at least one of")


def test_a_problem_under_a_dotted_instance_type_gets_its_line(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(
        "ml.g5.xlarge: 1.41\nml.p4d.24xlarge:\n  on_demand: -1\n  reserved: 2\n", encoding="utf-8"
    )
    with pytest.raises(QuotaConfigError) as info:
        load_prices(path)
    assert [(p.path, p.line) for p in info.value.problems] == [
        ("ml.p4d.24xlarge.on_demand", 3),
        ("ml.p4d.24xlarge.reserved", 4),
    ]
    assert info.value.context == str(path)


def test_lines_are_found_by_segments_and_by_text_paths_split_on_the_datas_keys() -> None:
    document = parse_yaml("a:\n  b: 1\na.b: 2\nml.p4d.24xlarge:\n  on_demand: -1\nl: [x, {k: 1}]\n")
    assert document.line_of(("a", "b")) == 2
    assert document.line_of(("a.b",)) == 3
    assert document.line_of("a.b") == 3
    assert document.line_of("ml.p4d.24xlarge.on_demand") == 5
    assert document.line_of("ml.p4d.24xlarge.training_plan") == 4
    assert document.line_of("l[1].k") == 6
    assert document.line_of("nothing") is None


def test_a_share_that_did_not_parse_still_has_its_name_checked_for_duplicates() -> None:
    def share(name: str, count: object, strategy: str) -> dict[str, object]:
        return {"name": name, "capacity": {"ml.g5.xlarge": count}, "strategy": strategy}

    data = {
        "organisation": "o",
        "shares": [
            share("a", 1, "RESREVE"),
            share("a", 1, "RESERVE"),
            share("b", "x", "RESERVE"),
            share("b", 1, "LEND"),
            share("a", 1, "BAD"),
        ],
    }
    with pytest.raises(OrgFileError) as caught:
        parse_organisation(data)
    clashes = {p.path: p.message for p in caught.value.problems if p.path.endswith(".name")}
    same = "quota share names must be unique in a queue; shares[{}] has the same name"
    assert clashes == {
        "shares[1].name": same.format(0),
        "shares[3].name": same.format(2),
        "shares[4].name": same.format(0),
    }
