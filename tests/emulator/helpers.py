"""Helpers for the emulator's HTTP tests: training-job payloads and submit shortcuts."""

from __future__ import annotations

import json
from typing import Any

ROLE = "arn:aws:iam::123456789012:role/SageMakerExecutionRole"


def payload(instance_type: str = "ml.g5.xlarge", count: int = 1, runtime_s: int = 3600) -> str:
    """JSON of a SageMaker CreateTrainingJob request, as ``serviceRequestPayload`` carries it."""
    return json.dumps(
        {
            "TrainingJobName": "train",
            "RoleArn": ROLE,
            "AlgorithmSpecification": {
                "TrainingImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
                "TrainingInputMode": "File",
            },
            "ResourceConfig": {
                "InstanceType": instance_type,
                "InstanceCount": count,
                "VolumeSizeInGB": 30,
            },
            "StoppingCondition": {"MaxRuntimeInSeconds": runtime_s},
            "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        }
    )


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
