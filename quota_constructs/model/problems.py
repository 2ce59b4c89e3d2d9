"""Problems and the one error type: what a violated rule says (field, value, fix), bounded."""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

MAX_SHOWN_CHARS = 80
"""Longest value, path or text a message shows; longer ones are cut with their length."""
MAX_LISTED_PROBLEMS = 50
"""Most problems one error message lists (``QuotaConfigError.problems`` keeps them all)."""


class _BoundedRepr(reprlib.Repr):
    """``reprlib`` with integers bounded too (``repr`` of a huge int is slow or refused)."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 200:
            return f"<an integer of {len(str(x.bit_length()))}+ digits in binary>"
        return super().repr_int(x, level)


_REPR = _BoundedRepr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple = 3, 5, 5, 5
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 40, 40, 40


def one_line(text: str) -> str:
    """``text`` with line breaks and other unprintable characters escaped as in ``repr``."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def clip(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` or its first ``limit`` characters, an ellipsis and the original length."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def bounded_repr(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """``repr(value)`` of bounded size, without ever building the repr of a huge value."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value)} characters)"
    if isinstance(value, Mapping):
        value = dict(value)
    if isinstance(value, (dict, list, tuple, set, frozenset, int, float, bool, type(None))):
        text = _REPR.repr(value)
    else:
        text = _REPR.repr(repr(value)[: limit + 1])[1:-1]
    text = text if len(text) <= 2 * limit else f"{text[: 2 * limit]}…"
    if isinstance(value, (dict, list, tuple, set, frozenset)) and len(value) > _REPR.maxlist:
        text += f" ({len(value)} items)"
    return text


@dataclass(frozen=True)
class Problem:
    """One violated rule: where (field path), what value, what is wrong and how to fix it.

    ``line``: the line of the field in its file, when known. ``str()`` is bounded: long values,
    paths and texts are cut (their length shown), so a hostile value cannot flood a message.
    """

    path: str
    value: Any
    message: str
    fix: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        path, message = clip(self.path, 2 * MAX_SHOWN_CHARS), clip(self.message, 400)
        return one_line(
            f"{where}{path}: {message} (got {bounded_repr(self.value)}); fix: {clip(self.fix, 400)}"
        )


class QuotaConfigError(ValueError):
    """A quota configuration or request breaks one or more rules; ``problems`` lists them all.

    The message lists at most ``MAX_LISTED_PROBLEMS`` of them, then how many more there are.
    """

    def __init__(self, problems: Iterable[Problem], *, context: str = "") -> None:
        self.problems = tuple(problems)
        self.context = context
        lines = [str(p) for p in self.problems[:MAX_LISTED_PROBLEMS]]
        if len(self.problems) > MAX_LISTED_PROBLEMS:
            lines.append(f"... and {len(self.problems) - MAX_LISTED_PROBLEMS} more problems")
        head = f"{one_line(clip(context, 4 * MAX_SHOWN_CHARS))}: " if context else ""
        if len(self.problems) == 1:
            super().__init__(head + lines[0])
        else:
            count = len(self.problems)
            super().__init__(head + f"{count} problems:\n  - " + "\n  - ".join(lines))


def raise_if(problems: list[Problem], *, context: str = "") -> None:
    """Raise :class:`QuotaConfigError` when ``problems`` is not empty."""
    if problems:
        raise QuotaConfigError(problems, context=context)


def join_path(prefix: str, name: str) -> str:
    if not prefix:
        return name
    return f"{prefix}{name}" if name.startswith("[") else f"{prefix}.{name}"


Member = TypeVar("Member", bound=Enum)


def enum_member(
    kind: type[Member], value: object, path: str, *, what: str, any_case: bool = False
) -> Member:
    """``value`` as a member of ``kind``; a :class:`QuotaConfigError` naming ``path``, the value
    and every valid value otherwise. ``any_case`` also takes ``"lend"`` for ``LEND`` (the
    constructs' string props, as CloudFormation's enum properties)."""
    if isinstance(value, kind):
        return value
    for member in kind:
        wanted = member.value
        if value == wanted or (
            any_case and isinstance(value, str) and value.strip().upper() == str(wanted).upper()
        ):
            return member
    valid = ", ".join(str(member.value) for member in kind)
    case = " (any case)" if any_case else ""
    raise QuotaConfigError(
        [Problem(path, value, f"not a valid {what}", f"use one of {valid}{case}")]
    )
