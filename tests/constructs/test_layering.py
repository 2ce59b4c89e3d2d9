"""The construct modules import each other in one direction only (no cycle, none hidden)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.constructs.helpers import ROOT

PACKAGE = "quota_constructs.constructs"
LAYERS = (
    "_base",
    "grants",
    "scheduling_policy",
    "service_environment",
    "quota_share",
    "job_queue",
    "training_queue",
    "team_access",
)
"""Each module may import only the modules before it."""


def construct_imports(path: Path) -> set[str]:
    """Construct modules ``path`` imports anywhere (functions and ``TYPE_CHECKING`` too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(f"{PACKAGE}."):
            found.add(str(node.module).removeprefix(f"{PACKAGE}."))
        elif isinstance(node, ast.Import):
            found.update(
                a.name.removeprefix(f"{PACKAGE}.")
                for a in node.names
                if a.name.startswith(f"{PACKAGE}.")
            )
    return found


def test_every_construct_module_has_a_layer() -> None:
    modules = {p.stem for p in (ROOT / "quota_constructs" / "constructs").glob("*.py")}
    assert modules - {"__init__"} == set(LAYERS)


def test_construct_modules_import_only_earlier_layers() -> None:
    wrong = {}
    for index, module in enumerate(LAYERS):
        path = ROOT / "quota_constructs" / "constructs" / f"{module}.py"
        later = construct_imports(path) - set(LAYERS[:index])
        if later:
            wrong[module] = sorted(later)
    assert wrong == {}
