"""Pipeline files: the keys of the contract, and one clear error per problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from quota_constructs.pipeline_config import Environment, PipelineFileError, load_pipeline

ROOT = Path(__file__).resolve().parents[2]
KNOWN = {"seed-demo", "research"}
GOOD = """\
connection_arn: arn:aws:codeconnections:eu-west-1:111122223333:connection/abcd
repository: my-org/gpu-quotas
branch: main
environments:
  - {name: staging, account: "111122223333", region: eu-west-1, organisations: [seed-demo]}
  - {name: production, account: "444455556666", region: eu-west-1, organisations: [research], approval: true}
"""  # noqa: E501


@pytest.fixture
def chdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def load(chdir: Path, text: str) -> object:
    (chdir / "pipeline.yaml").write_text(text)
    return load_pipeline("pipeline.yaml", KNOWN)


def test_reads_the_example_pipeline_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    pipeline = load_pipeline("stacks/pipeline.example.yaml", KNOWN)
    assert (pipeline.repository, pipeline.branch) == ("my-org/gpu-quotas", "main")
    assert (pipeline.account, pipeline.region) == ("111122223333", "eu-west-1")
    assert pipeline.environments[1] == Environment(
        "production", "444455556666", "eu-west-1", ("research",), approval=True
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "organisations: [research]",
            "organisations: [reserch]",
            r"line 6: environments\[1\]\.organisations\[0\]: no organisation file has this "
            r"organisation name \(got 'reserch'\); fix: use one of: research, seed-demo",
        ),
        (
            'account: "444455556666"',
            "account: 444455556666",
            r"line 6: environments\[1\]\.account: Input should be a valid string .*fix: write "
            r"text; quote values",
        ),
        (
            'account: "444455556666"',
            'account: "4444"',
            r"environments\[1\]\.account: not a 12-digit AWS account id \(got '4444'\)",
        ),
        (
            "region: eu-west-1, organisations: [research]",
            "region: europe, organisations: [research]",
            r"environments\[1\]\.region: not an AWS region \(got 'europe'\); fix: write e\.g\.",
        ),
        (
            "name: production",
            "name: staging",
            r"environments\[1\]\.name: environments\[0\] has the same name",
        ),
        (
            "arn:aws:codeconnections:eu-west-1:111122223333:connection/abcd",
            "arn:aws:s3:::bucket",
            r"line 1: connection_arn: not a CodeConnections connection ARN",
        ),
        ("my-org/gpu-quotas", "gpu-quotas", r"repository: not an owner/name repository"),
        (
            "branch: main",
            "branch: main\ntrigger: push",
            r"trigger: unknown key.*fix: remove the key",
        ),
    ],
)
def test_rejects_a_bad_pipeline_file_naming_line_field_value_and_fix(
    chdir: Path, old: str, new: str, message: str
) -> None:
    assert old in GOOD
    with pytest.raises(PipelineFileError, match=message) as caught:
        load(chdir, GOOD.replace(old, new))
    assert str(caught.value).startswith("pipeline.yaml: ")


def test_rejects_one_stack_deployed_twice_to_an_account_and_region(chdir: Path) -> None:
    text = GOOD.replace('"444455556666"', '"111122223333"').replace("[research]", "[seed-demo]")
    with pytest.raises(
        PipelineFileError,
        match=r"environments\[1\]\.organisations\[0\]: environments\[0\] deploys the same "
        r"stack Quota-seed-demo",
    ):
        load(chdir, text)


def test_rejects_an_absolute_pipeline_file_path(chdir: Path) -> None:
    (chdir / "pipeline.yaml").write_text(GOOD)
    with pytest.raises(PipelineFileError, match=r"pipeline_file: .*fix: give the path relative"):
        load_pipeline(chdir / "pipeline.yaml", KNOWN)


def test_rejects_a_file_that_is_not_a_mapping(chdir: Path) -> None:
    with pytest.raises(PipelineFileError, match=r"<root>: a pipeline file is a mapping"):
        load(chdir, "- staging\n")
