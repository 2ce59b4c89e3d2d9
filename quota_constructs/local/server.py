"""Owns the emulator's HTTP front: Batch REST-JSON, SSM and SageMaker JSON 1.1 on one endpoint.

Requests carrying ``X-Amz-Target: AmazonSSM.<Operation>`` are SSM, ``SageMaker.<Operation>``
SageMaker; form-encoded POSTs are STS's query protocol (:mod:`.query_protocol`); everything
else is routed by method and path with botocore's Batch model. Every request is validated
against the operation's input shape, answered with its output shape, and errors use the AWS
JSON error format (``x-amzn-ErrorType`` header and ``__type`` / ``message`` body) that botocore
parses into ``ClientError`` with the right code: a refused request's domain error becomes its
API error here (:func:`~.api_errors.api_error`), and nowhere else. A request the emulator fails
on (a bug) is answered ``ServerException`` (HTTP 500) and logged with its traceback on the
``quota_constructs.local.server`` logger. Authentication is not checked; the request's access
key (SigV4 ``Authorization``) only tells :mod:`.identities` who is calling.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from waitress.server import create_server
from werkzeug.wrappers import Request, Response

from quota_constructs.local.api_errors import (
    DOMAIN_ERRORS,
    ApiError,
    api_error,
    client_error,
    server_error,
)
from quota_constructs.local.emulator import Emulator
from quota_constructs.local.identities import REQUEST_ACCESS_KEY, access_key_id
from quota_constructs.local.protocol import (
    error_body,
    json_body,
    match_route,
    rest_params,
    serialize,
    service_model,
    validate,
)
from quota_constructs.local.query_protocol import QueryFront, is_query_request

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

HEALTH_PATH = "/_quota/health"
ADVANCE_PATH = "/_quota/advance"
EXPLAIN_PREFIX = "/_quota/jobs/"
JSON_TARGETS = {"AmazonSSM": "ssm", "SageMaker": "sagemaker"}
"""``X-Amz-Target`` prefix -> JSON 1.1 service answered here."""
LOG = logging.getLogger(__name__)


class EmulatorApp:
    """The WSGI application answering for an :class:`~.emulator.Emulator`."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator
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
            if is_query_request(request):
                return self.query.respond(request)
            if service != "batch":
                return self._json(request, service, operation)
            if request.path.startswith("/_quota/"):
                return self._control(request)
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
            }
        elif request.path == ADVANCE_PATH and request.method == "POST":
            seconds = json_body(request.get_data()).get("seconds")
            if not isinstance(seconds, int | float) or isinstance(seconds, bool):
                raise client_error('body must be {"seconds": <number>}, e.g. {"seconds": 60}')
            body = {"now": self.emulator.advance(float(seconds))}
        elif request.path.startswith(EXPLAIN_PREFIX) and request.method == "GET":
            body = self.emulator.explain(request.path[len(EXPLAIN_PREFIX) :])
        else:
            raise ApiError("UnknownOperationException", f"no emulator endpoint {request.path}", 404)
        return Response(json.dumps(body), status=200, content_type="application/json")


def _error(error: ApiError, content_type: str) -> Response:
    response = Response(
        error_body(error), status=error.status, content_type=content_type or "application/json"
    )
    response.headers["x-amzn-ErrorType"] = error.code
    return response


class RunningServer:
    """A waitress server answering for an emulator from a daemon thread."""

    def __init__(self, app: EmulatorApp, *, host: str, port: int, threads: int) -> None:
        self._server: Any = create_server(
            app, host=host, port=port, threads=threads, ident="quota-emulator"
        )
        # Bursts above ``threads`` queue up; waitress warns about that on every request, which
        # is noise for an emulator. A private, disabled logger keeps library code silent.
        quiet = logging.Logger("quota-emulator-queue")
        quiet.disabled = True
        self._server.task_dispatcher.queue_logger = quiet
        self.host = host
        self.port: int = self._server.effective_port
        self._thread = threading.Thread(target=self._server.run, name="quota-emulator", daemon=True)
        self._thread.start()

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
    emulator: Emulator, *, host: str = "127.0.0.1", port: int = 0, threads: int = 8
) -> RunningServer:
    """Serve ``emulator`` on ``host:port`` (0 = a free port) from a daemon thread.

    waitress: HTTP/1.1 keep-alive and a pool of ``threads`` workers (werkzeug's development
    server closes every connection, which costs a third of the throughput on loopback).
    """
    return RunningServer(EmulatorApp(emulator), host=host, port=port, threads=threads)
