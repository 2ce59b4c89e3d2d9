"""The distributed search fails closed (issue 41, part 5): a cluster off this machine needs TLS or
``--trust-cluster`` (its results are unpickled here), every result is awaited with a time-out,
and a dead worker, cluster or process-pool worker is one ``error:`` line with exit 69
(``ExitCode.UNAVAILABLE``), never a hang, a traceback or exit 1 ("targets missed")."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from quota_constructs.advisor.optimize import (
    ExecutorFailed,
    SearchOptions,
    cluster_executor,
    executor_problems,
    optimize,
)
from quota_constructs.advisor.profiles import load_teams
from quota_constructs.commands import app
from quota_constructs.commands._common import ExitCode, Failure, failure_of
from tests.advisor.helpers import TEAMS_FILE

SEARCH = ("recommend", str(TEAMS_FILE), "--optimize", "--days", "1", "--workloads", "2", "--json")


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": "200", **(env or {})}).invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_the_exit_code_of_a_failed_executor_is_its_own() -> None:
    assert int(ExitCode.UNAVAILABLE) == 69
    assert ExitCode.UNAVAILABLE not in (ExitCode.FAILED, ExitCode.USAGE, ExitCode.BUG)


@pytest.mark.parametrize("host", ["10.1.2.3", "scheduler.example.com", "[2001:db8::1]"])
def test_rejects_a_plain_tcp_cluster_off_this_machine(host: str) -> None:
    url = f"dask://{host}:8786"
    code, _, err = run(*SEARCH, "--executor", url)
    assert code == 2
    line = one_error_line(err)
    assert f"--executor: a plain-TCP Dask cluster off this machine (got '{url}')" in line
    assert "fix: its results are unpickled here" in line
    assert f"use tls://{host}:8786 with Dask's TLS settings" in line
    assert "or pass --trust-cluster" in line


@pytest.mark.parametrize("host", ["127.0.0.1", "127.9.9.9", "localhost", "[::1]"])
def test_a_loopback_cluster_needs_no_flag(host: str) -> None:
    assert executor_problems(f"dask://{host}:8786") == []


def test_trust_cluster_allows_a_plain_tcp_cluster_off_this_machine() -> None:
    assert executor_problems("dask://10.1.2.3:8786", trust_cluster=True) == []
    assert executor_problems("tls://10.1.2.3:8786") == []


def test_rejects_tls_without_dasks_tls_settings(tmp_path: object) -> None:
    env = {"DASK_CONFIG": str(tmp_path)}  # no TLS settings in Dask's configuration
    code, _, err = run(*SEARCH, "--executor", "tls://10.1.2.3:8786", env=env)
    assert code == 2
    line = one_error_line(err)
    assert "--executor: TLS without Dask's TLS settings (got 'tls://10.1.2.3:8786')" in line
    assert "distributed.comm.tls.ca-file" in line and "DASK_DISTRIBUTED__COMM__TLS__CA_FILE" in line


def test_rejects_trust_cluster_without_executor() -> None:
    code, _, err = run(*SEARCH, "--trust-cluster")
    assert code == 2 and "--trust-cluster: needs --executor" in err


@pytest.fixture
def workerless_cluster() -> Iterator[str]:
    """A Dask cluster whose only worker has died: tasks wait for a worker for ever."""
    distributed = pytest.importorskip("distributed", reason="pip install '.[dask]'")
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        cluster.scale(0)
        deadline = time.monotonic() + 10
        while cluster.scheduler.workers and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not cluster.scheduler.workers
        yield "dask://" + cluster.scheduler_address.removeprefix("tcp://")


def test_a_cluster_whose_only_worker_died_is_one_error_not_a_hang(workerless_cluster: str) -> None:
    started = time.monotonic()
    code, out, err = run(*SEARCH, "--executor", workerless_cluster, "--result-timeout", "2")
    assert code == ExitCode.UNAVAILABLE, err
    line = one_error_line(err)
    assert f"--executor: no candidate result from {workerless_cluster} in 2 s" in line
    assert "fix: check the cluster's workers" in line and "--result-timeout" in line
    assert out == ""
    assert time.monotonic() - started < 30


def test_a_dead_cluster_is_one_error_not_a_hang() -> None:
    distributed = pytest.importorskip("distributed", reason="pip install '.[dask]'")
    with distributed.LocalCluster(
        n_workers=0, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        url = "dask://" + cluster.scheduler_address.removeprefix("tcp://")
    code, _, err = run(*SEARCH, "--executor", url, "--result-timeout", "2")
    assert code == ExitCode.UNAVAILABLE, err
    line = one_error_line(err)
    assert f"--executor: could not reach the Dask scheduler at {url} in 2 s" in line
    assert "fix: start the scheduler" in line


def test_a_scheduler_that_dies_mid_search_is_an_executor_failure() -> None:
    distributed = pytest.importorskip("distributed", reason="pip install '.[dask]'")
    cluster = distributed.LocalCluster(
        n_workers=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    )
    url = "dask://" + cluster.scheduler_address.removeprefix("tcp://")

    def stop_the_cluster_after_the_first_result(done: int, total: int) -> None:
        if done == 1:
            cluster.close()

    with pytest.raises(ExecutorFailed) as failed, cluster_executor(url, timeout_s=5) as executor:
        optimize(
            load_teams(TEAMS_FILE),
            options=SearchOptions(days=7, seeds=(0, 1, 2)),  # results still pending at the close
            executor=executor,
            progress=stop_the_cluster_after_the_first_result,
            executor_name=url,
            result_timeout_s=5,
        )
    # the tasks cancelled with the lost scheduler, none in time, or Dask's own error while it
    # went (a ValueError raised inside distributed, with a task per candidate and week pending)
    text = str(failed.value)
    assert text.startswith(
        (
            f"--executor: {url} lost the search's tasks (",
            f"--executor: no candidate result from {url}",
            f"--executor: {url} failed the search's tasks (",
        )
    )
    assert "; fix: check" in text
    assert failure_of(failed.value) == Failure((str(failed.value),), ExitCode.UNAVAILABLE)


def kill_the_first_worker(stop: threading.Event) -> None:
    """SIGKILL the first child process that appears (a pool worker), as the OOM killer would."""
    while not stop.is_set():
        children = multiprocessing.active_children()
        if children and children[0].pid is not None:
            os.kill(children[0].pid, signal.SIGKILL)
            return
        time.sleep(0.005)


def test_a_killed_process_pool_worker_is_one_error_not_a_traceback() -> None:
    stop = threading.Event()
    killer = threading.Thread(target=kill_the_first_worker, args=(stop,), daemon=True)
    killer.start()
    try:
        code, out, err = run(*SEARCH, "--workers", "1")
    finally:
        stop.set()
        killer.join()
    assert code == ExitCode.UNAVAILABLE, err
    line = one_error_line(err)
    assert "--workers: a worker process of the search died (BrokenProcessPool" in line
    assert "fix: run again with fewer --workers" in line
    assert out == ""
