"""Team access: IAM principals, execution roles and buckets (ARN and S3 name parsing)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from quota_constructs.model.limits import SCHEDULING_PRIORITY_RANGE, check_int_range
from quota_constructs.model.problems import Problem, join_path
from quota_constructs.model.training_logs import (
    TRAINING_LOGS_TEAM_PREFIXED,
    training_logs_problems,
)

# --- team access (docs/aws-semantics.md §3) -------------------------------------------------------

CREATE = "create"
"""``execution_role: create`` / ``bucket: create``: the stack makes the resource for the team."""
MAX_ACCESS_PRINCIPALS = 10
"""Stated limit (not AWS's): a team is a few roles or accounts, and IAM limits a role's trust
policy to 2,048 characters by default."""
STACK_NAME_PREFIX = "Quota-"
"""Organisation stacks are named ``Quota-<organisation>``. CloudFormation names what a stack
creates without a fixed name ``<stack name>-<logical id>-<suffix>`` (buckets in lowercase), so
every role and bucket an organisation stack creates, and publishes under ``/quota/<org>/``,
starts with it (case aside): a file naming one names another team's."""
MAX_IAM_PATH_LENGTH = 512
MAX_BUCKET_PREFIX_LENGTH = 256
"""Stated limit (not AWS's; S3 keys may be 1,024 bytes): leaves room for the team's own keys."""

# Pattern bodies, ASCII only and written so that they mean the same in Python (used with
# ``fullmatch``) and in the JSON Schema's ECMA regexes (anchored with ``^...$`` there).
ACCOUNT_ID_BODY = r"[0-9]{12}"
IAM_NAME_BODY = r"[A-Za-z0-9+=,.@_-]{1,64}"
_IAM_PATH_BODY = r"(?:[A-Za-z0-9+=,.@_-]+/)*"
ROLE_ARN_BODY = rf"arn:aws:iam::{ACCOUNT_ID_BODY}:role/{_IAM_PATH_BODY}{IAM_NAME_BODY}"
PRINCIPAL_BODY = (
    rf"{ACCOUNT_ID_BODY}|arn:aws:iam::{ACCOUNT_ID_BODY}:"
    rf"(?:root|(?:role|user)/{_IAM_PATH_BODY}{IAM_NAME_BODY})"
)
BUCKET_NAME_BODY = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"
_PREFIX_SEGMENT = r"[A-Za-z0-9._-]+"
BUCKET_PREFIX_BODY = rf"{_PREFIX_SEGMENT}(?:/{_PREFIX_SEGMENT})*/?"
BUCKET_BODY = rf"{BUCKET_NAME_BODY}(?:/{BUCKET_PREFIX_BODY})?"

_IAM_ARN = re.compile(
    r"arn:aws:iam::(?P<account>[0-9]{12}):"
    rf"(?:(?P<root>root)|(?P<kind>role|user)/(?P<path>{_IAM_PATH_BODY})(?P<name>{IAM_NAME_BODY}))"
)
_ACCOUNT_ID = re.compile(ACCOUNT_ID_BODY)
_BUCKET_NAME_CHARS = re.compile(BUCKET_NAME_BODY)
_BUCKET_PREFIX = re.compile(BUCKET_PREFIX_BODY)
_IP_ADDRESS = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
_BUCKET_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_BUCKET_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")

_PRINCIPAL_FIX = (
    "use a 12-digit account id (quoted), arn:aws:iam::<account>:root, "
    "arn:aws:iam::<account>:role/<path/name> or arn:aws:iam::<account>:user/<path/name>"
)
_ROLE_FIX = "write 'create' or an existing role's ARN, arn:aws:iam::<account>:role/<path/name>"
_BUCKET_FIX = "write 'create' or an existing bucket's name, optionally followed by /<prefix>"
_CREATED_REASON = (
    "{what} named {shown}... are the ones organisation stacks create for their teams "
    "(stack {prefix}<organisation>), published under /quota/<organisation>/: another team's"
)
_CREATED_FIX = {
    "execution_role": "write 'create' for a role of the team's own, or name an existing role "
    f"whose name does not start with {STACK_NAME_PREFIX}",
    "bucket": "write 'create' for a bucket of the team's own, or name an existing bucket "
    f"whose name does not start with {STACK_NAME_PREFIX.lower()}",
    "principals": "list the team's own roles, users or accounts, not a role or user named "
    f"{STACK_NAME_PREFIX}...",
}


def is_stack_created_name(name: str) -> bool:
    """Whether an IAM or bucket name has the shape of one an organisation stack creates."""
    return name.lower().startswith(STACK_NAME_PREFIX.lower())


def _created_problem(path: str, field: str, value: str, name: str, what: str) -> list[Problem]:
    """A problem if ``name`` (the name in ``value``) is one an organisation stack creates."""
    if not is_stack_created_name(name):
        return []
    shown = STACK_NAME_PREFIX.lower() if field == "bucket" else STACK_NAME_PREFIX
    reason = _CREATED_REASON.format(what=what, shown=shown, prefix=STACK_NAME_PREFIX)
    return [Problem(path, value, reason, _CREATED_FIX[field])]


@dataclass(frozen=True)
class IamPrincipal:
    """A parsed IAM principal: an account (``kind == "root"``), a role or a user."""

    account: str
    kind: str
    name: str = ""
    path: str = "/"

    @property
    def arn(self) -> str:
        """The principal as an ARN (an account id becomes ``arn:aws:iam::<account>:root``)."""
        if self.kind == "root":
            return f"arn:aws:iam::{self.account}:root"
        return f"arn:aws:iam::{self.account}:{self.kind}{self.path}{self.name}"

    @property
    def identity(self) -> tuple[str, str, str]:
        """What IAM tells apart: names are unique per account whatever the path or case."""
        return (self.account, self.kind, self.name.lower())


def parse_iam_principal(value: str) -> IamPrincipal | None:
    """An account id or ``arn:aws:iam::`` root/role/user ARN, parsed; ``None`` if it is not one."""
    if _ACCOUNT_ID.fullmatch(value):
        return IamPrincipal(account=value, kind="root")
    match = _IAM_ARN.fullmatch(value)
    if match is None or len(match["path"] or "") + 1 > MAX_IAM_PATH_LENGTH:
        return None
    if match["root"]:
        return IamPrincipal(account=match["account"], kind="root")
    return IamPrincipal(match["account"], match["kind"], match["name"], "/" + match["path"])


def _iam_arn_reason(value: str, kinds: tuple[str, ...]) -> str:
    """Why ``value`` is not an IAM ARN of one of ``kinds`` (root, role, user)."""
    if any(char in value for char in "*?$"):
        return "wildcards and policy variables are not allowed: they would trust more than one"
    parts = value.split(":", 5)
    if len(parts) < 6 or parts[0] != "arn":
        return "not an ARN"
    _, partition, service, region, account, resource = parts
    kind = resource.split("/", 1)[0]
    if partition != "aws":
        return f"only the aws partition is supported, not {partition!r}"
    if service != "iam":
        return f"an ARN of service {service!r} is not an IAM principal"
    if region or not _ACCOUNT_ID.fullmatch(account):
        return "an IAM ARN has an empty region and a 12-digit account: arn:aws:iam::<account>:"
    if kind not in kinds:
        return f"an IAM ARN of type {kind!r} is not allowed here (allowed: {', '.join(kinds)})"
    if kind == "root":
        return "an account's ARN ends in ':root', with nothing after it"
    if "/" not in resource or not resource.rsplit("/", 1)[1]:
        return f"the {kind} name is missing"
    name = resource.rsplit("/", 1)[1]
    if len(name) > 64:
        return f"IAM {kind} names are 1-64 characters, this one has {len(name)}"
    if len(resource) - len(kind) - len(name) > MAX_IAM_PATH_LENGTH:
        return f"IAM paths are at most {MAX_IAM_PATH_LENGTH} characters"
    return "IAM names and paths use only letters, digits and + = , . @ _ - (paths: '/' between)"


def _execution_role_reason(value: Any) -> str | None:
    """Why ``value`` is neither ``create`` nor an IAM role ARN; ``None`` if it is fine."""
    if value == CREATE:
        return None
    if not isinstance(value, str):
        return "execution_role is text: 'create' or an IAM role ARN"
    parsed = parse_iam_principal(value)
    if parsed is not None and parsed.kind == "role":
        return None
    if not value.startswith("arn:"):
        return "execution_role is 'create' or an IAM role ARN"
    return _iam_arn_reason(value, ("role",))


def _principal_reason(value: Any) -> str | None:
    """Why ``value`` is not a principal that may assume a team's role; ``None`` if it is one."""
    if not isinstance(value, str):
        return "a principal is text; write account ids in quotes"
    if parse_iam_principal(value) is not None:
        return None
    if value.isascii() and value.isdigit():
        return f"an account id has exactly 12 digits, this one has {len(value)}"
    if not value.startswith("arn:") and not any(char in value for char in "*?$"):
        return "a principal is a 12-digit account id or an IAM root, role or user ARN"
    return _iam_arn_reason(value, ("root", "role", "user"))


@dataclass(frozen=True)
class BucketLocation:
    """An existing S3 bucket, or a prefix of one (``prefix`` is ``""`` for the whole bucket)."""

    bucket: str
    prefix: str = ""

    @classmethod
    def parse(cls, value: str) -> BucketLocation:
        """``name`` or ``name/prefix`` (a trailing ``/`` is dropped); the rules are not checked."""
        bucket, _, prefix = value.partition("/")
        return cls(bucket, prefix.rstrip("/"))

    def overlaps(self, other: BucketLocation) -> bool:
        """Same bucket and one location contains the other (whole bucket contains every prefix)."""
        if self.bucket != other.bucket:
            return False
        mine, theirs = self.prefix + "/", other.prefix + "/"
        return (
            not self.prefix
            or not other.prefix
            or mine.startswith(theirs)
            or (theirs.startswith(mine))
        )

    def __str__(self) -> str:
        return f"{self.bucket}/{self.prefix}" if self.prefix else self.bucket


def _bucket_name_reason(name: str) -> str | None:
    """Why ``name`` breaks S3's general purpose bucket naming rules; ``None`` if it does not."""
    if not 3 <= len(name) <= 63:
        return f"bucket names are 3-63 characters, this one has {len(name)}"
    if not _BUCKET_NAME_CHARS.fullmatch(name):
        return (
            "bucket names use lowercase letters, digits, '.' and '-', "
            "and start and end with a letter or digit"
        )
    if ".." in name:
        return "bucket names may not contain two adjacent dots"
    if _IP_ADDRESS.fullmatch(name):
        return "bucket names may not be formatted as an IP address"
    if name.startswith(_BUCKET_RESERVED_PREFIXES):
        return f"bucket names may not start with {', '.join(_BUCKET_RESERVED_PREFIXES)}"
    if name.endswith(_BUCKET_RESERVED_SUFFIXES):
        return f"bucket names may not end with {', '.join(_BUCKET_RESERVED_SUFFIXES)}"
    return None


def _bucket_reason(value: Any) -> str | None:
    """Why ``value`` is neither ``create`` nor ``name[/prefix]``; ``None`` if it is fine."""
    if not isinstance(value, str):
        return "bucket is text: 'create' or a bucket name"
    if value == CREATE:
        return None
    if value.startswith("s3://"):
        return "write the bucket name without 's3://'"
    name, slash, prefix = value.partition("/")
    if not name:
        return "a prefix needs the name of an existing bucket before it"
    if name == CREATE and slash:
        return "a prefix needs an existing bucket: 'create' makes a bucket of the team's own"
    reason = _bucket_name_reason(name)
    if reason or not slash:
        return reason
    if not prefix:
        return "the prefix after '/' is empty"
    if any(char in prefix for char in "*?$"):
        return "wildcards and policy variables are not allowed in a prefix: they would widen access"
    if len(prefix) > MAX_BUCKET_PREFIX_LENGTH:
        return f"a prefix is at most {MAX_BUCKET_PREFIX_LENGTH} characters"
    if not _BUCKET_PREFIX.fullmatch(prefix) or {".", ".."} & set(prefix.split("/")):
        return (
            "a prefix is one or more '/'-separated parts of letters, digits, '.', '_' and '-' "
            "(no empty, '.' or '..' parts)"
        )
    return None


@dataclass(frozen=True)
class TeamAccess:
    """Who may act for a share's team, and the team's training resources (organisation file
    ``shares[].access``).

    ``principals``: account ids or IAM root/role/user ARNs trusted to assume the team's submitter
    role. ``max_priority``: the highest ``schedulingPriority`` the team may set on submit and on
    update (``None``: no cap beyond the service's 0-9999). ``execution_role``: ``"create"`` or an
    existing IAM role's ARN, the SageMaker execution role of the team's jobs. ``bucket``:
    ``"create"`` or an existing bucket's name, optionally ``name/prefix``. ``training_logs``:
    ``"team-prefixed"`` (a created execution role writes only the log streams of the team's
    own training jobs, ``AWSBatch<prefix>*``) or ``"shared"`` (every stream of
    ``/aws/sagemaker/TrainingJobs``); see :mod:`quota_constructs.model.training_logs`.
    """

    principals: tuple[str, ...]
    max_priority: int | None = None
    execution_role: str = CREATE
    bucket: str = CREATE
    training_logs: str = TRAINING_LOGS_TEAM_PREFIXED

    def __post_init__(self) -> None:
        object.__setattr__(self, "principals", tuple(self.principals))

    @property
    def creates_execution_role(self) -> bool:
        return self.execution_role == CREATE

    @property
    def creates_bucket(self) -> bool:
        return self.bucket == CREATE

    @property
    def team_prefixed_logs(self) -> bool:
        """Whether the execution role may write only its team's training-job log streams."""
        return self.training_logs == TRAINING_LOGS_TEAM_PREFIXED

    @property
    def existing_bucket(self) -> BucketLocation | None:
        """The existing bucket (and prefix) named, or ``None`` when the stack creates one."""
        return None if self.creates_bucket else BucketLocation.parse(self.bucket)

    @property
    def principal_arns(self) -> tuple[str, ...]:
        """The principals as ARNs (an account id becomes its ``:root`` ARN); call on valid ones."""
        return tuple(_parsed(p).arn for p in self.principals)

    def problems(self, path: str = "access") -> list[Problem]:
        """Every rule this block breaks on its own (sharing with other teams: see
        :func:`shared_access_problems`)."""
        problems = self._principal_problems(join_path(path, "principals"))
        if self.max_priority is not None:
            low, high = SCHEDULING_PRIORITY_RANGE
            problems += check_int_range(
                self.max_priority,
                join_path(path, "max_priority"),
                low,
                high,
                what="max_priority (the highest schedulingPriority the team may set)",
            )
        role_path, bucket_path = join_path(path, "execution_role"), join_path(path, "bucket")
        if (reason := _execution_role_reason(self.execution_role)) is not None:
            problems.append(Problem(role_path, self.execution_role, reason, _ROLE_FIX))
        elif not self.creates_execution_role:
            name = _parsed(self.execution_role).name
            problems += _created_problem(
                role_path, "execution_role", self.execution_role, name, "roles"
            )
        if (reason := _bucket_reason(self.bucket)) is not None:
            problems.append(Problem(bucket_path, self.bucket, reason, _BUCKET_FIX))
        elif (location := self.existing_bucket) is not None:
            problems += _created_problem(
                bucket_path, "bucket", self.bucket, location.bucket, "buckets"
            )
        return problems + training_logs_problems(
            self.training_logs, join_path(path, "training_logs")
        )

    def _principal_problems(self, path: str) -> list[Problem]:
        if not self.principals:
            return [
                Problem(
                    path,
                    [],
                    "at least one principal must be trusted to act for the team",
                    "list the roles, users or accounts that submit the team's jobs",
                )
            ]
        problems: list[Problem] = []
        if len(self.principals) > MAX_ACCESS_PRINCIPALS:
            problems.append(
                Problem(
                    path,
                    len(self.principals),
                    f"at most {MAX_ACCESS_PRINCIPALS} principals are allowed",
                    "trust one role that the team's people assume instead of each of them",
                )
            )
        seen: dict[tuple[str, str, str], int] = {}
        for index, principal in enumerate(self.principals):
            item = f"{path}[{index}]"
            if (reason := _principal_reason(principal)) is not None:
                problems.append(Problem(item, principal, reason, _PRINCIPAL_FIX))
                continue
            parsed = _parsed(principal)
            problems += _created_problem(
                item, "principals", principal, parsed.name, "roles and users"
            )
            identity = parsed.identity
            if identity in seen:
                problems.append(
                    Problem(
                        item,
                        principal,
                        f"the same principal as principals[{seen[identity]}]",
                        "list each principal once",
                    )
                )
            seen.setdefault(identity, index)
        return problems


def _parsed(principal: str) -> IamPrincipal:
    parsed = parse_iam_principal(principal)
    if parsed is None:
        raise ValueError(f"not a valid principal: {principal!r}")
    return parsed


def shared_access_problems(entries: Iterable[tuple[str, TeamAccess]]) -> list[Problem]:
    """Existing execution roles or bucket locations that more than one team names.

    ``entries``: ``(field path of the access block, access)``, in file order, across one
    organisation or several (a role or bucket is shared whichever stacks name it). Invalid
    values are skipped: :meth:`TeamAccess.problems` reports those.
    """
    problems: list[Problem] = []
    roles: dict[tuple[str, str, str], str] = {}
    buckets: list[tuple[BucketLocation, str]] = []
    for path, access in entries:
        role_ok = _execution_role_reason(access.execution_role) is None
        if role_ok and not access.creates_execution_role:
            identity = _parsed(access.execution_role).identity
            if identity in roles:
                problems.append(
                    Problem(
                        join_path(path, "execution_role"),
                        access.execution_role,
                        f"{roles[identity]} names the same execution role; "
                        "a team boundary must not share a role",
                        "give each team its own execution role, or write 'create'",
                    )
                )
            roles.setdefault(identity, join_path(path, "execution_role"))
        location = access.existing_bucket if _bucket_reason(access.bucket) is None else None
        if location is not None:
            other = next((where for loc, where in buckets if loc.overlaps(location)), None)
            if other is not None:
                problems.append(
                    Problem(
                        join_path(path, "bucket"),
                        access.bucket,
                        f"overlaps {other}: two teams would read and write the same objects",
                        "give each team its own bucket or a prefix that does not contain "
                        "another team's, or write 'create'",
                    )
                )
            buckets.append((location, join_path(path, "bucket")))
    return problems
