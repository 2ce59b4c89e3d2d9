"""``quota local``: run the emulator of AWS Batch quota management on this machine."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from quota_constructs.cli_output import ExitCode, fail
from quota_constructs.local.clock import RealTimeClock, VirtualClock
from quota_constructs.local.emulator import Emulator
from quota_constructs.local.events import EventSink
from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.server import start_server
from quota_constructs.local.testing import DUMMY_CREDENTIALS, SEED_DEMO
from quota_constructs.model import QuotaConfigError

local_app = typer.Typer(
    help="Local emulator of AWS Batch quota management (offline, no AWS account).",
    no_args_is_help=True,
)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _event_sink(path: Path | None) -> EventSink | None:
    """The sink of ``--events-file``; a path that cannot be written is bad input (exit 2)."""
    if path is None:
        return None
    try:
        return EventSink(path)
    except OSError as error:
        fail(
            f"cannot write --events-file {path}: {error.strerror or error}; "
            "name a file in an existing, writable directory",
            ExitCode.USAGE,
        )


@local_app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0: any free port).")] = 8771,
    org: Annotated[
        list[Path] | None,
        typer.Option(
            "--org",
            help="Organisation file to provision (repeatable); default stacks/orgs/seed-demo.yaml.",
        ),
    ] = None,
    speed: Annotated[
        float, typer.Option(help="Emulated seconds per real second (60: an hour a minute).")
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
    threads: Annotated[int, typer.Option(help="Worker threads of the HTTP server.")] = 8,
    events_file: Annotated[
        Path | None,
        typer.Option(
            "--events-file",
            help="Append AWS Batch's EventBridge events of service jobs (state changes, "
            "preemption started/completed) to this file, one JSON event per line.",
        ),
    ] = None,
) -> None:
    """Provision organisation files and serve the Batch and SSM APIs until Ctrl-C."""
    console = Console()
    err = Console(stderr=True)
    events = _event_sink(events_file)
    try:
        faults = FaultPlan.parse(fault_rate or [], seed=fault_seed) if fault_rate else None
        clock = VirtualClock() if virtual else RealTimeClock(speed=speed)
        emulator = Emulator(clock=clock, faults=faults, seed=seed, events=events)
        provisioned = [emulator.provision_file(path) for path in org or [SEED_DEMO]]
        server = start_server(emulator, host=host, port=port, threads=threads)
    except OSError as error:
        err.print(
            f"[bold red]error:[/] cannot listen on {host}:{port}: {error.strerror or error}; "
            "use another --port (0 picks a free one)",
            highlight=False,
        )
        raise typer.Exit(1) from None
    except (QuotaConfigError, ValueError) as error:
        err.print(f"[bold red]error:[/] {error}", highlight=False)
        raise typer.Exit(1) from None
    endpoint = f"http://{host}:{server.port}"
    timing = "virtual clock" if virtual else f"speed x{speed:g}"
    console.print(f"[bold]quota emulator[/] listening on [cyan]{endpoint}[/] ({timing})")
    for done in provisioned:
        shares = ", ".join(done.quota_share_arns)
        console.print(f"  organisation [bold]{done.name}[/]: {done.job_queue_name} ({shares})")
    console.print("Point AWS clients at it:")
    for line in (
        f"export AWS_ENDPOINT_URL_BATCH={endpoint}",
        f"export AWS_ENDPOINT_URL_SSM={endpoint}",
        f"export AWS_ENDPOINT_URL_SAGEMAKER={endpoint}",
        f"export AWS_ENDPOINT_URL_STS={endpoint}",
        f"export AWS_ACCESS_KEY_ID={DUMMY_CREDENTIALS['aws_access_key_id']}",
        f"export AWS_SECRET_ACCESS_KEY={DUMMY_CREDENTIALS['aws_secret_access_key']}",
        f"export AWS_DEFAULT_REGION={emulator.account.region}",
    ):
        console.print(f"  {line}", highlight=False, soft_wrap=True)
    if virtual:
        console.print(
            f"  advance time: curl -X POST {endpoint}/_quota/advance -d '{{\"seconds\": 60}}'",
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"Why a job waits or was preempted: curl {endpoint}/_quota/jobs/<job id>")
    if events_file is not None:
        console.print(f"EventBridge events of service jobs: {events_file}", highlight=False)
    console.print("Ctrl-C stops it.")
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as cleanly as Ctrl-C
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        console.print("stopping")
    finally:
        server.shutdown()
