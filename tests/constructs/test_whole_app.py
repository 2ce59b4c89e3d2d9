"""Whole app: every organisation file, built-in validation on, cdk-nag and cfn-lint clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cfnlint.api import lint

from quota_constructs.config import discover_org_files, load_organisation
from stacks.organisation_app import build_app
from stacks.organisation_stack import stack_name_for
from tests.constructs.helpers import make_app


@pytest.mark.slow
def test_every_organisation_synthesizes_clean_with_validation_nag_and_cfn_lint(
    tmp_path: Path,
) -> None:
    files = discover_org_files()
    app = make_app(validation=True, outdir=str(tmp_path))
    build_app(app)  # registers cdk-nag AwsSolutions; a finding would fail synth
    assembly = app.synth()

    expected = {stack_name_for(load_organisation(path)) for path in files}
    assert {s.stack_name for s in assembly.stacks} == expected

    report = json.loads((tmp_path / "validation-report.json").read_text())
    failing = [p for p in report["pluginReports"] if p["conclusion"] != "success"]
    assert failing == []
    nag = [
        v
        for p in report["pluginReports"]
        if p["pluginName"] == "AwsSolutions"
        for v in p["violations"]
    ]
    assert nag == []

    for stack in assembly.stacks:
        matches = lint(json.dumps(stack.template), regions=["us-east-1", "eu-west-1"])
        assert [f"{m.rule.id} {m.message} ({m.path})" for m in matches] == [], stack.stack_name
