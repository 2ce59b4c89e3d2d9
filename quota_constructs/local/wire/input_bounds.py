"""Owns the bounds of the request members that botocore's shapes leave open.

botocore's shapes bound some members (``min`` / ``max``: :mod:`.validation` checks them); most
of Batch's lists and strings have none, so a client could send 20,000 filter values or 2,500
fair-share entries and keep the emulator's lock for minutes. Every open list, map and string of
a served operation gets a bound here, taken in this order:

1. a number AWS states in botocore's own documentation of the member, read from the model at
   run time (``"A list of up to 100 ..."``, ``"no more than 500 share identifiers"``), so a
   botocore upgrade that changes the text changes the bound, and one that drops it fails
   loudly (:func:`documented_limit`);
2. a documented quota that bounds a member more loosely than the ceiling below (a job's
   payload: the 30 KiB of its whole SubmitServiceJob request);
3. otherwise the emulator's stated ceiling (UNCONFIRMED): :data:`DEFAULT_LIST_ITEMS` entries
   per list or map and :func:`default_string_chars` characters per string, the longest ARN
   botocore's STS model allows (``arnType``).

Quotas the domain model owns (names of 1-128 characters, 1-5 capacity limits per share, 5
exit rules, 512-character status patterns, the payload's 10 KiB) stay the model's, with its
messages and fixes; the ceiling keeps what reaches them small. :data:`MODEL_OWNED` names the
model's constants that botocore's documentation also states, and a test holds them equal.
Each bound carries its source, which the refusal names (docs/input-limits.md lists them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import botocore.session
from botocore.model import Shape

from quota_constructs.model import MAX_PAYLOAD_BYTES, MAX_SUBMIT_REQUEST_BYTES

DEFAULT_LIST_ITEMS = 100
"""Entries of a list or map AWS gives no bound (stated: the largest page any served operation
answers, ``maxResults`` 100)."""
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10}
"""Numbers AWS's documentation spells out."""


@dataclass(frozen=True)
class Bound:
    """The most entries (lists, maps) or characters (strings) a member may have, and why."""

    limit: int
    source: str


@dataclass(frozen=True)
class Documented:
    """A bound stated in botocore's documentation of ``service``'s ``shape``.``member``:
    ``phrase`` is a regular expression whose first group is the number (digits with
    thousands commas, or a word of :data:`WORDS`); ``extra`` is added to it (a share
    identifier's trailing ``*``)."""

    service: str
    shape: str
    member: str
    phrase: str
    extra: int = 0


class BoundNotDocumented(LookupError):
    """botocore's documentation no longer states a bound the emulator reads from it."""


def _number(text: str) -> int:
    word = text.lower()
    return WORDS[word] if word in WORDS else int(text.replace(",", ""))


@cache
def _model(service: str) -> botocore.model.ServiceModel:
    return botocore.session.get_session().get_service_model(service)


def documented_limit(doc: Documented) -> Bound:
    """The bound ``doc`` names, read from botocore's documentation of its member."""
    member = _model(doc.service).shape_for(doc.shape).members[doc.member]
    text = re.sub(r"<[^>]+>|\s+", " ", member.documentation or "")
    found = re.search(doc.phrase, text)
    if found is None:
        raise BoundNotDocumented(
            f"botocore's documentation of {doc.service} {doc.shape}.{doc.member} no longer says "
            f"{doc.phrase!r}; read the new text and update quota_constructs/local/wire/"
            "input_bounds.py"
        )
    quoted = found.group(0)
    return Bound(
        _number(found.group(1)) + doc.extra,
        f"AWS: {quoted!r} (botocore's documentation of {doc.shape}.{doc.member})",
    )


NAME_128 = r"up to (\d+) (?:letters|characters) long"
"""A resource or job name's length (the model's name rule owns it: :data:`MODEL_OWNED`)."""
UP_TO = r"(?:list|array) of up to (\d+)"
SHARE_ID = r"limited to (\d+) alphanumeric characters"
SHARE_IDS = r"no more than (\d+) share identifiers"
COMPUTE = r"up to (\w+) compute environments"

DOCUMENTED: dict[tuple[str, str, str], Documented] = {
    **{
        (d.service, d.shape, d.member): d
        for d in (
            Documented("batch", "DescribeJobQueuesRequest", "jobQueues", UP_TO),
            Documented("batch", "DescribeSchedulingPoliciesRequest", "arns", UP_TO),
            Documented("batch", "TerminateServiceJobsRequest", "jobs", UP_TO),
            Documented("batch", "ShareAttributes", "shareIdentifier", SHARE_ID, extra=1),
            Documented("batch", "CreateJobQueueRequest", "computeEnvironmentOrder", COMPUTE),
            Documented("sts", "AssumeRoleRequest", "PolicyArns", r"up to (\d+) managed policy"),
            Documented("sts", "AssumeRoleRequest", "Policy", r"can't exceed ([\d,]+) characters"),
        )
    },
    # bounded by a sentence of another member's documentation
    ("batch", "SubmitServiceJobRequest", "shareIdentifier"): Documented(
        "batch", "ShareAttributes", "shareIdentifier", SHARE_ID
    ),
    ("batch", "UpdateJobQueueRequest", "computeEnvironmentOrder"): Documented(
        "batch", "CreateJobQueueRequest", "computeEnvironmentOrder", COMPUTE
    ),
    ("batch", "FairsharePolicy", "shareDistribution"): Documented(
        "batch", "ShareAttributes", "shareIdentifier", SHARE_IDS
    ),
}
"""Members whose bound botocore's documentation states, by (service, shape, member)."""

MODEL_OWNED: dict[str, Documented] = {
    "NAME_BODY": Documented("batch", "CreateQuotaShareRequest", "quotaShareName", NAME_128),
    "MAX_STATUS_REASON_PATTERN": Documented(
        "batch", "ServiceJobEvaluateOnExit", "onStatusReason", r"up to (\d+) characters"
    ),
}
"""The domain model's constants (:mod:`quota_constructs.model`) that botocore's documentation
also states, with where it states them."""


@cache
def default_string_chars() -> int:
    """Characters of a string AWS gives no bound: the longest ARN (botocore STS ``arnType``)."""
    return int(_model("sts").shape_for("arnType").metadata["max"])


@cache
def _quotas() -> dict[tuple[str, str, str], Bound]:
    """Open members a documented quota of the model bounds more loosely than the ceiling."""
    return {
        ("batch", "SubmitServiceJobRequest", "serviceRequestPayload"): Bound(
            MAX_SUBMIT_REQUEST_BYTES,
            f"AWS: a SubmitServiceJob request is at most {MAX_SUBMIT_REQUEST_BYTES} bytes (its "
            f"payload at most {MAX_PAYLOAD_BYTES}, checked next)",
        ),
    }


@cache
def _defaults() -> dict[str, Bound]:
    chars = default_string_chars()
    return {
        "list": Bound(DEFAULT_LIST_ITEMS, "stated by the emulator: AWS documents no bound"),
        "map": Bound(DEFAULT_LIST_ITEMS, "stated by the emulator: AWS documents no bound"),
        "string": Bound(
            chars, f"stated by the emulator: AWS documents no bound; the longest ARN is {chars}"
        ),
    }


def member_bound(service: str, owner: str, member: str, shape: Shape) -> Bound | None:
    """The bound of ``owner``.``member`` (a list, map or string of ``shape``) that botocore's
    shape leaves open; ``None`` when the shape has its own ``max`` or is of another kind (an
    enum string is bounded by its values)."""
    if "max" in shape.metadata or shape.type_name not in ("list", "map", "string"):
        return None
    if shape.type_name == "string" and shape.enum:
        return None
    return _bound(service, owner, member, shape.type_name)


@cache
def _bound(service: str, owner: str, member: str, kind: str) -> Bound:
    key = (service, owner, member)
    if key in DOCUMENTED:
        return documented_limit(DOCUMENTED[key])
    return _quotas().get(key) or _defaults()[kind]


def every_documented() -> Mapping[tuple[str, str, str], Bound]:
    """Every bound read from botocore's documentation (raises if one is no longer there)."""
    return {key: documented_limit(doc) for key, doc in DOCUMENTED.items()}


def documented_bound(shape: str, member: str, service: str = "batch") -> int:
    """The number botocore's documentation states for ``shape``.``member`` (:data:`DOCUMENTED`)."""
    return documented_limit(DOCUMENTED[(service, shape, member)]).limit
