"""Synth benchmark: organisation stacks built with the constructs vs the same resources as raw L1s.

Cases (all in one run): one organisation of 1, 5 and 20 shares; 1, 5 and 20 organisations of
5 shares each. For each case both variants are built and synthesized in-process (the CDK app's
``synth()``, CloudFormation validation off unless ``--validation``), interleaved, ``--repeat``
times after a warm-up (alternating which goes first); the first run checks that both give the
same templates apart from logical IDs. Reported: the best (minimum) time of each, the least
noisy estimate on a shared machine, and their ratio (goal <= 1.2); the median over the repeats
of the ratio within one repeat (paired, robust to a slow spell); the jsii round-trips of each
variant (counted in an extra, untimed synth); the growth per share and per organisation; then
the whole-process time (Python start, imports, synth) of the largest case.

    .venv/bin/python benchmarks/bench_synth.py [--repeat 5] [--validation] [--json out.json]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import typer
from aws_cdk import aws_batch as batch
from aws_cdk import aws_ssm as ssm
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from quota_constructs import contracts  # noqa: E402
from quota_constructs.api_shapes import (  # noqa: E402
    capacity_limits_to_api,
    share_to_api,
    time_limit_actions_to_api,
)
from quota_constructs.model import (  # noqa: E402
    JobQueueSpec,
    Organisation,
    QuotaShareSpec,
    SharingStrategy,
)
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for  # noqa: E402

STRATEGIES = (SharingStrategy.LEND, SharingStrategy.LEND_AND_BORROW, SharingStrategy.RESERVE)


def organisation(name: str, shares: int) -> Organisation:
    """A valid organisation with ``shares`` shares cycling strategies and instance types."""
    specs = tuple(
        QuotaShareSpec(
            name=f"team-{i:02d}",
            capacity={"ml.g5.xlarge": 1 + i % 4, "ml.p4d.24xlarge": 1},
            strategy=STRATEGIES[i % len(STRATEGIES)],
            borrow_limit=100 if STRATEGIES[i % len(STRATEGIES)].borrows else None,
            in_share_preemption=i % 2 == 0,
        )
        for i in range(shares)
    )
    queue = JobQueueSpec(shares=specs, runnable_timeout_minutes=60)
    return Organisation(name=name, queue=queue, tags={"cost-center": "bench"}).validate()


def context() -> dict[str, object]:
    return dict(json.loads((ROOT / "cdk.json").read_text())["context"])


def l1_stack(app: cdk.App, org: Organisation) -> cdk.Stack:
    """The template ``OrganisationStack`` synthesizes, hand-written as L1s (no validation).

    Same resources, properties, outputs, SSM parameters, descriptions and tags (``run_case``
    compares the templates); only the logical IDs differ. Written as a careful L1 author would:
    each ``attr_*`` token read once (every read is a jsii round-trip).
    """
    description = f"Quota-managed SageMaker training queue of {org.name}"
    if org.description:
        description += f": {org.description}"
    stack = cdk.Stack(
        app, stack_name_for(org), stack_name=stack_name_for(org), description=description[:1024]
    )
    policy = batch.CfnSchedulingPolicy(
        stack, "Policy", quota_share_policy={"idleResourceAssignmentStrategy": "FIFO"}
    )
    env = batch.CfnServiceEnvironment(
        stack,
        "Env",
        service_environment_type="SAGEMAKER_TRAINING",
        state="ENABLED",
        capacity_limits=capacity_limits_to_api(org.queue.service_environment_capacity()),
    )
    timeout = org.queue.runnable_timeout_minutes
    queue = batch.CfnJobQueue(
        stack,
        "Queue",
        priority=org.queue.priority,
        job_queue_type="SAGEMAKER_TRAINING",
        state="ENABLED",
        scheduling_policy_arn=policy.attr_arn,
        service_environment_order=[
            {"order": 1, "serviceEnvironment": env.attr_service_environment_arn}
        ],
        job_state_time_limit_actions=time_limit_actions_to_api(
            None if timeout is None else timeout * 60
        )
        or None,
    )
    queue_arn = queue.attr_job_queue_arn
    outputs = {  # id: (SSM path, value, description)
        "JobQueueName": (
            contracts.job_queue_name_parameter(org.name),
            cdk.Fn.select(1, cdk.Fn.split("/", queue_arn)),
            "Job queue name",
        ),
        "JobQueueArn": (contracts.job_queue_arn_parameter(org.name), queue_arn, "Job queue ARN"),
    }
    for spec in org.queue.shares:
        api = share_to_api(spec)
        share = batch.CfnQuotaShare(
            stack,
            f"Share{spec.name}",
            quota_share_name=spec.name,
            job_queue=queue_arn,
            capacity_limits=api["capacityLimits"],
            resource_sharing_configuration=api["resourceSharingConfiguration"],
            preemption_configuration=api["preemptionConfiguration"],
            state=api["state"],
        )
        outputs[f"Arn{spec.name}"] = (
            contracts.share_arn_parameter(org.name, spec.name),
            share.attr_quota_share_arn,
            f"ARN of quota share {spec.name}",
        )
    for key, (path, value, what) in outputs.items():
        ssm.CfnParameter(
            stack,
            f"{key}Param",
            type="String",
            name=path,
            value=value,
            description=f"{what} (written by the quota-constructs organisation stack)",
        )
        cdk.CfnOutput(stack, key, value=value, description=what)
    for key, tag in org.tags.items():
        cdk.Tags.of(stack).add(key, tag)
    return stack


def _canonical(template: dict[str, Any]) -> dict[str, Any]:
    """``template`` with logical IDs replaced by names derived from the content.

    A resource is named by its type and its ``QuotaShareName`` or SSM ``Name`` (unique in an
    organisation stack); an output by its (renamed) value. Two variants that synthesize the
    same template apart from construct ids compare equal.
    """
    names: dict[str, str] = {}
    for logical_id, resource in template.get("Resources", {}).items():
        props = resource.get("Properties", {})
        key = props.get("QuotaShareName", props.get("Name", ""))
        names[logical_id] = f"{resource['Type']}:{key}"
    if len(set(names.values())) != len(names):
        raise SystemExit("benchmark: resources not told apart by type and name")
    text = json.dumps(template, sort_keys=True)
    for logical_id, name in names.items():
        text = text.replace(json.dumps(logical_id), json.dumps(name))
    canonical: dict[str, Any] = json.loads(text)
    outputs = canonical.pop("Outputs", {})
    canonical["Outputs"] = sorted(json.dumps(o, sort_keys=True) for o in outputs.values())
    return canonical


def construct_stack(app: cdk.App, org: Organisation) -> cdk.Stack:
    return OrganisationStack(app, stack_name_for(org), organisation=org, monitoring=False)


Builder = Callable[[cdk.App, Organisation], cdk.Stack]


def synth_seconds(
    build: Builder, orgs: list[Organisation], validation: bool
) -> tuple[float, list[dict[str, Any]]]:
    """Seconds to build and synthesize one app; also the templates (read after the timing)."""
    with tempfile.TemporaryDirectory() as outdir:
        start = time.perf_counter()
        app = cdk.App(
            context=context(), outdir=outdir, builtin_cloud_formation_validation=validation
        )
        for org in orgs:
            build(app, org)
        assembly = app.synth()
        elapsed = time.perf_counter() - start
        templates = [s.template for s in assembly.stacks]
    return elapsed, templates


def jsii_calls(build: Builder, orgs: list[Organisation]) -> int:
    """Python -> Node round-trips (jsii kernel requests) of one build + synth (not timed).

    Counts the requests jsii's process provider sends (a private jsii API, benchmark only);
    callbacks from Node into Python (a synth-time validation) count as one more each.
    """
    from jsii._kernel.providers import process

    send = process._NodeProcess.send
    count = 0

    def counting_send(self: Any, request: Any, response_type: Any) -> Any:
        nonlocal count
        count += 1
        return send(self, request, response_type)

    process._NodeProcess.send = counting_send  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as outdir:
            app = cdk.App(
                context=context(), outdir=outdir, builtin_cloud_formation_validation=False
            )
            for org in orgs:
                build(app, org)
            app.synth()
    finally:
        process._NodeProcess.send = send  # type: ignore[method-assign]
    return count


@dataclass
class Result:
    case: str
    organisations: int
    shares_per_org: int
    resources: int
    construct_s: float
    l1_s: float
    construct_calls: int
    l1_calls: int
    median_pair_ratio: float
    """Median over the repeats of constructs/L1 of the same repeat (paired, noise-robust)."""

    @property
    def ratio(self) -> float:
        return self.construct_s / self.l1_s


def run_case(case: str, orgs: int, shares: int, repeat: int, validation: bool) -> Result:
    organisations = [organisation(f"org-{i:02d}", shares) for i in range(orgs)]
    times: dict[Builder, list[float]] = {construct_stack: [], l1_stack: []}
    templates: dict[Builder, list[dict[str, Any]]] = {}
    for run in range(repeat):
        # interleaved so machine noise hits both variants alike; the order alternates so
        # neither always runs right after the other (garbage collection debt, caches)
        order = (construct_stack, l1_stack) if run % 2 == 0 else (l1_stack, construct_stack)
        for build in order:
            elapsed, templates[build] = synth_seconds(build, organisations, validation)
            times[build].append(elapsed)
        if run == 0 and [_canonical(t) for t in templates[construct_stack]] != [
            _canonical(t) for t in templates[l1_stack]
        ]:
            raise SystemExit(f"{case}: the constructs and the L1s synthesize different templates")
    pair_ratios = sorted(
        c / l1 for c, l1 in zip(times[construct_stack], times[l1_stack], strict=True)
    )
    return Result(
        case,
        orgs,
        shares,
        sum(len(t.get("Resources", {})) for t in templates[construct_stack]),
        min(times[construct_stack]),
        min(times[l1_stack]),
        jsii_calls(construct_stack, organisations),
        jsii_calls(l1_stack, organisations),
        pair_ratios[len(pair_ratios) // 2],
    )


def growth(results: list[Result], key: str) -> str:
    """Seconds added per unit (share or organisation), from the first to the last case."""
    first, last = results[0], results[-1]
    units = getattr(last, key) - getattr(first, key)
    per_c = (last.construct_s - first.construct_s) / units * 1000
    per_l = (last.l1_s - first.l1_s) / units * 1000
    return f"constructs +{per_c:.1f} ms, L1 +{per_l:.1f} ms"


BUILDERS: dict[str, Builder] = {"constructs": construct_stack, "l1": l1_stack}


def process_seconds(variant: str, orgs: int, shares: int, validation: bool) -> float:
    """Wall time of a fresh Python process that builds and synthesizes one app (like app.py)."""
    command = [sys.executable, __file__, "--single", f"{variant}:{orgs}:{shares}"]
    if validation:
        command.append("--validation")
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main(
    repeat: int = typer.Option(5, min=1, help="Timed runs per case (best reported)."),
    validation: bool = typer.Option(False, help="Built-in CloudFormation validation on."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write results as JSON."),
    single: str = typer.Option("", hidden=True, help="variant:orgs:shares, one synth, no output"),
) -> None:
    """Time construct vs raw-L1 synthesis for 1/5/20 shares and 1/5/20 organisations."""
    if single:
        variant, orgs, shares = single.split(":")
        organisations = [organisation(f"org-{i:02d}", int(shares)) for i in range(int(orgs))]
        synth_seconds(BUILDERS[variant], organisations, validation)
        return
    console = Console(width=130)
    synth_seconds(construct_stack, [organisation("warm-up", 3)], validation)  # first synth cost
    synth_seconds(l1_stack, [organisation("warm-up", 3)], validation)
    by_shares = [
        run_case(f"1 org x {n} share{'s' * (n > 1)}", 1, n, repeat, validation) for n in (1, 5, 20)
    ]
    by_orgs = [
        run_case(f"{n} org{'s' * (n > 1)} x 5 shares", n, 5, repeat, validation) for n in (1, 5, 20)
    ]
    table = Table(title=f"cdk synth in-process, best of {repeat} (validation={validation})")
    columns = (
        "case",
        "resources",
        "constructs (s)",
        "raw L1 (s)",
        "ratio",
        "median pair ratio",
        "jsii calls c/L1",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "case" else "right")
    for r in (*by_shares, *by_orgs):
        table.add_row(
            r.case,
            str(r.resources),
            f"{r.construct_s:.3f}",
            f"{r.l1_s:.3f}",
            f"{r.ratio:.2f}",
            f"{r.median_pair_ratio:.2f}",
            f"{r.construct_calls}/{r.l1_calls}",
        )
    console.print(table)
    console.print(f"per extra share (1 -> 20): {growth(by_shares, 'shares_per_org')}")
    console.print(f"per extra organisation (1 -> 20): {growth(by_orgs, 'organisations')}")
    worst = max(r.ratio for r in (*by_shares, *by_orgs))
    worst_pair = max(r.median_pair_ratio for r in (*by_shares, *by_orgs))
    console.print(
        f"worst construct/L1 ratio in-process: {worst:.2f} best-of, {worst_pair:.2f} median pair "
        "(goal <= 1.2)"
    )
    runs = max(1, repeat // 2)
    proc = {v: min(process_seconds(v, 20, 5, validation) for _ in range(runs)) for v in BUILDERS}
    console.print(
        f"whole process (python start + import + synth), 20 orgs x 5 shares, best of {runs}: "
        f"constructs {proc['constructs']:.2f} s, L1 {proc['l1']:.2f} s, "
        f"ratio {proc['constructs'] / proc['l1']:.2f}"
    )
    if json_out:
        rows = [asdict(r) | {"ratio": r.ratio} for r in (*by_shares, *by_orgs)]
        json_out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    typer.run(main)
