"""The user's path: ``python -m build``, a fresh venv outside the checkout, and everything the
README's user section promises, run there as a user runs it (docs/install.md).

One wheel and one venv for the module; each test is one step of the path.
"""

from __future__ import annotations

import json
import signal
import subprocess
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cfnlint.api import lint

from quota_constructs import __version__
from tests.helpers import ORGS_DIR, ROOT, wait_for_endpoint
from tests.packaging.helpers import (
    NODE_BIN,
    FreshVenv,
    build_distributions,
    fresh_venv,
    wheel_requirements,
)

pytestmark = pytest.mark.slow

END_OF_LIFE = "end-of-life"
"""What jsii's banner says when Node is too old: never in any output here."""


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_distributions(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory, dist: tuple[Path, Path]) -> FreshVenv:
    return fresh_venv(tmp_path_factory.mktemp("user") / "venv", dist[0])


def clean(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """``done`` after checking it succeeded with no end-of-life banner anywhere."""
    assert done.returncode == 0, done.stderr + done.stdout
    assert END_OF_LIFE not in done.stdout + done.stderr
    return done


def lint_templates(outdir: Path) -> list[str]:
    """cfn-lint's findings over every template of a cloud assembly."""
    found = []
    for template in sorted(outdir.glob("*.template.json")):
        found += [str(m) for m in lint(template.read_text(), regions=["us-east-1"])]
    return found


def test_the_wheel_holds_the_whole_product(dist: tuple[Path, Path]) -> None:
    wheel, _ = dist
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"quota_constructs-{__version__}.dist-info"
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        meta = archive.read(f"{info}/METADATA").decode()
    assert {
        "quota_constructs/stacks/organisation_stack.py",
        "quota_constructs/stacks/organisation_app.py",
        "quota_constructs/stacks/pipeline_stack.py",
        "quota_constructs/local/pytest_plugin.py",
        "quota_constructs/data/orgs/seed-demo.yaml",
        "quota_constructs/data/scaffold/app.py.template",
        "quota_constructs/data/scaffold/cdk.json.template",
        "quota_constructs/data/forecast-calibration.json",
        "quota_constructs/py.typed",
        "quota_constructs/core_build.py",
        f"{info}/licenses/LICENSE",
    } <= names
    package = ROOT / "quota_constructs"
    every_file = {
        str(path.relative_to(ROOT))
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert every_file - names == set()  # no module or data file left out
    assert not any(n.startswith(("stacks/", "tests/", "build/")) for n in names)
    assert "quota = quota_constructs.commands:app" in entry_points
    assert "[pytest11]\nquota_constructs = quota_constructs.local.pytest_plugin" in entry_points
    assert f"Version: {__version__}\n" in meta
    assert "License-Expression: Apache-2.0" in meta
    assert "Provides-Extra: compiled" in meta and "Provides-Extra: dask" in meta
    assert "Project-URL: Changelog," in meta and "Classifier: Typing :: Typed" in meta


def test_the_sdist_holds_the_sources_the_docs_and_the_changelog(dist: tuple[Path, Path]) -> None:
    _, sdist = dist
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE"} <= names
    assert "quota_constructs/data/orgs/seed-demo.yaml" in names


def test_the_wheel_requires_what_the_package_imports(dist: tuple[Path, Path]) -> None:
    required = {r.name.lower() for r in wheel_requirements(dist[0])}
    assert {"aws-cdk-lib", "constructs", "cdk-nag", "boto3", "pydantic", "typer"} <= required


def test_quota_version_prints_the_package_version(user: FreshVenv, tmp_path: Path) -> None:
    done = clean(user.run("quota", "--version", cwd=tmp_path))
    assert done.stdout == f"quota {__version__} (scheduler core: pure Python)\n"


def test_the_installed_package_is_the_wheel_not_the_checkout(
    user: FreshVenv, tmp_path: Path
) -> None:
    code = "import quota_constructs, sys; print(quota_constructs.__file__)"
    where = Path(clean(user.run("python", "-c", code, cwd=tmp_path)).stdout.strip())
    assert where.is_relative_to(user.root)


USER_APP = """\
import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from quota_constructs import OrganisationStack, load_organisation

app = cdk.App()
cdk.Validations.of(app).add_plugins(AwsSolutionsChecks())
for name in ("seed-demo", "research"):
    org = load_organisation(f"{name}.yaml")
    OrganisationStack(app, f"Quota-{name}", organisation=org)
app.synth()
"""


def test_a_user_app_with_the_organisation_stack_synthesizes_nag_and_lint_clean(
    user: FreshVenv, tmp_path: Path
) -> None:
    for name in ("seed-demo", "research"):
        (tmp_path / f"{name}.yaml").write_text((ORGS_DIR / f"{name}.yaml").read_text())
    (tmp_path / "app.py").write_text(USER_APP)
    out = tmp_path / "cdk.out"
    clean(user.run("python", "app.py", cwd=tmp_path, CDK_OUTDIR=str(out)))
    assert {p.name for p in out.glob("*.template.json")} == {
        "Quota-seed-demo.template.json",
        "Quota-research.template.json",
    }
    assert lint_templates(out) == []


CONSTRUCTS_APP = """\
import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from quota_constructs import QuotaManagedTrainingQueue, QuotaShareSpec

app = cdk.App()
cdk.Validations.of(app).add_plugins(AwsSolutionsChecks())
stack = cdk.Stack(app, "Training")
QuotaManagedTrainingQueue(
    stack,
    "Queue",
    spec=[
        QuotaShareSpec(name="vision", capacity={"ml.g5.12xlarge": 4}, strategy="LEND_AND_BORROW"),
        QuotaShareSpec(name="nlp", capacity={"ml.g5.12xlarge": 2}, strategy="LEND"),
    ],
    organisation="ml-team",
)
app.synth()
"""


def test_a_user_app_with_the_constructs_alone_synthesizes_and_publishes_the_contract(
    user: FreshVenv, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text(CONSTRUCTS_APP)
    out = tmp_path / "cdk.out"
    clean(user.run("python", "app.py", cwd=tmp_path, CDK_OUTDIR=str(out)))
    template = json.loads((out / "Training.template.json").read_text())
    names = {
        r["Properties"]["Name"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SSM::Parameter"
    }
    assert names == {
        "/quota/ml-team/job-queue/name",
        "/quota/ml-team/job-queue/arn",
        "/quota/ml-team/quota-shares/vision/arn",
        "/quota/ml-team/quota-shares/nlp/arn",
    }
    assert lint_templates(out) == []


def test_quota_init_then_cdk_synth_works_offline(
    user: FreshVenv, dist: tuple[Path, Path], tmp_path: Path
) -> None:
    clean(user.run("quota", "init", "my-queues", cwd=tmp_path))
    app = tmp_path / "my-queues"
    pinned = (app / "requirements.txt").read_text()
    assert f"quota-constructs=={__version__}" in pinned
    install = [
        *("python", "-m", "pip", "--python", user.python, "install", "--no-index"),
        *("--find-links", dist[0].parent, "-r", app / "requirements.txt"),
    ]
    done = subprocess.run(
        [str(a) for a in install], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    synth = clean(user.run(NODE_BIN / "cdk", "synth", "--quiet", cwd=app))
    assert (app / "cdk.out" / "Quota-seed-demo.template.json").is_file(), synth.stderr


@pytest.fixture
def served(user: FreshVenv, tmp_path: Path) -> Iterator[str]:
    """``quota local serve`` with its defaults (only a free port), from a folder of nothing."""
    process = subprocess.Popen(
        [str(user.bin / "quota"), "local", "serve", "--port", "0"],
        cwd=tmp_path,
        env=user.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield wait_for_endpoint(process, [])
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def test_local_serve_with_defaults_then_org_import_with_the_resource_mapping(
    user: FreshVenv, served: str, tmp_path: Path
) -> None:
    done = clean(
        user.run(
            *("quota", "org", "import", "--endpoint-url", served, "--queue", "seed-demo-queue"),
            *("--output", "seed-demo.yaml", "--resource-mapping", "mapping.json"),
            cwd=tmp_path,
        )
    )
    mapping = json.loads((tmp_path / "mapping.json").read_text())
    assert len(mapping) == 6, done.stderr
    assert "organisation: seed-demo" in (tmp_path / "seed-demo.yaml").read_text()


def test_quota_demo_runs_from_any_directory(user: FreshVenv, tmp_path: Path) -> None:
    done = clean(user.run("quota", "demo", cwd=tmp_path))
    assert "seed-demo" in done.stdout


PLUGIN_TEST = """\
def test_the_fixture_serves_seed_demo(emulator):
    shares = emulator.client("batch").list_quota_shares(jobQueue="seed-demo-queue")
    assert sorted(s["quotaShareName"] for s in shares["quotaShares"]) == ["QS1", "QS2", "QS3"]
"""


def test_the_pytest_plugin_gives_a_users_tests_the_emulator_fixture(
    user: FreshVenv, tmp_path: Path
) -> None:
    (tmp_path / "test_user.py").write_text(PLUGIN_TEST)
    done = clean(user.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=tmp_path))
    assert "1 passed" in done.stdout


def test_build_core_without_the_compiled_extra_warns_and_keeps_pure_python(
    user: FreshVenv, tmp_path: Path
) -> None:
    done = clean(user.run("quota", "build-core", cwd=tmp_path, XDG_CACHE_HOME=str(tmp_path)))
    assert "compiled core not built" in done.stderr and "using pure Python" in done.stderr
    strict = user.run("quota", "build-core", "--strict", cwd=tmp_path, XDG_CACHE_HOME=str(tmp_path))
    assert strict.returncode == 1


def readme_block(language: str) -> str:
    """The first block of ``language`` in README's user section ("Use it in your CDK app")."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Use it in your CDK app", 1)[1].split("\n## ", 1)[0]
    return section.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def test_the_readme_user_commands_are_the_steps_run_here() -> None:
    """The README's commands run here, in order, with the built wheel in place of PyPI: the
    venv (``fresh_venv``), the install, ``quota init``, the pinned install, ``cdk synth``
    (test_quota_init_then_cdk_synth_works_offline); the doc test skips the network steps."""
    commands = [line.split("#")[0].strip() for line in readme_block("bash").splitlines()]
    assert commands == [
        "python3 -m venv .venv && . .venv/bin/activate",
        "pip install quota-constructs",
        "quota init my-queues && cd my-queues",
        "pip install -r requirements.txt",
        "cdk synth",
    ]


def test_the_readme_python_example_synthesizes_in_the_users_venv(
    user: FreshVenv, tmp_path: Path
) -> None:
    (tmp_path / "orgs").mkdir()
    (tmp_path / "orgs" / "research.yaml").write_text((ORGS_DIR / "research.yaml").read_text())
    (tmp_path / "app.py").write_text(readme_block("python"))
    out = tmp_path / "cdk.out"
    clean(user.run("python", "app.py", cwd=tmp_path, CDK_OUTDIR=str(out)))
    template = json.loads((out / "Own.template.json").read_text())
    assert any(
        r["Properties"].get("Name") == "/quota/own-queue/job-queue/arn"
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SSM::Parameter"
    )
    assert (out / "Quota-research.template.json").is_file()
