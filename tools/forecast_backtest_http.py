"""Calibration backtest of the start-time forecast over the emulator's real HTTP.

Run: ``.venv/bin/python tools/forecast_backtest_http.py [--teams stacks/teams/research.yaml]
[--org stacks/orgs/research.yaml] [--days 7] [--seeds 101 102 103] [--every 1] [--samples 60]
[--arrivals off auto on] [--slack-s S] [--compare] [--calibration FILE] [--json]``.

For each seed, a ``--days`` workload of the teams' profiles is generated (the advisor's
generator) and replayed on an emulator serving the organisation over HTTP, in this process, on
a virtual clock whose time 0 is a Monday (:data:`~quota_constructs.forecast.backtest.EPOCH_S`,
so the share calendars flip where the workload expects them). The jobs are walked in submit
order: the clock is advanced to each submit, the job is submitted through the runtime
(``QueueClient.submit``, its run time given to the emulator by tag
``quota.local/duration-seconds``), and every ``--every``-th job submitted after the first day is
forecast right after its submit by ``QueueClient.forecast`` (the path users run: ListServiceJobs,
DescribeServiceJob, the finished jobs as history, ``org=`` the organisation file for its
calendars), once per ``--arrivals`` mode. When every job has finished, each forecast job's
actual first placement (SCHEDULED) is read back with DescribeServiceJob and scored with
:mod:`quota_constructs.forecast.backtest`'s :class:`Coverage`, next to the naive forecast (queue
position x mean run time, computed on the emulator's own core at the submit: a reference, not
read over HTTP). A start within ``--slack-s`` of the interval counts as inside it (default
:func:`emulator_slack`: the emulator's dispatch and start-up delays, which the forecast does
not model). ``--calibration FILE``: every forecast's bounds calibrated with that file
(``QueueClient.forecast(calibration=...)``, as ``quota status --calibration FILE``; fit it on
other workloads: ``tools/forecast_backtest.py --save-calibration``). ``--compare`` also runs
the in-process backtest of the same workloads, and the core alone (as that backtest runs it;
with the share calendars; with the emulator's options too), and prints how far the emulator's
actual starts are from each. Figures: docs/runtime.md, "Forecasts".
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.workload import WorkloadJob, generate_workload
from quota_constructs.commands.demo import emulator_client
from quota_constructs.config import load_organisation
from quota_constructs.forecast import (
    Calibration,
    CalibrationError,
    JobForecast,
    LiveJob,
    load_calibration,
)
from quota_constructs.forecast.backtest import (
    EPOCH_S,
    BacktestResult,
    Coverage,
    Prediction,
    _first_start,
    backtest,
    coverage_table,
    job_request,
    naive,
    queue_state,
    seed_interval,
)
from quota_constructs.local.handlers.submit_request import DURATION_TAG
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.model import Organisation, Problem, QuotaConfigError
from quota_constructs.runtime import QueueClient, TrainingJob
from quota_constructs.runtime.adopt import job_record
from quota_constructs.runtime.jobs import ACTIVE_STATUSES
from quota_constructs.scheduling import Scheduler, SchedulerOptions

ROOT = Path(__file__).resolve().parent.parent
ARRIVAL_MODES: Mapping[str, bool | None] = {"off": False, "auto": None, "on": True}
"""``--arrivals`` values and what they pass to ``QueueClient.forecast(arrivals=...)``."""
LABELS = {
    "off": "no arrival model",
    "auto": "arrival model auto (the default)",
    "on": "arrival model forced on",
}
"""Each ``--arrivals`` mode's name in the report (one per :data:`ARRIVAL_MODES`)."""
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
API_RESOLUTION_S = 0.001
"""The API's times are whole milliseconds (a start read back is up to half of one off)."""
DRAIN_STEP_S = 3600.0
"""After the last submit, the clock moves in steps of this until no job is active."""


@dataclass(frozen=True)
class HttpBacktest:
    """Per ``--arrivals`` mode, every prediction (the forecast's own quantiles) and coverage
    per share, scored with ``slack_s``; ``job_ids``: the emulator's id of each prediction's job,
    ``indices``: its place in submit order (both in prediction order, the same in every mode)."""

    results: Mapping[str, BacktestResult]
    job_ids: tuple[str, ...]
    indices: tuple[int, ...]
    slack_s: float


@dataclass
class _Asked:
    index: int
    job_id: str
    share: str
    submitted_s: float
    naive_s: float
    quantiles: dict[str, tuple[float, float, float]]


def replay(
    emu: EmulatorServer,
    org: Organisation,
    jobs: Sequence[WorkloadJob],
    *,
    start_epoch: float = EPOCH_S,
    warmup_s: float = 86400.0,
    every: int = 1,
    samples: int = 60,
    seed: int = 0,
    arrivals: Sequence[str] = ("off",),
    slack_s: float | None = None,
    calibration: Calibration | None = None,
) -> HttpBacktest:
    """Replay ``jobs`` on ``emu`` (virtual clock at 0, ``start_epoch`` its epoch, ``org``
    provisioned) and forecast every ``every``-th job submitted after ``warmup_s`` over HTTP,
    once per mode of ``arrivals`` (:data:`ARRIVAL_MODES`); see the module docstring.
    ``slack_s``: how far outside its interval a start still counts as inside (default
    :func:`emulator_slack`); ``calibration``: the forecasts' bounds calibrated."""
    client = emulator_client(emu, org.name)
    asked = [
        _ask(emu, client, org, index, item, start_epoch, (samples, seed, calibration), arrivals)
        if item.submit_time_s >= warmup_s and index % every == 0
        else _submit(emu, client, index, item)
        for index, item in enumerate(sorted(jobs, key=lambda j: j.submit_time_s))
    ]
    found = [a for a in asked if isinstance(a, _Asked)]
    _drain(emu, client)
    waits = [_first_placement(client, a.job_id) - (start_epoch + a.submitted_s) for a in found]
    slack = emulator_slack(emu, org) if slack_s is None else slack_s
    results = {}
    for mode in arrivals:
        predictions = tuple(
            Prediction(a.share, *a.quantiles[mode], a.naive_s, wait)
            for a, wait in zip(found, waits, strict=True)
        )
        results[mode] = BacktestResult(predictions, _per_share(predictions, slack))
    return HttpBacktest(
        results, tuple(a.job_id for a in found), tuple(a.index for a in found), slack
    )


def _ask(
    emu: EmulatorServer,
    client: QueueClient,
    org: Organisation,
    index: int,
    item: WorkloadJob,
    start_epoch: float,
    run: tuple[int, int, Calibration | None],
    arrivals: Sequence[str],
) -> _Asked:
    """Submit ``item`` and forecast it at once, per arrival mode; the naive forecast from the
    emulator's core just before the submit (as the in-process backtest computes it); ``run``:
    the forecasts' samples, seed and calibration."""
    samples, seed, calibration = run
    emu.advance(item.submit_time_s - emu.now)
    scheduler = _scheduler(emu, org)
    with emu.emulator.lock:
        state = queue_state(scheduler, org.queue, emu.now)
        demand = {item.instance_type: item.instance_count}
        reference = naive(scheduler, state, LiveJob("", "", item.share, demand, item.priority))
    job_id = _submit(emu, client, index, item)
    asked = _Asked(index, job_id, item.share, emu.now, reference, {})
    for mode in arrivals:
        result = client.forecast(
            now_s=start_epoch + emu.now,
            org=org,
            samples=samples,
            seed=seed,
            arrivals=ARRIVAL_MODES[mode],
            calibration=calibration,
        )
        asked.quantiles[mode] = _quantiles(result.jobs, job_id)
    return asked


def _submit(emu: EmulatorServer, client: QueueClient, index: int, item: WorkloadJob) -> str:
    """Advance the clock to ``item``'s submit and submit it through the runtime; its id."""
    emu.advance(item.submit_time_s - emu.now)
    payload = TrainingJob(
        image=IMAGE,
        instance_type=item.instance_type,
        instance_count=item.instance_count,
        role_arn=ROLE,
        output_s3_uri="s3://backtest/out",
    )
    tags = {DURATION_TAG: str(item.duration_s)}
    name = f"{item.share}-{index}"  # as the in-process backtest names it (run-time groups)
    return client.submit(name, item.share, payload, priority=item.priority, tags=tags).job_id


def _scheduler(emu: EmulatorServer, org: Organisation) -> Scheduler:
    return emu.emulator.jobs.schedulers[emu.organisation(org.name).job_queue_name]


def emulator_options(emu: EmulatorServer, org: Organisation) -> SchedulerOptions:
    """The options the emulator's core runs ``org``'s queue with (its delays and choices)."""
    return _scheduler(emu, org).options


def emulator_slack(emu: EmulatorServer, org: Organisation) -> float:
    """Seconds the emulator adds to a start the forecast calls "now": its dispatch delay (one
    tick) and, since the API tells a job placed again only its first attempt's ``startedAt``,
    the SCHEDULED -> RUNNING delays (its core's options: 1 + 1 + 1 s by default), plus the
    API's :data:`API_RESOLUTION_S`."""
    options = emulator_options(emu, org)
    delays = (
        options.dispatch_delay_s + options.scheduled_to_starting_s + options.starting_to_running_s
    )
    return delays + API_RESOLUTION_S


def _quantiles(jobs: Mapping[str, JobForecast], job_id: str) -> tuple[float, float, float]:
    """(p10, p50, p90) of the forecast of ``job_id``, seconds from its submit (``inf``: never
    or beyond the horizon), as the in-process backtest scores them."""
    mine = jobs.get(job_id)
    if mine is None:
        raise RuntimeError(
            f"job {job_id} is not among the forecast's waiting jobs right after its submit: "
            "the emulator must dispatch on its tick (dispatch='tick', the default)"
        )
    if mine.never:
        return (math.inf, math.inf, math.inf)
    p10, p50, p90 = (math.inf if v is None else v for v in (mine.p10_s, mine.p50_s, mine.p90_s))
    return p10, p50, p90


def _drain(emu: EmulatorServer, client: QueueClient, limit_s: float = 7 * 86400.0) -> None:
    """Advance until no job is active (at most ``limit_s``: a job that never starts stays)."""
    until = emu.now + limit_s
    while emu.now < until and client.list(statuses=ACTIVE_STATUSES):
        emu.advance(DRAIN_STEP_S)


def _first_placement(client: QueueClient, job_id: str) -> float:
    """Epoch seconds of a job's first placement as DescribeServiceJob tells it
    (:func:`~quota_constructs.runtime.adopt.job_record`: ``scheduledAt`` of a job placed once;
    for one placed again, its first attempt's ``startedAt``); ``inf`` if never placed."""
    first = job_record(client.batch.describe_service_job(jobId=job_id)).first_dispatch_s
    return math.inf if first is None else first


def widened(predictions: Sequence[Prediction], slack_s: float) -> list[Prediction]:
    """The predictions with their p10-p90 interval widened by ``slack_s`` on both sides."""
    return [replace(p, p10_s=p.p10_s - slack_s, p90_s=p.p90_s + slack_s) for p in predictions]


def _per_share(predictions: Sequence[Prediction], slack_s: float) -> dict[str, Coverage]:
    shares = sorted({p.share for p in predictions})
    return {
        s: Coverage.of(widened([p for p in predictions if p.share == s], slack_s)) for s in shares
    }


def core_waits(
    org: Organisation,
    jobs: Sequence[WorkloadJob],
    *,
    options: SchedulerOptions | None = None,
    calendars: bool = False,
    epoch_s: float = EPOCH_S,
    grace_s: float = 0.0,
) -> list[float]:
    """Each job's wait for its first placement (submit order) when ``jobs`` run on the core
    alone: as the in-process backtest runs them (no calendars, default options), or with the
    organisation's ``calendars`` and the emulator's ``options``, as the emulator runs them."""
    sched = Scheduler.for_queue(org.queue, queue_name="core", options=options)
    if calendars:
        for share in org.queue.shares:
            if (calendar := org.calendars.get(share.name)) is not None:
                sched.follow_calendar(share, calendar, epoch_s=epoch_s, grace_s=grace_s)
    ordered = sorted(jobs, key=lambda j: j.submit_time_s)
    for index, item in enumerate(ordered):
        sched.advance(item.submit_time_s)
        sched.submit(job_request(item, index), now=item.submit_time_s)
    sched.run_until_idle()
    return [
        _first_start(sched.job(f"job-{index:06d}")) - item.submit_time_s
        for index, item in enumerate(ordered)
    ]


# --- the command ---------------------------------------------------------------------------------


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number (use e.g. 1)")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds >= 0 (use e.g. 3)")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--teams", type=Path, default=ROOT / "stacks/teams/research.yaml")
    parser.add_argument("--org", type=Path, default=ROOT / "stacks/orgs/research.yaml")
    parser.add_argument("--days", type=_positive, default=7)
    parser.add_argument("--seeds", type=int, nargs="+", default=[101, 102, 103])
    parser.add_argument("--every", type=_positive, default=1)
    parser.add_argument("--samples", type=_positive, default=60)
    parser.add_argument(
        "--arrivals",
        nargs="+",
        choices=sorted(ARRIVAL_MODES),
        default=["off", "auto"],
        help="forecast once per mode: off (no arrival model), auto (the default), on (forced)",
    )
    parser.add_argument(
        "--slack-s",
        type=_seconds,
        default=None,
        help="a start this far outside the interval counts as inside (default: the emulator's "
        "dispatch and start-up delays, 3 s)",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="also run the in-process backtest and the core alone, and compare actual starts",
    )
    parser.add_argument(
        "--calibration",
        type=_calibration,
        default=None,
        metavar="FILE",
        help="calibrate every forecast's bounds with this file (--save-calibration of "
        "tools/forecast_backtest.py)",
    )
    parser.add_argument("--json", action="store_true")
    return parser


def _calibration(text: str) -> Calibration:
    try:
        return load_calibration(Path(text))
    except CalibrationError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def _rows(predictions: Sequence[Prediction], slack_s: float) -> dict[str, Coverage]:
    """Coverage per share, overall, and over the jobs that waited or were forecast to (most
    jobs start at once and every forecast gets those right)."""
    waits = [p for p in predictions if p.p90_s > 0 or p.actual_s > slack_s]
    rows = _per_share(predictions, slack_s)
    rows["overall"] = Coverage.of(widened(predictions, slack_s))
    rows["overall, waits"] = Coverage.of(widened(waits, slack_s))
    return rows


def agreement(mine: Sequence[float], other: Sequence[float]) -> dict[str, object]:
    """How the actual waits ``mine`` differ from ``other``'s, job by job (same jobs, same
    order): equal, later by up to 3 s, later by more, earlier, started in one only."""
    deltas = [a - b for a, b in zip(mine, other, strict=True)]
    finite = [d for d in deltas if math.isfinite(d)]
    return {
        "jobs": len(deltas),
        "same": sum(abs(d) < 0.5 for d in finite),
        "laterBy1To3S": sum(0.5 <= d <= 3.5 for d in finite),
        "laterByMore": sum(d > 3.5 for d in finite),
        "earlier": sum(d <= -0.5 for d in finite),
        "startedInOneOnly": len(deltas) - len(finite),
        "largestDeltasS": sorted((round(d, 1) for d in finite), key=abs, reverse=True)[:3],
    }


@dataclass
class _Run:
    """What the command gathers over the seeds."""

    http: dict[str, list[Prediction]] = field(default_factory=dict)
    waited: dict[str, list[list[Prediction]]] = field(default_factory=dict)
    """Per mode, per seed, the waited jobs' predictions (interval widened by the slack)."""
    local: dict[str, list[Prediction]] = field(default_factory=dict)
    waits: dict[str, list[float]] = field(default_factory=dict)
    slack_s: float = 0.0
    cpu_s: dict[str, float] = field(default_factory=dict)
    """CPU seconds of this process: over HTTP (emulator included), and of the comparison."""


def _run_seed(
    args: argparse.Namespace, org: Organisation, jobs: list[WorkloadJob], seed: int, run: _Run
) -> None:
    started = time.process_time()
    with EmulatorServer(org_files=[args.org], start_epoch=EPOCH_S, seed=seed) as emu:
        done = replay(
            emu,
            org,
            jobs,
            every=args.every,
            samples=args.samples,
            seed=seed,
            arrivals=args.arrivals,
            slack_s=args.slack_s,
            calibration=args.calibration,
        )
        options, grace = emulator_options(emu, org), emu.emulator.calendar_grace_s
    run.slack_s = done.slack_s
    run.cpu_s["overHttp"] = run.cpu_s.get("overHttp", 0.0) + time.process_time() - started
    started = time.process_time()
    for mode, result in done.results.items():
        run.http.setdefault(mode, []).extend(result.predictions)
        waited = [p for p in result.predictions if p.p90_s > 0 or p.actual_s > done.slack_s]
        run.waited.setdefault(mode, []).append(widened(waited, done.slack_s))
    if not args.compare:
        return
    first = done.results[args.arrivals[0]].predictions
    run.waits.setdefault("emulator", []).extend(p.actual_s for p in first)
    for label, waits in (
        ("core as the in-process backtest", core_waits(org, jobs)),
        ("core with calendars", core_waits(org, jobs, calendars=True, grace_s=grace)),
        (
            "core with calendars and the emulator's options",
            core_waits(org, jobs, options=options, calendars=True, grace_s=grace),
        ),
    ):
        run.waits.setdefault(label, []).extend(waits[i] for i in done.indices)
    for mode in args.arrivals:
        local = backtest(
            org.queue,
            jobs,
            every=args.every,
            samples=args.samples,
            seed=seed,
            arrivals=mode,
            calibration=args.calibration,
        )
        run.local.setdefault(mode, []).extend(local.predictions)
    run.cpu_s["comparison"] = run.cpu_s.get("comparison", 0.0) + time.process_time() - started


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    org = load_organisation(args.org)
    teams = load_teams(args.teams)
    run = _Run()
    for seed in args.seeds:
        jobs = generate_workload(teams, days=args.days, seed=seed)
        unknown = sorted({j.share for j in jobs} - {s.name for s in org.queue.shares})
        if unknown:
            raise QuotaConfigError(
                [
                    Problem(
                        "--teams",
                        str(args.teams),
                        f"teams {', '.join(unknown)} have no quota share in --org {args.org}",
                        f"give --org the organisation `quota recommend {args.teams}` writes",
                    )
                ]
            )
        _run_seed(args, org, jobs, seed, run)
    report = _report(args, run)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(args, run, report)
    return 0


def _report(args: argparse.Namespace, run: _Run) -> dict[str, object]:
    report: dict[str, object] = {
        "days": args.days,
        "seeds": args.seeds,
        "every": args.every,
        "samples": args.samples,
        "slackS": run.slack_s,
        "cpuS": {k: round(v, 1) for k, v in run.cpu_s.items()},
    }
    for mode in args.arrivals:
        rows = _rows(run.http[mode], run.slack_s)
        report[f"over HTTP, {LABELS[mode]}"] = {n: c.as_json() for n, c in rows.items()}
        spread = seed_interval(run.waited.get(mode, []))
        if spread:
            names = {"interval": "intervalCoverage95", "below_p90": "p90Coverage95"}
            report[f"over HTTP, {LABELS[mode]}"]["overall, waits"].update(  # type: ignore[index]
                {names[key]: [round(v, 3) for v in bounds] for key, bounds in spread.items()}
            )
        exact = Coverage.of(run.http[mode]).as_json()
        report[f"over HTTP, {LABELS[mode]}, no slack"] = {"overall": exact}
        if args.compare:
            rows = _rows(run.local[mode], 0.0)
            report[f"in-process, {LABELS[mode]}"] = {n: c.as_json() for n, c in rows.items()}
    if args.compare:
        emulator = run.waits["emulator"]
        report["actual starts, emulator against"] = {
            label: agreement(emulator, waits)
            for label, waits in run.waits.items()
            if label != "emulator"
        }
    return report


def _print(args: argparse.Namespace, run: _Run, report: Mapping[str, object]) -> None:
    count = len(run.http[args.arrivals[0]])
    print(
        f"{count} forecasts per mode; CPU-s {report['cpuS']} (over HTTP: the emulator "
        f"included); a start within {run.slack_s:g} s of the interval counts as in it"
    )
    for mode in args.arrivals:
        print(coverage_table(f"over HTTP, {LABELS[mode]}", _rows(run.http[mode], run.slack_s)))
        exact = Coverage.of(run.http[mode])
        print(
            f"{'overall, no slack':16s} {exact.jobs:5d} {exact.interval:8.1%} "
            f"{exact.below_p90:6.1%}"
        )
        if spread := seed_interval(run.waited.get(mode, [])):
            (a, b), (c, d) = spread["interval"], spread["below_p90"]
            print(
                f"waits, 95 % bootstrap interval over the {len(run.waited[mode])} workloads "
                f"(resampled whole): p10-p90 {a:.1%}-{b:.1%}, <=p90 {c:.1%}-{d:.1%}"
            )
        if args.compare:
            print(
                coverage_table(f"in-process backtest, {LABELS[mode]}", _rows(run.local[mode], 0.0))
            )
    if args.compare:
        print("\nactual starts (first placement), the emulator's against:")
        against = report["actual starts, emulator against"]
        for label, found in against.items():  # type: ignore[attr-defined]
            print(f"  {label}: {found}")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except QuotaConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
