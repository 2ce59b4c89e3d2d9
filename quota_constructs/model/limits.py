"""Quota-management limits and single-field rules: names, instance types, ranges, tags."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from quota_constructs.model.problems import Problem

# --- limits (docs/aws-semantics.md §1) ------------------------------------------------------------

MAX_SHARES_PER_QUEUE = 20
MAX_JOB_QUEUES = 50
"""Job queues per account and Region (AWS Batch's service quotas, not adjustable)."""
MAX_SERVICE_ENVIRONMENTS = 50
"""Service environments per account and Region (AWS Batch's service quotas)."""
MAX_SCHEDULING_POLICIES = 500
"""Scheduling policies the emulator keeps per account: AWS documents no quota (stated: ten
times the job queues that can use them), so a client creating them in a loop is bounded."""
MIN_CAPACITY_LIMITS_PER_SHARE = 1
MAX_CAPACITY_LIMITS_PER_SHARE = 5
UNLIMITED_BORROW = -1
QUEUE_PRIORITY_RANGE = (0, 1000)
SCHEDULING_PRIORITY_RANGE = (0, 9999)
RUNNABLE_TIMEOUT_MINUTES_RANGE = (10, 1440)
MAX_PAYLOAD_BYTES = 10 * 1024
MAX_SUBMIT_REQUEST_BYTES = 30 * 1024
"""A whole SubmitServiceJob request, as compact JSON (AWS Batch's service quotas: 30 KiB)."""
MAX_TAGS = 50
TEAM_TAG_KEY = "quota-team"
"""The tag every team's quota share and service jobs carry (value ``<organisation>/<share>``,
built by :func:`team_tag_value`): reserved, and one of the 50 tags of a share with team access."""


def team_tag_value(organisation: str, share: str) -> str:
    """``<organisation>/<share>``: the team tag's value, unique in an account.

    Not the bare share name: service-job ARNs do not name their queue, so two organisations with
    a share of the same name would otherwise update and terminate each other's jobs.
    """
    return f"{organisation}/{share}"


MAX_TAG_KEY_LENGTH = 128
MAX_TAG_VALUE_LENGTH = 256
MAX_ORGANISATION_NAME_LENGTH = 64
RETRY_ATTEMPTS_RANGE = (1, 10)
MAX_STATUS_REASON_PATTERN = 512
MAX_EXIT_RULES = 5
"""``retryStrategy.evaluateOnExit`` entries of a service job ("up to 5", service-job-retries)."""
API_INTEGER_MAX = 2**31 - 1
"""The largest value of the Batch API's ``Integer`` members (a signed 32-bit integer)."""
MAX_INSTANCES_PER_TYPE = API_INTEGER_MAX
"""AWS documents no maximum for ``maxCapacity`` (botocore, CloudFormation: minimum 1 only), so
the only bound is the API's ``Integer``: instances of one type in a share, in the service
environment (the sum of the shares' limits per type) and in a job's ``InstanceCount``."""
MAX_BORROW_LIMIT = API_INTEGER_MAX
"""AWS documents no maximum for ``borrowLimit`` (a percent; -1 unlimited): the API's
``Integer``."""
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
NUM_INSTANCES = "NUM_INSTANCES"
"""The capacity unit of a SAGEMAKER_TRAINING service environment without quota management (FIFO
or fair-share queues): instances of any type, counted together ("The capacityUnit for a
SageMaker training service environment is NUM_INSTANCES", AWS's user guide)."""

# --- single-field rules -----------------------------------------------------------------------


def share_count_allowed(count: int) -> bool:
    """Whether a quota-managed job queue may hold ``count`` shares (1 to
    :data:`MAX_SHARES_PER_QUEUE`); ask it with the count after an addition to check that one."""
    return 1 <= count <= MAX_SHARES_PER_QUEUE


def check_organisation_name(value: Any, path: str) -> list[Problem]:
    """Organisation names: they name stacks (``Quota-<name>``) and SSM paths (``/quota/<name>``)."""
    if isinstance(value, str) and ORGANISATION_PATTERN.fullmatch(value):
        return []
    return [
        Problem(
            path,
            value,
            "organisation names are 1-64 letters, digits and '-', starting with a letter",
            "rename it, e.g. 'research-eu'",
        )
    ]


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
    text = resources.files("quota_constructs").joinpath(INSTANCE_TYPES_FILE)
    lines = text.read_text(encoding="utf-8").splitlines()
    return tuple(line for line in lines if line and not line.startswith("#"))


@cache
def _instance_type_source() -> str:
    text = resources.files("quota_constructs").joinpath(INSTANCE_TYPES_FILE)
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
