"""The pipeline's gate on the emulator: the Plan step's own commands, taken from the synthesized
pipeline, run as CodeBuild runs them against a live queue with jobs running. A rename that
nobody asked for stops the build; the same rename named in ``allow_destructive`` passes, and
is then deployed (``quota local apply``, the emulator's stand-in for the change set). Issue 40."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.local.state.arns import DEFAULT_ACCOUNT, DEFAULT_REGION
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.stacks.organisation_app import PIPELINE_FILE_CONTEXT, build_app
from quota_constructs.stacks.plan_gate import PLAN_FILE, PLAN_READ_ACTIONS, lookup_role_arn
from tests.constructs.helpers import cdk_json_context
from tests.helpers import payload

SHARES = (
    "  - {name: A, capacity: {ml.g5.xlarge: 2}, strategy: LEND}\n"
    "  - {name: B, capacity: {ml.g5.xlarge: 2}, strategy: RESERVE}\n"
)
RENAMED = SHARES.replace("name: B", "name: B2")
ALLOWANCE = (
    "allow_destructive:\n"
    "  - {share: B, action: delete, reason: 'B is now B2; b1 resubmitted there'}\n"
)
PIPELINE = f"""\
connection_arn: arn:aws:codeconnections:eu-west-1:111122223333:connection/abcd
repository: my-org/gpu-quotas
branch: main
environments:
  - {{name: prod, account: "{DEFAULT_ACCOUNT}", region: {DEFAULT_REGION}, organisations: [gate],
     approval: true}}
"""
ORG_FILE = "stacks/orgs/gate.yaml"
BUILD_URL = "https://console.aws.amazon.com/codesuite/codebuild/projects/plan/build/1"
DELETED = "Quota share deleted: all jobs in the share are terminated"


def write_org(checkout: Path, shares: str, extra: str = "") -> Path:
    path = checkout / ORG_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"organisation: gate\nshares:\n{shares}{extra}")
    return path


def plan_step_commands(checkout: Path) -> list[str]:
    """The build commands of the pipeline's ``Plan-gate`` step, as synthesized from the
    checkout (the repository root: ``cdk synth`` runs there)."""
    (checkout / "pipeline.yaml").write_text(PIPELINE)
    app_ = cdk.App(
        context={**cdk_json_context(), PIPELINE_FILE_CONTEXT: "pipeline.yaml"},
        builtin_cloud_formation_validation=False,
    )
    build_app(app_, [Path(ORG_FILE)], checks=False)
    template = Template.from_stack(app_.node.find_child("Quota-Pipeline")).to_json()  # type: ignore[arg-type]
    [pipeline] = [r for r in template["Resources"].values() if r["Type"].endswith("::Pipeline")]
    [plan] = [a for a in pipeline["Properties"]["Stages"][3]["Actions"] if a["Name"] == "Plan-gate"]
    project = template["Resources"][plan["Configuration"]["ProjectName"]["Ref"]]
    return list(
        json.loads(project["Properties"]["Source"]["BuildSpec"])["phases"]["build"]["commands"]
    )


def codebuild(
    commands: list[str], checkout: Path, emu: EmulatorServer
) -> subprocess.CompletedProcess:
    """Run ``commands`` as CodeBuild's build phase does: one shell session (``sh``), stopping
    at the first command that exits non-zero; then print the exported variables."""
    script = "".join(f"{{ {c}\n}} || exit $?\n" for c in commands)
    script += 'printf "PLAN_SUMMARY=%s\\nPLAN_URL=%s\\n" "$PLAN_SUMMARY" "$PLAN_URL"\n'
    env = {
        **os.environ,
        **emu.env,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "AWS_CONFIG_FILE": os.devnull,
        "CODEBUILD_BUILD_URL": BUILD_URL,
        "COLUMNS": "250",
    }
    return subprocess.run(
        ["sh", "-c", script], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
    )


def exported(result: subprocess.CompletedProcess) -> dict[str, str]:
    lines = result.stdout.splitlines()[-2:]
    return dict(line.split("=", 1) for line in lines)


class Live:
    """The deployed organisation on the emulator: A runs a1, B runs b1."""

    def __init__(self, emu: EmulatorServer, checkout: Path) -> None:
        self.emu, self.checkout = emu, checkout
        self.batch = emu.client("batch")
        self.arn = emu.organisation("gate").job_queue_arn
        self.ids = {}
        for name, share in (("a1", "A"), ("b1", "B")):
            answer = self.batch.submit_service_job(
                jobName=name,
                jobQueue=self.arn,
                quotaShareName=share,
                serviceJobType="SAGEMAKER_TRAINING",
                serviceRequestPayload=payload(runtime_s=86_400),
            )
            self.ids[name] = str(answer["jobId"])
            emu.advance(5)
        emu.emulator.identities.add_roles([lookup_role_arn(DEFAULT_ACCOUNT, DEFAULT_REGION)])

    def job(self, name: str) -> dict[str, Any]:
        return dict(self.batch.describe_service_job(jobId=self.ids[name]))

    def shares(self) -> list[str]:
        listed = self.batch.list_quota_shares(jobQueue=self.arn)["quotaShares"]
        return [str(s["quotaShareName"]) for s in listed]


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    checkout = tmp_path / "checkout"
    deployed = write_org(checkout, SHARES)
    monkeypatch.chdir(checkout)
    with EmulatorServer(org_files=[deployed]) as emu:
        queue = Live(emu, checkout)
        assert [queue.job(n)["status"] for n in ("a1", "b1")] == ["RUNNING", "RUNNING"]
        yield queue


def test_the_plan_step_stops_a_rename_nobody_asked_for_then_deploys_it_once_allowed(
    live: Live,
) -> None:
    commands = plan_step_commands(live.checkout)

    # the pull request renames B: the Plan step fails, nothing is deployed
    write_org(live.checkout, RENAMED)
    stopped = codebuild(commands, live.checkout, live.emu)
    assert stopped.returncode == 1, stopped.stderr
    message = " ".join(stopped.stderr.split())
    assert "blocked: DELETE quota share B (terminates 1 job(s): b1) is destructive" in message
    assert "add `- {share: B, action: delete, reason: <why>}` to allow_destructive" in message
    plan = json.loads((live.checkout / PLAN_FILE).read_text())
    assert plan["blocked"] is True and plan["destructive"] is True
    assert json.loads(stopped.stdout)["blocked"] is True  # the plan is in the build's log
    assert "PLAN_SUMMARY" not in stopped.stdout  # the approval is never reached
    assert live.job("b1")["status"] == "RUNNING" and live.shares() == ["A", "B"]

    # the same rename, named as intended: the Plan step passes and the approver sees it
    write_org(live.checkout, RENAMED, ALLOWANCE)
    passed = codebuild(commands, live.checkout, live.emu)
    assert passed.returncode == 0, passed.stderr
    assert "allowed: DELETE quota share B (terminates 1 job(s): b1)" in passed.stderr
    variables = exported(passed)
    assert variables["PLAN_URL"] == BUILD_URL
    assert variables["PLAN_SUMMARY"] == (
        "2 change(s): 1 create, 1 delete; every destructive change allowed; DELETE quota share "
        "B (terminates 1 job(s)): B is now B2; b1 resubmitted there"
    )
    [deleted] = [c for c in json.loads((live.checkout / PLAN_FILE).read_text())["changes"]
                 if c["action"] == "delete"]  # fmt: skip
    assert deleted["allowed"] is True and [j["jobName"] for j in deleted["jobsTerminated"]] == [
        "b1"
    ]

    # deployed as the plan said (the change set, rehearsed on the emulator)
    applied = CliRunner().invoke(
        app,
        ["local", "apply", ORG_FILE, "--endpoint-url", live.emu.endpoint_url],
        env=live.emu.env,
    )
    assert applied.exit_code == 0, applied.output
    assert live.shares() == ["A", "B2"]
    assert live.job("b1")["statusReason"] == DELETED
    assert live.job("a1")["status"] == "RUNNING"

    # the next push: nothing left to allow; the allowance is reported, not blocking
    again = codebuild(commands, live.checkout, live.emu)
    assert again.returncode == 0, again.stderr
    assert "warning: allow_destructive[0] (delete of quota share B) names no destructive" in (
        " ".join(again.stderr.split())
    )
    assert exported(again)["PLAN_SUMMARY"] == "no changes"


def test_the_plan_step_makes_only_the_reads_its_session_policy_allows(live: Live) -> None:
    commands = plan_step_commands(live.checkout)
    write_org(live.checkout, RENAMED, ALLOWANCE)
    before = live.emu.emulator.request_counts
    result = codebuild(commands, live.checkout, live.emu)
    assert result.returncode == 0, result.stderr
    after = live.emu.emulator.request_counts
    called = {name for name, count in after.items() if count > before.get(name, 0)}
    services = {"GetParameter": "ssm", "AssumeRole": "sts"}
    assert {f"{services.get(n, 'batch')}:{n}" for n in called} == {
        *PLAN_READ_ACTIONS,
        "sts:AssumeRole",  # by the step's own role, before the session policy applies
    }


def test_a_first_deploy_passes_the_gate_with_every_resource_created(live: Live) -> None:
    """The Plan step runs with ``--absent-ok``: an organisation not deployed yet (no SSM
    parameter) is planned as created, where a plain ``quota org plan`` exits 3."""
    fresh = write_org(live.checkout, SHARES).with_name("fresh.yaml")
    fresh.write_text("organisation: fresh\nshares:\n" + SHARES)
    runner = CliRunner()
    absent = runner.invoke(app, ["org", "plan", str(fresh), "--json"], env=live.emu.env)
    assert absent.exit_code == 3
    result = runner.invoke(
        app, ["org", "plan", str(fresh), "--json", "--absent-ok"], env=live.emu.env
    )
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert {c["action"] for c in plan["changes"]} == {"create"}
    assert (plan["blocked"], plan["destructive"]) == (False, False)
    assert plan["notes"][0] == (
        "organisation fresh is not deployed: its first deploy creates every resource"
    )


def test_the_table_marks_an_allowed_change_and_exits_0(live: Live) -> None:
    renamed = write_org(live.checkout, RENAMED, ALLOWANCE)
    result = CliRunner().invoke(
        app, ["org", "plan", str(renamed)], env={**live.emu.env, "COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    assert "DELETE (allowed)" in result.stdout
    assert "allowed: DELETE quota share B (terminates 1 job(s): b1) (allow_destructive: B is " in (
        " ".join(result.stderr.split())
    )
