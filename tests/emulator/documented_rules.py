"""Every rule sentence found in botocore's documentation of the served operations, with the test
showing the emulator keeps it. ``tools/gen_doc_tables.py`` writes the table into docs/emulator.md
(``markdown_table``; ``tests/unit/test_doc_tables.py`` fails while the page differs).

``source`` is ``Operation`` (the operation's documentation), ``Operation.member.path`` (an input
member; ``[]`` steps into list items) or ``Shape:Name.member`` (a shape's member), of the
``service`` (Batch unless said). The sentences are checked against the installed botocore; the
tests against the test files.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    source: str
    sentence: str
    test: str
    """``file.py::test_name`` (a parametrized case as ``test_name[id]``), under tests/."""
    note: str = ""
    service: str = "batch"

    @property
    def where(self) -> str:
        return self.source if self.service == "batch" else f"{self.service}:{self.source}"


R = "emulator/test_rules_resources.py::"
J = "emulator/test_rules_service_jobs.py::"
S = "emulator/test_rules_ssm.py::"
NAME_RULE = (
    "It can contain uppercase and lowercase letters, numbers, hyphens (-), and underscores (_)."
)

A = "emulator/test_aws_clients.py::"
G = "emulator/test_user_guide_rules.py::"
RULES: tuple[Rule, ...] = (
    # --- names
    Rule(
        "CreateSchedulingPolicy.name",
        f"It can be up to 128 letters long. {NAME_RULE}",
        R + "test_name_rule[CreateSchedulingPolicy.name]",
    ),
    Rule(
        "CreateServiceEnvironment.serviceEnvironmentName",
        "It can be up to 128 characters long and can contain letters, numbers, hyphens (-), "
        "and underscores (_).",
        R + "test_name_rule[CreateServiceEnvironment.serviceEnvironmentName]",
    ),
    Rule(
        "CreateJobQueue.jobQueueName",
        f"It can be up to 128 letters long. {NAME_RULE}",
        R + "test_name_rule[CreateJobQueue.jobQueueName]",
    ),
    Rule(
        "CreateQuotaShare.quotaShareName",
        f"It can be up to 128 characters long. {NAME_RULE}",
        R + "test_name_rule[CreateQuotaShare.quotaShareName]",
    ),
    Rule(
        "SubmitServiceJob.jobName",
        f"It can be up to 128 characters long. {NAME_RULE}",
        R + "test_name_rule[SubmitServiceJob.jobName]",
    ),
    # --- scheduling policies
    Rule(
        "CreateSchedulingPolicy.quotaSharePolicy",
        "Only one of fairsharePolicy or quotaSharePolicy can be set.",
        R + "test_rejects_a_policy_with_both_kinds",
    ),
    Rule(
        "UpdateSchedulingPolicy.quotaSharePolicy",
        "Once set during creation, a quotaSharePolicy cannot be removed or changed to a "
        "fairsharePolicy.",
        "emulator/test_server_resources.py::test_rejects_switching_a_quota_share_policy_to_fair_share",
    ),
    Rule(
        "UpdateSchedulingPolicy.fairsharePolicy",
        "Once set during creation, a fairsharePolicy cannot be removed or changed to a "
        "quotaSharePolicy.",
        R + "test_rejects_switching_a_fair_share_policy_to_quota_shares",
    ),
    Rule(
        "CreateSchedulingPolicy.quotaSharePolicy.idleResourceAssignmentStrategy",
        "Currently, only FIFO is supported.",
        "emulator/test_model_constraints.py::test_refuses_each_constraint_just_outside"
        "[CreateSchedulingPolicy:quotaSharePolicy.idleResourceAssignmentStrategy:enum]",
    ),
    Rule(
        "CreateSchedulingPolicy.fairsharePolicy.shareDecaySeconds",
        "The maximum supported value is 604800 (1 week).",
        R + "test_fair_share_policy_rule[shareDecaySeconds]",
    ),
    Rule(
        "CreateSchedulingPolicy.fairsharePolicy.computeReservation",
        "The minimum value is 0 and the maximum value is 99.",
        R + "test_fair_share_policy_rule[computeReservation]",
    ),
    Rule(
        "CreateSchedulingPolicy.fairsharePolicy.shareDistribution[].shareIdentifier",
        "The string is limited to 255 alphanumeric characters, and can be followed by an "
        "asterisk (*).",
        R + "test_fair_share_policy_rule[shareIdentifier]",
    ),
    Rule(
        "CreateSchedulingPolicy.fairsharePolicy.shareDistribution[].shareIdentifier",
        "The list of share identifiers in a fair-share policy can't overlap.",
        R + "test_fair_share_policy_rule[overlap]",
    ),
    Rule(
        "CreateSchedulingPolicy.fairsharePolicy.shareDistribution[].weightFactor",
        "The smallest supported value is 0.0001, and the largest supported value is 999.9999.",
        R + "test_fair_share_policy_rule[weightFactor]",
    ),
    Rule(
        "DescribeSchedulingPolicies.arns",
        "A list of up to 100 scheduling policy Amazon Resource Name (ARN) entries.",
        R + "test_rejects_describing_more_than_100_policies",
    ),
    Rule(
        "DeleteSchedulingPolicy",
        "You can't delete a scheduling policy that's used in any job queues.",
        R + "test_rejects_deleting_a_policy_a_queue_uses",
    ),
    # --- service environments
    Rule(
        "CreateServiceEnvironment.capacityLimits[].capacityUnit",
        "For SAGEMAKER_TRAINING jobs in a quota management enabled service environment, specify "
        "the instance type (for example, ml.m5.large).",
        R + "test_rejects_num_instances_as_a_quota_capacity_unit",
    ),
    Rule(
        "CreateServiceEnvironment.state",
        "The default value is ENABLED.",
        R + "test_a_new_environment_is_enabled_by_default",
    ),
    Rule(
        "UpdateServiceEnvironment",
        "You can update the state of a service environment from ENABLED to DISABLED to prevent "
        "new service jobs from being placed in the service environment.",
        R + "test_a_disabled_environment_places_no_queued_job",
        "Queued jobs stay RUNNABLE and placed ones run on; submits to its queue are refused "
        "too (test_a_disabled_environment_takes_no_new_jobs; UNCONFIRMED).",
    ),
    Rule(
        "DeleteServiceEnvironment",
        "Before you can delete a service environment, you must first set its state to DISABLED "
        "with the UpdateServiceEnvironment API operation and disassociate it from any job queues "
        "with the UpdateJobQueue API operation.",
        R + "test_rejects_deleting_an_environment_enabled_or_in_use",
    ),
    # --- job queues
    Rule(
        "CreateJobQueue.state",
        "If the job queue state is DISABLED, new jobs can't be added to the queue, but jobs "
        "already in the queue can finish.",
        R + "test_a_disabled_queue_takes_no_new_jobs_but_runs_its_own",
    ),
    Rule(
        "UpdateJobQueue.schedulingPolicyArn",
        "Once a job queue is created, the fair-share scheduling policy can be replaced but not "
        "removed.",
        R + "test_a_queue_policy_can_be_replaced_but_not_removed",
        "A quota-managed queue's policy is a quota-share policy; the same holds for it.",
    ),
    Rule(
        "CreateJobQueue.serviceEnvironmentOrder",
        "A job queue can't have both a serviceEnvironmentOrder and a computeEnvironmentOrder "
        "field.",
        R + "test_rejects_a_queue_with_service_and_compute_environments",
    ),
    Rule(
        "SubmitServiceJob.jobQueue",
        "The job queue must have the type SAGEMAKER_TRAINING.",
        R + "test_rejects_a_queue_that_is_not_sagemaker_training",
        "The emulator creates SAGEMAKER_TRAINING queues only, so every queue a job can name is "
        "one.",
    ),
    Rule(
        "CreateJobQueue.jobStateTimeLimitActions",
        "(Note: The minimum value for maxTimeSeconds is 600 (10 minutes) and its maximum value "
        "is 86,400 (24 hours).)",
        R + "test_time_limit_is_ten_minutes_to_a_day",
    ),
    Rule(
        "CreateJobQueue.jobStateTimeLimitActions[].action",
        "For job queues connected to a SAGEMAKER_TRAINING service environment, the only "
        "supported value is TERMINATE, which will terminate the job.",
        R + "test_time_limit_action_on_sagemaker_training_is_terminate",
    ),
    Rule(
        "CreateJobQueue.jobStateTimeLimitActions[].state",
        "The only supported value is RUNNABLE.",
        "emulator/test_model_constraints.py::test_refuses_each_constraint_just_outside"
        "[CreateJobQueue:jobStateTimeLimitActions[0].state:enum]",
    ),
    Rule(
        "DescribeJobQueues.jobQueues",
        "A list of up to 100 queue names or full queue Amazon Resource Name (ARN) entries.",
        R + "test_rejects_describing_more_than_100_queues",
    ),
    Rule(
        "DeleteJobQueue",
        "You must first disable submissions for a queue with the UpdateJobQueue operation.",
        "emulator/test_server_resources.py::test_rejects_deleting_an_enabled_queue",
    ),
    Rule(
        "DeleteJobQueue",
        "All jobs in the queue are eventually terminated when you delete a job queue.",
        "emulator/test_queue_deletion.py::"
        "test_deleting_a_queue_with_shares_terminates_its_running_and_waiting_jobs",
        "At once, FAILED with statusReason 'Job queue deleted: all jobs in the queue are "
        "terminated' (UNCONFIRMED: the delay and the text); the queue's quota shares are "
        "deleted with it (UNCONFIRMED; Registry(refuse_queue_with_shares=True) refuses instead).",
    ),
    # --- quota shares
    Rule(
        "CreateQuotaShare.resourceSharingConfiguration.borrowLimit",
        "borrowLimit can only be applied to quota shares with a strategy of LEND_AND_BORROW.",
        "emulator/test_server_resources.py::test_rejects_borrow_limit_without_lend_and_borrow",
    ),
    Rule(
        "CreateQuotaShare.resourceSharingConfiguration.borrowLimit",
        "The default borrowLimit is -1, which indicates unlimited borrowing.",
        R + "test_borrow_limit_defaults_to_unlimited",
    ),
    Rule(
        "CreateQuotaShare.state",
        "If the quota share is DISABLED, new jobs won't be accepted but jobs already submitted "
        "can finish.",
        R + "test_a_disabled_share_takes_no_new_jobs_but_runs_its_own",
    ),
    Rule(
        "CreateQuotaShare.state",
        "The default state is ENABLED.",
        R + "test_a_new_share_is_enabled_by_default",
    ),
    Rule(
        "DeleteQuotaShare",
        "You must first disable submissions for the share by updating the state to DISABLED "
        "using the UpdateQuotaShare operation.",
        "emulator/test_server_resources.py::test_rejects_deleting_an_enabled_share",
    ),
    Rule(
        "DeleteQuotaShare",
        "All jobs in the share are eventually terminated when you delete a quota share.",
        "emulator/test_server_jobs.py::test_deleting_a_share_terminates_its_jobs",
    ),
    # --- tags
    Rule(
        "TagResource",
        "If existing tags on a resource aren't specified in the request parameters, they aren't "
        "changed.",
        R + "test_tagging_leaves_other_tags_unchanged",
    ),
    Rule(
        "TagResource",
        "When a resource is deleted, the tags that are associated with that resource are "
        "deleted as well.",
        R + "test_deleting_a_resource_deletes_its_tags",
    ),
    # --- pagination
    *(
        Rule(
            f"{operation}.maxResults",
            "This value can be between 1 and 100.",
            R + f"test_max_results_is_1_to_100[{operation}]",
        )
        for operation in (
            "ListServiceJobs",
            "ListQuotaShares",
            "ListSchedulingPolicies",
            "DescribeJobQueues",
            "DescribeServiceEnvironments",
        )
    ),
    # --- submitting
    Rule(
        "SubmitServiceJob.jobQueue",
        "You can specify either the name or the ARN of the queue.",
        J + "test_submit_takes_the_queue_name_or_arn",
    ),
    Rule(
        "SubmitServiceJob.retryStrategy.attempts",
        "You can specify between 1 and 10 attempts.",
        J + "test_retry_attempts_are_1_to_10",
    ),
    Rule(
        "SubmitServiceJob.schedulingPriority",
        "Valid values are integers between 0 and 9999.",
        "emulator/test_server_jobs.py::test_rejects_priority_out_of_range",
    ),
    Rule(
        "UpdateServiceJob.schedulingPriority",
        "The minimum supported value is 0 and the maximum supported value is 9999.",
        J + "test_update_priority_is_0_to_9999",
    ),
    Rule(
        "SubmitServiceJob.serviceRequestPayload",
        "The request, in JSON, for the service that the SubmitServiceJob operation is queueing.",
        J + "test_rejects_a_payload_that_is_not_json",
    ),
    Rule(
        "SubmitServiceJob.serviceRequestPayload",
        "The request, in JSON, for the service that the SubmitServiceJob operation is queueing.",
        "emulator/test_payload_passthrough.py::"
        "test_an_unschedulable_payload_fails_the_job_not_the_submit[no ResourceConfig]",
        "Passed through without validation (docs/aws-semantics.md §2.2): unknown and missing "
        "SageMaker fields are accepted; a payload without a schedulable ResourceConfig "
        "(instance type and count) is accepted and its job FAILS at once, statusReason "
        "'Received status from SageMaker:ValidationException: <field>: <problem>' (UNCONFIRMED: "
        "when and with what text AWS fails it).",
    ),
    Rule(
        "SubmitServiceJob.shareIdentifier",
        "Don't specify this parameter if the job queue doesn't have a fair-share scheduling "
        "policy.",
        "emulator/test_server_jobs.py::test_rejects_share_identifier_on_a_quota_managed_queue",
    ),
    Rule(
        "SubmitServiceJob.quotaShareName",
        "If the job queue has a quota share scheduling policy, then this parameter must be "
        "specified.",
        "emulator/test_server_jobs.py::test_rejects_submit_without_quota_share_name",
    ),
    Rule(
        "SubmitServiceJob.preemptionConfiguration.preemptionRetriesBeforeTermination",
        "A job will be terminated when preemption retries have been exhausted.",
        J + "test_preemption_retries_exhausted_terminate_the_job",
    ),
    Rule(
        "SubmitServiceJob.preemptionConfiguration.preemptionRetriesBeforeTermination",
        "If this field is unset, preempted jobs will be requeued an unlimited number of times.",
        "emulator/test_server_tutorial.py::test_lender_job_preempts_the_borrowing_job_back_to_runnable",
    ),
    Rule(
        "SubmitServiceJob.timeoutConfig.attemptDurationSeconds",
        "After this time is reached, Batch terminates the service job attempt.",
        J + "test_attempt_duration_ends_the_attempt",
    ),
    Rule(
        "SubmitServiceJob.clientToken",
        "If this parameter is specified and two submit requests with identical payloads and "
        "clientTokens are received, these requests are considered the same request and the "
        "second request is rejected.",
        "emulator/test_server_jobs.py::test_rejects_an_identical_request_with_a_used_client_token",
        "The emulator refuses the second request with ClientException (HTTP 400; the exact code "
        "and message are UNCONFIRMED) and creates no job; the same token with another request is "
        "refused too. `--client-token-mode replay` answers it with the first job's ids instead.",
    ),
    # --- evaluateOnExit
    Rule(
        "SubmitServiceJob.retryStrategy.evaluateOnExit[].onStatusReason",
        "The pattern can contain up to 512 characters and can contain all printable characters.",
        J + "test_exit_pattern_is_up_to_512_printable_characters",
    ),
    Rule(
        "SubmitServiceJob.retryStrategy.evaluateOnExit[].onStatusReason",
        "It can optionally end with an asterisk (*) so that only the start of the string needs "
        "to be an exact match.",
        J + "test_exit_pattern_ending_with_a_star_matches_the_start",
    ),
    Rule(
        "SubmitServiceJob.retryStrategy.evaluateOnExit[].onStatusReason",
        "Contains a glob pattern to match against the StatusReason returned for a job.",
        J + "test_exit_pattern_without_a_star_matches_the_whole_reason",
        "Only a final * is a wildcard; other characters, * included, match themselves.",
    ),
    Rule(
        "Shape:RetryStrategy.evaluateOnExit",
        "If none of the listed conditions match, then the job is retried.",
        J + "test_first_matching_rule_decides_and_no_match_retries",
        "Documented for container jobs' RetryStrategy; the emulator applies it to service jobs "
        "too (UNCONFIRMED), the first matching entry deciding.",
    ),
    # --- terminating
    Rule(
        "TerminateServiceJob.reason",
        "This message is returned by DescribeServiceJob operations on the service job.",
        J + "test_terminate_reason_is_what_describe_returns",
    ),
    Rule(
        "TerminateServiceJobs.jobs",
        "An array of up to 50 service job IDs of the service jobs to terminate.",
        J + "test_rejects_terminating_more_than_50_jobs",
    ),
    Rule(
        "TerminateServiceJobs",
        "Service jobs that can't be found are treated as successfully processed.",
        "emulator/test_server_jobs.py::test_terminate_many_counts_unknown_ids_as_successful",
    ),
    Rule(
        "Shape:TerminateServiceJobsErrorDetail.code",
        "ValidationException \u2013 A service job identifier in the request is malformed or isn't "
        "valid.",
        "emulator/test_server_jobs.py::"
        "test_terminate_many_reports_a_malformed_id_as_validation_exception",
    ),
    # --- listing
    Rule(
        "ListServiceJobs.filters",
        "Only one filter can be used at a time.",
        J + "test_only_one_filter_at_a_time",
    ),
    Rule(
        "ListServiceJobs.jobStatus",
        "If the filters parameter is specified, the jobStatus parameter is ignored and jobs with "
        "any status are returned.",
        J + "test_a_name_or_time_filter_ignores_the_status",
    ),
    Rule(
        "ListServiceJobs.jobStatus",
        "The exceptions are the SHARE_IDENTIFIER filter and QUOTA_SHARE_NAME filter, which can "
        "be used with jobStatus.",
        "emulator/test_server_jobs.py::test_lists_by_quota_share_and_status_with_pagination",
    ),
    Rule(
        "ListServiceJobs.jobStatus",
        "If you don't specify a status, only RUNNING jobs are returned.",
        "emulator/test_server_tutorial.py::test_jobs_finish_after_their_duration_and_list_newest_first",
    ),
    Rule(
        "ListServiceJobs.filters",
        "The results are sorted by the createdAt field, with the most recent jobs being first.",
        "emulator/test_server_tutorial.py::test_jobs_finish_after_their_duration_and_list_newest_first",
    ),
    Rule(
        "ListServiceJobs.filters",
        "The value of the filter is a case-insensitive match for the job name.",
        J + "test_job_name_filter_is_case_insensitive",
    ),
    Rule(
        "ListServiceJobs.filters",
        "If the value ends with an asterisk (*), the filter matches any job name that begins "
        "with the string before the '*'.",
        J + "test_job_name_filter_ending_with_a_star_matches_the_start",
    ),
    Rule(
        "ListServiceJobs.filters",
        "When the JOB_NAME filter is used, the results are grouped by the job name and version.",
        J + "test_job_name_filter_groups_by_name",
        "Service jobs have no version; groups come in name order, newest first inside "
        "(UNCONFIRMED), an order a job submitted between two pages does not change.",
    ),
    Rule(
        "ListServiceJobs.filters",
        "The value is a string representation of the number of milliseconds since 00:00:00 UTC "
        "(midnight) on January 1, 1970.",
        J + "test_time_filters_take_epoch_milliseconds",
        "Anything else is a ClientException naming filters[0].values[0] "
        "(test_no_server_errors.py::test_rejects_a_malformed_created_at_filter_naming_the_field).",
    ),
    Rule(
        "ListServiceJobs.filters[].name",
        "Filter names are case sensitive.",
        J + "test_filter_names_are_case_sensitive",
    ),
    # --- snapshot
    Rule(
        "GetJobQueueSnapshot",
        "The first 100 RUNNABLE jobs in the job queue are listed in order of dispatch.",
        J + "test_snapshot_lists_the_first_100_runnable_jobs_and_each_shares_first",
    ),
    Rule(
        "GetJobQueueSnapshot",
        "For job queues with an attached quota-share policy, the first RUNNABLE job in each "
        "quota share is also listed.",
        J + "test_snapshot_lists_the_first_100_runnable_jobs_and_each_shares_first",
    ),
    # --- SSM parameter reads
    *(
        Rule(
            operation,
            "The service removes any spaces specified for the beginning or end of a parameter "
            "name.",
            S + "test_spaces_around_a_name_are_removed",
            service="ssm",
        )
        for operation in ("GetParameter", "GetParameters", "GetParametersByPath")
    ),
    *(
        Rule(
            operation,
            "If the specified name for a parameter contains spaces between characters, the "
            "request fails with a ValidationException error.",
            S + "test_rejects_spaces_inside_a_name",
            service="ssm",
        )
        for operation in ("GetParameter", "GetParameters", "GetParametersByPath")
    ),
    Rule(
        "GetParameter.Name",
        "The name or Amazon Resource Name (ARN) of the parameter that you want to query.",
        S + "test_a_parameter_is_found_by_its_arn",
        service="ssm",
    ),
    Rule(
        "GetParameter.Name",
        'To query by parameter version, use "Name": "name:version".',
        S + "test_a_version_selector_picks_the_version",
        "Every parameter is version 1 and has no label: another version is "
        "ParameterVersionNotFound, a label ParameterNotFound (UNCONFIRMED).",
        service="ssm",
    ),
    Rule(
        "GetParameters.Names",
        "The results for GetParameters requests are listed in alphabetical order in query "
        "responses.",
        S + "test_get_parameters_lists_alphabetically",
        service="ssm",
    ),
    Rule(
        "GetParametersByPath.Path",
        "Hierarchies start with a forward slash (/).",
        S + "test_rejects_a_path_that_is_not_a_hierarchy[quota/seed-demo]",
        service="ssm",
    ),
    Rule(
        "GetParametersByPath.Path",
        "A parameter name hierarchy can have a maximum of 15 levels.",
        S + "test_rejects_a_path_that_is_not_a_hierarchy[/l/l/l/l/l/l/l/l/l/l/l/l/l/l/l/l]",
        service="ssm",
    ),
    Rule(
        "GetParametersByPath.ParameterFilters",
        "The following Key values are supported for GetParametersByPath: Type, KeyId, and Label.",
        S + "test_path_filters_by_type_key_id_and_label",
        service="ssm",
    ),
    Rule(
        "GetParametersByPath.ParameterFilters",
        "The following Key values aren't supported for GetParametersByPath: tag, DataType, "
        "Name, Path, and Tier.",
        S + "test_rejects_path_filters_it_does_not_support[Name]",
        service="ssm",
    ),
    # --- what AWS's own clients rely on; queues without quota management
    Rule(
        "Shape:EvaluateOnExit.action",
        "The values aren't case sensitive.",
        A + "test_evaluate_on_exit_actions_are_case_insensitive",
        "Documented for container jobs' EvaluateOnExit; the emulator reads service jobs' actions "
        "the same way (UNCONFIRMED), as the SageMaker SDK's integration test sends Retry.",
    ),
    Rule(
        "Shape:CapacityLimit.capacityUnit",
        "Otherwise, use NUM_INSTANCES.",
        A + "test_the_fifo_set_up_is_valid_and_enabled_without_a_policy",
    ),
    Rule(
        "Shape:CapacityLimit.maxCapacity",
        "For other service environments, this value represents the maximum quantity of all "
        "resources that can be allocated to service jobs.",
        A + "test_fifo_jobs_dispatch_in_submit_order_within_num_instances",
    ),
    Rule(
        "Shape:CapacityLimit.maxCapacity",
        "If you run 5 SageMaker Training jobs that each use 10 instances, a subsequent job "
        "requiring 10 instances waits in the queue until capacity is available.",
        A + "test_fifo_jobs_dispatch_in_submit_order_within_num_instances",
    ),
    Rule(
        "CreateJobQueue.schedulingPolicyArn",
        "Job queues that don't have a fair-share scheduling policy are scheduled in a "
        "first-in, first-out (FIFO) model.",
        A + "test_fifo_jobs_dispatch_in_submit_order_within_num_instances",
        "Without a quota-share policy either; schedulingPriority does not reorder them "
        "(UNCONFIRMED). Fair-share SAGEMAKER_TRAINING queues are not emulated: refused at "
        "CreateJobQueue.",
    ),
    Rule(
        "CreateJobQueue.schedulingPolicyArn",
        "A job queue without a fair-share scheduling policy is scheduled as a FIFO job queue "
        "and can't have a fair-share scheduling policy added.",
        A + "test_a_fifo_queue_cannot_have_a_scheduling_policy_added",
    ),
    Rule(
        "UpdateServiceJob.schedulingPriority",
        "Jobs with a higher scheduling priority are scheduled before jobs with a lower "
        "scheduling priority within a share.",
        "emulator/test_dispatch_tick.py::"
        "test_a_job_is_submitted_then_runnable_for_a_tick_then_dispatched_by_priority",
    ),
    Rule(
        "UpdateServiceJob.schedulingPriority",
        "This only affects jobs in job queues with a quota-share or fair-share scheduling policy.",
        "scheduling/test_fifo.py::test_jobs_dispatch_in_submit_order_whatever_their_priority",
    ),
    Rule(
        "Shape:QuotaSharePolicy.idleResourceAssignmentStrategy",
        "The strategy that determines how idle resources are assigned to quota shares that are "
        "borrowing capacity.",
        "scheduling/test_dispatch.py::test_borrowers_are_served_fifo_across_shares",
        "FIFO across borrowing shares by submit time (UNCONFIRMED: AWS does not say what the "
        "order is of).",
    ),
    Rule(
        "Shape:DescribeServiceJobResponse.preemptionSummary",
        "This field appears on a service job when it has been preempted.",
        G + "test_a_job_that_was_never_preempted_has_no_preemption_summary",
    ),
    Rule(
        "Shape:DescribeServiceJobResponse.scheduledAt",
        "This represents when the service job was dispatched to SageMaker and the service job "
        "transitioned to the SCHEDULED state.",
        G + "test_scheduled_at_is_when_the_job_was_dispatched",
    ),
    Rule(
        "Shape:DescribeServiceJobResponse.capacityUsage",
        "The number of instances should be the same value as the "
        "serviceRequestPayload.InstanceCount field.",
        G + "test_capacity_usage_is_the_payloads_instance_count",
        "ResourceConfig.InstanceCount of the payload, per ResourceConfig.InstanceType.",
    ),
)


def markdown_table() -> str:
    """The rules as docs/emulator.md lists them."""
    lines = ["| Where | Documented rule | Test (under `tests/`) |", "|---|---|---|"]
    for rule in RULES:
        note = f" *{rule.note}*" if rule.note else ""
        sentence = rule.sentence.replace("|", "\\|")
        lines.append(f'| `{rule.where}` | "{sentence}"{note} | `{rule.test}` |')
    return "\n".join(lines)


def case_ids(test: str) -> tuple[str, str, list[str] | None]:
    """Module, function and parametrized ids of a test named ``file.py::name[id]``."""
    path, name = test.split("::")
    module = importlib.import_module("tests." + path.removesuffix(".py").replace("/", "."))
    function = getattr(module, name.split("[", 1)[0], None)
    assert function is not None, f"{test}: no such test"
    marks = [m for m in getattr(function, "pytestmark", []) if m.name == "parametrize"]
    if not marks:
        return path, name, None
    values = marks[0].args[1]
    ids = marks[0].kwargs.get("ids") or [str(v) for v in values]
    return path, name, list(ids)
