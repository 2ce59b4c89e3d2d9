"""DeleteJobQueue on a DISABLED queue that still has quota shares: accepted; its jobs are
terminated ("All jobs in the queue are eventually terminated when you delete a job queue.",
botocore's ``DeleteJobQueue``) and its shares go with it (UNCONFIRMED)."""

from __future__ import annotations

from typing import Any

import pytest

from quota_constructs.local.emulator import Emulator
from quota_constructs.local.events import STATE_CHANGE, EventSink
from quota_constructs.local.state import errors
from quota_constructs.local.state.job_service import REASON_QUEUE_DELETED
from tests.helpers import ORGS_DIR, payload


class Demo:
    """seed-demo on an in-process emulator that keeps its events."""

    def __init__(self) -> None:
        self.sink = EventSink()
        self.emulator = Emulator(seed=7, events=self.sink)
        self.queue = self.emulator.provision_file(ORGS_DIR / "seed-demo.yaml").job_queue_arn

    def batch(self, operation: str, **params: Any) -> dict[str, Any]:
        return self.emulator.call("batch", operation, params)

    def submit(self, share: str, name: str) -> str:
        params = {
            "jobName": name,
            "jobQueue": self.queue,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "serviceRequestPayload": payload(),
            "quotaShareName": share,
        }
        return str(self.batch("SubmitServiceJob", **params)["jobArn"])

    def delete_queue(self) -> None:
        self.batch("UpdateJobQueue", jobQueue=self.queue, state="DISABLED")
        self.batch("DeleteJobQueue", jobQueue=self.queue)

    def last_event(self, job_arn: str) -> dict[str, Any]:
        mine = [e for e in self.sink.of_type(STATE_CHANGE) if e["resources"] == [job_arn]]
        return mine[-1]["detail"]


@pytest.fixture
def demo() -> Demo:
    return Demo()


def test_deleting_a_queue_with_shares_terminates_its_running_and_waiting_jobs(
    demo: Demo,
) -> None:
    jobs = [demo.submit("QS1", f"j{n}") for n in range(6)]  # more than QS1 and its lenders hold
    demo.emulator.advance(10)
    before = {demo.last_event(job)["status"] for job in jobs}

    demo.delete_queue()

    assert {"RUNNING", "RUNNABLE"} <= before
    for job in jobs:
        detail = demo.last_event(job)
        assert (detail["status"], detail["statusReason"]) == ("FAILED", REASON_QUEUE_DELETED)


def test_deleting_a_queue_deletes_its_shares_and_frees_its_environment(demo: Demo) -> None:
    share_arn = f"{demo.queue}/quota-share/QS1"
    environment = demo.batch("DescribeJobQueues", jobQueues=[demo.queue])["jobQueues"][0][
        "serviceEnvironmentOrder"
    ][0]["serviceEnvironment"]

    demo.delete_queue()

    with pytest.raises(errors.NotFound):
        demo.batch("DescribeQuotaShare", quotaShareArn=share_arn)
    assert demo.batch("DescribeJobQueues", jobQueues=[demo.queue])["jobQueues"] == []
    demo.batch("UpdateServiceEnvironment", serviceEnvironment=environment, state="DISABLED")
    demo.batch("DeleteServiceEnvironment", serviceEnvironment=environment)


def test_the_old_refusal_is_an_option(demo: Demo) -> None:
    demo.emulator.registry.refuse_queue_with_shares = True
    demo.batch("UpdateJobQueue", jobQueue=demo.queue, state="DISABLED")

    with pytest.raises(errors.InvalidRequest, match=r"still has quota shares \(QS1, QS2, QS3\)"):
        demo.batch("DeleteJobQueue", jobQueue=demo.queue)
