"""Walks botocore's input shapes of the served operations: every declared constraint, and
requests that keep all of them but one, just inside or just outside its bound."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from botocore.model import OperationModel, Shape

from quota_constructs.local.emulator import Emulator
from quota_constructs.local.wire.protocol import service_model
from quota_constructs.local.wire.validation import CASE_INSENSITIVE_ENUMS

KEY, VALUE = "<key>", "<value>"
"""Path steps into a map's key or value (a list's step is its index, 0)."""
OMIT = object()
"""A leaf that leaves its member out of the request."""

ARN_CHARACTERS = (
    "[\\u0009\\u000A\\u000D\\u0020-\\u007E\\u0085\\u00A0-\\uD7FF\\uE000-\\uFFFD\\u10000-\\u10FFFF]+"
)
TAG_CHARACTERS = "[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]"
PATTERN_SAMPLES = {
    "[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}": ("AWSBatch-job-1", "AWSBatch_job_1"),
    "^(tag:.+|Name|Type|KeyId|Path|Label|Tier|DataType)$": ("Name", "Nam"),
    ARN_CHARACTERS: ("arn:aws:iam::123456789012:role/r", "arn:aws:iam::123456789012:role/\x01"),
    "[\\w+=,.@-]*": ("session-1", "session 1"),
    "[\\u0009\\u000A\\u000D\\u0020-\\u00FF]+": ("{}", "{\u0100}"),
    TAG_CHARACTERS + "+": ("team \u00e91", "team#"),
    TAG_CHARACTERS + "*": ("a", "a#"),
    "[\\w+=,.@:\\/-]*": ("ext-1", "ext 1"),
    "[\\w+=/:,.@-]*": ("arn:aws:iam::123456789012:mfa/u", "serial number"),
    "[\\d]*": ("123456", "12345a"),
    # SageMaker training plans (local/handlers/training_plans.py)
    "ml.[a-z0-9\\-.]+": ("ml.u-p6e-gb200x72", "ml."),
    "[a-zA-Z0-9](-*[a-zA-Z0-9]){0,63}": ("p5-june", "p5_june"),
    "[a-z0-9\\-]+": ("tpo-1", "TPO-1"),
    "(arn:aws[a-z\\-]*:sagemaker:[a-z0-9\\-]*:[0-9]{12}:training-plan/)?"
    "[a-zA-Z0-9](-*[a-zA-Z0-9]){0,63}": (
        "p5-june",
        "p5_june",
    ),
    ".*": ("token", "line\nbreak"),
    f"({TAG_CHARACTERS}*)": ("a", "a#"),
    # Service Quotas (local/handlers/service_quotas.py)
    "[a-zA-Z][a-zA-Z0-9-]{1,63}": ("sagemaker", "1sagemaker"),
    "[a-zA-Z][a-zA-Z0-9-]{1,128}": ("L-1216C47A", "L_1216C47A"),
    "^[a-zA-Z0-9/+]*={0,2}$": ("MTAw", "MTAw!"),
}
"""A string each declared pattern accepts and a near miss it refuses."""

PHRASES = {
    "required": "missing required parameter",
    "enum": "must be one of",
    "min": "needs at least",
    "max": "allows at most",
    "min-value": "must be at least",
    "max-value": "must be at most",
    "pattern": "must match the pattern",
}
"""What the emulator says when a constraint of each kind is broken."""

Step = str | int


@dataclass(frozen=True)
class Constraint:
    """One declared constraint of an operation's input, at ``path``."""

    operation: OperationModel
    path: tuple[Step, ...]
    kind: str
    shape: Shape

    @property
    def id(self) -> str:
        return f"{self.operation.name}:{render(self.path) or '<request>'}:{self.kind}"

    @property
    def bound(self) -> Any:
        if self.kind in ("min", "min-value"):
            return self.shape.metadata["min"]
        if self.kind in ("max", "max-value"):
            return self.shape.metadata["max"]
        if self.kind == "pattern":
            return self.shape.metadata["pattern"]
        return self.shape.enum if self.kind == "enum" else None


def served_operations() -> list[OperationModel]:
    """Every operation the emulator answers, with botocore's model."""
    served = Emulator().served_operations()
    return [
        service_model(service).operation_model(name)
        for service, names in served.items()
        for name in names
    ]


def render(path: tuple[Step, ...], key: str = "k0") -> str:
    """A path as the emulator's messages name it (``a.b[0]['k0']``)."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step in (KEY, VALUE):
            out += f"[{key!r}]"
        else:
            out += f".{step}" if out else step
    return out


def constraints(op: OperationModel) -> Iterator[Constraint]:
    """Every declared constraint of ``op``'s input shape."""
    if op.input_shape is not None:
        yield from _walk(op, op.input_shape, (), ())


def _walk(
    op: OperationModel, shape: Shape, path: tuple[Step, ...], seen: tuple[str, ...]
) -> Iterator[Constraint]:
    meta, kind = shape.metadata, shape.type_name
    if kind in ("integer", "long", "double", "float"):
        for bound in ("min", "max"):
            if bound in meta:
                yield Constraint(op, path, f"{bound}-value", shape)
    else:
        for bound in ("min", "max"):
            if bound in meta:
                yield Constraint(op, path, bound, shape)
    if kind == "string" and shape.enum:
        yield Constraint(op, path, "enum", shape)
    if kind == "string" and "pattern" in meta:
        yield Constraint(op, path, "pattern", shape)
    if shape.name in seen:
        return
    if kind == "structure":
        for name, member in shape.members.items():
            if name in shape.required_members:
                yield Constraint(op, (*path, name), "required", member)
            yield from _walk(op, member, (*path, name), (*seen, shape.name))
    elif kind == "list":
        yield from _walk(op, shape.member, (*path, 0), (*seen, shape.name))
    elif kind == "map":
        yield from _walk(op, shape.key, (*path, KEY), (*seen, shape.name))
        yield from _walk(op, shape.value, (*path, VALUE), (*seen, shape.name))


# --- values -------------------------------------------------------------------------------------


def minimal(shape: Shape) -> Any:
    """The smallest value that keeps every constraint of ``shape``."""
    meta, kind = shape.metadata, shape.type_name
    if kind == "structure":
        return {name: minimal(shape.members[name]) for name in shape.required_members}
    if kind == "list":
        return [minimal(shape.member) for _ in range(meta.get("min", 0))]
    if kind == "map":
        return {f"k{i}": minimal(shape.value) for i in range(meta.get("min", 0))}
    if kind == "string":
        if shape.enum:
            return shape.enum[0]
        if "pattern" in meta:
            return PATTERN_SAMPLES[meta["pattern"]][0]
        return "a" * max(meta.get("min", 1), 1)
    if kind in ("integer", "long", "double", "float"):
        return max(meta.get("min", 1), min(meta.get("max", 1), 1))
    return {"boolean": True, "timestamp": 0, "blob": ""}.get(kind)


def item(shape: Shape) -> Any:
    """A list item: the minimal value, with one member when a structure needs none (an empty
    structure is no item at all in the query protocol)."""
    value = minimal(shape)
    if shape.type_name == "structure" and not value:
        name, member = next(iter(shape.members.items()))
        value[name] = minimal(member)
    return value


def sized(shape: Shape, size: int) -> Any:
    """A value of ``shape`` with ``size`` characters, items or entries."""
    kind = shape.type_name
    if kind == "list":
        return [item(shape.member) for _ in range(size)]
    if kind == "map":
        return {f"k{i}": minimal(shape.value) for i in range(size)}
    return "a" * size


def leaves(constraint: Constraint) -> tuple[list[Any], list[Any]]:
    """Values just inside and just outside the constraint (``OMIT``: member left out)."""
    shape, kind, bound = constraint.shape, constraint.kind, constraint.bound
    if kind == "required":
        return [minimal(shape)], [OMIT]
    if kind == "enum":
        first = bound[0]
        if shape.name in CASE_INSENSITIVE_ENUMS:  # "The values aren't case sensitive."
            return [*bound, *(v.lower() for v in bound)], [first + "X"]
        near = first.lower() if first.lower() != first else first + "X"
        return list(bound), [near]
    if kind == "pattern":
        inside, outside = PATTERN_SAMPLES[bound]
        return [inside], [outside]
    if kind == "min":
        return [sized(shape, bound)], ([sized(shape, bound - 1)] if bound > 0 else [])
    if kind == "max":
        return [sized(shape, bound)], [sized(shape, bound + 1)]
    step = 1 if shape.type_name in ("integer", "long") else 0.5
    if kind == "min-value":
        return [bound], [bound - step]
    return [bound], [bound + step]


def request_with(constraint: Constraint, leaf: Any) -> dict[str, Any]:
    """The operation's minimal request with ``leaf`` at the constraint's path."""
    assert constraint.operation.input_shape is not None
    built = _build(constraint.operation.input_shape, constraint.path, lambda: leaf)
    assert isinstance(built, dict)
    return built


def _build(shape: Shape, path: tuple[Step, ...], leaf: Callable[[], Any]) -> Any:
    if not path:
        return leaf()
    head, rest = path[0], path[1:]
    kind = shape.type_name
    if kind == "structure":
        value = minimal(shape)
        assert isinstance(head, str)
        child = _build(shape.members[head], rest, leaf)
        if child is OMIT:
            value.pop(head, None)
        else:
            value[head] = child
        return value
    if kind == "list":
        return [_build(shape.member, rest, leaf)]
    if head == KEY:
        return {_build(shape.key, rest, leaf): minimal(shape.value)}
    return {"k0": _build(shape.value, rest, leaf)}


def expected_path(constraint: Constraint, leaf: Any) -> str:
    """Where the emulator's message puts a problem with ``leaf``."""
    if constraint.path and constraint.path[-1] == KEY:
        return render(constraint.path, key=leaf)
    return render(constraint.path)


# --- members ------------------------------------------------------------------------------------


def member_paths(op: OperationModel) -> Iterator[tuple[tuple[Step, ...], Shape]]:
    """Every member of ``op``'s input that a JSON body carries, with its shape (list items and
    map values included; map keys, which JSON cannot make null, and recursion left out)."""
    if op.input_shape is not None:
        yield from _members(op.input_shape, (), ())


def _members(
    shape: Shape, path: tuple[Step, ...], seen: tuple[str, ...]
) -> Iterator[tuple[tuple[Step, ...], Shape]]:
    if path:
        yield path, shape
    if shape.name in seen:
        return
    kind, inside = shape.type_name, (*seen, shape.name)
    if kind == "structure":
        for name, member in shape.members.items():
            yield from _members(member, (*path, name), inside)
    elif kind == "list":
        yield from _members(shape.member, (*path, 0), inside)
    elif kind == "map":
        yield from _members(shape.value, (*path, VALUE), inside)


def request_at(op: OperationModel, path: tuple[Step, ...], leaf: Any) -> dict[str, Any]:
    """``op``'s minimal request with ``leaf`` at ``path`` (any value, ``None`` included)."""
    assert op.input_shape is not None
    built = _build(op.input_shape, path, lambda: leaf)
    assert isinstance(built, dict)
    return built
