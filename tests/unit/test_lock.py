"""The supply chain is locked: ``make setup`` installs only the hashed lock, which agrees with the
pins people edit (``requirements*.txt``) and with what is installed."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements-dev.lock"
PINNED = (ROOT / "requirements.txt", ROOT / "requirements-dev.txt")
PROJECT = "quota-constructs"


def canonical(name: str) -> str:
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked() -> dict[str, tuple[str, list[str]]]:
    """Lock entry name -> (version, its sha256 hashes)."""
    entries: dict[str, tuple[str, list[str]]] = {}
    text = LOCK.read_text(encoding="utf-8").replace("\\\n", " ")
    for line in text.splitlines():
        match = re.match(r"([A-Za-z0-9_.-]+)==(\S+)\s*(.*)", line)
        if match:
            hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", match[3])
            entries[canonical(match[1])] = (match[2], hashes)
    return entries


def pins() -> dict[str, str]:
    """Every ``name==version`` line of the files people edit."""
    found: dict[str, str] = {}
    for path in PINNED:
        for line in path.read_text(encoding="utf-8").splitlines():
            match = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", line.strip())
            if match:
                found[canonical(match[1])] = match[2]
    return found


def test_every_locked_package_has_a_version_and_hashes() -> None:
    entries = locked()
    assert len(entries) > 100  # the whole tree, not only the direct pins
    assert [name for name, (_, hashes) in entries.items() if not hashes] == []


def test_every_pin_is_locked_at_the_same_version() -> None:
    entries = locked()
    assert {n: v for n, v in pins().items() if entries.get(n, ("",))[0] != v} == {}


def test_every_installed_package_comes_from_the_lock() -> None:
    """Run in the venv ``make setup`` made: nothing installed that the lock does not pin."""
    entries = locked()
    installed = {canonical(d.metadata["Name"]): d.version for d in metadata.distributions()}
    installed.pop(PROJECT)
    assert {n: v for n, v in installed.items() if entries.get(n, ("",))[0] != v} == {}


def test_setup_installs_only_the_hashed_lock_and_never_upgrades() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    installs = [line.strip() for line in makefile.splitlines() if "pip install" in line]
    assert "$(PY) -m pip install --quiet --require-hashes --no-deps -r $(LOCK)" in installs
    assert "$(PY) -m pip install --quiet --no-deps --no-build-isolation -e ." in installs
    assert [line for line in installs if "--upgrade" in line or "requirements" in line] == []


def lock_target() -> list[str]:
    """The recipe lines of the Makefile's ``lock`` target."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nlock:", 1)[1].split("\n\n", 1)[0]
    return [line.strip() for line in recipe.splitlines()[1:]]


def test_make_lock_runs_only_tools_the_hashed_lock_pins() -> None:
    """``make lock``'s own tools (pip-tools and its dependencies) come from the hashed lock, as
    ``make setup`` installed them: it installs nothing itself, pinned or not."""
    assert [line for line in lock_target() if "pip install" in line or "venv" in line] == []
    assert lock_target()[0].startswith("$(VENV)/bin/pip-compile --quiet --generate-hashes")
    entries = locked()
    assert pins()["pip-tools"] == entries["pip-tools"][0] == "7.6.2"
    for tool in ("pip-tools", "build", "click", "pip", "pyproject-hooks", "setuptools", "wheel"):
        assert entries[tool][1], f"{tool} is not locked with hashes"
