"""Owns reading every YAML and JSON file the project reads: bounded, strict, one line per problem.

Only regular files (checked before opening, so a FIFO or ``/dev/zero`` never blocks or floods),
at most ``max_bytes`` (checked on ``stat`` and again while reading), only UTF-8 (no byte-order
mark, no NUL byte). YAML: one document, YAML 1.2 core-schema scalars (``010`` is 10, ``1:30``
and ``yes`` are text), no anchors or aliases, no duplicate keys, no tags beyond the core ones,
nesting at most ``max_depth``, at most ``MAX_YAML_VALUES`` values. JSON: the same depth,
duplicate-key and number rules. Every problem is a :class:`~quota_constructs.model.Problem`
naming the line and, when known, the field; the error type is the caller's (``error=``), with
the file as its context.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import yaml

from quota_constructs.model import Problem, QuotaConfigError, clip

_Parser: Any
try:  # libyaml's parser when PyYAML was built with it (about 20 times faster)
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - pure-Python PyYAML
    _Parser = None

KIB = 1024
ORGANISATION_FILE_MAX_BYTES = KIB * KIB
"""Organisation files: the largest valid one (20 shares and 50 tags with every text at its
limit, in three-byte characters) is about 330 KiB."""
TEAM_PROFILE_FILE_MAX_BYTES = KIB * KIB
"""Team-profile files (``quota recommend``): the same size as organisation files."""
PAYLOAD_FILE_MAX_BYTES = 256 * KIB
"""``quota jobs submit --payload``: AWS takes 10 KiB of compact JSON; room for indentation."""
WORKLOAD_FILE_MAX_BYTES = 16 * KIB * KIB
"""Workload CSV files (``quota simulate --workload``): about 150,000 jobs."""
MAX_DEPTH = 20
"""Deepest nesting of mappings and lists (organisation files need 5)."""
MAX_YAML_VALUES = 20_000
"""Most values (scalars, lists and mappings) in one YAML file: a maximal organisation file has
about 1,500; the limit bounds the time to read and validate any file to well under a second."""
MAX_INTEGER_DIGITS = 20
"""Longest integer literal read as a number (20 digits holds any 64-bit integer)."""

_ENCODING_FIX = "save the file as UTF-8 (without a byte-order mark)"
_BOMS = (
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\xef\xbb\xbf", "UTF-8 with a byte-order mark"),
    (b"\xfe\xff", "UTF-16"),
    (b"\xff\xfe", "UTF-16"),
)
# Characters YAML 1.2 does not allow in a stream (c-printable); tab, LF and CR are allowed.
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class InputFileError(QuotaConfigError):
    """A file cannot be read safely; ``problems`` name the line, ``context`` the file."""


ErrorType = type[QuotaConfigError]
Parsed = TypeVar("Parsed")


Segments = tuple[Any, ...]
"""A field's path as the keys and list indices from the root: ``("shares", 0, "name")``."""


@dataclass(frozen=True)
class Document:
    """A parsed file: its data and the line of each field, by its path's segments."""

    data: Any
    lines: Mapping[Segments, int] = field(default_factory=dict)

    def line_of(self, path: str | Sequence[Any]) -> int | None:
        """The line of ``path`` or of its nearest enclosing field; ``None`` when unknown.

        ``path``: segments, or a problem's text path (``shares[0].capacity.ml.g5.xlarge``),
        split on the keys of the data, so a key may hold dots."""
        segments = path_segments(path, self.data) if isinstance(path, str) else tuple(path)
        while segments:
            if segments in self.lines:
                return self.lines[segments]
            segments = segments[:-1]
        return None


def path_segments(path: str, data: Any) -> Segments:
    """The segments of a text path in ``data``: at each mapping the longest key the path goes
    on with (``ml.p4d.24xlarge`` is one key), ``[i]`` a list index; past the data, dots split."""
    segments: list[Any] = []
    rest, node = path, data
    while rest:
        if rest.startswith("["):
            end = rest.find("]")
            if end < 0 or not rest[1:end].isdigit():
                break
            index, rest = int(rest[1:end]), rest[end + 1 :]
            node = node[index] if isinstance(node, list) and index < len(node) else None
            segments.append(index)
            continue
        rest = rest.removeprefix(".")
        key = _key_in(node, rest)
        segments.append(key)
        rest = rest[len(str(key)) :]
        node = node.get(key) if isinstance(node, dict) else None
    return tuple(segments)


def _key_in(node: Any, rest: str) -> Any:
    """The longest key of ``node`` that ``rest`` starts with, up to a ``.`` or ``[``; else the
    text up to the first of them."""
    keys = node if isinstance(node, dict) else {}
    found = [k for k in keys if rest.startswith(str(k)) and rest[len(str(k)) :][:1] in ".["]
    if found:
        return max(found, key=lambda k: len(str(k)))
    return re.split(r"[.\[]", rest, maxsplit=1)[0]


def _fail(error: ErrorType, source: str, problem: Problem) -> NoReturn:
    raise error([problem], context=source)


# --- reading bytes ----------------------------------------------------------------------------


def read_bytes(path: str | Path, *, max_bytes: int, error: ErrorType = InputFileError) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; ``error`` otherwise, never blocking.

    The file type and size are checked before opening (a FIFO would block ``open``, a device
    would never end); the file is opened non-blocking, checked again, and read up to one byte
    past the limit, so a file that grows meanwhile is refused too.
    """
    source = str(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        _fail(error, source, _unreadable(source, exc))
    _check_file(info, max_bytes, error, source)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        _fail(error, source, _unreadable(source, exc))
    try:
        _check_file(os.fstat(fd), max_bytes, error, source)
        data = _read_at_most(fd, max_bytes + 1)
    except OSError as exc:
        _fail(error, source, _unreadable(source, exc))
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        _fail(error, source, _too_large(f"more than {max_bytes} bytes", max_bytes))
    return data


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, min(64 * KIB, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _check_file(info: os.stat_result, max_bytes: int, error: ErrorType, source: str) -> None:
    mode = info.st_mode
    if not stat.S_ISREG(mode):
        kind = _file_kind(mode)
        _fail(
            error,
            source,
            Problem(
                "<file>",
                source,
                f"not a regular file but {kind}; only regular files are read",
                "pass the path of a regular file",
            ),
        )
    if info.st_size > max_bytes:
        _fail(error, source, _too_large(f"{info.st_size} bytes", max_bytes))


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")


def _unreadable(source: str, exc: OSError) -> Problem:
    return Problem("<file>", source, f"cannot read the file: {exc.strerror or exc}", "check it")


def _too_large(size: str, max_bytes: int) -> Problem:
    return Problem(
        "<file>",
        size,
        f"the file is larger than the limit of {max_bytes} bytes",
        "check that this is the right file; split or shorten it",
    )


def decode_utf8(data: bytes, *, source: str, error: ErrorType = InputFileError) -> str:
    """``data`` as UTF-8 text: no byte-order mark, no NUL byte, no invalid sequence."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            _fail(
                error,
                source,
                Problem("<file>", name, f"the file is {name}; only UTF-8 is read", _ENCODING_FIX),
            )
    nul = data.find(b"\x00")
    if nul >= 0:
        _fail(error, source, _bad_byte(data, nul, "a NUL byte (UTF-16, UTF-32 or binary?)"))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = f"byte 0x{data[exc.start]:02x}"
        _fail(error, source, _bad_byte(data, exc.start, f"{byte}, which is not valid UTF-8"))


def _bad_byte(data: bytes, offset: int, what: str) -> Problem:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return Problem(
        f"<file offset {offset}, line {line}, column {column}>",
        None,
        f"the file has {what} at byte offset {offset}",
        _ENCODING_FIX,
    )


def read_text(path: str | Path, *, max_bytes: int, error: ErrorType = InputFileError) -> str:
    """A regular UTF-8 text file of at most ``max_bytes`` (see :func:`read_bytes`)."""
    return decode_utf8(
        read_bytes(path, max_bytes=max_bytes, error=error), source=str(path), error=error
    )


# --- YAML -------------------------------------------------------------------------------------

_STR, _INT, _FLOAT, _BOOL, _NULL = (
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null")
)
_SEQ, _MAP = "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"
# YAML 1.2.2 core schema (section 10.3.2), tried in this order on plain scalars.
_CORE_SCALARS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (_NULL, re.compile(r"(?:null|Null|NULL|~|)\Z")),
    (_BOOL, re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")),
    (_INT, re.compile(r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z")),
    (
        _FLOAT,
        re.compile(
            r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z"
        ),
    ),
)


def _tag_text(tag: str) -> str:
    return clip(tag.replace("tag:yaml.org,2002:", "!!"))


def _core_tag(value: str) -> str:
    return next((tag for tag, pattern in _CORE_SCALARS if pattern.match(value)), _STR)


class _YamlProblem(Exception):
    """A problem at one node: field path, line and column, what is wrong, the fix."""

    def __init__(self, path: str, mark: Any, message: str, fix: str, value: Any = None) -> None:
        super().__init__(message)
        self.problem = Problem(
            path or "<root>",
            value,
            message,
            fix,
            line=mark.line + 1 if mark is not None else None,
        )


def _scalar(event: yaml.ScalarEvent, path: str) -> Any:
    """The value of a scalar event: YAML 1.2 core schema, explicit core tags only."""
    value, tag = event.value, event.tag
    if tag in (None, "!"):
        tag = _core_tag(value) if event.implicit[0] and tag is None else _STR
    try:
        return _CONSTRUCT[tag](value)
    except KeyError:
        raise _YamlProblem(
            path,
            event.start_mark,
            f"the tag {_tag_text(tag)} is not supported",
            "remove the tag; write plain text, numbers, true/false, lists and mappings",
        ) from None
    except ValueError as exc:
        raise _YamlProblem(
            path, event.start_mark, str(exc), "correct the value", clip(value)
        ) from None


def _construct_int(text: str) -> int:
    digits = text.lstrip("+-")
    if len(digits) > MAX_INTEGER_DIGITS + 2:  # 0x / 0o prefixes
        raise ValueError(f"an integer of {len(digits)} digits is out of range")
    if digits[:2] in ("0x", "0o"):
        sign = -1 if text.startswith("-") else 1
        return sign * int(digits[2:], 16 if digits[1] == "x" else 8)
    if len(digits) > MAX_INTEGER_DIGITS:
        raise ValueError(f"an integer of {len(digits)} digits is out of range")
    if not digits.isascii() or not digits.isdigit():
        raise ValueError("!!int takes a whole number")
    return int(text, 10)


def _construct_float(text: str) -> float:
    number = float(text.lower().replace(".inf", "inf").replace(".nan", "nan"))
    if not math.isfinite(number):
        raise ValueError("numbers must be finite (no .inf, .nan or overflowing exponents)")
    return number


def _construct_bool(text: str) -> bool:
    if text not in ("true", "True", "TRUE", "false", "False", "FALSE"):
        raise ValueError("!!bool takes true or false")
    return text.lower() == "true"


def _construct_null(text: str) -> None:
    if text not in ("null", "Null", "NULL", "~", ""):
        raise ValueError("!!null takes null, ~ or nothing")


_CONSTRUCT: dict[str, Callable[[str], Any]] = {
    _STR: str,
    _INT: _construct_int,
    _FLOAT: _construct_float,
    _BOOL: _construct_bool,
    _NULL: _construct_null,
}


@dataclass
class _Collection:
    """A mapping or list being built, its field path and (mappings) the key awaiting a value."""

    value: dict[Any, Any] | list[Any]
    path: str
    segments: Segments
    key: Any = None
    has_key: bool = False
    key_lines: dict[Any, int] = field(default_factory=dict)

    def child_path(self) -> str:
        if isinstance(self.value, list):
            return f"{self.path}[{len(self.value)}]"
        return f"{self.path}.{self.key}" if self.path else str(self.key)

    def child_segments(self) -> Segments:
        return (*self.segments, len(self.value) if isinstance(self.value, list) else self.key)


def _line(event: yaml.Event) -> int:
    return event.start_mark.line + 1 if event.start_mark is not None else 0


class _Builder:
    """Builds data from parser events with an explicit stack (no recursion, depth bounded)."""

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.stack: list[_Collection] = []
        self.lines: dict[Segments, int] = {}
        self.root: Any = None
        self.values = 0

    def path(self) -> str:
        return self.stack[-1].child_path() if self.stack else ""

    def event(self, event: yaml.Event) -> None:
        """Take one node event (scalar, start or end of a collection, alias)."""
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise _YamlProblem(
                self.path(),
                event.start_mark,
                "anchors (&name) and aliases (*name) are not allowed",
                "write each value out in full where it is used",
            )
        if isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
            self._count(event)
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            done = self.stack.pop()
            self._add(done.value, event)
        elif isinstance(event, yaml.ScalarEvent):
            key = bool(self.stack) and self._expects_key()
            self._add(_scalar(event, self.stack[-1].path if key else self.path()), event)
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            self._start(event)

    def _count(self, event: yaml.Event) -> None:
        self.values += 1
        if self.values > MAX_YAML_VALUES:
            raise _YamlProblem(
                self.path(),
                event.start_mark,
                f"more than {MAX_YAML_VALUES} values in one file",
                "check that this is the right file; no file this project reads needs that many",
            )

    def _start(self, event: yaml.CollectionStartEvent) -> None:
        mapping = isinstance(event, yaml.MappingStartEvent)
        path = self.path()
        if self.stack and self._expects_key():
            raise _YamlProblem(
                self.stack[-1].path,
                event.start_mark,
                "mapping keys must be plain values, not lists or mappings",
                "use a text key",
            )
        if event.tag not in (None, "!", _MAP if mapping else _SEQ):
            raise _YamlProblem(
                path,
                event.start_mark,
                f"the tag {_tag_text(event.tag)} is not supported",
                "remove the tag; write plain lists and mappings",
            )
        if len(self.stack) >= self.max_depth:
            raise _YamlProblem(
                path,
                event.start_mark,
                f"nested deeper than {self.max_depth} levels",
                "flatten the structure; no file this project reads needs that depth",
            )
        segments = self.stack[-1].child_segments() if self.stack else ()
        if self.stack:
            self.lines.setdefault(segments, _line(event))
        self.stack.append(_Collection({} if mapping else [], path, segments))

    def _expects_key(self) -> bool:
        top = self.stack[-1]
        return isinstance(top.value, dict) and not top.has_key

    def _add(self, value: Any, event: yaml.Event) -> None:
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        line = _line(event)
        if isinstance(top.value, list):
            self.lines.setdefault(top.child_segments(), line)
            top.value.append(value)
        elif top.has_key:
            top.value[top.key] = value
            top.has_key = False
        else:
            self._key(top, value, event)

    def _key(self, top: _Collection, key: Any, event: yaml.Event) -> None:
        line = _line(event)
        top.key, top.has_key = key, True
        if key in top.key_lines:
            raise _YamlProblem(
                top.child_path(),
                event.start_mark,
                f"duplicate key {clip(str(key))!r}: it is also at line {top.key_lines[key]}, and "
                "YAML would keep only one of the values",
                "keep one of the two",
            )
        top.key_lines[key] = line
        self.lines[top.child_segments()] = line


def parse_yaml(
    text: str,
    *,
    source: str = "<text>",
    max_depth: int = MAX_DEPTH,
    error: ErrorType = InputFileError,
) -> Document:
    """One YAML document of ``text`` with the rules of this module; ``error`` names the line."""
    bad = _NOT_PRINTABLE.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        column = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        _fail(
            error,
            source,
            Problem(
                f"<yaml line {line}, column {column}>",
                None,
                f"the character U+{ord(bad[0]):04X} is not allowed in YAML",
                "remove it; write control characters as escapes in double quotes",
            ),
        )
    builder = _Builder(max_depth)
    try:
        for event in _events(text, source):
            builder.event(event)
    except _YamlProblem as exc:
        _fail(error, source, exc.problem)
    except yaml.YAMLError as exc:
        _fail(error, source, _syntax_problem(exc))
    return Document(builder.root, builder.lines)


def _events(text: str, source: str) -> Iterator[yaml.Event]:
    """The node events of the stream's single document (parse errors raise ``YAMLError``)."""
    parser = _Parser(text) if _Parser is not None else _PyParser(text)
    documents = 0
    while True:
        event = parser.get_event()
        if isinstance(event, yaml.StreamEndEvent):
            return
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise _YamlProblem(
                    "<root>",
                    event.start_mark,
                    "more than one YAML document ('---') in the file",
                    "keep one document per file",
                )
        elif not isinstance(event, (yaml.StreamStartEvent, yaml.DocumentEndEvent)):
            yield event


class _PyParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """PyYAML's pure-Python parser (used when libyaml is not available)."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


def _syntax_problem(exc: yaml.YAMLError) -> Problem:
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
    problem = getattr(exc, "problem", None) or str(exc)
    return Problem(
        f"<yaml {where}>",
        None,
        f"not valid YAML: {clip(str(problem), 200)}",
        "fix the indentation or quoting at that line",
    )


def load_yaml_document(
    path: str | Path,
    *,
    max_bytes: int = ORGANISATION_FILE_MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    error: ErrorType = InputFileError,
) -> Document:
    """Read and parse a YAML file (:func:`read_text`, :func:`parse_yaml`), lines included."""
    text = read_text(path, max_bytes=max_bytes, error=error)
    return parse_yaml(text, source=str(path), max_depth=max_depth, error=error)


def load_file(
    path: str | Path,
    parse: Callable[[Any, str], Parsed],
    *,
    max_bytes: int,
    error: ErrorType = InputFileError,
) -> Parsed:
    """The one loader of every file kind: read ``path`` safely (:func:`load_yaml_document`),
    then ``parse(data, source)``; each problem of the ``error`` it raises that has no line gets
    the line of its path in the file. Every problem of the file is in that one error."""
    document = load_yaml_document(path, max_bytes=max_bytes, error=error)
    try:
        return parse(document.data, str(path))
    except error as exc:
        problems = [
            p if p.line is not None else replace(p, line=document.line_of(p.path))
            for p in exc.problems
        ]
        raise error(problems, context=exc.context) from None


def load_yaml(
    path: str | Path,
    *,
    max_bytes: int = TEAM_PROFILE_FILE_MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    error: ErrorType = InputFileError,
) -> Any:
    """The data of a YAML file read with every rule of this module."""
    return load_yaml_document(path, max_bytes=max_bytes, max_depth=max_depth, error=error).data


_FOLDED_BREAKS = re.compile("[\x85\u2028\u2029]")


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper, quoting every text that YAML 1.1 or 1.2 would read as non-text,
    and writing a value used twice out twice (no anchors: :func:`parse_yaml` refuses them)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def represent_str(self, data: str) -> yaml.ScalarNode:
        """Double quotes for text with a line break PyYAML would fold (NEL, U+2028, U+2029)."""
        style = '"' if _FOLDED_BREAKS.search(data) else None
        return self.represent_scalar(_STR, data, style=style)


_Dumper.add_representer(str, _Dumper.represent_str)
for _tag, _pattern in _CORE_SCALARS:
    _Dumper.add_implicit_resolver(_tag, _pattern, [*"-+0123456789.~nNtTfF", ""])


def dump_yaml(data: Any) -> str:
    """YAML text that :func:`parse_yaml` reads back as ``data`` (block style, Unicode kept)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


# --- JSON -------------------------------------------------------------------------------------

_JSON_STRUCTURE = re.compile(r'["{}\[\],:]')
_scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")  # noqa: B009 (untyped)


def parse_json(
    text: str,
    *,
    source: str = "<text>",
    max_depth: int = MAX_DEPTH,
    error: ErrorType = InputFileError,
) -> Any:
    """JSON ``text``: nesting at most ``max_depth``, no duplicate keys, finite numbers only."""
    try:
        _check_json_structure(text, max_depth)
        return json.loads(
            text,
            parse_int=_json_int,
            parse_float=_json_float,
            parse_constant=_json_constant,
        )
    except _JsonProblem as exc:
        _fail(error, source, exc.problem)
    except json.JSONDecodeError as exc:
        _fail(
            error,
            source,
            Problem(
                f"<json line {exc.lineno}, column {exc.colno}>",
                None,
                f"not valid JSON: {exc.msg}",
                "fix the JSON at that line",
            ),
        )


class _JsonProblem(Exception):
    def __init__(
        self, text: str, offset: int | None, message: str, fix: str, path: str = ""
    ) -> None:
        super().__init__(message)
        line = text.count("\n", 0, offset) + 1 if offset is not None else None
        self.problem = Problem(path or "<json>", None, message, fix, line=line)


def _check_json_structure(text: str, max_depth: int) -> None:
    """Depth and duplicate keys, found by a scan of the structure before ``json.loads``."""
    stack: list[dict[str, int] | None] = []  # per open container: keys seen (objects) or None
    expect_key = False
    position = 0
    while (match := _JSON_STRUCTURE.search(text, position)) is not None:
        char, position = match[0], match.end()
        if char == '"':
            key, position = _scanstring(text, position)
            if expect_key and stack and stack[-1] is not None:
                _json_key(text, stack[-1], key, match.start())
                expect_key = False
        elif char in "{[":
            if len(stack) >= max_depth:
                raise _JsonProblem(
                    text, match.start(), f"nested deeper than {max_depth} levels", "flatten it"
                )
            stack.append({} if char == "{" else None)
            expect_key = char == "{"
        elif char in "}]":
            if stack:
                stack.pop()
            expect_key = False
        elif char == ",":
            expect_key = bool(stack) and stack[-1] is not None


def _json_key(text: str, seen: dict[str, int], key: str, offset: int) -> None:
    """Record ``key`` at ``offset`` of its object (``seen``: key -> offset); a repeat is a
    problem naming both lines. Lines are counted only then: counting them for every key made
    a 1 MiB body of small objects cost seconds (quadratic)."""
    if key in seen:
        first = text.count("\n", 0, seen[key]) + 1
        raise _JsonProblem(
            text,
            offset,
            f"duplicate key {clip(key)!r}: it is also at line {first} of the same object, "
            "and only one value would be kept",
            "keep one of the two",
            path=clip(key),
        )
    seen[key] = offset


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _JsonProblem(
            text, None, f"an integer of {len(text)} digits is out of range", "correct it"
        )
    return int(text)


def _json_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _JsonProblem(text, None, f"the number {clip(text)} is out of range", "correct it")
    return number


def _json_constant(name: str) -> float:
    raise _JsonProblem(name, None, f"{name} is not a JSON number", "write a finite number")


def load_json(
    path: str | Path,
    *,
    max_bytes: int = PAYLOAD_FILE_MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    error: ErrorType = InputFileError,
) -> Any:
    """Read and parse a JSON file with the rules of :func:`read_text` and :func:`parse_json`."""
    text = read_text(path, max_bytes=max_bytes, error=error)
    return parse_json(text, source=str(path), max_depth=max_depth, error=error)
