"""The compiled build's one speed trick: ``core_build.native_inits`` writes each dataclass of the
core the ``__init__`` that ``@dataclass`` would generate, so that mypyc compiles it. These tests
hold it to the generated one in pure Python (the build itself: ``test_compiled.py``)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import sys
import types
from typing import Any

import pytest

from quota_constructs.core_build import native_inits
from quota_constructs.scheduling import compiled

TOY = '''
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Plain:
    """A docstring."""

    name: str
    """A field's docstring."""
    count: int = 2
    tags: dict[str, str] = field(default_factory=dict)
    ratio: float = field(default=0.5)

    def __post_init__(self) -> None:
        self.name = self.name.upper()


@dataclass(kw_only=True, slots=True)
class KeywordsOnly:
    first: int
    second: list[int] = field(default_factory=lambda: [1])


@dataclass(init=False)
class OwnChoice:
    value: int


class NotADataclass:
    value: int = 0
'''


def load(source: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The namespace of ``source`` run as a module (``dataclasses`` looks its module up)."""
    module = types.ModuleType("toy")
    monkeypatch.setitem(sys.modules, "toy", module)
    exec(compile(source, "<toy>", "exec"), module.__dict__)
    return module.__dict__


def written_classes(source: str) -> set[str]:
    """The classes of ``source`` that define ``__init__`` themselves."""
    return {
        node.name
        for node in ast.parse(source).body
        if isinstance(node, ast.ClassDef)
        and any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in node.body)
    }


def test_the_written_init_builds_what_the_generated_one_builds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    generated, written = load(TOY, monkeypatch), load(native_inits(TOY), monkeypatch)
    assert written_classes(native_inits(TOY)) == {"Plain", "KeywordsOnly"}
    for args, kwargs in [(("a",), {}), (("b", 5), {"ratio": 1.5}), (("c", 1, {"k": "v"}), {})]:
        before, after = generated["Plain"](*args, **kwargs), written["Plain"](*args, **kwargs)
        assert repr(before) == repr(after)  # __post_init__ ran on both
    first, second = generated["Plain"]("x"), generated["Plain"]("y")
    assert first.tags is not second.tags  # a factory per instance, as generated
    made = [written["Plain"]("x"), written["Plain"]("y")]
    assert made[0].tags == {} and made[0].tags is not made[1].tags
    assert repr(written["KeywordsOnly"](first=1)) == repr(generated["KeywordsOnly"](first=1))
    with pytest.raises(TypeError):
        written["KeywordsOnly"](1)  # keyword-only, as generated
    for name in ("Plain", "KeywordsOnly"):
        ours = inspect.signature(written[name]).parameters
        theirs = inspect.signature(generated[name]).parameters
        assert [(p.name, p.kind) for p in ours.values()] == [
            (p.name, p.kind) for p in theirs.values()
        ]


def test_classes_it_cannot_mirror_are_left_as_they_are() -> None:
    source = TOY.replace("field(default=0.5)", "field(default=0.5, repr=False)")
    assert "Plain" not in written_classes(native_inits(source))
    assert native_inits("class A:\n    x: int\n") == "class A:\n    x: int\n"


def test_every_dataclass_of_the_compiled_core_gets_a_native_init() -> None:
    """No record of the core falls back to the interpreted ``__init__`` unnoticed: each one's
    written parameters are its fields, in order."""
    for path in compiled.compiled_sources():
        source = path.read_text(encoding="utf-8")
        module = importlib.import_module(f"quota_constructs.scheduling.{path.stem}")
        written = ast.parse(native_inits(source))
        for node in written.body:
            if not isinstance(node, ast.ClassDef):
                continue
            cls = getattr(module, node.name)
            if not dataclasses.is_dataclass(cls):
                continue
            (init,) = [
                s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"
            ]
            params = [a.arg for a in init.args.args[1:] + init.args.kwonlyargs]
            assert params == [f.name for f in dataclasses.fields(cls)], node.name
