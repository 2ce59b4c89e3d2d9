"""Soak: many clients with random operations under injected faults, beside slow clients and
garbage senders; at checkpoints and at the end no job is lost, none is in two states, list and
describe agree, and capacity in use never exceeds the limits.

The size fits CI (a few thousand operations). Run it bigger with the environment, e.g.
``QUOTA_SOAK_OPERATIONS=100000 QUOTA_SOAK_CLIENTS=50 pytest tests/emulator/test_soak.py``.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import threading
import time
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import botocore.session
import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.local.wire.server import ServerLimits
from tests.helpers import ORGS_DIR, payload

pytestmark = pytest.mark.slow  # minutes of requests: `make test`, not `make check`

OPERATIONS = int(os.environ.get("QUOTA_SOAK_OPERATIONS", "3000"))
CLIENTS = int(os.environ.get("QUOTA_SOAK_CLIENTS", "50"))
CHECKPOINTS = 3
GARBAGE_SENDERS = 4
SLOW_CLIENTS = 4
FAULTS = FaultPlan(
    throttle={"*": 0.03}, server_error={"*": 0.02}, lost_response={"*": 0.02}, seed=11
)
LIMITS = ServerLimits(channel_timeout=1, cleanup_interval=1, max_body_bytes=64 * 1024)
STATUSES: list[str] = (
    botocore.session.get_session().get_service_model("batch").shape_for("ServiceJobStatus").enum
)
HOLDING = {"SCHEDULED", "STARTING", "RUNNING"}
"""Statuses in which a job holds its capacity."""
WEIGHTS = {
    "submit": 30,
    "describe": 20,
    "list": 12,
    "update": 10,
    "terminate": 8,
    "snapshot": 10,
    "advance": 5,
    "shares": 5,
}


@dataclass
class Share:
    queue: str
    name: str
    limits: dict[str, float]
    """Most capacity in use per instance type: own limit plus what it may borrow."""


@dataclass
class Soak:
    """Shared state of one soak run."""

    emu: EmulatorServer
    clients: list[Any]
    shares: list[Share]
    environment: dict[str, int]
    accepted: dict[str, str] = field(default_factory=dict)
    """Job id -> queue ARN, for every submit that was answered with a job id."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    counts: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    checks: int = 0

    def record(self, what: str) -> None:
        with self.lock:
            self.counts[what] += 1


def share_limits(share: dict[str, Any]) -> dict[str, float]:
    """Own limit plus borrowing, per instance type, from a ListQuotaShares entry."""
    sharing = share["resourceSharingConfiguration"]
    borrow = sharing.get("borrowLimit", -1) if sharing["strategy"] == "LEND_AND_BORROW" else 0
    limits = {}
    for limit in share["capacityLimits"]:
        own = limit["maxCapacity"]
        extra = float("inf") if borrow == -1 else own * borrow // 100
        limits[limit["capacityUnit"]] = own + extra
    return limits


def setup(emu: EmulatorServer) -> Soak:
    clients = [
        emu.client(
            "batch", retries={"mode": "standard", "max_attempts": 12}, max_pool_connections=20
        )
        for _ in range(5)
    ]
    batch = clients[0]
    shares = [
        Share(queue, s["quotaShareName"], share_limits(s))
        for queue in (emu.queue_arn("seed-demo"), emu.queue_arn("research"))
        for s in batch.list_quota_shares(jobQueue=queue)["quotaShares"]
    ]
    environment: dict[str, int] = Counter()
    for env in batch.describe_service_environments()["serviceEnvironments"]:
        for limit in env["capacityLimits"]:
            environment[limit["capacityUnit"]] += limit["maxCapacity"]
    return Soak(emu, clients, shares, dict(environment))


# --- random operations ----------------------------------------------------------------------


def known_job(soak: Soak, rng: random.Random) -> str | None:
    with soak.lock:
        return rng.choice(list(soak.accepted)) if soak.accepted else None


def do_submit(soak: Soak, batch: Any, rng: random.Random) -> None:
    share = rng.choice(soak.shares)
    instance_type = rng.choice(sorted(share.limits))
    answer = batch.submit_service_job(
        jobName=f"soak-{rng.randrange(10**6)}",
        jobQueue=share.queue,
        serviceJobType="SAGEMAKER_TRAINING",
        quotaShareName=share.name,
        serviceRequestPayload=payload(instance_type, rng.choice([1, 1, 2])),
        schedulingPriority=rng.randrange(100),
        tags={"quota.local/duration-seconds": str(rng.randrange(10, 300))},
    )
    with soak.lock:
        soak.accepted[answer["jobId"]] = share.queue


def do_describe(soak: Soak, batch: Any, rng: random.Random) -> None:
    job = known_job(soak, rng)
    if job is not None:
        assert batch.describe_service_job(jobId=job)["jobId"] == job


def do_list(soak: Soak, batch: Any, rng: random.Random) -> None:
    batch.list_service_jobs(jobQueue=rng.choice(soak.shares).queue, jobStatus=rng.choice(STATUSES))


def do_update(soak: Soak, batch: Any, rng: random.Random) -> None:
    job = known_job(soak, rng)
    if job is not None:
        batch.update_service_job(jobId=job, schedulingPriority=rng.randrange(100))


def do_terminate(soak: Soak, batch: Any, rng: random.Random) -> None:
    job = known_job(soak, rng)
    if job is not None:
        batch.terminate_service_job(jobId=job, reason="soak")


def do_snapshot(soak: Soak, batch: Any, rng: random.Random) -> None:
    snapshot = batch.get_job_queue_snapshot(jobQueue=rng.choice(soak.shares).queue)
    for usage in snapshot["queueUtilization"]["totalCapacityUsage"]:
        assert usage["quantity"] <= soak.environment[usage["capacityUnit"]], snapshot


def do_advance(soak: Soak, batch: Any, rng: random.Random) -> None:
    body = json.dumps({"seconds": rng.randrange(1, 60)}).encode()
    request = urllib.request.Request(f"{soak.emu.endpoint_url}/_quota/advance", data=body)
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200


def do_shares(soak: Soak, batch: Any, rng: random.Random) -> None:
    batch.list_quota_shares(jobQueue=rng.choice(soak.shares).queue)


ACTIONS: dict[str, Callable[[Soak, Any, random.Random], None]] = {
    "submit": do_submit,
    "describe": do_describe,
    "list": do_list,
    "update": do_update,
    "terminate": do_terminate,
    "snapshot": do_snapshot,
    "advance": do_advance,
    "shares": do_shares,
}


def operate(soak: Soak, batch: Any, rng: random.Random) -> None:
    """One random operation; a refusal (ClientException) is an answer, a 5xx is not."""
    name = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
    try:
        ACTIONS[name](soak, batch, rng)
        soak.record(name)
    except ClientError as error:
        if error.response["Error"]["Code"] != "ClientException":
            raise
        soak.record(f"{name} refused")


# --- invariants -----------------------------------------------------------------------------


def listed(batch: Any, queues: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Job id -> every summary ListServiceJobs gives it, over every queue and status."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    paginator = batch.get_paginator("list_service_jobs")
    for queue in queues:
        for status in STATUSES:
            for page in paginator.paginate(jobQueue=queue, jobStatus=status):
                for summary in page["jobSummaryList"]:
                    found[summary["jobId"]].append({**summary, "queue": queue})
    return found


def check_invariants(soak: Soak, *, describe_all: bool) -> None:
    """No job lost, none in two states, list and describe agree, capacity within limits.

    Faults are paused while checking: what is checked is the emulator's state, and retries'
    back-off would only slow the check down.
    """
    faults, soak.emu.emulator.faults = soak.emu.emulator.faults, None
    try:
        _check_invariants(soak, describe_all=describe_all)
    finally:
        soak.emu.emulator.faults = faults


def _check_invariants(soak: Soak, *, describe_all: bool) -> None:
    batch = soak.clients[0]
    with soak.lock:
        accepted = dict(soak.accepted)
    found = listed(batch, {share.queue for share in soak.shares})
    twice = {job: [s["status"] for s in seen] for job, seen in found.items() if len(seen) != 1}
    assert not twice, f"jobs listed in more than one state: {twice}"
    lost = set(accepted) - set(found)
    assert not lost, f"accepted jobs missing from ListServiceJobs: {sorted(lost)[:5]}"
    sample = (
        list(accepted)
        if describe_all
        else random.Random(soak.checks).sample(list(accepted), min(100, len(accepted)))
    )
    for job in sample:
        described = batch.describe_service_job(jobId=job)
        (summary,) = found[job]
        assert (described["status"], described.get("quotaShareName")) == (
            summary["status"],
            summary.get("quotaShareName"),
        ), (described, summary)
    check_capacity(soak, found)
    soak.checks += 1


def check_capacity(soak: Soak, found: dict[str, list[dict[str, Any]]]) -> None:
    """Capacity held by SCHEDULED, STARTING and RUNNING jobs: per share within its own limit
    plus borrowing, per queue within the service environment."""
    per_share: Counter[tuple[str, str, str]] = Counter()
    per_queue: Counter[tuple[str, str]] = Counter()
    for (summary,) in found.values():
        if summary["status"] not in HOLDING:
            continue
        for usage in summary.get("capacityUsage", []):
            unit, quantity = usage["capacityUnit"], usage["quantity"]
            per_share[summary["queue"], summary["quotaShareName"], unit] += quantity
            per_queue[summary["queue"], unit] += quantity
    for share in soak.shares:
        for unit, limit in share.limits.items():
            assert per_share[share.queue, share.name, unit] <= limit, (share, per_share)
    for (queue, unit), quantity in per_queue.items():
        assert quantity <= soak.environment[unit], (queue, unit, quantity)


# --- clients ----------------------------------------------------------------------------------


def worker(soak: Soak, index: int, operations: int, barrier: threading.Barrier) -> None:
    rng = random.Random(index)
    batch = soak.clients[index % len(soak.clients)]
    every = max(1, operations // (CHECKPOINTS + 1))
    try:
        for n in range(1, operations + 1):
            operate(soak, batch, rng)
            if n % every == 0 and n // every <= CHECKPOINTS:
                barrier.wait()
    except threading.BrokenBarrierError:
        pass
    except Exception as exc:
        with soak.lock:
            soak.errors.append(f"client {index}: {type(exc).__name__}: {exc}")
        barrier.abort()


GARBAGE: list[tuple[str, dict[str, str], bytes]] = [
    ("/v1/submitservicejob", {}, b"[" * 10_000),
    ("/v1/submitservicejob", {}, b'{"jobName": NaN}'),
    ("/v1/listservicejobs", {}, b"\xff\xfe\x00garbage"),
    ("/v1/describeservicejob", {}, b'{"jobId": 5}'),
    ("/v1/listservicejobs", {}, b'{"jobQueue": "q", "filters": [{"name": "JOB_NAME"}]}'),
    ("/v1/describejobqueues", {}, b'{"maxResults": 1e400}'),
    ("/v1/describejobqueues", {}, b"x" * (70 * 1024)),
    ("/v1/nosuchoperation", {}, b"{}"),
    ("/", {"X-Amz-Target": "AmazonSSM.GetParameter"}, b'{"Name": {"a": ' * 100),
    ("/_quota/advance", {}, b'{"seconds": NaN}'),
    ("/_quota/advance", {}, b'{"seconds": -5}'),
]


def garbage_sender(soak: Soak, index: int, stop: threading.Event) -> None:
    """Sends requests no server may answer with a 5xx, until stopped."""
    rng = random.Random(1000 + index)
    try:
        while not stop.is_set():
            path, headers, body = rng.choice(GARBAGE)
            status, answer = send_garbage(soak, path, headers, body)
            injected = b"(injected)" in answer  # garbage that reached the emulator may draw one
            assert 400 <= status < 500 or injected, (path, body[:40], status, answer[:200])
            soak.record("garbage")
            stop.wait(0.01)  # garbage beside the clients, not instead of them
    except Exception as exc:
        with soak.lock:
            soak.errors.append(f"garbage sender {index}: {type(exc).__name__}: {exc}")


def send_garbage(soak: Soak, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
    """Status and body of the answer to one POST on a new connection; sent once more on a new
    connection if the first was reset: on a loaded machine the sender may stall longer than
    the soak's 1-second ``channel_timeout`` between connecting and sending, and the server
    then closes the connection, as it must. A garbage request the server cannot answer is
    reset both times and fails the soak."""
    try:
        return _send_garbage_once(soak, path, headers, body)
    except (BrokenPipeError, ConnectionResetError):
        with soak.lock:
            soak.counts["garbage reset, sent again"] += 1
        return _send_garbage_once(soak, path, headers, body)


def _send_garbage_once(
    soak: Soak, path: str, headers: dict[str, str], body: bytes
) -> tuple[int, bytes]:
    """Status and body of the answer to one POST on a new connection.

    A body over the limit may be cut off by the server's 413 before it is all sent; the
    status is then read from what came back, if anything, else taken as that 413.
    """
    port = int(soak.emu.endpoint_url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection(soak.emu.host, port, timeout=60)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    except (BrokenPipeError, ConnectionResetError):
        if len(body) <= LIMITS.max_body_bytes:
            raise
        return 413, b""
    finally:
        connection.close()


def slow_client(soak: Soak, index: int, stop: threading.Event) -> None:
    """Opens connections that send a request a few bytes at a time, or half of one and then
    nothing; the server times them out (a connection it closed is simply opened again)."""
    port = int(soak.emu.endpoint_url.rsplit(":", 1)[1])
    request = b"POST /v1/describejobqueues HTTP/1.1\r\nHost: e\r\nContent-Length: 2\r\n\r\n{}"
    while not stop.is_set():
        try:
            with socket.create_connection((soak.emu.host, port), timeout=60) as sock:
                for piece in range(0, len(request) // 2, 4):
                    if stop.wait(0.05):
                        break
                    sock.sendall(request[piece : piece + 4])
                soak.record("slow")
                stop.wait(0.3)
        except OSError:
            soak.record("slow closed by the server")


def test_soak_keeps_every_invariant() -> None:
    with EmulatorServer(
        org_files=[SEED_DEMO, ORGS_DIR / "research.yaml"], faults=FAULTS, limits=LIMITS, seed=5
    ) as emu:
        soak = setup(emu)
        checkpoint_errors: list[str] = []

        def checkpoint() -> None:
            try:
                check_invariants(soak, describe_all=False)
            except Exception as exc:
                checkpoint_errors.append(f"checkpoint {soak.checks}: {exc}")
                raise

        barrier = threading.Barrier(CLIENTS, action=checkpoint, timeout=300)
        stop = threading.Event()
        per_client = max(1, OPERATIONS // CLIENTS)
        workers = [
            threading.Thread(target=worker, args=(soak, n, per_client, barrier))
            for n in range(CLIENTS)
        ]
        others = [
            threading.Thread(target=target, args=(soak, n, stop), daemon=True)
            for target in (garbage_sender, slow_client)
            for n in range(GARBAGE_SENDERS if target is garbage_sender else SLOW_CLIENTS)
        ]
        started = time.monotonic()
        for thread in others + workers:
            thread.start()
        for thread in workers:
            thread.join()
        stop.set()
        for thread in others:
            thread.join(timeout=60)
        emu.advance(10_000)
        check_invariants(soak, describe_all=True)

    summary = f"{dict(soak.counts)} in {time.monotonic() - started:.0f} s"
    assert not checkpoint_errors, checkpoint_errors
    assert not soak.errors, soak.errors[:5]
    assert soak.checks == CHECKPOINTS + 1, summary
    assert soak.counts["submit"] > 0 and soak.counts["garbage"] > 0, summary
    assert sum(emu.fault_counts.get("SubmitServiceJob", {}).values()) > 0, summary
