"""Nothing that passes ``validate`` fails in synth; everything outside the bounds fails at load.

A generator writes organisation files inside every bound of the model (edge values included:
longest names and descriptions, 50 tags, 20 shares, the largest counts and borrow limit, Unicode
text); each is loaded as ``quota org validate`` loads it and synthesized with CloudFormation
validation on, then cfn-lint'ed. The converse: one value just outside a bound, written into a
valid file, is refused at load with an error naming its field.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from cfnlint.api import lint
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from quota_constructs.config import OrgFileError, load_organisation
from quota_constructs.model import (
    MAX_ACCESS_PRINCIPALS,
    MAX_BORROW_LIMIT,
    MAX_INSTANCES_PER_TYPE,
    MAX_ORGANISATION_DESCRIPTION_BYTES,
    MAX_ORGANISATION_DESCRIPTION_CHARS,
    MAX_SHARE_DESCRIPTION_CHARS,
    MAX_SHARES_PER_QUEUE,
    MAX_TAGS,
    TAG_CHARACTERS,
    training_instance_types,
)
from quota_constructs.safe_load import dump_yaml
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from tests.constructs.helpers import make_app

NAME_CHARS = string.ascii_letters + string.digits + "-_"
TEXT = st.characters(exclude_categories=["Cc", "Cs"]) | st.sampled_from("\n\t")
TAG_TEXT = st.characters(categories=["L", "N", "Z"]) | st.sampled_from(TAG_CHARACTERS)


def _fits_stack_description(text: str) -> bool:
    units = len(text) + sum(1 for c in text if ord(c) > 0xFFFF)
    size = len(text.encode("utf-8"))
    return (
        units <= MAX_ORGANISATION_DESCRIPTION_CHARS and size <= MAX_ORGANISATION_DESCRIPTION_BYTES
    )


org_descriptions = st.one_of(
    st.just(""),
    st.text(TEXT, max_size=MAX_ORGANISATION_DESCRIPTION_CHARS).filter(_fits_stack_description),
    st.sampled_from(
        [
            "a" * MAX_ORGANISATION_DESCRIPTION_CHARS,
            "é" * MAX_ORGANISATION_DESCRIPTION_CHARS,  # 800 bytes
            "中" * (MAX_ORGANISATION_DESCRIPTION_BYTES // 3),  # 900 bytes
            "😀" * (MAX_ORGANISATION_DESCRIPTION_CHARS // 2),  # 400 UTF-16 units
            "yes",  # text that YAML 1.1 would read as a boolean
        ]
    ),
)
share_descriptions = st.one_of(
    st.just(""),
    st.text(TEXT, max_size=200),
    st.just("x" * MAX_SHARE_DESCRIPTION_CHARS),
)
names = st.one_of(
    st.text(st.sampled_from(NAME_CHARS), min_size=1, max_size=128),
    st.just("n" * 128),
)
org_names = st.one_of(
    st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,63}", fullmatch=True),
    st.just("o" * 64),
)
tag_keys = st.text(TAG_TEXT, min_size=1, max_size=128).filter(
    lambda k: not k.lower().startswith("aws:")
)
tags = st.one_of(
    st.dictionaries(tag_keys, st.text(TAG_TEXT, max_size=256), max_size=6),
    st.just({f"{i:03d}" + "k" * 125: "v" * 256 for i in range(MAX_TAGS)}),
).filter(lambda t: len({k.lower() for k in t}) == len(t))


@st.composite
def accesses(draw: st.DrawFn, index: int) -> dict[str, Any]:
    count = draw(st.integers(1, MAX_ACCESS_PRINCIPALS))
    access: dict[str, Any] = {
        "principals": [f"arn:aws:iam::{index + 100000000000}:role/Team{i}" for i in range(count)],
        "max_priority": draw(st.integers(0, 9999)),
    }
    if draw(st.booleans()):
        access["execution_role"] = f"arn:aws:iam::111122223333:role/exec/Team{index}"
    if draw(st.booleans()):
        access["bucket"] = f"team-{index}-bucket/prefix/{index}"
    return access


@st.composite
def organisation_files(draw: st.DrawFn) -> dict[str, Any]:
    """An organisation file (as data) inside every bound of the model."""
    count = draw(st.integers(1, MAX_SHARES_PER_QUEUE))
    share_names = draw(st.lists(names, min_size=count, max_size=count, unique=True))
    types = training_instance_types()
    shares = []
    for index, name in enumerate(share_names):
        kinds = draw(st.lists(st.sampled_from(types), min_size=1, max_size=5, unique=True))
        strategy = draw(st.sampled_from(["RESERVE", "LEND", "LEND_AND_BORROW"]))
        share: dict[str, Any] = {
            "name": name,
            "capacity": {t: draw(st.integers(1, MAX_INSTANCES_PER_TYPE // count)) for t in kinds},
            "strategy": strategy,
            "in_share_preemption": draw(st.booleans()),
            "state": draw(st.sampled_from(["ENABLED", "DISABLED"])),
            "description": draw(share_descriptions),
        }
        if strategy == "LEND_AND_BORROW" and draw(st.booleans()):
            share["borrow_limit"] = draw(st.sampled_from([-1, 0, MAX_BORROW_LIMIT]))
        if draw(st.booleans()):
            share["access"] = draw(accesses(index))
        shares.append(share)
    org_tags = draw(tags)
    if any("access" in share for share in shares):  # a team's share also carries its team tag
        org_tags = dict(list(org_tags.items())[: MAX_TAGS - 1])
    return {
        "organisation": draw(org_names),
        "description": draw(org_descriptions),
        "job_queue": {
            "priority": draw(st.sampled_from([0, 1, 1000])),
            "runnable_timeout_minutes": draw(st.sampled_from([None, 10, 1440])),
        },
        "tags": org_tags,
        "shares": shares,
    }


def maximal_file() -> dict[str, Any]:
    """Every bound at once: 20 shares of 5 types, longest texts, full access blocks and 49 tags
    (the 50th of each team's share is its team tag)."""
    types = training_instance_types()
    per_share = MAX_INSTANCES_PER_TYPE // MAX_SHARES_PER_QUEUE
    return {
        "organisation": "o" * 64,
        "description": "😀" * (MAX_ORGANISATION_DESCRIPTION_CHARS // 2),
        "job_queue": {"priority": 1000, "runnable_timeout_minutes": 1440},
        "tags": {f"{i:03d}" + "ü" * 125: "ß" * 256 for i in range(MAX_TAGS - 1)},
        "shares": [
            {
                "name": f"{i:03d}" + "n" * 125,
                "capacity": {t: per_share for t in types[:5]},
                "strategy": "LEND_AND_BORROW",
                "borrow_limit": MAX_BORROW_LIMIT,
                "in_share_preemption": True,
                "description": "é" * MAX_SHARE_DESCRIPTION_CHARS,
                "access": {
                    "principals": [
                        f"arn:aws:iam::{100000000000 + i}:role/{'p' * 60}{j}"
                        for j in range(MAX_ACCESS_PRINCIPALS)
                    ],
                    "max_priority": 9999,
                    "execution_role": f"arn:aws:iam::111122223333:role/{'r' * 60}{i:02d}",
                    "bucket": f"team-{i}-bucket/{'p' * 200}",
                },
            }
            for i in range(MAX_SHARES_PER_QUEUE)
        ],
    }


@pytest.mark.slow
@example(data=maximal_file())
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(organisation_files())
def test_every_accepted_file_synthesizes_with_validation_and_cfn_lint_clean(
    tmp_path_factory: pytest.TempPathFactory, data: dict[str, Any]
) -> None:
    directory = tmp_path_factory.mktemp("org")
    path = directory / "org.yaml"
    path.write_text(dump_yaml(data), encoding="utf-8")
    org = load_organisation(path)  # what `quota org validate` accepts

    app = make_app(validation=True, outdir=str(directory / "cdk.out"))
    stack = OrganisationStack(app, stack_name_for(org), organisation=org)
    assembly = app.synth()

    report = json.loads((directory / "cdk.out" / "validation-report.json").read_text())
    assert [p for p in report["pluginReports"] if p["conclusion"] != "success"] == []
    template = assembly.get_stack_by_name(stack.stack_name).template
    matches = lint(json.dumps(template, ensure_ascii=False), regions=["us-east-1"])
    assert [f"{m.rule.id} {m.message}" for m in matches] == []


def test_a_maximal_file_in_three_byte_characters_fits_the_size_limit(tmp_path: Path) -> None:
    data = maximal_file()
    data["tags"] = {f"{i:03d}" + "中" * 125: "中" * 256 for i in range(MAX_TAGS - 1)}
    for share in data["shares"]:
        share["description"] = "中" * MAX_SHARE_DESCRIPTION_CHARS
    path = tmp_path / "org.yaml"
    path.write_text(dump_yaml(data), encoding="utf-8")
    assert path.stat().st_size > 300_000
    assert load_organisation(path).name == "o" * 64


VALID: dict[str, Any] = {
    "organisation": "research",
    "description": "GPUs",
    "tags": {"project": "gpu"},
    "shares": [
        {
            "name": "QS1",
            "capacity": {"ml.g5.xlarge": 1},
            "strategy": "LEND_AND_BORROW",
            "borrow_limit": 200,
            "description": "d",
        }
    ],
}


def _set(data: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    copy = json.loads(json.dumps(data))
    target = copy
    *parents, last = dotted.split("/")
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    target[last] = value
    return copy


OUT_OF_BOUNDS = [
    ("organisation", "o" * 65, "organisation"),
    ("organisation", "research\n", "organisation"),
    ("description", "a" * (MAX_ORGANISATION_DESCRIPTION_CHARS + 1), "description"),
    ("description", "中" * (MAX_ORGANISATION_DESCRIPTION_BYTES // 3 + 1), "description"),
    ("description", "😀" * (MAX_ORGANISATION_DESCRIPTION_CHARS // 2 + 1), "description"),
    ("tags", {f"k{i}": "v" for i in range(MAX_TAGS + 1)}, "tags"),
    ("tags", {"k" * 129: "v"}, "tags." + "k" * 129),
    ("tags", {"k": "v" * 257}, "tags.k"),
    ("tags", {"🚀": "v"}, "tags.🚀"),
    ("tags", {"aws:x": "v"}, "tags.aws:x"),
    ("shares/0/name", "n" * 129, "shares[0].name"),
    ("shares/0/name", "QS1\n", "shares[0].name"),
    ("shares/0/capacity", {"ml.g5.xlarge": MAX_INSTANCES_PER_TYPE + 1}, "shares[0].capacity"),
    ("shares/0/capacity", {"ml.g5.xlarge": 0}, "shares[0].capacity"),
    ("shares/0/capacity", {"ml.g5.0xlarge": 1}, "shares[0].capacity"),
    ("shares/0/capacity", {"ml.g5.xlarge\n": 1}, "shares[0].capacity"),
    ("shares/0/borrow_limit", MAX_BORROW_LIMIT + 1, "shares[0].borrow_limit"),
    ("shares/0/borrow_limit", -2, "shares[0].borrow_limit"),
    ("shares/0/description", "x" * (MAX_SHARE_DESCRIPTION_CHARS + 1), "shares[0].description"),
    ("shares/0/description", "bell\x07", "shares[0].description"),
    ("shares", [dict(VALID["shares"][0], name=f"s{i}") for i in range(21)], "shares"),
]


@pytest.mark.parametrize(("field", "value", "path"), OUT_OF_BOUNDS)
def test_rejects_each_value_just_outside_a_bound_at_load(
    tmp_path: Path, field: str, value: Any, path: str
) -> None:
    file = tmp_path / "org.yaml"
    file.write_text(dump_yaml(_set(VALID, field, value)), encoding="utf-8")
    with pytest.raises(OrgFileError) as info:
        load_organisation(file)
    assert [p.path.split(".ml.")[0] for p in info.value.problems] == [path]
    assert all(p.line is not None for p in info.value.problems)
