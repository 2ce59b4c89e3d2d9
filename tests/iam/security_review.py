"""The security review of docs/security.md: for each role the organisation stack creates (and
the cases around them), what it can and cannot do, and the tests that prove each line.

``tools/gen_doc_tables.py`` writes the review's table into docs/security.md from ``ROLES``
(``tests/unit/test_doc_tables.py`` fails while the page differs);
``tests/iam/test_team_access.py`` checks that every test named here exists. Cells are Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    """One line of a role's review: what it can do or cannot do (or both), proven by ``tests``."""

    can: str
    cannot: str
    tests: tuple[str, ...]
    """``tests/file.py::test_name``, each a test function that exists."""
    note: str = ""
    """Said after the tests (why a line is not proven)."""


@dataclass(frozen=True)
class Role:
    """A role (bold name, then where it is and who may assume it) and its lines."""

    name: str
    lines: tuple[Line, ...]


ANY_APP = "tests/constructs/test_any_app.py::"
PRINCIPALS = "tests/constructs/test_service_principals.py::"
STACK = "tests/constructs/test_team_access.py::"
CREATED_NAMES = "tests/iam/test_created_names.py::"
CALENDAR = "tests/iam/test_share_calendar.py::"
TEAM_ACCESS = "tests/iam/test_team_access.py::"
TRAINING_LOGS = "tests/iam/test_training_logs.py::"
LOAD = "tests/unit/test_access_created_names.py::"
PREFIX = "tests/unit/test_training_job_prefix.py::"

ROLES: tuple[Role, ...] = (
    Role(
        (
            "**Submitter role** `TeamAccess/<share>/SubmitterRole` (trusted by the `principals`; "
            "its only policy is the managed policy `SubmitterPolicy`, attachable to an "
            "organisation's own roles)"
        ),
        (
            Line(
                (
                    "submit into its own share with tag `quota-team=<team>` and priority up to "
                    "`max_priority`"
                ),
                "",
                (
                    TEAM_ACCESS
                    + "test_each_team_may_submit_into_its_own_share_with_its_tag_up_to_its_cap",
                ),
            ),
            Line(
                "",
                "submit into any other share of its queue",
                (TEAM_ACCESS + "test_each_team_is_denied_every_other_share_of_its_queue",),
            ),
            Line(
                "",
                "submit into any share of another organisation's queue",
                (
                    TEAM_ACCESS
                    + "test_each_team_is_denied_every_share_of_the_other_organisations_queue",
                ),
            ),
            Line(
                "",
                "submit without its tag, or with another team's",
                (
                    TEAM_ACCESS
                    + "test_each_team_is_denied_a_submit_without_its_tag_or_with_another_teams",
                ),
            ),
            Line(
                "",
                "re-tag another team's job as its own",
                (TEAM_ACCESS + "test_each_team_cannot_retag_another_teams_job_as_its_own",),
            ),
            Line(
                "",
                "submit above its cap, or without a priority when capped",
                (
                    TEAM_ACCESS
                    + "test_each_capped_team_is_denied_a_priority_above_its_cap_on_submit",
                ),
            ),
            Line(
                "",
                "raise a job above its cap",
                (
                    TEAM_ACCESS
                    + "test_each_capped_team_is_denied_a_priority_above_its_cap_on_update",
                ),
            ),
            Line(
                "update and terminate its own tagged jobs",
                "",
                (TEAM_ACCESS + "test_each_team_may_update_and_terminate_its_own_tagged_jobs",),
            ),
            Line(
                "",
                "update or terminate another team's or an untagged job",
                (
                    TEAM_ACCESS
                    + "test_each_team_is_denied_update_and_terminate_of_other_and_untagged_jobs",
                ),
            ),
            Line(
                "pass its execution role to SageMaker",
                "pass it to any other service",
                (
                    TEAM_ACCESS + "test_each_team_may_pass_its_own_execution_role_to_sagemaker",
                    TEAM_ACCESS + "test_each_team_is_denied_passing_its_role_to_another_service",
                ),
            ),
            Line(
                "",
                (
                    "pass another team's execution role (explicit Deny on every other team's role "
                    "of the stack)"
                ),
                (TEAM_ACCESS + "test_each_team_is_denied_passing_another_teams_execution_role",),
            ),
            Line(
                "",
                (
                    "pass another team's created role even when the file names it as its own "
                    "(names generated at deploy time; 20 teams)"
                ),
                (
                    CREATED_NAMES
                    + "test_rejects_passing_another_teams_created_execution_role_named_as_its_own",
                ),
            ),
            Line(
                "",
                (
                    "name a role, bucket or principal an organisation stack creates (`Quota-...`), "
                    "refused at load"
                ),
                (
                    LOAD + "test_rejects_an_execution_role_named_like_a_role_the_stack_creates",
                    LOAD + "test_rejects_a_bucket_named_like_a_bucket_the_stack_creates",
                    LOAD + "test_rejects_a_principal_that_is_another_teams_submitter_role",
                ),
            ),
            Line(
                "describe its share, snapshot and list its queue",
                "describe other shares, snapshot other queues",
                (
                    TEAM_ACCESS + "test_each_team_may_watch_its_own_share_and_queue",
                    TEAM_ACCESS
                    + "test_each_team_is_denied_other_shares_queues_and_other_parameters",
                ),
            ),
            Line(
                (
                    "describe and list **every** service job of the account and region (no "
                    "resource type exists: keep secrets out of payloads); describe job queues; "
                    "read `/quota/<organisation>/*`"
                ),
                "read another organisation's or any other parameter",
                (
                    TEAM_ACCESS
                    + "test_each_team_may_read_every_job_the_queues_and_its_organisations_contract",
                    TEAM_ACCESS
                    + "test_each_team_is_denied_other_shares_queues_and_other_parameters",
                ),
            ),
            Line(
                "is assumed only by the `principals`",
                "",
                (STACK + "test_submitter_role_trusts_exactly_the_teams_principals",),
            ),
        ),
    ),
    Role(
        (
            "**Execution role** `TeamAccess/<share>/ExecutionRole` (`execution_role: create`; "
            "trusted by `sagemaker.amazonaws.com` from this account)"
        ),
        (
            Line(
                (
                    "read and write its bucket, or only its prefix (and use the bucket's key "
                    "through S3)"
                ),
                "",
                (TEAM_ACCESS + "test_each_execution_role_may_read_and_write_its_bucket_or_prefix",),
            ),
            Line(
                "",
                (
                    "touch another team's bucket, prefix (`team-02` vs `team-02-archive`) or key "
                    "(explicit Deny within the stack); objects outside its prefix; its key other "
                    "than through S3"
                ),
                (
                    TEAM_ACCESS
                    + "test_each_execution_role_is_denied_other_teams_buckets_prefixes_and_keys",
                ),
            ),
            Line(
                "",
                (
                    "read, write, list or decrypt another team's created bucket even when the file "
                    "names it as its own (20 teams)"
                ),
                (
                    CREATED_NAMES
                    + "test_rejects_reading_writing_listing_and_decrypting_another_teams_created_bucket",  # noqa: E501 (a test's name)
                ),
            ),
            Line(
                (
                    "pull images of the account's ECR repositories, write the log streams of its "
                    "own team's training jobs (`AWSBatch<prefix>*` in "
                    "`/aws/sagemaker/TrainingJobs`; the runtime starts every `TrainingJobName` "
                    "with the team's prefix) and metrics in `/aws/sagemaker/TrainingJobs` (any "
                    "dimension there: IAM has no dimension key, residual risk in docs/security.md)"
                ),
                "write other log groups or metric namespaces, pull from other accounts",
                (
                    TEAM_ACCESS
                    + "test_each_execution_role_may_pull_images_and_write_training_logs_and_metrics",  # noqa: E501 (a test's name)
                    TEAM_ACCESS + "test_each_execution_role_logs_and_metrics_are_limited",
                ),
            ),
            Line(
                "",
                (
                    "create or write the training log streams of any other team, of its "
                    "organisation or another (`access.training_logs: team-prefixed`, the default; "
                    "every pair of 20 teams named `a`, `a-b`, `a_b`, `A`, ...; `shared` grants "
                    "every stream)"
                ),
                (
                    TRAINING_LOGS
                    + "test_rejects_each_execution_role_writing_every_other_teams_training_log_streams",  # noqa: E501 (a test's name)
                    TRAINING_LOGS
                    + "test_each_execution_role_may_write_its_own_teams_training_log_streams",
                    PREFIX + "test_a_teams_streams_match_its_own_pattern_and_no_other_teams",
                ),
            ),
            Line(
                (
                    "is assumed only by SageMaker for this account (`aws:SourceAccount`, "
                    "`aws:SourceArn`)"
                ),
                "",
                (STACK + "test_execution_role_trusts_sagemaker_from_this_account_only",),
            ),
        ),
    ),
    Role(
        (
            "**Calendar role** `Calendars/<share>/Role` (a share with `schedule:`; trusted by "
            "`scheduler.amazonaws.com` from this account, for the share's own schedules "
            "`Quota-<organisation>.<share>.*`)"
        ),
        (
            Line(
                "`batch:UpdateQuotaShare` on its own share (the flips)",
                "update any other share, the queue, or submit",
                (CALENDAR + "test_the_calendar_role_updates_only_its_own_share",),
            ),
        ),
    ),
    Role(
        (
            "**Every service principal** (notification key, topic and dead-letter queue, dashboard "
            "log group, execution role trust, access-log bucket, pipeline roles)"
        ),
        (
            Line(
                "act for this account's sources",
                (
                    "act for another account or resource (no statement without `aws:SourceAccount` "
                    "and `aws:SourceArn`)"
                ),
                (
                    PRINCIPALS
                    + "test_rejects_no_service_principal_statement_without_source_conditions",
                ),
            ),
        ),
    ),
    Role(
        "**Any CDK app** (bare `cdk.App()`, no feature flags)",
        (
            Line(
                "synthesize the same secure resources as with `cdk.json`'s flags",
                "",
                (ANY_APP + "test_bare_and_flagged_apps_give_equal_security_properties",),
            ),
        ),
    ),
    Role(
        "**Existing execution role** (`execution_role: <ARN>`)",
        (
            Line(
                (
                    "whatever its owner granted: the stack cannot change its policies and grants "
                    "it nothing"
                ),
                "",
                (STACK + "test_existing_roles_and_buckets_are_not_created",),
                note="(not in the template, so not proven)",
            ),
        ),
    ),
)


def markdown_table() -> str:
    """The review's table as docs/security.md shows it."""
    lines = ["| Role | Can | Cannot | Proven by |", "|---|---|---|---|"]
    for role in ROLES:
        for index, line in enumerate(role.lines):
            proven = ", ".join(f"`{test}`" for test in line.tests)
            cells = (
                role.name if index == 0 else "",
                line.can,
                line.cannot or "-",
                f"{proven} {line.note}" if line.note else proven,
            )
            lines.append("|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|")
    return "\n".join(lines)
