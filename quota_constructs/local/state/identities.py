"""Owns the emulator's identities: assumable roles, issued sessions, and who made each request.

The emulator authenticates nothing and evaluates no policy (the policies are proven by
``tests/iam/`` with a real IAM simulator). It only remembers which access key it issued to
which assumed role, so a request signed with that key is attributed to the role's session:
counts per caller and operation, and the caller that submitted each service job. A key the
emulator did not issue (the dummy ``testing`` key) is the account's root user.

The access key of the request being answered is :data:`REQUEST_ACCESS_KEY`, set by the wire
layer from the SigV4 ``Authorization`` header for the duration of the request.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.errors import AccessDenied, InvalidParameter

REQUEST_ACCESS_KEY: ContextVar[str | None] = ContextVar("quota_request_access_key", default=None)
"""Access key id of the request being answered (``None``: unsigned, or an in-process call)."""

MAX_SESSION_SECONDS = 3600
"""IAM's default ``MaxSessionDuration`` of a role; the stack sets no other (UNCONFIRMED)."""
_CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")
_SESSION_NAME = re.compile(r"^[\w+=,.@-]{2,64}$")


def access_key_id(authorization: str) -> str | None:
    """The access key id in a SigV4 ``Authorization`` header (``None`` when there is none)."""
    found = _CREDENTIAL.search(authorization)
    return found.group(1) if found else None


@dataclass(frozen=True)
class RoleSession:
    """Temporary credentials the emulator issued for one ``AssumeRole`` call."""

    role_arn: str
    session_name: str
    access_key_id: str
    secret_access_key: str
    session_token: str
    expiration: datetime
    assumed_role_id: str
    arn: str
    """``arn:aws:sts::<account>:assumed-role/<role name>/<session name>``: the caller's ARN."""


class Identities:
    """Roles that may be assumed, sessions issued, and requests attributed to callers."""

    def __init__(
        self, account: Account, *, wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self.account = account
        self._wall_clock = wall_clock
        """Real time: sessions expire by it (botocore renews credentials by the wall clock)."""
        self._lock = threading.Lock()
        self._roles: set[str] = set()
        self._sessions: dict[str, RoleSession] = {}
        """Unexpired sessions by access key: an expired one is dropped at the next AssumeRole,
        so clients assuming roles in a loop do not grow the emulator without bound."""
        self._issued = 0
        self._calls: Counter[tuple[str, str]] = Counter()
        self._submitters: dict[str, str] = {}

    @property
    def root_arn(self) -> str:
        """The account's root user: the caller of every key the emulator did not issue."""
        return f"arn:{self.account.partition}:iam::{self.account.account_id}:root"

    def add_roles(self, role_arns: Iterable[str]) -> None:
        """Make ``role_arns`` assumable (the submitter roles provisioned organisations publish)."""
        with self._lock:
            self._roles.update(role_arns)

    @property
    def roles(self) -> tuple[str, ...]:
        """Every assumable role ARN, sorted."""
        with self._lock:
            return tuple(sorted(self._roles))

    def assume(
        self, role_arn: str, session_name: str, duration_s: int = MAX_SESSION_SECONDS
    ) -> RoleSession:
        """New credentials for ``role_arn``; refuses unknown roles and AWS's invalid values.

        Trust policies are not evaluated: any caller may assume a provisioned role.
        """
        if not _SESSION_NAME.match(session_name):
            raise InvalidParameter(
                f"RoleSessionName {session_name!r} must be 2-64 characters of letters, digits "
                "and +=,.@_-; e.g. quota-alice"
            )
        if duration_s > MAX_SESSION_SECONDS:
            raise InvalidParameter(
                f"DurationSeconds {duration_s} exceeds the MaxSessionDuration set for this role "
                f"({MAX_SESSION_SECONDS} s); ask for at most {MAX_SESSION_SECONDS} s"
            )
        with self._lock:
            if role_arn not in self._roles:
                known = ", ".join(sorted(self._roles)) or "none"
                raise AccessDenied(
                    f"User: {self.caller_arn()} is not authorized to perform: sts:AssumeRole on "
                    f"resource: {role_arn} (the emulator's assumable roles are the submitter "
                    f"roles of provisioned organisations: {known})"
                )
            now = self._wall_clock()
            for key in [k for k, s in self._sessions.items() if s.expiration <= now]:
                del self._sessions[key]
            session = self._issue(role_arn, session_name, duration_s, now)
            self._sessions[session.access_key_id] = session
            return session

    def _issue(
        self, role_arn: str, session_name: str, duration_s: int, now: datetime
    ) -> RoleSession:
        self._issued += 1
        key = f"ASIA{self._issued:016d}"
        digest = hashlib.sha256(f"{self.account.account_id}/{key}".encode()).hexdigest()
        role_name = role_arn.rsplit("/", 1)[-1]
        role_id = "AROA" + hashlib.sha256(role_arn.encode()).hexdigest()[:17].upper()
        return RoleSession(
            role_arn=role_arn,
            session_name=session_name,
            access_key_id=key,
            secret_access_key=digest[:40],
            session_token=f"quota-emulator-session/{key}/{digest[40:]}",
            # Real time, not the emulator's clock: botocore renews credentials by the wall clock.
            expiration=now.replace(microsecond=0) + timedelta(seconds=duration_s),
            assumed_role_id=f"{role_id}:{session_name}",
            arn=(
                f"arn:{self.account.partition}:sts::{self.account.account_id}:assumed-role/"
                f"{role_name}/{session_name}"
            ),
        )

    def session(self, access_key: str | None) -> RoleSession | None:
        """The session ``access_key`` was issued to, if the emulator issued it and it has not
        expired."""
        with self._lock:
            session = self._sessions.get(access_key or "")
        if session is None or session.expiration <= self._wall_clock():
            return None
        return session

    def caller_arn(self, access_key: str | None = None) -> str:
        """The ARN of whoever signs with ``access_key`` (default: the current request's key)."""
        key = access_key if access_key is not None else REQUEST_ACCESS_KEY.get()
        session = self._sessions.get(key or "")
        if session is None or session.expiration <= self._wall_clock():
            return self.root_arn
        return session.arn

    def record(self, operation: str, result: Mapping[str, Any]) -> None:
        """Attribute one answered request of the current caller; a submit's job to its caller."""
        caller = self.caller_arn()
        with self._lock:
            self._calls[(caller, operation)] += 1
            if operation == "SubmitServiceJob" and "jobId" in result:
                self._submitters.setdefault(str(result["jobId"]), caller)

    def calls(self) -> dict[str, dict[str, int]]:
        """Requests answered per caller ARN and operation."""
        with self._lock:
            out: dict[str, dict[str, int]] = {}
            for (caller, operation), count in sorted(self._calls.items()):
                out.setdefault(caller, {})[operation] = count
            return out

    def forget_job(self, job_id: str) -> None:
        """Forget who submitted ``job_id`` (the job expired)."""
        with self._lock:
            self._submitters.pop(job_id, None)

    def submitter(self, job_id: str) -> str | None:
        """The caller ARN that submitted ``job_id`` (``None``: not submitted over the API)."""
        with self._lock:
            return self._submitters.get(job_id)
