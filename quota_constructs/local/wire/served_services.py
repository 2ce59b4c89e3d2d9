"""Owns which AWS services the emulator answers, and the refusal of every other one.

A client of any service may be pointed here (the pytest fixture sets ``AWS_ENDPOINT_URL`` for
every service, so nothing in a test reaches AWS). A signed request names its service in the
SigV4 credential scope (``Credential=KEY/DATE/REGION/SERVICE/aws4_request``); one for a service
the emulator does not serve is refused with ``AccessDeniedException`` (HTTP 403) naming the
service and what to do instead, in the error format its protocol's parser reads (an
``<ErrorResponse>`` document for REST-XML and query-protocol requests, else JSON; the code
also in ``x-amzn-ErrorType``). The
Price List API (``pricing``) has its own message: prices come from a file
(``quota report --prices FILE``). Unsigned requests (the ``/_quota/`` control endpoints) pass.
"""

from __future__ import annotations

import re

from werkzeug.wrappers import Request

from quota_constructs.local.wire.api_errors import ApiError

SERVED_SIGNING_NAMES = frozenset({"batch", "ssm", "sagemaker", "sts", "servicequotas"})
"""SigV4 signing names of the services answered here (Service Quotas signs as
``servicequotas``)."""
ACCESS_DENIED = "AccessDeniedException"
_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/[^/,\s]+/([^/,\s]+)/aws4_request")


def signing_name(authorization: str) -> str | None:
    """The service of a SigV4 ``Authorization`` header's credential scope (``None``: unsigned)."""
    found = _SCOPE.search(authorization)
    return found.group(1) if found else None


def foreign_service_refusal(request: Request) -> ApiError | None:
    """The refusal of a request signed for a service the emulator does not serve, else ``None``."""
    service = signing_name(request.headers.get("Authorization", ""))
    if service is None or service in SERVED_SIGNING_NAMES:
        return None
    served = ", ".join(sorted(SERVED_SIGNING_NAMES))
    if service == "pricing":
        text = (
            "the local emulator does not serve the AWS Price List API (pricing), and this "
            "request was not sent to AWS; fix: give prices in a file instead "
            "(quota report --prices FILE, TYPE: USD per instance-hour; docs/cost.md)"
        )
    else:
        text = (
            f"the local emulator does not serve {service!r} (it serves {served}), and this "
            "request was not sent to AWS; fix: give this client its own test double "
            "(endpoint_url=...) or a botocore Stubber"
        )
    return ApiError(ACCESS_DENIED, text, 403)


REST_XML_SIGNING_NAMES = frozenset({"s3", "route53", "cloudfront"})
"""Signing names of the REST-XML services, whose clients read XML errors (as query-protocol
ones do: those send form-encoded bodies)."""


def answers_in_json(request: Request) -> bool:
    """Whether the request's client reads JSON errors: not REST-XML, not a query-protocol form."""
    service = signing_name(request.headers.get("Authorization", ""))
    form = "x-www-form-urlencoded" in (request.content_type or "")
    return service not in REST_XML_SIGNING_NAMES and not form
