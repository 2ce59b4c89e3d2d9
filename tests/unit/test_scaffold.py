"""``quota init DIR``: the files of a user's CDK app, and what they must agree with here; the
package's one version and its shipped defaults. (Synthesizing the scaffold from an installed
wheel is tests/packaging.)"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from typer.testing import CliRunner

from quota_constructs import __version__
from quota_constructs.commands import app
from quota_constructs.config import SEED_DEMO, load_organisation
from quota_constructs.scaffold import EXAMPLE_ORGANISATION
from quota_constructs.stacks.organisation_app import ORGS_DIR_CONTEXT
from quota_constructs.stacks.pipeline_stack import CDK_CLI_VERSION
from tests.helpers import ORGS_DIR, ROOT

runner = CliRunner()
CONTRACT = ("app.py", "cdk.json", "requirements.txt")


def test_init_writes_the_app_its_flags_its_pin_and_an_organisation_file(tmp_path: Path) -> None:
    target = tmp_path / "queues"
    result = runner.invoke(app, ["init", str(target)])
    assert result.exit_code == 0, result.output
    for name in (*CONTRACT, "README.md", ".gitignore", str(EXAMPLE_ORGANISATION)):
        assert (target / name).is_file()
        assert str(target / name) in result.stdout
    assert f"quota-constructs=={__version__}\n" in (target / "requirements.txt").read_text()
    assert load_organisation(target / EXAMPLE_ORGANISATION).name == "seed-demo"
    assert (
        "from quota_constructs import QuotaConfigError, build_app"
        in (target / "app.py").read_text()
    )


def test_the_scaffolds_cdk_json_has_the_flags_the_constructs_are_tested_under(
    tmp_path: Path,
) -> None:
    runner.invoke(app, ["init", str(tmp_path)])
    written = json.loads((tmp_path / "cdk.json").read_text())
    ours = json.loads((ROOT / "cdk.json").read_text())
    assert written["app"] == ours["app"] == "python3 app.py"
    assert written["context"][ORGS_DIR_CONTEXT] == "orgs"
    assert ours["context"][ORGS_DIR_CONTEXT] == "stacks/orgs"
    flags = {k: v for k, v in ours["context"].items() if k != ORGS_DIR_CONTEXT}
    assert {k: v for k, v in written["context"].items() if k != ORGS_DIR_CONTEXT} == flags


def test_the_readme_of_the_scaffold_names_its_version_and_its_two_commands(tmp_path: Path) -> None:
    runner.invoke(app, ["init", str(tmp_path)])
    readme = (tmp_path / "README.md").read_text()
    assert f"quota-constructs {__version__}" in readme
    assert "pip install -r requirements.txt" in readme and "cdk synth" in readme
    assert "$version" not in readme and "$$" not in readme


def test_rejects_init_over_existing_files_naming_them_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("# mine\n")
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 2
    assert f"would overwrite {tmp_path / 'app.py'}" in result.stderr
    assert "fix: choose an empty or new directory, or pass --force" in result.stderr
    assert (tmp_path / "app.py").read_text() == "# mine\n"
    assert not (tmp_path / "cdk.json").exists()  # nothing written


def test_init_force_overwrites_the_scaffolds_files(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("# mine\n")
    assert runner.invoke(app, ["init", str(tmp_path), "--force"]).exit_code == 0
    assert "build_app(app)" in (tmp_path / "app.py").read_text()


def test_rejects_init_into_a_file(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("")
    result = runner.invoke(app, ["init", str(target)])
    assert result.exit_code == 2
    assert "not a directory" in result.stderr


def test_rejects_init_where_a_directory_has_a_scaffold_files_name(tmp_path: Path) -> None:
    (tmp_path / "app.py").mkdir()
    result = runner.invoke(app, ["init", str(tmp_path), "--force"])
    assert result.exit_code == 2
    assert "must be a file, and is a directory" in result.stderr


def test_the_shipped_default_organisation_is_the_repositorys_example() -> None:
    assert SEED_DEMO.read_text() == (ORGS_DIR / "seed-demo.yaml").read_text()


def test_the_pipeline_installs_the_cdk_cli_this_repository_pins() -> None:
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["aws-cdk"]
    assert pinned == CDK_CLI_VERSION


def test_one_version_for_the_package_the_cli_and_the_changelog() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    attribute = pyproject["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attribute == "quota_constructs._version.__version__"
    result = runner.invoke(app, ["--version"])
    assert result.stdout.startswith(f"quota {__version__} (scheduler core: ")
    assert f"\n## {__version__} - " in (ROOT / "CHANGELOG.md").read_text()
