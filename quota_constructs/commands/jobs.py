"""Owns ``quota jobs``: submit, update, list, describe, wait for, terminate jobs; snapshot.

The queue comes from ``--queue`` (name or ARN) or ``--organisation`` (resolved from the stack's
SSM parameters), or the ``QUOTA_QUEUE`` / ``QUOTA_ORGANISATION`` environment variables.
``--as-team SHARE`` (with ``--organisation``) acts as that share's team: every Batch call is
made as the team's submitter role, assumed with STS. ``--endpoint-url`` (or
``AWS_ENDPOINT_URL_BATCH``) points at the local emulator (SSM and STS too); otherwise boto3's
default credentials and region reach AWS. Errors print one line and exit non-zero.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from botocore.exceptions import BotoCoreError, ClientError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from quota_constructs.api_shapes import SAGEMAKER_DEFAULT_MAX_RUNTIME_S
from quota_constructs.commands._common import (
    AsTeamOpt,
    CliError,
    EndpointOpt,
    ExitCode,
    JsonOpt,
    OrganisationOpt,
    QueueOpt,
    RegionOpt,
    data_table,
    fail,
    handle_errors,
    message,
    print_json,
    stderr_console,
    stdout_console,
    styled,
)
from quota_constructs.commands._control import queue_now, virtual_clock_note
from quota_constructs.commands._forecast import (
    ArrivalsOpt,
    CalibrationOpt,
    NoForecastOpt,
    OrgFileOpt,
    calibration_of,
    caveats_json,
    forecast_lines,
    organisation_of,
    print_caveats,
    queue_forecast,
    queue_state,
    start_text,
    what_if_lines,
)
from quota_constructs.model import QuotaConfigError
from quota_constructs.runtime.jobs import ACTIVE_STATUSES, JobStatus, JobSummary, active_jobs
from quota_constructs.runtime.json_view import (
    details_json,
    job_json,
    snapshot_json,
    terminate_json,
)
from quota_constructs.runtime.pacing import Backoff
from quota_constructs.runtime.payload import JobSubmission, TrainingJob, attempt_token
from quota_constructs.runtime.queue import JobHandle, QueueClient
from quota_constructs.runtime.waiting import TrackedJob, Transition, Until
from quota_constructs.safe_load import load_json

if TYPE_CHECKING:
    from quota_constructs.forecast import Calibration, JobForecast, QueueState

WAITING = (JobStatus.SUBMITTED, JobStatus.PENDING, JobStatus.RUNNABLE)
"""The statuses whose jobs get a forecast start."""
NOT_READ = "not among the jobs the forecast read (submitted since)"
jobs_app = typer.Typer(
    name="jobs",
    help="Submit, re-prioritise, watch and clean up training jobs in a quota share.",
    no_args_is_help=True,
)


@dataclasses.dataclass
class QueueClientOptions:
    """The ``quota jobs`` options that pick the queue and endpoint; builds the client."""

    queue: str | None = None
    organisation: str | None = None
    endpoint_url: str | None = None
    region: str | None = None
    as_team: str | None = None

    def client(self) -> QueueClient:
        options: dict[str, Any] = {"endpoint_url": self.endpoint_url, "region": self.region}
        if self.as_team:
            if not self.organisation or self.queue:
                raise CliError(
                    f"--as-team {self.as_team} finds the team's role by organisation: pass "
                    "--organisation NAME instead of --queue (or unset QUOTA_QUEUE)"
                )
            return QueueClient.for_team(self.organisation, self.as_team, **options)
        if self.queue:
            return QueueClient(self.queue, **options)
        if self.organisation:
            return QueueClient.for_organisation(self.organisation, **options)
        raise CliError(
            "no job queue given: pass --queue NAME|ARN or --organisation NAME "
            "(or set QUOTA_QUEUE / QUOTA_ORGANISATION)"
        )


@jobs_app.callback()
def _options(
    ctx: typer.Context,
    queue: QueueOpt = None,
    organisation: OrganisationOpt = None,
    endpoint_url: EndpointOpt = None,
    region: RegionOpt = None,
    as_team: AsTeamOpt = None,
) -> None:
    ctx.obj = QueueClientOptions(queue, organisation, endpoint_url, region, as_team)


def _client(ctx: typer.Context) -> QueueClient:
    options: QueueClientOptions = ctx.obj
    return options.client()


# --- shell completion: asks the queue only when a queue or organisation is given ------------


def completion_client(ctx: typer.Context) -> QueueClient | None:
    """The client the command line being completed names, or ``None`` when it names no queue.

    Reads the queue options (and their environment variables) parsed so far by this command
    and the groups above it.
    """
    params: dict[str, Any] = {}
    node: Any = ctx
    while node is not None:
        params = {**node.params, **params}
        node = node.parent
    fields = [f.name for f in dataclasses.fields(QueueClientOptions)]
    options = QueueClientOptions(**{name: params.get(name) for name in fields})
    if not (options.queue or options.organisation):
        return None
    return options.client()


def complete_share(ctx: typer.Context, incomplete: str) -> list[str]:
    """Share names starting with ``incomplete`` (one ``ListQuotaShares`` call)."""
    with suppress(*_COMPLETION_ERRORS):
        client = completion_client(ctx)
        if client is not None:
            return [name for name in client.share_names() if name.startswith(incomplete)]
    return []


def complete_job(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Active jobs whose id, or unique name, starts with ``incomplete`` (one ``ListServiceJobs``
    call per active status)."""
    with suppress(*_COMPLETION_ERRORS):
        client = completion_client(ctx)
        if client is not None:
            jobs = client.list()
            names = Counter(job.job_name for job in jobs)
            found = [
                (job.job_id, f"{job.job_name}, {job.status.value}, {job.share or '-'}")
                for job in jobs
                if job.job_id.startswith(incomplete)
            ]
            found += [
                (job.job_name, f"{job.job_id}, {job.status.value}, {job.share or '-'}")
                for job in jobs
                if job.job_name.startswith(incomplete) and names[job.job_name] == 1
            ]
            return found
    return []


_COMPLETION_ERRORS = (ClientError, BotoCoreError, QuotaConfigError, CliError, ValueError)
JobArg = typer.Argument(
    help="Job id, ARN, or name of an active job (unique among them).", autocompletion=complete_job
)
JobsArg = typer.Argument(
    help="Job ids, ARNs, or names of active jobs (each unique among them).",
    autocompletion=complete_job,
)


def _pairs(values: list[str] | None, what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values or []:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise CliError(f"{what} {value!r} is not KEY=VALUE; write e.g. {what} epochs=3")
        pairs[key] = val
    return pairs


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "-"


JOB_COLUMNS = ("job id", "name", "share", "status", "instances", "created", "reason")
JOB_DROP_ORDER = ("created", "reason", "instances")
"""The job-table columns a narrow terminal hides, first to last (docs/cli.md, "Tables at a
terminal"); ``--wide`` shows them all and adds ``priority``."""


def _jobs_table(
    jobs: list[JobSummary],
    title: str,
    *,
    priorities: dict[str, int | None] | None = None,
    starts: Mapping[str, JobForecast] | None = None,
) -> Table:
    """Jobs as a table; with ``priorities`` (job id -> priority) a priority column (wide);
    with ``starts`` (job id -> forecast) a ``starts`` column."""
    wide = priorities is not None
    columns = JOB_COLUMNS[:4] + (("priority",) if wide else ()) + JOB_COLUMNS[4:]
    columns += ("starts",) if starts is not None else ()
    table = data_table(*columns, title=title, drop=JOB_DROP_ORDER, wide=wide)
    for job in jobs:
        usage = ", ".join(f"{n} x {t}" for t, n in job.capacity_usage.items())
        priority = (priorities or {}).get(job.job_id)
        table.add_row(
            job.job_id,
            job.job_name,
            job.share or "-",
            job.status.value,
            *((("-" if priority is None else str(priority)),) if wide else ()),
            usage or "-",
            _when(job.created_at),
            job.status_reason,
            *(
                (start_text(starts.get(job.job_id)) if job.status in WAITING else "-",)
                if starts is not None
                else ()
            ),
        )
    return table


def _priorities(
    client: QueueClient, jobs: list[JobSummary], state: QueueState | None = None
) -> dict[str, int | None]:
    """Each job's scheduling priority: one ``DescribeServiceJob`` per job (the list has none)
    but the jobs the forecast's ``state`` described already."""
    known: dict[str, int | None] = {}
    if state is not None:
        known = {j.job_id: j.priority for j in (*state.running, *state.waiting)}
    for job in jobs:
        if job.job_id not in known:
            known[job.job_id] = client.describe(job.job_id).priority
    return {job.job_id: known[job.job_id] for job in jobs}


# --- commands -------------------------------------------------------------------------------


@jobs_app.command()
@handle_errors
def submit(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Job name.")],
    share: Annotated[
        str | None,
        typer.Option("--share", "-s", help="Quota share to submit into (default: --as-team's)."),
    ] = None,
    payload: Annotated[
        Path | None, typer.Option(help="CreateTrainingJob request as a JSON file.")
    ] = None,
    image: Annotated[str | None, typer.Option(help="Training image URI (builder).")] = None,
    instance_type: Annotated[str | None, typer.Option(help="e.g. ml.g5.xlarge.")] = None,
    instance_count: Annotated[int | None, typer.Option(help="Instances (default 1).")] = None,
    role_arn: Annotated[str | None, typer.Option(help="SageMaker execution role ARN.")] = None,
    output_s3: Annotated[str | None, typer.Option(help="S3 output URI.")] = None,
    checkpoint_s3: Annotated[str | None, typer.Option(help="S3 checkpoint URI.")] = None,
    max_runtime: Annotated[
        int | None, typer.Option(help="MaxRuntimeInSeconds (default 86400).")
    ] = None,
    hp: Annotated[list[str] | None, typer.Option(help="Hyperparameter KEY=VALUE.")] = None,
    env: Annotated[list[str] | None, typer.Option(help="Environment KEY=VALUE.")] = None,
    priority: Annotated[int | None, typer.Option(help="Scheduling priority 0..9999.")] = None,
    preemption_retries: Annotated[int | None, typer.Option(help="Requeues before FAILED.")] = None,
    retry_attempts: Annotated[int | None, typer.Option(help="Attempts 1..10.")] = None,
    timeout: Annotated[
        int | None, typer.Option(help="Attempt timeout, s (default: from the payload).")
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Tag KEY=VALUE.")] = None,
    client_token: Annotated[str | None, typer.Option(help="Idempotency token.")] = None,
    resubmit: Annotated[
        bool,
        typer.Option(help="Submit a new attempt even if this job was submitted (a new token)."),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            help="Check and print the SubmitServiceJob request as JSON (usable as "
            "--cli-input-json), send nothing."
        ),
    ] = False,
    what_if: Annotated[
        bool,
        typer.Option(
            "--what-if",
            help="Say, without submitting, whether it would start now, wait (and how long) or "
            "never run here, and whom it would preempt; exit 1 when it can never run.",
        ),
    ] = False,
    org_file: Annotated[
        Path | None,
        typer.Option(
            "--org-file",
            help="Organisation file whose share calendars the check follows (a job that fits "
            "its share only in a window later this week is accepted: it waits for it) and "
            "--what-if follows, with its training plans and priority caps (the API tells "
            "none of them).",
        ),
    ] = None,
    arrivals: ArrivalsOpt = None,
    calibration: CalibrationOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check a job against the live queue and submit it (or print it with --dry-run, or
    forecast it with --what-if)."""
    options: QueueClientOptions = ctx.obj
    share = share or options.as_team
    if share is None:
        raise CliError("no quota share: pass --share SHARE (or --as-team SHARE)")
    if dry_run and what_if:
        raise CliError(
            "--dry-run prints the request and --what-if forecasts the job: pass one of them"
        )
    builder = {
        "--image": image,
        "--instance-type": instance_type,
        "--instance-count": instance_count,
        "--role-arn": role_arn,
        "--output-s3": output_s3,
        "--checkpoint-s3": checkpoint_s3,
        "--max-runtime": max_runtime,
        "--hp": hp,
        "--env": env,
    }
    body: dict[str, Any] | TrainingJob
    if payload is not None:
        given = [flag for flag, value in builder.items() if value is not None]
        if given:
            raise CliError(
                f"--payload {payload} and {', '.join(given)} conflict: the payload file is "
                "the whole CreateTrainingJob request; pass either --payload or the builder "
                "flags, not both"
            )
        body = load_json(payload)
    elif image and instance_type and role_arn and output_s3:
        body = TrainingJob(
            image=image,
            instance_type=instance_type,
            instance_count=1 if instance_count is None else instance_count,
            role_arn=role_arn,
            output_s3_uri=output_s3,
            checkpoint_s3_uri=checkpoint_s3,
            max_runtime_s=SAGEMAKER_DEFAULT_MAX_RUNTIME_S if max_runtime is None else max_runtime,
            hyperparameters=_pairs(hp, "--hp"),
            environment=_pairs(env, "--env"),
        )
    else:
        raise CliError(
            "no payload: pass --payload FILE.json, or --image, --instance-type, --role-arn "
            "and --output-s3"
        )
    submission = JobSubmission(
        job_name=name,
        share=share,
        payload=body,
        priority=priority,
        preemption_retries=preemption_retries,
        retry_attempts=retry_attempts,
        timeout_s=timeout,
        tags=_pairs(tag, "--tag"),
        client_token=client_token,
    )
    bounds = calibration_of(calibration) if what_if else None  # only --what-if forecasts
    client = _client(ctx)
    client.check_share(share)  # an unknown share: exit 3, naming the queue's shares
    if org_file is not None and not what_if:  # the check then knows the week's calendars
        client.org = organisation_of(org_file)
        client.queue_clock = lambda: queue_now(client.endpoint_url).timestamp()
    if resubmit:
        submission = _new_attempt(client, submission)
    if dry_run:
        print_json(client.render(submission))  # serviceRequestPayload stays a JSON string
        return
    if what_if:
        _what_if(client, submission, org_file, as_json, arrivals=arrivals, calibration=bounds)
        return
    handle = client.submit_job(submission)
    if handle.already_submitted:
        _already_submitted(handle, as_json)
    if as_json:
        print_json({"jobId": handle.job_id, "jobName": handle.job_name, "jobArn": handle.job_arn})
    else:
        stdout_console().print(
            message("submitted ", styled(handle.job_name, "bold"), f" to {share}: {handle.job_id}")
        )
    if resubmit:
        stderr_console().print(
            f"new attempt with clientToken {submission.client_token}", highlight=False
        )


def _what_if(
    client: QueueClient,
    submission: JobSubmission,
    org_file: Path | None,
    as_json: bool,
    *,
    arrivals: bool | None = None,
    calibration: Calibration | None = None,
) -> None:
    """Print the what-if of ``submission`` (nothing is sent), its bounds calibrated with
    ``calibration``; exit 1 when it can never run."""
    org = organisation_of(org_file)
    now = queue_now(client.endpoint_url).timestamp()
    answer = client.what_if(
        submission, now_s=now, org=org, arrivals=arrivals, watch=(), calibration=calibration
    )
    if as_json:
        print_json(answer.as_json())
    else:
        out = stdout_console()
        for line in what_if_lines(answer):
            out.print(line, markup=False, highlight=False)
    print_caveats(answer.forecast)  # what the answer does not know: stderr, as notes
    if answer.outcome == "never":
        raise typer.Exit(ExitCode.FAILED)


def _new_attempt(client: QueueClient, submission: JobSubmission) -> JobSubmission:
    """``submission`` with a new token (:func:`attempt_token`), so Batch makes a new job."""
    if submission.client_token is not None:
        fail("--resubmit makes a new clientToken: drop --client-token", ExitCode.USAGE)
    token = client.render(submission)["clientToken"]
    return dataclasses.replace(submission, client_token=attempt_token(token))


def _already_submitted(handle: JobHandle, as_json: bool) -> None:
    """Say that the job exists (its id and status now) and exit 1: nothing new was submitted."""
    status = handle.describe().status.value
    if as_json:
        print_json({"jobId": handle.job_id, "alreadySubmitted": True, "status": status})
    fail(
        f"already submitted: job {handle.job_id}, now {status} (nothing new was submitted; "
        "--resubmit submits a new attempt)",
        ExitCode.FAILED,
    )


@jobs_app.command()
@handle_errors
def update(
    ctx: typer.Context,
    job_id: Annotated[str, JobArg],
    priority: Annotated[int, typer.Option("--priority", "-p", help="New priority 0..9999.")],
    as_json: JsonOpt = False,
) -> None:
    """Change a job's scheduling priority (may preempt, or make it preemptible)."""
    client = _client(ctx)
    job = client.find_job(job_id)
    client.update_priority(job.job_id, priority)
    if as_json:
        print_json({"jobId": job.job_id, "schedulingPriority": priority})
    else:
        stdout_console().print(f"{job.job_name} ({job.job_id}): priority {priority}")


@jobs_app.command("ls")
@handle_errors
def list_jobs(
    ctx: typer.Context,
    share: Annotated[
        str | None,
        typer.Option("--share", "-s", help="Only this share.", autocompletion=complete_share),
    ] = None,
    status: Annotated[
        list[JobStatus] | None, typer.Option(help="Statuses (default: every active one).")
    ] = None,
    as_json: JsonOpt = False,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Every column, and each job's priority (one DescribeServiceJob per job).",
        ),
    ] = False,
    no_forecast: NoForecastOpt = False,
    org_file: OrgFileOpt = None,
    arrivals: ArrivalsOpt = None,
    calibration: CalibrationOpt = None,
) -> None:
    """List jobs by share and status, with the forecast start of each waiting job (one API
    call per status page, and one per active job for the forecast; --wide: per job)."""
    bounds = calibration_of(calibration)
    client = _client(ctx)
    if share is not None:
        client.check_share(share)
    statuses = status or ACTIVE_STATUSES
    jobs = client.list(share=share, statuses=statuses)
    waiting = [job for job in jobs if job.status in WAITING]
    state, result = None, None
    if waiting and not no_forecast:
        whole = share is None and set(ACTIVE_STATUSES) <= set(statuses)
        active = active_jobs(jobs) if whole else None
        state = queue_state(client, org_file, active=active, arrivals=arrivals)
        result = client.forecast(state=state, arrivals=arrivals, calibration=bounds)
    starts = result.jobs if result is not None else None
    if as_json:  # a list (its contract): the caveats go to stderr, as under the table
        print_json([_with_forecast(job_json(job), job, starts) for job in jobs])
    else:
        priorities = _priorities(client, jobs, state) if wide else None
        table = _jobs_table(jobs, f"{len(jobs)} job(s)", priorities=priorities, starts=starts)
        stdout_console().print(table)
    print_caveats(result)


def _with_forecast(
    view: dict[str, Any], job: JobSummary, starts: Mapping[str, JobForecast] | None
) -> dict[str, Any]:
    """A waiting job's JSON with ``forecastStartS`` and ``forecastReason``."""
    if starts is None or job.status not in WAITING:
        return view
    found = starts.get(job.job_id)
    if found is None:
        return {**view, "forecastStartS": None, "forecastReason": NOT_READ}
    return {**view, **found.fields_json()}


@jobs_app.command()
@handle_errors
def describe(
    ctx: typer.Context,
    job_id: Annotated[str, JobArg],
    as_json: JsonOpt = False,
    no_forecast: NoForecastOpt = False,
    org_file: OrgFileOpt = None,
    arrivals: ArrivalsOpt = None,
    calibration: CalibrationOpt = None,
) -> None:
    """A job's details and preemption history; for a waiting job, its forecast start, what it
    waits on and whom it would preempt."""
    bounds = calibration_of(calibration)
    client = _client(ctx)
    job = client.find_job(job_id)
    result = None
    if job.status in WAITING and not no_forecast:
        result = queue_forecast(
            client, org_file, arrivals=arrivals, watch=[job.job_id], calibration=bounds
        )
    found = result.jobs.get(job.job_id) if result is not None else None
    if as_json:
        view = details_json(job)
        if result is not None:
            extra = (
                found.as_json() if found else {"forecastStartS": None, "forecastReason": NOT_READ}
            )
            view = {**view, **extra, **caveats_json(result)}
        print_json(view)
        return
    table = data_table("field", "value", title=f"{job.job_name} ({job.job_id})")
    table.show_header = False
    for key, value in (
        ("status", f"{job.status.value} {job.status_reason}".strip()),
        ("share", job.share or "-"),
        ("priority", "-" if job.priority is None else str(job.priority)),
        ("instances", ", ".join(f"{n} x {t}" for t, n in job.capacity_usage.items()) or "-"),
        (
            "created / started / stopped",
            " / ".join(_when(t) for t in (job.created_at, job.started_at, job.stopped_at)),
        ),
        ("attempt timeout", f"{job.attempt_duration_s} s" if job.attempt_duration_s else "-"),
        ("preemptions", str(job.preemptions.count)),
    ):
        table.add_row(key, value)
    for attempt in job.preemptions.recent:
        table.add_row(f"  preempted {_when(attempt.stopped_at)}", attempt.reason)
    if found is not None:
        for line in forecast_lines(found):
            key, _, value = line.partition(": ")
            table.add_row(key, value)
    stdout_console().print(table)
    print_caveats(result)


@jobs_app.command()
@handle_errors
def wait(
    ctx: typer.Context,
    job_ids: Annotated[list[str], JobsArg],
    until: Annotated[
        str, typer.Option(help="terminal | dispatched | running | requeued | a status.")
    ] = "terminal",
    timeout: Annotated[float | None, typer.Option(help="Give up after this many seconds.")] = None,
    poll: Annotated[
        float, typer.Option(help="First poll interval, s; grows 1.5x while nothing moves.")
    ] = 5.0,
    as_json: JsonOpt = False,
) -> None:
    """Wait for jobs with a live progress display; exit 1 if one ends FAILED or on timeout."""
    wait_target = Until.named(until)
    client = _client(ctx)
    job_ids = list(client.resolve_jobs(job_ids))
    err = stderr_console()
    note = virtual_clock_note(client.endpoint_url)
    if note is not None:
        err.print(note)
    progress = Progress(
        TextColumn(f"waiting for {until}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=as_json,
    )
    task = progress.add_task("wait", total=len(set(job_ids)))
    reached: set[str] = set()

    def show(change: Transition) -> None:
        job = change.job
        progress.console.print(
            message(
                f"{job.job_name} ({job.job_id}): {change.previous or 'new'} -> {job.status.value} ",
                styled(job.status_reason, "dim"),
            )
        )
        if job.status.is_terminal or wait_target(TrackedJob(job.job_id, job)):
            reached.add(job.job_id)
        progress.update(task, completed=len(reached))

    with progress:
        result = client.wait(
            job_ids,
            until=wait_target,
            timeout=timeout,
            backoff=Backoff(initial=poll, maximum=max(poll, 60.0)),
            on_transition=show,
        )
        progress.update(task, completed=len(result.jobs))
    done = list(result.jobs.values())
    if as_json:
        print_json([job_json(job) for job in done])
    else:
        stdout_console().print(_jobs_table(done, f"{len(done)} job(s) done"))
    failed = [f"{job.job_name} ({job.job_id})" for job in done if job.status is JobStatus.FAILED]
    if failed:
        fail(f"{len(failed)} job(s) ended FAILED: {', '.join(failed)}", ExitCode.FAILED)


@jobs_app.command()
@handle_errors
def terminate(
    ctx: typer.Context,
    job_ids: Annotated[list[str] | None, JobsArg] = None,
    share: Annotated[
        str | None,
        typer.Option(
            "--share", "-s", help="Every active job of this share.", autocompletion=complete_share
        ),
    ] = None,
    reason: Annotated[
        str, typer.Option(help="Reason recorded on the jobs.")
    ] = "Terminated by user",
    as_json: JsonOpt = False,
) -> None:
    """Terminate jobs by id (50 per call) or every active job of a share."""
    if bool(job_ids) == bool(share):
        raise CliError("pass job ids or --share SHARE (one of them)")
    client = _client(ctx)
    result = (
        client.terminate_share(client.check_share(share).name, reason)
        if share
        else client.terminate_many(client.resolve_jobs(job_ids or []), reason)
    )
    if as_json:
        print_json(terminate_json(result))
    else:
        stdout_console().print(f"terminated {len(result.terminated)} job(s)")
        for job_id, error in result.errors.items():
            stderr_console().print(message(styled(job_id, "red"), f": {error}"))
    if result.errors:
        raise typer.Exit(ExitCode.FAILED)


@jobs_app.command()
@handle_errors
def audit(
    ctx: typer.Context,
    every_status: bool = typer.Option(
        False, "--all", help="Audit finished jobs too (SUCCEEDED, FAILED), not only active ones."
    ),
    as_json: JsonOpt = False,
) -> None:
    """Flag jobs whose payload names a training plan outside the organisation or another
    team's quota-team cost tag (callers who bypassed the runtime); exit 1 when any is found."""
    from quota_constructs.runtime.audit import audit_jobs

    client = _client(ctx)
    statuses = list(JobStatus) if every_status else list(ACTIVE_STATUSES)
    audited = audit_jobs(client, statuses=statuses)
    findings = audited.findings
    if as_json:
        print_json([finding.to_json() for finding in findings])
    for finding in [] if as_json else findings:
        typer.echo(
            f"{finding.job_id} {finding.job_name} {finding.share or '-'} {finding.status}: "
            f"{finding.field}: {finding.reason} (got {finding.value!r})"
        )
    jobs = len({finding.job_id for finding in findings})
    if findings:
        fail(f"{jobs} of {audited.jobs} jobs name a foreign training plan or cost tag")
    stderr_console().print(f"no foreign training plan or cost tag in {audited.jobs} jobs")


@jobs_app.command()
@handle_errors
def snapshot(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Who is next in the queue and in each share, and capacity in use per share."""
    snap = _client(ctx).snapshot()
    if as_json:
        print_json(snapshot_json(snap))
        return
    front = data_table("#", "job id", "since", title="front of the queue")
    for index, entry in enumerate(snap.front, start=1):
        front.add_row(str(index), entry.job_id, _when(entry.since))
    shares = data_table("share", "head job", "in use", title="quota shares")
    for name in sorted({*snap.share_heads, *snap.usage}):
        heads = ", ".join(p.job_id for p in snap.share_heads.get(name, ())) or "-"
        usage = ", ".join(f"{n} x {t}" for t, n in snap.usage.get(name, {}).items()) or "-"
        shares.add_row(name, heads, usage)
    out = stdout_console()
    out.print(front)
    out.print(shares)
    total = ", ".join(f"{n} x {t}" for t, n in snap.total_usage.items()) or "nothing"
    out.print(f"in use: {total}")
