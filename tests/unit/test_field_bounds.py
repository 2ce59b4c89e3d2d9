"""Every field bounded by the model: instance types from botocore, counts, text, tags, messages."""

from __future__ import annotations

import datetime
import re
import tracemalloc
from pathlib import Path

import botocore
import botocore.session
import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs.model import (
    INSTANCE_TYPES_FILE,
    MAX_BORROW_LIMIT,
    MAX_INSTANCES_PER_TYPE,
    MAX_LISTED_PROBLEMS,
    JobQueueSpec,
    Organisation,
    Problem,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
    bounded_repr,
    check_description,
    check_instance_type,
    check_name,
    check_tags,
    nearest_instance_types,
    training_instance_types,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "quota_constructs" / INSTANCE_TYPES_FILE
G5 = "ml.g5.xlarge"


def botocore_enum() -> list[str]:
    model = botocore.session.get_session().get_service_model("sagemaker")
    return list(model.shape_for("TrainingInstanceType").enum)


def share(**kw: object) -> QuotaShareSpec:
    fields: dict = {"name": "a", "capacity": {G5: 1}, "strategy": SharingStrategy.LEND, **kw}
    return QuotaShareSpec(**fields)


def org(**kw: object) -> Organisation:
    fields: dict = {"name": "o", "queue": JobQueueSpec(shares=(share(),)), **kw}
    return Organisation(**fields)


# --- instance types ---------------------------------------------------------------------------


def test_the_instance_type_list_is_botocores_training_instance_type_enum() -> None:
    assert list(training_instance_types()) == botocore_enum()


def test_the_data_file_names_its_source_and_date() -> None:
    header = [line for line in DATA.read_text().splitlines() if line.startswith("#")]
    text = " ".join(header)
    assert f"botocore {botocore.__version__}" in text and "TrainingInstanceType" in text
    date = re.search(r"Generated ([0-9-]{10}) by tools/gen_instance_types.py", text)
    assert date is not None and datetime.date.fromisoformat(date[1]) <= datetime.date.today()


@pytest.mark.parametrize(
    "itype", ["ml.zz9.xlarge", "ml.g5.0xlarge", "ml.g5.999xlarge", "ml.g5.XLARGE"]
)
def test_rejects_types_that_only_look_like_instance_types(itype: str) -> None:
    [problem] = check_instance_type(itype, "capacity")
    assert "capacity unit must be a SageMaker training instance type" in problem.message
    assert "TrainingInstanceType list (botocore" in problem.message
    assert problem.fix.startswith("did you mean ml.")


def test_suggests_the_nearest_known_types() -> None:
    assert nearest_instance_types("ml.g5.0xlarge")[0] == "ml.g5.xlarge"
    assert nearest_instance_types("ml.p4d.24xlrge")[0] == "ml.p4d.24xlarge"
    [problem] = check_instance_type("ml.g5.2xlarg", "c")
    assert problem.fix.startswith("did you mean ml.g5.2xlarge")


def test_names_a_trailing_newline_around_a_known_type() -> None:
    [problem] = check_instance_type("ml.g5.xlarge\n", "c")
    assert "spaces or line breaks around it" in problem.message
    assert problem.fix.startswith("did you mean ml.g5.xlarge")


@pytest.mark.parametrize("itype", ["ml.g5", "g5.xlarge", "ML.G5.XLARGE", "NUM_INSTANCES", 5, None])
def test_rejects_other_values(itype: object) -> None:
    assert len(check_instance_type(itype, "c")) == 1


def test_no_suggestion_is_computed_for_long_garbage() -> None:
    assert nearest_instance_types("ml." + "x" * 100_000) == []
    [problem] = check_instance_type("ml." + "x" * 100_000, "c")
    assert problem.fix.startswith("use a type such as ml.g5.xlarge")


@given(st.sampled_from(botocore_enum()))
def test_accepts_every_type_of_the_list(itype: str) -> None:
    assert check_instance_type(itype, "c") == []


# --- names and patterns -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["QS1\n", "QS1\r\n", "\nQS1", "QS 1", "a" * 129, "", "QS1\x00"])
def test_names_are_matched_whole(name: str) -> None:
    assert check_name(name, "name") != []


def test_organisation_names_are_matched_whole() -> None:
    assert [p.path for p in org(name="research\n").problems()] == ["organisation"]
    assert org(name="a" * 64).problems() == []
    assert [p.path for p in org(name="a" * 65).problems()] == ["organisation"]


# --- counts and limits ------------------------------------------------------------------------


@pytest.mark.parametrize("count", [0, MAX_INSTANCES_PER_TYPE + 1, 2**31, 10**29, True, 1.5])
def test_rejects_counts_outside_1_to_the_stated_maximum(count: object) -> None:
    problems = JobQueueSpec(shares=(share(capacity={G5: count}),)).problems()
    assert [p.path for p in problems] == [f"shares[0].capacity.{G5}"]
    assert f"between 1 and {MAX_INSTANCES_PER_TYPE}" in problems[0].message


def test_accepts_the_maximum_count() -> None:
    assert JobQueueSpec(shares=(share(capacity={G5: MAX_INSTANCES_PER_TYPE}),)).problems() == []


def test_rejects_shares_whose_sum_exceeds_the_service_environment_maximum() -> None:
    half = MAX_INSTANCES_PER_TYPE // 2
    rest = MAX_INSTANCES_PER_TYPE - half + 1  # the two add up to one more than the maximum
    shares = (share(name="a", capacity={G5: half}), share(name="b", capacity={G5: rest}))
    [problem] = JobQueueSpec(shares=shares).problems()
    assert problem.path == "shares"
    assert f"add up to {MAX_INSTANCES_PER_TYPE + 1} instances" in problem.message


@pytest.mark.parametrize("limit", [MAX_BORROW_LIMIT + 1, 10**13, -2])
def test_rejects_borrow_limits_outside_minus_1_to_the_stated_maximum(limit: int) -> None:
    spec = share(strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=limit)
    [problem] = spec.problems()
    assert (
        problem.path == "borrow_limit" and f"between -1 and {MAX_BORROW_LIMIT}" in problem.message
    )


def test_accepts_the_maximum_borrow_limit() -> None:
    spec = share(strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit=MAX_BORROW_LIMIT)
    assert spec.problems() == []


# --- descriptions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "ok"),
    [
        ("a" * 400, True),
        ("a" * 401, False),
        ("é" * 400, True),  # 800 bytes
        ("中" * 300, True),  # 900 bytes
        ("中" * 301, False),  # 903 bytes
        ("😀" * 200, True),  # 400 UTF-16 units, 800 bytes
        ("😀" * 201, False),  # 402 UTF-16 units: CDK counts JavaScript characters
        ("a" * 5000, False),
        ("line one\nline two\ttabbed", True),
        ("bell\x07", False),
        ("nul\x00", False),
        ("c1\x9b", False),
        ("lone \ud800 surrogate", False),
    ],
)
def test_organisation_description_fits_the_stack_description(description: str, ok: bool) -> None:
    problems = org(description=description).problems()
    assert (problems == []) is ok, problems
    assert all(p.path == "description" for p in problems)


def test_share_description_has_a_stated_limit() -> None:
    assert share(description="x" * 4096).problems() == []
    [problem] = share(description="x" * 4097).problems()
    assert problem.path == "description" and "4096 characters" in problem.message


def test_description_rule_names_the_character() -> None:
    [problem] = check_description("a\x1bb", "d", max_chars=10, what="text")
    assert "U+001B" in problem.message


# --- tags -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ({"🚀": "v"}, "tag keys may contain only letters, digits, spaces and _ . : / = + - @"),
        ({"k": "🚀"}, "tag values may contain only letters"),
        ({"key\n": "v"}, "tag keys may contain only"),
        ({"k": "a\tb"}, "tag values may contain only"),
        ({"k[1]": "v"}, "tag keys may contain only"),
        ({"aws:team": "v"}, "may not start with 'aws:'"),
        ({"AWS:team": "v"}, "may not start with 'aws:'"),
        ({"": "v"}, "tag keys must be 1-128 characters"),
        ({"k" * 129: "v"}, "tag keys must be 1-128 characters"),
        ({"k": "v" * 257}, "tag values must be text of at most 256 characters"),
        ({"Team": "a", "team": "b"}, "tag keys must differ by more than case"),
        ({f"k{i}": "v" for i in range(51)}, "at most 50 tags are allowed"),
    ],
)
def test_rejects_tags_aws_would_refuse(tags: dict[str, str], message: str) -> None:
    assert any(message in p.message for p in check_tags(tags)), check_tags(tags)


def test_accepts_tags_within_the_rules() -> None:
    tags = {
        "k" * 128: "v" * 256,
        "Projekt Größe": "Straße 1",
        "コスト": "部門",
        "a_b.c:d/e=f+g-h@i": "",
        "cost center": "٣",  # an Arabic-Indic digit is a digit
    }
    assert check_tags(tags) == []
    assert check_tags({f"k{i}": "v" for i in range(50)}) == []


# --- bounded messages -------------------------------------------------------------------------


def test_a_long_value_is_shown_cut_with_its_length() -> None:
    text = str(Problem("description", "x" * 5000, "too long", "shorten it"))
    assert "'" + "x" * 80 + "'… (5000 characters)" in text
    assert len(text) < 300


def test_a_huge_integer_is_never_converted_to_text() -> None:
    text = bounded_repr(10**100_000)  # repr() of it raises ValueError (4,300-digit limit)
    assert text.startswith("<an integer of")


def test_a_huge_container_is_shown_bounded_without_building_its_repr() -> None:
    nested: list = ["lol"] * 9
    for _ in range(8):
        nested = [nested] * 9  # the expanded alias bomb: 9^9 leaves, shared
    tracemalloc.start()
    try:
        text = str(Problem("organisation", nested, "must be text", "write text"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "(9 items)" in text and len(text) < 400
    assert peak < 1_000_000


def test_paths_and_values_with_line_breaks_stay_on_one_line() -> None:
    text = str(Problem("capacity.ml.g5.xlarge\n", "ml.g5.xlarge\n", "bad\nmessage", "fix"))
    assert "\n" not in text and "capacity.ml.g5.xlarge\\n" in text


def test_an_error_lists_a_bounded_number_of_problems() -> None:
    problems = [Problem(f"p{i}", i, "bad", "fix") for i in range(1000)]
    message = str(QuotaConfigError(problems, context="f.yaml"))
    assert message.startswith("f.yaml: 1000 problems:")
    assert message.count("\n") == MAX_LISTED_PROBLEMS + 1
    assert message.endswith(f"... and {1000 - MAX_LISTED_PROBLEMS} more problems")
