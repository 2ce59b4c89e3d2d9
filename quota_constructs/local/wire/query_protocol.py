"""Owns the emulator's AWS query protocol (STS): form parameters in, XML out, by botocore's model.

A query request is a form-encoded ``POST /`` with ``Action=<Operation>&Version=...`` and the
operation's parameters flattened as botocore's ``QuerySerializer`` writes them
(``Tags.member.1.Key``, ``PolicyArns.member.1.arn``). :func:`query_params` rebuilds the nested
parameters from the operation's input shape (unknown parameters are refused), every constraint
of the shape is checked (:func:`~.protocol.validate`), and the answer is the
``<Operation>Response`` XML document botocore's query parser reads; errors are
``<ErrorResponse>`` documents with the code botocore raises.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from xml.etree import ElementTree as ET

from botocore.model import Shape
from werkzeug.wrappers import Request, Response

from quota_constructs.local.wire.api_errors import DOMAIN_ERRORS, ApiError, api_error
from quota_constructs.local.wire.protocol import service_model, validate

QUERY_CONTENT_TYPE = "application/x-www-form-urlencoded"
QUERY_SERVICE = "sts"
"""The one query-protocol service the emulator serves."""
_MISSING = object()

Call = Callable[[str, str, Mapping[str, Any]], dict[str, Any]]
"""``Emulator.call``: service, operation, validated parameters -> result."""


def is_query_request(request: Request) -> bool:
    """A form-encoded ``POST /`` naming an ``Action``: the query protocol (Batch's REST paths
    start with ``/v1/``, and JSON 1.1 requests carry ``X-Amz-Target``)."""
    return (
        request.method == "POST"
        and request.path == "/"
        and "X-Amz-Target" not in request.headers
        and request.mimetype == QUERY_CONTENT_TYPE
        and "Action" in request.form
    )


class QueryFront:
    """Answers query-protocol requests of :data:`QUERY_SERVICE` through ``call``."""

    def __init__(self, call: Call) -> None:
        self.call = call

    def respond(self, request: Request) -> Response:
        """The XML answer to one request, errors included."""
        try:
            return self._respond(request)
        except ApiError as error:
            return xml_error(error)
        except DOMAIN_ERRORS as refused:
            return xml_error(api_error(QUERY_SERVICE, refused))

    def _respond(self, request: Request) -> Response:
        form = request.form.to_dict()
        action = form.pop("Action", "")
        form.pop("Version", None)
        model = service_model(QUERY_SERVICE)
        if action not in model.operation_names:
            raise ApiError(
                "InvalidAction",
                f"Action {action!r} is not an operation the emulator serves over the query "
                f"protocol (it serves {QUERY_SERVICE.upper()}: AssumeRole, GetCallerIdentity)",
            )
        op = model.operation_model(action)
        params = query_params(op.input_shape, form)
        try:
            validate(op, params)
        except ApiError as error:
            raise ApiError("ValidationError", error.message) from error
        result = self.call(QUERY_SERVICE, action, params)
        return Response(xml_result(action, op.output_shape, result), content_type="text/xml")


# --- form parameters -> nested parameters ------------------------------------------------------


def query_params(shape: Shape | None, form: Mapping[str, str]) -> dict[str, Any]:
    """The nested parameters of a flattened query ``form``, by the input ``shape``.

    Raises :class:`ApiError` (``ValidationError``) naming a parameter the shape does not have
    or a value of the wrong type.
    """
    used: set[str] = set()
    params = _parse(shape, "", form, used) if shape is not None else {}
    unknown = sorted(set(form) - used)
    if unknown:
        raise ApiError("ValidationError", f"unknown parameter(s) {unknown} for this Action")
    return params if isinstance(params, dict) else {}


def _parse(shape: Shape, prefix: str, form: Mapping[str, str], used: set[str]) -> Any:
    kind = shape.type_name
    if kind == "structure":
        return _structure(shape, prefix, form, used)
    if kind == "list":
        return _list(shape, prefix, form, used)
    if kind == "map":
        return _map(shape, prefix, form, used)
    if prefix not in form:
        return _MISSING
    used.add(prefix)
    return _scalar(kind, prefix, form[prefix])


def _structure(shape: Shape, prefix: str, form: Mapping[str, str], used: set[str]) -> Any:
    if prefix and not any(key.startswith(f"{prefix}.") for key in form):
        return _MISSING
    out: dict[str, Any] = {}
    for name, member in shape.members.items():
        wire = member.serialization.get("name", name)
        value = _parse(member, f"{prefix}.{wire}" if prefix else wire, form, used)
        if value is not _MISSING:
            out[name] = value
    return out


def _list(shape: Shape, prefix: str, form: Mapping[str, str], used: set[str]) -> Any:
    if form.get(prefix) == "":
        used.add(prefix)
        return []
    member = shape.member
    flattened = shape.serialization.get("flattened")
    name = member.serialization.get("name", "member")
    base = prefix if flattened else f"{prefix}.{name}"
    items = []
    for index in range(1, len(form) + 1):
        item = _parse(member, f"{base}.{index}", form, used)
        if item is _MISSING:
            break
        items.append(item)
    return items if items else _MISSING


def _map(shape: Shape, prefix: str, form: Mapping[str, str], used: set[str]) -> Any:
    base = prefix if shape.serialization.get("flattened") else f"{prefix}.entry"
    key_name = shape.key.serialization.get("name", "key")
    value_name = shape.value.serialization.get("name", "value")
    out: dict[str, Any] = {}
    for index in range(1, len(form) + 1):
        key = _parse(shape.key, f"{base}.{index}.{key_name}", form, used)
        if key is _MISSING:
            break
        out[key] = _parse(shape.value, f"{base}.{index}.{value_name}", form, used)
    return out if out else _MISSING


def _scalar(kind: str, name: str, text: str) -> Any:
    try:
        if kind in ("integer", "long"):
            return int(text)
        if kind in ("double", "float"):
            return float(text)
        if kind == "boolean":
            if text not in ("true", "false"):
                raise ValueError(text)
            return text == "true"
        if kind == "timestamp":
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ApiError("ValidationError", f"{name}: {text!r} is not a valid {kind}") from None
    return text


# --- results and errors -> XML -----------------------------------------------------------------


def xml_result(operation: str, shape: Shape | None, result: Mapping[str, Any]) -> bytes:
    """``<Operation>Response`` with the result wrapper, members and response metadata."""
    root = ET.Element(f"{operation}Response", xmlns=_namespace())
    if shape is not None:
        wrapper = shape.serialization.get("resultWrapper", f"{operation}Result")
        _element(root, wrapper, shape, result)
    metadata = ET.SubElement(root, "ResponseMetadata")
    ET.SubElement(metadata, "RequestId").text = str(uuid.uuid4())
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _element(parent: ET.Element, name: str, shape: Shape, value: Any) -> None:
    node = ET.SubElement(parent, name)
    kind = shape.type_name
    if kind == "structure":
        for member_name, member in shape.members.items():
            item = value.get(member_name) if isinstance(value, Mapping) else None
            if item is not None:
                _element(node, member.serialization.get("name", member_name), member, item)
    elif kind == "list":
        for item in value:
            _element(node, shape.member.serialization.get("name", "member"), shape.member, item)
    elif kind == "map":
        for key, item in value.items():
            entry = ET.SubElement(node, "entry")
            _element(entry, "key", shape.key, key)
            _element(entry, "value", shape.value, item)
    else:
        node.text = _text(kind, value)


def _text(kind: str, value: Any) -> str:
    if kind == "timestamp":
        moment = value if isinstance(value, datetime) else datetime.fromtimestamp(value, UTC)
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if kind == "boolean":
        return "true" if value else "false"
    return str(value)


def xml_error(error: ApiError) -> Response:
    """The ``<ErrorResponse>`` botocore's query parser turns into ``ClientError``."""
    root = ET.Element("ErrorResponse", xmlns=_namespace())
    detail = ET.SubElement(root, "Error")
    ET.SubElement(detail, "Type").text = "Sender" if error.status < 500 else "Receiver"
    ET.SubElement(detail, "Code").text = error.code
    ET.SubElement(detail, "Message").text = error.message
    ET.SubElement(root, "RequestId").text = str(uuid.uuid4())
    body = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return Response(body, status=error.status, content_type="text/xml")


def _namespace() -> str:
    return str(service_model(QUERY_SERVICE).metadata.get("xmlNamespace", ""))
