"""``quota recommend --optimize --executor dask://HOST:PORT``: candidates on a Dask cluster."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from typer.testing import CliRunner

from quota_constructs.advisor.optimize import SearchOptions, cluster_executor, optimize
from quota_constructs.commands import app
from quota_constructs.model import QuotaConfigError
from tests.advisor.helpers import SMALL, SMALL_JOBS, TEAMS_FILE

SEARCH = ("recommend", str(TEAMS_FILE), "--optimize", "--days", "1", "--workloads", "2", "--json")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def dask_url() -> Iterator[str]:
    """A local Dask cluster (two in-process workers, one thread each) on a TCP port."""
    distributed = pytest.importorskip(
        "distributed", reason="Dask distributed is not installed: pip install '.[dask]'"
    )
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        yield "dask://" + cluster.scheduler_address.removeprefix("tcp://")


def test_a_dask_cluster_gives_the_process_pools_results_exactly(dask_url: str) -> None:
    code, on_dask, err = run(*SEARCH, "--executor", dask_url)
    assert code == 0, err
    code, on_processes, err = run(*SEARCH, "--workers", "2")
    assert code == 0, err
    assert json.loads(on_dask) == json.loads(on_processes)
    assert on_dask == on_processes


class Untokenizable:
    """An argument Dask cannot hash into a task key (as a search's thousands of jobs are
    expensive to hash)."""

    def __dask_tokenize__(self) -> str:
        raise AssertionError("the task's arguments were hashed: submitted as a pure task")


def test_tasks_are_submitted_without_hashing_their_arguments(dask_url: str) -> None:
    with cluster_executor(dask_url) as executor:
        assert executor.submit(type, Untokenizable()).result().__name__ == "Untokenizable"


def test_progress_counts_every_candidate_of_the_total() -> None:
    seen: list[tuple[int, int]] = []
    with ThreadPoolExecutor(max_workers=1) as executor:
        result = optimize(
            SMALL,
            workloads=[SMALL_JOBS],
            executor=executor,
            progress=lambda done, total: seen.append((done, total)),
        )
    assert [done for done, _ in seen] == list(range(1, result.evaluated + 1))
    assert seen[0][1] == min(result.space, SearchOptions().max_candidates)
    assert all(done <= total for done, total in seen)


def test_progress_is_silent_when_not_a_terminal_or_json() -> None:
    code, out, err = run(*SEARCH, "--workers", "1")
    assert code == 0, err
    assert "candidates" not in err and "candidates" not in out


@pytest.mark.parametrize("url", ["tcp://127.0.0.1:8786", "dask://127.0.0.1", "dask://:8786"])
def test_rejects_an_executor_that_is_not_a_dask_address(url: str) -> None:
    code, _, err = run(*SEARCH, "--executor", url)
    assert code == 2
    assert f"--executor: not a Dask scheduler address (got '{url}')" in err
    assert "fix: give dask://HOST:PORT" in err


def test_rejects_an_executor_without_optimize() -> None:
    code, _, err = run("recommend", str(TEAMS_FILE), "--executor", "dask://127.0.0.1:8786")
    assert code == 2 and "--executor: needs --optimize (got 'dask://127.0.0.1:8786')" in err


def test_rejects_a_bad_address_in_the_library_too() -> None:
    with (
        pytest.raises(QuotaConfigError, match="not a Dask scheduler address"),
        cluster_executor("dask://nowhere"),
    ):
        pass
