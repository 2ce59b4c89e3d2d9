"""Owns ``quota init``: a user's CDK app of organisation stacks, written from package data.

The files are the templates in ``data/scaffold/`` (``$version`` becomes this package's version)
and the example organisation ``data/orgs/seed-demo.yaml``: ``app.py``, ``cdk.json`` (the
feature flags the constructs are tested under, ``orgs_dir: orgs``), ``requirements.txt``
(this library, pinned), ``README.md``, ``.gitignore`` and ``orgs/seed-demo.yaml``.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

from quota_constructs._version import __version__
from quota_constructs.config import SEED_DEMO
from quota_constructs.model import Problem, QuotaConfigError

TEMPLATES = Path(__file__).resolve().parent / "data" / "scaffold"
DISTRIBUTION = "quota-constructs"
EXAMPLE_ORGANISATION = Path("orgs") / SEED_DEMO.name

_TEMPLATED = {
    "app.py": "app.py.template",
    "cdk.json": "cdk.json.template",
    "README.md": "README.md.template",
    ".gitignore": "gitignore.template",
}


def requirements_text(version: str = __version__) -> str:
    """The scaffold's ``requirements.txt``: this library at exactly ``version``."""
    return (
        "# The quota-constructs library (CDK constructs, organisation stacks, the `quota` CLI);\n"
        "# it brings aws-cdk-lib, constructs and cdk-nag at the versions it is tested with.\n"
        f"{DISTRIBUTION}=={version}\n"
    )


def scaffold_files() -> dict[Path, str]:
    """Relative path -> content of every file ``quota init`` writes."""
    files = {
        Path(name): Template((TEMPLATES / template).read_text(encoding="utf-8")).substitute(
            version=__version__
        )
        for name, template in _TEMPLATED.items()
    }
    files[Path("requirements.txt")] = requirements_text()
    files[EXAMPLE_ORGANISATION] = SEED_DEMO.read_text(encoding="utf-8")
    return files


def write_scaffold(directory: str | Path, *, force: bool = False) -> list[Path]:
    """Write the scaffold into ``directory`` (made if missing); return the paths written.

    :raises QuotaConfigError: ``directory`` is a file, or (without ``force``) a file the
        scaffold would write exists already; nothing is written then.
    """
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise QuotaConfigError(
            [Problem("DIR", str(target), "not a directory", "name a new or existing directory")]
        )
    files = scaffold_files()
    folders = sorted(str(target / path) for path in files if (target / path).is_dir())
    if folders:
        raise QuotaConfigError(
            [
                Problem(
                    "DIR",
                    str(target),
                    f"{', '.join(folders)} must be a file, and is a directory",
                    "choose an empty or new directory",
                )
            ]
        )
    existing = sorted(str(target / path) for path in files if (target / path).exists())
    if existing and not force:
        raise QuotaConfigError(
            [
                Problem(
                    "DIR",
                    str(target),
                    f"would overwrite {', '.join(existing)}",
                    "choose an empty or new directory, or pass --force to overwrite them",
                )
            ]
        )
    written = []
    for relative, content in files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written
