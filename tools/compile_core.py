"""Compile the scheduler core with mypyc into ``build/compiled-core/`` (optional, never fatal).

Run: ``.venv/bin/python tools/compile_core.py`` (``make setup`` runs it; ``QUOTA_COMPILE=0``
skips it). Needs mypy (``requirements-dev.txt``, it includes mypyc), a C compiler and the Python
headers. Compiles every module of ``quota_constructs/scheduling`` except ``__init__`` and
``compiled`` (the import logic) in a scratch directory, then replaces ``build/compiled-core/``
with the result and its manifest (the digest of the sources it compiled, the interpreter's
extension suffix); ``quota_constructs.scheduling`` uses the build only while that digest matches
the sources (:mod:`quota_constructs.scheduling.compiled`). Does nothing when the build already
matches the sources (``--force`` rebuilds). Any failure prints one warning line and exits 0: pure
Python is used. ``--strict`` exits 1 instead (and shows the compiler output).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_compiled_module() -> ModuleType:
    """``quota_constructs.scheduling.compiled`` of this checkout, loaded alone: importing the
    package would import the core itself (maybe an earlier build of it)."""
    path = ROOT / "quota_constructs" / "scheduling" / "compiled.py"
    spec = importlib.util.spec_from_file_location("_quota_core_compiled", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compiled = load_compiled_module()


@contextlib.contextmanager
def output_to(log: Path) -> Iterator[None]:
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


def build(scratch: Path) -> None:
    """mypyc and the C compiler, output in ``scratch/lib`` (raises on failure)."""
    from mypyc.build import mypycify
    from setuptools import setup

    sources = [str(p.relative_to(ROOT)) for p in compiled.compiled_sources()]
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


def compile_core(strict: bool) -> bool:
    start = time.monotonic()
    digest = compiled.source_digest()  # before compiling: a later edit makes the build unused
    with tempfile.TemporaryDirectory(prefix="quota-core-") as tmp:
        scratch = Path(tmp)
        cwd = Path.cwd()
        try:
            os.chdir(ROOT)
            if strict:
                build(scratch)
            else:
                with output_to(scratch / "build.log"):
                    build(scratch)
        except (Exception, SystemExit) as error:  # setuptools and mypyc fail with SystemExit
            reason = str(error).strip()
            if not reason or reason.isdigit():  # mypy's errors or a bare exit code: the log says
                log = (scratch / "build.log").read_text(errors="replace") if not strict else ""
                reason = next((ln for ln in reversed(log.splitlines()) if ln.strip()), reason)
            reason = reason.splitlines()[-1] if reason else type(error).__name__
            print(f"warning: compiled core not built ({reason}); using pure Python", flush=True)
            return False
        finally:
            os.chdir(cwd)
        manifest = {"digest": digest, "interpreter": compiled.interpreter_tag()}
        (scratch / "lib" / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
        shutil.rmtree(compiled.BUILD_DIR, ignore_errors=True)
        compiled.BUILD_DIR.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(scratch / "lib", compiled.BUILD_DIR)
    took = time.monotonic() - start
    print(f"compiled core built in {took:.0f} s ({compiled.BUILD_DIR.relative_to(ROOT)})")
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strict", action="store_true", help="Fail (exit 1) if it cannot build.")
    parser.add_argument("--force", action="store_true", help="Rebuild even if up to date.")
    args = parser.parse_args()
    if compiled.disabled():
        print(f"compiled core skipped ({compiled.DISABLE_ENV}=0); using pure Python")
        return
    if compiled.usable_build() and not args.force:
        print(f"compiled core up to date ({compiled.BUILD_DIR.relative_to(ROOT)})")
        return
    if not compile_core(args.strict) and args.strict:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
