r"""Owns request validation from botocore's service models: every constraint a shape declares.

botocore's client checks only types, required members and ``min``; the service checks them
all. :func:`problems` walks a value against its shape and reports, with the member's path,
every broken declaration: required members, unknown members, types (a JSON boolean is not a
number; ``null`` is no member's value, as botocore never sends one), ``enum``, ``min`` / ``max``
(numbers: value; strings: length; lists and maps: entries) and ``pattern`` (matched whole, as
the services' Java regular expressions are; the ``regex`` module reads Java's ``\p{L}`` classes).
Lists, maps and strings the model leaves open get the bound :mod:`.input_bounds` gives them
(AWS's documented numbers, else the emulator's stated defaults), and the refusal names it.
Nothing here is written per operation: the constraints are the model's.

The walk is linear in the request: a list or string over its bound is refused without reading
its items, and nothing compares items with each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import regex
from botocore.model import Shape

from quota_constructs.local.wire.input_bounds import Bound, member_bound

MAX_SHOWN = 60
"""Characters of a refused value quoted in a message."""


def shown(value: Any) -> str:
    """``repr`` of a value, cut to :data:`MAX_SHOWN` characters."""
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


JAVA_ASCII_CLASSES = {r"\w": "a-zA-Z0-9_", r"\d": "0-9"}
r"""Java's ``\w`` and ``\d`` are ASCII; the ``regex`` module's are Unicode."""


def java_pattern(pattern: str) -> str:
    r"""A model's Java regular expression for the ``regex`` module (which has Java's ``\p{L}``
    classes): ``\w`` and ``\d`` spelled out as the ASCII sets Java means."""
    out: list[str] = []
    in_class, index = False, 0
    while index < len(pattern):
        pair = pattern[index : index + 2]
        if pair in JAVA_ASCII_CLASSES:
            body = JAVA_ASCII_CLASSES[pair]
            out.append(body if in_class else f"[{body}]")
            index += 2
            continue
        if pair.startswith("\\"):
            out.append(pair)
            index += 2
            continue
        in_class = (in_class or pair[0] == "[") and pair[0] != "]"
        out.append(pair[0])
        index += 1
    return "".join(out)


CASE_INSENSITIVE_ENUMS = frozenset({"RetryAction", "ServiceJobRetryAction"})
"""Enums whose values "aren't case sensitive" (botocore's ``EvaluateOnExit.action`` doc; the
SageMaker SDK's own integration test sends the service-job action ``"Retry"``)."""


def _in_enum(value: str, shape: Shape) -> bool:
    enum = shape.enum
    if shape.name in CASE_INSENSITIVE_ENUMS:
        return value.upper() in enum
    return value in enum


@cache
def compiled(pattern: str) -> regex.Pattern[str]:
    """A model's ``pattern``, compiled as Java reads it."""
    return regex.compile(java_pattern(pattern))


@dataclass(frozen=True)
class Member:
    """Where a value sits: its ``path`` in the request, the ``service`` and the structure
    (``owner``) and member name that declare it (for :func:`~.input_bounds.member_bound`)."""

    path: str
    service: str = ""
    owner: str = ""
    name: str = ""

    def bound(self, shape: Shape) -> Bound | None:
        """The bound :mod:`.input_bounds` gives this member, if its shape leaves it open."""
        if not self.service:
            return None
        return member_bound(self.service, self.owner, self.name, shape)

    def inner(self, path: str, owner: str, name: str) -> Member:
        """A value inside this one."""
        return Member(path, self.service, owner, name)


def problems(
    value: Any, shape: Shape, path: str, *, optional: bool = False, service: str = ""
) -> list[str]:
    """Every constraint of ``shape`` that ``value`` (found at ``path``) breaks, as messages.

    ``null`` is refused everywhere (``optional``: the member may be left out instead).
    ``service``: also apply :mod:`.input_bounds`' bounds of that service's open members.
    """
    return _problems(value, shape, Member(path, service), optional=optional)


def _problems(value: Any, shape: Shape, at: Member, *, optional: bool = False) -> list[str]:
    kind = shape.type_name
    check = _CHECKS.get(kind)
    if check is None:  # document, jsonvalue: anything goes
        return []
    if value is None:
        fix = ", or leave the member out" if optional else ""
        return [f"{at.path}: must not be null; send {_WANTED[kind]}{fix}"]
    return check(value, shape, at)


def _type_problem(value: Any, at: Member | str, wanted: str) -> list[str]:
    path = at.path if isinstance(at, Member) else at
    return [f"{path}: must be {wanted} (got {type(value).__name__} {shown(value)})"]


def _length_problems(size: int, shape: Shape, at: Member, unit: str) -> list[str]:
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    if low is not None and size < low:
        return [f"{at.path}: needs at least {low} {unit} (got {size})"]
    if high is not None and size > high:
        return [f"{at.path}: allows at most {high} {unit} (got {size})"]
    bound = at.bound(shape)
    if bound is not None and size > bound.limit:
        kind = _KIND_OF[shape.type_name]
        return [
            f"{at.path}: {kind} of up to {bound.limit} {unit} (got {size}); {bound.source}; "
            f"fix: send at most {bound.limit}"
        ]
    return []


_KIND_OF = {"list": "a list", "map": "a map", "string": "a string"}


def _structure(value: Any, shape: Shape, at: Member) -> list[str]:
    if not isinstance(value, Mapping):
        return _type_problem(value, at.path or "request", "a JSON object")
    prefix = f"{at.path}." if at.path else ""
    found: list[str] = []
    for name in shape.required_members:
        if name not in value:
            found.append(f"{prefix}{name}: missing required parameter; add it")
    for name, item in value.items():
        member = shape.members.get(name)
        if member is None:
            known = ", ".join(shape.members)
            found.append(f"{prefix}{name}: unknown member; the members are {known}")
        else:
            optional = name not in shape.required_members
            inner = at.inner(f"{prefix}{name}", shape.name, name)
            found += _problems(item, member, inner, optional=optional)
    return found


def _string(value: Any, shape: Shape, at: Member) -> list[str]:
    if not isinstance(value, str):
        return _type_problem(value, at, "a string")
    enum = shape.enum
    if enum and not _in_enum(value, shape):
        return [f"{at.path}: must be one of {', '.join(enum)} (got {shown(value)})"]
    found = _length_problems(len(value), shape, at, "characters")
    pattern = shape.metadata.get("pattern")
    if not found and pattern and not compiled(pattern).fullmatch(value):
        found.append(f"{at.path}: must match the pattern {pattern} (got {shown(value)})")
    return found


def _number(value: Any, shape: Shape, at: Member) -> list[str]:
    path = at.path
    integral = shape.type_name in ("integer", "long")
    allowed: tuple[type, ...] = (int,) if integral else (int, float)
    if isinstance(value, bool) or not isinstance(value, allowed):
        return _type_problem(value, path, "an integer" if integral else "a number")
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    if low is not None and value < low:
        return [f"{path}: must be at least {low} (got {value})"]
    if high is not None and value > high:
        return [f"{path}: must be at most {high} (got {value})"]
    return []


def _boolean(value: Any, shape: Shape, at: Member) -> list[str]:
    return [] if isinstance(value, bool) else _type_problem(value, at, "true or false")


def _timestamp(value: Any, shape: Shape, at: Member) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return _type_problem(value, at, "a timestamp (epoch seconds)")
    return []


def _blob(value: Any, shape: Shape, at: Member) -> list[str]:
    return [] if isinstance(value, str) else _type_problem(value, at, "base64 text")


def _list(value: Any, shape: Shape, at: Member) -> list[str]:
    if not isinstance(value, list):
        return _type_problem(value, at, "a JSON array")
    found = _length_problems(len(value), shape, at, "entries")
    if found:  # too long or too short: its items are not read
        return found
    member: Shape = shape.member
    for index, item in enumerate(value):
        found += _problems(item, member, at.inner(f"{at.path}[{index}]", shape.name, "member"))
    return found


def _map(value: Any, shape: Shape, at: Member) -> list[str]:
    if not isinstance(value, Mapping):
        return _type_problem(value, at, "a JSON object")
    found = _length_problems(len(value), shape, at, "entries")
    if found:
        return found
    key_shape: Shape = shape.key
    value_shape: Shape = shape.value
    for key, item in value.items():
        where = f"{at.path}[{key!r}]"
        key_problems = _problems(key, key_shape, at.inner(where, shape.name, "key"))
        found += [f"{m} (a key)" for m in key_problems]
        found += _problems(item, value_shape, at.inner(where, shape.name, "value"))
    return found


_WANTED = {
    "structure": "a JSON object",
    "string": "a string",
    "integer": "an integer",
    "long": "an integer",
    "double": "a number",
    "float": "a number",
    "boolean": "true or false",
    "timestamp": "a timestamp",
    "blob": "base64 text",
    "list": "a JSON array",
    "map": "a JSON object",
}
"""What a member of each type must be, in messages."""

_CHECKS = {
    "structure": _structure,
    "string": _string,
    "integer": _number,
    "long": _number,
    "double": _number,
    "float": _number,
    "boolean": _boolean,
    "timestamp": _timestamp,
    "blob": _blob,
    "list": _list,
    "map": _map,
}
