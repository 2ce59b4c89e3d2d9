"""``quota org``: validate organisation files, export their JSON Schema; import, diff, plan.

``import``, ``diff`` and ``plan`` read a live queue through :mod:`quota_constructs.runtime.adopt`:
data on stdout, messages on stderr; exit 1 when ``diff`` finds drift or ``plan`` a destructive
change that the file's ``allow_destructive`` does not name (docs/cli.md, "Exit codes").
``plan`` synthesizes both versions of the stack (:mod:`quota_constructs.stacks.plan`; aws_cdk
is imported only then).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from quota_constructs.api_shapes import capacity_limits_to_api, share_to_api
from quota_constructs.commands._calendar import (
    calendar_rows,
    calendar_table,
    organisation_in_force,
)
from quota_constructs.commands._common import (
    CliError,
    EndpointOpt,
    ExitCode,
    JsonOpt,
    RegionOpt,
    WideOpt,
    data_table,
    handle_errors,
    json_option,
    print_errors,
    print_json,
    problem_lines,
    stderr_console,
    stdout_console,
)
from quota_constructs.commands._control import queue_now
from quota_constructs.commands.preflight import preflight_command
from quota_constructs.config import (
    OrganisationFile,
    OrgFileError,
    json_schema,
    load_organisation,
)
from quota_constructs.contracts import job_queue_arn_parameter
from quota_constructs.deploy_plan import DeployPlan, LiveJob, ResourceChange
from quota_constructs.model import (
    ALLOW_DESTRUCTIVE_KEY,
    SCHEDULING_PRIORITY_RANGE,
    SHARE_FIELDS,
    Organisation,
    Problem,
    QuotaShareSpec,
    team_tag_value,
    training_job_prefix,
)
from quota_constructs.runtime.adopt import (
    ImportedQueue,
    OrganisationDrift,
    QueueNotFound,
    organisation_client,
    organisation_drift,
    read_organisation,
)
from quota_constructs.runtime.queue import QueueClient

org_app = typer.Typer(
    help="Organisation files: validate, schema; import, diff and plan against a live queue.",
    no_args_is_help=True,
)

EXIT_INVALID = ExitCode.USAGE


MAX_USABLE = "max usable (with borrowing)"
SHARE_COLUMN_ORDER = (
    "share",
    "strategy",
    "borrow limit",
    "in-share preemption",
    "capacity",
    MAX_USABLE,
    "state",
)
"""The table's columns in order: each declared ``ShareField.column`` and the max usable; a
declared column not named here comes last (hidden first when narrow)."""
_SHARE_CELLS: dict[str, Callable[[QuotaShareSpec], str]] = {
    "borrow_limit": lambda share: _borrow_limit_text(share.effective_borrow_limit),
    "in_share_preemption": lambda share: "on" if share.in_share_preemption else "off",
    "capacity": lambda share: _capacity_text(share.capacity),
}
"""How a field reads in its cell where :func:`_cell` of its value would not do."""


def organisation_table(org: Organisation, *, wide: bool = False) -> Table:
    """Shares, strategy, capacity and the most each share can use with borrowing: a column per
    field declared with a ``ShareField.column`` (``model.SHARE_FIELDS``)."""
    queue = org.queue
    se = queue.service_environment_capacity()
    columns = {f.column: name for name, f in SHARE_FIELDS.items() if f.column is not None}
    headers = [h for h in SHARE_COLUMN_ORDER if h in columns or h == MAX_USABLE]
    others = [h for h in columns if h not in SHARE_COLUMN_ORDER]
    table = data_table(
        *headers,
        *others,
        title=f"{org.name}: service environment {_capacity_text(se)}",
        drop=(*others[::-1], "state", "in-share preemption", "borrow limit"),
        wide=wide,
    )
    for share in queue.shares:
        max_usable = {t: queue.max_usable(share.name, t) for t in share.capacity}
        cells = {header: _share_cell(share, name) for header, name in columns.items()}
        table.add_row(
            *(_capacity_text(max_usable) if h == MAX_USABLE else cells[h] for h in headers),
            *(cells[h] for h in others),
        )
    return table


def _share_cell(share: QuotaShareSpec, name: str) -> str:
    shown = _SHARE_CELLS.get(name)
    return _cell(getattr(share, name)) if shown is None else shown(share)


def _borrow_limit_text(limit: int | None) -> str:
    return "-" if limit is None else ("unlimited" if limit == -1 else f"{limit}%")


def access_table(org: Organisation, *, wide: bool = False) -> Table | None:
    """Per share with an ``access`` block: principals, priority cap, execution role, bucket,
    the prefix of its training job names and whose log streams its role may write."""
    rows = [(share.name, share.access) for share in org.queue.shares if share.access is not None]
    if not rows:
        return None
    table = data_table(
        "share",
        "principals",
        "max priority",
        "execution role",
        "bucket",
        "job name prefix",
        title=f"{org.name}: team access",
        drop=("job name prefix", "bucket", "execution role", "max priority"),
        wide=wide,
    )
    for name, access in rows:
        cap = access.max_priority
        table.add_row(
            name,
            ", ".join(access.principals),
            str(cap) if cap is not None else f"{SCHEDULING_PRIORITY_RANGE[1]} (no cap)",
            "created" if access.creates_execution_role else access.execution_role,
            "created" if access.creates_bucket else access.bucket,
            f"{_prefix(org, name)} ({access.training_logs} logs)",
        )
    return table


def _prefix(org: Organisation, share: str) -> str:
    return training_job_prefix(team_tag_value(org.name, share))


def _capacity_text(capacity: Mapping[str, int]) -> str:
    return ", ".join(f"{count} x {itype}" for itype, count in capacity.items())


def organisation_json(org: Organisation) -> dict[str, Any]:
    """The organisation as the API names it: shares as CreateQuotaShare fields, plus ours."""
    queue = org.queue
    return {
        "organisation": org.name,
        "serviceEnvironmentCapacity": capacity_limits_to_api(queue.service_environment_capacity()),
        "quotaShares": [
            {
                **share_to_api(share),
                "maxUsable": capacity_limits_to_api(
                    {t: queue.max_usable(share.name, t) for t in share.capacity}
                ),
                "access": None
                if share.access is None
                else {
                    "principals": list(share.access.principals),
                    "maxPriority": share.access.max_priority,
                    "executionRole": share.access.execution_role,
                    "bucket": share.access.bucket,
                    "trainingLogs": share.access.training_logs,
                    "trainingJobPrefix": _prefix(org, share.name),
                },
            }
            for share in queue.shares
        ],
    }


def problem_json(problem: Problem) -> dict[str, Any]:
    """One problem: line, field path, value, what is wrong, the fix."""
    value = problem.value
    if not isinstance(value, str | int | float | bool | type(None)):
        value = str(value)
    return {
        "line": problem.line,
        "path": problem.path,
        "value": value,
        "message": problem.message,
        "fix": problem.fix,
    }


@org_app.command("validate")
@handle_errors
def validate(
    files: Annotated[list[Path], typer.Argument(help="Organisation YAML files.")],
    as_json: Annotated[
        bool, json_option("Print each file's organisation or problems as JSON.")
    ] = False,
    wide: WideOpt = False,
) -> None:
    """Validate organisation files; exit 2 listing every problem (file, line, field, value, fix)."""
    out = stdout_console()
    results: list[dict[str, Any]] = []
    failed = False
    for file in files:
        try:
            org = load_organisation(file)
        except OrgFileError as exc:
            failed = True
            problems = [problem_json(p) for p in exc.problems]
            results.append({"file": str(file), "valid": False, "problems": problems})
            print_errors(problem_lines(exc))  # and on to the next file
            continue
        results.append({"file": str(file), "valid": True, **organisation_json(org)})
        if not as_json:
            out.print(organisation_table(org, wide=wide))
            if (access := access_table(org, wide=wide)) is not None:
                out.print(access)
    if as_json:
        print_json(results)
    if failed:
        raise typer.Exit(EXIT_INVALID)


@org_app.command("schema")
@handle_errors
def schema() -> None:
    """Print the JSON Schema of organisation files (for editor completion)."""
    typer.echo(json_schema())


# --- quota org import ----------------------------------------------------------------------------


@org_app.command("import")
@handle_errors
def import_command(
    queue: Annotated[
        str, typer.Option("--queue", help="Job queue name or ARN to read.", show_default=False)
    ],
    output: Annotated[
        Path | None, typer.Option("--output", help="Write the organisation file here.")
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="Organisation name (default: the queue's, minus -queue)."),
    ] = None,
    resource_mapping: Annotated[
        Path | None,
        typer.Option(
            "--resource-mapping",
            help="Also write the mapping for `cdk import --resource-mapping` (logical ID -> "
            "identifier) here.",
        ),
    ] = None,
    endpoint_url: EndpointOpt = None,
    region: RegionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write an organisation file from a live queue; print the identifiers to import.

    The file goes to --output or stdout (then the identifiers go to stderr).
    """
    client = QueueClient(queue, endpoint_url=endpoint_url, region=region)
    imported = read_organisation(client, name)
    text = _file_text(imported)
    if output is not None:
        _write(output, text)
    if resource_mapping is not None:
        _write(resource_mapping, json.dumps(cdk_resource_mapping(imported), indent=2) + "\n")
    if as_json:
        print_json(_import_json(imported, output, text))
        return
    err = stderr_console()
    if output is None:
        typer.echo(text, nl=False)
        for r in imported.resources:  # stdout holds the file: one line per resource here
            err.print(
                f"import {r.resource_type} {r.identifier_name}={r.identifier} "
                f"as {r.construct_path}",
                markup=False,
            )
    else:
        console = stdout_console()
        console.print(f"wrote {output}", markup=False)
        console.print(identifier_table(imported))
    for note in imported.notes:
        err.print(f"note: {note}", markup=False)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def cdk_resource_mapping(imported: ImportedQueue) -> dict[str, dict[str, str]]:
    """``{logical ID: {identifier name: value}}`` of the imported organisation's stack.

    The stack is built in memory (no synth to disk) to learn the logical IDs ``cdk import``
    uses; aws_cdk is imported only here, so other commands start fast.
    """
    import aws_cdk as cdk

    from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for

    org = imported.organisation
    stack = OrganisationStack(cdk.App(), stack_name_for(org), organisation=org)
    by_path = {c.node.path: c for c in stack.node.find_all() if isinstance(c, cdk.CfnResource)}
    return {
        str(stack.resolve(by_path[r.construct_path].logical_id)): {r.identifier_name: r.identifier}
        for r in imported.resources
    }


def _file_text(imported: ImportedQueue) -> str:
    header = (
        f"# Imported by `quota org import` from {imported.job_queue_arn}.\n"
        "# Descriptions and team access are not stored by AWS: add them here.\n"
    )
    return header + OrganisationFile.from_organisation(imported.organisation).to_yaml()


def identifier_table(imported: ImportedQueue) -> Table:
    """Per resource: CloudFormation type, the identifier ``cdk import`` asks for, construct."""
    table = data_table(
        "resource type",
        "identifier",
        "value",
        "construct",
        title=f"Resources to import into stack Quota-{imported.organisation.name}",
    )
    for r in imported.resources:
        table.add_row(r.resource_type, r.identifier_name, r.identifier, r.construct_path)
    return table


def _import_json(imported: ImportedQueue, output: Path | None, text: str) -> dict[str, Any]:
    return {
        "organisation": imported.organisation.name,
        "output": None if output is None else str(output),
        "organisationFile": None if output is not None else text,
        "resources": [
            {
                "resourceType": r.resource_type,
                "identifierName": r.identifier_name,
                "identifier": r.identifier,
                "constructPath": r.construct_path,
            }
            for r in imported.resources
        ],
        "notes": list(imported.notes),
    }


# --- quota org diff ------------------------------------------------------------------------------


@org_app.command("diff")
@handle_errors
def diff_command(
    org_file: Annotated[Path, typer.Argument(help="Organisation YAML file.")],
    queue: Annotated[
        str | None,
        typer.Option("--queue", help="Job queue name or ARN (default: the organisation's, SSM)."),
    ] = None,
    endpoint_url: EndpointOpt = None,
    region: RegionOpt = None,
    as_json: JsonOpt = False,
    at: Annotated[
        datetime | None,
        typer.Option(
            "--at",
            formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S"],
            help="Compare with the settings the shares' calendars put in force at this time "
            "(ISO 8601, UTC unless an offset is given; default now).",
        ),
    ] = None,
) -> None:
    """Compare a file with the live queue; exit 0 when they match, 1 when they drift.

    A share with a calendar is compared with the settings in force now (or ``--at``): a
    scheduled change is not drift.
    """
    org = load_organisation(org_file)
    when = queue_now(endpoint_url) if at is None else (at if at.tzinfo else at.replace(tzinfo=UTC))
    options: dict[str, Any] = {"endpoint_url": endpoint_url, "region": region}
    client = QueueClient(queue, **options) if queue else organisation_client(org.name, **options)
    live = read_organisation(client, org.name).organisation
    drift = organisation_drift(organisation_in_force(org, when), live)
    if as_json:
        print_json({**drift_json(org, client, drift), "calendars": calendar_rows(org, when)})
    elif drift.drifted:
        stdout_console().print(drift_table(org, client, drift))
    else:
        stderr_console().print(f"{org_file} matches {client.queue}")
    if org.calendars and not as_json:
        stderr_console().print(calendar_table(org, when))
    if drift.drifted:
        raise typer.Exit(int(ExitCode.FAILED))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "{}"
    return str(value)


def drift_table(org: Organisation, client: QueueClient, drift: OrganisationDrift) -> Table:
    """One row per differing field, then shares on one side only."""
    table = data_table(
        "share", "field", "file", "queue", title=f"{org.name}: file vs {client.queue}"
    )
    for d in drift.fields:
        table.add_row(d.share or "(job queue)", d.field, _cell(d.file), _cell(d.queue))
    for share in drift.only_in_file:
        table.add_row(share, "(quota share)", "present", "absent")
    for share in drift.only_in_queue:
        table.add_row(share, "(quota share)", "absent", "present")
    return table


def drift_json(org: Organisation, client: QueueClient, drift: OrganisationDrift) -> dict[str, Any]:
    """The drift for pipelines: ``drifted``, ``differences``, ``onlyInFile``, ``onlyInQueue``."""
    return {
        "organisation": org.name,
        "jobQueue": client.queue,
        "drifted": drift.drifted,
        "differences": [
            {"quotaShareName": d.share, "field": d.field, "file": d.file, "queue": d.queue}
            for d in drift.fields
        ],
        "onlyInFile": list(drift.only_in_file),
        "onlyInQueue": list(drift.only_in_queue),
    }


org_app.command("preflight")(preflight_command)  # its own module: it asks Service Quotas


# --- quota org plan ------------------------------------------------------------------------------


@org_app.command("plan")
@handle_errors
def plan_command(
    org_file: Annotated[Path, typer.Argument(help="The organisation file to deploy.")],
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="Compare with this file (the one deployed now) instead of the live queue; "
            "no jobs are read.",
            show_default=False,
        ),
    ] = None,
    organisation: Annotated[
        str | None,
        typer.Option(
            "--organisation",
            "-o",
            help="Compare with this deployed organisation's queue (SSM; default: the file's).",
            show_default=False,
        ),
    ] = None,
    queue: Annotated[
        str | None,
        typer.Option(
            "--queue", help="Compare with this job queue (name or ARN).", show_default=False
        ),
    ] = None,
    absent_ok: Annotated[
        bool,
        typer.Option(
            "--absent-ok",
            help="When the file's organisation is not deployed, plan its first deploy (every "
            "resource created, exit 0) instead of exit 3; for pipelines.",
        ),
    ] = False,
    endpoint_url: EndpointOpt = None,
    region: RegionOpt = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Show what deploying FILE would do, per resource, as CloudFormation would do it.

    Created, updated in place, REPLACED (which create-only property changed) or DELETED; for
    each quota share deleted, replaced, DISABLED or reduced below its use, the running and
    waiting jobs it would terminate or preempt (from the live queue); and every change that
    would fail. A destructive change that FILE's allow_destructive names is allowed. Exit 0
    when nothing destructive is left unallowed, 1 when something is (or a change would fail),
    2 on bad input, 3 when the organisation or queue is not deployed.
    """
    from quota_constructs.deploy_plan import plan_json
    from quota_constructs.stacks.plan import plan_organisation_change

    _check_plan_sources(org_file, against, organisation, queue)
    new = load_organisation(org_file)
    if against is not None:
        old = load_organisation(against)
        plan = plan_organisation_change(old, new)
        compared = str(against)
    else:
        try:
            client = _plan_client(new, organisation, queue, endpoint_url, region)
        except QueueNotFound:
            if not absent_ok or organisation is not None or queue is not None:
                raise
            plan, compared = first_deploy_plan(new), "nothing deployed"
        else:
            plan = live_plan(new, client).plan
            compared = client.queue
    if as_json:
        print_json(plan_json(plan))
    elif plan.changes:
        stdout_console().print(plan_table(plan, f"{org_file} over {compared}", wide=wide))
    else:
        stderr_console().print(f"no changes: {org_file} deploys nothing new over {compared}")
    err = stderr_console()
    if not as_json:
        for note in plan.notes:
            err.print(f"note: {note}", markup=False)
        if plan.fails:
            err.print(
                "the deploy would fail and CloudFormation roll back (nothing deleted; updates "
                "reverted, a preemption they caused is not undone)",
                markup=False,
            )
    _print_gate(plan, org_file)
    if plan.blocked:
        raise typer.Exit(int(ExitCode.FAILED))


def _print_gate(plan: DeployPlan, org_file: Path) -> None:
    """On stderr, in both modes: each destructive change allowed (and why) or blocked (and
    the fix), each unused allowance, then the summary line."""
    from quota_constructs.deploy_plan import change_title, plan_summary

    err = stderr_console()
    for change in plan.changes:
        title = change_title(change)
        if change.fails:
            err.print(
                f"blocked: {title} would fail: {'; '.join(change.fails)}; no allowance lets a "
                "failing change through; fix: change the file so that it does not fail",
                markup=False,
            )
        elif change.allowed:
            err.print(
                f"allowed: {title}{_stakes_text(change)} ({ALLOW_DESTRUCTIVE_KEY}: "
                f"{change.allowed_because})",
                markup=False,
            )
        elif change.blocked:
            err.print(
                f"blocked: {title}{_stakes_text(change)} is destructive and not named in "
                f"{ALLOW_DESTRUCTIVE_KEY}; fix: if it is intended, add "
                f"`{_allowance_example(change)}` to {ALLOW_DESTRUCTIVE_KEY} in {org_file} for "
                "this deploy (docs/pipeline.md), else change the file",
                markup=False,
            )
    for index, allowance in plan.unused_allowances:
        err.print(
            f"warning: {ALLOW_DESTRUCTIVE_KEY}[{index}] ({allowance.describe()}) names no "
            f"destructive change of this deploy; fix: remove it (an allowance left in {org_file} "
            "lets the same change through again later)",
            markup=False,
        )
    err.print(f"plan: {plan_summary(plan)}", markup=False)


def _stakes_text(change: ResourceChange) -> str:
    parts = []
    for verb, jobs in (("terminates", change.jobs_terminated), ("preempts", change.jobs_preempted)):
        if jobs:
            parts.append(f"{verb} {len(jobs)} job(s): " + ", ".join(j.job_name for j in jobs))
    return f" ({'; '.join(parts)})" if parts else ""


def _allowance_example(change: ResourceChange) -> str:
    action = change.allowance_action
    named = (
        f"share: {change.quota_share_name}"
        if change.quota_share_name
        else f"logical_id: {change.logical_id}"
    )
    return f"- {{{named}, action: {action}, reason: <why>}}"


def _check_plan_sources(
    org_file: Path, against: Path | None, organisation: str | None, queue: str | None
) -> None:
    """One source of what is deployed, and files that exist; else a usage error naming the
    option and the fix."""
    given = [
        name
        for name, value in (
            ("--against", against),
            ("-o/--organisation", organisation),
            ("--queue", queue),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise CliError(
            f"{' and '.join(given)} are exclusive: --against compares with the file deployed "
            "now, -o/--organisation and --queue with the live queue; fix: pass one of them"
        )
    for option, path in (("FILE", org_file), ("--against", against)):
        if path is not None and not path.is_file():
            raise CliError(
                f"{option} {path}: no such file; fix: give the path of an organisation file"
                + (" (the version deployed now, e.g. from `git show`)" if option != "FILE" else "")
            )


def _plan_client(
    org: Organisation,
    organisation: str | None,
    queue: str | None,
    endpoint_url: str | None,
    region: str | None,
) -> QueueClient:
    options: dict[str, Any] = {"endpoint_url": endpoint_url, "region": region}
    if queue:
        return QueueClient(queue, **options)
    name = organisation or org.name
    try:
        return organisation_client(name, **options)
    except QueueNotFound as error:
        option = "-o/--organisation" if organisation else "the file's organisation"
        raise QueueNotFound(
            [
                Problem(
                    option,
                    name,
                    f"no organisation {name!r} is deployed (no SSM parameter "
                    f"{job_queue_arn_parameter(name)})",
                    "pass the deployed organisation with -o NAME, its queue with --queue "
                    "NAME_OR_ARN, or compare two files with --against OLD_FILE",
                )
            ]
        ) from error


def first_deploy_plan(new: Organisation) -> DeployPlan:
    """The plan of ``new``'s first deploy: its Batch resources created, no job at stake."""
    from quota_constructs.deploy_plan import BATCH_TYPES, plan_deploy
    from quota_constructs.model import JobQueueSpec
    from quota_constructs.stacks.plan import organisation_resources

    nothing = Organisation(name=new.name, queue=JobQueueSpec(shares=()))
    plan = plan_deploy(
        {}, organisation_resources(new), old=nothing, new=new, jobs=[], resource_types=BATCH_TYPES
    )
    note = f"organisation {new.name} is not deployed: its first deploy creates every resource"
    return replace(plan, notes=(note, *plan.notes))


@dataclass(frozen=True)
class LivePlan:
    """A plan against a live queue, with what applying it needs: both templates'
    ``Resources`` and the deployed resources' ARNs by logical ID."""

    plan: DeployPlan
    old_resources: dict[str, Any]
    new_resources: dict[str, Any]
    deployed: dict[str, str]


def live_plan(new: Organisation, client: QueueClient) -> LivePlan:
    """What deploying ``new`` over the client's live queue does (its Batch resources): the
    queue read back (with the file's descriptions and access), both synthesized, its jobs."""
    from quota_constructs.deploy_plan import BATCH_TYPES, CDK_PATH, plan_deploy, with_file_parts
    from quota_constructs.stacks.plan import organisation_resources

    imported = read_organisation(client, new.name)
    old = with_file_parts(imported.organisation, new, queue_now(client.endpoint_url))
    old_resources = organisation_resources(old)
    new_resources = organisation_resources(new)
    plan = plan_deploy(
        old_resources,
        new_resources,
        old=old,
        new=new,
        jobs=_live_jobs(client),
        resource_types=BATCH_TYPES,
    )
    by_path = {r.construct_path: r.identifier for r in imported.resources}
    deployed = {
        logical_id: by_path[path]
        for logical_id, resource in old_resources.items()
        if (path := (resource.get("Metadata") or {}).get(CDK_PATH)) in by_path
    }
    return LivePlan(plan, old_resources, new_resources, deployed)


def _live_jobs(client: QueueClient) -> list[LiveJob]:
    """The queue's unfinished jobs; a running one's priority from DescribeServiceJob (the
    likeliest victims of a capacity reduction are the lowest-priority ones)."""
    jobs = []
    for job in client.list():
        priority = 0
        if job.status.is_dispatched:
            priority = client.describe(job.job_id).priority or 0
        started = job.started_at or job.scheduled_at
        jobs.append(
            LiveJob(
                job_id=job.job_id,
                job_name=job.job_name,
                share=job.share or "",
                status=job.status,
                capacity=dict(job.capacity_usage),
                priority=priority,
                started_at=started.timestamp() if started else None,
            )
        )
    return jobs


def _jobs_cell(change: ResourceChange, jobs: tuple[LiveJob, ...] | None) -> str:
    if not change.holds_jobs:
        return ""
    if jobs is None:
        return "?"
    if not jobs:
        return "-"
    return f"{len(jobs)}: " + ", ".join(j.job_name or j.job_id for j in jobs)


def plan_table(plan: DeployPlan, title: str, *, wide: bool = False) -> Table:
    """One row per change, in CloudFormation's order: action, resource, logical ID, the jobs
    terminated and preempted, why, and what fails."""
    table = data_table(
        "action",
        "resource",
        "logical ID",
        "terminates",
        "preempts",
        "reason",
        "fails",
        title=title,
        drop=("logical ID",),
        wide=wide,
    )
    for change in plan.changes:
        action = str(change.action).upper() if change.destructive else str(change.action)
        if change.allowed:
            action += " (allowed)"
        name = change.quota_share_name
        table.add_row(
            action,
            f"{change.resource_type} {name}" if name else f"{change.resource_type} {change.path}",
            change.logical_id,
            _jobs_cell(change, change.jobs_terminated),
            _jobs_cell(change, change.jobs_preempted),
            change.reason,
            "; ".join(change.fails) or "-",
        )
    return table
