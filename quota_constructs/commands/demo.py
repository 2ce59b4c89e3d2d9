"""``quota demo``: the AWS quota-management tutorial, replayed offline through the runtime.

Starts the emulator in-process with the ``seed-demo`` organisation (QS1 LEND_AND_BORROW 200 %
with in-share preemption, QS2 LEND, QS3 RESERVE; one ml.g5.xlarge each) on a virtual clock,
then follows the tutorial with :class:`~quota_constructs.runtime.QueueClient` only:

1. QS1 submits priorities 3, 2, 1: p3 runs on QS1's own instance, p2 borrows QS2's idle one,
   p1 waits (QS3 reserves its instance).
2. QS2 submits a job: cross-share preemption sends the borrowing p2 back to RUNNABLE.
3. p1 is raised to priority 4: in-share preemption replaces p3 by p1.

It prints a timeline (who runs, who borrows, who is preempted, by whom and why) and checks the
three outcomes; the command exits non-zero if any does not hold.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import boto3
import typer
from rich.console import Console
from rich.text import Text

from quota_constructs.commands._common import (
    ExitCode,
    fail,
    handle_errors,
    json_option,
    message,
    print_json,
    stderr_console,
    stdout_console,
    styled,
)
from quota_constructs.local.testing import DUMMY_CREDENTIALS, SEED_DEMO, EmulatorServer
from quota_constructs.runtime import (
    Backoff,
    JobHandle,
    JobStatus,
    QueueClient,
    TrackedJob,
    TrainingJob,
    Transition,
    TransitionKind,
    Until,
)

ORGANISATION = "seed-demo"
JOB_SECONDS = 3600
"""Emulated run time of every tutorial job: long enough that none ends during the demo."""


class EmulatedTimeClock:
    """The runtime's :class:`~quota_constructs.runtime.PacingClock` in the emulator's time.

    On a virtual clock (``speed=None``) sleeping advances emulated time instead of waiting; on
    a wall clock running ``speed`` times faster than real time it sleeps ``seconds / speed``.
    Either way waits, timeouts and pacing count emulated seconds.
    """

    def __init__(self, emulator: EmulatorServer, speed: float | None = None) -> None:
        self.emulator = emulator
        self.speed = speed

    def now(self) -> float:
        return self.emulator.now

    def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            return
        if self.speed is None:
            self.emulator.advance(seconds)
        else:
            time.sleep(seconds / self.speed)


def emulator_client(
    emulator: EmulatorServer,
    organisation: str = ORGANISATION,
    *,
    speed: float | None = None,
    **options: object,
) -> QueueClient:
    """A :class:`QueueClient` for an organisation's queue, resolved through the emulator's SSM,
    waiting and pacing on the emulator's clock (``speed``: see :class:`EmulatedTimeClock`)."""
    session = boto3.Session(region_name=emulator.emulator.account.region, **DUMMY_CREDENTIALS)
    return QueueClient.for_organisation(
        organisation,
        session=session,
        endpoint_url=emulator.endpoint_url,
        clock=EmulatedTimeClock(emulator, speed),
        **options,
    )


@dataclass
class Check:
    """One of the tutorial's outcomes and whether it held."""

    name: str
    ok: bool
    detail: str


@dataclass
class Timeline:
    """Prints transitions with emulated time: who runs, who borrows, who is preempted, by whom
    and why.

    Status, reasons and capacity come from the Batch API through the runtime. Which job holds
    borrowed instances, why a job waits and which job preempted which are not in the Batch
    API; ``explain`` (the emulator's ``EmulatorServer.explain``) supplies them.
    """

    client: QueueClient
    console: Console
    explain: Callable[[str], dict[str, Any]]
    names: dict[str, str] = field(default_factory=dict)

    def say(self, *parts: str | Text) -> None:
        """One timeline line: the emulator time, then ``parts`` (see :func:`message`)."""
        now = styled(f"t={self.client.clock.now():7.1f}s", "dim")
        self.console.print(message(now, "  ", *parts))

    def label(self, job_id: str) -> str:
        return self.names.get(job_id, job_id)

    def on_transition(self, change: Transition) -> None:
        job = change.job
        name = self.label(job.job_id)
        if change.kind is TransitionKind.PREEMPTED:
            self._preempted(job.job_id, name)
        elif change.kind is TransitionKind.DISPATCHED:
            self.say(styled(name, "green"), " dispatched, ", self._capacity(job.job_id, job.share))
        elif change.kind is TransitionKind.FINISHED:
            self.say(f"{name} finished: {job.status.value} ({job.status_reason})")
        elif job.status is JobStatus.RUNNABLE:
            self.say(f"{name} waits in RUNNABLE: {self._pending(job.job_id, job.status_reason)}")
        else:
            self.say(f"{name}: {change.previous or 'new'} -> {job.status.value}")

    def _capacity(self, job_id: str, share: str | None) -> str | Text:
        borrowed = self.explain(job_id).get("borrowed") or {}
        if borrowed:
            what = ", ".join(f"{n} x {t}" for t, n in borrowed.items())
            return message(styled(f"borrowing {what}", "yellow"), " from lending shares")
        return f"on {share}'s own capacity"

    def _pending(self, job_id: str, status_reason: str) -> str:
        pending = self.explain(job_id).get("pending") or {}
        if pending:
            return f"{pending.get('kind')} - {pending.get('message')}"
        return status_reason or "queued"

    def _preempted(self, job_id: str, name: str) -> None:
        history = self.client.describe(job_id).preemptions
        reason = history.reasons[-1] if history.reasons else "no reason recorded"
        records = self.explain(job_id).get("preemptions") or [{}]
        by = records[-1].get("preemptorJobId")
        rule = records[-1].get("rule", "?")
        who = f" by {self.label(by)} ({rule})" if by else f" ({rule})"
        self.say(styled(name, "red"), f" preempted{who}, back to RUNNABLE: {reason}")


def _job(instance_type: str = "ml.g5.xlarge") -> TrainingJob:
    return TrainingJob(
        image="763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-gpu-py311",
        instance_type=instance_type,
        role_arn="arn:aws:iam::123456789012:role/SageMakerExecutionRole",
        output_s3_uri="s3://quota-demo/output",
        max_runtime_s=4 * 3600,
    )


def run_tutorial(
    emulator: EmulatorServer, console: Console, *, speed: float | None = None
) -> list[Check]:
    """Replay the tutorial on a running emulator; returns the three checked outcomes.

    ``speed``: the emulator runs on a wall clock this many times faster than real time
    (``None``: it runs on a virtual clock)."""
    backoff = Backoff(initial=5, maximum=20, jitter=0.2)
    client = emulator_client(emulator, speed=speed, backoff=backoff)
    timeline = Timeline(client, console, emulator.explain)
    tags = {"quota.local/duration-seconds": str(JOB_SECONDS)}

    def submit(name: str, share: str, priority: int) -> JobHandle:
        handle = client.submit(name, share, _job(), priority=priority, tags=tags)
        timeline.names[handle.job_id] = f"{name} ({share}, p{priority})"
        timeline.say(f"submitted {timeline.names[handle.job_id]}")
        return handle

    def wait(jobs: list[JobHandle], until: Callable[..., bool]) -> None:
        client.wait(jobs, until=until, timeout=600, on_transition=timeline.on_transition)

    def status(job: JobHandle) -> JobStatus:
        return client.describe(job).status

    def preemptor(job: JobHandle) -> str | None:
        records = emulator.explain(job.job_id).get("preemptions") or [{}]
        return records[-1].get("preemptorJobId")

    def preempted(title: str, winner: JobHandle, victim: JobHandle, rule: str) -> Check:
        """``winner`` runs after preempting ``victim`` (back to RUNNABLE) under ``rule``.

        One wait, each job to its own target: the victim is still RUNNING until the scheduler's
        next tick preempts it, so waiting for it to be RUNNING or requeued would stop watching
        it before its preemption (and the timeline would miss that line)."""

        def there(job: TrackedJob) -> bool:
            return Until.RUNNING(job) if job.job_id == winner.job_id else Until.REQUEUED(job)

        wait([winner, victim], there)
        reasons = client.describe(victim).preemptions.reasons
        names = f"{timeline.label(winner.job_id)} {status(winner)}, "
        names += f"{timeline.label(victim.job_id)} {status(victim)}"
        return Check(
            title,
            status(winner) is JobStatus.RUNNING
            and status(victim) is JobStatus.RUNNABLE
            and any(rule in r for r in reasons)
            and preemptor(victim) == winner.job_id,
            f"{names}, preempted by {timeline.label(preemptor(victim) or '-')}: "
            f"{'; '.join(reasons) or '-'}",
        )

    _section(console, "1. QS1 submits three jobs: priorities 3, 2, 1")
    p3, p2, p1 = (submit(f"qs1-p{p}", "QS1", p) for p in (3, 2, 1))
    wait([p3, p2], Until.RUNNING)
    wait([p1], Until.status(JobStatus.RUNNABLE))
    usage = client.snapshot().usage.get("QS1", {}).get("ml.g5.xlarge", 0)
    borrowed = emulator.explain(p2.job_id).get("borrowed") or {}
    lent = ", ".join(f"{n} x {t}" for t, n in borrowed.items()) or "nothing"
    checks = [
        Check(
            "QS1 borrows QS2's idle instance for p2; QS3's reserved instance stays idle",
            status(p3) is JobStatus.RUNNING
            and status(p2) is JobStatus.RUNNING
            and status(p1) is JobStatus.RUNNABLE
            and usage == 2
            and borrowed == {"ml.g5.xlarge": 1},
            f"p3 {status(p3)}, p2 {status(p2)} borrowing {lent}, p1 {status(p1)}, "
            f"QS1 uses {usage} instance(s)",
        )
    ]

    _section(console, "2. QS2 submits a job: it reclaims its lent instance")
    q2 = submit("qs2-job", "QS2", 1)
    checks.append(
        preempted(
            "cross-share preemption: QS2's job runs, QS1's borrowing p2 back to RUNNABLE",
            q2,
            p2,
            "Cross-share",
        )
    )

    _section(console, "3. QS1 raises p1 to priority 4: in-share preemption")
    client.update_priority(p1, 4)
    timeline.names[p1.job_id] = "qs1-p1 (QS1, p1 -> p4)"
    timeline.say(f"priority of {timeline.label(p1.job_id)} set to 4")
    checks.append(
        preempted("in-share preemption: p1 (now 4) runs, p3 back to RUNNABLE", p1, p3, "In-share")
    )

    _section(console, "clean up: terminate every job of QS1 and QS2")
    for share in ("QS1", "QS2"):
        result = client.terminate_share(share, reason="tutorial finished")
        timeline.say(f"terminated {len(result.terminated)} job(s) of {share}")
    wait([p1, p2, p3, q2], Until.TERMINAL)
    return checks


@handle_errors
def demo(
    speed: Annotated[
        float | None,
        typer.Option(
            min=1,
            help="Run the emulator on a wall clock this many times faster than real time "
            "(e.g. 20) instead of its virtual clock.",
        ),
    ] = None,
    as_json: Annotated[
        bool, json_option("Print the outcomes as JSON on stdout (the timeline goes to stderr).")
    ] = False,
) -> None:
    """Replay the AWS quota-management tutorial on the local emulator (offline).

    Exit 1 when an outcome fails (docs/cli.md, "Exit codes")."""
    console = stderr_console() if as_json else stdout_console()
    console.print(
        message(
            styled("AWS Batch quota management tutorial", "bold"),
            ", replayed on the local emulator (seed-demo: QS1 LEND_AND_BORROW 200%, QS2 LEND, "
            "QS3 RESERVE; 1 x ml.g5.xlarge each)",
        )
    )
    try:
        clock: Literal["virtual", "wall"] = "virtual" if speed is None else "wall"
        with EmulatorServer(org_files=[SEED_DEMO], clock=clock, speed=speed or 1.0) as emulator:
            checks = run_tutorial(emulator, console, speed=speed)
    except Exception as error:  # the tutorial did not run through: exit 1, one line
        fail(str(error), ExitCode.FAILED)
    if as_json:
        print_json(
            {
                "ok": all(c.ok for c in checks),
                "outcomes": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in checks],
            }
        )
    else:
        _print_outcomes(console, checks)
    if not all(c.ok for c in checks):
        raise typer.Exit(ExitCode.FAILED)


def _print_outcomes(console: Console, checks: list[Check]) -> None:
    _section(console, "outcomes")
    for check in checks:
        mark = styled("PASS", "green") if check.ok else styled("FAIL", "bold red")
        console.print(message(mark, f" {check.name}: {check.detail}"))


def _section(console: Console, title: str) -> None:
    """A section heading on its own line (a rule would fill a piped console's whole width)."""
    console.print(message("\n", styled(f"== {title} ==", "bold")))
