"""The model's bound on an organisation stack's resources (model/stack_size.py) against the
stacks the constructs synthesize, and the rule that refuses a file over CloudFormation's 500."""

from __future__ import annotations

from pathlib import Path

import pytest
from aws_cdk.assertions import Template

from quota_constructs.config import OrgFileError, load_organisation
from quota_constructs.model.stack_size import MAX_STACK_RESOURCES
from quota_constructs.stacks.organisation_stack import OrganisationStack
from tests.constructs.helpers import make_app
from tests.helpers import ORGS_DIR

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@pytest.mark.parametrize("path", sorted(ORGS_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_the_bound_is_the_synthesized_count_with_monitoring(path: Path) -> None:
    org = load_organisation(path)
    counts = {
        monitoring: len(
            Template.from_stack(
                OrganisationStack(make_app(), "Quota-x", organisation=org, monitoring=monitoring)
            ).to_json()["Resources"]
        )
        for monitoring in (True, False)
    }
    assert counts[False] <= counts[True] == org.stack_resource_bound()


def _calendar_org(shares: int, windows: int) -> str:
    """``shares`` shares of ``windows`` windows each, two a day, each starting and ending at
    a minute of the hour no other window uses (so each edge is a schedule of its own)."""
    lines = ["organisation: busy", "shares:"]
    for number in range(shares):
        lines += [
            f"  - name: s{number}",
            "    capacity: {ml.g5.xlarge: 1}",
            "    strategy: LEND",
            "    schedule:",
        ]
        for window in range(windows):
            hour = 2 + (window % 2) * 10
            lines += [
                f"      - days: [{DAYS[window // 2]}]",
                f'        from: "{hour:02d}:{2 * window + 1:02d}"',
                f'        to: "{hour + 2:02d}:{2 * window + 2:02d}"',
                "        strategy: RESERVE",
            ]
    return "\n".join(lines) + "\n"


def test_rejects_calendars_that_would_overflow_the_stack(tmp_path: Path) -> None:
    path = tmp_path / "busy.yaml"
    path.write_text(_calendar_org(20, 14), encoding="utf-8")
    with pytest.raises(OrgFileError) as caught:
        load_organisation(path)
    (problem,) = caught.value.problems
    assert problem.path == "shares[0].schedule"
    assert f"over CloudFormation's {MAX_STACK_RESOURCES} per stack" in problem.message
    assert "s0 (30 schedules)" in str(problem.value)
    assert problem.fix.startswith("remove at least ")


def test_a_file_within_the_limit_synthesizes(tmp_path: Path) -> None:
    path = tmp_path / "busy.yaml"
    path.write_text(_calendar_org(6, 14), encoding="utf-8")
    org = load_organisation(path)
    stack = OrganisationStack(make_app(), "Quota-busy", organisation=org)
    count = len(Template.from_stack(stack).to_json()["Resources"])
    assert count == org.stack_resource_bound() <= MAX_STACK_RESOURCES
