"""A share calendar's role proven offline by iam-simulate: it may update its own quota share and
nothing else (no other share, no job, no queue)."""

from __future__ import annotations

from aws_cdk.assertions import Template

from quota_constructs.config import load_organisation
from quota_constructs.stacks.organisation_stack import OrganisationStack
from tests.constructs.helpers import make_app
from tests.helpers import ORGS_DIR
from tests.iam.simulator import (
    ACCOUNT,
    REGION,
    Decision,
    Request,
    TemplateResolver,
    role_principal,
)

UPDATE_SHARE = "batch:UpdateQuotaShare"


def test_the_calendar_role_updates_only_its_own_share() -> None:
    org = load_organisation(ORGS_DIR / "research.yaml")
    template = Template.from_stack(
        OrganisationStack(make_app(), "Quota-research", organisation=org)
    ).to_json()
    r = TemplateResolver(template)
    (role,) = [i for i in r.logical_ids("AWS::IAM::Role") if i.startswith("Calendarsdataanalysis")]
    arns = {
        r.resource(i)["QuotaShareName"]: r.get_att(i, "QuotaShareArn")
        for i in r.logical_ids("AWS::Batch::QuotaShare")
    }
    queue = r.get_att(next(iter(r.logical_ids("AWS::Batch::JobQueue"))), "JobQueueArn")
    job = f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/7d1f0c52-team-job"
    requests = [
        Request(UPDATE_SHARE, arns["data-analysis"]),
        Request(UPDATE_SHARE, arns["generative"]),
        Request(UPDATE_SHARE, arns["recommendation"]),
        Request("batch:UpdateJobQueue", queue),
        Request("batch:SubmitServiceJob", [queue, arns["data-analysis"], job]),
        Request("batch:DeleteQuotaShare", arns["data-analysis"]),
    ]
    decisions = role_principal(r, role).evaluate(requests)
    assert decisions == [Decision.ALLOWED] + [Decision.IMPLICITLY_DENIED] * 5
