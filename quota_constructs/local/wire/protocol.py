"""Owns the emulator's wire protocols: routes, request validation and serialization by botocore.

Batch speaks REST-JSON (``POST /v1/<operation>``, JSON bodies, errors named by the
``x-amzn-ErrorType`` header); SSM and SageMaker speak JSON 1.1 (``POST /`` with ``X-Amz-Target:
AmazonSSM.<Operation>`` / ``SageMaker.<Operation>``). Routes, request validation (every
constraint of the operation's input shape, :mod:`.validation`) and response serialization
(output shapes: only modelled members, timestamps as epoch seconds the way botocore parses
them) all come from ``botocore/data``, so the emulator accepts and answers exactly what real
clients send and expect.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any
from urllib.parse import unquote

import botocore.session
from botocore.model import OperationModel, ServiceModel, Shape

from quota_constructs.local.wire.api_errors import ApiError, client_error, validation_error
from quota_constructs.local.wire.validation import problems
from quota_constructs.safe_load import MAX_DEPTH, InputFileError, parse_json


@cache
def service_model(name: str) -> ServiceModel:
    """botocore's service model for ``name`` (``batch``, ``ssm``, ``sagemaker``), loaded once."""
    return botocore.session.get_session().get_service_model(name)


@dataclass(frozen=True)
class Route:
    """One REST operation: HTTP method, path template, compiled matcher and botocore model."""

    method: str
    pattern: re.Pattern[str]
    operation: OperationModel


def _compile(request_uri: str) -> re.Pattern[str]:
    path = request_uri.split("?", 1)[0]
    regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>.+)", re.escape(path))
    return re.compile(f"^{regex}$")


@cache
def rest_routes(service: str = "batch") -> tuple[Route, ...]:
    """Every operation of a REST service as a :class:`Route`, from ``http.requestUri``."""
    model = service_model(service)
    routes = []
    for name in model.operation_names:
        op = model.operation_model(name)
        routes.append(Route(op.http["method"], _compile(op.http["requestUri"]), op))
    return tuple(routes)


@cache
def _literal_routes(service: str) -> dict[tuple[str, str], OperationModel]:
    """Operations whose path has no URI parameter, by (method, path): most lookups."""
    return {
        (r.method, r.operation.http["requestUri"].split("?", 1)[0]): r.operation
        for r in rest_routes(service)
        if "{" not in r.operation.http["requestUri"]
    }


def match_route(method: str, raw_path: str, service: str = "batch") -> tuple[OperationModel, dict]:
    """The operation for ``method raw_path`` and its URI parameters (percent-decoded).

    ``raw_path`` must be the undecoded path: ARNs in ``/v1/tags/{resourceArn}`` contain ``/``.
    Raises :class:`ApiError` (404 ``UnknownOperationException``) when nothing matches.
    """
    literal = _literal_routes(service).get((method, raw_path))
    if literal is not None:
        return literal, {}
    for route in rest_routes(service):
        found = route.pattern.match(raw_path)
        if found and route.method == method:
            return route.operation, {k: unquote(v) for k, v in found.groupdict().items()}
    raise ApiError(
        "UnknownOperationException", f"no {service} operation for {method} {raw_path}", 404
    )


def rest_params(
    op: OperationModel,
    uri_params: Mapping[str, str],
    query: Mapping[str, list[str]],
    headers: Mapping[str, str],
    body: bytes,
) -> dict[str, Any]:
    """Request parameters of a REST-JSON call: URI, query string, headers and JSON body."""
    params: dict[str, Any] = json_body(body)
    shape = op.input_shape
    if shape is None:
        return params
    for member_name, member in shape.members.items():
        location = member.serialization.get("location")
        wire = member.serialization.get("name", member_name)
        if location == "uri" and wire in uri_params:
            params[member_name] = uri_params[wire]
        elif location == "querystring" and wire in query:
            values = query[wire]
            params[member_name] = values if member.type_name == "list" else values[0]
        elif location == "header" and wire in headers:
            params[member_name] = headers[wire]
    return params


def json_body(body: bytes, service: str = "batch") -> dict[str, Any]:
    """The JSON object in a request body (empty body: ``{}``).

    Read with the project's JSON rules (:func:`~quota_constructs.safe_load.parse_json`: UTF-8,
    nesting at most ``MAX_DEPTH``, no duplicate keys, finite numbers only). Otherwise Batch's
    ``ClientException``, or the ``SerializationException`` of JSON 1.1 services (SSM,
    SageMaker).
    """
    if not body.strip():
        return {}
    try:
        data = parse_json(body.decode("utf-8"), source="request body", max_depth=MAX_DEPTH)
    except UnicodeDecodeError as exc:
        raise _unreadable(
            service, f"request body is not UTF-8 (byte {exc.start}); send UTF-8 JSON"
        ) from None
    except InputFileError as exc:
        raise _unreadable(service, str(exc)) from None
    if not isinstance(data, dict):
        raise _unreadable(service, "request body must be a JSON object")
    return data


def _unreadable(service: str, message: str) -> ApiError:
    if service == "batch":
        return client_error(message)
    return ApiError("SerializationException", message, 400)


MAX_PROBLEMS_SHOWN = 20
"""Broken constraints a refusal lists; the rest are counted (the message stays small)."""


def validate(op: OperationModel, params: Mapping[str, Any]) -> None:
    """Check ``params`` against every constraint of the operation's input shape and the bounds
    :mod:`.input_bounds` gives its open members.

    Raises the service's validation error (Batch ``ClientException``, SSM and SageMaker
    ``ValidationException``) listing each broken constraint with the member's path (at most
    :data:`MAX_PROBLEMS_SHOWN`, then how many more).
    """
    if op.input_shape is None:
        return
    service = op.service_model.service_name
    found = problems(dict(params), op.input_shape, "", service=service)
    if found:
        shown = found[:MAX_PROBLEMS_SHOWN]
        if len(found) > MAX_PROBLEMS_SHOWN:
            shown.append(f"and {len(found) - MAX_PROBLEMS_SHOWN} more problems")
        raise validation_error(service, f"{op.name}: " + "; ".join(shown))


def serialize(shape: Shape | None, value: Any) -> Any:
    """``value`` shaped as the output ``shape``: modelled members only, ``None`` dropped.

    Timestamps become epoch seconds (botocore parses numbers as epoch seconds); ``long`` /
    ``integer`` become ints; structures keep only members the model declares.
    """
    if shape is None or value is None:
        return None
    kind = shape.type_name
    if kind == "structure":
        out = {}
        for name, member in shape.members.items():
            if member.serialization.get("location"):
                continue
            item = value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)
            encoded = serialize(member, item)
            if encoded is not None:
                out[member.serialization.get("name", name)] = encoded
        return out
    if kind == "list":
        return [serialize(shape.member, item) for item in value]
    if kind == "map":
        return {str(k): serialize(shape.value, v) for k, v in value.items()}
    if kind == "timestamp":
        return value.timestamp() if isinstance(value, datetime) else float(value)
    if kind in ("integer", "long"):
        return int(value)
    if kind in ("double", "float"):
        return float(value)
    if kind == "boolean":
        return bool(value)
    return value


def error_body(error: ApiError) -> bytes:
    """JSON error document both botocore's rest-json and json parsers understand."""
    return json.dumps({"__type": error.code, "message": error.message}).encode()
