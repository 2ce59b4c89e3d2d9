"""Hostile organisation files (issue 11): each refused at load in one line naming file, line, field.

The commands that read organisation files (``quota org validate``, ``app.py`` as ``cdk synth -c
org_file=...`` runs it, ``quota local serve --org``) print those lines and never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from quota_constructs.config import OrgFileError, load_organisation, load_organisations
from quota_constructs.model import MAX_BORROW_LIMIT, MAX_INSTANCES_PER_TYPE
from quota_constructs.stacks.organisation_app import ORG_FILE_CONTEXT
from tests.unit.helpers import ALIAS_BOMB

ROOT = Path(__file__).resolve().parents[2]
QUOTA = Path(sys.executable).with_name("quota")


def org_text(
    *,
    description: str = "'Research GPUs.'",
    tag_key: str = "project",
    tag_value: str = "gpu",
    name: str = "QS1",
    itype: str = "ml.g5.xlarge",
    count: str = "1",
    strategy: str = "LEND_AND_BORROW",
    borrow: str = "200",
    extra: str = "",
) -> str:
    return (
        "organisation: research\n"  # line 1
        f"description: {description}\n"  # 2
        "tags:\n"  # 3
        f"  {tag_key}: {tag_value}\n"  # 4
        "shares:\n"  # 5
        f"  - name: {name}\n"  # 6
        f"    capacity: {{{itype}: {count}}}\n"  # 7
        f"    strategy: {strategy}\n"  # 8
        f"    borrow_limit: {borrow}\n"  # 9
        f"{extra}"
    )


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "org.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def refusal(path: Path) -> str:
    """The one problem of ``path``, as ``str`` (asserted to be a single line)."""
    with pytest.raises(OrgFileError) as info:
        load_organisation(path)
    assert len(info.value.problems) == 1, info.value
    text = str(info.value)
    assert "\n" not in text and text.startswith(f"{path}: ")
    return text.removeprefix(f"{path}: ")


def test_the_template_file_is_valid(tmp_path: Path) -> None:
    org = load_organisation(write(tmp_path, org_text()))
    assert org.queue.shares[0].borrow_limit == 200


CASES = {
    # issue 11, "Organisation files", one line each; then the rest of their kind.
    "name with a trailing newline": (
        {"name": '"QS1\\n"'},
        "line 6: shares[0].name: quota share name must be 1-128 characters",
    ),
    "instance type with a trailing newline": (
        {"itype": '"ml.g5.xlarge\\n"'},
        "line 7: shares[0].capacity.ml.g5.xlarge\\n: capacity unit must be a SageMaker",
    ),
    "count 1e29 as an integer": (
        {"count": "1" + "0" * 29},
        "line 7: shares[0].capacity.ml.g5.xlarge: an integer of 30 digits is out of range",
    ),
    "count 1e29 as a float": (
        {"count": "1e29"},
        "line 7: shares[0].capacity.ml.g5.xlarge: Input should be a valid integer",
    ),
    "count 2^31": (
        {"count": str(2**31)},
        f"max capacity (instances) must be an integer between 1 and {MAX_INSTANCES_PER_TYPE}",
    ),
    "count 0": ({"count": "0"}, "must be an integer between 1 and"),
    "count -1": ({"count": "-1"}, "must be an integer between 1 and"),
    "count true": ({"count": "true"}, "Input should be a valid integer"),
    "count .inf": ({"count": ".inf"}, "numbers must be finite"),
    "count 1:30 (YAML 1.1 sexagesimal)": (
        {"count": "1:30"},
        "line 7: shares[0].capacity.ml.g5.xlarge: Input should be a valid integer (got '1:30')",
    ),
    "borrow limit 1e13": (
        {"borrow": str(10**13)},
        f"line 9: shares[0].borrow_limit: borrow limit (percent; -1 = unlimited) must be an "
        f"integer between -1 and {MAX_BORROW_LIMIT}",
    ),
    "borrow limit -2": ({"borrow": "-2"}, "between -1 and"),
    "unknown instance family": ({"itype": "ml.zz9.xlarge"}, "capacity unit must be"),
    "instance size 0xlarge": ({"itype": "ml.g5.0xlarge"}, "did you mean ml.g5.xlarge"),
    "instance size 999xlarge": ({"itype": "ml.g5.999xlarge"}, "did you mean ml.g5."),
    "NUM_INSTANCES as a capacity unit": ({"itype": "NUM_INSTANCES"}, "capacity unit must be"),
    "5,000-character description": (
        {"description": "a" * 5000},
        "line 2: description: the organisation's description (it goes into the stack "
        "description) is 5000 characters",
    ),
    "description of 301 three-byte characters": ({"description": "中" * 301}, "903 UTF-8 bytes"),
    "description of 201 emoji": ({"description": "😀" * 201}, "is 402 characters"),
    "description with a NUL escape": (
        {"description": '"a\\0b"'},
        "contains the control or unpaired surrogate character U+0000",
    ),
    "emoji tag key": (
        {"tag_key": "🚀"},
        "line 4: tags.🚀: tag keys may contain only letters, digits, spaces",
    ),
    "emoji tag value": ({"tag_value": "🚀"}, "line 4: tags.project: tag values may contain only"),
    "tag key with markup": ({"tag_key": "'[/x]'"}, "tags.[/x]: tag keys may contain only"),
    "aws: tag key": ({"tag_key": "aws:team"}, "tag keys may not start with 'aws:'"),
    "257-character tag value": ({"tag_value": "v" * 257}, "at most 256 characters"),
    "tag value that is a number": ({"tag_value": "12"}, "line 4: tags.project: Input should be"),
    "in-share preemption written yes (YAML 1.1 boolean)": (
        {"extra": "    in_share_preemption: yes\n"},
        "line 10: shares[0].in_share_preemption: Input should be a valid boolean",
    ),
    "duplicate strategy key": (
        {"extra": "    strategy: RESERVE\n"},
        "line 10: shares[0].strategy: duplicate key 'strategy': it is also at line 8",
    ),
    "anchor and alias": (
        {
            "extra": "  - name: QS2\n    capacity: *gpu\n    strategy: LEND\n",
            "itype": "ml.g5.xlarge",
        },
        "line 11: shares[1].capacity: anchors (&name) and aliases (*name) are not allowed",
    ),
    "explicit python tag": (
        {"description": "!!python/object/apply:os.system [echo]"},
        "line 2: description: the tag !!python/object/apply:os.system is not supported",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_rejects_at_load_in_one_line(tmp_path: Path, case: str) -> None:
    fields, expected = CASES[case]
    assert expected in refusal(write(tmp_path, org_text(**fields)))


def test_a_leading_zero_count_is_decimal_as_in_yaml_12(tmp_path: Path) -> None:
    org = load_organisation(write(tmp_path, org_text(count="010")))
    assert org.queue.shares[0].capacity["ml.g5.xlarge"] == 10  # YAML 1.1 read 8


def test_rejects_the_alias_bomb_at_its_first_anchor(tmp_path: Path) -> None:
    assert refusal(write(tmp_path, ALIAS_BOMB)).startswith("line 1: a: anchors (&name)")


def test_rejects_deep_nesting(tmp_path: Path) -> None:
    text = "organisation: " + "[" * 50_000 + "]" * 50_000 + "\n"
    assert "line 1" in refusal(write(tmp_path, text))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (org_text().encode("utf-16"), "<file>: the file is UTF-16; only UTF-8 is read"),
        (org_text().encode("utf-16-le"), "<file offset 1, line 1, column 2>: the file has a NUL"),
        (org_text(description="café").encode("latin-1"), "the file has byte 0xe9"),
    ],
    ids=["utf-16", "utf-16 without bom", "latin-1"],
)
def test_rejects_other_encodings(tmp_path: Path, data: bytes, expected: str) -> None:
    assert expected in refusal(write(tmp_path, data))


def test_rejects_dev_zero_and_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    for path, kind in ((Path("/dev/zero"), "a character device"), (fifo, "a FIFO")):
        with pytest.raises(OrgFileError, match=f"not a regular file but {kind}"):
            load_organisation(path)


def test_a_list_over_several_files_names_file_and_line(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(org_text())
    bad = tmp_path / "bad.yaml"
    bad.write_text(org_text(name="QS1").replace("research", "other") + "    strategy: LEND\n")
    with pytest.raises(OrgFileError) as info:
        load_organisations([good, bad])
    assert str(info.value).startswith(f"{bad}: line 10: shares[0].strategy: duplicate key")


def test_a_file_of_many_problems_lists_a_bounded_number(tmp_path: Path) -> None:
    shares = "".join(f"  - {{name: 's {i}', capacity: {{}}, strategy: X}}\n" for i in range(500))
    with pytest.raises(OrgFileError) as info:
        load_organisation(write(tmp_path, f"organisation: o\nshares:\n{shares}"))
    # every share: its strategy, its name and its empty capacity; then the number of shares
    assert len(info.value.problems) == 3 * 500 + 1
    assert str(info.value).endswith("more problems")
    assert str(info.value).count("\n") == 51


# --- the commands -----------------------------------------------------------------------------


def run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """A command as a user runs it; the timeout only stops a hang from stalling the suite."""
    return subprocess.run(
        args,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300", "NO_COLOR": "1", **env},
    )


def test_quota_org_validate_refuses_every_hostile_input_with_one_line_each(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(ALIAS_BOMB)
    utf16 = tmp_path / "utf16.yaml"
    utf16.write_bytes(org_text().encode("utf-16"))
    files = [str(fifo), "/dev/zero", str(bomb), str(utf16), str(tmp_path)]
    result = run([str(QUOTA), "org", "validate", *files])
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == len(files)  # one problem per file
    for file, problem in zip(files, lines, strict=True):
        assert problem.startswith(f"error: {file}: ")
    assert "Traceback" not in result.stderr


def test_app_py_as_cdk_synth_runs_it_prints_the_problem_and_exits_2(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(ALIAS_BOMB)
    context = f'{{"{ORG_FILE_CONTEXT}": "{bomb}"}}'
    result = run([sys.executable, "app.py"], CDK_CONTEXT_JSON=context)
    assert result.returncode == 2
    assert (
        result.stderr == f"error: {bomb}: line 1: a: anchors (&name) and aliases (*name) are "
        "not allowed (got None); fix: write each value out in full where it is used\n"
    )


def test_app_py_refuses_a_fifo_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "org.yaml"
    os.mkfifo(fifo)
    result = run([sys.executable, "app.py"], CDK_CONTEXT_JSON=f'{{"{ORG_FILE_CONTEXT}": "{fifo}"}}')
    assert result.returncode == 2
    assert "not a regular file but a FIFO" in result.stderr and "Traceback" not in result.stderr


def test_quota_local_serve_refuses_the_alias_bomb_in_one_line(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(ALIAS_BOMB)
    result = run([str(QUOTA), "local", "serve", "--port", "0", "--org", str(bomb)])
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1 and "anchors (&name) and aliases" in result.stderr
    assert "Traceback" not in result.stderr
