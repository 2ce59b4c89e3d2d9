"""The forecast's backtest over the emulator's HTTP (tools/forecast_backtest_http.py): a day of
the research teams' workload, every 5th job forecast through ``QueueClient.forecast``, scored
against the first placement DescribeServiceJob tells."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.workload import generate_workload
from quota_constructs.commands.demo import emulator_client
from quota_constructs.config import load_organisation
from quota_constructs.forecast.backtest import Coverage
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import QuotaConfigError
from tests.helpers import ORGS_DIR, ROOT, tool
from tests.runtime.helpers import last_monday

START = last_monday()
ORG = ORGS_DIR / "research.yaml"
TEAMS = ROOT / "stacks" / "teams" / "research.yaml"
SEED = 101
EVERY = 5
WARMUP_S = 8 * 3600.0
MS = 0.001
"""The API's times are whole milliseconds."""


@pytest.fixture(scope="module")
def backtest_http() -> ModuleType:
    return tool("forecast_backtest_http")


@pytest.fixture(scope="module")
def day(backtest_http: ModuleType) -> Iterator[tuple[Any, EmulatorServer, list[Any]]]:
    """One Monday of the research workload replayed over HTTP, forecast with and without
    the arrival model; the emulator stays up for the checks."""
    org = load_organisation(ORG)
    jobs = generate_workload(load_teams(TEAMS), days=1, seed=SEED)
    with EmulatorServer(org_files=[ORG], start_epoch=START, seed=SEED) as emu:
        done = backtest_http.replay(
            emu,
            org,
            jobs,
            start_epoch=START,
            warmup_s=WARMUP_S,
            every=EVERY,
            samples=12,
            seed=SEED,
            arrivals=("off", "on"),
        )
        yield done, emu, sorted(jobs, key=lambda j: j.submit_time_s)


def test_every_fifth_job_after_the_warmup_is_forecast(day) -> None:
    done, _, ordered = day
    expected = [i for i, j in enumerate(ordered) if j.submit_time_s >= WARMUP_S and i % EVERY == 0]
    assert list(done.indices) == expected and len(expected) >= 5
    for result in done.results.values():
        assert [p.share for p in result.predictions] == [ordered[i].share for i in expected]
        for p in result.predictions:
            assert p.p10_s <= p.p50_s <= p.p90_s


def test_each_actual_start_is_the_scheduled_at_the_emulator_recorded(day) -> None:
    done, emu, ordered = day
    client = emulator_client(emu, "research")
    for mode, result in done.results.items():
        for job_id, index, p in zip(done.job_ids, done.indices, result.predictions, strict=True):
            job = client.describe(job_id)
            assert job.preemptions.count == 0, f"{job_id} was preempted ({mode})"
            assert job.scheduled_at is not None
            submitted = START + ordered[index].submit_time_s
            assert p.actual_s == pytest.approx(job.scheduled_at.timestamp() - submitted, abs=MS)


def test_the_emulator_starts_jobs_as_the_core_with_its_calendars_and_options(
    day, backtest_http: ModuleType
) -> None:
    done, emu, ordered = day
    org = load_organisation(ORG)
    options = backtest_http.emulator_options(emu, org)
    core = backtest_http.core_waits(org, ordered, options=options, calendars=True, epoch_s=START)
    emulator = [p.actual_s for p in done.results["off"].predictions]
    assert emulator == pytest.approx([core[i] for i in done.indices], abs=MS)
    delays = (
        options.dispatch_delay_s + options.scheduled_to_starting_s + options.starting_to_running_s
    )
    assert done.slack_s == delays + backtest_http.API_RESOLUTION_S


def test_coverage_is_computed_per_share_and_overall(day) -> None:
    done, _, _ = day
    for result in done.results.values():
        shares = {p.share for p in result.predictions}
        assert set(result.per_share) == shares and len(shares) >= 2
        assert sum(c.jobs for c in result.per_share.values()) == result.overall.jobs
        recommendation = result.per_share["recommendation"]  # hourly, RESERVE: starts at once
        assert recommendation.interval == 1.0 and recommendation.median_error_s < 5
        assert all(math.isfinite(p.actual_s) for p in result.predictions)
        assert isinstance(result.overall, Coverage)


def test_rejects_teams_without_a_share_in_the_organisation(backtest_http: ModuleType) -> None:
    seed_demo = ORGS_DIR / "seed-demo.yaml"
    with pytest.raises(QuotaConfigError, match=r"--teams: teams .*no quota share in --org"):
        backtest_http.main(["--teams", str(TEAMS), "--org", str(seed_demo), "--days", "1"])


def test_rejects_every_below_one(backtest_http: ModuleType, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        backtest_http.main(["--every", "0"])
    assert exit_.value.code == 2
    assert "argument --every: '0' is not a positive whole number" in capsys.readouterr().err


def test_compare_scores_the_in_process_backtest_and_the_agreement(
    backtest_http: ModuleType, capsys
) -> None:
    args = ["--days", "2", "--seeds", "101", "--every", "10", "--samples", "12"]
    assert backtest_http.main([*args, "--arrivals", "off", "--compare", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    http, local = report["over HTTP, no arrival model"], report["in-process, no arrival model"]
    assert http["overall"]["jobs"] == local["overall"]["jobs"] >= 3
    against = report["actual starts, emulator against"]
    exact = against["core with calendars and the emulator's options"]
    assert exact["same"] + exact["laterBy1To3S"] == exact["jobs"]
    assert exact["laterByMore"] == exact["earlier"] == exact["startedInOneOnly"] == 0


def test_every_arrivals_mode_is_reported(backtest_http: ModuleType, capsys) -> None:
    """The default (``off auto``) and ``on`` each get their rows."""
    args = ["--days", "2", "--seeds", "101", "--every", "10", "--samples", "12"]
    assert backtest_http.main([*args, "--arrivals", "off", "auto", "on", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for label in (
        "no arrival model",
        "arrival model auto (the default)",
        "arrival model forced on",
    ):
        assert report[f"over HTTP, {label}"]["overall"]["jobs"] >= 3


def test_the_waited_jobs_get_an_interval_over_workloads(backtest_http: ModuleType, capsys) -> None:
    """Two workloads of 3 days: the waited jobs' coverage gets a 95 % interval, each workload
    resampled whole, around the overall figure."""
    args = ["--days", "3", "--seeds", "101", "102", "--every", "4", "--samples", "12"]
    assert backtest_http.main([*args, "--arrivals", "off", "--json"]) == 0
    waits = json.loads(capsys.readouterr().out)["over HTTP, no arrival model"]["overall, waits"]
    low, high = waits["p90Coverage95"]
    assert low <= waits["p90Coverage"] <= high
    low, high = waits["intervalCoverage95"]
    assert low <= waits["intervalCoverage"] <= high


def test_calibrated_forecasts_over_http_cover_at_least_as_many_starts(
    backtest_http: ModuleType, capsys, tmp_path
) -> None:
    from quota_constructs.forecast import Calibration

    path = tmp_path / "calibration.json"
    Calibration(lower_shift=-0.5, upper_shift=0.7, jobs=100, fitted_on="tests").save(path)
    args = ["--days", "3", "--seeds", "101", "--every", "3", "--samples", "12", "--json"]
    reports = []
    for extra in ([], ["--calibration", str(path)]):
        assert backtest_http.main([*args, "--arrivals", "off", *extra]) == 0
        reports.append(json.loads(capsys.readouterr().out)["over HTTP, no arrival model"])
    plain, calibrated = (r["overall, waits"] for r in reports)
    assert plain["jobs"] == calibrated["jobs"] >= 3
    assert calibrated["medianErrorS"] == plain["medianErrorS"]  # the median is not moved
    assert calibrated["p90Coverage"] >= plain["p90Coverage"]
    assert calibrated["intervalCoverage"] >= plain["intervalCoverage"]
    assert (calibrated["p90Coverage"], calibrated["intervalCoverage"]) != (
        plain["p90Coverage"],
        plain["intervalCoverage"],
    )
    path.write_text("{}")
    with pytest.raises(SystemExit) as exit_:
        backtest_http.main([*args, "--calibration", str(path)])
    assert exit_.value.code == 2
    assert "kind: None is not 'quota-forecast-calibration'" in capsys.readouterr().err
