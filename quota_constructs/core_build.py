"""Owns the build of the optional compiled core (``quota build-core``; ``make setup`` runs it).

Compiles every module of ``quota_constructs/scheduling`` except ``__init__`` and ``compiled``
(the import logic) with mypyc in a scratch directory, then replaces
:func:`~quota_constructs.scheduling.compiled.build_dir` with the result and its manifest (the
digest of the sources it compiled, the interpreter's extension suffix); the package uses the
build only while that digest matches its sources. Needs mypy (it includes mypyc: the
``compiled`` extra), setuptools, a C compiler and the Python headers. Works the same in a
checkout and in an installed package. Never prints: the compiler's output goes to a log, and
:func:`build_core` returns what happened.

The one speed trick of the core lives here: the scheduler's records are plain dataclasses,
built by keyword, but mypyc leaves the ``__init__`` that ``@dataclass`` generates at run time
as interpreted Python (a frozen one sets each field through ``object.__setattr__``). So the
build compiles a copy of the sources in which :func:`native_inits` has written each such
class the same ``__init__`` as source, which mypyc compiles to native stores. Measured on this
machine with the compiled core: an ``Attempt`` (7 fields) built in 34 ns instead of 1,140 ns;
``benchmarks/bench_command.py``'s 100k-job overloaded trace builds about 770,000 records
(requests, attempts, preemption records and targets, victim candidates, the dispatcher's
blocked shares), so about 0.8 of the command's 5.1 CPU seconds compiled (that count times that
difference). With it, ``bench_command.py --against`` the hand-written constructors it replaced
(two runs): 0.96x-1.04x compiled, the same JSON. The pure Python sources, the reference, are
never changed.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from quota_constructs.scheduling import compiled


@dataclass(frozen=True)
class CoreBuild:
    """What :func:`build_core` did: ``built`` now, already ``up_to_date``, or neither
    (``reason`` says why; pure Python is used)."""

    built: bool
    up_to_date: bool
    where: Path
    seconds: float = 0.0
    reason: str = ""


@contextlib.contextmanager
def _output_to(log: Path) -> Iterator[None]:
    """Send this process's stdout and stderr, the C compiler's included, to ``log``."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with log.open("wb") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def _sources_with_native_inits(scratch: Path) -> Path:
    """A copy of the package's Python files under ``scratch/src`` (with the checkout's
    ``pyproject.toml``, mypy's settings, when there is one), each compiled module rewritten by
    :func:`native_inits`; returns ``scratch/src``."""
    root = scratch / "src"
    package = compiled.PACKAGE_DIR.parent

    def not_python(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if n == "__pycache__" or ("." in n and not n.endswith(".py"))]

    shutil.copytree(package, root / package.name, ignore=not_python)
    config = compiled.CHECKOUT / "pyproject.toml"
    if compiled.in_checkout() and config.is_file():
        shutil.copy(config, root / config.name)
    for source in compiled.compiled_sources():
        copy = root / source.relative_to(compiled.CHECKOUT)
        copy.write_text(native_inits(source.read_text(encoding="utf-8")), encoding="utf-8")
    return root


_FACTORY = "_native_init_factory"
"""The default of a ``default_factory`` field's parameter in a written ``__init__``."""
_DATACLASS_FLAGS = frozenset({"frozen", "slots", "eq", "repr", "order", "unsafe_hash", "kw_only"})


def native_inits(source: str) -> str:
    """``source`` with an ``__init__`` written into each top-level ``@dataclass`` class that
    has none: the parameters of the one ``@dataclass`` generates (names, annotations and
    defaults in field order, keyword-only with ``kw_only``; a ``default_factory`` field's
    factory called when it is not given), each field stored with ``self.name = name``, then
    ``__post_init__`` when the class has one. ``@dataclass`` keeps an ``__init__`` the class
    defines, so the class is the same but for who compiles its constructor. A class this does
    not know how to mirror exactly (bases, ``init=False``, ``InitVar``, ``ClassVar``,
    ``KW_ONLY``, ``field`` with more than a default) is left as it is."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, str]] = []  # (line index to insert at, text), applied bottom up
    factory_at: int | None = None
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        written = _native_init(node, source)
        if written is None:
            continue
        text, uses_factory = written
        edits.append((node.end_lineno or node.lineno, text))
        if uses_factory and factory_at is None:
            factory_at = node.decorator_list[0].lineno - 1
    if factory_at is not None:
        edits.append((factory_at, f"{_FACTORY} = object()\n\n\n"))
    for at, text in sorted(edits, key=lambda edit: edit[0], reverse=True):
        lines.insert(at, text)
    return "".join(lines)


def _native_init(node: ast.ClassDef, source: str) -> tuple[str, bool] | None:
    """The ``__init__`` to write into ``node`` and whether it uses :data:`_FACTORY`, or
    ``None`` when the class is not a dataclass this mirrors exactly."""
    if node.bases or node.keywords or len(node.decorator_list) != 1:
        return None
    decorator = node.decorator_list[0]
    call = decorator if isinstance(decorator, ast.Call) else None
    name = call.func if call is not None else decorator
    if not (isinstance(name, ast.Name) and name.id == "dataclass"):
        return None
    flags: dict[str | None, object] = {}
    if call is not None:
        if call.args:
            return None
        flags = {k.arg: getattr(k.value, "value", None) for k in call.keywords}
        if not set(flags) <= _DATACLASS_FLAGS or not all(
            v in (True, False) for v in flags.values()
        ):
            return None
    fields: list[tuple[str, str, str | None, str | None]] = []  # name, type, default, factory
    methods = set()
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef):
            methods.add(stmt.name)
        if not isinstance(stmt, ast.AnnAssign):
            continue
        if not isinstance(stmt.target, ast.Name) or not stmt.simple:
            return None
        annotation = ast.get_source_segment(source, stmt.annotation) or ""
        if any(word in annotation for word in ("ClassVar", "InitVar", "KW_ONLY")):
            return None
        default = factory = None
        value = stmt.value
        if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "field":
            given = {k.arg: ast.get_source_segment(source, k.value) for k in value.keywords}
            if value.args or not set(given) <= {"default", "default_factory"} or len(given) != 1:
                return None
            default, factory = given.get("default"), given.get("default_factory")
        elif value is not None:
            default = ast.get_source_segment(source, value)
        fields.append((stmt.target.id, annotation, default, factory))
    if "__init__" in methods or not fields:
        return None
    indent = " " * node.body[0].col_offset
    params = ["self", *(["*"] if flags.get("kw_only") else [])]
    body = []
    for field, annotation, default, factory in fields:
        if factory is not None:
            params.append(f"{field}={_FACTORY}")  # unannotated: Any, as the sentinel
            body.append(f"if {field} is {_FACTORY}:")
            body.append(f"    {field} = ({factory})()")
        else:
            params.append(f"{field}: {annotation}" + (f" = {default}" if default else ""))
    ignore = "  # type: ignore[misc]" if flags.get("frozen") else ""
    body += [f"self.{field} = {field}{ignore}" for field, *_ in fields]
    if "__post_init__" in methods:
        body.append("self.__post_init__()")
    text = [f"def __init__({', '.join(params)}) -> None:", *(f"    {line}" for line in body)]
    factory_used = any(factory is not None for *_, factory in fields)
    return "\n" + "".join(f"{indent}{line}\n" for line in text), factory_used


def _compile(scratch: Path) -> None:
    """mypyc and the C compiler over :func:`_sources_with_native_inits`, output in
    ``scratch/lib`` (raises on failure)."""
    from mypyc.build import mypycify
    from setuptools import setup

    root = _sources_with_native_inits(scratch)
    os.chdir(root)  # mypy finds the copy (and its settings) there
    sources = [str(p.relative_to(compiled.CHECKOUT)) for p in compiled.compiled_sources()]
    extensions = mypycify(
        sources,
        opt_level="3",
        multi_file=True,  # one C file per module: the compiler runs them in parallel
        target_dir=str(scratch / "c"),
        group_name=compiled.SHARED_LIB.removesuffix("__mypyc"),
    )
    jobs = str(min(4, os.cpu_count() or 1))
    setup(
        name="quota-core-compiled",
        ext_modules=extensions,
        script_args=[
            "build_ext",
            *("--build-lib", str(scratch / "lib"), "--build-temp", str(scratch / "tmp")),
            *("--parallel", jobs),
        ],
    )


def _failure_reason(error: BaseException, log: Path | None) -> str:
    reason = str(error).strip()
    if (not reason or reason.isdigit()) and log is not None and log.exists():
        text = log.read_text(errors="replace")  # mypy's errors or a bare exit code: the log says
        reason = next((ln for ln in reversed(text.splitlines()) if ln.strip()), reason)
    return reason.splitlines()[-1] if reason else type(error).__name__


def build_core(*, force: bool = False, show_output: bool = False) -> CoreBuild:
    """Build the compiled core unless a build of the current sources exists (``force``
    rebuilds). A failure (no mypy, no compiler, a type error) is returned, never raised;
    ``show_output`` lets the compiler print instead of logging it."""
    where = compiled.build_dir()
    if compiled.usable_build(where) and not force:
        return CoreBuild(built=False, up_to_date=True, where=where)
    start = time.monotonic()
    digest = compiled.source_digest()  # before compiling: a later edit makes the build unused
    with tempfile.TemporaryDirectory(prefix="quota-core-") as tmp:
        scratch = Path(tmp)
        log = None if show_output else scratch / "build.log"
        cwd = Path.cwd()
        saved_cache = os.environ.get("MYPY_CACHE_DIR")
        try:
            os.chdir(compiled.CHECKOUT)
            os.environ["MYPY_CACHE_DIR"] = str(scratch / "mypy-cache")  # not site-packages
            if log is None:
                _compile(scratch)
            else:
                with _output_to(log):
                    _compile(scratch)
        except (Exception, SystemExit) as error:  # setuptools and mypyc fail with SystemExit
            return CoreBuild(False, False, where, reason=_failure_reason(error, log))
        finally:
            os.chdir(cwd)
            if saved_cache is None:
                os.environ.pop("MYPY_CACHE_DIR", None)
            else:
                os.environ["MYPY_CACHE_DIR"] = saved_cache
        manifest = {"digest": digest, "interpreter": compiled.interpreter_tag()}
        (scratch / "lib" / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
        shutil.rmtree(where, ignore_errors=True)
        where.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(scratch / "lib", where)
    return CoreBuild(True, False, where, seconds=time.monotonic() - start)
