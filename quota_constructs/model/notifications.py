"""Notification subscribers (email, https, sqs) of an organisation or a share, their rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from quota_constructs.model.problems import Problem, join_path

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
                item = f"{join_path(path, kind)}[{index}]"
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
