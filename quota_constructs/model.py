"""Pure domain model of AWS Batch quota management (no aws_cdk, no boto3).

Every rule about quota shares, job queues and service jobs lives here once. The config loader,
constructs, emulator, simulator, advisor and runtime all call these functions, so a
configuration one of them rejects is rejected by all of them with the same message.

Sources for each rule: ``shared/reference/aws-batch-quota-semantics.md`` (sections 1 and 2;
team access: section 3), IAM's and S3's naming rules for principals, roles and buckets, AWS's
tagging rules, CloudFormation's and CDK's stack-description limits, and botocore's list of
SageMaker training instance types (``data/sagemaker_training_instance_types.txt``). Every field
has an upper bound: AWS's where it documents one, a stated one (``MAX_*`` docstrings) where not.
"""

from __future__ import annotations

import difflib
import math
import re
import reprlib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

# --- limits (reference section 1) -------------------------------------------------------------

MAX_SHARES_PER_QUEUE = 20
MIN_CAPACITY_LIMITS_PER_SHARE = 1
MAX_CAPACITY_LIMITS_PER_SHARE = 5
UNLIMITED_BORROW = -1
QUEUE_PRIORITY_RANGE = (0, 1000)
SCHEDULING_PRIORITY_RANGE = (0, 9999)
RUNNABLE_TIMEOUT_MINUTES_RANGE = (10, 1440)
MAX_PAYLOAD_BYTES = 10 * 1024
MAX_TAGS = 50
TEAM_TAG_KEY = "quota-team"
"""The tag every team's quota share and service jobs carry (value ``<organisation>/<share>``,
built in ``contracts``): reserved, and one of the 50 tags of a share with team access."""
MAX_TAG_KEY_LENGTH = 128
MAX_TAG_VALUE_LENGTH = 256
MAX_ORGANISATION_NAME_LENGTH = 64
RETRY_ATTEMPTS_RANGE = (1, 10)
MAX_STATUS_REASON_PATTERN = 512
MAX_INSTANCES_PER_TYPE = 10_000
"""Stated limit (AWS documents no maximum for ``maxCapacity``): instances of one type in a
share, and in the service environment (the sum of the shares' limits per type)."""
MAX_BORROW_LIMIT = 100 * MAX_INSTANCES_PER_TYPE
"""Stated limit (AWS documents none): a share of one instance borrowing a whole pool of
``MAX_INSTANCES_PER_TYPE``; a larger percent borrows nothing more (write -1 for unlimited)."""
MAX_STACK_DESCRIPTION_CHARS = 512
"""CDK refuses a stack description longer than 512 JavaScript characters (UTF-16 units)."""
MAX_STACK_DESCRIPTION_BYTES = 1024
"""CloudFormation's template ``Description``: at most 1,024 bytes."""
MAX_ORGANISATION_DESCRIPTION_CHARS = 400
"""The stack description is ``Quota-managed SageMaker training queue of <name>: <description>``
(at most 108 characters before the description), so 400 UTF-16 units keep it within CDK's 512."""
MAX_ORGANISATION_DESCRIPTION_BYTES = 900
"""... and 900 UTF-8 bytes within CloudFormation's 1,024 bytes."""
MAX_SHARE_DESCRIPTION_CHARS = 4096
"""Stated limit: a share's description is kept in the file only (the stack does not send it)."""
TAG_CHARACTERS = "_.:/=+-@"
"""Besides Unicode letters, digits and spaces, the characters AWS's tagging rules allow."""

NAME_BODY = r"[A-Za-z0-9_-]{1,128}"
"""Quota share (and job queue) names; also the JSON Schema's pattern."""
ORGANISATION_BODY = rf"[A-Za-z][A-Za-z0-9-]{{0,{MAX_ORGANISATION_NAME_LENGTH - 1}}}"
"""Organisation names (they name stacks and SSM paths); also the JSON Schema's pattern."""
NAME_PATTERN = re.compile(rf"\A{NAME_BODY}\Z")
ORGANISATION_PATTERN = re.compile(rf"\A{ORGANISATION_BODY}\Z")
INSTANCE_TYPES_FILE = "data/sagemaker_training_instance_types.txt"

# --- AWS statusReason strings for RUNNABLE jobs that can never fit (reference 2.6) -------------

REASON_SE_MAX = (
    "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - Service environment(s) associated with "
    "the job queue cannot meet the capacity requirement of the job."
)
REASON_SHARE_LIMIT = (
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requirements exceed quota share "
    "capacity limits."
)
REASON_SHARE_AND_BORROW_LIMIT = (
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requirements exceed quota share "
    "capacity limits and borrow limits."
)
REASON_BORROWABLE = (
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Job requires borrowing that exceeds all "
    "configured borrowable capacity."
)
MISCONFIGURATION_REASONS = (
    "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED",
)


class SharingStrategy(StrEnum):
    """How a quota share treats idle capacity (``resourceSharingConfiguration.strategy``)."""

    RESERVE = "RESERVE"
    """Idle capacity stays reserved for the share; never lent, never borrows."""
    LEND = "LEND"
    """Idle capacity may be lent to borrowing shares; reclaimed by cross-share preemption."""
    LEND_AND_BORROW = "LEND_AND_BORROW"
    """Lends idle capacity and borrows others' idle capacity up to the borrow limit."""

    @property
    def lends(self) -> bool:
        return self is not SharingStrategy.RESERVE

    @property
    def borrows(self) -> bool:
        return self is SharingStrategy.LEND_AND_BORROW


class ShareState(StrEnum):
    """``ENABLED`` accepts new jobs; ``DISABLED`` accepts none, submitted jobs may finish."""

    ENABLED = "ENABLED"
    DISABLED = "DISABLED"


MAX_SHOWN_CHARS = 80
"""Longest value, path or text a message shows; longer ones are cut with their length."""
MAX_LISTED_PROBLEMS = 50
"""Most problems one error message lists (``QuotaConfigError.problems`` keeps them all)."""


class _BoundedRepr(reprlib.Repr):
    """``reprlib`` with integers bounded too (``repr`` of a huge int is slow or refused)."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 200:
            return f"<an integer of {len(str(x.bit_length()))}+ digits in binary>"
        return super().repr_int(x, level)


_REPR = _BoundedRepr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple = 3, 5, 5, 5
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 40, 40, 40


def one_line(text: str) -> str:
    """``text`` with line breaks and other unprintable characters escaped as in ``repr``."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def clip(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` or its first ``limit`` characters, an ellipsis and the original length."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def bounded_repr(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """``repr(value)`` of bounded size, without ever building the repr of a huge value."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value)} characters)"
    if isinstance(value, Mapping):
        value = dict(value)
    if isinstance(value, (dict, list, tuple, set, frozenset, int, float, bool, type(None))):
        text = _REPR.repr(value)
    else:
        text = _REPR.repr(repr(value)[: limit + 1])[1:-1]
    text = text if len(text) <= 2 * limit else f"{text[: 2 * limit]}…"
    if isinstance(value, (dict, list, tuple, set, frozenset)) and len(value) > _REPR.maxlist:
        text += f" ({len(value)} items)"
    return text


@dataclass(frozen=True)
class Problem:
    """One violated rule: where (field path), what value, what is wrong and how to fix it.

    ``line``: the line of the field in its file, when known. ``str()`` is bounded: long values,
    paths and texts are cut (their length shown), so a hostile value cannot flood a message.
    """

    path: str
    value: Any
    message: str
    fix: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        path, message = clip(self.path, 2 * MAX_SHOWN_CHARS), clip(self.message, 400)
        return one_line(
            f"{where}{path}: {message} (got {bounded_repr(self.value)}); fix: {clip(self.fix, 400)}"
        )


class QuotaConfigError(ValueError):
    """A quota configuration or request breaks one or more rules; ``problems`` lists them all.

    The message lists at most ``MAX_LISTED_PROBLEMS`` of them, then how many more there are.
    """

    def __init__(self, problems: Iterable[Problem], *, context: str = "") -> None:
        self.problems = tuple(problems)
        self.context = context
        lines = [str(p) for p in self.problems[:MAX_LISTED_PROBLEMS]]
        if len(self.problems) > MAX_LISTED_PROBLEMS:
            lines.append(f"... and {len(self.problems) - MAX_LISTED_PROBLEMS} more problems")
        head = f"{one_line(clip(context, 4 * MAX_SHOWN_CHARS))}: " if context else ""
        if len(self.problems) == 1:
            super().__init__(head + lines[0])
        else:
            count = len(self.problems)
            super().__init__(head + f"{count} problems:\n  - " + "\n  - ".join(lines))


def raise_if(problems: list[Problem], *, context: str = "") -> None:
    """Raise :class:`QuotaConfigError` when ``problems`` is not empty."""
    if problems:
        raise QuotaConfigError(problems, context=context)


def _join(prefix: str, name: str) -> str:
    if not prefix:
        return name
    return f"{prefix}{name}" if name.startswith("[") else f"{prefix}.{name}"


# --- single-field rules -----------------------------------------------------------------------


def check_name(value: Any, path: str, *, what: str = "name") -> list[Problem]:
    """Batch resource names: 1-128 letters, digits, hyphens and underscores."""
    if not isinstance(value, str) or not NAME_PATTERN.fullmatch(value):
        return [
            Problem(
                path,
                value,
                f"{what} must be 1-128 characters of letters, digits, '-' or '_'",
                "rename it, e.g. replace spaces and dots with '-'",
            )
        ]
    return []


@cache
def training_instance_types() -> tuple[str, ...]:
    """SageMaker training instance types, from botocore's ``TrainingInstanceType`` enum.

    Read from the package's data file (``INSTANCE_TYPES_FILE``; its header names the botocore
    version and date it was generated from, by ``tools/gen_instance_types.py``).
    """
    text = resources.files(__package__ or "quota_constructs").joinpath(INSTANCE_TYPES_FILE)
    lines = text.read_text(encoding="utf-8").splitlines()
    return tuple(line for line in lines if line and not line.startswith("#"))


@cache
def _instance_type_source() -> str:
    text = resources.files(__package__ or "quota_constructs").joinpath(INSTANCE_TYPES_FILE)
    header = text.read_text(encoding="utf-8").split("\n", 3)[:2]
    match = re.search(r"botocore [0-9.]+", " ".join(header))
    return match[0] if match else "botocore"


def nearest_instance_types(value: str, count: int = 3) -> list[str]:
    """The known training instance types closest to ``value`` (none for long garbage)."""
    if len(value) > 64:
        return []
    known = training_instance_types()
    return difflib.get_close_matches(value.strip().lower(), known, n=count, cutoff=0.6)


def check_instance_type(value: Any, path: str) -> list[Problem]:
    """A SageMaker training instance type ``ml.<family>.<size>`` of botocore's list."""
    if isinstance(value, str) and value in _known_instance_types():
        return []
    nearest = nearest_instance_types(value) if isinstance(value, str) else []
    stray_space = isinstance(value, str) and value.strip() in _known_instance_types()
    message = (
        "capacity unit must be a SageMaker training instance type 'ml.<family>.<size>' of the "
        f"TrainingInstanceType list ({_instance_type_source()})"
        + ("; this one has spaces or line breaks around it" if stray_space else "")
    )
    fix = f"did you mean {' or '.join(nearest)}?" if nearest else "use a type such as ml.g5.xlarge"
    listed = f"{fix} (every type: quota_constructs/{INSTANCE_TYPES_FILE})"
    return [Problem(path, value, message, listed)]


@cache
def _known_instance_types() -> frozenset[str]:
    return frozenset(training_instance_types())


def check_int_range(
    value: Any, path: str, low: int, high: int | None, *, what: str
) -> list[Problem]:
    """Integer in ``[low, high]`` (``high=None``: no upper bound); booleans are not integers."""
    ok = isinstance(value, int) and not isinstance(value, bool)
    if ok and value >= low and (high is None or value <= high):
        return []
    bound = f"between {low} and {high}" if high is not None else f"at least {low}"
    return [Problem(path, value, f"{what} must be an integer {bound}", f"set it {bound}")]


def check_capacity_limit(
    instance_type: Any,
    count: Any,
    *,
    type_path: str,
    count_path: str,
    what: str = "max capacity",
) -> list[Problem]:
    """One capacity limit: a training instance type and 1 to ``MAX_INSTANCES_PER_TYPE``.

    The one capacity check of shares, service environments and the emulator's requests; each
    caller names the fields as its input spells them.
    """
    return check_instance_type(instance_type, type_path) + check_int_range(
        count, count_path, 1, MAX_INSTANCES_PER_TYPE, what=what
    )


def check_scheduling_priority(value: Any, path: str = "schedulingPriority") -> list[Problem]:
    """``schedulingPriority`` on submit and update: 0-9999, higher is scheduled first."""
    low, high = SCHEDULING_PRIORITY_RANGE
    return check_int_range(value, path, low, high, what="scheduling priority")


def _is_tag_text(text: str) -> bool:
    """AWS tagging rules: Unicode letters, digits and spaces, and ``_ . : / = + - @``."""
    return all(c in TAG_CHARACTERS or unicodedata.category(c)[0] in "LNZ" for c in text)


_TAG_CHARS_TEXT = "letters, digits, spaces and _ . : / = + - @"


def _tag_key_reason(key: Any) -> str | None:
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_TAG_KEY_LENGTH:
        return f"tag keys must be 1-{MAX_TAG_KEY_LENGTH} characters"
    if key.lower().startswith("aws:"):
        return "tag keys may not start with 'aws:' (reserved for AWS)"
    if not _is_tag_text(key):
        return f"tag keys may contain only {_TAG_CHARS_TEXT} (AWS tagging rules)"
    return None


def _tag_value_reason(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > MAX_TAG_VALUE_LENGTH:
        return f"tag values must be text of at most {MAX_TAG_VALUE_LENGTH} characters"
    if not _is_tag_text(value):
        return f"tag values may contain only {_TAG_CHARS_TEXT} (AWS tagging rules)"
    return None


def check_tags(tags: Mapping[str, str], path: str = "tags") -> list[Problem]:
    """AWS tagging rules: at most 50 tags; keys 1-128 characters, values at most 256, both of
    letters, digits, spaces and ``_ . : / = + - @``; no ``aws:`` prefix; keys unique ignoring
    case (IAM, which tags the teams' roles, treats keys so)."""
    problems: list[Problem] = []
    if len(tags) > MAX_TAGS:
        problems.append(
            Problem(path, len(tags), f"at most {MAX_TAGS} tags are allowed", "remove some tags")
        )
    seen: dict[str, str] = {}
    for key, val in tags.items():
        item = f"{path}.{key}"
        if (reason := _tag_key_reason(key)) is not None:
            problems.append(Problem(item, key, reason, "rename the tag key"))
        elif key.lower() in seen:
            problems.append(
                Problem(
                    item,
                    key,
                    f"tag keys must differ by more than case: {seen[key.lower()]!r} is also a key",
                    "keep one of the two keys",
                )
            )
        if isinstance(key, str):
            seen.setdefault(key.lower(), key)
        if (reason := _tag_value_reason(val)) is not None:
            problems.append(Problem(item, val, reason, "shorten it or quote it as a string"))
    return problems


def _utf16_length(text: str) -> int:
    """Length as JavaScript (and so CDK) counts it: characters beyond U+FFFF count twice."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def check_description(
    value: Any, path: str, *, max_chars: int, max_bytes: int | None = None, what: str
) -> list[Problem]:
    """Free text: no control characters but tab and newline, at most ``max_chars`` characters
    (UTF-16 units, as CDK counts them) and ``max_bytes`` bytes in UTF-8."""
    if not isinstance(value, str):
        return [Problem(path, value, f"{what} must be text", "quote it")]
    bad = next((c for c in value if _bad_text_char(c)), None)
    if bad is not None:
        return [
            Problem(
                path,
                value,
                f"{what} contains the control or unpaired surrogate character U+{ord(bad):04X}",
                "remove it; only tab and newline are allowed besides printable text",
            )
        ]
    size = len(value.encode("utf-8"))
    if _utf16_length(value) > max_chars or (max_bytes is not None and size > max_bytes):
        limit = f"{max_chars} characters" + (f" and {max_bytes} UTF-8 bytes" if max_bytes else "")
        return [
            Problem(
                path,
                value,
                f"{what} is {_utf16_length(value)} characters ({size} UTF-8 bytes); the most "
                f"allowed is {limit} (emoji count twice)",
                "shorten it",
            )
        ]
    return []


def _bad_text_char(char: str) -> bool:
    return char not in "\t\n" and unicodedata.category(char) in ("Cc", "Cs")


# --- team access (reference section 3) -------------------------------------------------------

CREATE = "create"
"""``execution_role: create`` / ``bucket: create``: the stack makes the resource for the team."""
MAX_ACCESS_PRINCIPALS = 10
"""Stated limit (not AWS's): a team is a few roles or accounts, and IAM limits a role's trust
policy to 2,048 characters by default."""
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
    ``"create"`` or an existing bucket's name, optionally ``name/prefix``.
    """

    principals: tuple[str, ...]
    max_priority: int | None = None
    execution_role: str = CREATE
    bucket: str = CREATE

    def __post_init__(self) -> None:
        object.__setattr__(self, "principals", tuple(self.principals))

    @property
    def creates_execution_role(self) -> bool:
        return self.execution_role == CREATE

    @property
    def creates_bucket(self) -> bool:
        return self.bucket == CREATE

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
        problems = self._principal_problems(_join(path, "principals"))
        if self.max_priority is not None:
            low, high = SCHEDULING_PRIORITY_RANGE
            problems += check_int_range(
                self.max_priority,
                _join(path, "max_priority"),
                low,
                high,
                what="max_priority (the highest schedulingPriority the team may set)",
            )
        if (reason := _execution_role_reason(self.execution_role)) is not None:
            problems.append(
                Problem(_join(path, "execution_role"), self.execution_role, reason, _ROLE_FIX)
            )
        if (reason := _bucket_reason(self.bucket)) is not None:
            problems.append(Problem(_join(path, "bucket"), self.bucket, reason, _BUCKET_FIX))
        return problems

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
            identity = _parsed(principal).identity
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
                        _join(path, "execution_role"),
                        access.execution_role,
                        f"{roles[identity]} names the same execution role; "
                        "a team boundary must not share a role",
                        "give each team its own execution role, or write 'create'",
                    )
                )
            roles.setdefault(identity, _join(path, "execution_role"))
        location = access.existing_bucket if _bucket_reason(access.bucket) is None else None
        if location is not None:
            other = next((where for loc, where in buckets if loc.overlaps(location)), None)
            if other is not None:
                problems.append(
                    Problem(
                        _join(path, "bucket"),
                        access.bucket,
                        f"overlaps {other}: two teams would read and write the same objects",
                        "give each team its own bucket or a prefix that does not contain "
                        "another team's, or write 'create'",
                    )
                )
            buckets.append((location, _join(path, "bucket")))
    return problems


# --- notifications (organisation file ``notifications:``, also per share) ----------------------

MAX_SUBSCRIPTIONS = 25
"""Subscriptions per organisation file, the organisation's and every share's together (a
stated bound: each is one CloudFormation resource, and a stack holds at most 500)."""
MAX_ENDPOINT_LENGTH = 2048
EMAIL_BODY = r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
HTTPS_BODY = r"https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[^\s]*)?"
SQS_ARN_BODY = r"arn:aws(?:-[a-z]+)*:sqs:[a-z]{2}(?:-[a-z]+)+-[0-9]:[0-9]{12}:[A-Za-z0-9_-]{1,80}"
_SUBSCRIPTION_RULES = {
    # kind -> (pattern, what it is not, fix)
    "email": (re.compile(EMAIL_BODY), "not an email address", "write e.g. ml-platform@example.com"),
    "https": (
        re.compile(HTTPS_BODY),
        "not an https:// URL (SNS delivers to HTTPS endpoints only here)",
        "write e.g. https://hooks.example.com/quota",
    ),
    "sqs": (
        re.compile(SQS_ARN_BODY),
        "not a standard SQS queue ARN (a standard SNS topic cannot deliver to a .fifo queue)",
        "write arn:aws:sqs:<region>:<12-digit account>:<queue name>",
    ),
}


@dataclass(frozen=True)
class Subscribers:
    """Who is told of preemptions and FAILED jobs (organisation file ``notifications:``).

    ``email``: addresses (each confirms by email); ``https``: endpoints (each confirms the
    SubscriptionConfirmation request); ``sqs``: standard queue ARNs, whose queue policy must let
    ``sns.amazonaws.com`` send from the topic. On a share they hear of that share's jobs only.
    """

    email: tuple[str, ...] = ()
    https: tuple[str, ...] = ()
    sqs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for kind in _SUBSCRIPTION_RULES:
            object.__setattr__(self, kind, tuple(getattr(self, kind)))

    @property
    def endpoints(self) -> tuple[tuple[str, str], ...]:
        """``(protocol, endpoint)`` of every subscriber: protocol ``email``, ``https``, ``sqs``."""
        return tuple((kind, value) for kind in _SUBSCRIPTION_RULES for value in getattr(self, kind))

    def problems(self, path: str = "notifications") -> list[Problem]:
        """Malformed or repeated endpoints."""
        problems: list[Problem] = []
        for kind, (pattern, what, fix) in _SUBSCRIPTION_RULES.items():
            seen: set[str] = set()
            for index, value in enumerate(getattr(self, kind)):
                item = f"{_join(path, kind)}[{index}]"
                ok = isinstance(value, str) and len(value) <= MAX_ENDPOINT_LENGTH
                if not ok or not pattern.fullmatch(value):
                    problems.append(Problem(item, value, what, fix))
                elif value.lower() in seen:
                    problems.append(
                        Problem(item, value, "listed twice", "remove the repeated entry")
                    )
                seen.add(value.lower() if isinstance(value, str) else "")
        return problems


def subscription_count_problems(org_count: int, share_counts: int) -> list[Problem]:
    """The organisation's and its shares' subscriptions together stay within the bound."""
    total = org_count + share_counts
    if total <= MAX_SUBSCRIPTIONS:
        return []
    return [
        Problem(
            "notifications",
            total,
            f"at most {MAX_SUBSCRIPTIONS} subscriptions per organisation file (the "
            "organisation's and every share's together)",
            "subscribe a mailing list or one SQS queue that fans out, instead of each person",
        )
    ]


# --- quota share ------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuotaShareSpec:
    """A quota share: capacity limits per instance type, sharing strategy, preemption settings.

    ``borrow_limit`` is a percent of the share's own ``max_capacity`` for each instance type;
    ``None`` means "not set", which for ``LEND_AND_BORROW`` is ``-1`` (unlimited). ``0`` is kept.
    """

    name: str
    capacity: Mapping[str, int]
    strategy: SharingStrategy
    borrow_limit: int | None = None
    in_share_preemption: bool = False
    state: ShareState = ShareState.ENABLED
    description: str = ""
    access: TeamAccess | None = None
    """Team access (submitter role, execution role, bucket); ``None``: the stack makes none."""
    notifications: Subscribers = field(default_factory=Subscribers)
    """Who hears of this share's preemptions and FAILED jobs (besides the organisation's)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "capacity", MappingProxyType(dict(self.capacity)))
        object.__setattr__(self, "strategy", SharingStrategy(self.strategy))
        object.__setattr__(self, "state", ShareState(self.state))

    @property
    def effective_borrow_limit(self) -> int | None:
        """Borrow limit as sent to AWS: ``-1`` = unlimited, ``None`` = share cannot borrow."""
        if not self.strategy.borrows:
            return None
        return UNLIMITED_BORROW if self.borrow_limit is None else self.borrow_limit

    def limit(self, instance_type: str) -> int:
        """Own capacity limit for ``instance_type`` (0 when the share has no limit for it)."""
        return self.capacity.get(instance_type, 0)

    def borrow_cap(self, instance_type: str) -> float:
        """Most instances of ``instance_type`` this share may borrow (``inf`` when unlimited)."""
        limit = self.effective_borrow_limit
        own = self.limit(instance_type)
        if limit is None or own == 0:
            return 0
        if limit == UNLIMITED_BORROW:
            return math.inf
        return (own * limit) // 100

    def problems(self, path: str = "") -> list[Problem]:
        """Every rule this share breaks on its own (queue-level rules are on QueueSpec)."""
        problems = check_name(self.name, _join(path, "name"), what="quota share name")
        cap_path = _join(path, "capacity")
        count = len(self.capacity)
        if not MIN_CAPACITY_LIMITS_PER_SHARE <= count <= MAX_CAPACITY_LIMITS_PER_SHARE:
            problems.append(
                Problem(
                    cap_path,
                    dict(self.capacity),
                    f"a quota share needs 1 to 5 capacity limits (instance types), got {count}",
                    "list between one and five instance types with their instance counts",
                )
            )
        for itype, count_ in self.capacity.items():
            item = f"{cap_path}.{itype}"
            problems += check_capacity_limit(
                itype, count_, type_path=item, count_path=item, what="max capacity (instances)"
            )
        if self.borrow_limit is not None:
            bl_path = _join(path, "borrow_limit")
            if not self.strategy.borrows:
                problems.append(
                    Problem(
                        bl_path,
                        self.borrow_limit,
                        f"borrow_limit is only allowed with strategy LEND_AND_BORROW, "
                        f"not {self.strategy.value}",
                        "remove borrow_limit or set strategy: LEND_AND_BORROW",
                    )
                )
            else:
                problems += check_int_range(
                    self.borrow_limit,
                    bl_path,
                    UNLIMITED_BORROW,
                    MAX_BORROW_LIMIT,
                    what="borrow limit (percent; -1 = unlimited)",
                )
        if self.description:
            problems += check_description(
                self.description,
                _join(path, "description"),
                max_chars=MAX_SHARE_DESCRIPTION_CHARS,
                what="a share's description",
            )
        if self.access is not None:
            problems += self.access.problems(_join(path, "access"))
        problems += self.notifications.problems(_join(path, "notifications"))
        return problems


# --- queue ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobQueueSpec:
    """A quota-managed SAGEMAKER_TRAINING job queue and its quota shares."""

    shares: tuple[QuotaShareSpec, ...]
    priority: int = 1
    runnable_timeout_minutes: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shares", tuple(self.shares))

    def share(self, name: str) -> QuotaShareSpec:
        """The share called ``name``; ``KeyError`` naming the known shares otherwise."""
        for share in self.shares:
            if share.name == name:
                return share
        known = ", ".join(s.name for s in self.shares) or "none"
        raise KeyError(f"no quota share {name!r} on this queue (shares: {known})")

    def service_environment_capacity(self) -> dict[str, int]:
        """Capacity of the service environment: the sum of the shares' limits per instance type."""
        total: dict[str, int] = {}
        for share in self.shares:
            for itype, count in share.capacity.items():
                total[itype] = total.get(itype, 0) + count
        return dict(sorted(total.items()))

    def lendable(self, instance_type: str, *, excluding: str) -> int:
        """Configured capacity of ``instance_type`` that other lending shares could lend."""
        return sum(
            s.limit(instance_type) for s in self.shares if s.name != excluding and s.strategy.lends
        )

    def max_usable(self, share_name: str, instance_type: str) -> int:
        """Most instances of ``instance_type`` share ``share_name`` can ever hold at once.

        Own limit, plus (LEND_AND_BORROW only) borrowing capped by the borrow limit and by the
        configured capacity of the other LEND / LEND_AND_BORROW shares. A share with no limit
        for the type cannot run it at all (reference 2.4, INFERRED).
        """
        share = self.share(share_name)
        own = share.limit(instance_type)
        lendable = self.lendable(instance_type, excluding=share.name)
        borrowable = min(share.borrow_cap(instance_type), lendable)
        return own + int(borrowable)

    def infeasibility(
        self,
        share_name: str,
        demand: Mapping[str, int],
        *,
        service_environment: Mapping[str, int] | None = None,
    ) -> str | None:
        """The AWS ``statusReason`` if a job needing ``demand`` can never run in the share.

        Checks, in AWS's order: service environment maximum, own limit (RESERVE / LEND),
        own limit times the borrow limit, then all configured borrowable capacity.
        ``service_environment``: its capacity when set apart from the shares (default: the sum
        of the shares' limits, as the constructs size it).
        """
        share = self.share(share_name)
        se = (
            dict(service_environment)
            if service_environment is not None
            else self.service_environment_capacity()
        )
        for itype, count in demand.items():
            if count > se.get(itype, 0):
                return REASON_SE_MAX
        for itype, count in demand.items():
            own = share.limit(itype)
            if count <= own:
                continue
            if not share.strategy.borrows or own == 0:
                return REASON_SHARE_LIMIT
            if count > own + share.borrow_cap(itype):
                return REASON_SHARE_AND_BORROW_LIMIT
            if count > own + self.lendable(itype, excluding=share.name):
                return REASON_BORROWABLE
        return None

    def problems(self, path: str = "") -> list[Problem]:
        """Every rule the queue and its shares break, with field paths below ``path``."""
        problems: list[Problem] = []
        low, high = QUEUE_PRIORITY_RANGE
        problems += check_int_range(
            self.priority, _join(path, "job_queue.priority"), low, high, what="job queue priority"
        )
        if self.runnable_timeout_minutes is not None:
            low, high = RUNNABLE_TIMEOUT_MINUTES_RANGE
            problems += check_int_range(
                self.runnable_timeout_minutes,
                _join(path, "job_queue.runnable_timeout_minutes"),
                low,
                high,
                what="runnable timeout (minutes)",
            )
        shares_path = _join(path, "shares")
        if not 1 <= len(self.shares) <= MAX_SHARES_PER_QUEUE:
            problems.append(
                Problem(
                    shares_path,
                    len(self.shares),
                    f"a quota-managed job queue needs 1 to {MAX_SHARES_PER_QUEUE} quota shares",
                    "split the teams over several organisations"
                    if self.shares
                    else "declare at least one share",
                )
            )
        problems += self._pool_problems(shares_path)
        seen: dict[str, int] = {}
        for index, share in enumerate(self.shares):
            share_path = f"{shares_path}[{index}]"
            problems += share.problems(share_path)
            if share.name in seen:
                problems.append(
                    Problem(
                        f"{share_path}.name",
                        share.name,
                        f"quota share names must be unique in a queue; shares[{seen[share.name]}] "
                        "has the same name",
                        "give each share its own name",
                    )
                )
            seen.setdefault(share.name, index)
        problems += shared_access_problems(
            (f"{shares_path}[{index}].access", share.access)
            for index, share in enumerate(self.shares)
            if share.access is not None
        )
        return problems

    def _pool_problems(self, shares_path: str) -> list[Problem]:
        """The service environment (the sum of the shares per type) within the stated bound."""
        totals: dict[str, int] = {}
        for share in self.shares:
            for itype, count in share.capacity.items():
                if isinstance(count, int) and 1 <= count <= MAX_INSTANCES_PER_TYPE:
                    totals[itype] = totals.get(itype, 0) + count
        return [
            Problem(
                shares_path,
                total,
                f"the shares' capacity limits for {clip(str(itype))} add up to {total} instances; "
                f"the service environment allows at most {MAX_INSTANCES_PER_TYPE} of a type",
                "lower the shares' capacity for that type",
            )
            for itype, total in totals.items()
            if total > MAX_INSTANCES_PER_TYPE
        ]

    def validate(self, *, context: str = "") -> JobQueueSpec:
        """Return self, or raise :class:`QuotaConfigError` listing every problem."""
        raise_if(self.problems(), context=context)
        return self


# --- organisation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Organisation:
    """One organisation: a quota-managed queue, its shares and tags. One CDK stack each."""

    name: str
    queue: JobQueueSpec
    description: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)
    notifications: Subscribers = field(default_factory=Subscribers)
    """Who hears of every share's preemptions and FAILED jobs."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "tags", MappingProxyType(dict(self.tags)))

    def problems(self) -> list[Problem]:
        problems: list[Problem] = []
        if not isinstance(self.name, str) or not ORGANISATION_PATTERN.fullmatch(self.name):
            problems.append(
                Problem(
                    "organisation",
                    self.name,
                    "organisation names are 1-64 letters, digits and '-', starting with a letter",
                    "rename it, e.g. 'research-eu'",
                )
            )
        if self.description:
            problems += check_description(
                self.description,
                "description",
                max_chars=MAX_ORGANISATION_DESCRIPTION_CHARS,
                max_bytes=MAX_ORGANISATION_DESCRIPTION_BYTES,
                what="the organisation's description (it goes into the stack description)",
            )
        problems += check_tags(self.tags)
        problems += self._team_tag_problems()
        problems += self.queue.problems()
        problems += self.notifications.problems()
        problems += subscription_count_problems(
            len(self.notifications.endpoints),
            sum(len(s.notifications.endpoints) for s in self.queue.shares),
        )
        return problems

    def _team_tag_problems(self) -> list[Problem]:
        """The team tag is reserved, and it is one more tag on every share with team access."""
        problems = [
            Problem(
                f"tags.{key}",
                key,
                f"tag key {TEAM_TAG_KEY!r} is reserved: the stack sets it on each team's share",
                "rename the tag",
            )
            for key in self.tags
            if isinstance(key, str) and key.lower() == TEAM_TAG_KEY
        ]
        if any(s.access is not None for s in self.queue.shares) and len(self.tags) >= MAX_TAGS:
            problems.append(
                Problem(
                    "tags",
                    len(self.tags),
                    f"at most {MAX_TAGS - 1} tags when a share has an access block: its quota "
                    f"share also carries the team tag {TEAM_TAG_KEY!r} (AWS allows {MAX_TAGS})",
                    f"remove {len(self.tags) - MAX_TAGS + 1} tag(s)",
                )
            )
        return problems

    def validate(self, *, context: str = "") -> Organisation:
        """Return self, or raise :class:`QuotaConfigError` listing every problem."""
        raise_if(self.problems(), context=context)
        return self


# --- service jobs -----------------------------------------------------------------------------


class JobStatus(StrEnum):
    """Service-job states, AWS names (reference 2.3); ``PENDING`` is unused by service jobs."""

    SUBMITTED = "SUBMITTED"
    PENDING = "PENDING"
    RUNNABLE = "RUNNABLE"
    SCHEDULED = "SCHEDULED"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"

    @property
    def is_active(self) -> bool:
        """Not finished yet (``SUBMITTED`` .. ``RUNNING``)."""
        return self in ACTIVE_STATUSES

    @property
    def is_dispatched(self) -> bool:
        """``SCHEDULED``, ``STARTING`` or ``RUNNING``: holds capacity and is preemptible."""
        return self in DISPATCHED_STATUSES

    @property
    def is_terminal(self) -> bool:
        """``SUCCEEDED`` or ``FAILED``."""
        return self in TERMINAL_STATUSES


ACTIVE_STATUSES: tuple[JobStatus, ...] = (
    JobStatus.SUBMITTED,
    JobStatus.PENDING,
    JobStatus.RUNNABLE,
    JobStatus.SCHEDULED,
    JobStatus.STARTING,
    JobStatus.RUNNING,
)
DISPATCHED_STATUSES: tuple[JobStatus, ...] = (
    JobStatus.SCHEDULED,
    JobStatus.STARTING,
    JobStatus.RUNNING,
)
TERMINAL_STATUSES: tuple[JobStatus, ...] = (JobStatus.SUCCEEDED, JobStatus.FAILED)


def check_job_settings(retry_attempts: Any, preemption_retries: Any) -> list[Problem]:
    """``retryStrategy.attempts`` 1-10 (``None``: not sent, one attempt) and
    ``preemptionRetriesBeforeTermination`` >= 0 (``None``: unlimited requeues)."""
    problems: list[Problem] = []
    if retry_attempts is not None:
        low, high = RETRY_ATTEMPTS_RANGE
        problems += check_int_range(
            retry_attempts, "retryStrategy.attempts", low, high, what="retry attempts"
        )
    if preemption_retries is not None:
        problems += check_int_range(
            preemption_retries,
            "preemptionConfiguration.preemptionRetriesBeforeTermination",
            0,
            None,
            what="preemption retries",
        )
    return problems


class RetryAction(StrEnum):
    """What ``retryStrategy.evaluateOnExit`` does with a failed attempt whose reason matches."""

    RETRY = "RETRY"
    EXIT = "EXIT"


@dataclass(frozen=True)
class ExitRule:
    """One ``evaluateOnExit`` entry: ``action`` when the ``statusReason`` matches the glob."""

    action: RetryAction
    on_status_reason: str


def status_reason_matches(pattern: str, reason: str) -> bool:
    """AWS's ``onStatusReason`` glob: the whole reason, exactly; a pattern ending with ``*``
    needs only "the start of the string" to match (every other character is literal)."""
    if pattern.endswith("*"):
        return reason.startswith(pattern[:-1])
    return reason == pattern


def exit_action(rules: Iterable[ExitRule], reason: str) -> RetryAction:
    """What a failed attempt with ``reason`` gets: the action of the first matching rule, and
    ``RETRY`` when none matches ("If none of the listed conditions match, then the job is
    retried"). Whether an attempt is left to retry with is the caller's to check."""
    for rule in rules:
        if status_reason_matches(rule.on_status_reason, reason):
            return rule.action
    return RetryAction.RETRY


def check_exit_rules(
    rules: Iterable[ExitRule], path: str = "retryStrategy.evaluateOnExit"
) -> list[Problem]:
    """Each ``onStatusReason``: "up to 512 characters and can contain all printable characters"."""
    problems: list[Problem] = []
    for index, rule in enumerate(rules):
        pattern, where = rule.on_status_reason, f"{path}[{index}].onStatusReason"
        if len(pattern) > MAX_STATUS_REASON_PATTERN:
            problems.append(
                Problem(
                    where, pattern[:40] + "...", "a pattern is at most 512 characters", "shorten it"
                )
            )
        elif not pattern.isprintable():
            problems.append(
                Problem(
                    where,
                    pattern,
                    "a pattern has printable characters only",
                    "remove control characters such as newlines and tabs",
                )
            )
    return problems


def capacity_demand(payload: Mapping[str, Any]) -> dict[str, int]:
    """Instances a SageMaker ``CreateTrainingJob`` payload needs, per instance type.

    ``ResourceConfig.InstanceType`` x ``InstanceCount``; heterogeneous clusters
    (``ResourceConfig.InstanceGroups``) count each group (reference 1.3, UNCONFIRMED).
    ``InstanceCount`` is 1 to ``MAX_INSTANCES_PER_TYPE`` (SageMaker documents no maximum; no
    share or service environment can hold more). Raises :class:`QuotaConfigError` when the
    payload names no instance type or a count is out of range.
    """
    config = payload.get("ResourceConfig")
    if not isinstance(config, Mapping):
        raise QuotaConfigError(
            [
                Problem(
                    "serviceRequestPayload.ResourceConfig",
                    config,
                    "missing ResourceConfig",
                    "set ResourceConfig.InstanceType and ResourceConfig.InstanceCount",
                )
            ]
        )
    demand: dict[str, int] = {}
    groups = config.get("InstanceGroups") or [config]
    if not isinstance(groups, list):
        groups = [groups]
    for index, group in enumerate(groups):
        path = "serviceRequestPayload.ResourceConfig" + (
            f".InstanceGroups[{index}]" if "InstanceGroups" in config else ""
        )
        if not isinstance(group, Mapping):
            raise_if([Problem(path, group, "not an object", "give InstanceType and InstanceCount")])
        itype = group.get("InstanceType")
        count = group.get("InstanceCount", 1)
        problems = check_instance_type(itype, f"{path}.InstanceType")
        problems += check_int_range(
            count, f"{path}.InstanceCount", 1, MAX_INSTANCES_PER_TYPE, what="instance count"
        )
        raise_if(problems)
        demand[itype] = demand.get(itype, 0) + count
    return demand
