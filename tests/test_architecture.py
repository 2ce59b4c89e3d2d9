"""The package's import arrows: no cycles, and each layer imports only what it may.

Every import counts: at module level, inside functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("quota_constructs",)

FORBIDDEN: dict[str, tuple[str, ...]] = {
    # layer -> import prefixes it must never use (the arrows of docs/architecture.md)
    "quota_constructs.model": ("aws_cdk", "boto3", "botocore", "quota_constructs"),
    "quota_constructs.contracts": (
        "aws_cdk",
        "boto3",
        "botocore",
        "quota_constructs.local",
        "quota_constructs.runtime",
        "quota_constructs.constructs",
        "quota_constructs.scheduling",
        "quota_constructs.config",
    ),
    "quota_constructs.api_shapes": ("aws_cdk", "boto3", "botocore", "quota_constructs.local"),
    "quota_constructs.config": ("aws_cdk", "boto3", "quota_constructs.local"),
    "quota_constructs.pipeline_config": (
        "aws_cdk",
        "boto3",
        "botocore",
        "quota_constructs.local",
        "quota_constructs.runtime",
        "quota_constructs.constructs",
        "quota_constructs.scheduling",
        "quota_constructs.stacks",
    ),
    "quota_constructs.scheduling": (
        "aws_cdk",
        "boto3",
        "botocore",
        "http",
        "wsgiref",
        "quota_constructs.api_shapes",
        "quota_constructs.contracts",
        "quota_constructs.local",
        "quota_constructs.advisor",
        "quota_constructs.runtime",
        "quota_constructs.config",
    ),
    "quota_constructs.advisor": ("aws_cdk", "boto3", "quota_constructs.local"),
    # the forecast is pure: a queue's state in (plain records), the core run forward, answers out
    "quota_constructs.forecast": (
        "aws_cdk",
        "boto3",
        "botocore",
        "quota_constructs.local",
        "quota_constructs.runtime",
        "quota_constructs.advisor",
        "quota_constructs.commands",
    ),
    # the deploy planner is pure: templates and organisations in, a plan out
    "quota_constructs.deploy_plan": (
        "aws_cdk",
        "boto3",
        "botocore",
        "quota_constructs.local",
        "quota_constructs.runtime",
        "quota_constructs.constructs",
        "quota_constructs.scheduling",
        "quota_constructs.stacks",
        "quota_constructs.config",
    ),
    "quota_constructs.runtime": (
        "aws_cdk",
        "quota_constructs.local",
        "quota_constructs.scheduling",
        "quota_constructs.constructs",
    ),
    "quota_constructs.constructs": (
        "boto3",
        "quota_constructs.local",
        "quota_constructs.runtime",
        "quota_constructs.scheduling",
        "quota_constructs.stacks",
    ),
    "quota_constructs.local": (
        "aws_cdk",
        "quota_constructs.runtime",
        "quota_constructs.advisor",
        "quota_constructs.constructs",
    ),
    # the `quota` command: the top layer, it may import everything; nothing imports it
    "quota_constructs.commands": (),
    # the organisation and pipeline stacks compose the constructs; no emulator, runtime or CLI
    "quota_constructs.stacks": (
        "boto3",
        "quota_constructs.commands",
        "quota_constructs.local",
        "quota_constructs.runtime",
        "quota_constructs.scheduling",
    ),
}


LAYERS: dict[str, tuple[str, ...]] = {
    # package -> its modules in order; each may import only the modules before it
    "quota_constructs.constructs": (
        "_base",
        "grants",
        "parameters",
        "scheduling_policy",
        "service_environment",
        "quota_share",
        "job_queue",
        "training_queue",
        "team_access",
        "share_calendar",
        "notifications",
        "dashboard",
    ),
    "quota_constructs.runtime": (
        "pricing",
        "account",
        "training_plans",
        "pacing",
        "jobs",
        "json_view",
        "payload",
        "waiting",
        "team",
        "forecasting",
        "queue",
        "audit",
        "status",
        "adopt",
    ),
}


def module_files(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``packages`` under ``root``."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported_names(module: str, path: Path) -> Iterator[str]:
    """Every dotted name the module imports, as written (relative imports made absolute).

    ``from pkg import name`` gives ``pkg.name``: a submodule, or a name defined in ``pkg``.
    """
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *filter(None, [base])])
            yield from (f"{base}.{alias.name}" for alias in node.names)


def owning_module(name: str, files: Mapping[str, Path]) -> str | None:
    """The project module a dotted name lives in (its longest known prefix), if any."""
    parts = name.split(".")
    while parts and ".".join(parts) not in files:
        parts.pop()
    return ".".join(parts) or None


def import_graph(files: Mapping[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports."""
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        owners = {owning_module(name, files) for name in imported_names(module, path)}
        graph[module] = {owner for owner in owners if owner is not None} - {module}
    return graph


def find_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or around a loop (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for child in sorted(graph[node]):
            if child not in index:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in stack:
                low[node] = min(low[node], index[child])
        if low[node] == index[node]:
            group = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    assert find_cycles(import_graph(module_files(ROOT, PACKAGES))) == []


def test_cycles_through_function_level_and_type_checking_imports_are_found(
    tmp_path: Path,
) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("def f():\n    from pkg.b import x\n")
    (tmp_path / "pkg" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
    )
    graph = import_graph(module_files(tmp_path, ("pkg",)))
    assert find_cycles(graph) == [["pkg.a", "pkg.b"]]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_only_what_it_may(layer: str) -> None:
    files = module_files(ROOT, PACKAGES)
    members = {m: p for m, p in files.items() if m == layer or m.startswith(layer + ".")}
    assert members, f"no module {layer}"
    bad = sorted(
        f"{module} imports {name}"
        for module, path in members.items()
        for name in imported_names(module, path)
        if not (name == layer or name.startswith(layer + "."))
        and any(name == prefix or name.startswith(prefix + ".") for prefix in FORBIDDEN[layer])
    )
    assert bad == []


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_every_module_of_a_layered_package_has_a_layer(package: str) -> None:
    files = module_files(ROOT, PACKAGES)
    modules = {m.removeprefix(package + ".") for m in files if m.startswith(package + ".")}
    assert modules == set(LAYERS[package])


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_layered_package_modules_import_only_earlier_layers(package: str) -> None:
    files = module_files(ROOT, PACKAGES)
    graph = import_graph(files)
    order = [f"{package}.{name}" for name in LAYERS[package]]
    wrong = {
        module: sorted(later)
        for index, module in enumerate(order)
        if (later := (graph[module] & set(order)) - set(order[:index]))
    }
    assert wrong == {}


def test_no_module_imports_another_modules_private_names() -> None:
    files = module_files(ROOT, PACKAGES)
    offenders = sorted(
        f"{module} imports {name}"
        for module, path in files.items()
        for name in imported_names(module, path)
        if name.rsplit(".", 1)[-1].startswith("_")
        and not name.endswith("__")  # a dunder (``__version__``) is public
        and name not in files  # a private module (``_base``) is imported by name, not a name
        and owning_module(name, files) not in (None, module)
    )
    assert offenders == []


# --- the emulator's three layers are folders (docs/architecture.md) ---------------------------

EMULATOR = "quota_constructs.local"
EMULATOR_LAYERS = ("wire", "handlers", "state")
EMULATOR_TOP = frozenset(
    {"emulator", "provision", "apply", "faults", "events", "testing", "pytest_plugin"}
)
"""Modules around the layers: the account that builds them, provisioning, a deploy rehearsed
(``apply``), faults, events, tests."""
EMULATOR_LAYER_FORBIDDEN: dict[str, tuple[str, ...]] = {
    # a layer imports only the layers below it (wire -> handlers -> state), never HTTP from below
    "state": ("wire", "handlers", *sorted(EMULATOR_TOP)),
    "handlers": ("wire", *sorted(EMULATOR_TOP)),
}
EMULATOR_LAYER_ALLOWED = (
    # the one domain-error -> API-error mapping, for the per-item errors of a bulk answer
    f"{EMULATOR}.wire.api_errors",
    # botocore's service model (no HTTP): an answer keeps only the members its shape declares
    f"{EMULATOR}.wire.protocol.service_model",
    f"{EMULATOR}.wire.validation.problems",
    # botocore's documented bounds (no HTTP): a handler's own check uses the wire's number
    f"{EMULATOR}.wire.input_bounds.documented_bound",
)


def test_every_emulator_module_is_in_a_layer_folder_or_around_them() -> None:
    files = module_files(ROOT, PACKAGES)
    stray = sorted(
        module
        for module in files
        if module.startswith(EMULATOR + ".")
        and module.split(".")[2] not in EMULATOR_LAYERS
        and module.split(".")[2] not in EMULATOR_TOP
    )
    assert stray == []


@pytest.mark.parametrize("layer", sorted(EMULATOR_LAYER_FORBIDDEN))
def test_emulator_layer_imports_only_the_layers_below(layer: str) -> None:
    files = module_files(ROOT, PACKAGES)
    package = f"{EMULATOR}.{layer}"
    forbidden = [f"{EMULATOR}.{name}" for name in EMULATOR_LAYER_FORBIDDEN[layer]]
    forbidden += ["http", "wsgiref", "werkzeug", "waitress"]
    bad = sorted(
        f"{module} imports {name}"
        for module, path in files.items()
        if module == package or module.startswith(package + ".")
        for name in imported_names(module, path)
        if any(name == prefix or name.startswith(prefix + ".") for prefix in forbidden)
        and not any(name == ok or name.startswith(ok + ".") for ok in EMULATOR_LAYER_ALLOWED)
    )
    assert bad == []


def imports_of_test_modules(root: Path) -> list[str]:
    """``module imports test_module`` for every module under ``root/tests`` importing a test
    module (absolute or relative): shared helpers belong in ``helpers.py`` or ``conftest.py``."""
    graph = import_graph(module_files(root, ("tests",)))
    return sorted(
        f"{module} imports {imported}"
        for module, imports in graph.items()
        for imported in imports
        if imported.rsplit(".", 1)[-1].startswith("test_")
    )


def test_no_module_under_tests_imports_a_test_module() -> None:
    assert imports_of_test_modules(ROOT) == []


def test_absolute_and_relative_imports_of_test_modules_are_found(tmp_path: Path) -> None:
    (tmp_path / "tests" / "sub").mkdir(parents=True)
    for name in ("__init__", "helpers", "test_a", "sub/__init__", "sub/test_b"):
        (tmp_path / "tests" / f"{name}.py").write_text("")
    (tmp_path / "tests" / "sub" / "test_c.py").write_text(
        "from . import test_b\nfrom ..test_a import x\nfrom tests.helpers import y\n"
    )
    (tmp_path / "tests" / "sub" / "helpers.py").write_text(
        "def f():\n    import tests.sub.test_b\n"
    )
    assert imports_of_test_modules(tmp_path) == [
        "tests.sub.helpers imports tests.sub.test_b",
        "tests.sub.test_c imports tests.sub.test_b",
        "tests.sub.test_c imports tests.test_a",
    ]


COMMANDS = "quota_constructs.commands"
TERMINAL_LIBRARIES = ("typer", "click", "rich")


def _imports_outside_commands(prefixes: tuple[str, ...]) -> list[str]:
    """``module imports name`` for each module outside ``COMMANDS`` importing one of
    ``prefixes``."""
    files = module_files(ROOT, PACKAGES)
    return sorted(
        f"{module} imports {name}"
        for module, path in files.items()
        if not (module == COMMANDS or module.startswith(COMMANDS + "."))
        for name in imported_names(module, path)
        if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)
    )


def test_only_the_commands_use_typer_click_or_rich() -> None:
    """Library code never prints: the terminal belongs to ``quota_constructs.commands``."""
    assert _imports_outside_commands(TERMINAL_LIBRARIES) == []


def test_nothing_but_tests_imports_the_commands() -> None:
    assert _imports_outside_commands((COMMANDS,)) == []


# --- a quota share's wire shape is spelled once ------------------------------------------------

SHARE_MAPPER = "quota_constructs.api_shapes"
SHARE_FIELD_NAMES = (
    "resourceSharingConfiguration",
    "preemptionConfiguration",
    "inSharePreemption",
    "borrowLimit",
    "capacityLimits",
)
"""A quota share's API field names: string literals only in the mapper."""
FIELD_NAME_ALLOWED: dict[str, tuple[str, ...]] = {
    # the same name as a field of another shape, not of a share
    "capacityLimits": (
        "quota_constructs.local.provision",  # CreateServiceEnvironment
        "quota_constructs.local.state.registry",  # a service environment's problem paths
    ),
    "preemptionConfiguration": (  # SubmitServiceJob / DescribeServiceJob
        "quota_constructs.local.handlers.service_jobs",
        "quota_constructs.local.handlers.submit_request",
        "quota_constructs.runtime.jobs",
        "quota_constructs.runtime.json_view",
        "quota_constructs.runtime.payload",
    ),
}
ARN_FORMATS = ("quota-share/", "service-job/")
"""Pieces of the quota-share and service-job ARN formats: only in the mapper."""


def string_literals(path: Path) -> Iterator[str]:
    """Every string constant of a module but its docstrings (any bare string statement)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.value


def test_share_field_names_are_spelled_only_in_the_mapper() -> None:
    files = module_files(ROOT, PACKAGES)
    found = sorted(
        f"{module}: {text!r}"
        for module, path in files.items()
        if module != SHARE_MAPPER
        for text in string_literals(path)
        if text in SHARE_FIELD_NAMES and module not in FIELD_NAME_ALLOWED.get(text, ())
    )
    assert found == []


def test_quota_share_and_service_job_arn_formats_are_only_in_the_mapper() -> None:
    files = module_files(ROOT, PACKAGES)
    found = sorted(
        f"{module}: {text!r}"
        for module, path in files.items()
        if module != SHARE_MAPPER
        for text in string_literals(path)
        if any(piece in text for piece in ARN_FORMATS)
    )
    assert found == []


def test_string_literals_skip_docstrings_but_not_fstring_parts(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Doc: borrowLimit."""\nX = 1\n"""After X."""\n'
        'def f(a):\n    """Doc."""\n    return f"{a}/quota-share/{a}", "borrowLimit"\n'
    )
    assert sorted(string_literals(module)) == ["/quota-share/", "borrowLimit"]
