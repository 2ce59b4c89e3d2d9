"""Owns acting as a team: finding a share's submitter role in SSM and assuming it with STS.

The organisation stack publishes, for each share with ``access``, the team's submitter role ARN
at ``/quota/<organisation>/quota-shares/<share>/submitter-role-arn``
(:mod:`quota_constructs.contracts`). :func:`read_team_parameters` reads it with the queue's ARN
and words what is missing; :func:`assumed_role_session` assumes the role and returns a boto3
session whose credentials botocore renews before they expire (long waits outlive one session).
"""

from __future__ import annotations

import getpass
import re
from dataclasses import dataclass
from typing import Any

import boto3
import botocore.session
from botocore.client import BaseClient
from botocore.credentials import CredentialProvider, RefreshableCredentials
from botocore.exceptions import BotoCoreError, ClientError

from quota_constructs.contracts import (
    job_queue_arn_parameter,
    share_arn_parameter,
    share_prefix,
    submitter_role_arn_parameter,
    training_plans_from_value,
    training_plans_parameter,
)
from quota_constructs.model import Problem, QuotaConfigError

SESSION_NAME_PREFIX = "quota-"
_SESSION_NAME_MAX = 64
_SESSION_NAME_BAD = re.compile(r"[^\w+=,.@-]")
_ACCESS_FIX = (
    "add an access block to the share in the organisation file (docs/security.md) and deploy "
    "the organisation's stack"
)


@dataclass(frozen=True)
class TeamParameters:
    """What the stack published for one team: its queue and its submitter role."""

    organisation: str
    share: str
    job_queue_arn: str
    submitter_role_arn: str
    training_plans: tuple[str, ...] = ()
    """The organisation's training plan ARNs (``/quota/<organisation>/training-plans``; none
    when a stack deployed before that parameter existed)."""


def read_team_parameters(ssm: BaseClient, organisation: str, share: str) -> TeamParameters:
    """The queue ARN, submitter role ARN and organisation's training plans of ``share``, read in
    one ``GetParameters`` call.

    Raises :class:`QuotaConfigError` naming what is missing: the organisation (its stack is not
    deployed), the share (not in the organisation; the message lists its shares) or the team
    access (the share has no ``access`` block). SSM errors propagate as ``ClientError``.
    """
    queue = job_queue_arn_parameter(organisation)
    share_arn = share_arn_parameter(organisation, share)
    role = submitter_role_arn_parameter(organisation, share)
    plans = training_plans_parameter(organisation)
    answer = ssm.get_parameters(Names=[queue, share_arn, role, plans])
    found = {p["Name"]: str(p["Value"]) for p in answer.get("Parameters", [])}
    if queue not in found:
        raise _problem(
            "organisation",
            organisation,
            f"no SSM parameter {queue}: the organisation's stack is not deployed in this "
            "account and region",
            "deploy the organisation's stack, or check --organisation and --region",
        )
    if share_arn not in found:
        known = ", ".join(_share_names(ssm, organisation)) or "unknown"
        raise _problem(
            "share",
            share,
            f"organisation {organisation} has no quota share of that name (no SSM parameter "
            f"{share_arn}; shares: {known})",
            "pass the name of one of the organisation's shares",
        )
    if role not in found:
        raise _problem(
            "share",
            share,
            f"quota share {share} of organisation {organisation} has no team access (no SSM "
            f"parameter {role}), so there is no team role to act as",
            _ACCESS_FIX,
        )
    published = training_plans_from_value(found.get(plans, ""))
    return TeamParameters(organisation, share, found[queue], found[role], published)


def _share_names(ssm: BaseClient, organisation: str) -> list[str]:
    """The organisation's share names, from their ``.../quota-shares/<share>/arn`` parameters
    (a hint only: empty when the caller may not list them)."""
    root = share_prefix(organisation, "").rstrip("/")
    try:
        pages = ssm.get_paginator("get_parameters_by_path").paginate(Path=root, Recursive=True)
        names = [p["Name"] for page in pages for p in page.get("Parameters", [])]
    except (ClientError, BotoCoreError):
        return []
    shares = (name[len(root) + 1 :].split("/", 1)[0] for name in names)
    return sorted({s for s in shares if share_arn_parameter(organisation, s) in names})


def _problem(path: str, value: str, message: str, fix: str) -> QuotaConfigError:
    return QuotaConfigError([Problem(path, value, message, fix)])


def default_session_name(user: str | None = None) -> str:
    """``quota-<user>``: the role session name CloudTrail shows for the caller.

    ``user`` defaults to the login name; characters STS does not accept become ``-`` and the
    name is cut to STS's 64 characters.
    """
    name = SESSION_NAME_PREFIX + _SESSION_NAME_BAD.sub("-", user or _login_name())
    return name[:_SESSION_NAME_MAX]


def _login_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in a container without a passwd entry
        return "user"


class _AssumedRoleProvider(CredentialProvider):
    """Hands botocore one set of refreshable assumed-role credentials."""

    METHOD = "assume-role"
    CANONICAL_NAME = "quota-team"

    def __init__(self, credentials: RefreshableCredentials) -> None:
        super().__init__()
        self.credentials = credentials

    def load(self) -> RefreshableCredentials:
        return self.credentials


def assumed_role_session(
    sts: BaseClient,
    role_arn: str,
    session_name: str,
    *,
    region: str | None = None,
    profile: str | None = None,
) -> boto3.Session:
    """A boto3 session acting as ``role_arn``, through ``sts`` (``AssumeRole``).

    The first ``AssumeRole`` happens now, so a caller the role does not trust fails here
    (``ClientError``); botocore calls it again before the credentials expire. ``region`` and
    ``profile`` (its settings other than credentials, e.g. endpoints) are the new session's.
    """

    def fetch() -> dict[str, Any]:
        answer = sts.assume_role(RoleArn=role_arn, RoleSessionName=session_name)["Credentials"]
        return {
            "access_key": answer["AccessKeyId"],
            "secret_key": answer["SecretAccessKey"],
            "token": answer["SessionToken"],
            "expiry_time": answer["Expiration"].isoformat(),
        }

    credentials = RefreshableCredentials.create_from_metadata(
        fetch(), refresh_using=fetch, method=_AssumedRoleProvider.METHOD
    )
    core = botocore.session.Session(profile=profile)
    core.get_component("credential_provider").insert_before(
        "env", _AssumedRoleProvider(credentials)
    )
    return boto3.Session(botocore_session=core, region_name=region)
