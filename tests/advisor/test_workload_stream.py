"""Workload files read as a stream (advisor/workload_stream.py) and streamed simulations
(``simulate_stream``): the same jobs and the same figures as the whole-file reader and
:func:`compare`, a row at a time, holding only the jobs that have not ended."""

from __future__ import annotations

import importlib
import inspect
import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quota_constructs.advisor import workload_stream
from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.simulate import (
    SimulationOptions,
    _StreamRun,
    all_reserve,
    compare,
    simulate_stream,
)
from quota_constructs.advisor.workload import (
    GeneratorOptions,
    WorkloadError,
    WorkloadJob,
    generate_workload,
    parse_workload_csv,
    workload_csv,
)
from quota_constructs.advisor.workload_stream import (
    StreamedWorkload,
    iter_workload_csv,
    read_workload_file,
    scan_workload_csv,
)
from quota_constructs.commands import app
from quota_constructs.commands._reports import results_json
from quota_constructs.config import load_organisation
from quota_constructs.model import (
    JobQueueSpec,
    Organisation,
    QuotaShareSpec,
    ShareCalendar,
    ShareWindow,
    SharingStrategy,
)
from tests.advisor.helpers import ORG_FILE, TEAMS_FILE
from tests.helpers import ORGS_DIR

GPU = "ml.g5.xlarge"
SATURDAY, H = 5 * 86400.0, 3600.0
CALENDAR = Organisation(
    name="lab",
    queue=JobQueueSpec(
        shares=(
            QuotaShareSpec("weekend", {GPU: 1}, SharingStrategy.LEND),
            QuotaShareSpec("weekday", {GPU: 1}, SharingStrategy.LEND_AND_BORROW),
        )
    ),
    calendars={
        "weekend": ShareCalendar((ShareWindow(("sat", "sun"), strategy=SharingStrategy.RESERVE),))
    },
)
"""A weekday lender turning RESERVE at Saturday 00:00 (as tests/advisor/test_simulate_calendar)."""
CALENDAR_JOBS = [
    WorkloadJob(SATURDAY - 2 * H, "weekday", GPU, 1, 6 * H, 1),
    WorkloadJob(SATURDAY - 2 * H + 1, "weekday", GPU, 1, 6 * H, 1),
    WorkloadJob(SATURDAY + 1 * H, "weekend", GPU, 1, 2 * H, 1),
]
HEADER = "submit_time_s,share,instance_type,instance_count,duration_s,priority"
simulate_module = importlib.import_module("quota_constructs.advisor.simulate")
PLAN_ORG = ORGS_DIR.parent.parent / "docs" / "examples" / "plan-org.yaml"
PLAN_WORKLOAD = PLAN_ORG.with_name("plan-workload.csv")


def _file(tmp_path: Path, text: str, name: str = "w.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def _week(days: int = 7, intensity: float = 1.0) -> list[WorkloadJob]:
    teams = load_teams(TEAMS_FILE)
    return generate_workload(teams, days=days, options=GeneratorOptions(intensity=intensity))


MIXED = (
    f"{HEADER},checkpoint_interval_s\r\n"
    "0,a,ml.g5.xlarge,1,60,1,\r\n"
    '5,"b",ml.g5.xlarge,2,30.5,3,900\r\n'
    "\r\n"
    "7, a, ml.g5.xlarge, 1, 1e2, 2,\r\n"
    '9,a,ml.g5.xlarge,1,"120",1,\r\n'
    "9,b,ml.g5.xlarge,3,10,4,60\r\n"
)


@pytest.mark.parametrize(
    "text",
    [
        workload_csv(_week()),
        MIXED,
        f"{HEADER}\n1,a,ml.g5.xlarge,1,60,1\n\n2,a,ml.g5.xlarge,1,60,1",
        "priority,share,submit_time_s,instance_type,instance_count,duration_s\n"
        "7,a,1,ml.g5.xlarge,1,60\n",
    ],
    ids=["generated-week", "quoted-and-crlf", "blank-line-no-final-newline", "columns-reordered"],
)
def test_the_streamed_reader_gives_the_jobs_of_the_whole_file_reader(
    tmp_path: Path, text: str
) -> None:
    path = _file(tmp_path, text)
    streamed = list(iter_workload_csv(path))
    assert streamed == parse_workload_csv(text, source=str(path))
    assert read_workload_file(path) == streamed
    scan = scan_workload_csv(path)
    assert scan.jobs == len(streamed) and scan.in_order
    assert scan.window_s == max(j.submit_time_s + j.duration_s for j in streamed)


def test_the_reader_is_an_iterator_that_yields_a_job_before_reading_the_rest(
    tmp_path: Path,
) -> None:
    rows = "".join(f"{i},a,ml.g5.xlarge,1,60,1\n" for i in range(20_000))
    path = _file(tmp_path, f"{HEADER}\n{rows}")
    with path.open("ab") as handle:
        handle.write(b"1,a,ml.g5.xlarge,1,60,\xff\n")  # a bad byte on the last line
    assert inspect.isgenerator(iter_workload_csv(path))
    jobs = iter_workload_csv(path)
    assert next(jobs).line == 2  # yielded before the bad last line was read
    with pytest.raises(WorkloadError, match="line 20002, column 23"):
        list(jobs)


@pytest.mark.parametrize(
    "text",
    [
        f"{HEADER}\n0,a,ml.g5.xlarge,0,60,1\n1,a,ml.nope,1,-5,1\n2,a b,ml.g5.xlarge,1,60,1\n",
        f"{HEADER}\n0,a,ml.g5.xlarge,1,60,1,7\n0,a,ml.g5.xlarge,1\n",
        f'{HEADER}\n0,a,ml.g5.xlarge,1,60,1\n0,a,"ml.g5.xlarge\r",1,60,1\n',
        f'{HEADER}\n0,a,ml.g5.xlarge,1,"12\n0",1\n1,a,ml.g5.xlarge,1,60,1\n',
        "submit_time_s,share\n0,a\n",
        f"{HEADER}\n",
    ],
    ids=[
        "bad-values",
        "column-counts",
        "bare-carriage-return",
        "value-over-two-lines",
        "bad-header",
        "no-jobs",
    ],
)
def test_a_bad_file_gets_the_whole_file_readers_problems_with_their_lines(
    tmp_path: Path, text: str
) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(WorkloadError) as whole:
        parse_workload_csv(text, source=str(path))
    with pytest.raises(WorkloadError) as streamed:
        scan_workload_csv(path)
    assert streamed.value.problems == whole.value.problems


def test_rejects_a_file_of_many_bad_rows_with_the_first_hundred_and_a_count(
    tmp_path: Path,
) -> None:
    rows = "".join(f"{i},a,ml.g5.xlarge,1,-1,1\n" for i in range(250))
    with pytest.raises(WorkloadError) as caught:
        scan_workload_csv(_file(tmp_path, f"{HEADER}\n{rows}"))
    problems = caught.value.problems
    assert len(problems) == 101
    assert problems[0].path == "line 2.duration_s"
    assert (problems[-1].value, problems[-1].message) == (150, "more problems not shown")


def test_a_streamed_file_out_of_submit_time_order_is_sorted_in_runs_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workload_stream, "MAX_WORKLOAD_JOBS", 2)
    monkeypatch.setattr(workload_stream, "SORT_RUN_JOBS", 3)
    rows = ["5,a,ml.g5.xlarge,1,60.125,1", "1,b,ml.g5.xlarge,2,0.1,3,7.5", "5,b,ml.g5.xlarge,1,9,1"]
    rows += ["0.3,a,ml.g5.xlarge,1,60,1", "5,a,ml.g5.xlarge,4,1,2", "2,a,ml.g5.xlarge,1,60,1"]
    text = f"{HEADER},checkpoint_interval_s\n" + "\n".join(rows) + "\n"
    path = _file(tmp_path, text)
    workload = read_workload_file(path)
    assert isinstance(workload, StreamedWorkload) and len(workload.runs) == 2
    assert not workload.scan.in_order and workload.scan.jobs == 6
    assert list(workload.jobs()) == parse_workload_csv(text, source=str(path))  # stable order
    assert list(workload.jobs()) == list(workload.jobs())  # read again for each run
    directory = workload.runs[0].parent
    del workload
    assert not directory.exists()  # the runs go with the workload


def _both(
    orgs: list[Organisation], jobs: list[WorkloadJob], options: SimulationOptions
) -> tuple[str, str]:
    """The results JSON of :func:`compare` and of :func:`simulate_stream` on ``jobs``."""
    ordered = sorted(jobs, key=lambda job: job.submit_time_s)
    labels = [f"{i}-{org.name}" for i, org in enumerate(orgs)]
    window = max(j.submit_time_s + j.duration_s for j in ordered)
    whole = compare(orgs, ordered, options=options)
    streamed = simulate_stream(orgs, iter(ordered), window_s=window, options=options)
    return results_json(whole, labels), results_json(streamed, labels)


def _research() -> Organisation:
    return load_organisation(ORG_FILE)


CASES = {
    "research-week": lambda: ([_research()], _week(), SimulationOptions(startup_s=300)),
    "overloaded-with-reserve-compared": lambda: (
        [_research(), replace(_research(), queue=all_reserve(_research().queue))],
        _week(days=3, intensity=1.0) * 3,
        SimulationOptions(),
    ),
    "training-plans": lambda: (
        [load_organisation(PLAN_ORG)],
        parse_workload_csv(PLAN_WORKLOAD.read_text()),
        SimulationOptions(),
    ),
    "calendar": lambda: ([CALENDAR], CALENDAR_JOBS, SimulationOptions(preemption_s=0)),
}


@pytest.mark.parametrize("chunk", [1, 7, 1000])
@pytest.mark.parametrize("case", list(CASES))
def test_a_streamed_run_gives_the_figures_of_the_run_in_memory(
    case: str, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(simulate_module, "STREAM_CHUNK_JOBS", chunk)
    whole, streamed = _both(*CASES[case]())
    assert streamed == whole


def test_a_streamed_run_holds_only_the_jobs_that_have_not_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(simulate_module, "STREAM_CHUNK_JOBS", 50)
    held: list[tuple[int, int]] = []
    between = _StreamRun.between_chunks

    def watched(run: _StreamRun) -> None:
        between(run)
        sched = run.feeder.sched
        held.append((len(sched.jobs), len(run.usage.log.changes)))
        assert all(not job.status.is_terminal for job in sched.jobs)

    monkeypatch.setattr(_StreamRun, "between_chunks", watched)
    jobs = _week(days=28)
    window = max(j.submit_time_s + j.duration_s for j in jobs)
    simulate_stream([_research()], iter(jobs), window_s=window)
    assert len(jobs) > 1000 and held
    assert max(count for count, _ in held) < len(jobs) // 10  # the jobs that have not ended
    assert all(changes == 0 for _, changes in held)  # the usage log integrated and dropped


def test_quota_simulate_streams_a_big_file_to_the_same_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path, workload_csv(_week()))
    args = ["simulate", str(ORG_FILE), "--workload", str(path), "--json"]
    in_memory = CliRunner().invoke(app, args)
    assert in_memory.exit_code == 0, in_memory.output
    monkeypatch.setattr(workload_stream, "MAX_WORKLOAD_JOBS", 10)
    monkeypatch.setattr(simulate_module, "STREAM_CHUNK_JOBS", 64)
    streamed = CliRunner().invoke(app, [*args, "--progress"])
    assert streamed.exit_code == 0, streamed.output
    assert json.loads(streamed.stdout) == json.loads(in_memory.stdout)
    assert "jobs read" in streamed.stderr


def test_rejects_plot_prices_and_save_workload_for_a_streamed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path, workload_csv(_week()))
    monkeypatch.setattr(workload_stream, "MAX_WORKLOAD_JOBS", 10)
    result = CliRunner().invoke(
        app,
        [
            "simulate",
            str(ORG_FILE),
            "--workload",
            str(path),
            "--plot",
            str(tmp_path / "p.png"),
            "--save-workload",
            str(tmp_path / "s.csv"),
        ],
    )
    assert result.exit_code == 2
    assert "--plot" in result.output and "--save-workload" in result.output
    assert "leave it out (the simulation itself streams the file)" in result.output
    assert not (tmp_path / "p.png").exists()


def test_a_refused_submit_names_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simulate_module, "STREAM_CHUNK_JOBS", 3)
    jobs = [replace(job, line=i + 2) for i, job in enumerate(_week()[:20])]
    jobs[11] = replace(jobs[11], share="nobody")  # not checked first (check_share_names) here
    with pytest.raises(WorkloadError) as streamed:
        simulate_stream([_research()], iter(jobs), window_s=1e6)
    assert "line 13: quotaShareName" in str(streamed.value)


def test_progress_on_a_redirected_stderr_is_a_line_a_simulated_day(tmp_path: Path) -> None:
    path = _file(tmp_path, workload_csv(_week(days=28)))
    args = ["simulate", str(ORG_FILE), "--workload", str(path), "--json", "--progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines and all(line.startswith("research: ") for line in lines)
    assert "\r" not in result.stderr and len(set(lines)) == len(lines)
    json.loads(result.stdout)
