"""``quota org import``, ``quota org diff`` and ``quota simulate --from-queue``: adopt a live queue.

The AWS reading is :mod:`quota_constructs.runtime.adopt`; the workload and replay are the
advisor's (:mod:`quota_constructs.advisor.history`, :mod:`quota_constructs.advisor.simulate`).
Output and exit codes follow :mod:`quota_constructs.commands._common`: data on stdout, messages on
stderr; 0 success, 1 drift found (diff) or a failed AWS call, 2 bad input, 3 queue not found.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from botocore.exceptions import BotoCoreError, ClientError
from rich.table import Table

from quota_constructs.advisor.history import HistoryWorkload, parse_duration, workload_from_history
from quota_constructs.advisor.report import plot_results
from quota_constructs.advisor.simulate import SimulationOptions, compare
from quota_constructs.advisor.workload import workload_csv
from quota_constructs.commands._common import (
    ExitCode,
    fail,
    print_json,
    stderr_console,
    stdout_console,
)
from quota_constructs.commands._reports import results_json, results_table
from quota_constructs.config import OrganisationFile, load_organisation
from quota_constructs.model import Organisation, QuotaConfigError
from quota_constructs.runtime.adopt import (
    ImportedQueue,
    OrganisationDrift,
    QueueNotFound,
    organisation_client,
    organisation_drift,
    queue_client,
    read_job_history,
    read_organisation,
)
from quota_constructs.runtime.queue import QueueClient, error_text, is_setup_error

EndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--endpoint-url", envvar="AWS_ENDPOINT_URL_BATCH", help="Batch/SSM endpoint (emulator)."
    ),
]
RegionOpt = Annotated[str | None, typer.Option("--region", help="AWS region.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (camelCase keys).")]


@contextmanager
def _errors() -> Iterator[None]:
    """Expected failures as one line on stderr: 3 not found, 2 bad input, 1 an AWS error."""
    try:
        yield
    except QueueNotFound as error:
        fail(_problems(error), ExitCode.NOT_FOUND)
    except QuotaConfigError as error:
        fail(_problems(error), ExitCode.USAGE)
    except (ClientError, BotoCoreError) as error:
        fail(error_text(error), ExitCode.USAGE if is_setup_error(error) else ExitCode.FAILED)


def _problems(error: QuotaConfigError) -> str:
    head = f"{error.context}: " if error.context else ""
    return head + "; ".join(str(p) for p in error.problems)


def _options(endpoint_url: str | None, region: str | None) -> dict[str, Any]:
    return {"endpoint_url": endpoint_url, "region": region}


# --- quota org import ----------------------------------------------------------------------------


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
    with _errors():
        client = QueueClient(queue, **_options(endpoint_url, region))
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

    from stacks.organisation_stack import OrganisationStack, stack_name_for

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
    table = Table(title=f"Resources to import into stack Quota-{imported.organisation.name}")
    for column in ("resource type", "identifier", "value", "construct"):
        table.add_column(column, overflow="fold")
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


def diff_command(
    org_file: Annotated[Path, typer.Argument(help="Organisation YAML file.")],
    queue: Annotated[
        str | None,
        typer.Option("--queue", help="Job queue name or ARN (default: the organisation's, SSM)."),
    ] = None,
    endpoint_url: EndpointOpt = None,
    region: RegionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Compare a file with the live queue; exit 0 when they match, 1 when they drift."""
    with _errors():
        org = load_organisation(org_file)
        options = _options(endpoint_url, region)
        client = (
            QueueClient(queue, **options) if queue else organisation_client(org.name, **options)
        )
        live = read_organisation(client, org.name).organisation
    drift = organisation_drift(org, live)
    if as_json:
        print_json(drift_json(org, client, drift))
    elif drift.drifted:
        stdout_console().print(drift_table(org, client, drift))
    else:
        stderr_console().print(f"{org_file} matches {client.queue}")
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
    table = Table(title=f"{org.name}: file vs {client.queue}")
    for column in ("share", "field", "file", "queue"):
        table.add_column(column, overflow="fold")
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


# --- quota simulate --from-queue -----------------------------------------------------------------


def simulate_from_queue(
    from_queue: str,
    since: str,
    *,
    org_files: Sequence[Path] = (),
    as_json: bool = False,
    plot: Path | None = None,
    save_workload: Path | None = None,
    options: SimulationOptions | None = None,
    endpoint_url: str | None = None,
    region: str | None = None,
) -> None:
    """Replay the queue's history since ``since`` on its live configuration and ``org_files``."""
    with _errors():
        seconds = parse_duration(since)
        client = queue_client(from_queue, **_options(endpoint_url, region))
        live = read_organisation(client).organisation
        history = read_job_history(client, time.time() - seconds)
        workload = workload_from_history(history.jobs, start_s=history.since_s, now_s=history.now_s)
        orgs = [live, *(load_organisation(p) for p in org_files)]
    if not workload.jobs:
        lines = "; ".join(workload.report()) or "no jobs at all"
        fail(f"no job to replay in the last {since} on {client.queue} ({lines})")
    labels = [f"{live.name} (live)", *(str(p) for p in org_files)]
    sim = options or SimulationOptions()
    sim = SimulationOptions(sim.startup_s, sim.preemption_s, window_s=workload.window_s or None)
    with _errors():
        results = compare(orgs, list(workload.jobs), options=sim)
    if save_workload is not None:
        save_workload.write_text(workload_csv(workload.jobs), encoding="utf-8")
    if as_json:
        print_json(
            {
                "jobQueue": client.queue,
                "history": workload.as_json(),
                "results": json.loads(results_json(results, labels)),
            }
        )
    else:
        _print_history(workload, client, since)
        stdout_console().print(results_table(results, labels))
    if plot is not None:
        plot_results(results, labels, plot)


def _print_history(workload: HistoryWorkload, client: QueueClient, since: str) -> None:
    console = stdout_console()
    console.print(
        f"{workload.total} job(s) created in the last {since} on {client.queue}; "
        f"{len(workload.jobs)} replayed"
    )
    for line in workload.report():
        console.print(f"  {line}")
    table = Table(title="Observed on the queue")
    for column in ("share", "jobs", "started", "wait p50", "wait max", "preemptions"):
        table.add_column(column)
    for s in workload.observed:
        table.add_row(
            s.share,
            str(s.jobs),
            str(s.started),
            f"{s.wait_p50_s:.0f} s",
            f"{s.wait_max_s:.0f} s",
            f"{s.preemptions} ({s.preempted_jobs} jobs)",
        )
    console.print(table)
