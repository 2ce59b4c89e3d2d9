"""``quota org plan`` predicts, and ``quota local apply`` rehearses on the emulator, what a deploy
of a changed organisation file does to running and waiting jobs: per kind of change, the plan's
prediction, then the same outcome observed after the apply (issue 40)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from quota_constructs.commands import app
from quota_constructs.config import load_organisation
from quota_constructs.deploy_plan import BATCH_TYPES, JOB_QUEUE, plan_deploy
from quota_constructs.local.apply import ApplyFailed, apply_plan
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.stacks.plan import organisation_resources
from tests.helpers import payload

runner = CliRunner()
SHARES = (
    "  - {name: A, capacity: {ml.g5.xlarge: 2}, strategy: LEND}\n"
    "  - {name: B, capacity: {ml.g5.xlarge: 2}, strategy: RESERVE}\n"
    "  - {name: C, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}\n"
)
DELETED = "Quota share deleted: all jobs in the share are terminated"
LOWERED = "Quota share capacity reduced below current usage; preemption triggered"


def org_file(path: Path, shares: str, name: str = "plantest") -> Path:
    path.write_text(f"organisation: {name}\nshares:\n{shares}")
    return path


def quota(command: str, emu: EmulatorServer) -> Result:
    """A ``quota ...`` command line as written, with the emulator's endpoints."""
    args = shlex.split(command)
    assert args[0] == "quota"
    return runner.invoke(app, args[1:], env={**emu.env, "COLUMNS": "250"})


class Queue:
    """The provisioned organisation with jobs: A runs a1 (priority 50) and a2 (priority 10)
    and has a3 waiting, B runs b1, C runs c1."""

    def __init__(self, emu: EmulatorServer, file: Path) -> None:
        self.emu, self.file = emu, file
        self.batch = emu.client("batch")
        self.arn = emu.organisation("plantest").job_queue_arn
        self.ids: dict[str, str] = {}
        for name, share, priority in [
            ("a1", "A", 50),
            ("a2", "A", 10),
            ("b1", "B", 0),
            ("c1", "C", 0),
        ]:
            self.submit(name, share, priority)
            emu.advance(5)  # started one after the other
        self.submit("a3", "A", 0)
        emu.advance(5)

    def submit(self, name: str, share: str, priority: int = 0) -> str:
        answer = self.batch.submit_service_job(
            jobName=name,
            jobQueue=self.arn,
            quotaShareName=share,
            serviceJobType="SAGEMAKER_TRAINING",
            serviceRequestPayload=payload(runtime_s=86_400),
            schedulingPriority=priority,
        )
        self.ids[name] = str(answer["jobId"])
        return self.ids[name]

    def job(self, name: str) -> dict[str, Any]:
        return dict(self.batch.describe_service_job(jobId=self.ids[name]))

    def states(self) -> dict[str, str]:
        return {name: str(self.job(name)["status"]) for name in self.ids}

    def shares(self) -> list[str]:
        pages = self.batch.list_quota_shares(jobQueue=self.arn)["quotaShares"]
        return [str(s["quotaShareName"]) for s in pages]


@pytest.fixture
def queue(tmp_path: Path) -> Iterator[Queue]:
    file = org_file(tmp_path / "plantest.yaml", SHARES)
    with EmulatorServer(org_files=[file]) as emu:
        live = Queue(emu, file)
        assert live.states() == {
            "a1": "RUNNING",
            "a2": "RUNNING",
            "b1": "RUNNING",
            "c1": "RUNNING",
            "a3": "RUNNABLE",
        }
        yield live


def plan(queue: Queue, file: Path) -> tuple[int, dict[str, Any]]:
    result = quota(f"quota org plan {file} --json", queue.emu)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def apply(queue: Queue, file: Path) -> Result:
    return quota(f"quota local apply {file} --endpoint-url {queue.emu.endpoint_url}", queue.emu)


def changes(data: dict[str, Any]) -> dict[tuple[str, str | None], dict[str, Any]]:
    """(action, share) -> change, for the quota shares."""
    return {
        (c["action"], c["quotaShareName"]): c
        for c in data["changes"]
        if c["resource"] == "AWS::Batch::QuotaShare"
    }


def names(jobs: list[dict[str, Any]] | None) -> list[str]:
    assert jobs is not None
    return sorted(j["jobName"] for j in jobs)


def test_a_rename_creates_the_new_share_then_deletes_the_old_one_with_its_jobs(
    queue: Queue, tmp_path: Path
) -> None:
    renamed = org_file(tmp_path / "renamed.yaml", SHARES.replace("name: B", "name: B2"))
    code, data = plan(queue, renamed)
    assert code == 1 and data["destructive"] is True
    assert [(c["action"], c["quotaShareName"]) for c in data["changes"]] == [
        ("create", "B2"),
        ("delete", "B"),
    ]
    deleted = changes(data)[("delete", "B")]
    assert names(deleted["jobsTerminated"]) == ["b1"]
    assert deleted["fails"] == [] and "cleanup" in deleted["reason"]

    result = apply(queue, renamed)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("CreateQuotaShare B2")
    assert result.stdout.splitlines()[-1].startswith("DeleteQuotaShare")
    assert queue.job("b1")["status"] == "FAILED"
    assert queue.job("b1")["statusReason"] == DELETED
    assert {k: v for k, v in queue.states().items() if k != "b1"} == {
        "a1": "RUNNING",
        "a2": "RUNNING",
        "c1": "RUNNING",
        "a3": "RUNNABLE",
    }
    assert queue.shares() == ["A", "C", "B2"]
    assert quota(f"quota org plan {renamed}", queue.emu).exit_code == 0  # nothing left to do


def test_a_removed_share_is_deleted_terminating_its_running_job(
    queue: Queue, tmp_path: Path
) -> None:
    removed = org_file(tmp_path / "removed.yaml", SHARES.rsplit("  - ", 1)[0])
    code, data = plan(queue, removed)
    assert code == 1
    assert list(changes(data)) == [("delete", "C")]
    assert names(changes(data)[("delete", "C")]["jobsTerminated"]) == ["c1"]
    queue_change = [c for c in data["changes"] if c["resource"] == "AWS::Batch::ServiceEnvironment"]
    assert [c["action"] for c in queue_change] == ["update"]  # sized from the shares

    assert apply(queue, removed).exit_code == 0
    assert queue.job("c1")["statusReason"] == DELETED
    assert queue.states()["b1"] == "RUNNING"
    assert queue.shares() == ["A", "B"]


def test_a_capacity_below_use_preempts_the_lowest_priority_job(
    queue: Queue, tmp_path: Path
) -> None:
    reduced = org_file(
        tmp_path / "reduced.yaml",
        SHARES.replace("{ml.g5.xlarge: 2}, strategy: LEND", "{ml.g5.xlarge: 1}, strategy: LEND"),
    )
    code, data = plan(queue, reduced)
    assert code == 1
    update = changes(data)[("update", "A")]
    assert names(update["jobsPreempted"]) == ["a2"]
    assert update["jobsTerminated"] == []
    assert "gives back 1" in update["reason"]

    assert apply(queue, reduced).exit_code == 0
    a2 = queue.job("a2")
    assert a2["status"] == "RUNNABLE"
    assert [p["statusReason"] for p in a2["preemptionSummary"]["recentPreemptedAttempts"]] == [
        LOWERED
    ]
    assert queue.states()["a1"] == "RUNNING"
    assert queue.job("a1").get("preemptionSummary", {}).get("preemptedAttemptCount", 0) == 0


def test_a_disabled_share_ends_no_job_and_accepts_no_new_one(queue: Queue, tmp_path: Path) -> None:
    disabled = org_file(
        tmp_path / "disabled.yaml",
        SHARES.replace("strategy: LEND}", "strategy: LEND, state: DISABLED}"),
    )
    code, data = plan(queue, disabled)
    assert code == 0 and data["destructive"] is False
    update = changes(data)[("update", "A")]
    assert update["jobsTerminated"] == [] and update["jobsPreempted"] == []
    assert "2 running and 1 waiting job(s) may finish" in update["reason"]

    assert apply(queue, disabled).exit_code == 0
    assert queue.states() == {
        "a1": "RUNNING",
        "a2": "RUNNING",
        "b1": "RUNNING",
        "c1": "RUNNING",
        "a3": "RUNNABLE",
    }
    with pytest.raises(queue.batch.exceptions.ClientException, match="DISABLED"):
        queue.submit("a4", "A")


TWENTY = "".join(
    f"  - {{name: T{i:02d}, capacity: {{ml.g5.xlarge: 1}}, strategy: RESERVE}}\n" for i in range(20)
)


def test_a_rename_in_a_queue_of_20_shares_fails_and_rolls_back(tmp_path: Path) -> None:
    file = org_file(tmp_path / "plantest.yaml", TWENTY)
    renamed = org_file(tmp_path / "renamed.yaml", TWENTY.replace("name: T19", "name: U19"))
    with EmulatorServer(org_files=[file]) as emu:
        live = Queue.__new__(Queue)
        live.emu, live.file, live.batch = emu, file, emu.client("batch")
        live.arn, live.ids = emu.organisation("plantest").job_queue_arn, {}
        live.submit("t19", "T19")
        emu.advance(5)
        code, data = plan(live, renamed)
        assert code == 1 and data["fails"] is True
        create = changes(data)[("create", "U19")]
        assert "21 quota shares" in create["fails"][0]
        assert names(changes(data)[("delete", "T19")]["jobsTerminated"]) == ["t19"]

        result = apply(live, renamed)
        assert result.exit_code == 1
        assert "rolled back" in result.stderr and "CreateQuotaShare" in result.stderr
        assert live.states() == {"t19": "RUNNING"}  # the cleanup never ran
        assert "T19" in live.shares() and "U19" not in live.shares()


def test_a_replaced_queue_fails_as_its_service_environment_serves_one_queue(
    queue: Queue,
) -> None:
    """A queue is replaced only by a template change the file cannot make (a fixed
    ``job_queue_name``, a changed construct id): the planner and the applier are given the
    templates."""
    org = load_organisation(queue.file)
    old = organisation_resources(org)
    new = json.loads(json.dumps(old))
    [queue_id] = [i for i, r in new.items() if r["Type"] == JOB_QUEUE]
    new[queue_id]["Properties"]["JobQueueName"] = "plantest-queue-2"
    the_plan = plan_deploy(old, new, old=org, new=org, jobs=[], resource_types=BATCH_TYPES)
    replaced = the_plan.change(queue_id)
    assert str(replaced.action) == "replace" and "JobQueueName" in replaced.reason
    assert "serves one job queue" in replaced.fails[0]
    shares = [c for c in the_plan.changes if c.quota_share_name]
    assert {(c.quota_share_name, str(c.action)) for c in shares} == {
        ("A", "replace"),
        ("B", "replace"),
        ("C", "replace"),
    }
    assert all("JobQueue changes" in c.reason for c in shares)

    done = queue.emu.organisation("plantest")
    deployed = {
        i: {
            JOB_QUEUE: done.job_queue_arn,
            "AWS::Batch::ServiceEnvironment": done.service_environment_arn,
            "AWS::Batch::SchedulingPolicy": done.scheduling_policy_arn,
        }.get(r["Type"])
        or done.quota_share_arns[r["Properties"]["QuotaShareName"]]
        for i, r in old.items()
        if r["Type"] in BATCH_TYPES
    }

    def call(operation: str, params: Any) -> dict[str, Any]:
        method = "".join(f"_{c.lower()}" if c.isupper() else c for c in operation)
        return dict(getattr(queue.batch, method.lstrip("_"))(**params))

    with pytest.raises(ApplyFailed, match="already connected"):
        apply_plan(the_plan, old, new, deployed, call)
    assert queue.states()["b1"] == "RUNNING"
    assert queue.shares() == ["A", "B", "C"]


# --- bad input ---------------------------------------------------------------------------------


def test_rejects_a_missing_file_naming_it(queue: Queue, tmp_path: Path) -> None:
    result = quota(f"quota org plan {tmp_path / 'nope.yaml'}", queue.emu)
    assert result.exit_code == 2
    assert "FILE" in result.stderr and "nope.yaml: no such file" in result.stderr


def test_rejects_a_missing_against_file_naming_the_option_and_the_fix(
    queue: Queue, tmp_path: Path
) -> None:
    result = quota(f"quota org plan {queue.file} --against {tmp_path / 'old.yaml'}", queue.emu)
    assert result.exit_code == 2
    assert "--against" in result.stderr and "git show" in result.stderr


def test_rejects_against_together_with_an_organisation(queue: Queue) -> None:
    result = quota(f"quota org plan {queue.file} --against {queue.file} -o plantest", queue.emu)
    assert result.exit_code == 2
    assert "--against and -o/--organisation are exclusive" in result.stderr
    assert "fix: pass one of them" in result.stderr


def test_rejects_an_unknown_organisation_with_exit_3_naming_the_option(queue: Queue) -> None:
    result = quota(f"quota org plan {queue.file} -o elsewhere", queue.emu)
    assert result.exit_code == 3
    message = " ".join(result.stderr.split())
    assert "-o/--organisation" in message and "/quota/elsewhere/job-queue/arn" in message
    assert "--against OLD_FILE" in message


def test_a_plan_of_two_files_reads_no_jobs_and_lists_every_resource(
    queue: Queue, tmp_path: Path
) -> None:
    renamed = org_file(tmp_path / "renamed.yaml", SHARES.replace("name: B", "name: B2"))
    result = quota(f"quota org plan {renamed} --against {queue.file} --json", queue.emu)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    deleted = changes(data)[("delete", "B")]
    assert deleted["jobsTerminated"] is None and data["jobsRead"] is False
    assert "AWS::SSM::Parameter" in {c["resource"] for c in data["changes"]}
