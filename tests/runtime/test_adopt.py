"""``quota org import`` and ``quota org diff`` against the emulator over HTTP."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template
from typer.testing import CliRunner, Result

from quota_constructs.commands import app
from quota_constructs.config import load_organisation
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.model import Organisation, Subscribers
from quota_constructs.runtime import QueueClient
from quota_constructs.runtime.adopt import (
    job_record,
    organisation_drift,
    organisation_name_for,
    read_organisation,
)
from quota_constructs.stacks.organisation_stack import OrganisationStack
from tests.constructs.helpers import make_app
from tests.helpers import ORGS_DIR
from tests.runtime.helpers import last_monday, write_org

RESEARCH = ORGS_DIR / "research.yaml"
runner = CliRunner()


def quota(command: str, emu: EmulatorServer) -> Result:
    """Run a ``quota ...`` command line as written, with the emulator's endpoints."""
    args = shlex.split(command)
    assert args[0] == "quota"
    return runner.invoke(app, args[1:], env=emu.env)


def file_part(org: Organisation) -> Organisation:
    """``org`` without what Batch does not store (descriptions, team access, notifications,
    share calendars, training plans)."""
    shares = tuple(
        replace(s, description="", access=None, notifications=Subscribers())
        for s in org.queue.shares
    )
    return replace(
        org,
        description="",
        notifications=Subscribers(),
        queue=replace(org.queue, shares=shares),
        calendars={},
        training_plans=(),
    )


@pytest.fixture
def both() -> Any:
    """Both organisations on an emulator whose clock starts on a Monday, outside research's
    weekend calendar window (read inside it, data-analysis is RESERVE, as scheduled)."""
    with EmulatorServer(org_files=[SEED_DEMO, RESEARCH], start_epoch=last_monday()) as server:
        yield server


def share_resources(org: Organisation) -> dict[str, Any]:
    """Share name -> synthesized AWS::Batch::QuotaShare properties, and every construct path."""
    stack = OrganisationStack(make_app(), f"Quota-{org.name}", organisation=org)
    template = Template.from_stack(stack).to_json()["Resources"]
    return {
        r["Properties"]["QuotaShareName"]: r["Properties"]
        for r in template.values()
        if r["Type"] == "AWS::Batch::QuotaShare"
    }


@pytest.mark.parametrize("path", [SEED_DEMO, RESEARCH], ids=lambda p: p.stem)
def test_import_gives_back_the_provisioned_file(
    both: EmulatorServer, path: Path, tmp_path: Path
) -> None:
    original = load_organisation(path)
    out = tmp_path / "imported.yaml"
    result = quota(f"quota org import --queue {original.name}-queue --output {out}", both)
    assert result.exit_code == 0, result.output
    imported = load_organisation(out)  # the file validates
    assert imported == file_part(original)


def test_imported_file_synthesizes_the_same_shares(both: EmulatorServer, tmp_path: Path) -> None:
    out = tmp_path / "research.yaml"
    assert quota(f"quota org import --queue research-queue --output {out}", both).exit_code == 0
    original, imported = (
        share_resources(load_organisation(RESEARCH)),
        share_resources(load_organisation(out)),
    )
    for props in original.values():  # the team tag comes with 'access', which AWS cannot tell
        props["Tags"] = {k: v for k, v in props.get("Tags", {}).items() if k != "quota-team"}
    for props in imported.values():
        props.setdefault("Tags", {})
    assert imported == original


def test_import_prints_the_identifiers_of_every_resource_with_its_construct(
    both: EmulatorServer,
) -> None:
    result = quota("quota org import --queue seed-demo-queue --json", both)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    emulated = both.organisation("seed-demo")
    found = {(r["resourceType"], r["identifier"]): r["constructPath"] for r in data["resources"]}
    expected = {
        ("AWS::Batch::SchedulingPolicy", emulated.scheduling_policy_arn),
        ("AWS::Batch::ServiceEnvironment", emulated.service_environment_arn),
        ("AWS::Batch::JobQueue", emulated.job_queue_arn),
        *(("AWS::Batch::QuotaShare", arn) for arn in emulated.quota_share_arns.values()),
    }
    assert set(found) == expected
    stack = OrganisationStack(
        make_app(), "Quota-seed-demo", organisation=load_organisation(SEED_DEMO)
    )
    paths = {
        child.node.path: child.cfn_resource_type
        for child in stack.node.find_all()
        if hasattr(child, "cfn_resource_type")
    }
    assert {(paths.get(path), path) for (_, _), path in found.items()} == {
        (kind, path) for (kind, _), path in found.items()
    }


def test_import_writes_the_file_to_stdout_and_the_identifiers_to_stderr(
    both: EmulatorServer,
) -> None:
    result = quota("quota org import --queue research-queue", both)
    assert result.exit_code == 0
    assert result.stdout.startswith("# Imported by `quota org import` from arn:aws:batch:")
    assert "organisation: research" in result.stdout
    assert "import AWS::Batch::QuotaShare QuotaShareArn=arn:" in result.stderr
    assert "carries the team tag quota-team=research/generative" in result.stderr


def test_import_names_the_organisation_after_the_queue_or_name() -> None:
    assert organisation_name_for("research-queue") == "research"
    assert organisation_name_for("my_queue") == "my-queue"
    assert organisation_name_for("42") == "q-42"


def test_rejects_import_of_an_unknown_queue_with_exit_3(both: EmulatorServer) -> None:
    result = quota("quota org import --queue nope-queue", both)
    assert result.exit_code == 3
    assert "nope-queue" in result.stderr and "no such job queue" in result.stderr


def test_rejects_an_invalid_organisation_name(both: EmulatorServer) -> None:
    result = quota("quota org import --queue research-queue --name 9lives", both)
    assert result.exit_code == 2
    assert "--name" in result.stderr and "9lives" in result.stderr


def test_import_notes_what_the_file_cannot_express(both: EmulatorServer) -> None:
    batch = both.client("batch")
    share = both.organisation("seed-demo").quota_share_arns["QS2"]
    batch.tag_resource(resourceArn=share, tags={"cost-centre": "42"})
    batch.update_service_environment(
        serviceEnvironment="seed-demo-training",
        capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 5}],
    )
    client = QueueClient("seed-demo-queue", endpoint_url=both.endpoint_url)
    notes = " | ".join(read_organisation(client).notes)
    assert "QS2 has tags the file cannot express per share (cost-centre=42)" in notes
    assert "service environment capacity is 5 x ml.g5.xlarge" in notes
    assert "3 x ml.g5.xlarge" in notes


# --- diff ---------------------------------------------------------------------------------------


def test_diff_of_a_matching_queue_exits_0(both: EmulatorServer) -> None:
    result = quota(f"quota org diff {SEED_DEMO}", both)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "matches" in result.stderr


def test_diff_shows_a_borrow_limit_changed_on_the_live_queue(both: EmulatorServer) -> None:
    share = both.organisation("seed-demo").quota_share_arns["QS1"]
    both.client("batch").update_quota_share(
        quotaShareArn=share,
        resourceSharingConfiguration={"strategy": "LEND_AND_BORROW", "borrowLimit": 100},
    )
    result = quota(f"quota org diff {SEED_DEMO} --json", both)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["drifted"] is True
    assert data["differences"] == [
        {"quotaShareName": "QS1", "field": "borrowLimit", "file": 200, "queue": 100}
    ]
    table = quota(f"quota org diff {SEED_DEMO}", both)
    assert table.exit_code == 1
    row = next(line for line in table.stdout.splitlines() if "borrowLimit" in line)
    assert "QS1" in row and "200" in row and "100" in row


def test_diff_lists_shares_on_one_side_only_and_queue_fields(
    both: EmulatorServer, tmp_path: Path
) -> None:
    path = write_org(
        tmp_path,
        "seed-demo",
        "  - {name: QS1, capacity: {ml.g5.xlarge: 1}, strategy: LEND_AND_BORROW,"
        " borrow_limit: 200, in_share_preemption: true}\n"
        "  - {name: QS4, capacity: {ml.g5.xlarge: 1}, strategy: LEND}\n",
    )
    result = quota(f"quota org diff {path} --json", both)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["onlyInFile"] == ["QS4"]
    assert data["onlyInQueue"] == ["QS2", "QS3"]
    fields = {d["field"]: (d["file"], d["queue"]) for d in data["differences"]}
    assert fields == {
        "runnableTimeoutMinutes": (None, 60),
        "tags": ({}, {"project": "gpu-quota-sharing"}),
    }


def test_diff_by_queue_name(both: EmulatorServer, tmp_path: Path) -> None:
    path = tmp_path / "renamed.yaml"
    path.write_text(SEED_DEMO.read_text().replace("organisation: seed-demo", "organisation: x"))
    assert quota(f"quota org diff {path} --queue seed-demo-queue", both).exit_code == 0


def test_rejects_diff_of_an_organisation_not_deployed_with_exit_3(
    both: EmulatorServer, tmp_path: Path
) -> None:
    path = write_org(
        tmp_path, "elsewhere", "  - {name: A, capacity: {ml.g5.xlarge: 1}, strategy: LEND}\n"
    )
    result = quota(f"quota org diff {path}", both)
    assert result.exit_code == 3
    assert "/quota/elsewhere/job-queue/arn" in result.stderr


def test_rejects_diff_of_an_invalid_file_with_exit_2(both: EmulatorServer, tmp_path: Path) -> None:
    path = write_org(
        tmp_path, "bad", "  - {name: A, capacity: {ml.g5.xlarge: 0}, strategy: LEND}\n"
    )
    result = quota(f"quota org diff {path}", both)
    assert result.exit_code == 2
    assert "capacity" in result.stderr


# --- pure parts: records and drift --------------------------------------------------------------


def describe(**fields: Any) -> dict[str, Any]:
    base = {
        "jobId": "j1",
        "jobName": "n",
        "quotaShareName": "A",
        "status": "SUCCEEDED",
        "createdAt": 1_000_000,
        "scheduledAt": 1_030_000,
        "schedulingPriority": 5,
        "serviceRequestPayload": json.dumps(
            {"ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 4}}
        ),
        "attempts": [{"startedAt": 1_030_000, "stoppedAt": 1_090_000}],
    }
    return {**base, **fields}


def test_a_record_reads_request_times_and_priority() -> None:
    record = job_record(describe())
    assert (record.instance_type, record.instance_count, record.priority) == (
        "ml.p4d.24xlarge",
        4,
        5,
    )
    assert (record.created_s, record.first_dispatch_s) == (1000, 1030)
    assert (record.run_started_s, record.run_stopped_s) == (1030, 1090)


def test_a_record_of_a_job_placed_again_waits_until_its_first_attempt() -> None:
    attempts = [
        {"startedAt": 1_010_000, "stoppedAt": 1_020_000},
        {"startedAt": 1_040_000, "stoppedAt": 1_050_000},
    ]
    record = job_record(describe(attempts=attempts, scheduledAt=1_040_000))
    assert record.first_dispatch_s == 1010
    assert (record.run_started_s, record.run_stopped_s) == (1040, 1050)


def test_a_record_falls_back_to_capacity_usage_and_refuses_mixed_types() -> None:
    usage = [{"capacityUnit": "ml.g5.xlarge", "quantity": 3.0}]
    record = job_record(describe(serviceRequestPayload="not json", capacityUsage=usage))
    assert (record.instance_type, record.instance_count) == ("ml.g5.xlarge", 3)
    groups = {"ResourceConfig": {"InstanceGroups": [{"InstanceType": "ml.g5.xlarge"}]}}
    mixed = [*usage, {"capacityUnit": "ml.p5.48xlarge", "quantity": 1.0}]
    record = job_record(describe(serviceRequestPayload=json.dumps(groups), capacityUsage=mixed))
    assert (record.instance_type, record.instance_count) == (None, None)


def test_drift_compares_the_effective_borrow_limit() -> None:
    org = load_organisation(SEED_DEMO)
    qs1 = org.queue.shares[0]
    unlimited = replace(org, queue=replace(org.queue, shares=(replace(qs1, borrow_limit=None),)))
    minus_one = replace(org, queue=replace(org.queue, shares=(replace(qs1, borrow_limit=-1),)))
    assert not organisation_drift(unlimited, minus_one).drifted
    assert organisation_drift(org, unlimited).fields[0].field == "borrowLimit"


def test_import_writes_the_resource_mapping_cdk_import_reads(
    both: EmulatorServer, tmp_path: Path
) -> None:
    out, mapping = tmp_path / "seed-demo.yaml", tmp_path / "mapping.json"
    command = (
        f"quota org import --queue seed-demo-queue --output {out} --resource-mapping {mapping}"
    )
    assert quota(command, both).exit_code == 0
    found = json.loads(mapping.read_text())
    stack = OrganisationStack(make_app(), "Quota-seed-demo", organisation=load_organisation(out))
    resources = Template.from_stack(stack).to_json()["Resources"]
    emulated = both.organisation("seed-demo")
    assert {resources[logical]["Type"]: ids for logical, ids in found.items() if "Arn" in ids} == {
        "AWS::Batch::SchedulingPolicy": {"Arn": emulated.scheduling_policy_arn}
    }
    shares = {
        resources[logical]["Properties"]["QuotaShareName"]: ids["QuotaShareArn"]
        for logical, ids in found.items()
        if resources[logical]["Type"] == "AWS::Batch::QuotaShare"
    }
    assert shares == dict(emulated.quota_share_arns)
    assert len(found) == 6
