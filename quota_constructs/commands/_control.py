"""The emulator's own endpoints as a client sees them (``/_quota/...``): a light module, so that
commands talking to AWS or to an emulator learn the emulator's clock without importing it."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from datetime import UTC, datetime
from typing import Any

from rich.text import Text

from quota_constructs.commands._common import message, styled
from quota_constructs.local.wire.control_paths import HEALTH_PATH

CONTROL_TIMEOUT_S = 30.0
HEALTH_TIMEOUT_S = 2.0
"""How long a command asks an endpoint for its health (its clock) before taking it for AWS."""
ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL_BATCH", "AWS_ENDPOINT_URL")
"""Where boto3 finds an endpoint for Batch when none is passed (service-specific first)."""


class ControlError(Exception):
    """The emulator refused a control request (``status``: its HTTP status)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def control(
    endpoint: str,
    path: str,
    body: dict[str, Any] | None = None,
    *,
    timeout: float = CONTROL_TIMEOUT_S,
) -> dict[str, Any]:
    """GET ``path`` (or POST ``body`` as JSON) on the emulator; its JSON answer.

    Raises :class:`ControlError` with the emulator's message when it refuses the request, and
    ``OSError`` when nothing answers.
    """
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        endpoint.rstrip("/") + path,
        data=data,
        method="GET" if body is None else "POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except urllib.error.HTTPError as error:
        try:
            message = str(json.loads(error.read()).get("message", error.reason))
        except ValueError:
            message = str(error.reason)
        raise ControlError(error.code, message) from None


def configured_endpoint(endpoint_url: str | None) -> str | None:
    """The Batch endpoint a client uses when it is not AWS's own: ``endpoint_url`` when given,
    else boto3's environment variables (:data:`ENDPOINT_VARIABLES`); ``None`` for AWS's."""
    return endpoint_url or next(
        (os.environ[name] for name in ENDPOINT_VARIABLES if os.environ.get(name)), None
    )


def emulator_health(endpoint_url: str | None) -> dict[str, Any] | None:
    """``GET /_quota/health`` of the configured endpoint; ``None`` when none is configured or
    it is not an emulator (it refuses, does not answer, or answers something else)."""
    endpoint = configured_endpoint(endpoint_url)
    if endpoint is None:
        return None
    try:
        health = control(endpoint, HEALTH_PATH, timeout=HEALTH_TIMEOUT_S)
    except (ControlError, OSError, ValueError):
        return None
    return health if health.get("status") == "ok" else None


def queue_now(endpoint_url: str | None) -> datetime:
    """Now as the queue sees it: an emulator's clock (its health's ``epoch``; a virtual clock
    may be anywhere in time), else this machine's, in UTC. Calendars in force are read at it."""
    health = emulator_health(endpoint_url)
    epoch = None if health is None else health.get("epoch")
    if isinstance(epoch, int | float) and not isinstance(epoch, bool):
        return datetime.fromtimestamp(epoch, UTC)
    return datetime.now(UTC)


def virtual_clock_note(endpoint_url: str | None) -> Text | None:
    """The note for a wait on an emulator whose clock is virtual (``GET /_quota/health``);
    ``None`` for a real clock, no endpoint, or an endpoint that is not the emulator."""
    health = emulator_health(endpoint_url)
    if health is None or health.get("virtualClock") is not True:
        return None
    endpoint = configured_endpoint(endpoint_url)
    return message(
        styled("note:", "yellow"),
        f" the emulator at {endpoint} runs a virtual clock: time moves only with "
        f"quota local advance SECONDS --endpoint-url {endpoint} (run it in another terminal)",
    )
