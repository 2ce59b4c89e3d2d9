"""Emulator server benchmark: concurrent boto3 clients doing SubmitServiceJob + DescribeServiceJob.

The server runs in this process (seed-demo provisioned, virtual clock) on a loopback port; each
client is its own process with one boto3 client (so the clients' CPU does not share the server's
GIL), submitting a job and describing it, in a loop. Reports requests/s over all clients and
p50/p99 latency per operation, for the best of ``--repeat`` runs (the machine is shared, so
single runs are noisy). Goal: >= 500 requests/s with 8 clients.

    .venv/bin/python benchmarks/bench_server.py                    # waitress (what serve uses)
    .venv/bin/python benchmarks/bench_server.py --engine werkzeug  # werkzeug's threaded server
    .venv/bin/python benchmarks/bench_server.py --wsgi-only        # server CPU per request
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import threading
import time
from typing import Any

import boto3
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.test import Client

from quota_constructs.local.emulator import Emulator
from quota_constructs.local.testing import DUMMY_CREDENTIALS, SEED_DEMO
from quota_constructs.local.wire.server import EmulatorApp, start_server

PAYLOAD = json.dumps(
    {
        "TrainingJobName": "bench",
        "RoleArn": "arn:aws:iam::123456789012:role/SageMakerExecutionRole",
        "AlgorithmSpecification": {"TrainingImage": "img:1", "TrainingInputMode": "File"},
        "ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
    }
)
SHARES = ("QS1", "QS2", "QS3")


def client_loop(url: str, index: int, pairs: int, start: Any, results: Any) -> None:
    """One client: warm up, wait for the common start, then ``pairs`` x (submit, describe)."""
    batch = boto3.session.Session().client(
        "batch", endpoint_url=url, region_name="us-east-1", **DUMMY_CREDENTIALS
    )
    share = SHARES[index % len(SHARES)]

    def pair(n: int) -> tuple[float, float]:
        t0 = time.perf_counter()
        job = batch.submit_service_job(
            jobName=f"bench-{index}-{n}",
            jobQueue="seed-demo-queue",
            serviceJobType="SAGEMAKER_TRAINING",
            serviceRequestPayload=PAYLOAD,
            quotaShareName=share,
        )
        t1 = time.perf_counter()
        batch.describe_service_job(jobId=job["jobId"])
        return t1 - t0, time.perf_counter() - t1

    for n in range(5):
        pair(-n - 1)
    start.wait()
    began = time.perf_counter()
    samples = [pair(n) for n in range(pairs)]
    results.put((began, time.perf_counter(), samples))


class _Quiet(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        return


def serve(engine: str, emulator: Emulator, threads: int) -> tuple[str, Any]:
    """Start the chosen HTTP server; returns its URL and a stop function."""
    if engine == "waitress":
        server = start_server(emulator, threads=threads)
        return f"http://127.0.0.1:{server.port}", server.shutdown
    plain = make_server(
        "127.0.0.1", 0, EmulatorApp(emulator), threaded=True, request_handler=_Quiet
    )
    threading.Thread(target=plain.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{plain.server_port}", plain.shutdown


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def run(clients: int, pairs: int, engine: str, threads: int) -> dict[str, Any]:
    emulator = Emulator()
    emulator.provision_file(SEED_DEMO)
    url, stop = serve(engine, emulator, threads)
    ctx = mp.get_context("spawn")
    start, results = ctx.Event(), ctx.Queue()
    workers = [
        ctx.Process(target=client_loop, args=(url, i, pairs, start, results))
        for i in range(clients)
    ]
    for worker in workers:
        worker.start()
    time.sleep(0.5)
    while emulator.request_counts.get("SubmitServiceJob", 0) < 5 * clients:
        time.sleep(0.1)  # every client warmed up
    start.set()
    outcomes = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join()
    stop()
    began = min(o[0] for o in outcomes)
    ended = max(o[1] for o in outcomes)
    submits = [s for o in outcomes for s, _ in o[2]]
    describes = [d for o in outcomes for _, d in o[2]]
    every = submits + describes
    return {
        "engine": engine,
        "clients": clients,
        "requests": len(every),
        "seconds": round(ended - began, 3),
        "requests_per_s": round(len(every) / (ended - began), 1),
        "p50_ms": round(percentile(every, 50) * 1000, 2),
        "p99_ms": round(percentile(every, 99) * 1000, 2),
        "submit_p50_ms": round(percentile(submits, 50) * 1000, 2),
        "submit_p99_ms": round(percentile(submits, 99) * 1000, 2),
        "describe_p50_ms": round(percentile(describes, 50) * 1000, 2),
        "describe_p99_ms": round(percentile(describes, 99) * 1000, 2),
        "jobs_in_queue": len(emulator.jobs.job_queue),
    }


def wsgi_cost(pairs: int) -> dict[str, Any]:
    """Server CPU per request without sockets or clients: the WSGI app called directly."""
    emulator = Emulator()
    emulator.provision_file(SEED_DEMO)
    client = Client(EmulatorApp(emulator))

    def call(path: str, body: dict[str, Any]) -> Any:
        return client.post(path, json=body).get_json()

    began = time.perf_counter()
    for n in range(pairs):
        job = call(
            "/v1/submitservicejob",
            {
                "jobName": f"wsgi-{n}",
                "jobQueue": "seed-demo-queue",
                "serviceJobType": "SAGEMAKER_TRAINING",
                "serviceRequestPayload": PAYLOAD,
                "quotaShareName": SHARES[n % len(SHARES)],
            },
        )
        call("/v1/describeservicejob", {"jobId": job["jobId"]})
    seconds = time.perf_counter() - began
    return {"requests": 2 * pairs, "ms_per_request": round(seconds / (2 * pairs) * 1000, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=250, help="submit+describe pairs per client")
    parser.add_argument("--engine", choices=("waitress", "werkzeug"), default="waitress")
    parser.add_argument("--threads", type=int, default=8, help="waitress worker threads")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--wsgi-only", action="store_true", help="server CPU per request, no sockets or clients"
    )
    args = parser.parse_args()
    if args.wsgi_only:
        cost = wsgi_cost(args.clients * args.pairs)
        print(
            json.dumps(cost)
            if args.json
            else f"WSGI app alone: {cost['ms_per_request']} ms "
            f"of server CPU per request ({cost['requests']} submit/describe requests)"
        )
        return
    runs = [run(args.clients, args.pairs, args.engine, args.threads) for _ in range(args.repeat)]
    result = max(runs, key=lambda r: r["requests_per_s"])
    result["all_requests_per_s"] = [r["requests_per_s"] for r in runs]
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['engine']}: {result['clients']} clients, {result['requests']} requests in "
        f"{result['seconds']} s -> {result['requests_per_s']} requests/s; "
        f"p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms "
        f"(submit p50/p99 {result['submit_p50_ms']}/{result['submit_p99_ms']} ms, "
        f"describe {result['describe_p50_ms']}/{result['describe_p99_ms']} ms; "
        f"{result['jobs_in_queue']} jobs in the queue); best of {result['all_requests_per_s']}"
    )


if __name__ == "__main__":
    main()
