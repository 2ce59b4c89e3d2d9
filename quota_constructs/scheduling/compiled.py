"""The optional compiled core: use a mypyc build of this package only when it matches the sources.

``quota build-core`` (run by ``make setup`` unless ``QUOTA_COMPILE=0``; after a ``pip install``,
with the ``compiled`` extra) compiles every module of this package except this one and
``__init__`` with mypyc into :func:`build_dir` (``build/compiled-core/`` at the top of a checkout,
outside the source tree; a per-build folder of the user's cache for an installed package;
``QUOTA_CORE_DIR`` if set), and records there a digest of the sources it compiled (this
package and ``quota_constructs/model/``, the only project code the core imports) with the
interpreter's extension suffix. On import, the package calls :func:`activate`:
when that record matches the current sources and interpreter, the build's directory is put first
on the package's ``__path__``, so its extension modules are imported instead of the ``.py`` files;
otherwise nothing changes and the pure Python modules are imported, so a binary can never shadow
edited source. ``QUOTA_COMPILE=0`` in the environment ignores any build. Pure Python is the
reference: both give the same results (``benchmarks/core_fingerprint.py``), the build is faster.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import sysconfig
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
"""This package's directory (its ``.py`` files are the sources that are compiled)."""
MODEL_DIR = PACKAGE_DIR.parent / "model"
"""The one project package outside this one that the core imports (types it relies on)."""
NOT_COMPILED = frozenset({"__init__.py", "compiled.py"})
"""The package's own import logic stays Python."""
CHECKOUT = PACKAGE_DIR.parents[1]
"""The checkout (or the ``site-packages``) that holds the ``quota_constructs`` package."""
BUILD_DIR = CHECKOUT / "build" / "compiled-core"
"""Where the build of a checkout goes (``build/`` is gitignored)."""
CORE_DIR_ENV = "QUOTA_CORE_DIR"
"""Set to a folder to build and use the compiled core there instead."""
CACHE_NAME = "quota-constructs"
MANIFEST = "manifest.json"
SHARED_LIB = "quota_core__mypyc"
"""mypyc's shared library of the build (its ``group_name`` plus ``__mypyc``)."""
DISABLE_ENV = "QUOTA_COMPILE"
"""Set to ``0`` to neither build nor use the compiled core."""


def compiled_sources(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """The modules mypyc compiles, sorted by name."""
    return sorted(p for p in package_dir.glob("*.py") if p.name not in NOT_COMPILED)


def in_checkout() -> bool:
    """Whether the package is a checkout's source tree (not an installed copy)."""
    return (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "quota_constructs").is_dir()


def build_dir(digest: str | None = None) -> Path:
    """Where the build of these sources is made and looked for: ``QUOTA_CORE_DIR``; in a
    checkout ``build/compiled-core``; else the user's cache (``$XDG_CACHE_HOME`` or
    ``~/.cache``) ``/quota-constructs/compiled-core/<digest>-<interpreter>``, one per version.
    ``digest``: :func:`source_digest`, when the caller has it already."""
    configured = os.environ.get(CORE_DIR_ENV, "").strip()
    if configured:
        return Path(configured)
    if in_checkout():
        return BUILD_DIR
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    name = f"{(digest or source_digest())[:16]}-{sys.implementation.cache_tag}"
    return Path(cache) / CACHE_NAME / "compiled-core" / name


def source_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 over every ``.py`` file of the package and of the model package it imports."""
    digest = hashlib.sha256()
    model = sorted((package_dir.parent / "model").glob("*.py"))
    for path in [*sorted(package_dir.glob("*.py")), *model]:
        name = f"model/{path.name}" if path.parent.name == "model" else path.name
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def interpreter_tag() -> str:
    """What a build is only valid for: the interpreter's extension-module suffix."""
    return str(sysconfig.get_config_var("EXT_SUFFIX"))


def disabled() -> bool:
    return os.environ.get(DISABLE_ENV, "").strip() == "0"


def usable_build(
    where: Path | None = None, package_dir: Path = PACKAGE_DIR, *, digest: str | None = None
) -> bool:
    """True when ``where`` (default :func:`build_dir`) holds a build of exactly the current
    sources for this interpreter (``digest``: theirs, when the caller has it already)."""
    where = build_dir(digest) if where is None else where
    try:
        manifest = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(manifest, dict)
        and manifest.get("digest") == (digest or source_digest(package_dir))
        and manifest.get("interpreter") == interpreter_tag()
    )


def activate(package_path: list[str]) -> bool:
    """Put a matching build first on ``package_path`` (the package's ``__path__``) and load its
    shared library; return whether the compiled core is in use. Never raises: any problem means
    pure Python."""
    if disabled():
        return False
    digest = source_digest()  # once: the build's folder and its manifest both need it
    where = build_dir(digest)
    if not usable_build(where, digest=digest):
        return False
    modules = where / "quota_constructs" / "scheduling"
    try:
        if SHARED_LIB not in sys.modules:
            (lib,) = where.glob(SHARED_LIB + interpreter_tag())
            spec = importlib.util.spec_from_file_location(SHARED_LIB, lib)
            if spec is None or spec.loader is None:
                return False
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[SHARED_LIB] = module
    except (ImportError, OSError, ValueError):
        return False
    package_path.insert(0, str(modules))
    return True
