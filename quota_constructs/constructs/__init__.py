"""CDK constructs for quota-managed SageMaker training queues on AWS Batch (imports aws_cdk)."""

from quota_constructs.constructs import grants
from quota_constructs.constructs.dashboard import OrganisationDashboard
from quota_constructs.constructs.job_queue import IQuotaManagedJobQueue, QuotaManagedJobQueue
from quota_constructs.constructs.notifications import QueueNotifications
from quota_constructs.constructs.quota_share import IQuotaShare, IQuotaShareRegistry, QuotaShare
from quota_constructs.constructs.scheduling_policy import (
    IdleResourceAssignmentStrategy,
    QuotaShareSchedulingPolicy,
)
from quota_constructs.constructs.service_environment import SageMakerTrainingServiceEnvironment
from quota_constructs.constructs.share_calendar import QuotaShareCalendar
from quota_constructs.constructs.team_access import QuotaShareTeamAccess, access_log_bucket
from quota_constructs.constructs.training_queue import QuotaManagedTrainingQueue

__all__ = [
    "IQuotaManagedJobQueue",
    "IQuotaShare",
    "IQuotaShareRegistry",
    "IdleResourceAssignmentStrategy",
    "OrganisationDashboard",
    "QueueNotifications",
    "QuotaManagedJobQueue",
    "QuotaManagedTrainingQueue",
    "QuotaShare",
    "QuotaShareCalendar",
    "QuotaShareSchedulingPolicy",
    "QuotaShareTeamAccess",
    "SageMakerTrainingServiceEnvironment",
    "access_log_bucket",
    "grants",
]
