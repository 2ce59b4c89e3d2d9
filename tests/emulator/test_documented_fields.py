"""Fields AWS documents for what the emulator serves beyond Batch's own rules: SageMaker's
training-job times and billing, EventBridge's event envelope, Batch's attempt and summary
members, SSM's and Service Quotas' answers (rows of docs/emulator.md's documented-behaviour
table, ``documented_behaviours.py``)."""

from __future__ import annotations

import itertools
import re
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.emulator import Emulator
from quota_constructs.local.events import STATE_CHANGE, EventSink
from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.scheduling import SchedulerOptions
from tests.emulator.helpers import status, submit
from tests.helpers import ORGS_DIR, payload, runs_for

RUNS_1_MIN = runs_for(60)


@pytest.fixture
def sagemaker(emulator: EmulatorServer) -> Any:
    return emulator.client("sagemaker")


def training_job(batch: Any, sagemaker: Any, job: str, attempt: int = 0) -> dict[str, Any]:
    """DescribeTrainingJob of the job's ended attempt ``attempt``, else of its latest."""
    described = batch.describe_service_job(jobId=job)
    ended = described.get("attempts", [])
    chosen = ended[attempt] if ended else described["latestAttempt"]
    arn = chosen["serviceResourceId"]["value"]
    return dict(sagemaker.describe_training_job(TrainingJobName=arn.rsplit("/", 1)[1]))


def ms(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


# --- SageMaker DescribeTrainingJob ------------------------------------------------------------


def test_billable_time_is_the_wall_clock_from_training_start_to_end(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "billed", tags=RUNS_1_MIN)
    emulator.advance(120)

    described = training_job(batch, sagemaker, job)

    ran = described["TrainingEndTime"] - described["TrainingStartTime"]
    assert described["BillableTimeInSeconds"] == int(ran.total_seconds()) == 61
    assert described["TrainingTimeInSeconds"] == described["BillableTimeInSeconds"]  # on demand


def test_training_and_billable_time_are_reported_once_the_job_ended(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "running", tags=RUNS_1_MIN)
    emulator.advance(30)

    described = training_job(batch, sagemaker, job)

    assert described["TrainingJobStatus"] == "InProgress"
    assert "BillableTimeInSeconds" not in described and "TrainingEndTime" not in described


def test_training_start_is_before_the_download_and_end_is_the_attempts_stop(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "timed", tags=RUNS_1_MIN)
    emulator.advance(120)
    attempt = batch.describe_service_job(jobId=job)["attempts"][0]

    described = training_job(batch, sagemaker, job)

    # instances acquired (STARTING, SageMaker downloading) 1 s before Batch's startedAt (RUNNING)
    assert ms(described["TrainingStartTime"]) == attempt["startedAt"] - 1000
    assert ms(described["TrainingEndTime"]) == attempt["stoppedAt"]


def test_secondary_status_transitions_are_the_history_of_the_attempt(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "history", tags=RUNS_1_MIN)
    emulator.advance(120)

    described = training_job(batch, sagemaker, job)

    steps = described["SecondaryStatusTransitions"]
    assert [s["Status"] for s in steps] == ["Pending", "Downloading", "Training", "Completed"]
    for earlier, later in itertools.pairwise(steps):
        assert earlier["EndTime"] == later["StartTime"]  # each ends as the next one starts
    assert steps[0]["StartTime"] == described["CreationTime"]
    assert steps[-1]["StartTime"] == described["TrainingEndTime"]


def test_a_training_job_being_preempted_is_stopping_since_the_preemption_started() -> None:
    options = SchedulerOptions(preemption_duration_s=20.0)
    with EmulatorServer(org_files=[SEED_DEMO], options=options) as emu:
        batch, sagemaker = emu.client("batch"), emu.client("sagemaker")
        queue = emu.queue_arn("seed-demo")
        borrower = [submit(batch, queue, "QS1", f"p{p}", schedulingPriority=p) for p in (3, 2)][1]
        emu.advance(10)
        submit(batch, queue, "QS2", "lender")
        emu.advance(5)  # the reclaim started; the borrower's training job is stopping

        described = training_job(batch, sagemaker, borrower)

    steps = described["SecondaryStatusTransitions"]
    assert (described["TrainingJobStatus"], described["SecondaryStatus"]) == ("Stopping",) * 2
    assert [s["Status"] for s in steps] == ["Pending", "Downloading", "Training", "Stopping"]
    assert steps[-1]["StartTime"] == described["LastModifiedTime"]


def test_last_modified_time_is_when_the_status_last_changed(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "modified", tags=RUNS_1_MIN)
    emulator.advance(30)
    started = batch.describe_service_job(jobId=job)["startedAt"]

    described = training_job(batch, sagemaker, job)

    assert described["SecondaryStatus"] == "Training"
    assert ms(described["LastModifiedTime"]) == started


# --- Batch's members --------------------------------------------------------------------------


def test_a_job_observed_by_describe_passes_through_runnable(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS1", "observed")
    seen = [status(batch, job)]
    for _ in range(4):
        emulator.advance(0.5)
        seen.append(status(batch, job))

    assert list(dict.fromkeys(seen)) == ["SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING"]


def test_an_attempts_times_are_when_it_started_and_stopped_running(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "attempt", tags=RUNS_1_MIN)
    emulator.advance(120)
    described = batch.describe_service_job(jobId=job)

    (attempt,) = described["attempts"]
    assert (attempt["startedAt"], attempt["stoppedAt"]) == (
        described["startedAt"],
        described["stoppedAt"],
    )
    assert attempt["stoppedAt"] - attempt["startedAt"] == 60_000


def test_an_attempts_resource_is_named_by_its_training_job_arn(
    emulator: EmulatorServer, batch: Any, sagemaker: Any, queue: str
) -> None:
    job = submit(batch, queue, "QS3", "resource", tags=RUNS_1_MIN)
    emulator.advance(120)
    described = batch.describe_service_job(jobId=job)

    resource = described["attempts"][0]["serviceResourceId"]
    assert resource == described["latestAttempt"]["serviceResourceId"]
    assert resource["name"] == "TrainingJobArn"
    assert training_job(batch, sagemaker, job)["TrainingJobArn"] == resource["value"]


def test_a_summary_says_is_terminated_only_when_true(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    done = submit(batch, queue, "QS3", "done", tags=RUNS_1_MIN)
    emulator.advance(120)
    stopped = submit(batch, queue, "QS3", "stopped")
    batch.terminate_service_job(jobId=stopped, reason="not needed")

    listed = batch.list_service_jobs(jobQueue=queue, jobStatus="SUCCEEDED")["jobSummaryList"]
    failed = batch.list_service_jobs(jobQueue=queue, jobStatus="FAILED")["jobSummaryList"]

    assert [(j["jobId"], "isTerminated" in j) for j in listed] == [(done, False)]
    assert [(j["jobId"], j["isTerminated"]) for j in failed] == [(stopped, True)]


def test_a_job_without_capacity_goes_from_scheduled_back_to_runnable() -> None:
    sink = EventSink()
    emulator = Emulator(seed=3, events=sink)
    queue = emulator.provision_file(ORGS_DIR / "seed-demo.yaml").job_queue_arn
    params = {
        "jobName": "no-capacity",
        "jobQueue": queue,
        "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": payload(),
        "quotaShareName": "QS3",
        "tags": {"quota.local/capacity-errors": "1", **RUNS_1_MIN},
    }
    job = emulator.call("batch", "SubmitServiceJob", params)["jobId"]
    emulator.advance(120)

    seen = [e["detail"]["status"] for e in sink.of_type(STATE_CHANGE)]
    assert seen[:4] == ["RUNNABLE", "SCHEDULED", "RUNNABLE", "SCHEDULED"]
    described = emulator.call("batch", "DescribeServiceJob", {"jobId": job})
    first, latest = described["attempts"][0], described["latestAttempt"]
    assert first["statusReason"].startswith("Received status from SageMaker:CapacityError")
    assert latest["serviceResourceId"] == described["attempts"][-1]["serviceResourceId"]


def test_a_snapshots_last_updated_at_is_the_emulators_now(
    emulator: EmulatorServer, batch: Any, queue: str
) -> None:
    submit(batch, queue, "QS3", "holder", tags=RUNS_1_MIN)
    submit(batch, queue, "QS3", "waiting")
    emulator.advance(10)
    clock = emulator.emulator.clock
    now = round(clock.epoch(clock.now()) * 1000)

    snapshot = batch.get_job_queue_snapshot(jobQueue=queue)

    assert snapshot["frontOfQueue"]["lastUpdatedAt"] == now
    assert snapshot["queueUtilization"]["lastUpdatedAt"] == now


# --- EventBridge's envelope -------------------------------------------------------------------


@pytest.fixture
def events() -> list[dict[str, Any]]:
    sink = EventSink()
    emulator = Emulator(seed=3, events=sink)
    queue = emulator.provision_file(ORGS_DIR / "seed-demo.yaml").job_queue_arn
    for name in ("one", "two"):
        emulator.call(
            "batch",
            "SubmitServiceJob",
            {
                "jobName": name,
                "jobQueue": queue,
                "serviceJobType": "SAGEMAKER_TRAINING",
                "serviceRequestPayload": payload(runtime_s=60),
                "quotaShareName": "QS1",
                "tags": RUNS_1_MIN,
            },
        )
    emulator.advance(120)
    return sink.of_type(STATE_CHANGE)


def test_every_event_has_version_0_and_its_own_version_4_uuid(
    events: list[dict[str, Any]],
) -> None:
    assert {e["version"] for e in events} == {"0"}
    ids = [uuid.UUID(e["id"]) for e in events]
    assert {i.version for i in ids} == {4} and len(set(ids)) == len(ids) > 4


def test_every_event_names_its_12_digit_account_and_region(
    events: list[dict[str, Any]],
) -> None:
    assert {(e["account"], e["region"]) for e in events} == {("123456789012", "us-east-1")}
    assert all(re.fullmatch(r"[0-9]{12}", e["account"]) for e in events)


def test_an_events_time_is_when_the_job_changed_state(events: list[dict[str, Any]]) -> None:
    succeeded = [e for e in events if e["detail"]["status"] == "SUCCEEDED"]
    assert succeeded
    for event in succeeded:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", event["time"])
        stopped = event["detail"]["stoppedAt"] // 1000
        when = datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert int(when.timestamp()) == stopped


# --- SSM and Service Quotas -------------------------------------------------------------------


def test_get_parameters_lists_the_names_it_did_not_find(emulator: EmulatorServer) -> None:
    ssm = emulator.client("ssm")
    name = "/quota/seed-demo/job-queue/name"

    found = ssm.get_parameters(Names=[name, "/quota/seed-demo/nothing-here"])

    assert [p["Name"] for p in found["Parameters"]] == [name]
    assert found["InvalidParameters"] == ["/quota/seed-demo/nothing-here"]


def test_get_parameter_of_an_unknown_name_is_parameter_not_found(
    emulator: EmulatorServer,
) -> None:
    with pytest.raises(ClientError) as caught:
        emulator.client("ssm").get_parameter(Name="/quota/seed-demo/nothing-here")

    assert caught.value.response["Error"]["Code"] == "ParameterNotFound"


def test_a_quotas_arn_is_servicequotas_service_code_and_quota_code(
    emulator: EmulatorServer,
) -> None:
    emulator.emulator.service_quotas.set("ml.g5.xlarge", 4)
    client = emulator.client("service-quotas")
    quotas = client.list_service_quotas(ServiceCode="sagemaker")["Quotas"]

    assert quotas
    for quota in quotas:
        assert quota["QuotaArn"] == (
            f"arn:aws:servicequotas:us-east-1:123456789012:sagemaker/{quota['QuotaCode']}"
        )
        assert quota["QuotaName"].endswith(" for training job usage")


def test_get_service_quota_of_an_unknown_code_is_no_such_resource(
    emulator: EmulatorServer,
) -> None:
    with pytest.raises(ClientError) as caught:
        emulator.client("service-quotas").get_service_quota(
            ServiceCode="sagemaker", QuotaCode="L-00000000"
        )

    assert caught.value.response["Error"]["Code"] == "NoSuchResourceException"
