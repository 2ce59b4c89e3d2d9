"""Team submitters may describe exactly their organisation's training plans (the runtime calls
``sagemaker:DescribeTrainingPlan`` at each submit when plans are set), proven offline by
iam-simulate: their own plans (named ones and ``{arn}`` ones) are allowed, another
organisation's plan in the same account is denied."""

from __future__ import annotations

from pathlib import Path

from aws_cdk.assertions import Template

from quota_constructs.config import load_organisation
from quota_constructs.stacks.organisation_stack import OrganisationStack
from tests.constructs.helpers import make_app
from tests.iam.simulator import (
    ACCOUNT,
    REGION,
    Decision,
    Request,
    TemplateResolver,
    role_principal,
)

DESCRIBE = "sagemaker:DescribeTrainingPlan"
PLANS = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-plan/"
BOUGHT = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-plan/bought-earlier"


def _org(tmp_path: Path, name: str, plans: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"organisation: {name}\n"
        "shares:\n"
        "  - name: llm\n"
        "    capacity: {ml.p5.48xlarge: 2}\n"
        "    strategy: LEND_AND_BORROW\n"
        "    access: {principals: [arn:aws:iam::111122223333:role/Team]}\n"
        f"training_plans:\n{plans}",
        encoding="utf-8",
    )
    return path


def _submitter(tmp_path: Path, name: str, plans: str) -> list[Decision]:
    org = load_organisation(_org(tmp_path, name, plans))
    stack = OrganisationStack(make_app(), f"Quota-{name}", organisation=org)
    r = TemplateResolver(Template.from_stack(stack).to_json())
    (role,) = [
        i for i in r.logical_ids("AWS::IAM::Role") if i.startswith("TeamAccessllmSubmitterRole")
    ]
    requests = [
        Request(DESCRIBE, PLANS + "p5-june"),
        Request(DESCRIBE, BOUGHT),
        Request(DESCRIBE, PLANS + "p5-rival"),
        Request(DESCRIBE, PLANS + "p5-june-2"),
    ]
    return role_principal(r, role).evaluate(requests)


def test_submitter_may_describe_its_organisations_named_and_arn_plans(tmp_path: Path) -> None:
    plans = (
        "  - {name: p5-june, instance_type: ml.p5.48xlarge, instance_count: 2, "
        'start: "2027-06-01T00:00:00Z", duration_hours: 24}\n'
        f"  - {{arn: {BOUGHT}}}\n"
    )
    allowed, bought, rival, longer = _submitter(tmp_path, "plans", plans)
    assert (allowed, bought) == (Decision.ALLOWED, Decision.ALLOWED)
    assert (rival, longer) == (Decision.IMPLICITLY_DENIED, Decision.IMPLICITLY_DENIED)


def test_submitter_of_another_organisation_may_not_describe_them(tmp_path: Path) -> None:
    plans = (
        "  - {name: p5-rival, instance_type: ml.p5.48xlarge, instance_count: 2, "
        'start: "2027-06-01T00:00:00Z", duration_hours: 24}\n'
    )
    june, bought, rival, longer = _submitter(tmp_path, "rival", plans)
    assert (june, bought, longer) == (Decision.IMPLICITLY_DENIED,) * 3
    assert rival is Decision.ALLOWED
