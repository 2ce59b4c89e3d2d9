"""The safe loader: regular UTF-8 files within a size, strict YAML 1.2 and JSON, one line each."""

from __future__ import annotations

import ast
import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs import safe_load
from quota_constructs.safe_load import (
    InputFileError,
    dump_yaml,
    load_json,
    load_yaml,
    parse_json,
    parse_yaml,
    read_bytes,
    read_text,
)
from tests.unit.helpers import ALIAS_BOMB

ROOT = Path(__file__).resolve().parents[2]


def error_of(call: object, *args: object, **kwargs: object) -> InputFileError:
    with pytest.raises(InputFileError) as info:
        call(*args, **kwargs)  # type: ignore[operator]
    return info.value


def one_problem(error: InputFileError) -> str:
    assert len(error.problems) == 1
    text = str(error)
    assert "\n" not in text
    return text


# --- files ------------------------------------------------------------------------------------


def test_rejects_a_fifo_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "org.yaml"
    os.mkfifo(fifo)  # opening it for reading would block until a writer comes
    text = one_problem(error_of(read_bytes, fifo, max_bytes=100))
    assert text.startswith(f"{fifo}: <file>: not a regular file but a FIFO (named pipe)")


def test_rejects_dev_zero_as_a_character_device() -> None:
    text = one_problem(error_of(read_text, "/dev/zero", max_bytes=100))
    assert "not a regular file but a character device" in text


def test_rejects_a_directory(tmp_path: Path) -> None:
    assert "not a regular file but a directory" in str(error_of(load_yaml, tmp_path))


def test_rejects_a_symlink_to_a_device(tmp_path: Path) -> None:
    link = tmp_path / "org.yaml"
    link.symlink_to("/dev/zero")
    assert "character device" in str(error_of(load_yaml, link))


def test_rejects_a_missing_file_with_the_os_reason(tmp_path: Path) -> None:
    text = one_problem(error_of(load_yaml, tmp_path / "nope.yaml"))
    assert "cannot read the file: No such file or directory" in text


def test_rejects_a_huge_file_from_its_size_before_reading(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as handle:
        handle.truncate(10**12)  # sparse: a terabyte that is never read
    tracemalloc.start()
    try:
        text = one_problem(error_of(load_yaml, huge))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "(got '1000000000000 bytes')" in text and "larger than the limit of 1048576" in text
    assert peak < 1_000_000


def test_enforces_the_limit_while_reading_a_file_whose_size_says_zero() -> None:
    status = Path("/proc/self/status")
    assert status.stat().st_size == 0  # procfs: regular, size 0, content on read
    text = one_problem(error_of(read_bytes, status, max_bytes=16))
    assert "(got 'more than 16 bytes')" in text


def test_reads_a_file_of_exactly_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 64)
    assert read_bytes(path, max_bytes=64) == b"x" * 64
    assert "larger than the limit" in str(error_of(read_bytes, path, max_bytes=63))


# --- encoding ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "name"),
    [("utf-16", "UTF-16"), ("utf-32", "UTF-32"), ("utf-8-sig", "UTF-8 with a byte-order mark")],
)
def test_rejects_byte_order_marks_naming_the_encoding(
    tmp_path: Path, encoding: str, name: str
) -> None:
    path = tmp_path / "org.yaml"
    path.write_text("organisation: a\n", encoding=encoding)
    text = one_problem(error_of(load_yaml, path))
    assert f"the file is {name}; only UTF-8 is read" in text
    assert "fix: save the file as UTF-8 (without a byte-order mark)" in text


def test_rejects_utf16_without_a_bom_at_its_first_nul_byte(tmp_path: Path) -> None:
    path = tmp_path / "org.yaml"
    path.write_bytes("organisation: a\n".encode("utf-16-le"))
    text = one_problem(error_of(load_yaml, path))
    assert "<file offset 1, line 1, column 2>: the file has a NUL byte" in text


def test_rejects_latin1_naming_the_byte_offset_and_line(tmp_path: Path) -> None:
    path = tmp_path / "org.yaml"
    path.write_bytes("organisation: a\ndescription: café\n".encode("latin-1"))
    text = one_problem(error_of(load_yaml, path))
    assert "<file offset 32, line 2, column 17>: the file has byte 0xe9" in text


def test_rejects_utf8_encoded_surrogates(tmp_path: Path) -> None:
    path = tmp_path / "org.yaml"
    path.write_bytes(b"a: \xed\xa0\x80\n")
    assert "byte 0xed, which is not valid UTF-8" in str(error_of(load_yaml, path))


# --- YAML -------------------------------------------------------------------------------------


def test_refuses_an_alias_bomb_at_its_first_anchor_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB)
    tracemalloc.start()
    try:
        text = one_problem(error_of(load_yaml, path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text.startswith(f"{path}: line 1: a: anchors (&name) and aliases (*name) are not")
    assert peak < 2_000_000


def test_refuses_an_alias_even_without_expansion() -> None:
    error = error_of(parse_yaml, "base: {a: 1}\nother: *base\n")
    assert "line 2: other: anchors (&name) and aliases" in str(error)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("count: 010\n", 10),  # YAML 1.1: 8
        ("count: 0o10\n", 8),  # YAML 1.2 octal is explicit
        ("count: 0x1F\n", 31),
        ("count: +12\n", 12),
        ("count: 1:30\n", "1:30"),  # YAML 1.1: 90
        ("count: yes\n", "yes"),  # YAML 1.1: True
        ("count: on\n", "on"),
        ("count: off\n", "off"),
        ("count: 2001-12-14\n", "2001-12-14"),  # YAML 1.1: a date
        ("count: 1_000\n", "1_000"),  # YAML 1.1: 1000
        ("count: 0b101\n", "0b101"),
        ("count: 1e3\n", 1000.0),  # YAML 1.1: the text '1e3'
        ("count: True\n", True),
        ("count: ~\n", None),
        ("count:\n", None),
        ("count: '010'\n", "010"),
        ("count: !!str 12\n", "12"),
        ("count: ! 12\n", "12"),
    ],
)
def test_reads_scalars_as_yaml_12_core_schema(text: str, expected: object) -> None:
    value = parse_yaml(text).data["count"]
    assert value == expected and type(value) is type(expected)


def test_refuses_duplicate_keys_naming_both_lines() -> None:
    text = "organisation: a\nshares:\n  - name: A\n    strategy: LEND\n    strategy: RESERVE\n"
    error = str(error_of(parse_yaml, text, source="org.yaml"))
    assert error.startswith(
        "org.yaml: line 5: shares[0].strategy: duplicate key 'strategy': it is also at line 4"
    )


def test_refuses_keys_that_are_equal_once_read() -> None:
    assert "duplicate key" in str(error_of(parse_yaml, "a: 1\n'a': 2\n"))
    assert "duplicate key" in str(error_of(parse_yaml, "{1: a, 0x1: b}\n"))


def test_refuses_deep_block_nesting_at_the_depth_limit() -> None:
    text = "".join(f"{'  ' * level}k{level}:\n" for level in range(30)) + "  " * 30 + "x\n"
    error = str(error_of(parse_yaml, text))
    assert "nested deeper than 20 levels" in error and "line 21" in error


def test_refuses_deep_flow_nesting_without_recursion() -> None:
    text = "a: " + "[" * 100_000 + "]" * 100_000 + "\n"
    error = one_problem(error_of(parse_yaml, text))
    assert "line 1" in error and ("nested deeper than" in error or "nesting depth" in error)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!python/object:os.system x\n", "the tag !!python/object:os.system is not supported"),
        ("a: !!binary aGk=\n", "the tag !!binary is not supported"),
        ("a: !!set {x}\n", "the tag !!set is not supported"),
        ("a: !!omap [x: 1]\n", "the tag !!omap is not supported"),
        ("a: !custom 1\n", "the tag !custom is not supported"),
        ("a: !!int nope\n", "!!int takes a whole number"),
        ("a: " + "9" * 25 + "\n", "an integer of 25 digits is out of range"),
        ("a: " + "9" * 5000 + "\n", "an integer of 5000 digits is out of range"),
        ("a: .inf\n", "numbers must be finite"),
        ("a: .nan\n", "numbers must be finite"),
        ("a: 1e400\n", "numbers must be finite"),
        ("a: 1\n---\nb: 2\n", "more than one YAML document"),
        ("? [a, b]\n: 1\n", "mapping keys must be plain values"),
        ("a: \x07\n", "the character U+0007 is not allowed in YAML"),
        ("a: [1,\n", "not valid YAML"),
        ('a: "\\ud800"\n', "not valid YAML"),
    ],
)
def test_refuses_with_one_line_naming_the_line(text: str, message: str) -> None:
    error = one_problem(error_of(parse_yaml, text, source="f.yaml"))
    assert message in error
    assert error.startswith(("f.yaml: line ", "f.yaml: <yaml line "))


def test_refuses_more_values_than_any_file_needs() -> None:
    text = "a: [" + ",".join(["1"] * (safe_load.MAX_YAML_VALUES + 10)) + "]\n"
    error = one_problem(error_of(parse_yaml, text))
    assert f"more than {safe_load.MAX_YAML_VALUES} values in one file" in error


def test_merge_keys_are_plain_keys_in_yaml_12() -> None:
    assert parse_yaml("<<: {a: 1}\n").data == {"<<": {"a": 1}}


def test_records_the_line_of_each_field() -> None:
    document = parse_yaml("a: 1\nshares:\n  - name: x\n    capacity:\n      ml.g5.xlarge: 2\n")
    assert document.line_of("shares[0].name") == 3
    assert document.line_of("shares[0].capacity.ml.g5.xlarge") == 5
    assert document.line_of("shares[0].capacity.ml.g5.xlarge.nope") == 5
    assert document.line_of("shares[0].strategy") == 3  # missing: its share's line
    assert document.line_of("<root>") is None


def test_an_empty_file_is_none(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("")
    assert load_yaml(path) is None


def test_the_pure_python_parser_gives_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "a: 010\nb: [1, {c: yes}]\n"
    expected = parse_yaml(text).data
    monkeypatch.setattr(safe_load, "_Parser", None)
    assert parse_yaml(text).data == expected
    assert "duplicate key" in str(error_of(parse_yaml, "a: 1\na: 2\n"))
    assert "nested deeper" in str(error_of(parse_yaml, "a: " + "[" * 50 + "]" * 50))


yaml_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**18), 10**18)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"])),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@given(yaml_values)
def test_dump_yaml_reads_back_as_the_same_data(value: object) -> None:
    assert parse_yaml(dump_yaml({"v": value})).data == {"v": value}


def test_dump_yaml_quotes_text_that_either_yaml_version_reads_as_a_number() -> None:
    data = {k: k for k in ("010", "1:30", "yes", "1e3", "0o7", "null", "~", ".5", "+1", "")}
    assert parse_yaml(dump_yaml(data)).data == data


def test_dump_yaml_writes_a_shared_value_twice_instead_of_an_alias() -> None:
    gpu = {"ml.g5.xlarge": 1}
    text = dump_yaml({"a": gpu, "b": gpu})
    assert "&" not in text and "*" not in text


# --- JSON -------------------------------------------------------------------------------------


def test_reads_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "payload.json"
    path.write_text('{"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 2}}')
    assert load_json(path)["ResourceConfig"]["InstanceCount"] == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"a": 1,\n "b": {"a": 2},\n "a": 3}',
            "line 3: a: duplicate key 'a': it is also at line 1",
        ),
        ("[" * 100_000 + "]" * 100_000, "line 1: <json>: nested deeper than 20 levels"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": Infinity}', "Infinity is not a JSON number"),
        ('{"a": 1e999}', "the number 1e999 is out of range"),
        ('{"a": ' + "1" * 5000 + "}", "an integer of 5000 digits is out of range"),
        ('{"a" 1}', "<json line 1, column 6>: not valid JSON: Expecting ':' delimiter"),
        ('{"a": "x\ny"}', "not valid JSON: Invalid control character"),
    ],
)
def test_refuses_bad_json_in_one_line(text: str, message: str) -> None:
    error = one_problem(error_of(parse_json, text, source="p.json"))
    assert message in error


def test_json_values_that_look_like_keys_are_not_keys() -> None:
    assert parse_json('{"a": "b", "c": ["a", "b"], "b": {"b": "a"}}')["b"] == {"b": "a"}


def test_rejects_a_json_file_on_dev_zero() -> None:
    assert "character device" in str(error_of(load_json, "/dev/zero"))


# --- layering ---------------------------------------------------------------------------------


def test_the_loader_imports_only_the_standard_library_pyyaml_and_the_model() -> None:
    tree = ast.parse((ROOT / "quota_constructs" / "safe_load.py").read_text(encoding="utf-8"))
    imported = {
        alias.name if isinstance(node, ast.Import) else node.module or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    third_party = {name for name in imported if name.split(".")[0] not in _STDLIB}
    assert third_party == {"yaml", "yaml._yaml", "quota_constructs.model"}


_STDLIB = {
    "__future__",
    "collections",
    "dataclasses",
    "json",
    "math",
    "os",
    "pathlib",
    "re",
    "stat",
    "typing",
}
