"""The organisation dashboard: model-generated text, derived per-share counts, real metrics."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from aws_cdk.assertions import Template

from quota_constructs.config import load_organisation
from quota_constructs.constructs.dashboard import (
    METRIC_FILTERS,
    events_pattern,
    log_group_name,
    shares_markdown,
)
from quota_constructs.stacks.organisation_stack import OrganisationStack
from tests.constructs.helpers import make_app
from tests.helpers import ORGS_DIR

SEED = load_organisation(ORGS_DIR / "seed-demo.yaml")


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    stack = OrganisationStack(make_app(), "Quota-seed-demo", organisation=SEED)
    return dict(Template.from_stack(stack).to_json())


def of_type(template: dict[str, Any], resource_type: str) -> list[dict[str, Any]]:
    return [r["Properties"] for r in template["Resources"].values() if r["Type"] == resource_type]


def body(template: dict[str, Any]) -> str:
    """The dashboard body with its CloudFormation references flattened to text."""
    [dashboard] = of_type(template, "AWS::CloudWatch::Dashboard")
    parts = dashboard["DashboardBody"]["Fn::Join"][1]
    return "".join(p if isinstance(p, str) else json.dumps(p) for p in parts)


def test_text_widget_lists_every_share_from_the_model(template: dict[str, Any]) -> None:
    markdown = shares_markdown(SEED)
    assert "| QS1 | 1 x ml.g5.xlarge | LEND_AND_BORROW | 200% | on | ENABLED |" in markdown
    assert "| QS2 | 1 x ml.g5.xlarge | LEND | - | off | ENABLED |" in markdown
    assert "| QS3 | 1 x ml.g5.xlarge | RESERVE | - | off | ENABLED |" in markdown
    assert "Service environment: 3 x ml.g5.xlarge" in markdown
    assert json.dumps(markdown)[1:-1] in body(template)


def test_per_share_counts_come_from_metric_filters_on_logged_events(
    template: dict[str, Any],
) -> None:
    filters = of_type(template, "AWS::Logs::MetricFilter")
    assert {f["FilterPattern"] for f in filters} == set(METRIC_FILTERS.values())
    for metric_filter in filters:
        [transformation] = metric_filter["MetricTransformations"]
        assert transformation["MetricNamespace"] == "QuotaSharing/seed-demo"
        assert transformation["Dimensions"] == [
            {"Key": "QuotaShare", "Value": "$.detail.quotaShareName"}
        ]
    [log_group] = of_type(template, "AWS::Logs::LogGroup")
    assert log_group["LogGroupName"] == log_group_name("seed-demo")
    rules = of_type(template, "AWS::Events::Rule")
    logged = [r for r in rules if r["Targets"][0]["Id"] == "Log"]
    assert len(logged) == 1
    queue_arn = {"Fn::GetAtt": ["TrainingQueueJobQueueBC771182", "JobQueueArn"]}
    assert logged[0]["EventPattern"] == events_pattern(queue_arn)  # type: ignore[arg-type]


def test_graphs_show_each_share_and_the_services_own_metrics(template: dict[str, Any]) -> None:
    text = body(template)
    for share in ("QS1", "QS2", "QS3"):
        assert f'\\"QuotaSharing/seed-demo\\",\\"FailedJobs\\",\\"QuotaShare\\",\\"{share}\\"' in (
            json.dumps(text)
        )
    assert "SEARCH('{AWS/Batch,JobQueueName} JobQueueName=" in text
    assert "{/aws/sagemaker/TrainingJobs,Host}" in text
    assert "NumberOfNotificationsFailed" in text
    assert "ApproximateNumberOfMessagesVisible" in text


def test_without_monitoring_the_stack_is_the_queue_and_its_contract_only() -> None:
    stack = OrganisationStack(make_app(), "Quota-seed-demo", organisation=SEED, monitoring=False)
    template = Template.from_stack(stack).to_json()
    types = {r["Type"] for r in template["Resources"].values()}
    assert types == {
        "AWS::Batch::SchedulingPolicy",
        "AWS::Batch::ServiceEnvironment",
        "AWS::Batch::JobQueue",
        "AWS::Batch::QuotaShare",
        "AWS::SSM::Parameter",
    }
    assert len(template["Resources"]) == 12  # 6 resources, 6 parameters (plans too)
    assert "NotificationTopicArn" not in template["Outputs"]


def test_a_tag_with_an_empty_value_skips_only_the_dashboard() -> None:
    org = replace(SEED, tags={"project": "gpu", "empty": ""})
    stack = OrganisationStack(make_app(), "Quota-seed-demo", organisation=org)
    resources = Template.from_stack(stack).to_json()["Resources"]
    [dashboard] = [r for r in resources.values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
    assert dashboard["Properties"]["Tags"] == [{"Key": "project", "Value": "gpu"}]
    [topic] = [r for r in resources.values() if r["Type"] == "AWS::SNS::Topic"]
    assert {"Key": "empty", "Value": ""} in topic["Properties"]["Tags"]
