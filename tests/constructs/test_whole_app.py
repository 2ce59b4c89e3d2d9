"""Whole app: every organisation file, built-in validation on, cdk-nag and cfn-lint clean."""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam

from quota_constructs.config import discover_org_files, load_organisation
from quota_constructs.stacks.organisation_app import add_checks, build_app
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from tests.constructs.helpers import assert_clean, fleet_organisation, make_app
from tests.helpers import ORGS_DIR

SEED = load_organisation(ORGS_DIR / "seed-demo.yaml")


@pytest.mark.slow
def test_every_organisation_synthesizes_clean_with_validation_nag_and_cfn_lint(
    tmp_path: Path,
) -> None:
    files = discover_org_files(ORGS_DIR)
    app = make_app(validation=True, outdir=str(tmp_path))
    build_app(app)  # registers cdk-nag AwsSolutions; a finding would fail synth
    assembly = app.synth()

    expected = {stack_name_for(load_organisation(path)) for path in files}
    assert {s.stack_name for s in assembly.stacks} == expected
    assert_clean(tmp_path, assembly)


@pytest.mark.slow
def test_an_organisation_with_every_team_access_form_synthesizes_clean(tmp_path: Path) -> None:
    """20 teams: created and existing execution roles, created buckets, prefixes of a shared
    bucket, a whole existing bucket."""
    app = make_app(validation=True, outdir=str(tmp_path))
    add_checks(app)
    OrganisationStack(app, "Quota-fleet", organisation=fleet_organisation())
    assert_clean(tmp_path, app.synth())


@pytest.mark.slow
def test_grants_pass_cdk_nag_with_two_specific_acknowledgments(tmp_path: Path) -> None:
    app = make_app(outdir=str(tmp_path))
    stack = OrganisationStack(app, "Quota-seed-demo", organisation=SEED)
    add_checks(app)
    role = iam.Role(stack, "Submitter", assumed_by=iam.AccountRootPrincipal())
    stack.queue.share("QS1").grant_submit(role)
    stack.queue.share("QS1").grant_read(role)
    policy = role.node.find_child("DefaultPolicy")
    cdk.Validations.of(policy).acknowledge(
        cdk.Acknowledgment(
            id="AwsSolutions::AwsSolutions-IAM5[Resource::*]",
            reason="DescribeServiceJob and ListServiceJobs support no resource type",
        ),
        cdk.Acknowledgment(
            id="AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:batch:"
            "<AWS::Region>:<AWS::AccountId>:service-job/*]",
            reason="service-job ids do not exist before SubmitServiceJob creates them",
        ),
    )
    app.synth()  # an unacknowledged finding (e.g. job-queue/*) would raise here
    report = json.loads((tmp_path / "validation-report.json").read_text())
    assert [
        p["conclusion"] for p in report["pluginReports"] if p["pluginName"] == "AwsSolutions"
    ] in (
        [],
        ["success"],
    )
