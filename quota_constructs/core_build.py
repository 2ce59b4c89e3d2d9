"""Owns the build of the optional compiled core (``quota build-core``; ``make setup`` runs it).

Compiles every module of ``quota_constructs/scheduling`` except ``__init__`` and ``compiled``
(the import logic) with mypyc in a scratch directory, then replaces
:func:`~quota_constructs.scheduling.compiled.build_dir` with the result and its manifest (the
digest of the sources it compiled, the interpreter's extension suffix); the package uses the
build only while that digest matches its sources. Needs mypy (it includes mypyc: the
``compiled`` extra), setuptools, a C compiler and the Python headers. Works the same in a
checkout and in an installed package. Never prints: the compiler's output goes to a log, and
:func:`build_core` returns what happened.
"""

from __future__ import annotations

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


def _compile(scratch: Path) -> None:
    """mypyc and the C compiler, output in ``scratch/lib`` (raises on failure)."""
    from mypyc.build import mypycify
    from setuptools import setup

    root = compiled.CHECKOUT
    sources = [str(p.relative_to(root)) for p in compiled.compiled_sources()]
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
