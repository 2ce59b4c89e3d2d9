"""The behaviours AWS documents outside botocore's model (the AWS Batch user guide, the
EventBridge events pages, AWS's own clients), each beside the tests showing the emulator keeping
it, or ``UNCONFIRMED`` and why not: docs/emulator.md's "Every documented behaviour" table.

``tools/gen_doc_tables.py`` writes the table into docs/emulator.md from ``BEHAVIOURS``
(``tests/unit/test_doc_tables.py`` fails while the page differs);
``tests/emulator/test_documented_behaviours.py`` checks that each row names its source and a test
or an ``UNCONFIRMED`` reason, and that every test named (in ``tests`` or a note) exists. Cells are
Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass

USER_GUIDE = "https://docs.aws.amazon.com/batch/latest/userguide/"


@dataclass(frozen=True)
class Source:
    """Where AWS documents a behaviour: a linked page, or (without ``url``) a botocore model."""

    title: str
    url: str = ""
    remark: str = ""
    """Said after the link, e.g. ``(example)``."""

    def markdown(self) -> str:
        link = f"[{self.title}]({self.url})" if self.url else self.title
        return f"{link} {self.remark}" if self.remark else link


def guide(page: str, remark: str = "") -> Source:
    """The AWS Batch user guide's page ``page`` (its file name, without ``.html``)."""
    return Source(page, f"{USER_GUIDE}{page}.html", remark)


SAMPLE_HELPER = Source(
    "sagemaker-python-sdk `aws_batch_resource_management.py`",
    "https://github.com/aws/sagemaker-python-sdk/blob/master/v3-examples/training-examples/aws_batch/utils/aws_batch_resource_management.py",
)
"""AWS's sample helper that creates and deletes quota-management resources."""


@dataclass(frozen=True)
class Behaviour:
    """One documented behaviour (AWS's words, short), its sources and the tests proving it."""

    behaviour: str
    sources: tuple[Source, ...]
    tests: tuple[str, ...]
    """``tests/file.py::test_name`` (a parametrized case as ``test_name[id]``), each a test that
    exists; empty when the behaviour is UNCONFIRMED."""
    note: str = ""
    """Said after the tests: what is UNCONFIRMED and how the emulator chose; without tests, starts
    ``UNCONFIRMED: `` and says why. A note in brackets follows the tests without a semicolon."""

    def checked(self) -> str:
        """The "Test, or UNCONFIRMED and why" cell."""
        tests = ", ".join(f"`{test}`" for test in self.tests)
        if not (tests and self.note):
            return tests or self.note
        return f"{tests} {self.note}" if self.note.startswith("(") else f"{tests}; {self.note}"


AWS_CLIENTS = "tests/emulator/test_aws_clients.py::"
DISPATCH = "tests/scheduling/test_dispatch.py::"
DISPATCH_TICK = "tests/emulator/test_dispatch_tick.py::"
EVENTS = "tests/emulator/test_events.py::"
FIFO = "tests/scheduling/test_fifo.py::"
INDEXES = "tests/scheduling/test_indexes.py::"
JOB_RULES = "tests/emulator/test_rules_service_jobs.py::"
PAYLOAD = "tests/emulator/test_payload_passthrough.py::"
PROTOCOL = "tests/emulator/test_server_protocol.py::"
QUEUE_DELETION = "tests/emulator/test_queue_deletion.py::"
REGISTRY = "tests/emulator/test_registry.py::"
RESOURCE_RULES = "tests/emulator/test_rules_resources.py::"
SCHEDULING_RULES = "tests/scheduling/test_rules.py::"
SDK_QUEUE = "tests/sdk/test_training_queue.py::"
SERVER_JOBS = "tests/emulator/test_server_jobs.py::"
SERVER_RESOURCES = "tests/emulator/test_server_resources.py::"
STABLE_PAGES = "tests/emulator/test_stable_pagination.py::"
TRAINING_JOBS = "tests/emulator/test_server_training_jobs.py::"
TUTORIAL = "tests/emulator/test_server_tutorial.py::"
USER_GUIDE_RULES = "tests/emulator/test_user_guide_rules.py::"
WIRE_SHAPES = "tests/emulator/test_wire_shapes.py::"
RECLAIM = "tests/scheduling/test_reclaim.py::"
FIELDS = "tests/emulator/test_documented_fields.py::"
POSITIONS = "tests/scheduling/test_arrival_and_positions.py::"
CFN_SHARE_LIMIT = Source(
    "CloudFormation QuotaShareCapacityLimit",
    "https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-batch-quotashare-quotasharecapacitylimit.html",
)

BEHAVIOURS: tuple[Behaviour, ...] = (
    Behaviour(
        (
            '`nextToken`: "Pagination continues from the end of the previous results that '
            'returned the nextToken value." (ListServiceJobs; the same token member on '
            "ListQuotaShares, DescribeJobQueues, DescribeServiceEnvironments, "
            "ListSchedulingPolicies)"
        ),
        (Source("botocore `batch` `ListServiceJobs.nextToken`"),),
        (
            STABLE_PAGES + "test_a_job_submitted_between_two_pages_repeats_no_job",
            STABLE_PAGES + "test_a_job_leaving_the_status_between_two_pages_makes_no_job_skipped",
            STABLE_PAGES
            + "test_a_job_name_listing_keeps_its_groups_in_place_when_a_job_is_submitted",
            STABLE_PAGES + "test_a_share_deleted_between_two_pages_makes_no_share_skipped",
            STABLE_PAGES + "test_a_queue_deleted_between_two_pages_makes_no_queue_skipped",
            STABLE_PAGES
            + "test_an_environment_deleted_between_two_pages_makes_no_environment_skipped",
            STABLE_PAGES + "test_a_policy_deleted_between_two_pages_makes_no_policy_skipped",
        ),
        (
            "(a token names the last listed item's place in a stable order, not an offset; "
            "UNCONFIRMED: whether AWS lists an item added before that place, the emulator "
            "does not)"
        ),
    ),
    Behaviour(
        (
            "SSM `GetParametersByPath`, SageMaker `ListTrainingPlans`, Service Quotas "
            '`ListServiceQuotas`: the `NextToken` "to continue pagination" where the previous '
            "page ended"
        ),
        (
            Source("botocore `ssm` `GetParametersByPath.NextToken`"),
            Source("botocore `service-quotas` `ListServiceQuotas.NextToken`"),
        ),
        (
            STABLE_PAGES + "test_parameters_provisioned_between_two_pages_repeat_no_parameter",
            STABLE_PAGES + "test_a_training_plan_bought_between_two_pages_repeats_no_plan",
            STABLE_PAGES + "test_a_quota_set_between_two_pages_repeats_no_quota",
        ),
    ),
    Behaviour(
        (
            'A token the service did not issue: SSM `InvalidNextToken` ("The specified token '
            "isn't valid.\"), Service Quotas `InvalidPaginationTokenException`, the errors their "
            "models declare; Batch declares only `ClientException`"
        ),
        (
            Source("botocore `ssm` `InvalidNextToken`"),
            Source("botocore `service-quotas` `InvalidPaginationTokenException`"),
        ),
        (
            STABLE_PAGES + "test_rejects_a_token_the_emulator_did_not_issue_with_the_services_code",
            STABLE_PAGES + "test_rejects_a_token_of_another_listing",
        ),
        "(SageMaker declares none: `ValidationException`, as for its other refusals)",
    ),
    Behaviour(
        (
            'GetJobQueueSnapshot: "For job queues with an attached quota-share policy, the first '
            'RUNNABLE job in each quota share is also listed."; `quotaShareName`: "The name of '
            'the quota share that the service job is associated with."'
        ),
        (Source("botocore `batch` `GetJobQueueSnapshot`, `DescribeServiceJob.quotaShareName`"),),
        (
            WIRE_SHAPES + "test_a_fifo_queues_events_name_no_quota_share",
            WIRE_SHAPES + "test_a_fifo_queues_snapshot_lists_no_quota_share",
            WIRE_SHAPES + "test_a_quota_share_filter_finds_no_fifo_job",
        ),
        (
            "(a FIFO queue has no quota shares: its jobs, events, snapshot and QUOTA_SHARE_NAME "
            "filter name none, though the core runs them in one internal share)"
        ),
    ),
    Behaviour(
        (
            'TerminateServiceJobs `successful`: "A list of the service job IDs whose termination '
            'request was accepted."'
        ),
        (Source("botocore `batch` `TerminateServiceJobsResponse.successful`"),),
        (WIRE_SHAPES + "test_terminate_service_jobs_lists_the_ids_of_jobs_named_by_arn",),
        "(a job named by its ARN is listed by its id)",
    ),
    Behaviour(
        (
            "`tags` of queues, environments, policies, shares and service jobs, and "
            "ListTagsForResource's, is a `TagrisTagsMap` with a minimum of 1 entry"
        ),
        (Source("botocore `batch` `TagrisTagsMap`"),),
        (WIRE_SHAPES + "test_untagged_resources_and_jobs_answer_no_tags_member",),
        (
            "(left out for an untagged resource, never an empty map; UNCONFIRMED whether AWS "
            "answers `{}` there)"
        ),
    ),
    Behaviour(
        (
            "A RUNNABLE job's `statusReason` carries AWS's reasons (`MISCONFIGURATION:...`, "
            "`CAPACITY:...`); otherwise AWS leaves it empty"
        ),
        (guide("sm_job_stuck_in_runnable"),),
        (
            SERVER_JOBS + "test_a_runnable_job_has_no_status_reason_by_default_as_aws_leaves_it",
            SERVER_JOBS + "test_explain_pending_gives_a_runnable_job_the_emulators_reason",
        ),
        (
            "(the emulator's own reasons are opt-in: `EmulatorServer(explain_pending=True)`, "
            "`quota local serve --explain-pending`; `quota local why` explains a job either way)"
        ),
    ),
    Behaviour(
        (
            '`startedAt`: "The Unix timestamp (in milliseconds) for when the service job was '
            'started." (a required member of the DescribeServiceJob output shape)'
        ),
        (Source("botocore `batch` `DescribeServiceJobResponse.startedAt`"),),
        (WIRE_SHAPES + "test_started_at_is_left_out_until_the_job_starts",),
        (
            "(left out before the job starts, as AWS leaves out container jobs' `startedAt`, "
            "required in `JobDetail` too, until they start; UNCONFIRMED for service jobs)"
        ),
    ),
    Behaviour(
        (
            "`maxCapacity` of a quota share or service environment and `borrowLimit`: a minimum "
            "(1; -1 for unlimited borrowing) and no documented maximum"
        ),
        (
            Source("botocore `batch` `QuotaShareCapacityLimit`, `CapacityLimit`"),
            CFN_SHARE_LIMIT,
        ),
        (
            WIRE_SHAPES
            + "test_capacity_and_borrow_limits_above_the_old_stated_bounds_are_accepted",
            WIRE_SHAPES + "test_rejects_a_capacity_above_the_apis_integer",
        ),
        "(bounded only by the API's `Integer`, 2,147,483,647, in files, constructs and emulator)",
    ),
    Behaviour(
        '"The job enters the `SUBMITTED` state and is placed in the specified job queue"',
        (guide("service-job-submit"),),
        (
            DISPATCH_TICK
            + "test_a_job_is_submitted_then_runnable_for_a_tick_then_dispatched_by_priority",
        ),
    ),
    Behaviour(
        '`SUBMITTED`: "Job submitted to queue, waiting for scheduler evaluation."',
        (guide("service-job-status"),),
        (
            DISPATCH_TICK
            + "test_a_job_is_submitted_then_runnable_for_a_tick_then_dispatched_by_priority",
        ),
        note="how long AWS takes to evaluate is UNCONFIRMED (the emulator: one tick)",
    ),
    Behaviour(
        (
            '`RUNNABLE`: "Jobs in this state are started as soon as sufficient resources are '
            'available in the service environment."'
        ),
        (guide("service-job-status"),),
        (
            AWS_CLIENTS + "test_fifo_jobs_dispatch_in_submit_order_within_num_instances",
            INDEXES + "test_a_borrower_waiting_for_capacity_takes_it_when_released",
        ),
    ),
    Behaviour(
        (
            '`RUNNABLE`: "Jobs can remain in this state indefinitely when sufficient resources '
            'are unavailable."'
        ),
        (guide("service-job-status"),),
        (USER_GUIDE_RULES + "test_a_job_without_capacity_stays_runnable_indefinitely",),
    ),
    Behaviour(
        (
            '"If capacity is available, the job moves to `SCHEDULED` and the job has been '
            'passed to SageMaker AI"'
        ),
        (guide("service-job-submit"),),
        (
            DISPATCH_TICK
            + "test_a_job_is_submitted_then_runnable_for_a_tick_then_dispatched_by_priority",
            TRAINING_JOBS + "test_each_batch_status_maps_to_sagemakers_status_as_aws_documents",
        ),
    ),
    Behaviour(
        (
            'then `STARTING` ("capacity has been acquired and SageMaker AI has downloaded the '
            'service job data"), then `RUNNING` ("When SageMaker AI starts to execute the job")'
        ),
        (guide("service-job-submit"),),
        (EVENTS + "test_state_changes_carry_the_queue_and_share_but_not_the_submission",),
        note="the emulator's 1 s in SCHEDULED and in STARTING are UNCONFIRMED (`SchedulerOptions`)",
    ),
    Behaviour(
        '"When the service job is completed it moves to `SUCCEEDED`"',
        (guide("service-job-submit"),),
        (TUTORIAL + "test_jobs_finish_after_their_duration_and_list_newest_first",),
    ),
    Behaviour(
        (
            "`SCHEDULED` is SageMaker `InProgress` / `Pending`; `STARTING` is `InProgress` / "
            "`Downloading`; `RUNNING` is `InProgress` / `Training`"
        ),
        (guide("service-job-status"),),
        (TRAINING_JOBS + "test_each_batch_status_maps_to_sagemakers_status_as_aws_documents",),
    ),
    Behaviour(
        "`RUNNING` is also `InProgress` / `Uploading`",
        (guide("service-job-status"),),
        (),
        note=(
            "UNCONFIRMED: how long uploading takes is not documented; an emulated attempt "
            "goes from `Training` to `Completed`"
        ),
    ),
    Behaviour(
        "`SUCCEEDED` is `Completed` / `Completed`",
        (guide("service-job-status"),),
        (TRAINING_JOBS + "test_a_finished_attempt_is_completed_with_its_model_artifacts",),
    ),
    Behaviour(
        "`FAILED` is `Failed` / `Failed`, or `Stopped` / `Stopped`",
        (guide("service-job-status"),),
        (
            TRAINING_JOBS + "test_a_failed_attempt_reports_its_failure_reason",
            TRAINING_JOBS + "test_a_terminated_attempt_is_stopped",
        ),
    ),
    Behaviour(
        (
            "A completed attempt's `statusReason`: \"Received status from SageMaker: Training "
            'job completed"'
        ),
        (guide("service-job-events", remark="(example)"),),
        (USER_GUIDE_RULES + "test_a_succeeded_attempt_says_the_training_job_completed",),
    ),
    Behaviour(
        (
            "The training job of an attempt is `AWSBatch<TrainingJobName><32 hex>` "
            "(`AWSBatchmy-training-job88b610a6...`)"
        ),
        (guide("service-job-events", remark="(example)"),),
        (TRAINING_JOBS + "test_the_training_job_is_named_after_the_payloads_training_job_name",),
    ),
    Behaviour(
        '"The `serviceRequestPayload` is passed through without validation."',
        (guide("service-job-submit"), guide("service-job-payload")),
        (
            PAYLOAD + "test_unknown_sagemaker_fields_and_missing_optional_ones_are_accepted",
            PAYLOAD + "test_an_unschedulable_payload_fails_the_job_not_the_submit",
        ),
        note=(
            "when and with what text AWS fails a payload SageMaker refuses is UNCONFIRMED "
            "(the emulator: `FAILED` at once, `Received status from "
            "SageMaker:ValidationException: ...`)"
        ),
    ),
    Behaviour(
        (
            '"The attempts value represents the total number of times" the job can be placed '
            'in `RUNNABLE`, "including the initial attempt"'
        ),
        (guide("service-job-retries"),),
        (
            SCHEDULING_RULES + "test_failed_outcome_is_retried_up_to_attempts",
            JOB_RULES + "test_first_matching_rule_decides_and_no_match_retries",
        ),
    ),
    Behaviour(
        (
            '"The `evaluateOnExit` array can contain up to 5 retry strategies", each an action '
            "(`RETRY` or `EXIT`) and a condition"
        ),
        (guide("service-job-retries"),),
        (
            JOB_RULES + "test_a_job_has_at_most_5_exit_rules",
            AWS_CLIENTS + "test_an_unknown_evaluate_on_exit_action_is_refused_naming_the_member",
        ),
    ),
    Behaviour(
        '"The `onStatusReason` parameter supports pattern matching up to 512 characters"',
        (guide("service-job-retries"),),
        (JOB_RULES + "test_exit_pattern_is_up_to_512_printable_characters",),
    ),
    Behaviour(
        (
            "SageMaker's reasons are prefixed \"Received status from SageMaker\" (the page's "
            "rule: `Received status from SageMaker: InternalServerError*`)"
        ),
        (guide("service-job-retries"),),
        (SDK_QUEUE + "test_sdk_exit_rule_fails_any_other_reason_at_once",),
        note=(
            "UNCONFIRMED: the page puts a space after the colon, the SageMaker SDK's own "
            "RETRY rule (`Received status from SageMaker:InternalServerError: We "
            "encountered an internal error. Please try again.`) none; the emulator writes "
            "none, so the SDK's rule matches "
            "(`tests/sdk/test_training_queue.py::test_sdk_retry_rule_retries_an_internal_error`)"
        ),
    ),
    Behaviour(
        (
            '"When a SageMaker Training job fails due to insufficient capacity, AWS Batch '
            'retries the job automatically until capacity becomes available"; "These '
            "capacity-based retries don't consume your configured retry attempts.\""
        ),
        (guide("service-job-retries"),),
        (
            SCHEDULING_RULES
            + "test_attempts_without_capacity_are_retried_without_using_an_attempt",
            USER_GUIDE_RULES
            + "test_an_attempt_without_sagemaker_capacity_is_retried_without_using_an_attempt",
        ),
        note=(
            "(emulated with the tag `quota.local/capacity-errors`); UNCONFIRMED: "
            "SageMaker's `FailureReason` text, and that AWS lists these attempts in "
            "`attempts` (the emulator keeps every one; AWS keeps only the latest failed "
            "training job)"
        ),
    ),
    Behaviour(
        (
            'Insufficient capacity: `statusReason` "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - '
            'Unable to provision requested compute resources"; time in `SCHEDULED` '
            '"accumulates ... for comparison against `maxTimeSeconds`"; after the time limit '
            '"Terminated by JobStateTimeLimit action due to reason: '
            'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"'
        ),
        (guide("sm_job_stuck_in_runnable_capacity"),),
        (
            SCHEDULING_RULES
            + "test_attempts_without_capacity_are_retried_without_using_an_attempt",
            SCHEDULING_RULES
            + "test_the_capacity_time_limit_counts_from_the_first_attempt_without_capacity",
        ),
        note=(
            "UNCONFIRMED: from when AWS counts (the emulator: the first such attempt's "
            "SCHEDULED time, RUNNABLE and SCHEDULED time alike)"
        ),
    ),
    Behaviour(
        (
            '"MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - Service environment(s) '
            'associated with the job queue cannot meet the capacity requirement of the job."'
        ),
        (guide("sm_job_stuck_in_runnable_misconfiguration"),),
        (
            SCHEDULING_RULES + "test_job_above_service_environment_keeps_se_max_reason",
            SERVER_JOBS + "test_stuck_job_carries_the_aws_misconfiguration_reason",
        ),
    ),
    Behaviour(
        (
            '"MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requirements exceed quota '
            'share capacity limits." (RESERVE, LEND)'
        ),
        (guide("sm_job_stuck_in_runnable_misconfiguration"),),
        (
            SCHEDULING_RULES + "test_job_above_lend_share_limit_keeps_share_limit_reason",
            SCHEDULING_RULES + "test_job_of_type_missing_from_share_keeps_share_limit_reason",
        ),
    ),
    Behaviour(
        (
            '"... Job requirements exceed quota share capacity limits and borrow limits." '
            "(LEND_AND_BORROW)"
        ),
        (guide("sm_job_stuck_in_runnable_misconfiguration"),),
        (SCHEDULING_RULES + "test_job_above_borrow_limit_keeps_borrow_limit_reason",),
    ),
    Behaviour(
        '"... Job requires borrowing that exceeds all configured borrowable capacity."',
        (guide("sm_job_stuck_in_runnable_misconfiguration"),),
        (SCHEDULING_RULES + "test_job_above_all_borrowable_capacity_keeps_borrowable_reason",),
    ),
    Behaviour(
        'After the time limit: "Terminated by JobStateTimeLimit action due to reason: `<reason>`"',
        (guide("sm_job_stuck_in_runnable_misconfiguration"),),
        (
            SERVER_JOBS + "test_time_limit_action_terminates_a_stuck_job",
            SCHEDULING_RULES + "test_runnable_time_limit_terminates_misconfigured_job",
        ),
    ),
    Behaviour(
        (
            '"For job queues connected to `SAGEMAKER_TRAINING` service environments, the only '
            'action you can use with `jobStateTimeLimitActions.action` is `TERMINATE`"'
        ),
        (guide("sm_job_stuck_in_runnable"),),
        (RESOURCE_RULES + "test_time_limit_action_on_sagemaker_training_is_terminate",),
    ),
    Behaviour(
        (
            'A `RUNNABLE` job "blocking the front of the queue" sends a Service job queue '
            'blocked event; "The same reason is also updated into the `statusReason` field" of '
            "ListServiceJobs and DescribeServiceJob"
        ),
        (guide("sm_job_stuck_in_runnable"),),
        (
            EVENTS + "test_a_misconfigured_runnable_job_sends_a_queue_blocked_event_in_aws_shape",
            SERVER_JOBS + "test_stuck_job_carries_the_aws_misconfiguration_reason",
        ),
        note=(
            "which reasons AWS counts as blocking is UNCONFIRMED (the emulator: the "
            "`MISCONFIGURATION:` ones)"
        ),
    ),
    Behaviour(
        'Quota shares: "A maximum of 20 can be attached to any job queue."',
        (guide("quota-shares"),),
        (SERVER_RESOURCES + "test_rejects_the_twenty_first_share",),
    ),
    Behaviour(
        (
            '"a quota share requires at least one capacity limit be provided and supports a '
            'maximum of 5 capacity limits"'
        ),
        (guide("quota-shares"),),
        (
            USER_GUIDE_RULES + "test_a_share_needs_at_least_one_capacity_limit",
            SERVER_RESOURCES + "test_rejects_more_than_five_capacity_limits",
        ),
    ),
    Behaviour(
        (
            "\"If a quota share's idle compute should be reserved for only its jobs, select "
            '`RESERVE`"; `LEND` lends idle compute; `LEND_AND_BORROW` lends and borrows'
        ),
        (guide("quota-shares"),),
        (TUTORIAL + "test_first_two_dispatch_the_second_borrowing_and_the_third_waits",),
    ),
    Behaviour(
        (
            '"The borrowLimit is applied uniformly across all capacity units." (200 borrows '
            '"up to 200% of its configured maxCapacity for each capacity unit")'
        ),
        (
            Source(
                "CloudFormation QuotaShareResourceSharingConfiguration",
                "https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-batch-quotashare-quotashareresourcesharingconfiguration.html",
            ),
        ),
        (
            DISPATCH + "test_borrow_limit_reached_is_reported",
            SCHEDULING_RULES + "test_job_above_borrow_limit_keeps_borrow_limit_reason",
        ),
    ),
    Behaviour(
        (
            'Quota shares are "virtual queues ... that the AWS Batch scheduler iterates '
            'between when scheduling"'
        ),
        (guide("create-quota-shares"),),
        (DISPATCH + "test_within_a_share_priority_then_submit_order",),
        note=(
            "the order in which AWS visits the shares is UNCONFIRMED "
            "(`SchedulerOptions.share_order`, "
            "`tests/scheduling/test_dispatch.py::test_least_usage_share_order_serves_the_emptier_share_first`)"
        ),
    ),
    Behaviour(
        (
            '"Quota management job queues require that all jobs specify a quota share at job '
            'submission."'
        ),
        (guide("submit-job-quota-share"),),
        (SERVER_JOBS + "test_rejects_submit_without_quota_share_name",),
    ),
    Behaviour(
        (
            '"A `preemptionConfiguration` can optionally be supplied to limit the number of '
            'preemption attempts before a job attempt enters `FAILED`."'
        ),
        (guide("submit-job-quota-share"),),
        (JOB_RULES + "test_preemption_retries_exhausted_terminate_the_job",),
    ),
    Behaviour(
        '"Quota management is the only AWS Batch scheduling algorithm to incorporate preemption"',
        (guide("preemption"),),
        (FIFO + "test_jobs_dispatch_in_submit_order_whatever_their_priority",),
    ),
    Behaviour(
        (
            '"AWS Batch stops a `SCHEDULED`, `STARTING`, or `RUNNING` job to create capacity '
            'for a `RUNNABLE` job"'
        ),
        (guide("preemption"),),
        (
            TUTORIAL + "test_lender_job_preempts_the_borrowing_job_back_to_runnable",
            DISPATCH + "test_delayed_preemption_keeps_capacity_until_completed",
        ),
    ),
    Behaviour(
        (
            '"Quota management uses cross-share preemption to restore borrowed capacity back '
            'to a quota share when jobs arrive."'
        ),
        (guide("preemption"), guide("quota-shares")),
        (TUTORIAL + "test_lender_job_preempts_the_borrowing_job_back_to_runnable",),
    ),
    Behaviour(
        (
            "\"Administrators lowering a quota share's capacity limits can also make "
            "`SCHEDULED`, `STARTING`, or `RUNNING` jobs within that quota share eligible for "
            'preemption"'
        ),
        (guide("preemption"),),
        (
            SERVER_JOBS + "test_lowering_a_share_limit_preempts_its_running_jobs",
            SCHEDULING_RULES + "test_lowering_share_limit_preempts_its_jobs",
        ),
    ),
    Behaviour(
        (
            'In-share preemption "allows higher priority `RUNNABLE` jobs to trigger '
            'preemptions of lower priority jobs within the same quota share"'
        ),
        (guide("preemption"),),
        (
            TUTORIAL + "test_raised_priority_preempts_inside_the_share",
            DISPATCH + "test_in_share_preemption_needs_strictly_higher_priority_and_enabled",
        ),
    ),
    Behaviour(
        (
            'AWS "considers the number and type of instances a job is borrowing, relative '
            "priorities of the jobs and the duration of the jobs, and applies a custom "
            'heuristic"'
        ),
        (guide("preemption"), guide("quota-shares")),
        (
            RECLAIM + "test_reclaim_takes_the_lowest_priority_job_of_the_borrowing_share",
            RECLAIM + "test_reclaim_relabels_the_victim_to_hold_the_lenders_instance",
            RECLAIM + "test_among_equal_priorities_the_shorter_run_is_reclaimed",
            DISPATCH
            + "test_default_victim_policy_prefers_borrowers_then_low_priority_then_fewest_jobs",
        ),
        note=(
            "a share borrows as a whole: its borrowed instances count on its lowest-priority, "
            "then shortest-running jobs, so a reclaim never makes the borrower preempt its own "
            "job in-share; UNCONFIRMED: the heuristic's weights (`ReclaimScope.JOB`: only jobs "
            "placed on the lender's instances, "
            f"`{RECLAIM}test_job_scope_keeps_the_earlier_choice_and_its_second_preemption`; "
            "`victim_policy` replaces the choice, "
            "`tests/scheduling/test_dispatch.py::test_custom_victim_policy_is_used`)"
        ),
    ),
    Behaviour(
        '"lower the priority of a `RUNNING` job (increasing likelihood of preemption)"',
        (guide("preemption"),),
        (DISPATCH + "test_lowering_a_running_job_priority_makes_it_the_victim",),
    ),
    Behaviour(
        (
            "Preempted jobs are requeued as `RUNNABLE` without limit by default; with "
            '`preemptionRetriesBeforeTermination` 0 "the job moves to `FAILED` on its first '
            'preemption"'
        ),
        (guide("preemption"),),
        (
            TUTORIAL + "test_lender_job_preempts_the_borrowing_job_back_to_runnable",
            SCHEDULING_RULES + "test_preemption_retries_zero_fails_on_first_preemption",
        ),
    ),
    Behaviour(
        (
            '"A sliding window of recent preemption attempts is stored on the job" and visible '
            "through DescribeServiceJob"
        ),
        (guide("preemption"),),
        (TUTORIAL + "test_lender_job_preempts_the_borrowing_job_back_to_runnable",),
        note="the window's size is UNCONFIRMED (the emulator: 5, `RECENT_PREEMPTED_ATTEMPTS`)",
    ),
    Behaviour(
        (
            '"If you disabled the service environment, associated job queues will stop '
            'processing new service job submissions until you re-enable it."'
        ),
        (guide("updating-service-environments"),),
        (
            RESOURCE_RULES + "test_a_disabled_environment_takes_no_new_jobs",
            RESOURCE_RULES + "test_a_disabled_environment_places_no_queued_job",
        ),
    ),
    Behaviour(
        (
            "Lowering a service environment's capacity limits terminates no `SCHEDULED`, "
            "`STARTING` or `RUNNING` job; new dispatches respect the new limit "
            "(docs/aws-semantics.md §2.1)"
        ),
        (guide("updating-service-environments"),),
        (DISPATCH + "test_lowering_the_service_environment_preempts_nothing_but_gates_dispatch",),
    ),
    Behaviour(
        '"The service environment updates immediately."',
        (guide("updating-service-environments"),),
        (SERVER_JOBS + "test_raising_environment_capacity_rechecks_a_waiting_job",),
    ),
    Behaviour(
        'A healthy quota-management queue: `ENABLED`, `VALID`, `statusReason` "JobQueue Healthy"',
        (guide("create-quota-management-resources"),),
        (SERVER_RESOURCES + "test_provisions_seed_demo_with_contract_names",),
        note=(
            "every resource is `VALID` at once, without `CREATING` (UNCONFIRMED how long AWS takes)"
        ),
    ),
    Behaviour(
        "Service quotas: at most 50 job queues",
        (guide("service_limits"),),
        (USER_GUIDE_RULES + "test_an_account_has_at_most_50_job_queues",),
    ),
    Behaviour(
        "At most 50 service environments",
        (guide("service_limits"),),
        (USER_GUIDE_RULES + "test_an_account_has_at_most_50_service_environments",),
    ),
    Behaviour(
        '"Maximum number of service environments for each job queue": 1',
        (guide("service_limits"),),
        (REGISTRY + "test_a_job_queue_needs_one_free_environment_and_a_quota_share_policy",),
    ),
    Behaviour(
        "At most 1 job queue for each quota-management-enabled service environment",
        (guide("service_limits"),),
        (SERVER_RESOURCES + "test_rejects_a_second_queue_on_the_same_environment",),
    ),
    Behaviour(
        "At most 20 quota shares for each quota-management job queue",
        (guide("service_limits"),),
        (SERVER_RESOURCES + "test_rejects_the_twenty_first_share",),
    ),
    Behaviour(
        '"Maximum size of SubmitServiceJob request": 30 KiB',
        (guide("service_limits"),),
        (USER_GUIDE_RULES + "test_a_submit_request_is_at_most_30_kib",),
        note="(measured as compact JSON; how AWS counts the bytes is UNCONFIRMED)",
    ),
    Behaviour(
        '"Maximum job service request payload size (for SubmitServiceJob API operations)": 10 KiB',
        (guide("service_limits"),),
        (USER_GUIDE_RULES + "test_a_payload_is_at_most_10_kib",),
    ),
    Behaviour(
        (
            '"Maximum number of transactions per second (TPS) for each account for '
            'SubmitServiceJob operations": 5'
        ),
        (guide("service_limits"),),
        (),
        note=(
            "UNCONFIRMED: the burst and refill of AWS's token bucket are not documented, "
            "so the emulator does not throttle by default; `--fault-rate` injects "
            "`ThrottlingException`, which botocore retries "
            "(`tests/emulator/test_server_protocol.py::test_injected_throttling_is_retried_by_botocore`)"
        ),
    ),
    Behaviour(
        '"Maximum number of attempts with retry strategy for a service job": 10',
        (guide("service_limits"),),
        (JOB_RULES + "test_retry_attempts_are_1_to_10",),
    ),
    Behaviour(
        '"Anytime that an existing service job changes states, an event is created."',
        (guide("service-job-events"),),
        (
            EVENTS + "test_state_changes_carry_the_queue_and_share_but_not_the_submission",
            DISPATCH + "test_every_state_change_is_an_event_with_its_previous_state",
        ),
    ),
    Behaviour(
        '"Events aren\'t created for the initial job submission."',
        (guide("service-job-events"),),
        (EVENTS + "test_state_changes_carry_the_queue_and_share_but_not_the_submission",),
    ),
    Behaviour(
        (
            '`detail-type` "Batch Service Job State Change", `source` "aws.batch", `resources` '
            "the service job's ARN; \"The detail section resembles the response that's "
            'returned from a DescribeServiceJob"; "The tags and serviceRequestPayload fields '
            'are not included in the event detail."'
        ),
        (guide("service-job-events"),),
        (
            EVENTS + "test_state_changes_carry_the_queue_and_share_but_not_the_submission",
            EVENTS + "test_the_dashboard_rule_logs_every_state_change_of_the_queue",
        ),
    ),
    Behaviour(
        (
            '"A started event is created when preemption is first triggered to reclaim '
            'borrowed capacity." (`status` still `RUNNING`, `statusReason` '
            '"PREEMPTION_IN_PROGRESS: Cross-share preemption triggered to reclaim borrowed '
            'capacity")'
        ),
        (guide("batch-service-job-preemption-events"),),
        (EVENTS + "test_a_preemption_emits_started_and_completed_in_aws_shape",),
    ),
    Behaviour(
        (
            '"A completed event is created when the preemption sequence finishes and includes '
            'a summary of the preempted attempts."'
        ),
        (guide("batch-service-job-preemption-events"),),
        (EVENTS + "test_a_preemption_emits_started_and_completed_in_aws_shape",),
        note=(
            "the `statusReason` texts of in-share and limit-lowering preemptions are "
            "UNCONFIRMED (AWS shows only the cross-share one)"
        ),
    ),
    Behaviour(
        (
            '"Anytime that AWS Batch detects a blocked queue, an event is created"; `detail` '
            "resembles DescribeServiceJob without `tags` and `serviceRequestPayload`"
        ),
        (guide("batch-service-job-queue-blocked-events"),),
        (
            EVENTS + "test_a_misconfigured_runnable_job_sends_a_queue_blocked_event_in_aws_shape",
            EVENTS
            + "test_a_waiting_job_made_misconfigured_by_an_update_sends_a_queue_blocked_event",
        ),
        note=(
            "UNCONFIRMED which reasons AWS counts as blocking, and whether a job that "
            "becomes misconfigured while RUNNABLE (a limit lowered) sends one: the "
            "emulator sends one for each new MISCONFIGURATION reason"
        ),
    ),
    Behaviour(
        '"All jobs in the queue are eventually terminated when you delete a job queue."',
        (Source("botocore `batch` `DeleteJobQueue`"),),
        (
            QUEUE_DELETION
            + "test_deleting_a_queue_with_shares_terminates_its_running_and_waiting_jobs",
        ),
        note=(
            "the delay, the text and the shares' fate are UNCONFIRMED (the old refusal: "
            "`tests/emulator/test_queue_deletion.py::test_the_old_refusal_is_an_option`)"
        ),
    ),
    Behaviour(
        (
            'AWS\'s sample helper skips what exists by `error.response["message"] == "Object '
            'already exists"`'
        ),
        (SAMPLE_HELPER,),
        (
            AWS_CLIENTS
            + "test_a_duplicate_environment_queue_or_policy_answers_exactly_object_already_exists",
        ),
    ),
    Behaviour(
        'The sample\'s duplicate quota share: a message containing "already exists"',
        (SAMPLE_HELPER,),
        (AWS_CLIENTS + "test_a_duplicate_share_says_already_exists",),
    ),
    Behaviour(
        (
            "The SDK's integration tests wait for a deleted share's DescribeQuotaShare error "
            'containing "does not exist", and for deleted queues and environments to describe '
            "as empty lists"
        ),
        (
            Source(
                "sagemaker-python-sdk integ tests",
                "https://github.com/aws/sagemaker-python-sdk/tree/master/sagemaker-train/tests/integ/train/aws_batch",
            ),
        ),
        (
            AWS_CLIENTS + "test_a_deleted_share_is_described_as_does_not_exist",
            AWS_CLIENTS + "test_deleted_queue_and_environment_describe_as_empty_lists",
        ),
    ),
    Behaviour(
        (
            "SageMaker DescribeTrainingJob of an unknown name: `ValidationException` "
            '"Requested resource not found."'
        ),
        (Source("aws/aws-sdk#165", "https://github.com/aws/aws-sdk/issues/165"),),
        (TRAINING_JOBS + "test_rejects_an_unknown_training_job_as_aws_does",),
    ),
)


TERMINATION = "tests/emulator/test_termination.py::"
MAX_RUNTIME = "tests/emulator/test_max_runtime.py::"
CORE_VIEWS = "tests/emulator/test_core_views.py::"
SCHEDULING_CORE: tuple[Behaviour, ...] = (
    Behaviour(
        (
            '"When you terminate a service job, AWS Batch stops the job and notifies the target '
            "service. For SageMaker Training jobs, this will stop the training job in SageMaker "
            'AI as well."'
        ),
        (
            guide("terminate-service-jobs"),
            Source(
                "SageMaker `StopTrainingJob`",
                "https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_StopTrainingJob.html",
            ),
        ),
        (
            TERMINATION + "test_terminate_service_jobs_dispatches_none_of_the_jobs_it_terminates",
            TERMINATION + "test_a_terminated_running_jobs_instance_is_placed_on_the_next_tick",
            SCHEDULING_RULES + "test_terminating_a_batch_dispatches_none_of_its_jobs",
        ),
        note=(
            "a request that terminates jobs places none: a bulk request ends its whole batch "
            "first, and a stopped job's instance goes to another job at the scheduler's next "
            "tick; UNCONFIRMED how long AWS reports the job before `FAILED` while SageMaker goes "
            "`Stopping` -> `Stopped` (the emulator: `FAILED` in the request, the instance free "
            "from the next tick)"
        ),
    ),
    Behaviour(
        (
            'SageMaker `MaxRuntimeInSeconds`: "if the job does not complete during this time, '
            'SageMaker ends the job"; `SecondaryStatus` `MaxRuntimeExceeded`: "The job stopped '
            'because it exceeded the maximum allowed runtime" (status `Stopped`), which Batch '
            'maps to `FAILED` ("Stopped / Stopped")'
        ),
        (
            Source(
                "SageMaker `StoppingCondition`",
                "https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_StoppingCondition.html",
            ),
            Source(
                "SageMaker `DescribeTrainingJob`",
                "https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeTrainingJob.html",
            ),
            guide("service-job-status"),
        ),
        (
            MAX_RUNTIME
            + "test_a_job_reaching_its_max_runtime_ends_failed_and_its_training_job_stopped",
            MAX_RUNTIME + "test_a_job_whose_work_ends_within_its_max_runtime_succeeds",
            SCHEDULING_RULES
            + "test_an_attempt_reaching_its_max_runtime_fails_stopped_by_sagemaker",
        ),
        note=(
            "the `statusReason` text is UNCONFIRMED (the emulator: `Received status from "
            "SageMaker: Training job stopped: MaxRuntimeExceeded - ...`); without the "
            "`quota.local/duration-seconds` tag a job trains until its max runtime stops it"
        ),
    ),
    Behaviour(
        (
            '`jobStateTimeLimitActions[].action`: "The action to take when a job is at the head '
            'of the job queue in the specified state for the specified period of time"'
        ),
        (Source("botocore `batch` `JobStateTimeLimitAction`"),),
        (
            CORE_VIEWS + "test_time_limits_end_blocked_jobs_head_first",
            CORE_VIEWS + "test_the_simulator_ends_blocked_jobs_head_first_as_the_emulator_does",
            SCHEDULING_RULES
            + "test_runnable_time_limits_end_blocked_jobs_head_first_one_at_a_time",
            SCHEDULING_RULES + "test_a_new_first_blocked_job_starts_its_own_clock",
        ),
        note=(
            "UNCONFIRMED which job is the head in a quota-managed queue (the emulator: the "
            "share's first misconfigured job in its order, its clock running from when it "
            "became that job)"
        ),
    ),
    Behaviour(
        (
            '`preemptionRetriesBeforeTermination`: "A job will be terminated when preemption '
            'retries have been exhausted."'
        ),
        (Source("botocore `batch` `ServiceJobPreemptionConfiguration`"), guide("preemption")),
        (
            CORE_VIEWS + "test_out_of_preemption_retries_it_is_terminated_preemptions_newest_first",
            SCHEDULING_RULES + "test_preemption_retries_zero_fails_on_first_preemption",
        ),
        note="`FAILED` with `isTerminated` true",
    ),
    Behaviour(
        (
            '`recentPreemptedAttempts`: "A list of the most recent preemption attempts"; '
            "AWS's sample helper reads element 0 as the most recent"
        ),
        (Source("botocore `batch` `ServiceJobPreemptionSummary`"), SAMPLE_HELPER),
        (CORE_VIEWS + "test_out_of_preemption_retries_it_is_terminated_preemptions_newest_first",),
        note="newest first; the window size (the emulator: 5) is UNCONFIRMED",
    ),
    Behaviour(
        (
            '`topCapacityUtilization`: "A list of the top capacity utilizations across quota '
            'shares" (fair share: "the top 20 shares with the highest capacity utilization, '
            'ordered by usage amount")'
        ),
        (Source("botocore `batch` `QuotaShareUtilizationDetail`"),),
        (
            CORE_VIEWS + "test_top_capacity_utilization_lists_the_most_used_share_first",
            SCHEDULING_RULES + "test_snapshot_lists_share_usage_most_used_first",
        ),
        note=(
            "most instances held first, ties in declared order; UNCONFIRMED how AWS weighs "
            "several instance types (the emulator: their sum)"
        ),
    ),
)
"""Issue 42's scheduling-core behaviours: they live in the core, so the simulator follows them."""

BEHAVIOURS = BEHAVIOURS + SCHEDULING_CORE


def sagemaker_member(member: str) -> Source:
    """A member of SageMaker's ``DescribeTrainingJob`` output (botocore's model)."""
    return Source(f"botocore `sagemaker` `DescribeTrainingJobResponse.{member}`")


EVENT_STRUCTURE = Source(
    "EventBridge event structure",
    "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-events-structure.html",
)
SERVICE_QUOTAS_ARNS = Source(
    "Service Quotas resource types",
    "https://docs.aws.amazon.com/service-authorization/latest/reference/list_servicequotas.html",
)

FIELDS_AND_SERVICES: tuple[Behaviour, ...] = (
    Behaviour(
        (
            '`earliestTimeAtPosition`: "The Unix timestamp (in milliseconds) for when the job '
            'transitioned to its current position in the job queue."'
        ),
        (Source("botocore `batch` `FrontOfQueueJobSummary.earliestTimeAtPosition`"),),
        (
            JOB_RULES + "test_earliest_time_at_position_is_when_the_job_moved_to_its_place",
            POSITIONS + "test_earliest_time_at_position_changes_when_the_job_moves_up",
            POSITIONS + "test_earliest_time_at_position_changes_when_a_job_is_put_ahead",
        ),
        note=(
            "(its place in `frontOfQueue`'s order; in `frontOfQuotaShares`, since it heads "
            "its share)"
        ),
    ),
    Behaviour(
        (
            '`SUBMITTED`: "has not yet been evaluated by the scheduler ... If there are no '
            'dependencies, the job is moved to `RUNNABLE`" (then `SCHEDULED` when capacity is '
            "available): DescribeServiceJob sees each state"
        ),
        (guide("job_states"), guide("service-job-status")),
        (
            FIELDS + "test_a_job_observed_by_describe_passes_through_runnable",
            DISPATCH_TICK
            + "test_a_job_is_submitted_then_runnable_for_a_tick_then_dispatched_by_priority",
            POSITIONS + "test_a_new_job_is_runnable_for_its_dispatch_delay_even_with_capacity_free",
        ),
        note=(
            "UNCONFIRMED: how long AWS leaves a job `RUNNABLE` with capacity free; the "
            "emulator: one tick (`SchedulerOptions.dispatch_delay_s`; none with "
            '`dispatch="immediate"`)'
        ),
    ),
    Behaviour(
        (
            '"A Service job can transition from `SCHEDULED` back to `RUNNABLE` state when they '
            'encounter capacity constraints."'
        ),
        (Source("botocore `batch` `LatestServiceJobAttempt`"),),
        (FIELDS + "test_a_job_without_capacity_goes_from_scheduled_back_to_runnable",),
    ),
    Behaviour(
        (
            "An attempt's `startedAt` / `stoppedAt`: \"for when the service job attempt was "
            'started" / "stopped running"'
        ),
        (Source("botocore `batch` `ServiceJobAttemptDetail`"),),
        (FIELDS + "test_an_attempts_times_are_when_it_started_and_stopped_running",),
    ),
    Behaviour(
        "`serviceResourceId.name`: `TrainingJobArn`, the only value of `ServiceResourceIdName`",
        (Source("botocore `batch` `ServiceResourceId`, `ServiceResourceIdName`"),),
        (FIELDS + "test_an_attempts_resource_is_named_by_its_training_job_arn",),
    ),
    Behaviour(
        (
            'ListServiceJobs `isTerminated`: "whether a termination request has been accepted '
            'for the service job. This field is only present when the value is true."'
        ),
        (Source("botocore `batch` `ServiceJobSummary.isTerminated`"),),
        (FIELDS + "test_a_summary_says_is_terminated_only_when_true",),
    ),
    Behaviour(
        (
            'GetJobQueueSnapshot `lastUpdatedAt`: "for when each of the first 100 `RUNNABLE` '
            'jobs were last updated", "for when the queue utilization information was last '
            'updated"'
        ),
        (Source("botocore `batch` `FrontOfQueueDetail`, `QueueSnapshotUtilizationDetail`"),),
        (FIELDS + "test_a_snapshots_last_updated_at_is_the_emulators_now",),
        note="(the emulator computes the snapshot when asked: its clock's now)",
    ),
    Behaviour(
        (
            '`TrainingStartTime`: "You are billed for the time interval between this time and '
            "the value of TrainingEndTime. The start time in CloudWatch Logs might be later "
            '... due to the time it takes to download the training data"'
        ),
        (sagemaker_member("TrainingStartTime"),),
        (FIELDS + "test_training_start_is_before_the_download_and_end_is_the_attempts_stop",),
        note=(
            "(when the attempt's instances were acquired: Batch `STARTING`, SageMaker "
            "`Downloading`)"
        ),
    ),
    Behaviour(
        (
            '`TrainingEndTime`: "For successful jobs and stopped jobs, this is the time after '
            'model artifacts are uploaded."'
        ),
        (sagemaker_member("TrainingEndTime"),),
        (FIELDS + "test_training_start_is_before_the_download_and_end_is_the_attempts_stop",),
        note="(the attempt's `stoppedAt`)",
    ),
    Behaviour(
        (
            '`BillableTimeInSeconds`: "Billable time refers to the absolute wall-clock time." '
            "(`BillableTimeInSeconds * InstanceCount` is the compute SageMaker bills)"
        ),
        (sagemaker_member("BillableTimeInSeconds"),),
        (FIELDS + "test_billable_time_is_the_wall_clock_from_training_start_to_end",),
        note="(on demand: equal to `TrainingTimeInSeconds`; the emulator runs no Spot training)",
    ),
    Behaviour(
        '`TrainingTimeInSeconds`: "The training time in seconds." (reported once the job ended)',
        (sagemaker_member("TrainingTimeInSeconds"),),
        (
            FIELDS + "test_billable_time_is_the_wall_clock_from_training_start_to_end",
            FIELDS + "test_training_and_billable_time_are_reported_once_the_job_ended",
        ),
        note="UNCONFIRMED: whether SageMaker reports it while a job runs (the emulator: no)",
    ),
    Behaviour(
        (
            '`SecondaryStatusTransitions`: "A history of all of the secondary statuses that the '
            'training job has transitioned through."'
        ),
        (sagemaker_member("SecondaryStatusTransitions"),),
        (
            FIELDS + "test_secondary_status_transitions_are_the_history_of_the_attempt",
            FIELDS + "test_a_training_job_being_preempted_is_stopping_since_the_preemption_started",
        ),
        note=(
            "(`Pending`, `Downloading`, `Training`, `Stopping` while a preemption stops it, "
            "then how it ended; each `EndTime` the next `StartTime`)"
        ),
    ),
    Behaviour(
        (
            '`LastModifiedTime`: "A timestamp that indicates when the status of the training '
            'job was last modified."'
        ),
        (sagemaker_member("LastModifiedTime"),),
        (FIELDS + "test_last_modified_time_is_when_the_status_last_changed",),
    ),
    Behaviour(
        (
            'Every event\'s `version`: "By default, this is set to 0 (zero) in all events."; '
            '`id`: "A Version 4 UUID that\'s generated for every event."'
        ),
        (EVENT_STRUCTURE,),
        (FIELDS + "test_every_event_has_version_0_and_its_own_version_4_uuid",),
    ),
    Behaviour(
        (
            '`account`: "The 12-digit number identifying an AWS account."; `region`: '
            '"Identifies the AWS Region where the event originated."'
        ),
        (EVENT_STRUCTURE,),
        (FIELDS + "test_every_event_names_its_12_digit_account_and_region",),
    ),
    Behaviour(
        (
            '`time`: "The event timestamp, which can be specified by the service originating '
            'the event."'
        ),
        (EVENT_STRUCTURE,),
        (FIELDS + "test_an_events_time_is_when_the_job_changed_state",),
        note="(the state change's time, `yyyy-mm-ddThh:mm:ssZ` as in AWS's examples)",
    ),
    Behaviour(
        (
            "SSM GetParameters `InvalidParameters`: \"A list of parameters that aren't "
            "formatted correctly or don't run during an execution.\""
        ),
        (Source("botocore `ssm` `GetParametersResult.InvalidParameters`"),),
        (FIELDS + "test_get_parameters_lists_the_names_it_did_not_find",),
        note="(a name not found is listed there, not an error)",
    ),
    Behaviour(
        (
            'SSM GetParameter of an unknown name: `ParameterNotFound`, "The parameter '
            "couldn't be found.\""
        ),
        (Source("botocore `ssm` `ParameterNotFound`"),),
        (FIELDS + "test_get_parameter_of_an_unknown_name_is_parameter_not_found",),
    ),
    Behaviour(
        (
            "Service Quotas `QuotaArn`: `arn:${Partition}:servicequotas:${Region}:${Account}:"
            "${ServiceCode}/${QuotaCode}`; SageMaker's training quotas are named "
            '"`<instance type>` for training job usage"'
        ),
        (SERVICE_QUOTAS_ARNS, Source("botocore `service-quotas` `ServiceQuota.QuotaArn`")),
        (FIELDS + "test_a_quotas_arn_is_servicequotas_service_code_and_quota_code",),
    ),
    Behaviour(
        (
            'GetServiceQuota of an unknown code: `NoSuchResourceException`, "The specified '
            'resource does not exist."'
        ),
        (Source("botocore `service-quotas` `NoSuchResourceException`"),),
        (FIELDS + "test_get_service_quota_of_an_unknown_code_is_no_such_resource",),
    ),
)
"""Issue 42, remaining part: fields of what the emulator serves besides Batch's own rules."""

BEHAVIOURS = BEHAVIOURS + FIELDS_AND_SERVICES


def markdown_table() -> str:
    """The behaviours as docs/emulator.md lists them."""
    lines = [
        "| Behaviour (AWS's words, short) | Source | Test, or UNCONFIRMED and why |",
        "|---|---|---|",
    ]
    for row in BEHAVIOURS:
        source = ", ".join(source.markdown() for source in row.sources)
        lines.append(f"| {row.behaviour} | {source} | {row.checked()} |")
    return "\n".join(lines)
