"""Owns the organisation stack: one CloudFormation stack per organisation, from the model.

It publishes the contract of ``quota_constructs.contracts`` (the runtime finds a deployed queue
by organisation name): SSM String parameters ``/quota/<organisation>/job-queue/name``,
``.../job-queue/arn`` and ``.../quota-shares/<share name>/arn``, and the same values as stack
outputs (``JobQueueName``, ``JobQueueArn``, one ``QuotaShareArns<share>`` per share). A share
with ``access`` gets a ``QuotaShareTeamAccess`` (``TeamAccess/<share>``) and publishes its
``submitter-role-arn``, ``execution-role-arn`` and ``bucket`` the same way. The organisation's
training plans are the StringList ``/quota/<organisation>/training-plans`` (output
``TrainingPlanArns``; ``none`` when it has none, as SSM takes no empty value).
"""

from __future__ import annotations

import time
from typing import Any

import aws_cdk as cdk
from constructs import Construct

from quota_constructs import contracts
from quota_constructs.constructs import (
    OrganisationDashboard,
    QueueNotifications,
    QuotaManagedTrainingQueue,
    QuotaShareCalendar,
    QuotaShareTeamAccess,
    access_log_bucket,
)
from quota_constructs.constructs._base import warn
from quota_constructs.constructs.parameters import parameter_and_output, publish_queue
from quota_constructs.model import STACK_NAME_PREFIX, Organisation
from quota_constructs.model.training_plan import utc_text
from quota_constructs.stacks.region_check import refuse_unsupported_region

MAX_DESCRIPTION = 1024
TEAM_ACCESS_SCOPE = "TeamAccess"
"""Construct scope of the teams' access (one ``QuotaShareTeamAccess`` per share, by name)."""
ACCESS_LOGS_ID = "AccessLogs"
"""Construct id of the bucket receiving the team buckets' server access logs."""
NOTIFICATIONS_ID = "Notifications"
"""Construct id of the queue's preemption and FAILED-job notifications."""
CALENDARS_SCOPE = "Calendars"
"""Construct scope of the shares' calendars (one ``QuotaShareCalendar`` per share, by name)."""
DASHBOARD_ID = "Dashboard"
DASHBOARD_TYPE = "AWS::CloudWatch::Dashboard"
"""Construct id of the organisation's CloudWatch dashboard."""


def stack_name_for(organisation: Organisation) -> str:
    """The pinned stack name (and construct id) of an organisation: ``Quota-<organisation>``."""
    return f"{STACK_NAME_PREFIX}{organisation.name}"


class OrganisationStack(cdk.Stack):
    """The quota-managed training queue of one organisation, with outputs and SSM parameters.

    Other keyword arguments are ``cdk.Stack`` props (``env``, ``synthesizer``, ...). The stack
    name defaults to ``Quota-<organisation>``; the organisation's tags go on every resource.
    A concrete region lacking a resource type the stack creates is refused
    (:class:`~quota_constructs.model.QuotaConfigError`, naming the region, the type and the
    regions that have it); an environment-agnostic stack is not.

    :param organisation: a validated model ``Organisation`` (from ``config.load_organisation``).
    :param monitoring: default ``True``: the preemption notifications (``Notifications``) and
        the dashboard (``Dashboard``); ``False`` leaves both out (the synth benchmark compares
        the queue alone with raw L1s).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        organisation: Organisation,
        monitoring: bool = True,
        **stack_props: Any,
    ) -> None:
        organisation.validate(context=f"organisation {organisation.name!r}")
        description = f"Quota-managed SageMaker training queue of {organisation.name}"
        if organisation.description:
            description += f": {organisation.description}"
        stack_props.setdefault("stack_name", stack_name_for(organisation))
        stack_props.setdefault("description", description[:MAX_DESCRIPTION])
        super().__init__(scope, construct_id, **stack_props)
        self.organisation = organisation
        self.queue = QuotaManagedTrainingQueue(self, "TrainingQueue", spec=organisation.queue)
        self.training_plan_arns = tuple(
            plan.arn
            if plan.by_arn
            else self.format_arn(
                service="sagemaker", resource="training-plan", resource_name=plan.name
            )
            for plan in organisation.training_plans
        )
        """The organisation's training plans: ``{arn}`` ones as given, named ones in the
        stack's account and region."""
        self._warn_ended_plans()
        self.team_access = self._team_access()
        self.calendars = self._calendars()
        self.notifications: QueueNotifications | None = None
        self.dashboard: OrganisationDashboard | None = None
        if monitoring:
            self.notifications = self._notifications()
            self.dashboard = OrganisationDashboard(
                self,
                DASHBOARD_ID,
                organisation=organisation,
                job_queue_arn=self.queue.job_queue_arn,
                job_queue_name=self.queue.job_queue_name,
                notifications=self.notifications,
            )
        self._publish()
        for key, value in organisation.tags.items():
            # CloudWatch dashboards take no empty tag value (every other resource here does).
            skip = [] if value else [DASHBOARD_TYPE]
            cdk.Tags.of(self).add(key, value, exclude_resource_types=skip)
        refuse_unsupported_region(self)

    def _team_access(self) -> dict[str, QuotaShareTeamAccess]:
        """One ``QuotaShareTeamAccess`` per share with ``access``, each denied every other
        team's execution role, bucket and key; the access-log bucket once."""
        org = self.organisation.name
        specs = [spec for spec in self.organisation.queue.shares if spec.access is not None]
        if not specs:
            return {}
        scope = Construct(self, TEAM_ACCESS_SCOPE)
        creates_bucket = any(spec.access and spec.access.creates_bucket for spec in specs)
        logs = access_log_bucket(self, ACCESS_LOGS_ID) if creates_bucket else None
        teams = {
            spec.name: QuotaShareTeamAccess(
                scope,
                spec.name,
                quota_share=self.queue.share(spec.name),
                team=contracts.team_tag_value(org, spec.name),
                access=spec.access,
                parameter_path=contracts.organisation_prefix(org),
                server_access_logs_bucket=logs,
                training_plan_arns=self.training_plan_arns,
            )
            for spec in specs
            if spec.access is not None
        }
        for name, team in teams.items():
            team.exclude([other for other_name, other in teams.items() if other_name != name])
        return teams

    def _calendars(self) -> dict[str, QuotaShareCalendar]:
        """One ``QuotaShareCalendar`` per share with a ``schedule:`` (its flips and role)."""
        calendars = self.organisation.calendars
        if not calendars:
            return {}
        scope = Construct(self, CALENDARS_SCOPE)
        return {
            spec.name: QuotaShareCalendar(
                scope,
                spec.name,
                quota_share_arn=self.queue.share(spec.name).quota_share_arn,
                share=spec,
                calendar=calendars[spec.name],
                organisation=self.organisation.name,
            )
            for spec in self.organisation.queue.shares
            if spec.name in calendars
        }

    def _notifications(self) -> QueueNotifications:
        """The rule, topic and subscribers of the organisation file's ``notifications:``."""
        shares = self.organisation.queue.shares
        return QueueNotifications(
            self,
            NOTIFICATIONS_ID,
            job_queue_arn=self.queue.job_queue_arn,
            subscribers=self.organisation.notifications,
            share_subscribers={share.name: share.notifications for share in shares},
        )

    def _warn_ended_plans(self) -> None:
        """A named plan whose window is over when the app synthesizes: its type's jobs run on
        demand (billed at on-demand prices), which the file's author likely did not mean."""
        now = time.time()
        for plan in self.organisation.training_plans:
            if plan.ended_at(now):
                warn(
                    self,
                    "trainingPlanEnded",
                    f"training plan {plan.name} ended at {utc_text(plan.end_s)}: jobs of "
                    f"{plan.instance_type} run on demand; remove it from training_plans, or "
                    "name the plan that follows it",
                )

    def _publish(self) -> None:
        queue = self.queue
        publish_queue(
            self,
            self.organisation.name,
            job_queue_name=queue.job_queue_name,
            job_queue_arn=queue.job_queue_arn,
            share_arns={name: share.quota_share_arn for name, share in queue.quota_shares.items()},
        )
        arns = self.training_plan_arns
        parameter_and_output(
            self,
            contracts.TRAINING_PLANS_OUTPUT,
            contracts.training_plans_parameter(self.organisation.name),
            cdk.Fn.join(",", list(arns)) if arns else contracts.training_plans_value(()),
            f"Training plan ARNs of the organisation ({contracts.NO_TRAINING_PLANS!r}: none)",
            kind="StringList",
        )
        if self.team_access:
            self._publish_team_access()
        if self.notifications is not None:
            cdk.CfnOutput(
                self,
                contracts.NOTIFICATION_TOPIC_OUTPUT,
                value=self.notifications.topic_arn,
                description="SNS topic of preemption and FAILED-job notifications",
            )
        if self.dashboard is not None:
            cdk.CfnOutput(
                self,
                contracts.DASHBOARD_OUTPUT,
                value=self.dashboard.dashboard.dashboard_name,
                description="CloudWatch dashboard of this organisation",
            )

    def _publish_team_access(self) -> None:
        org = self.organisation.name
        what = {
            contracts.SUBMITTER_ROLE_ARNS_SCOPE: "submitter role ARN",
            contracts.EXECUTION_ROLE_ARNS_SCOPE: "SageMaker execution role ARN",
            contracts.TEAM_BUCKETS_SCOPE: "bucket (name or name/prefix)",
            contracts.TRAINING_JOB_PREFIXES_SCOPE: "prefix of every TrainingJobName",
        }
        scopes = {scope_id: Construct(self, scope_id) for scope_id in what}
        for name, access in self.team_access.items():
            values = {
                contracts.SUBMITTER_ROLE_ARNS_SCOPE: access.submitter_role_arn,
                contracts.EXECUTION_ROLE_ARNS_SCOPE: access.execution_role_arn,
                contracts.TEAM_BUCKETS_SCOPE: access.bucket_location,
                contracts.TRAINING_JOB_PREFIXES_SCOPE: access.training_job_prefix,
            }
            for scope_id, parameter in contracts.share_access_parameters(org, name).items():
                parameter_and_output(
                    scopes[scope_id],
                    contracts.share_output_id(name),
                    parameter,
                    values[scope_id],
                    f"Team {name}: {what[scope_id]}",
                )
