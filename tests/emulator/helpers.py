"""Helpers for the emulator's HTTP tests: submit and status shortcuts."""

from __future__ import annotations

from typing import Any

from tests.helpers import payload


def submit(batch: Any, queue: str, share: str | None, name: str, **extra: Any) -> str:
    """Submit a one-instance ml.g5.xlarge job; returns its job id."""
    params: dict[str, Any] = {
        "jobName": name,
        "jobQueue": queue,
        "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": extra.pop("serviceRequestPayload", payload()),
        **extra,
    }
    if share is not None:
        params["quotaShareName"] = share
    return str(batch.submit_service_job(**params)["jobId"])


def status(batch: Any, job_id: str) -> str:
    return str(batch.describe_service_job(jobId=job_id)["status"])
