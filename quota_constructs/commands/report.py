"""``quota report``: the bill per team, from a live queue's history or from a simulation.

The cost rules are the model's (:mod:`quota_constructs.model.cost`); the live history is read by
the same reader as ``quota simulate --from-queue`` (:func:`runtime.adopt.read_job_history`).
boto3 and the runtime are imported where a live queue, a plan's ARN or the Price List API is
asked (``quota simulate`` uses this module's cost tables without them).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from quota_constructs.advisor.billing import (
    Bill,
    Run,
    attempts_from_history,
    equal_work_bills,
)
from quota_constructs.advisor.history import parse_duration
from quota_constructs.advisor.limits import plan_stop_problems
from quota_constructs.advisor.report import plot_bill
from quota_constructs.advisor.simulate import (
    BILLED_STARTUP_S,
    SimulationOptions,
    SimulationResult,
    all_reserve,
    simulated_jobs,
)
from quota_constructs.advisor.workload import DEFAULT_STARTUP_S, WorkloadJob, load_workload_csv
from quota_constructs.commands._common import (
    BackfillOpt,
    BilledStartupOpt,
    EndpointOpt,
    OrganisationOpt,
    PlanStopOpt,
    QueueOpt,
    RegionOpt,
    check_run_splits,
    data_table,
    handle_errors,
    json_option,
    print_json,
    stderr_console,
    stdout_console,
)
from quota_constructs.config import load_organisation
from quota_constructs.model import (
    PLAN_STOP_BEFORE_END_S,
    Organisation,
    Problem,
    QuotaConfigError,
    TrainingPlanSpec,
    parse_utc,
    utc_text,
)
from quota_constructs.model.cost import (
    CHARGE_RULES,
    ChargeRule,
    CostReport,
    Price,
    cost_report,
    parse_prices_file,
)
from quota_constructs.safe_load import load_file

if TYPE_CHECKING:
    from quota_constructs.commands.jobs import QueueClientOptions

SHARE_COLUMNS = (
    "share",
    "instanceType",
    "ownInstanceHours",
    "borrowedInstanceHours",
    "lentInstanceHours",
    "lostInstanceHours",
    "idleInstanceHours",
    "costUsd",
    "chargeUsd",
)
PRICES_FILE_MAX_BYTES = 1024 * 1024


def load_prices(path: Path) -> dict[str, Price]:
    """A prices file (YAML or JSON): ``TYPE: USD`` or ``TYPE: {on_demand, training_plan}``."""
    return load_file(
        path, parse_prices_file, max_bytes=PRICES_FILE_MAX_BYTES, error=QuotaConfigError
    )


def _r(value: float) -> float:
    return round(value, 6)


def share_rows(report: CostReport) -> list[dict[str, Any]]:
    """The share rows in the JSON contract's names (instance-hours and USD)."""
    return [
        {
            "share": r.share,
            "instanceType": r.instance_type,
            "ownInstanceHours": _r(r.own),
            "borrowedInstanceHours": _r(r.borrowed),
            "lentInstanceHours": _r(r.lent),
            "lostInstanceHours": _r(r.lost),
            "idleInstanceHours": _r(r.idle),
            "idleUsd": _r(r.idle_usd),
            "unusedInstanceHours": _r(r.unused),
            "onDemandInstanceHours": _r(r.on_demand),
            "planInstanceHours": _r(r.plan),
            "borrowedFrom": {k: _r(v) for k, v in sorted(r.borrowed_from.items()) if v},
            "lentTo": {k: _r(v) for k, v in sorted(r.lent_to.items()) if v},
            "costUsd": _r(r.cost_usd),
            "lostUsd": _r(r.lost_usd),
            "chargeUsd": _r(r.charge_usd),
        }
        for r in report.shares
    ]


def team_rows(report: CostReport) -> dict[str, dict[str, float]]:
    """Per team, over its instance types: ``costUsd``, ``lostUsd`` (what its preempted
    attempts' thrown-away work cost, part of ``costUsd``) and ``chargeUsd``."""
    teams: dict[str, dict[str, float]] = {}
    for r in report.shares:
        sums = teams.setdefault(r.share, {"costUsd": 0.0, "lostUsd": 0.0, "chargeUsd": 0.0})
        sums["costUsd"] += r.cost_usd
        sums["lostUsd"] += r.lost_usd
        sums["chargeUsd"] += r.charge_usd
    return {team: {k: _r(v) for k, v in sums.items()} for team, sums in teams.items()}


def bill_data(bill: Bill) -> dict[str, Any]:
    """A simulated bill's equal-work figures: jobs billed and unfinished (each with what
    finishing it on demand would cost), and the saving against the all-RESERVE run."""
    data: dict[str, Any] = {
        "jobsBilled": bill.jobs_billed,
        "jobsUnfinished": len(bill.unfinished),
        "unfinishedUsd": _r(bill.unfinished_usd),
        "unfinishedJobs": [
            {
                "job": u.job,
                "share": u.share,
                "instanceType": u.instance_type,
                "instances": u.instance_count,
                "reason": u.reason,
                "wouldCostUsd": _r(u.would_cost_usd),
            }
            for u in bill.unfinished
        ],
        "equalWorkCostUsd": _r(bill.equal_work_usd),
    }
    if bill.baseline_usd is not None and bill.saving_usd is not None:
        data["separatePoolsCostUsd"] = _r(bill.baseline_usd)
        data["sharingSavesUsd"] = _r(bill.saving_usd)
    return data


def startup_note(startup_s: float) -> str:
    """What a simulated bill depends on beside the workload: the start-up of each job."""
    return (
        f"simulated with a start-up of {startup_s:g} s per job (defaults: quota report 0 s, "
        f"quota simulate {DEFAULT_STARTUP_S:g} s; the same --startup-s gives the same figures)"
    )


def report_data(
    report: CostReport, startup_s: float | None = None, bill: Bill | None = None
) -> dict[str, Any]:
    """The whole report for ``--json``; of a simulation, with its ``startupS`` and its
    equal-work figures (:func:`bill_data`), whose saving replaces the modelled one."""
    data = _report_data(report, startup_s)
    if bill is not None:
        data.update(bill_data(bill))
    return data


def _report_data(report: CostReport, startup_s: float | None) -> dict[str, Any]:
    return {
        "period": {"start": utc_text(report.start_s), "end": utc_text(report.end_s)},
        **({} if startup_s is None else {"startupS": startup_s}),
        "chargeRule": {"rule": report.rule.value, "text": CHARGE_RULES[report.rule]},
        "shares": share_rows(report),
        "plans": [
            {
                "name": p.name,
                "instanceType": p.instance_type,
                "utilisation": _r(p.utilisation),
                "reservedInstanceHours": _r(p.reserved),
                "usedInstanceHours": _r(p.used),
                "idleInstanceHours": _r(p.idle),
                "costUsd": _r(p.cost_usd),
            }
            for p in report.plans
        ],
        "teams": team_rows(report),
        "totalCostUsd": _r(report.total_cost_usd),
        "separatePoolsCostUsd": _r(report.fixed_pools_cost_usd),
        "sharingSavesUsd": _r(report.saving_usd),
    }


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP's CSV-injection list)."""


def spreadsheet_safe(value: Any) -> Any:
    """A text cell a spreadsheet would take for a formula, quoted with a leading ``'`` (shown
    as text, as OWASP advises); numbers, negative ones included, as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def report_csv(report: CostReport) -> str:
    """The share rows as CSV for finance (one header line, the contract's column names); a
    text cell that a spreadsheet would run as a formula starts with ``'``
    (:func:`spreadsheet_safe`)."""
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=SHARE_COLUMNS, extrasaction="ignore", lineterminator="\n"
    )
    writer.writeheader()
    writer.writerows({k: spreadsheet_safe(v) for k, v in row.items()} for row in share_rows(report))
    return out.getvalue()


def print_report(
    report: CostReport, startup_s: float | None = None, bill: Bill | None = None
) -> None:
    """The share table, the plans table, the totals, the charge rule; of a simulation, the
    start-up it simulated and the jobs it did not finish."""
    console = stdout_console()
    title = f"Cost per team, {utc_text(report.start_s)} to {utc_text(report.end_s)}"
    table = data_table(
        "share",
        "type",
        "own h",
        "borrowed h (from)",
        "lent h (to)",
        "lost h",
        "idle h",
        "cost USD",
        "charge USD",
        title=title,
    )
    for row in share_rows(report):
        table.add_row(
            row["share"],
            row["instanceType"],
            f"{row['ownInstanceHours']:,.1f}",
            _with_peers(row["borrowedInstanceHours"], row["borrowedFrom"]),
            _with_peers(row["lentInstanceHours"], row["lentTo"]),
            f"{row['lostInstanceHours']:,.1f}",
            f"{row['idleInstanceHours']:,.1f}",
            f"{row['costUsd']:,.2f}",
            f"{row['chargeUsd']:,.2f}",
        )
    console.print(table)
    if report.plans:
        plans = data_table(
            "plan",
            "type",
            "reserved h",
            "used h",
            "idle h",
            "utilisation",
            "cost USD",
            title="Training plans",
        )
        for p in report.plans:
            plans.add_row(
                p.name,
                p.instance_type,
                f"{p.reserved:,.1f}",
                f"{p.used:,.1f}",
                f"{p.idle:,.1f}",
                f"{p.utilisation:.0%}",
                f"{p.cost_usd:,.2f}",
            )
        console.print(plans)
    for line in unfinished_lines(bill) if bill is not None else []:
        console.print(line)
    console.print(totals_line(report, bill))
    console.print(f"charge rule '{report.rule.value}': {CHARGE_RULES[report.rule]}")
    if startup_s is not None:
        console.print(startup_note(startup_s))


def totals_line(report: CostReport, bill: Bill | None = None) -> str:
    """The total and the saving: of a simulation (``bill``), against the all-RESERVE run of
    the same jobs, the unfinished named; of a live queue, against the modelled separate pools."""
    if bill is None or bill.saving_usd is None:
        return (
            f"total cost: {report.total_cost_usd:,.2f} USD; the same teams on separate "
            f"fixed pools (modelled: borrowed plan hours bought on demand): "
            f"{report.fixed_pools_cost_usd:,.2f} USD (sharing saves {report.saving_usd:,.2f} USD)"
        )
    assert bill.baseline_usd is not None
    total = report.total_cost_usd
    text = f"total cost: {total:,.2f} USD for {bill.jobs_billed} jobs run to the end"
    if bill.unfinished:
        text += (
            f", {len(bill.unfinished)} unfinished (finishing them on demand: "
            f"{bill.unfinished_usd:,.2f} USD, so {bill.equal_work_usd:,.2f} USD for all)"
        )
    return (
        f"{text}; the same jobs on separate pools (the all-RESERVE run, unfinished jobs "
        f"finished on demand): {bill.baseline_usd:,.2f} USD ({saving_words(bill.saving_usd)})"
    )


def saving_words(saving_usd: float) -> str:
    """``sharing saves X USD``, or ``sharing costs X USD more`` when it costs more (on demand,
    the work its preemptions threw away)."""
    if saving_usd < -0.005:
        return f"sharing costs {-saving_usd:,.2f} USD more"
    return f"sharing saves {max(saving_usd, 0.0):,.2f} USD"


def unfinished_lines(bill: Bill) -> list[str]:
    """One line per job a run did not finish: why, and what finishing it would cost."""
    return [
        f"{u.job} ({u.share}, {u.instance_count} x {u.instance_type}) did not finish: "
        f"{u.reason}; finishing it on demand: {u.would_cost_usd:,.2f} USD"
        for u in bill.unfinished
    ]


def simulation_bill(
    org: Organisation,
    jobs: Sequence[WorkloadJob],
    prices: Mapping[str, Price],
    options: SimulationOptions,
    *,
    start: str | None = None,
    rule: ChargeRule = ChargeRule.BOTH,
) -> Bill:
    """``jobs`` simulated on ``org`` and on its all-RESERVE version, both to the end, billed
    over one period: the bill of ``org``'s run, its saving the difference on equal work."""
    start_s = _simulation_start(org, start)
    options = dataclasses.replace(options, plan_epoch_s=start_s)
    reserve = dataclasses.replace(org, queue=all_reserve(org.queue), calendars={})
    runs = {
        "run": Run(org, simulated_jobs(org, jobs, options=options), start_s),
        "all-RESERVE": Run(reserve, simulated_jobs(reserve, jobs, options=options), start_s),
    }
    bills = equal_work_bills(runs, prices, options, baseline_of={"run": "all-RESERVE"}, rule=rule)
    return bills["run"]


def simulation_cost(
    org: Organisation,
    jobs: Sequence[WorkloadJob],
    prices: Mapping[str, Price],
    options: SimulationOptions,
    *,
    start: str | None = None,
) -> CostReport:
    """The cost of ``jobs`` simulated on ``org`` (:func:`simulation_bill`'s report)."""
    return simulation_bill(org, jobs, prices, options, start=start).report


def simulation_bills(
    runs: Mapping[str, tuple[Organisation, SimulationResult]],
    workload: Sequence[WorkloadJob],
    prices: Mapping[str, Price],
    options: SimulationOptions,
    *,
    reserve_label: str | None = None,
) -> dict[str, Bill]:
    """Bills of simulations that ran already (label -> organisation and result), all to the
    end over one period; each saving is against ``reserve_label``'s run, else against an
    all-RESERVE run of each organisation's shares (run here, once per set of shares, labelled
    ``all-RESERVE`` and returned too)."""
    labelled = {
        label: Run(org, result.jobs, _simulation_start(org, None))
        for label, (org, result) in runs.items()
    }
    baseline_of: dict[str, str] = {}
    if reserve_label is not None:
        baseline_of = dict.fromkeys(labelled, reserve_label)
    else:
        for label, (org, _) in runs.items():
            reserve = dataclasses.replace(org, queue=all_reserve(org.queue), calendars={})
            known = [b for b, run in labelled.items() if run.organisation == reserve]
            if not known:
                name = "all-RESERVE" if "all-RESERVE" not in labelled else f"all-RESERVE ({label})"
                jobs = simulated_jobs(reserve, workload, options=options)
                labelled[name] = Run(reserve, jobs, _simulation_start(reserve, None))
                known = [name]
            baseline_of[label] = known[0]
        for name in set(baseline_of.values()):
            baseline_of[name] = name
    return equal_work_bills(labelled, prices, options, baseline_of=baseline_of)


def money_table(bill: Bill, label: str, startup_s: float) -> Table:
    """Per team: instance-hours own, borrowed, lent, unused (idle), their cost and what its
    lost work cost; the totals on equal work and the start-up simulated."""
    report = bill.report
    table = data_table(
        "team",
        "own h",
        "borrowed h",
        "lent h",
        "unused h",
        "idle USD",
        "lost USD",
        "cost USD",
        title=f"Money: {label}",
    )
    teams: dict[str, list[float]] = {}
    for row in report.shares:
        sums = teams.setdefault(row.share, [0.0] * 7)
        values = (
            row.own,
            row.borrowed,
            row.lent,
            row.unused,
            row.idle_usd,
            row.lost_usd,
            row.cost_usd,
        )
        for i, value in enumerate(values):
            sums[i] += value
    for team, sums in teams.items():
        table.add_row(team, *(f"{v:,.1f}" for v in sums[:4]), *(f"{v:,.2f}" for v in sums[4:]))
    table.caption = f"{totals_line(report, bill)}; {startup_note(startup_s)}"
    return table


def _with_peers(hours: float, peers: dict[str, float]) -> str:
    if not peers:
        return f"{hours:,.1f}"
    return f"{hours:,.1f} (" + ", ".join(f"{k} {v:,.1f}" for k, v in peers.items()) + ")"


def _rule(value: str) -> ChargeRule:
    try:
        return ChargeRule(value)
    except ValueError:
        choices = ", ".join(r.value for r in ChargeRule)
        raise QuotaConfigError(
            [Problem("--charge", value, f"not a charge rule ({choices})", "e.g. --charge both")]
        ) from None


def _simulation_start(org: Organisation, start: str | None) -> float:
    """Epoch of simulated time 0: ``--start``, else the first plan's start, else 0 (1970)."""
    if start is not None:
        epoch = parse_utc(start)
        if epoch is None:
            raise QuotaConfigError(
                [
                    Problem(
                        "--start",
                        start,
                        "not an ISO 8601 UTC time",
                        "e.g. --start 2027-06-01T00:00:00Z",
                    )
                ]
            )
        return epoch
    named = [p.start_s for p in org.training_plans if not p.by_arn]
    return min(named, default=0.0)


def _live(
    options: QueueClientOptions, since: str, plans_from: Path | None
) -> tuple[Organisation, list[Any], float, float]:
    from quota_constructs.runtime.adopt import read_job_history, read_organisation

    seconds = parse_duration(since)
    client = options.client()
    live = read_organisation(client).organisation
    if plans_from is not None:  # the file tells what the queue cannot: calendars, plans
        live = load_organisation(plans_from)
    elif client.organisation_plans:  # the plans the organisation's stack publishes
        plans = tuple(TrainingPlanSpec(arn=arn) for arn in client.organisation_plans)
        live = dataclasses.replace(live, training_plans=plans)
    history = read_job_history(client, time.time() - seconds)
    attempts = attempts_from_history(history.jobs, now_s=history.now_s)
    return live, attempts, history.since_s, history.now_s


def check_plan_stop(seconds: float) -> None:
    """Refuse a ``--plan-stop-before-end-s`` outside 0 to a day (the option's own error)."""
    problems = plan_stop_problems(seconds)
    if problems:
        raise QuotaConfigError(problems)


def _with_plans(org: Organisation, endpoint_url: str | None, region: str | None) -> Organisation:
    """``org`` with its ``{arn}`` plans looked up (DescribeTrainingPlan); unchanged without."""
    if not any(p.by_arn for p in org.training_plans):
        return org
    import boto3

    from quota_constructs.runtime.training_plans import resolve_plans

    sagemaker = boto3.client("sagemaker", endpoint_url=endpoint_url, region_name=region)
    return resolve_plans(org, sagemaker)


def _price_list(types: set[str], region: str | None) -> dict[str, Price]:
    """Prices from the AWS Price List API; unreachable or no region: a problem naming the fix."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    from quota_constructs.runtime.pricing import price_list_prices

    region = region or boto3.session.Session().region_name
    if region is None:
        raise QuotaConfigError(
            [
                Problem(
                    "--prices",
                    None,
                    "no prices file and no region to ask the Price List API for",
                    "pass --prices FILE or --region REGION",
                )
            ]
        )
    try:
        return price_list_prices(types, region=region)
    except (BotoCoreError, ClientError) as error:
        raise QuotaConfigError(
            [
                Problem(
                    "--prices",
                    None,
                    f"no prices file, and the AWS Price List API could not be asked ({error})",
                    "pass --prices FILE (TYPE: USD per instance-hour)",
                )
            ]
        ) from None


@handle_errors
def report_command(
    org_file: Path | None = typer.Argument(
        None,
        help="Organisation file: simulated with --workload; with a live queue, the "
        "organisation as declared (its share calendars and training plans), instead of the "
        "settings in force now.",
    ),
    workload: Path | None = typer.Option(None, "--workload", help="Workload CSV to simulate."),
    queue: QueueOpt = None,
    organisation: OrganisationOpt = None,
    since: str = typer.Option("7d", "--since", help="Live queue: the period, e.g. 24h, 7d."),
    prices_file: Path | None = typer.Option(
        None,
        "--prices",
        help="Prices file (YAML or JSON): TYPE: USD per instance-hour; default: the AWS Price "
        "List API (cached).",
    ),
    charge: str = typer.Option("both", "--charge", help="Charge rule: both, usage, capacity."),
    start: str | None = typer.Option(
        None,
        "--start",
        help="Simulation: the UTC time of simulated time 0 (default: the first plan's start).",
    ),
    startup_s: float = typer.Option(
        0.0, "--startup-s", help="Simulation: dispatch-to-running delay (s)."
    ),
    billed_startup_s: BilledStartupOpt = BILLED_STARTUP_S,
    backfill_depth: BackfillOpt = 0,
    plan_stop_s: PlanStopOpt = PLAN_STOP_BEFORE_END_S,
    as_json: Annotated[bool, json_option("Print the report as JSON.")] = False,
    as_csv: bool = typer.Option(False, "--csv", help="Print the share rows as CSV."),
    plot: Path | None = typer.Option(
        None,
        "--plot",
        help="Write a PNG: use per team over time, the reservation and its idle band.",
    ),
    endpoint_url: EndpointOpt = None,
    region: RegionOpt = None,
) -> None:
    """Instance-hours and cost per team: own, borrowed, lent, lost, idle; plans; charges."""
    rule = _rule(charge)
    live = queue is not None or organisation is not None
    if live == (workload is not None):
        raise QuotaConfigError(
            [
                Problem(
                    "--workload/--organisation",
                    None,
                    "give one source: a live queue or a simulated workload",
                    "pass -o ORG (or -q QUEUE), or ORG_FILE --workload W.csv",
                )
            ]
        )
    if live:
        from quota_constructs.commands.jobs import QueueClientOptions

        options = QueueClientOptions(queue, organisation, endpoint_url, region)
        org, attempts, start_s, end_s = _live(options, since, org_file)
        org = _with_plans(org, endpoint_url, region)
    else:
        if org_file is None:
            raise QuotaConfigError(
                [Problem("ORG_FILE", None, "missing", "pass the organisation file to simulate")]
            )
        assert workload is not None
        org = _with_plans(load_organisation(org_file), endpoint_url, region)
        jobs = load_workload_csv(workload)
        start_s = _simulation_start(org, start)
        check_plan_stop(plan_stop_s)
        check_run_splits(
            backfill_depth=backfill_depth, startup_s=startup_s, billed_startup_s=billed_startup_s
        )
        sim = SimulationOptions(
            startup_s=startup_s,
            billed_startup_s=billed_startup_s,
            plan_stop_before_end_s=plan_stop_s,
            backfill_depth=backfill_depth,
        )
        attempts = []
    ran = {a.instance_type for a in attempts} if live else {j.instance_type for j in jobs}
    types = ran | {p.instance_type for p in org.training_plans if not p.by_arn}
    prices = load_prices(prices_file) if prices_file is not None else _price_list(types, region)
    bill = None
    if live:
        report = cost_report(org, attempts, prices, start_s=start_s, end_s=end_s, rule=rule)
    else:
        bill = simulation_bill(org, jobs, prices, sim, start=start, rule=rule)
        report = bill.report
    simulated = None if live else startup_s
    if as_json:
        print_json(report_data(report, simulated, bill))
    elif as_csv:
        typer.echo(report_csv(report), nl=False)
    else:
        print_report(report, simulated, bill)
    if plot is not None:
        plot_bill(report, plot)
        stderr_console().print(f"wrote {plot}")
