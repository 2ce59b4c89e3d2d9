"""The list of documented rules is true: each sentence is in botocore's documentation of its
member and each names a test that exists (docs/emulator.md shows the list as
``tools/gen_doc_tables.py`` writes it: ``tests/unit/test_doc_tables.py``)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from botocore.model import Shape

from quota_constructs.local.wire.protocol import service_model
from tests.emulator.documented_rules import RULES, Rule, case_ids

TESTS = Path(__file__).resolve().parents[1]


BLOCK_TAGS = re.compile(r"</?(?:p|li|ul|ol|dl|dt|dd|note|br)\b[^>]*>")


def plain(text: str) -> str:
    """Documentation text without markup (block tags become spaces), whitespace collapsed."""
    text = re.sub(r"<[^>]+>", "", BLOCK_TAGS.sub(" ", text))
    return re.sub(r"\s+", " ", html.unescape(text)).strip()


def documentation(source: str, service: str) -> str:
    """The documentation ``source`` of ``service`` names (see :class:`Rule`)."""
    model = service_model(service)
    if source.startswith("Shape:"):
        shape_name, member = source.removeprefix("Shape:").split(".", 1)
        return str(model.shape_for(shape_name).members[member].documentation)
    operation, _, path = source.partition(".")
    op = model.operation_model(operation)
    if not path:
        return str(op.documentation)
    shape: Shape | None = op.input_shape
    for step in path.split("."):
        assert shape is not None
        shape = shape.members[step.removesuffix("[]")]
        if step.endswith("[]"):
            shape = shape.member
    assert shape is not None
    return str(shape.documentation)


@pytest.mark.parametrize("rule", RULES, ids=[f"{r.where}:{r.sentence[:30]}" for r in RULES])
def test_sentence_is_in_the_members_documentation(rule: Rule) -> None:
    assert plain(rule.sentence) in plain(documentation(rule.source, rule.service))


@pytest.mark.parametrize("rule", RULES, ids=[f"{r.where}:{r.sentence[:30]}" for r in RULES])
def test_rule_names_a_test_that_exists(rule: Rule) -> None:
    _, name, ids = case_ids(rule.test)

    if "[" in name:
        assert ids is not None and name.split("[", 1)[1][:-1] in ids
    else:
        assert ids is None
