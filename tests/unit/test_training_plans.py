"""``training_plans:`` in organisation files: validated by the model, every problem named."""

from __future__ import annotations

from pathlib import Path

import botocore.session
import pytest

from quota_constructs.config import OrganisationFile, OrgFileError, load_organisation
from quota_constructs.model import (
    TrainingPlanSpec,
    jobs_to_stop,
    plan_capacity_at,
    plan_capacity_edges,
)
from quota_constructs.model.training_plan import PLAN_INSTANCE_TYPES

HEAD = """organisation: plans
shares:
  - name: llm
    capacity: {ml.p5.48xlarge: CAP}
    strategy: LEND_AND_BORROW
training_plans:
"""
PLAN = (
    "  - {name: p5-june, instance_type: ml.p5.48xlarge, instance_count: 8, "
    'start: "2027-06-01T00:00:00Z", duration_hours: 336}\n'
)


def write(tmp_path: Path, plans: str, cap: int = 8) -> Path:
    path = tmp_path / "org.yaml"
    path.write_text(HEAD.replace("CAP", str(cap)) + plans, encoding="utf-8")
    return path


def problems(tmp_path: Path, plans: str, cap: int = 8) -> list[str]:
    with pytest.raises(OrgFileError) as caught:
        load_organisation(write(tmp_path, plans, cap))
    return [str(p) for p in caught.value.problems]


def test_a_plan_loads_with_its_window_and_round_trips(tmp_path: Path) -> None:
    org = load_organisation(write(tmp_path, PLAN))
    (plan,) = org.training_plans
    assert plan == TrainingPlanSpec("p5-june", "ml.p5.48xlarge", 8, "2027-06-01T00:00:00Z", 336)
    assert plan.end_s - plan.start_s == 336 * 3600
    assert plan.active_at(plan.start_s) and not plan.active_at(plan.end_s)
    assert org.plans_of("ml.p5.48xlarge") == (plan,)
    again = OrganisationFile.from_organisation(org).to_organisation()
    assert again.training_plans == org.training_plans


def test_an_existing_plan_by_arn_alone(tmp_path: Path) -> None:
    arn = "arn:aws:sagemaker:us-east-1:111122223333:training-plan/p5-june"
    org = load_organisation(write(tmp_path, f"  - {{arn: '{arn}'}}\n"))
    assert org.training_plans[0].by_arn


def test_shares_holding_more_than_the_plan_is_refused_with_the_fix(tmp_path: Path) -> None:
    assert problems(tmp_path, PLAN, cap=10) == [
        "line 7: training_plans[0].instance_count: the shares hold 10 x ml.p5.48xlarge, more "
        "than the 8 instance(s) of its plans (got 8); fix: lower the shares' capacity of "
        "ml.p5.48xlarge to 8 or reserve 10 instances"
    ]


def test_every_bad_field_of_a_plan_is_named_in_one_run(tmp_path: Path) -> None:
    bad = (
        '  - {name: "-x", instance_type: ml.p5.48xlarg, instance_count: 0, start: "2027-06-01", '
        "duration_hours: 0}\n"
    )
    found = problems(tmp_path, bad)
    assert [p.split(":")[1].strip() for p in found] == [
        "training_plans[0].name",
        "training_plans[0].instance_type",
        "training_plans[0].instance_count",
        "training_plans[0].start",
        "training_plans[0].duration_hours",
    ]
    assert found[3] == (
        "line 7: training_plans[0].start: not an ISO 8601 UTC time (got '2027-06-01'); fix: "
        "write it like 2027-06-01T00:00:00Z (quoted)"
    )


def test_name_and_arn_together_and_a_bad_arn_and_duplicates(tmp_path: Path) -> None:
    arn = "arn:aws:sagemaker:us-east-1:111122223333:training-plan/p5"
    plans = PLAN + PLAN + f"  - {{name: y, arn: '{arn}'}}\n  - {{arn: nope}}\n"
    assert problems(tmp_path, plans) == [
        "line 8: training_plans[1].name: training_plans[0] has the same name (got 'p5-june'); "
        "fix: list each plan once",
        f"line 9: training_plans[2].arn: a plan is given either by name (with its instances and "
        f"window) or by ARN (got '{arn}'); fix: keep only 'arn' for an existing plan, or drop "
        "'arn'",
        "line 10: training_plans[3].arn: not a SageMaker training plan ARN (got 'nope'); fix: "
        "e.g. arn:aws:sagemaker:us-east-1:111122223333:training-plan/p5-june",
    ]


def test_a_plan_of_a_type_no_share_holds(tmp_path: Path) -> None:
    plan = PLAN.replace("ml.p5.48xlarge", "ml.p4d.24xlarge")
    assert problems(tmp_path, plan) == [
        "line 7: training_plans[0].instance_type: no share has capacity of this type, so no job "
        "could use the plan (got 'ml.p4d.24xlarge'); fix: give the teams that use it capacity of "
        "ml.p4d.24xlarge"
    ]


def test_a_type_plans_cannot_reserve_is_named(tmp_path: Path) -> None:
    (found,) = problems(tmp_path, PLAN.replace("ml.p5.48xlarge", "ml.g5.xlarge"))
    assert found.startswith(
        "line 7: training_plans[0].instance_type: SageMaker training plans do not reserve this "
        "type (they reserve ml.p4d.24xlarge, ml.p5.48xlarge,"
    )
    assert found.endswith(
        "(got 'ml.g5.xlarge'); fix: reserve one of those types, or run this type on demand (no "
        "plan)"
    )


def test_the_plan_types_are_botocores() -> None:
    model = botocore.session.get_session().get_service_model("sagemaker")
    assert tuple(model.shape_for("ReservedCapacityInstanceType").enum) == PLAN_INSTANCE_TYPES


def test_plan_capacity_exists_from_start_until_30_minutes_before_the_end() -> None:
    june = TrainingPlanSpec("a", "ml.p5.48xlarge", 8, "2027-06-01T00:00:00Z", duration_hours=2)
    later = TrainingPlanSpec("b", "ml.p5.48xlarge", 2, "2027-06-01T01:00:00Z", duration_hours=2)
    plans = [june, later]
    at = june.start_s
    assert [plan_capacity_at(plans, "ml.p5.48xlarge", at + h * 3600) for h in (-0.01, 0, 1)] == [
        0,
        8,
        10,
    ]
    assert plan_capacity_at(plans, "ml.p5.48xlarge", at + 1.5 * 3600) == 2  # june stopped
    assert plan_capacity_at(plans, "ml.p5.48xlarge", at + 1.5 * 3600, stop_before_end_s=0) == 10
    assert plan_capacity_at(plans, "ml.p4d.24xlarge", at) == 0
    assert plan_capacity_edges(plans) == [
        (at, "ml.p5.48xlarge"),
        (at + 3600, "ml.p5.48xlarge"),
        (at + 1.5 * 3600, "ml.p5.48xlarge"),
        (at + 2.5 * 3600, "ml.p5.48xlarge"),
    ]


def test_when_plan_capacity_drops_the_latest_started_jobs_stop_until_the_rest_fit() -> None:
    running = [("a", 4, 10.0), ("b", 2, 30.0), ("c", 2, 20.0)]
    assert jobs_to_stop(running, 8) == []
    assert jobs_to_stop(running, 5) == ["b", "c"]
    assert jobs_to_stop(running, 0) == ["b", "c", "a"]


def test_rejects_a_plan_starting_before_plans_were_sold(tmp_path: Path) -> None:
    plan = PLAN.replace("2027-06-01T00:00:00Z", "2001-06-01T00:00:00Z")
    assert problems(tmp_path, plan) == [
        "line 7: training_plans[0].start: a training plan starts on or after "
        "2024-01-01T00:00:00Z (SageMaker sold none earlier) (got '2001-06-01T00:00:00Z'); "
        "fix: write the plan's real start, e.g. 2027-06-01T00:00:00Z"
    ]


def test_rejects_a_plan_ending_after_year_9999(tmp_path: Path) -> None:
    plan = PLAN.replace("2027-06-01T00:00:00Z", "9999-12-01T00:00:00Z").replace(
        "duration_hours: 336", "duration_hours: 8760"
    )
    assert problems(tmp_path, plan) == [
        "line 7: training_plans[0].duration_hours: the plan would end after "
        "9999-12-31T00:00:00Z (got 8760); fix: check the start's year and the duration "
        "(at most 87600 hours)"
    ]


def test_a_plan_that_has_ended_warns_at_synth(tmp_path: Path) -> None:
    from aws_cdk.assertions import Annotations, Match

    from quota_constructs.stacks.organisation_stack import OrganisationStack
    from tests.constructs.helpers import make_app

    org = load_organisation(write(tmp_path, PLAN.replace("2027-06-01", "2024-06-01")))
    stack = OrganisationStack(make_app(), "Quota-plans", organisation=org)
    Annotations.from_stack(stack).has_warning(
        "*",
        Match.string_like_regexp(
            r"training plan p5-june ended at 2024-06-15T00:00:00Z: jobs of ml\.p5\.48xlarge "
            "run on demand"
        ),
    )
