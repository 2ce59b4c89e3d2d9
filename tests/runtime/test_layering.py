"""The runtime's modules import each other in one direction only (no cycle, none hidden)."""

from __future__ import annotations

import ast
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "quota_constructs" / "runtime"
PACKAGE = "quota_constructs.runtime"
LAYERS = ("pacing", "jobs", "payload", "waiting", "queue", "cli")
"""Each module may import only the modules before it."""


def imported_modules(path: Path) -> set[str]:
    """Every ``quota_constructs`` module ``path`` imports anywhere (functions and
    ``TYPE_CHECKING`` blocks too), by dotted name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("quota_constructs")}


def runtime_imports(path: Path) -> set[str]:
    """The runtime modules (by short name) that ``path`` imports."""
    prefix = f"{PACKAGE}."
    return {
        name.removeprefix(prefix).split(".")[0]
        for name in imported_modules(path)
        if name.startswith(prefix)
    }


def test_every_runtime_module_has_a_layer() -> None:
    modules = {p.stem for p in RUNTIME.glob("*.py")}
    assert modules - {"__init__"} == set(LAYERS)


def test_runtime_modules_import_only_earlier_layers() -> None:
    wrong = {}
    for index, module in enumerate(LAYERS):
        later = runtime_imports(RUNTIME / f"{module}.py") - set(LAYERS[:index])
        if later:
            wrong[module] = sorted(later)
    assert wrong == {}


def test_runtime_imports_neither_the_emulator_nor_the_constructs() -> None:
    banned = ("quota_constructs.local", "quota_constructs.constructs", "quota_constructs.demo")
    wrong = {
        path.name: sorted(n for n in imported_modules(path) if n.startswith(banned))
        for path in RUNTIME.glob("*.py")
    }
    assert {name: found for name, found in wrong.items() if found} == {}
