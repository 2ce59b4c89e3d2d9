"""Owns the emulator's refusal of browser-style requests: foreign ``Host``, any ``Origin``, and
request bodies of a content type no AWS protocol uses.

A web page can make a browser send a "simple" request (``Content-Type: text/plain``, no CORS
preflight) to ``127.0.0.1``, and DNS rebinding lets it read the answer under its own host name.
AWS SDKs never send an ``Origin`` header, always name the endpoint in ``Host``, and send a body
only as ``application/json`` (REST-JSON: Batch), ``application/x-amz-json-1.1`` (JSON 1.1: SSM,
SageMaker) or ``application/x-www-form-urlencoded`` (query: STS). Anything else is refused here,
before any handler runs, as an AWS-style error naming the header, its value and the fix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from werkzeug.wrappers import Request

from quota_constructs.local.wire.api_errors import ApiError
from quota_constructs.model import bounded_repr

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
"""Host names every emulator answers to, besides the address it listens on."""
AWS_CONTENT_TYPES = frozenset(
    {
        "application/json",
        "application/x-amz-json-1.0",
        "application/x-amz-json-1.1",
        "application/x-www-form-urlencoded",
    }
)
"""Media types of the request bodies botocore sends for the protocols served here."""
PROTOCOL_CONTENT_TYPES = {
    "rest-json": frozenset({"application/json"}),
    "json": frozenset({"application/x-amz-json-1.0", "application/x-amz-json-1.1"}),
}
"""The media types each protocol's requests carry (botocore's serializers): Batch is REST-JSON,
SSM, SageMaker and Service Quotas are JSON 1.1; a form body is the query protocol's alone."""
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
FORBIDDEN = "AccessDeniedException"
UNSUPPORTED_MEDIA_TYPE = "UnsupportedMediaTypeException"


def host_name(host_header: str) -> str:
    """The host of a ``Host`` header, lower case and without its port (``[::1]`` kept whole)."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.rpartition(":")[0] if host.count(":") == 1 else host


@dataclass(frozen=True)
class RequestGuard:
    """Which ``Host`` names and ``Origin`` values the emulator accepts.

    ``hosts``: besides :data:`LOOPBACK_HOSTS` (``quota local serve`` adds the address it listens
    on and every ``--allow-host``); ``origins``: exact ``Origin`` values allowed (default none,
    so no web page may call the emulator; ``--allow-origin``).
    """

    hosts: frozenset[str] = field(default_factory=frozenset)
    origins: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def listening_on(
        cls, address: str, hosts: Iterable[str] = (), origins: Iterable[str] = ()
    ) -> RequestGuard:
        """The guard of a server listening on ``address``, with extra allowed names."""
        allowed = {host_name(h) for h in (address, f"[{address}]" if ":" in address else address)}
        return cls(frozenset(allowed | {host_name(h) for h in hosts}), frozenset(origins))

    def check(self, request: Request) -> None:
        """Raise the :class:`ApiError` refusing ``request``, if it is browser-style."""
        host = request.headers.get("Host", "")
        if host_name(host) not in LOOPBACK_HOSTS | self.hosts:
            raise ApiError(
                FORBIDDEN,
                f"Host: {bounded_repr(host)} is not a name of this emulator (allowed: "
                f"{', '.join(sorted(LOOPBACK_HOSTS | self.hosts))}); call it by one of them, or "
                "start it with quota local serve --allow-host NAME",
                403,
            )
        origin = request.headers.get("Origin")
        if origin is not None and origin not in self.origins:
            raise ApiError(
                FORBIDDEN,
                f"Origin: {bounded_repr(origin)} is not allowed: the emulator answers AWS SDKs, "
                "not web pages; send no Origin header, or start it with quota local serve "
                "--allow-origin ORIGIN",
                403,
            )
        self._check_content_type(request)

    def _check_content_type(self, request: Request) -> None:
        content_type = _refused_content_type(request, AWS_CONTENT_TYPES)
        if content_type is not None:
            raise ApiError(
                UNSUPPORTED_MEDIA_TYPE,
                f"Content-Type: {bounded_repr(content_type)} is not a type AWS protocols send; "
                f"send the body as one of {', '.join(sorted(AWS_CONTENT_TYPES))}",
                415,
            )


def _refused_content_type(request: Request, allowed: frozenset[str]) -> str | None:
    """The request's ``Content-Type`` when it carries a body of a media type not in
    ``allowed`` (parameters such as ``; charset=utf-8`` aside); ``None`` when it is allowed."""
    if request.method not in BODY_METHODS:
        return None
    content_type = request.headers.get("Content-Type", "")
    media_type = content_type.partition(";")[0].strip().lower()
    if media_type in allowed or (not media_type and not request.get_data()):
        return None
    return content_type


def check_protocol_content_type(request: Request, protocol: str) -> None:
    """Refuse a body whose media type the operation's protocol never sends (a form posted to a
    Batch path, JSON 1.1 to a REST path): only AWS clients' requests reach an operation."""
    expected = PROTOCOL_CONTENT_TYPES[protocol]
    content_type = _refused_content_type(request, expected)
    if content_type is not None:
        raise ApiError(
            UNSUPPORTED_MEDIA_TYPE,
            f"Content-Type: {bounded_repr(content_type)} is not what this operation's protocol "
            f"({protocol}) sends; send the body as {' or '.join(sorted(expected))}",
            415,
        )
