"""``allow_destructive`` in organisation files (model/allowance.py, config.py) and the gate the
planner applies with it (deploy_plan: allowed, blocked, unused allowances; issue 40)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from quota_constructs.config import OrganisationFile, OrgFileError, load_organisation
from quota_constructs.deploy_plan import LiveJob, plan_json, plan_summary
from quota_constructs.model import DestructiveAllowance, JobStatus, Organisation
from quota_constructs.stacks.plan import plan_organisation_change

SHARES = """\
organisation: gate
shares:
  - {name: A, capacity: {ml.g5.xlarge: 2}, strategy: LEND}
  - {name: B, capacity: {ml.g5.xlarge: 2}, strategy: RESERVE}
"""


def problems_of(tmp_path: Path, allowances: str, shares: str = SHARES) -> list[str]:
    path = tmp_path / "gate.yaml"
    path.write_text(shares + "allow_destructive:\n" + allowances)
    with pytest.raises(OrgFileError) as error:
        load_organisation(path)
    return [str(p) for p in error.value.problems]


def test_a_valid_allowance_is_read_into_the_organisation(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text(
        SHARES.replace("name: B", "name: B2")
        + "allow_destructive:\n  - {share: B, action: delete, reason: renamed to B2}\n"
    )
    org = load_organisation(path)
    assert org.allow_destructive == (
        DestructiveAllowance(action="delete", reason="renamed to B2", share="B"),
    )
    again = OrganisationFile.from_organisation(org).to_organisation()
    assert again.allow_destructive == org.allow_destructive


def test_rejects_an_allowance_without_a_reason_naming_the_field_and_the_fix(
    tmp_path: Path,
) -> None:
    [problem] = problems_of(tmp_path, "  - {share: C, action: delete}\n")
    assert problem.startswith("line 6: allow_destructive[0].reason: every allowance says why")
    assert "(got None)" in problem and "fix: add reason: e.g." in problem


def test_rejects_a_blank_reason(tmp_path: Path) -> None:
    [problem] = problems_of(tmp_path, "  - {share: C, action: delete, reason: ' '}\n")
    assert "allow_destructive[0].reason: every allowance says why" in problem


def test_rejects_disable_explaining_the_gate_never_stops_it(tmp_path: Path) -> None:
    [problem] = problems_of(tmp_path, "  - {share: A, action: disable, reason: drain}\n")
    assert "allow_destructive[0].action: a share set to DISABLED ends no job" in problem
    assert "(got 'disable'); fix: remove this allowance" in problem


def test_rejects_an_unknown_action_listing_the_valid_ones(tmp_path: Path) -> None:
    [problem] = problems_of(tmp_path, "  - {share: A, action: destroy, reason: x}\n")
    assert "not a destructive action the gate stops (got 'destroy')" in problem
    assert "fix: use one of replace, delete, reduce" in problem


def test_rejects_both_share_and_logical_id(tmp_path: Path) -> None:
    [problem] = problems_of(
        tmp_path, "  - {share: A, logical_id: Queue1, action: replace, reason: x}\n"
    )
    assert "allow_destructive[0]: an allowance names one resource" in problem
    assert "fix: give exactly one of share or logical_id" in problem


def test_rejects_a_logical_id_that_is_not_one(tmp_path: Path) -> None:
    [problem] = problems_of(tmp_path, "  - {logical_id: Job-Queue, action: replace, reason: x}\n")
    assert "allow_destructive[0].logical_id: CloudFormation logical IDs are 1-255" in problem
    assert "(got 'Job-Queue')" in problem and "quota org plan FILE --json" in problem


def test_rejects_deleting_a_share_the_file_still_has(tmp_path: Path) -> None:
    [problem] = problems_of(tmp_path, "  - {share: A, action: delete, reason: x}\n")
    assert "allow_destructive[0].share: this quota share is still in the file" in problem
    assert "(got 'A')" in problem and "write action: replace" in problem


def test_rejects_reducing_a_share_the_file_does_not_have(tmp_path: Path) -> None:
    [problem] = problems_of(tmp_path, "  - {share: Z, action: reduce, reason: x}\n")
    assert "no quota share of the file has this name, so a deploy cannot reduce it" in problem
    assert "(got 'Z'); fix: write action: delete" in problem


def test_rejects_the_same_allowance_twice(tmp_path: Path) -> None:
    [problem] = problems_of(
        tmp_path,
        "  - {share: C, action: delete, reason: x}\n  - {share: C, action: delete, reason: y}\n",
    )
    assert "line 7: allow_destructive[1]: allow_destructive[0] allows the same change" in problem


def test_reports_every_bad_allowance_at_once_with_a_misspelt_key(tmp_path: Path) -> None:
    found = problems_of(
        tmp_path,
        "  - {shere: C, action: delete, reason: x}\n"
        "  - {share: A, action: disable, reason: x}\n"
        "  - {share: C, action: delete}\n",
    )
    assert any("allow_destructive[0].shere: unknown key" in p and "'share'" in p for p in found)
    assert any("allow_destructive[1].action" in p for p in found)
    assert any("allow_destructive[2].reason" in p for p in found)


# --- the gate in the planner -------------------------------------------------------------------

BASE = """\
organisation: gate
shares:
  - {name: A, capacity: {ml.g5.xlarge: 2}, strategy: LEND}
  - {name: B, capacity: {ml.g5.xlarge: 2}, strategy: RESERVE}
  - {name: C, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}
"""
JOBS = [
    LiveJob("j1", "b1", "B", JobStatus.RUNNING, {"ml.g5.xlarge": 1}),
    LiveJob("j2", "a1", "A", JobStatus.RUNNING, {"ml.g5.xlarge": 1}),
    LiveJob("j3", "a2", "A", JobStatus.RUNNING, {"ml.g5.xlarge": 1}),
]


def org(tmp_path: Path, text: str, name: str = "new.yaml") -> Organisation:
    path = tmp_path / name
    path.write_text(text)
    return load_organisation(path)


def test_a_rename_without_an_allowance_is_blocked(tmp_path: Path) -> None:
    old = org(tmp_path, BASE, "old.yaml")
    new = org(tmp_path, BASE.replace("name: B", "name: B2"))
    plan = plan_organisation_change(old, new, jobs=JOBS)
    assert plan.destructive and plan.blocked
    data = plan_json(plan)
    [deleted] = [c for c in data["changes"] if c["quotaShareName"] == "B"]
    assert (deleted["action"], deleted["allowed"], deleted["allowedBecause"]) == (
        "delete",
        False,
        None,
    )
    assert data["blocked"] is True and data["unusedAllowances"] == []
    assert (
        "BLOCKED" in data["summary"]
        and "DELETE quota share B (terminates 1 job(s)) NOT" in (data["summary"])
    )


def test_the_same_rename_named_in_allow_destructive_passes_the_gate(tmp_path: Path) -> None:
    old = org(tmp_path, BASE, "old.yaml")
    new = org(
        tmp_path,
        BASE.replace("name: B", "name: B2")
        + "allow_destructive:\n  - {share: B, action: delete, reason: renamed; b1 restarts}\n",
    )
    plan = plan_organisation_change(old, new, jobs=JOBS)
    assert plan.destructive and not plan.blocked
    data = plan_json(plan)
    [deleted] = [c for c in data["changes"] if c["quotaShareName"] == "B"]
    assert (deleted["allowed"], deleted["allowedBecause"]) == (True, "renamed; b1 restarts")
    assert data["destructive"] is True and data["blocked"] is False
    assert "DELETE quota share B (terminates 1 job(s)): renamed; b1 restarts" in data["summary"]


def test_a_reduction_below_use_is_allowed_by_reduce_not_by_delete(tmp_path: Path) -> None:
    old = org(tmp_path, BASE, "old.yaml")
    lower = BASE.replace("{ml.g5.xlarge: 2}, strategy: LEND", "{ml.g5.xlarge: 1}, strategy: LEND")
    reduce = org(
        tmp_path, lower + "allow_destructive:\n  - {share: A, action: reduce, reason: r}\n"
    )
    plan = plan_organisation_change(old, reduce, jobs=JOBS)
    [reduced] = plan.share_changes("A")
    assert not plan.blocked and reduced.allowed and reduced.jobs_preempted
    replaced = replace(reduce, allow_destructive=(DestructiveAllowance("replace", "r", "A"),))
    plan = plan_organisation_change(old, replaced, jobs=JOBS)
    assert plan.blocked
    assert [(i, a.action) for i, a in plan.unused_allowances] == [(0, "replace")]


def test_an_allowance_naming_no_change_is_reported_unused_and_does_not_block(
    tmp_path: Path,
) -> None:
    old = org(tmp_path, BASE, "old.yaml")
    new = org(tmp_path, BASE + "allow_destructive:\n  - {share: D, action: delete, reason: x}\n")
    plan = plan_organisation_change(old, new, jobs=JOBS)
    assert not plan.blocked and not plan.changes
    data = plan_json(plan)
    assert data["unusedAllowances"] == [
        {"path": "allow_destructive[0]", "quotaShareName": "D", "action": "delete", "reason": "x"}
    ]
    assert plan_summary(plan) == "no changes"


def test_no_allowance_lets_a_failing_change_through(tmp_path: Path) -> None:
    twenty = "".join(
        f"  - {{name: T{i:02d}, capacity: {{ml.g5.xlarge: 1}}, strategy: RESERVE}}\n"
        for i in range(20)
    )
    old = org(tmp_path, "organisation: gate\nshares:\n" + twenty, "old.yaml")
    new = org(
        tmp_path,
        "organisation: gate\nshares:\n"
        + twenty.replace("name: T19", "name: U19")
        + "allow_destructive:\n  - {share: T19, action: delete, reason: renamed}\n",
    )
    plan = plan_organisation_change(old, new, jobs=[])
    assert plan.fails and plan.blocked
    assert plan.unused_allowances == ()  # it names the delete, which is allowed
    assert [c.quota_share_name for c in plan.changes if c.blocked] == ["U19"]
