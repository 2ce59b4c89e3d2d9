"""``quota org preflight``: what the account allows, against what an organisation file needs."""

from __future__ import annotations

from pathlib import Path

import boto3
import typer

from quota_constructs.commands._common import (
    EndpointOpt,
    ExitCode,
    RegionOpt,
    data_table,
    handle_errors,
    print_errors,
    stdout_console,
)
from quota_constructs.config import load_organisation
from quota_constructs.model.account_quotas import needed_instances, quota_problems
from quota_constructs.runtime.account import training_job_quotas


@handle_errors
def preflight_command(
    org_file: Path = typer.Argument(..., help="Organisation file."),
    endpoint_url: EndpointOpt = None,
    region: RegionOpt = None,
) -> None:
    """Compare each instance type's capacity (and plans) with the account's SageMaker quotas.

    Read-only (Service Quotas ListServiceQuotas); exit 1 naming each type that SageMaker would
    refuse with ResourceLimitExceeded and the increase to request.
    """
    org = load_organisation(org_file)
    client = boto3.client("service-quotas", endpoint_url=endpoint_url, region_name=region)
    quotas = training_job_quotas(client)
    table = data_table("instance type", "needed", "quota", "status", title=f"{org.name}: quotas")
    for itype, need in needed_instances(org).items():
        quota = quotas.get(itype)
        shown = "-" if quota is None else f"{quota.value:g}"
        ok = quota is not None and quota.value >= need
        table.add_row(itype, str(need), shown, "ok" if ok else "too low")
    stdout_console().print(table)
    problems = quota_problems(org, quotas)
    if problems:
        print_errors([str(p) for p in problems])
        raise typer.Exit(ExitCode.FAILED)
