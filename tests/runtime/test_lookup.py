"""Jobs by name as well as id, unknown jobs and shares, shell completion: against the emulator."""

from __future__ import annotations

import pytest
import typer
from typer._completion_classes import BashComplete
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.commands._common import ExitCode
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.runtime import (
    AmbiguousJobName,
    JobNotFound,
    JobStatus,
    QueueClient,
    ShareNotFound,
)
from tests.helpers import ORGS_DIR
from tests.runtime.helpers import runs_for, training_job

runner = CliRunner()


def jobs(emu: EmulatorServer, *args: str) -> tuple[int, str, str]:
    base = ["jobs", "--endpoint-url", emu.endpoint_url, "--organisation", "seed-demo"]
    result = runner.invoke(app, [*base, *args], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def test_resolves_a_job_by_id_arn_and_unique_name(client: QueueClient) -> None:
    handle = client.submit("named-job", "QS3", training_job(), tags=runs_for(600))
    assert client.resolve_job(handle.job_id) == handle.job_id
    assert client.resolve_job(str(handle.job_arn)) == handle.job_id
    assert client.resolve_job("named-job") == handle.job_id
    assert client.find_job("named-job").job_name == "named-job"


def test_rejects_a_name_shared_by_two_active_jobs(client: QueueClient) -> None:
    first = client.submit("twin", "QS1", training_job(), tags=runs_for(600))
    second = client.submit("twin", "QS2", training_job(), tags=runs_for(601))
    with pytest.raises(AmbiguousJobName) as caught:
        client.resolve_job("twin")
    assert {j.job_id for j in caught.value.matches} == {first.job_id, second.job_id}
    assert "pass the job id" in str(caught.value)


def test_a_finished_job_is_found_by_id_but_not_by_name(
    emu: EmulatorServer, client: QueueClient
) -> None:
    handle = client.submit("done-job", "QS3", training_job(), tags=runs_for(60))
    emu.advance(600)
    assert client.describe(handle).status is JobStatus.SUCCEEDED
    assert client.resolve_job(handle.job_id) == handle.job_id
    with pytest.raises(JobNotFound, match=f"finished jobs of that name: {handle.job_id}"):
        client.resolve_job("done-job")


def test_rejects_unknown_ids_and_shares(client: QueueClient) -> None:
    with pytest.raises(JobNotFound, match="no job with id 'no-such-id'"):
        client.resolve_job("no-such-id")
    with pytest.raises(ShareNotFound, match=r"no quota share 'QS9'.*QS1, QS2, QS3"):
        client.check_share("QS9")
    assert client.check_share("QS2").name == "QS2"


def test_rejects_a_job_of_another_queue() -> None:
    with EmulatorServer(org_files=[SEED_DEMO, ORGS_DIR / "research.yaml"]) as emu:
        research = QueueClient.for_organisation(
            "research", endpoint_url=emu.endpoint_url, region="us-east-1"
        )
        share = research.share_names()[0]
        payload = training_job(next(iter(research.check_share(share).capacity)))
        other = research.submit("elsewhere", share, payload, tags=runs_for(600))
        seed = QueueClient.for_organisation(
            "seed-demo", endpoint_url=emu.endpoint_url, region="us-east-1"
        )
        with pytest.raises(JobNotFound, match="is in job queue"):
            seed.resolve_job(other.job_id)


def test_an_organisations_client_reads_its_parameters_with_one_ssm_client(
    emu: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queue's ARN and the training plans come from SSM: one client for both reads, not
    one per read (a client costs tens of CPU-ms, on every command)."""
    built: list[str] = []
    make = QueueClient._client

    def counted(self: QueueClient, service: str, retry: object) -> object:
        built.append(service)
        return make(self, service, retry)  # type: ignore[arg-type]

    monkeypatch.setattr(QueueClient, "_client", counted)
    before = emu.request_counts.get("GetParameter", 0)
    client = QueueClient.for_organisation("seed-demo", endpoint_url=emu.endpoint_url)
    assert built == ["batch", "ssm"]
    assert emu.request_counts["GetParameter"] - before == 2
    assert client.queue.startswith("arn:aws:batch:") and client.organisation == "seed-demo"


def test_cli_accepts_a_job_name(emu: EmulatorServer, client: QueueClient) -> None:
    handle = client.submit("cli-named", "QS3", training_job(), tags=runs_for(600))
    assert jobs(emu, "update", "cli-named", "--priority", "5")[0] == 0
    code, out, err = jobs(emu, "describe", "cli-named")
    assert code == 0, err
    assert handle.job_id in out
    assert client.describe(handle).priority == 5
    code, _, err = jobs(emu, "terminate", "cli-named")
    assert code == 0, err
    assert client.describe(handle).is_terminated


def test_cli_lists_the_jobs_an_ambiguous_name_matches(
    emu: EmulatorServer, client: QueueClient
) -> None:
    first = client.submit("same", "QS1", training_job(), tags=runs_for(600))
    second = client.submit("same", "QS2", training_job(), tags=runs_for(601))
    code, out, err = jobs(emu, "describe", "same")
    assert code == ExitCode.USAGE
    assert first.job_id in err and second.job_id in err and out == ""


@pytest.mark.parametrize(
    "args",
    [
        ("describe", "no-such-id"),
        ("update", "no-such-id", "--priority", "1"),
        ("wait", "no-such-id"),
        ("terminate", "no-such-id"),
        ("ls", "--share", "QS9"),
        ("terminate", "--share", "QS9"),
    ],
)
def test_cli_unknown_job_or_share_exits_3(emu: EmulatorServer, args: tuple[str, ...]) -> None:
    code, out, err = jobs(emu, *args)
    assert code == ExitCode.NOT_FOUND, err
    assert ("no-such-id" in err or "QS9" in err) and "terminated" not in out


def test_terminate_refuses_all_when_one_id_is_unknown(
    emu: EmulatorServer, client: QueueClient
) -> None:
    handle = client.submit("keep-me", "QS3", training_job(), tags=runs_for(600))
    code, _, err = jobs(emu, "terminate", handle.job_id, "no-such-id")
    assert code == ExitCode.NOT_FOUND and "no-such-id" in err
    assert not client.describe(handle).is_terminated


def completions(args: list[str], incomplete: str) -> list[str]:
    """What ``quota`` offers to bash for ``args`` and the word being typed."""
    command = typer.main.get_command(app)
    complete = BashComplete(command, {}, "quota", "_QUOTA_COMPLETE")
    return [item.value for item in complete.get_completions(args, incomplete)]


def test_completes_share_names_and_job_ids(emu: EmulatorServer, client: QueueClient) -> None:
    handle = client.submit("complete-me", "QS2", training_job(), tags=runs_for(600))
    queue = ["jobs", "--endpoint-url", emu.endpoint_url, "-o", "seed-demo"]
    assert completions([*queue, "ls", "--share"], "QS") == ["QS1", "QS2", "QS3"]
    assert completions([*queue, "ls", "--share"], "QS3") == ["QS3"]
    assert completions([*queue, "describe"], handle.job_id[:6]) == [handle.job_id]
    assert completions([*queue, "describe"], "complete") == ["complete-me"]


def test_completion_asks_no_queue_without_queue_options(emu: EmulatorServer) -> None:
    before = dict(emu.request_counts)
    assert completions(["jobs", "--endpoint-url", emu.endpoint_url, "describe"], "") == []
    assert emu.request_counts == before
