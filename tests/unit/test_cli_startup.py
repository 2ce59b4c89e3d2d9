"""Start-up of ``quota``: a command imports the modules of its own command only.

Each check runs the command in a child process (as users run it) and reads which modules it
imported, written by a wrapper on exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from quota_constructs.advisor.workload import WorkloadJob, workload_csv
from quota_constructs.commands import COMMANDS, app
from tests.helpers import ORGS_DIR

RESEARCH = ORGS_DIR / "research.yaml"
HEAVY = ("boto3", "botocore", "quota_constructs.local", "quota_constructs.runtime", "werkzeug")
"""What ``quota simulate`` must not import: the AWS SDK, the emulator, the runtime."""
RUN_AND_LIST_MODULES = """
import json, sys
sys.argv = ["quota", *sys.argv[1:]]
from quota_constructs.commands import main
code = 0
try:
    main()
except SystemExit as exit:
    code = exit.code or 0
with open({out!r}, "w") as f:
    json.dump({{"exitCode": code, "modules": sorted(sys.modules)}}, f)
"""


def modules_imported(tmp_path: Path, *args: str, exit_code: int = 0) -> list[str]:
    """The modules a child process running ``quota ARGS`` had imported when it ended (it must
    end with ``exit_code``)."""
    out = tmp_path / "modules.json"
    script = RUN_AND_LIST_MODULES.format(out=str(out))
    subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, timeout=300, check=True
    )
    ended = json.loads(out.read_text())
    assert ended["exitCode"] == exit_code
    return list(ended["modules"])


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def one_job_workload(tmp_path: Path, share: str) -> Path:
    """A workload CSV of one job of ``share``."""
    workload = tmp_path / "w.csv"
    workload.write_text(workload_csv([WorkloadJob(0.0, share, "ml.g5.xlarge", 1, 60.0, 1)]))
    return workload


def test_quota_simulate_imports_neither_boto3_nor_the_emulator(tmp_path: Path) -> None:
    workload = one_job_workload(tmp_path, "generative")
    modules = modules_imported(
        tmp_path, "simulate", str(RESEARCH), "--workload", str(workload), "--json"
    )
    assert "quota_constructs.advisor.simulate" in modules  # it did simulate
    assert heavy(modules) == []


def test_a_refused_simulate_input_imports_neither(tmp_path: Path) -> None:
    """The error path too: an unknown share is reported without importing boto3."""
    workload = one_job_workload(tmp_path, "nobody")
    modules = modules_imported(
        tmp_path, "simulate", str(RESEARCH), "--workload", str(workload), exit_code=2
    )
    assert heavy(modules) == []


def test_a_command_of_the_runtime_still_loads_it(tmp_path: Path) -> None:
    modules = modules_imported(tmp_path, "jobs", "--help")
    assert "quota_constructs.runtime" in modules and "boto3" in modules


def test_the_help_lists_every_command_in_order() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    listed = [line.split()[1] for line in result.output.splitlines() if line.startswith("│ ")]
    commands = [name for name in listed if name in COMMANDS]
    assert commands == list(COMMANDS)


def test_a_mistyped_command_is_answered_with_the_near_one() -> None:
    result = CliRunner().invoke(app, ["simulat"])
    assert result.exit_code == 2
    assert "No such command 'simulat'" in result.output and "'simulate'" in result.output
