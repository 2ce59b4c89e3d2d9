"""``quota local``: run the emulator of AWS Batch quota management on this machine, and drive it.

``serve`` runs it; ``advance`` (virtual time) and ``why`` (why a job waits, why it was preempted)
call its control endpoints (``/_quota/...``, docs/emulator.md) so that nothing needs curl;
``apply`` rehearses a deploy of a changed organisation file on it, through the Batch API
(:mod:`quota_constructs.local.apply`).
"""

from __future__ import annotations

import math
import signal
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import boto3
import typer
from botocore.exceptions import ClientError
from rich.console import Console

from quota_constructs.advisor.history import DURATION_FORMAT, parse_duration
from quota_constructs.advisor.limits import plan_stop_problems
from quota_constructs.commands._common import (
    CalendarGraceOpt,
    ExitCode,
    PlanStopOpt,
    check_calendar_grace,
    endpoint_option,
    fail,
    handle_errors,
    json_option,
    message,
    print_json,
    stderr_console,
    stdout_console,
    styled,
)
from quota_constructs.commands._control import ControlError, control
from quota_constructs.commands._forecast import (
    CalibrationOpt,
    NoForecastOpt,
    calibration_of,
    caveats_json,
    forecast_lines,
    print_caveats,
    queue_forecast,
)
from quota_constructs.local.emulator import Emulator
from quota_constructs.local.events import EventSink
from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.handlers.submit_request import PayloadValidation, PlanOwnership
from quota_constructs.local.provision import ProvisionedOrganisation, ResourceNaming
from quota_constructs.local.state.arns import DEFAULT_REGION
from quota_constructs.local.state.clock import MAX_SPEED, RealTimeClock, VirtualClock
from quota_constructs.local.state.job_service import (
    DEFAULT_MAX_FINISHED,
    ClientTokenMode,
    DispatchMode,
    JobRetention,
)
from quota_constructs.local.testing import DUMMY_CREDENTIALS, SEED_DEMO
from quota_constructs.local.wire.control_paths import ADVANCE_PATH, EXPLAIN_PREFIX
from quota_constructs.local.wire.server import MAX_THREADS, ServerLimits, start_server
from quota_constructs.model import PLAN_STOP_BEFORE_END_S, QuotaConfigError
from quota_constructs.runtime.queue import QueueClient, resolve_job_in_any_queue

if TYPE_CHECKING:
    from quota_constructs.forecast import Calibration, Forecast

local_app = typer.Typer(
    help="Local emulator of AWS Batch quota management (offline, no AWS account).",
    no_args_is_help=True,
)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def check_serve_options(*, port: int, speed: float, threads: int) -> None:
    """Exit 2 with one line naming the option, its value and the allowed range when one of
    ``--port``, ``--speed`` or ``--threads`` is out of range (NaN and infinity included)."""
    if not 0 <= port <= 65535:
        fail(f"--port {port}: must be from 0 to 65535 (0 picks a free port)", ExitCode.USAGE)
    if not (math.isfinite(speed) and 0 < speed <= MAX_SPEED):
        fail(
            f"--speed {speed}: must be a number above 0 and at most {MAX_SPEED:g} "
            "(emulated seconds per real second; 1 is real time)",
            ExitCode.USAGE,
        )
    if not 1 <= threads <= MAX_THREADS:
        fail(f"--threads {threads}: must be from 1 to {MAX_THREADS}", ExitCode.USAGE)


DEFAULT_LIMITS = ServerLimits()
MAX_REQUEST_DEADLINE_S = 3600
"""Upper bound of ``--request-deadline``: an hour to send one request of at most 1 MiB."""


def server_limits(*, request_deadline: int, per_peer: int) -> ServerLimits:
    """``--request-deadline`` and ``--max-connections-per-peer`` as :class:`ServerLimits`; exit 2
    naming the option, its value and the range when one is out of it."""
    most = DEFAULT_LIMITS.connection_limit
    if not 1 <= request_deadline <= MAX_REQUEST_DEADLINE_S:
        fail(
            f"--request-deadline {request_deadline}: must be from 1 to {MAX_REQUEST_DEADLINE_S} "
            "seconds (how long a client may take to send one request)",
            ExitCode.USAGE,
        )
    if not 1 <= per_peer <= most:
        fail(
            f"--max-connections-per-peer {per_peer}: must be from 1 to {most} (the emulator's "
            "connections in all)",
            ExitCode.USAGE,
        )
    return ServerLimits(request_deadline=request_deadline, connections_per_peer=per_peer)


MAX_FINISHED_JOBS = 10_000_000
"""Upper bound of ``--max-finished-jobs`` (about 250 GiB of 10 KiB payloads: no machine's)."""


def job_retention(retention: str, max_finished: int) -> JobRetention:
    """``--job-retention`` (a duration, or ``forever``) and ``--max-finished-jobs`` as a
    :class:`JobRetention`; exit 2 naming the option, its value and the fix when out of range."""
    if not 0 <= max_finished <= MAX_FINISHED_JOBS:
        fail(
            f"--max-finished-jobs {max_finished}: must be from 0 to {MAX_FINISHED_JOBS:,} "
            "(finished jobs kept, the oldest expiring first)",
            ExitCode.USAGE,
        )
    if retention.strip().lower() == "forever":
        return JobRetention(finished_for_s=None, max_finished=max_finished)
    try:
        seconds = parse_duration(retention, "--job-retention")
    except QuotaConfigError:
        fail(
            f"--job-retention {retention!r}: not a duration; write {DURATION_FORMAT}, or forever",
            ExitCode.USAGE,
        )
    return JobRetention(finished_for_s=seconds, max_finished=max_finished)


def _event_sink(path: Path | None) -> EventSink | None:
    """The sink of ``--events-file``; a path that cannot be written, or that is not a regular
    file (a FIFO would stall the emulator until a reader came; a device), is bad input."""
    if path is None:
        return None
    if path.exists() and not path.is_file():
        fail(
            f"--events-file {path} is not a regular file (a FIFO, a device or a directory): "
            "the emulator appends its events to a file; name a new or an existing regular file",
            ExitCode.USAGE,
        )
    try:
        return EventSink(path)
    except OSError as error:
        fail(
            f"cannot write --events-file {path}: {error.strerror or error}; "
            "name a writable file (in an existing directory, on a device with free space)",
            ExitCode.USAGE,
        )


@local_app.command()
@handle_errors
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port, 0 to 65535 (0: any free port).")] = 8771,
    org: Annotated[
        list[Path] | None,
        typer.Option(
            "--org",
            help="Organisation file to provision (repeatable); default: the seed-demo organisation "
            "shipped in the package.",
        ),
    ] = None,
    speed: Annotated[
        float,
        typer.Option(
            help=f"Emulated seconds per real second, above 0 and at most {MAX_SPEED:g} "
            "(60: an hour a minute)."
        ),
    ] = 1.0,
    virtual: Annotated[
        bool,
        typer.Option(
            "--virtual", help="Virtual clock: time moves only by POST /_quota/advance {seconds}."
        ),
    ] = False,
    fault_rate: Annotated[
        list[str] | None,
        typer.Option(
            "--fault-rate",
            help="Inject faults: [OPERATION:]KIND=RATE (repeatable), KIND throttle or 5xx "
            "(refused before handling) or lost (handled, then answered 500), "
            "e.g. throttle=0.1, SubmitServiceJob:5xx=0.05 or SubmitServiceJob:lost=0.05.",
        ),
    ] = None,
    fault_seed: Annotated[int, typer.Option(help="Seed of the injected faults.")] = 0,
    seed: Annotated[
        int | None,
        typer.Option(
            help="Seed of the job ids: the same seed gives the same ids (default: random)."
        ),
    ] = None,
    threads: Annotated[
        int, typer.Option(help=f"Worker threads of the HTTP server, 1 to {MAX_THREADS}.")
    ] = 8,
    client_token_mode: Annotated[
        ClientTokenMode,
        typer.Option(
            help="A repeated SubmitServiceJob clientToken: reject it as AWS documents, or "
            "replay the first job's ids."
        ),
    ] = ClientTokenMode.REJECT,
    dispatch: Annotated[
        DispatchMode,
        typer.Option(
            help="When a submitted job is scheduled: RUNNABLE on the next scheduler tick (1 "
            "emulated second), SCHEDULED from the tick after (jobs submitted within one tick go "
            "by priority), as AWS's states show, or immediately, before the next request."
        ),
    ] = DispatchMode.TICK,
    payload_validation: Annotated[
        PayloadValidation,
        typer.Option(
            help="A serviceRequestPayload naming no schedulable ResourceConfig (instance type "
            "and count): pass it through and FAIL the job, as AWS does, or refuse the submit "
            "naming the field (strict)."
        ),
    ] = PayloadValidation.PASSTHROUGH,
    plan_ownership: Annotated[
        PlanOwnership,
        typer.Option(
            help="A payload whose TrainingPlanArn is not a plan of the queue's organisation: "
            "refuse the submit naming the organisation's plans (default, as the runtime "
            "does), or pass it through, as AWS does (to rehearse quota jobs audit)."
        ),
    ] = PlanOwnership.REFUSE,
    explain_pending: Annotated[
        bool,
        typer.Option(
            "--explain-pending",
            help="Give a RUNNABLE job that AWS leaves without a statusReason the emulator's "
            "own reason (e.g. 'WAITING_FOR_OWN_CAPACITY - ...'); default: empty, as AWS. "
            "quota local why explains a job either way.",
        ),
    ] = False,
    names: Annotated[
        ResourceNaming,
        typer.Option(
            help="Names of each organisation's job queue, service environment and policy: "
            "fixed (<org>-queue, ...) or generated as CloudFormation would, so that only "
            "clients resolving them through SSM /quota/<org>/... work, as against a stack.",
        ),
    ] = ResourceNaming.FIXED,
    events_file: Annotated[
        Path | None,
        typer.Option(
            "--events-file",
            help="Append AWS Batch's EventBridge events of service jobs (state changes, "
            "preemption started/completed) to this file, one JSON event per line.",
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="Another Host name clients may call the emulator by (repeatable); it always "
            "answers to --host, localhost, 127.0.0.1 and [::1].",
        ),
    ] = None,
    allow_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-origin",
            help="A web Origin allowed to call the emulator (repeatable); default none, so a "
            "request with any Origin header is refused.",
        ),
    ] = None,
    retention: Annotated[
        str,
        typer.Option(
            "--job-retention",
            help="How long a finished job stays visible on the emulator's clock (e.g. 12h, "
            "14d), or forever (AWS documents no retention: UNCONFIRMED).",
        ),
    ] = "14d",
    max_finished: Annotated[
        int,
        typer.Option(
            "--max-finished-jobs",
            help="Finished jobs kept at most; the oldest expire first (bounds memory).",
        ),
    ] = DEFAULT_MAX_FINISHED,
    request_deadline: Annotated[
        int,
        typer.Option(
            "--request-deadline",
            help="Seconds a client may take to send one request whole (from its connection's "
            "accept, or the request's first byte); a slower one is answered 408 and closed.",
        ),
    ] = DEFAULT_LIMITS.request_deadline,
    per_peer: Annotated[
        int,
        typer.Option(
            "--max-connections-per-peer",
            help="Connections one client address may hold at once (every local client is "
            "127.0.0.1); a further one is answered 503. "
            f"At most {DEFAULT_LIMITS.connection_limit}.",
        ),
    ] = DEFAULT_LIMITS.connections_per_peer,
    calendar_grace: CalendarGraceOpt = 0.0,
    plan_stop_s: PlanStopOpt = PLAN_STOP_BEFORE_END_S,
) -> None:
    """Provision organisation files and serve the Batch and SSM APIs until Ctrl-C.

    Exit 2 for a bad option or organisation file and for a port that cannot be listened on
    (one line naming it).
    """
    console = stdout_console()  # the banner: one line per setting, never wrapped when piped
    check_serve_options(port=port, speed=speed, threads=threads)
    limits = server_limits(request_deadline=request_deadline, per_peer=per_peer)
    kept = job_retention(retention, max_finished)
    if plan_stop_problems(plan_stop_s):
        raise QuotaConfigError(plan_stop_problems(plan_stop_s))
    check_calendar_grace(calendar_grace)
    events = _event_sink(events_file)
    faults = FaultPlan.parse(fault_rate or [], seed=fault_seed) if fault_rate else None
    clock = VirtualClock() if virtual else RealTimeClock(speed=speed)
    emulator = Emulator(
        clock=clock,
        faults=faults,
        seed=seed,
        client_token_mode=client_token_mode,
        events=events,
        dispatch=dispatch,
        payload_validation=payload_validation,
        plan_ownership=plan_ownership,
        explain_pending=explain_pending,
        naming=names,
        retention=kept,
        calendar_grace_s=calendar_grace,
        plan_stop_before_end_s=plan_stop_s,
    )
    provisioned = [emulator.provision_file(path) for path in org or [SEED_DEMO]]
    try:
        server = start_server(
            emulator,
            host=host,
            port=port,
            threads=threads,
            limits=limits,
            allow_hosts=allow_host or (),
            allow_origins=allow_origin or (),
        )
    except OSError as error:
        fail(
            f"cannot listen on {host}:{port}: {error.strerror or error}; "
            "use another --port (0 picks a free one)",
            ExitCode.USAGE,
        )
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as cleanly as Ctrl-C
    try:  # from here on, an interrupt (even while the banner prints) shuts the server down
        _print_banner(
            console,
            f"http://{host}:{server.port}",
            virtual=virtual,
            speed=speed,
            emulator=emulator,
            provisioned=provisioned,
            events_file=events_file,
        )
        console.print("Ctrl-C stops it.")
        threading.Event().wait()
    except KeyboardInterrupt:
        stderr_console().print("stopping (interrupted)")
        raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
    finally:
        server.shutdown()


def _print_banner(
    console: Console,
    endpoint: str,
    *,
    virtual: bool,
    speed: float,
    emulator: Emulator,
    provisioned: list[ProvisionedOrganisation],
    events_file: Path | None,
) -> None:
    """Where the server listens, what it serves and how to point clients at it."""
    timing = "virtual clock" if virtual else f"speed x{speed:g}"
    console.print(
        message(
            styled("quota emulator", "bold"),
            " listening on ",
            styled(endpoint, "cyan"),
            f" ({timing})",
        )
    )
    for done in provisioned:
        shares = ", ".join(done.quota_share_arns)
        console.print(
            message(
                "  organisation ", styled(done.name, "bold"), f": {done.job_queue_name} ({shares})"
            )
        )
    console.print("Point AWS clients at it:")
    for line in (
        f"export AWS_ENDPOINT_URL_BATCH={endpoint}",
        f"export AWS_ENDPOINT_URL_SSM={endpoint}",
        f"export AWS_ENDPOINT_URL_SAGEMAKER={endpoint}",
        f"export AWS_ENDPOINT_URL_STS={endpoint}",
        f"export AWS_ENDPOINT_URL_SERVICE_QUOTAS={endpoint}",
        f"export AWS_ACCESS_KEY_ID={DUMMY_CREDENTIALS['aws_access_key_id']}",
        f"export AWS_SECRET_ACCESS_KEY={DUMMY_CREDENTIALS['aws_secret_access_key']}",
        f"export AWS_DEFAULT_REGION={emulator.account.region}",
    ):
        console.print(f"  {line}", highlight=False, soft_wrap=True)
    if virtual:
        console.print(
            f"  advance time: quota local advance 60 --endpoint-url {endpoint}",
            highlight=False,
            soft_wrap=True,
        )
    console.print(
        f"Why a job waits or was preempted: quota local why JOB_ID --endpoint-url {endpoint}",
        highlight=False,
        soft_wrap=True,
    )
    if events_file is not None:
        console.print(f"EventBridge events of service jobs: {events_file}", highlight=False)


# --- driving a running emulator: its control endpoints ------------------------------------------

DEFAULT_ENDPOINT = "http://127.0.0.1:8771"
"""Where ``quota local serve`` listens by default."""
EmulatorEndpointOpt = Annotated[
    str, endpoint_option("The emulator's endpoint (quota local serve prints it).")
]
AnswerJsonOpt = Annotated[bool, json_option("Print the endpoint's JSON answer.")]


def _call(endpoint: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """:func:`control`, a failure printed as one line with its exit code (docs/cli.md)."""
    try:
        return control(endpoint, path, body)
    except ControlError as error:
        code = ExitCode.NOT_FOUND if path.startswith(EXPLAIN_PREFIX) else ExitCode.USAGE
        fail(str(error), code)
    except OSError as error:
        fail(
            f"no emulator answers at {endpoint} ({getattr(error, 'reason', error)}); start one "
            "with quota local serve, or pass --endpoint-url (AWS_ENDPOINT_URL_BATCH)",
            ExitCode.FAILED,
        )


@local_app.command()
@handle_errors
def advance(
    seconds: Annotated[float, typer.Argument(min=0, help="Emulated seconds to let pass.")],
    endpoint_url: EmulatorEndpointOpt = DEFAULT_ENDPOINT,
    as_json: AnswerJsonOpt = False,
) -> None:
    """Let SECONDS of virtual time pass (serve --virtual): jobs dispatch, run, finish."""
    answer = _call(endpoint_url, ADVANCE_PATH, {"seconds": seconds})
    if as_json:
        print_json(answer)
    else:
        stdout_console().print(f"emulator time: {answer['now']:g} s", markup=False)


@local_app.command()
@handle_errors
def why(
    job: Annotated[str, typer.Argument(help="Job id, ARN, or name of an active job (unique).")],
    endpoint_url: EmulatorEndpointOpt = DEFAULT_ENDPOINT,
    as_json: AnswerJsonOpt = False,
    no_forecast: NoForecastOpt = False,
    calibration: CalibrationOpt = None,
) -> None:
    """Why a job waits (typed pending reason), when it is forecast to start, and every
    preemption it suffered, and by whom."""
    bounds = calibration_of(calibration)
    session = emulator_session()
    job_id = resolve_job_in_any_queue(job, session=session, endpoint_url=endpoint_url)
    answer = _call(endpoint_url, EXPLAIN_PREFIX + job_id)
    result = None
    if answer.get("pending") and not no_forecast:
        result = _queue_forecast_of(job_id, session, endpoint_url, bounds)
    found = result.jobs.get(job_id) if result is not None else None
    if as_json:
        print_json(
            {**answer, "forecast": found.as_json() if found else None, **caveats_json(result)}
        )
        return
    console = stdout_console()
    names = _preemptor_names(endpoint_url, answer)
    lines = explanation_lines(answer, names)
    if found is not None:
        lines[1:1] = forecast_lines(found)
    for line in lines:
        console.print(line, soft_wrap=False)  # wrapped between words, identifiers whole
    print_caveats(result)


def _queue_forecast_of(
    job_id: str, session: boto3.Session, endpoint_url: str, calibration: Calibration | None
) -> Forecast:
    """The forecast of the queue a job is in, its bounds calibrated with ``calibration``."""
    queue = QueueClient(job_id, session=session, endpoint_url=endpoint_url)
    queue.queue = str(queue.batch.describe_service_job(jobId=job_id)["jobQueue"])
    return queue_forecast(queue, watch=[job_id], calibration=calibration)


def emulator_session() -> boto3.Session:
    """A boto3 session for the emulator: the caller's credentials and region when set, else the
    emulator's dummy credentials and its default region."""
    session = boto3.Session()
    credentials = {} if session.get_credentials() is not None else DUMMY_CREDENTIALS
    return boto3.Session(**credentials, region_name=session.region_name or DEFAULT_REGION)


def _preemptor_names(endpoint: str, answer: dict[str, Any]) -> dict[str, str]:
    """Job id -> name of each job that preempted this one (one explain call each)."""
    names: dict[str, str] = {}
    for p in answer.get("preemptions") or ():
        job_id = str(p.get("preemptorJobId"))
        if job_id not in names:
            try:
                names[job_id] = str(control(endpoint, EXPLAIN_PREFIX + job_id)["jobName"])
            except (ControlError, OSError, KeyError):
                continue  # named by id alone
    return names


def explanation_lines(answer: dict[str, Any], names: dict[str, str] | None = None) -> list[str]:
    """The emulator's explanation of a job as lines of text; ``names`` (job id -> name) names
    the preemptors."""
    lines = [
        f"{answer['jobName']} ({answer['jobId']}) in {answer['quotaShareName']}: "
        f"{answer['status']}, priority {answer['schedulingPriority']}"
    ]
    pending = answer.get("pending")
    if pending:
        position = pending.get("position")
        at = "" if position is None else f" (position {position})"
        lines.append(f"waits: {pending['kind']}: {pending['message']}{at}")
    if answer.get("borrowed"):
        lines.append(f"borrows: {_capacity(answer['borrowed'])}")
    for p in answer.get("preemptions") or ():
        end = "; terminated" if p.get("terminated") else ""
        lines.append(
            f"preempted {_time(p.get('at'))} by {_job_named(p['preemptorJobId'], names)} "
            f"in {p['preemptorShare']}, {p['rule']}: {p['reason']}; borrowed "
            f"{_capacity(p['borrowedBefore'])} -> {_capacity(p['borrowedAfter'])}{end}"
        )
    if answer.get("submittedBy"):
        lines.append(f"submitted by: {answer['submittedBy']}")
    return lines


def _job_named(job_id: str, names: dict[str, str] | None) -> str:
    name = (names or {}).get(job_id)
    return f"{name} ({job_id})" if name else job_id


def _capacity(amounts: dict[str, int]) -> str:
    return ", ".join(f"{n} x {t}" for t, n in amounts.items()) or "nothing"


def _time(epoch_ms: int | None) -> str:
    if epoch_ms is None:
        return "-"
    return datetime.fromtimestamp(epoch_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


@local_app.command()
@handle_errors
def apply(
    org_file: Annotated[Path, typer.Argument(help="The changed organisation file.")],
    endpoint_url: EmulatorEndpointOpt = DEFAULT_ENDPOINT,
    as_json: Annotated[
        bool, json_option("Print the plan and the calls made (or the failure) as JSON.")
    ] = False,
) -> None:
    """Apply a changed organisation file to a running emulator as CloudFormation would.

    The organisation must be provisioned there (quota local serve FILE). The plan is `quota org
    plan FILE`'s against the emulator's queue; its Batch changes are made in CloudFormation's
    order: new resources and replacements' new copies, updates in place, then the cleanup
    (deletes; a deleted share's jobs are terminated). A refused call rolls the change back;
    exit 1 then. Tags, SSM parameters and calendars are not changed.
    """
    from quota_constructs.commands.org import live_plan
    from quota_constructs.config import load_organisation
    from quota_constructs.deploy_plan import plan_json
    from quota_constructs.local.apply import ApplyFailed, apply_plan
    from quota_constructs.runtime.adopt import organisation_client

    new = load_organisation(org_file)
    session = emulator_session()
    client = organisation_client(new.name, endpoint_url=endpoint_url, session=session)
    planned = live_plan(new, client)
    batch = session.client("batch", endpoint_url=endpoint_url)

    def call(operation: str, params: Any) -> dict[str, Any]:
        method = getattr(batch, _snake(operation))
        answer: dict[str, Any] = method(**params)
        return answer

    failure: ApplyFailed | None = None
    try:
        steps = apply_plan(
            planned.plan,
            planned.old_resources,
            planned.new_resources,
            planned.deployed,
            call,
            refusals=(ClientError,),
        )
    except ApplyFailed as error:
        failure, steps = error, error.steps
    if as_json:
        print_json(
            {
                "plan": plan_json(planned.plan),
                "calls": steps,
                "failed": None if failure is None else failure.message,
            }
        )
    else:
        out = stdout_console()
        for step in steps:
            out.print(step, markup=False, soft_wrap=True)
        if not steps:
            stderr_console().print(f"no changes: {org_file} matches the emulator's queue")
    if failure is not None:
        fail(
            f"the update failed and was rolled back as CloudFormation would: {failure.message}",
            ExitCode.FAILED,
        )


def _snake(operation: str) -> str:
    """``CreateQuotaShare`` -> ``create_quota_share`` (boto3's method name)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in operation).lstrip("_")
