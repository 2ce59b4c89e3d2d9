"""``quota`` at a terminal against the emulator: tables fit 80-200 columns with identifiers
whole, ``quota local why`` by job name with its preemptor named, ``wait`` on a virtual clock."""

from __future__ import annotations

import json
import signal

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.commands.jobs import _jobs_table, _priorities
from quota_constructs.commands.org import access_table, organisation_table
from quota_constructs.commands.status import status_table
from quota_constructs.config import load_organisation
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.runtime import QueueClient
from quota_constructs.runtime.status import read_status
from tests.helpers import assert_whole, rendered, start_serve, wait_for_endpoint
from tests.runtime.helpers import jobs, submit

WIDTHS = (80, 100, 120, 200)
LONG_NAME = "nightly-finetune-llama-70b-with-a-long-name"


@pytest.fixture
def busy(emu: EmulatorServer, client: QueueClient) -> QueueClient:
    """Every seed-demo share in use, QS1 borrowing and a job waiting in each of QS1 and QS2."""
    for name, share in (("qs1-a", "QS1"), (LONG_NAME, "QS1"), ("qs1-c", "QS1"), ("qs3", "QS3")):
        submit(emu, name, share)
    emu.advance(10)
    submit(emu, "qs2-a", "QS2")
    emu.advance(10)
    return client


@pytest.mark.parametrize("width", WIDTHS)
def test_status_keeps_every_identifier_whole(busy: QueueClient, width: int) -> None:
    view = read_status(busy)
    lines = rendered(status_table(view), width)
    heads = {row.head.job_name for row in view.rows if row.head}
    assert heads, "a share has a waiting head job"
    shown = {"QS1", "QS2", "QS3", "ml.g5.xlarge", *heads}
    hidden = "\n".join(lines).split("not shown: ")[-1]
    if "strategy" not in hidden:  # the last column a narrow terminal hides
        shown |= {"LEND_AND_BORROW", "RESERVE"}
    assert_whole(lines, shown, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_jobs_ls_keeps_ids_and_names_whole(busy: QueueClient, width: int) -> None:
    listed = busy.list()
    ids = {job.job_id for job in listed} | {job.job_name for job in listed}
    assert_whole(rendered(_jobs_table(listed, "jobs"), width), ids | {LONG_NAME}, width)


def test_a_narrow_terminal_hides_columns_in_order_and_wide_shows_them(busy: QueueClient) -> None:
    text = " ".join(" ".join(rendered(status_table(read_status(busy)), 100)).split())
    assert "not shown: lent, borrowed, idle" in text and "--wide shows them" in text
    wide = "\n".join(rendered(status_table(read_status(busy), wide=True), 100))
    assert "not shown" not in wide and "borrowed" in wide and "lent" in wide


def test_columns_that_cannot_fit_side_by_side_print_as_records(busy: QueueClient) -> None:
    lines = rendered(status_table(read_status(busy)), 80)
    assert any(line.startswith("│ head job ") and LONG_NAME in line for line in lines)
    assert any(line.startswith("│ strategy ") and "LEND_AND_BORROW" in line for line in lines)
    listed = busy.list()
    table = _jobs_table(listed, "jobs", priorities=_priorities(busy, listed))
    assert "priority" in "\n".join(rendered(table, 100))


@pytest.mark.parametrize("width", WIDTHS)
def test_organisation_tables_keep_identifiers_whole(width: int) -> None:
    org = load_organisation("stacks/orgs/research.yaml")
    names = {share.name for share in org.queue.shares}
    types = {t for share in org.queue.shares for t in share.capacity}
    strategies = {share.strategy.value for share in org.queue.shares}
    assert_whole(rendered(organisation_table(org), width), names | types | strategies, width)
    access = access_table(org)
    if access is not None:
        assert_whole(rendered(access, width), names, width)


def test_ls_wide_prints_each_jobs_priority(emu: EmulatorServer) -> None:
    submit(emu, "prioritised", "QS2", "--priority", "7")
    code, out, err = jobs(emu, "ls", "--wide")
    assert code == 0, err
    row = next(line for line in out.splitlines() if "prioritised" in line)
    assert "priority" in out and " 7 " in row


def test_why_takes_a_job_name_and_names_the_preemptor(
    busy: QueueClient, emu: EmulatorServer
) -> None:
    preempted = [job.job_name for job in busy.list() if busy.describe(job.job_id).preemptions.count]
    assert preempted, "QS2's job reclaimed its lent instance"
    run = CliRunner().invoke(
        app, ["local", "why", preempted[0], "--endpoint-url", emu.endpoint_url]
    )
    assert run.exit_code == 0, run.stderr
    qs2 = busy.resolve_job("qs2-a")
    assert f"by qs2-a ({qs2}) in QS2" in run.stdout
    assert run.stdout.startswith(f"{preempted[0]} (")
    assert "position None" not in run.stdout


def test_why_of_an_unknown_name_exits_3(emu: EmulatorServer) -> None:
    run = CliRunner().invoke(
        app, ["local", "why", "no-such-job", "--endpoint-url", emu.endpoint_url]
    )
    assert run.exit_code == 3 and run.stderr.count("\n") == 1 and "no-such-job" in run.stderr


def test_wait_on_a_virtual_clock_says_so_once_on_stderr(emu: EmulatorServer) -> None:
    job_id = submit(emu, "waits", "QS3")
    code, _, err = jobs(
        emu, "wait", job_id, "--until", "running", "--timeout", "1", "--poll", "0.2"
    )
    assert code == 1  # the clock never moved: the wait timed out
    assert err.count("virtual clock: time moves only with quota local advance") == 1


def test_serve_exits_130_on_ctrl_c() -> None:
    process = start_serve("--virtual")
    printed: list[str] = []
    wait_for_endpoint(process, printed)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "stopping" in err and "Traceback" not in err


def test_health_says_whether_the_clock_is_virtual(emu: EmulatorServer) -> None:
    import urllib.request

    with urllib.request.urlopen(f"{emu.endpoint_url}/_quota/health") as answer:
        assert json.loads(answer.read())["virtualClock"] is True


def test_the_recorded_session_shows_whole_identifiers_at_100_columns() -> None:
    """docs/terminal-session.txt (tools/record-terminal-session.sh): status, jobs ls and why."""
    with open("docs/terminal-session.txt", encoding="utf-8") as recorded:
        lines = recorded.read().splitlines()
    assert max(len(line) for line in lines) <= 100
    table_rows = [line for line in lines if line.startswith("│ ")]
    ids = {word for line in table_rows for word in line.split() if word.count("-") == 4}
    assert len(ids) == 4, "quota jobs ls shows each job id whole on its row"
    for command in ("quota status", "quota jobs -o seed-demo ls", "quota local why qs1-"):
        assert any(line.startswith(f"$ {command}") for line in lines), command
    assert any("by qs2-recsys-retrain (" in line and "in QS2" in line for line in lines)
    assert any("│ qs1-eval-sweep-lr-3e-4 │" in line for line in lines)
