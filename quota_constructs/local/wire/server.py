"""Owns the emulator's HTTP front: Batch REST-JSON, SSM and SageMaker JSON 1.1 on one endpoint.

Requests carrying ``X-Amz-Target: AmazonSSM.<Operation>`` are SSM, ``SageMaker.<Operation>``
SageMaker; a request signed for any other service is refused naming it
(:mod:`.served_services`: nothing sent here reaches AWS); form-encoded POSTs are STS's query
protocol (:mod:`.query_protocol`); everything
else is routed by method and path with botocore's Batch model. Every request is validated
against the operation's input shape, answered with its output shape, and errors use the AWS
JSON error format (``x-amzn-ErrorType`` header and ``__type`` / ``message`` body) that botocore
parses into ``ClientError`` with the right code: a refused request's domain error becomes its
API error here (:func:`~.api_errors.api_error`), and nowhere else. A request the emulator fails
on (a bug) is answered ``ServerException`` (HTTP 500) and logged with its traceback on the
``quota_constructs.local.wire.server`` logger. Authentication is not checked; the request's access
key (SigV4 ``Authorization``) only tells :mod:`..state.identities` who is calling.

The server cannot be wedged by its clients (:class:`ServerLimits`): idle and stalled
connections are closed after ``channel_timeout`` seconds, a request still being sent
``request_deadline`` seconds after it began (byte by byte) is answered 408 and closed, at most
``connection_limit`` connections are open at once and ``connections_per_peer`` from one
address, and a body longer than ``max_body_bytes`` is refused with HTTP 413
while it is read (a declared ``Content-Length`` before any of the body, a chunked body as soon
as it passes the limit), so memory never holds more than the limit of any request.

Nor driven by a web page: browser-style requests (a foreign ``Host``, any ``Origin``, a body that
is not one of the AWS protocols' content types) are refused first (:mod:`.request_guard`).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from waitress.channel import HTTPChannel
from waitress.server import create_server
from werkzeug.wrappers import Request, Response

from quota_constructs.local.emulator import Emulator
from quota_constructs.local.state.clock import VirtualClock
from quota_constructs.local.state.identities import REQUEST_ACCESS_KEY, access_key_id
from quota_constructs.local.wire.api_errors import (
    DOMAIN_ERRORS,
    ApiError,
    api_error,
    client_error,
    server_error,
)
from quota_constructs.local.wire.control_paths import ADVANCE_PATH, EXPLAIN_PREFIX, HEALTH_PATH
from quota_constructs.local.wire.protocol import (
    error_body,
    json_body,
    match_route,
    rest_params,
    serialize,
    service_model,
    validate,
)
from quota_constructs.local.wire.query_protocol import QueryFront, is_query_request, xml_error
from quota_constructs.local.wire.request_guard import RequestGuard, check_protocol_content_type
from quota_constructs.local.wire.served_services import answers_in_json, foreign_service_refusal
from quota_constructs.model import bounded_repr

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

ADVANCE_EXAMPLE = '{"seconds": 60}'
MAX_ADVANCE_SECONDS = 366 * 24 * 3600
"""Longest step of ``POST /_quota/advance``: a year; longer spans take several steps."""
MAX_THREADS = 256
"""Most worker threads of the HTTP server."""
JSON_TARGETS = {
    "AmazonSSM": "ssm",
    "SageMaker": "sagemaker",
    "ServiceQuotasV20190624": "service-quotas",
}
"""``X-Amz-Target`` prefix -> JSON 1.1 service answered here."""
LOG = logging.getLogger(__name__)


class EmulatorApp:
    """The WSGI application answering for an :class:`~..emulator.Emulator`."""

    def __init__(self, emulator: Emulator, guard: RequestGuard | None = None) -> None:
        self.emulator = emulator
        self.guard = guard or RequestGuard()
        self.query = QueryFront(emulator.call)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request = Request(environ)
        caller = REQUEST_ACCESS_KEY.set(access_key_id(request.headers.get("Authorization", "")))
        try:
            response = self.respond(request)
        finally:
            REQUEST_ACCESS_KEY.reset(caller)
        return response(environ, start_response)

    def respond(self, request: Request) -> Response:
        prefix, _, operation = request.headers.get("X-Amz-Target", "").partition(".")
        service = JSON_TARGETS.get(prefix, "batch")
        try:
            self.guard.check(request)
            refused = foreign_service_refusal(request)
            if refused is not None:
                return _foreign_error(refused, request)
            if is_query_request(request):
                return self.query.respond(request)
            if service != "batch":
                check_protocol_content_type(request, "json")
                return self._json(request, service, operation)
            if request.path.startswith("/_quota/"):
                return self._control(request)
            check_protocol_content_type(request, "rest-json")
            return self._batch(request)
        except ApiError as error:
            return _error(error, "application/json")
        except DOMAIN_ERRORS as refused:
            return _error(api_error(service, refused), "application/json")
        except Exception as exc:  # an emulator bug must reach the client, not kill the thread
            LOG.exception("emulator error answering %s %s", request.method, request.path)
            return _error(server_error(f"emulator error: {type(exc).__name__}: {exc}"), "")

    def _batch(self, request: Request) -> Response:
        raw = request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI") or request.path
        op, uri_params = match_route(request.method, raw.split("?", 1)[0])
        params = rest_params(
            op,
            uri_params,
            request.args.to_dict(flat=False),
            dict(request.headers),
            request.get_data(),
        )
        validate(op, params)
        result = self.emulator.call("batch", op.name, params)
        body = serialize(op.output_shape, result) or {}
        return Response(json.dumps(body), status=200, content_type="application/json")

    def _json(self, request: Request, service: str, operation: str) -> Response:
        model = service_model(service)
        if operation not in model.operation_names:
            raise ApiError(
                "UnknownOperationException", f"unknown {service} operation {operation!r}", 400
            )
        op = model.operation_model(operation)
        params = json_body(request.get_data(), service)
        validate(op, params)
        result = self.emulator.call(service, operation, params)
        body = serialize(op.output_shape, result) or {}
        return Response(json.dumps(body), status=200, content_type="application/x-amz-json-1.1")

    def _control(self, request: Request) -> Response:
        """Emulator-only endpoints: health, virtual-clock advance, typed job explanations."""
        if request.path == HEALTH_PATH:
            body: dict[str, Any] = {
                "status": "ok",
                "organisations": sorted(self.emulator.organisations),
                "now": self.emulator.clock.now(),
                "epoch": self.emulator.clock.epoch(self.emulator.clock.now()),
                "virtualClock": isinstance(self.emulator.clock, VirtualClock),
                **self.emulator.failure_counts(),
            }
        elif request.path == ADVANCE_PATH and request.method == "POST":
            seconds = advance_seconds(control_body(request.get_data()))
            body = {"now": self.emulator.advance(seconds)}
        elif request.path.startswith(EXPLAIN_PREFIX) and request.method == "GET":
            body = self.emulator.explain(request.path[len(EXPLAIN_PREFIX) :])
        else:
            raise ApiError("UnknownOperationException", f"no emulator endpoint {request.path}", 404)
        return Response(json.dumps(body), status=200, content_type="application/json")


def control_body(raw: bytes) -> dict[str, Any]:
    """The JSON object a control endpoint received (``NaN`` and ``Infinity`` read as numbers, so
    that the range check names them); 400 for anything else."""
    try:
        data = json.loads(raw or b"{}", parse_constant=float)
    except (ValueError, RecursionError) as exc:
        raise client_error(
            f"request body is not valid JSON ({type(exc).__name__}); send e.g. {ADVANCE_EXAMPLE}"
        ) from None
    if not isinstance(data, dict):
        raise client_error(f"request body must be a JSON object, e.g. {ADVANCE_EXAMPLE}")
    return data


def advance_seconds(body: dict[str, Any]) -> float:
    """``body["seconds"]``: a finite number from 0 to :data:`MAX_ADVANCE_SECONDS`, else 400."""
    seconds = body.get("seconds")
    if (
        not isinstance(seconds, int | float)
        or isinstance(seconds, bool)
        or not math.isfinite(seconds)
        or not 0 <= seconds <= MAX_ADVANCE_SECONDS
    ):
        raise client_error(
            f"seconds: {bounded_repr(seconds)} is not a number of seconds from 0 to "
            f'{MAX_ADVANCE_SECONDS} (366 days); the body must be {{"seconds": <number>}}, '
            f"e.g. {ADVANCE_EXAMPLE}"
        )
    return float(seconds)


def _foreign_error(error: ApiError, request: Request) -> Response:
    """A foreign service's refusal in the error format its client parses."""
    response = _error(error, "application/json") if answers_in_json(request) else xml_error(error)
    response.headers["x-amzn-ErrorType"] = error.code
    return response


def _error(error: ApiError, content_type: str) -> Response:
    response = Response(
        error_body(error), status=error.status, content_type=content_type or "application/json"
    )
    response.headers["x-amzn-ErrorType"] = error.code
    return response


@dataclass(frozen=True)
class ServerLimits:
    """What one client may hold of the server (waitress adjustments; whole seconds).

    ``channel_timeout``: a connection with no request in progress (idle keep-alive, or a
    request whose sending stalled) is closed after this many seconds without a byte
    (UNCONFIRMED: AWS's own idle timeout is not documented; botocore reopens closed pooled
    connections by itself). ``request_deadline``: a request must be received whole (request
    line, headers and body) within this many seconds, counted from the connection's accept for
    its first request and from the first byte of each later one; a client still sending then
    (one byte every few seconds, the slowloris) is answered 408 and its connection closed.
    ``cleanup_interval``: how often both are checked. ``connection_limit``: most connections
    open at once; beyond it new ones wait in the listen backlog. ``connections_per_peer``: most
    connections one client address may hold; a further one is answered 503 and closed, so no
    one host takes every connection (on loopback every local client is the same peer).
    ``max_body_bytes``: longest request body (HTTP 413 beyond it); ``max_header_bytes``:
    longest request line and headers (HTTP 431 beyond it).
    """

    channel_timeout: int = 30
    request_deadline: int = 60
    cleanup_interval: int = 5
    connection_limit: int = 500
    connections_per_peer: int = 250
    max_body_bytes: int = 1024 * 1024
    max_header_bytes: int = 64 * 1024

    def __post_init__(self) -> None:
        for name, low in (
            ("channel_timeout", 1),
            ("request_deadline", 1),
            ("cleanup_interval", 1),
            ("connection_limit", 1),
            ("connections_per_peer", 1),
            ("max_body_bytes", 1024),
            ("max_header_bytes", 1024),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be a whole number >= {low} (got {value!r})")

    def adjustments(self) -> dict[str, Any]:
        """The waitress adjustments that enforce these limits (the deadline and the per-peer
        cap are :class:`_GuardedChannel`'s)."""
        return {
            "channel_timeout": self.channel_timeout,
            "cleanup_interval": self.cleanup_interval,
            # waitress counts its listening socket and wake-up trigger as connections too
            "connection_limit": self.connection_limit + 2,
            "max_request_body_size": self.max_body_bytes,
            "max_request_header_size": self.max_header_bytes,
            # poll(): no FD_SETSIZE ceiling of select() on the number of connections
            "asyncore_use_poll": True,
        }


def _raw_error(status: str, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 error response, written by the connection itself (no WSGI task)."""
    body = json.dumps({"__type": code, "message": message}).encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nx-amzn-ErrorType: {code}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


class _GuardedChannel(HTTPChannel):
    """waitress's connection, with the request deadline and the per-peer cap of the server's
    :class:`ServerLimits`, counting the bytes read from clients.

    Runs on waitress's loop thread (accept, reads, the periodic maintenance), as waitress's
    own idle timeout does.
    """

    counted = False
    reading_since: float | None = None

    def __init__(self, server: Any, sock: Any, addr: Any, adj: Any, map: Any = None) -> None:
        super().__init__(server, sock, addr, adj, map)
        self.limits: ServerLimits = server.limits
        self.peer = str(addr[0]) if isinstance(addr, tuple) else str(addr)
        self.reading_since = self.creation_time  # the request being received began (accept)
        self.counted = server.peers.enter(self.peer, self.limits.connections_per_peer)
        if not self.counted:
            self._answer_and_close(
                "503 Service Unavailable",
                "TooManyConnectionsException",
                f"this client ({self.peer}) already holds {self.limits.connections_per_peer} "
                "connections, the most the emulator allows one address; reuse or close them "
                "(botocore: max_pool_connections), or start the emulator with a larger "
                "quota local serve --max-connections-per-peer",
            )

    def received(self, data: bytes) -> bool:
        self.server.bytes_received += len(data)
        now = time.time()
        if self.reading_since is None:
            self.reading_since = now
        if self.overdue(now):
            self.cut_off()
            return False
        before = self.request
        result = bool(super().received(data))
        if self.request is None:
            self.reading_since = None  # nothing half-received
        elif before is not None and self.request is not before:
            self.reading_since = now  # a pipelined request began in this data
        return result

    def overdue(self, now: float) -> bool:
        """Whether the request being received has passed the deadline (a request already
        received and being answered is not counted: that time is the emulator's)."""
        return (
            self.reading_since is not None
            and not self.requests
            and not (self.will_close or self.close_when_flushed)
            and now - self.reading_since > self.limits.request_deadline
        )

    def cut_off(self) -> None:
        """Answer 408 and close: the client did not send its request within the deadline."""
        self.request = None
        self._answer_and_close(
            "408 Request Timeout",
            "RequestTimeoutException",
            f"the request was not received whole within {self.limits.request_deadline} s of "
            "its start; send each request at once (quota local serve --request-deadline)",
        )

    def _answer_and_close(self, status: str, code: str, message: str) -> None:
        response = _raw_error(status, code, message)
        with self.outbuf_lock:
            self.outbufs[-1].append(response)
            self.current_outbuf_count += len(response)
            self.total_outbufs_len += len(response)
        self.close_when_flushed = True

    def del_channel(self, map: Any = None) -> None:
        if self.counted:
            self.counted = False
            self.server.peers.leave(self.peer)
        super().del_channel(map)


class _Peers:
    """Open connections per client address (the per-peer cap)."""

    def __init__(self) -> None:
        self._open: Counter[str] = Counter()
        self._lock = threading.Lock()

    def enter(self, peer: str, most: int) -> bool:
        """Count one more connection of ``peer``, unless it already holds ``most``."""
        with self._lock:
            if self._open[peer] >= most:
                return False
            self._open[peer] += 1
            return True

    def leave(self, peer: str) -> None:
        with self._lock:
            self._open[peer] -= 1
            if self._open[peer] <= 0:
                del self._open[peer]


def _maintenance(server: Any, waitress_maintenance: Any, now: float) -> None:
    """waitress's idle timeout, then the request deadline of every connection."""
    waitress_maintenance(now)
    for channel in list(server.active_channels.values()):
        if isinstance(channel, _GuardedChannel) and channel.overdue(now):
            channel.cut_off()


class RunningServer:
    """A waitress server answering for an emulator from a daemon thread, within ``limits``."""

    def __init__(
        self,
        app: EmulatorApp,
        *,
        host: str,
        port: int,
        threads: int,
        limits: ServerLimits | None = None,
    ) -> None:
        self.limits = limits or ServerLimits()
        self._server: Any = create_server(
            app,
            host=host,
            port=port,
            threads=threads,
            ident="quota-emulator",
            **self.limits.adjustments(),
        )
        self._server.limits = self.limits
        self._server.peers = _Peers()
        self._server.channel_class = _GuardedChannel
        self._server.bytes_received = 0
        self._server.maintenance = partial(_maintenance, self._server, self._server.maintenance)
        # Bursts above ``threads`` queue up; waitress warns about that on every request, which
        # is noise for an emulator. A private, disabled logger keeps library code silent.
        quiet = logging.Logger("quota-emulator-queue")
        quiet.disabled = True
        self._server.task_dispatcher.queue_logger = quiet
        self.host = host
        self.port: int = self._server.effective_port
        self._thread = threading.Thread(target=self._server.run, name="quota-emulator", daemon=True)
        self._thread.start()

    @property
    def bytes_received(self) -> int:
        """Bytes read from every client so far (request lines, headers and bodies)."""
        return int(self._server.bytes_received)

    def shutdown(self) -> None:
        """Finish requests in flight, then close every connection and the listening socket.

        The worker threads stop first (after their current request), then the sockets are
        closed by the server's own loop thread (through waitress's trigger), so neither a
        worker nor ``select`` ever sees a descriptor closed under it.
        """
        server = self._server
        server.task_dispatcher.shutdown(cancel_pending=False, timeout=5)

        def close_all() -> None:
            for channel in list(server._map.values()):
                if channel is not server and channel is not server.trigger:
                    channel.handle_close()
            server.close()

        try:
            server.trigger.pull_trigger(close_all)
        except OSError:
            # The loop closed the server (and so its trigger) itself, e.g. after an error on
            # the listening socket: nothing is left to wake; close what remains from here.
            close_all()
        self._thread.join(timeout=5)


def start_server(
    emulator: Emulator,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    threads: int = 8,
    limits: ServerLimits | None = None,
    allow_hosts: Iterable[str] = (),
    allow_origins: Iterable[str] = (),
) -> RunningServer:
    """Serve ``emulator`` on ``host:port`` (0 = a free port) from a daemon thread.

    waitress: HTTP/1.1 keep-alive and a pool of ``threads`` workers (werkzeug's development
    server closes every connection, which costs a third of the throughput on loopback);
    ``limits`` (default :class:`ServerLimits`) bound what clients may hold. Browser-style
    requests are refused (:class:`~.request_guard.RequestGuard`): a ``Host`` other than
    ``host``, a loopback name or one of ``allow_hosts``; an ``Origin`` not in ``allow_origins``.
    """
    guard = RequestGuard.listening_on(host, allow_hosts, allow_origins)
    return RunningServer(
        EmulatorApp(emulator, guard), host=host, port=port, threads=threads, limits=limits
    )
