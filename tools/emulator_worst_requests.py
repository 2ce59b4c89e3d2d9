"""The emulator's worst accepted requests: CPU time before and under its lock, and peak memory.

Run: ``.venv/bin/python tools/emulator_worst_requests.py`` (``--jobs N``: service jobs the
queue holds first, default 20,000, the default ``--max-finished-jobs``; ``--repeat R``: runs
per request, the fastest kept). Prints a Markdown table for docs/input-limits.md.

Each request is the largest one the emulator accepts for its operation (every list and string
at its bound, :mod:`quota_constructs.local.wire.input_bounds`), plus two the issue measured
before the bounds, now refused. A request goes the way the server takes it, in this process:
the body is read (``json_body``) and checked (``validate``) before the lock, then
:meth:`Emulator.call` runs under it. Times are this thread's CPU time (``time.thread_time``),
not wall time; memory is the peak Python allocation of the whole request (``tracemalloc``,
in a second run, so that tracing does not slow the timed one).
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quota_constructs.local.emulator import Emulator
from quota_constructs.local.state.job_service import JobRetention
from quota_constructs.local.testing import SEED_DEMO
from quota_constructs.local.wire.api_errors import DOMAIN_ERRORS, ApiError
from quota_constructs.local.wire.input_bounds import (
    DEFAULT_LIST_ITEMS,
    default_string_chars,
    documented_bound,
)
from quota_constructs.local.wire.protocol import json_body, service_model, validate
from quota_constructs.model import MAX_PAYLOAD_BYTES, MAX_TAGS

ROLE = "arn:aws:iam::123456789012:role/SageMakerExecutionRole"


def payload(name: str = "train", pad: int = 0) -> str:
    """A CreateTrainingJob request for one ml.g5.xlarge (``pad``: hyperparameter bytes)."""
    body: dict[str, Any] = {
        "TrainingJobName": name,
        "RoleArn": ROLE,
        "AlgorithmSpecification": {
            "TrainingImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
            "TrainingInputMode": "File",
        },
        "ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 1},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
    }
    if pad:
        body["HyperParameters"] = {"pad": "x" * pad}
    return json.dumps(body, separators=(",", ":"))


def largest_payload() -> str:
    """The longest payload under AWS's 10 KiB."""
    base = len(payload(pad=1)) - 1
    return payload(pad=MAX_PAYLOAD_BYTES - base)


def tags(count: int = MAX_TAGS) -> dict[str, str]:
    return {f"{n:03d}" + "k" * 125: "v" * 256 for n in range(count)}


def fair_share(count: int, width: int, *, same: bool = False) -> dict[str, Any]:
    """``count`` fair-share entries of ``width``-character identifiers (distinct and not
    overlapping, or all the same)."""
    ids = ["a" * width if same else f"{n:06d}".rjust(width, "a") for n in range(count)]
    return {"shareDistribution": [{"shareIdentifier": i, "weightFactor": 1.0} for i in ids]}


@dataclass(frozen=True)
class Case:
    """One request: its service, operation and body, and what it is."""

    what: str
    service: str
    operation: str
    params: Callable[[Emulator], dict[str, Any]]


def cases() -> list[Case]:
    per_page = 100
    # near misses of every job's name, and one prefix all names match: every job is compared
    # with every value, and all of them are kept and sorted
    names = [f"job{n:07d}x*" for n in range(DEFAULT_LIST_ITEMS - 1)] + ["job*"]
    share_id = documented_bound("ShareAttributes", "shareIdentifier") - 1
    shares = documented_bound("DescribeJobQueuesRequest", "jobQueues")

    def queue(e: Emulator) -> str:
        return e.organisations["seed-demo"].job_queue_arn

    return [
        Case(
            f"CreateSchedulingPolicy: 500 fair-share entries of {share_id} characters, 50 tags",
            "batch",
            "CreateSchedulingPolicy",
            lambda e: {
                "name": f"{len(e.registry.scheduling_policies()):04d}".rjust(128, "p"),
                "fairsharePolicy": fair_share(500, share_id),
                "tags": tags(),
            },
        ),
        Case(
            f"ListServiceJobs: JOB_NAME filter of {DEFAULT_LIST_ITEMS} prefixes, one matching "
            "every job, a page of 100",
            "batch",
            "ListServiceJobs",
            lambda e: {
                "jobQueue": queue(e),
                "filters": [{"name": "JOB_NAME", "values": names}],
                "maxResults": per_page,
            },
        ),
        Case(
            "ListServiceJobs: RUNNABLE jobs, a page of 100",
            "batch",
            "ListServiceJobs",
            lambda e: {"jobQueue": queue(e), "jobStatus": "RUNNABLE", "maxResults": per_page},
        ),
        Case(
            "GetJobQueueSnapshot",
            "batch",
            "GetJobQueueSnapshot",
            lambda e: {"jobQueue": queue(e)},
        ),
        Case(
            f"DescribeJobQueues: {shares} names of {default_string_chars()} characters",
            "batch",
            "DescribeJobQueues",
            lambda e: {"jobQueues": ["q" * default_string_chars()] * shares},
        ),
        Case(
            "SubmitServiceJob: a 10 KiB payload, 5 retry rules of 512 characters, 40 tags "
            "(about the 30 KiB of a whole request)",
            "batch",
            "SubmitServiceJob",
            lambda e: {
                "jobName": "j" * 128,
                "jobQueue": queue(e),
                "quotaShareName": "QS1",
                "serviceJobType": "SAGEMAKER_TRAINING",
                "serviceRequestPayload": largest_payload(),
                "retryStrategy": {
                    "attempts": 10,
                    "evaluateOnExit": [{"action": "RETRY", "onStatusReason": "r" * 511 + "*"}] * 5,
                },
                "tags": tags(40),
            },
        ),
        Case(
            "refused: CreateSchedulingPolicy with 2,500 identical entries (the issue's)",
            "batch",
            "CreateSchedulingPolicy",
            lambda e: {"name": "same", "fairsharePolicy": fair_share(2500, 8, same=True)},
        ),
        Case(
            "refused: ListServiceJobs with a JOB_NAME filter of 20,000 values (the issue's)",
            "batch",
            "ListServiceJobs",
            lambda e: {
                "jobQueue": queue(e),
                "filters": [{"name": "JOB_NAME", "values": [f"job{n}" for n in range(20_000)]}],
            },
        ),
        Case(
            "refused: ListServiceJobs with 27,000 filters, a body just under the 1 MiB limit",
            "batch",
            "ListServiceJobs",
            lambda e: {
                "jobQueue": queue(e),
                "filters": [{"name": "JOB_NAME", "values": ["a"]}] * 27_000,
            },
        ),
    ]


def fill(emulator: Emulator, jobs: int) -> None:
    """Submit ``jobs`` service jobs to seed-demo's queue (they wait RUNNABLE: 3 instances)."""
    queue = emulator.organisations["seed-demo"].job_queue_arn
    body = payload()
    for n in range(jobs):
        emulator.call(
            "batch",
            "SubmitServiceJob",
            {
                "jobName": f"job{n:07d}",
                "jobQueue": queue,
                "quotaShareName": ("QS1", "QS2", "QS3")[n % 3],
                "serviceJobType": "SAGEMAKER_TRAINING",
                "serviceRequestPayload": body,
            },
        )
    emulator.advance(1)


@dataclass
class Figures:
    body_bytes: int
    before_lock_ms: float
    under_lock_ms: float
    peak_kib: float
    answer: str


def serve_one(emulator: Emulator, case: Case, raw: bytes) -> tuple[float, float, str]:
    """The request as the server takes it: CPU seconds before the lock, under it, the answer."""
    op = service_model(case.service).operation_model(case.operation)
    start = time.thread_time()
    try:
        params = json_body(raw, case.service)
        validate(op, params)
    except ApiError as error:
        return time.thread_time() - start, 0.0, f"{error.code} ({len(error.message):,} chars)"
    checked = time.thread_time()
    try:
        result = emulator.call(case.service, case.operation, params)
        answer = f"OK ({len(json.dumps(result, default=str)):,} bytes)"
    except DOMAIN_ERRORS as error:
        answer = f"refused ({len(str(error)):,} chars)"
    return checked - start, time.thread_time() - checked, answer


def measure(emulator: Emulator, case: Case, repeat: int) -> Figures:
    """The fastest of ``repeat`` runs (each request built anew: a policy's name is unused)."""
    bodies = [json.dumps(case.params(emulator)).encode()]
    runs = [serve_one(emulator, case, bodies[0])]
    for _ in range(repeat - 1):
        bodies.append(json.dumps(case.params(emulator)).encode())
        runs.append(serve_one(emulator, case, bodies[-1]))
    before, under, answer = min(runs, key=lambda r: r[0] + r[1])
    raw = json.dumps(case.params(emulator)).encode()
    tracemalloc.start()
    serve_one(emulator, case, raw)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return Figures(len(raw), before * 1000, under * 1000, peak / 1024, answer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    emulator = Emulator(retention=JobRetention(finished_for_s=None, max_finished=args.jobs))
    emulator.provision_file(SEED_DEMO)
    fill(emulator, args.jobs)
    print(f"{args.jobs:,} service jobs in the queue; CPU time, fastest of {args.repeat} runs\n")
    print("| Request | Body | CPU before the lock | CPU under the lock | Peak memory | Answer |")
    print("|---|---|---|---|---|---|")
    for case in cases():
        f = measure(emulator, case, args.repeat)
        print(
            f"| {case.what} | {f.body_bytes / 1024:,.0f} KiB | {f.before_lock_ms:,.1f} ms | "
            f"{f.under_lock_ms:,.1f} ms | {f.peak_kib / 1024:,.1f} MiB | {f.answer} |"
        )


if __name__ == "__main__":
    main()
