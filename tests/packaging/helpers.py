"""A wheel and sdist built from the checkout, and a fresh venv outside it holding the wheel and
exactly the packages its metadata requires.

The venv is offline: its dependencies are the test environment's own (the locked versions),
each linked into one folder that a path file puts on the venv's ``sys.path``. Only the
distributions in the closure of the wheel's ``Requires-Dist`` are linked (plus pytest, the
user's own test runner, for the plugin), so an import the metadata does not declare fails there
as on a user's machine, and the checkout itself is never importable.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import venv
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from email.parser import Parser
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / "node_modules" / ".bin"
"""The pinned CDK CLI and Node.js LTS (package.json): what a user of the library installs."""
DISTRIBUTION = "quota-constructs"
TEST_RUNNER = ("pytest",)
"""Not a requirement of the wheel: what a user who runs the ``emulator`` fixture has."""


def build_distributions(out: Path) -> tuple[Path, Path]:
    """``python -m build --no-isolation`` of the checkout into ``out``: (wheel, sdist)."""
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return wheel, sdist


def wheel_requirements(wheel: Path) -> list[Requirement]:
    """The wheel's ``Requires-Dist`` that apply here (markers evaluated, no extra asked for)."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        fields = Parser().parsestr(archive.read(name).decode())
    return _applying(Requirement(text) for text in fields.get_all("Requires-Dist") or [])


def _applying(
    requirements: Iterable[Requirement], extras: frozenset[str] = frozenset()
) -> list[Requirement]:
    """The ``requirements`` whose markers hold here, with ``extras`` asked for."""
    wanted = []
    for requirement in requirements:
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": e}) for e in {"", *extras}):
            wanted.append(requirement)
    return wanted


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dependency_closure(requirements: list[Requirement]) -> dict[str, metadata.Distribution]:
    """Every installed distribution the requirements need, transitively (name -> dist)."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        key = _canonical(requirement.name)
        if key in found:
            continue
        dist = metadata.distribution(requirement.name)
        found[key] = dist
        extras = frozenset(requirement.extras)
        todo += _applying((Requirement(t) for t in dist.requires or []), extras)
    return found


def _top_level_entries(dist: metadata.Distribution) -> set[str]:
    """The names in ``site-packages`` a distribution installed (packages, modules, its
    dist-info, ``.libs`` folders); scripts and data outside it are skipped."""
    entries = set()
    for file in dist.files or []:
        first = file.parts[0]
        if first in {"..", "bin", "__pycache__"} or first.endswith(".pth"):
            continue
        entries.add(first)
    return entries


@dataclass(frozen=True)
class FreshVenv:
    """A venv with the wheel installed and only its requirements importable."""

    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def env(self, **extra: str) -> dict[str, str]:
        """A user's shell: this venv and the pinned Node/CDK CLI on PATH, no checkout on
        ``PYTHONPATH``, dummy credentials, no colour."""
        keep = {"LANG", "LC_ALL", "TMPDIR", "HOME"}
        base = {k: v for k, v in os.environ.items() if k in keep}
        return {
            **base,
            "PATH": f"{self.bin}:{NODE_BIN}:/usr/local/bin:/usr/bin:/bin",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "CDK_DISABLE_CLI_TELEMETRY": "true",
            "NO_COLOR": "1",
            "COLUMNS": "200",
            **extra,
        }

    def run(
        self, *args: str | Path, cwd: Path, timeout: float = 300, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """Run a command of the venv (``quota``, ``python``) or of PATH, from ``cwd``."""
        return subprocess.run(
            [str(a) for a in args],
            cwd=cwd,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def fresh_venv(where: Path, wheel: Path) -> FreshVenv:
    """A venv at ``where`` (no pip of its own), the wheel installed by pip with no index and
    no dependencies, and the wheel's dependency closure linked in from this environment."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(where)
    made = FreshVenv(where)
    purelib = Path(
        subprocess.run(
            [str(made.python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    links = where / "dependencies"
    links.mkdir()
    ours = Path(sysconfig.get_path("purelib"))
    closure = dependency_closure(
        [*wheel_requirements(wheel), *(Requirement(n) for n in TEST_RUNNER)]
    )
    for dist in closure.values():
        for entry in _top_level_entries(dist):
            source = ours / entry
            if source.exists() and not (links / entry).exists():
                (links / entry).symlink_to(source)
    (purelib / "dependencies.pth").write_text(f"{links}\n", encoding="utf-8")
    subprocess.run(
        [
            sys.executable,
            *("-m", "pip", "--python", str(made.python), "install", "--quiet"),
            *("--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return made
