"""The scheduling package's boundaries: what it and the advisor may import, and in which order."""

from __future__ import annotations

import ast
from pathlib import Path

import quota_constructs

PACKAGE_ROOT = Path(quota_constructs.__file__).parent
SCHEDULING = "quota_constructs.scheduling"
WIRE_AND_EMULATOR = (
    "quota_constructs.local",
    "quota_constructs.runtime",
    "quota_constructs.api_shapes",
    "quota_constructs.contracts",
    "boto3",
    "botocore",
    "http",
    "wsgiref",
)


def _modules(package: str) -> dict[str, Path]:
    folder = PACKAGE_ROOT / package.split(".", 1)[1]
    out = {}
    for path in sorted(folder.glob("*.py")):
        name = package if path.stem == "__init__" else f"{package}.{path.stem}"
        out[name] = path
    return out


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """Every import of a module (top level, in functions, under TYPE_CHECKING): the module
    imported from and the names taken from it."""
    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import"
            out.append((node.module or "", [alias.name for alias in node.names]))
    return out


def _imported_modules(path: Path, known: dict[str, Path]) -> set[str]:
    found = set()
    for module, names in _imports(path):
        found |= {f"{module}.{n}" for n in names if f"{module}.{n}" in known}
        if module in known:
            found.add(module)
    return found


def test_scheduling_and_advisor_import_nothing_from_the_emulator_or_the_wire() -> None:
    offenders = [
        f"{name} imports {module}"
        for package in (SCHEDULING, "quota_constructs.advisor")
        for name, path in _modules(package).items()
        for module, _ in _imports(path)
        if module.startswith(WIRE_AND_EMULATOR)
        and (package == SCHEDULING or module.startswith("quota_constructs.local"))
    ]
    assert offenders == []


def test_scheduling_modules_import_each_other_one_way() -> None:
    modules = _modules(SCHEDULING)
    graph = {name: _imported_modules(path, modules) - {name} for name, path in modules.items()}
    order: list[str] = []
    while len(order) < len(graph):
        ready = sorted(n for n in graph if n not in order and graph[n] <= set(order))
        assert ready, f"import cycle among {sorted(set(graph) - set(order))}"
        order += ready


def test_scheduling_modules_import_no_private_names_from_each_other() -> None:
    offenders = [
        f"{name} imports {module}.{imported}"
        for name, path in _modules(SCHEDULING).items()
        for module, names in _imports(path)
        for imported in names
        if module.startswith(SCHEDULING) and imported.startswith("_")
    ]
    assert offenders == []
