"""The optional compiled core: used only when built from exactly the current sources.

``quota build-core`` (``make setup``) builds ``build/compiled-core/`` in a checkout (the user's
cache when installed); the package uses it only while the digest it recorded matches the sources
(``quota_constructs.scheduling.compiled``).
The end-to-end cases run a copy of the package in a subprocess, so nothing here edits the
checkout; the ones that need a build skip when there is none (``QUOTA_COMPILE=0``, no compiler).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import quota_constructs.scheduling as scheduling
from quota_constructs.scheduling import compiled
from quota_constructs.scheduling import dispatcher as dispatcher_module

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import quota_constructs.scheduling as s, quota_constructs.scheduling.ledger as l; "
    "print(s.COMPILED, l.__file__)"
)


def run_in(root: Path, code: str, **env: str) -> str:
    """What ``code`` prints when run with the package under ``root`` (``QUOTA_COMPILE`` and
    ``QUOTA_CORE_DIR`` only as given in ``env``)."""
    unset = {compiled.DISABLE_ENV, compiled.CORE_DIR_ENV}
    inherited = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=root,
        env={**inherited, "PYTHONPATH": str(root), **env},
        timeout=120,
        check=True,
    ).stdout


def probe(root: Path, **env: str) -> tuple[bool, Path]:
    """``COMPILED`` and the ledger module's file when the package under ``root`` is imported."""
    flag, path = run_in(root, PROBE, **env).split()
    return flag == "True", Path(path)


def copy_checkout(tmp_path: Path, with_build: bool, *, installed: bool = False) -> Path:
    """The package (and the build, if asked) under ``tmp_path``, as in a checkout (or, with
    ``installed``, as in ``site-packages``: no ``pyproject.toml`` beside it)."""
    if not installed:
        shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(
        ROOT / "quota_constructs",
        tmp_path / "quota_constructs",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    if with_build:
        shutil.copytree(compiled.BUILD_DIR, tmp_path / "build" / "compiled-core")
    return tmp_path


def built() -> bool:
    return compiled.usable_build()


def test_compiled_says_which_modules_are_imported() -> None:
    native = not dispatcher_module.__file__.endswith(".py")
    assert scheduling.COMPILED is native
    assert scheduling.COMPILED is (built() and not compiled.disabled())


def test_quota_compile_0_imports_pure_python(tmp_path: Path) -> None:
    root = copy_checkout(tmp_path, with_build=built())
    in_use, ledger = probe(root, QUOTA_COMPILE="0")
    assert not in_use and ledger == root / "quota_constructs" / "scheduling" / "ledger.py"


@pytest.mark.skipif(not built(), reason="no compiled core (QUOTA_COMPILE=0 or no compiler)")
def test_an_edited_source_is_never_shadowed_by_the_build(tmp_path: Path) -> None:
    root = copy_checkout(tmp_path, with_build=True)
    in_use, ledger = probe(root)
    assert in_use and ledger.is_relative_to(root / "build" / "compiled-core")
    source = root / "quota_constructs" / "scheduling" / "ledger.py"
    source.write_text(source.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    in_use, ledger = probe(root)
    assert not in_use and ledger == source


@pytest.mark.parametrize(
    "edited", ["scheduling/ledger.py", "scheduling/__init__.py", "model/share.py", "model/jobs.py"]
)
def test_the_recorded_digest_matches_only_unedited_sources(tmp_path: Path, edited: str) -> None:
    root = copy_checkout(tmp_path, with_build=False)
    package = root / "quota_constructs" / "scheduling"
    build = root / "build" / "compiled-core"
    build.mkdir(parents=True)
    digest, interpreter = compiled.source_digest(package), compiled.interpreter_tag()
    manifest = {"digest": digest, "interpreter": interpreter}
    (build / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    assert compiled.usable_build(build, package)
    assert not compiled.usable_build(build / "missing", package)
    source = root / "quota_constructs" / edited
    source.write_text(source.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert not compiled.usable_build(build, package)


def build_dir_of(root: Path, **env: str) -> Path:
    """``compiled.build_dir()`` when the package under ``root`` is imported with ``env``."""
    code = "from quota_constructs.scheduling import compiled; print(compiled.build_dir())"
    return Path(run_in(root, code, **env).strip())


def test_an_installed_package_keeps_its_build_in_the_users_cache_one_folder_per_version(
    tmp_path: Path,
) -> None:
    root = copy_checkout(tmp_path / "site-packages", with_build=False, installed=True)
    cache = tmp_path / "cache"
    where = build_dir_of(root, XDG_CACHE_HOME=str(cache))
    digest = compiled.source_digest(root / "quota_constructs" / "scheduling")
    assert where.parent == cache / "quota-constructs" / "compiled-core"
    assert where.name == f"{digest[:16]}-{sys.implementation.cache_tag}"


def test_quota_core_dir_puts_the_build_where_it_says(tmp_path: Path) -> None:
    root = copy_checkout(tmp_path, with_build=False)
    assert build_dir_of(root) == root / "build" / "compiled-core"
    assert build_dir_of(root, QUOTA_CORE_DIR=str(tmp_path / "elsewhere")) == tmp_path / "elsewhere"


def test_a_build_for_another_interpreter_is_not_used(tmp_path: Path) -> None:
    package = ROOT / "quota_constructs" / "scheduling"
    manifest = {"digest": compiled.source_digest(package), "interpreter": ".cpython-399-x.so"}
    (tmp_path / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    assert not compiled.usable_build(tmp_path, package)


def test_the_digest_covers_every_project_module_the_core_imports() -> None:
    """The digest covers the package and ``model/``: the core must import nothing else of ours (a
    build compiled against another module's old types could misbehave)."""
    package = ROOT / "quota_constructs" / "scheduling"
    imported = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    ours = {m for m in imported if m.split(".")[0] in {"quota_constructs", "tests"}}
    outside = ours - {m for m in ours if m.startswith("quota_constructs.scheduling")}
    assert outside and all(m.split(".")[:2] == ["quota_constructs", "model"] for m in outside)
