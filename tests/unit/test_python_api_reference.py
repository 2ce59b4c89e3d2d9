"""docs/reference/python/: the Python API pages mkdocstrings renders from the docstrings
(`make docs`) name every public export, and the docstrings' Sphinx roles render as code."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import quota_constructs
from tests.helpers import tool

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "reference" / "python"
DIRECTIVE = re.compile(r"^::: (\S+)\n((?:    .*\n)*)", re.M)


def rendered() -> dict[str, set[str] | None]:
    """Each module a page renders -> the members it lists, or ``None`` for its whole ``__all__``."""
    found: dict[str, set[str] | None] = {}
    for page in PAGES.glob("*.md"):
        for module, options in DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            if "members:" in options:
                found[module] = set(re.findall(r"^\s+- (\w+)$", options, re.M))
            else:
                found[module] = None
    return found


def test_every_export_has_an_entry_in_the_python_api_pages() -> None:
    pages = rendered()
    exports = {
        "quota_constructs": [n for n in quota_constructs.__all__ if n != "__version__"],
        "quota_constructs.runtime": importlib.import_module("quota_constructs.runtime").__all__,
        "quota_constructs.advisor": importlib.import_module("quota_constructs.advisor").__all__,
        "quota_constructs.local.testing": ["EmulatorServer"],
        "quota_constructs.local.pytest_plugin": ["emulator"],
    }
    lazy = quota_constructs._LAZY
    missing = []
    for package, names in exports.items():
        for name in names:
            module = lazy.get(name, package) if package == "quota_constructs" else package
            members = pages.get(module, set())
            whole = members is None and name in importlib.import_module(module).__all__
            if not whole and name not in (members or set()):
                missing.append(f"{module}.{name}")
    assert missing == [], "add them to a page of docs/reference/python/"


def test_sphinx_roles_render_as_code_spans() -> None:
    roles = tool("griffe_rst_roles")
    text = "Start with :class:`QueueClient`; :func:`~quota_constructs.model.head_wait_reason`."
    assert roles.as_markdown(text) == "Start with `QueueClient`; `head_wait_reason`."
    assert roles.as_markdown("``plain`` and :meth:`a.b`") == "``plain`` and `a.b`"
