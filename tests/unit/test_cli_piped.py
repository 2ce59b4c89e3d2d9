"""Every ``quota`` command's output piped at ``COLUMNS=40``: whole values, one row per line.

Each command runs as a subprocess (stdout a pipe), as a script or ``| grep`` would see it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from quota_constructs.commands import core_build, package_version
from tests.helpers import ORGS_DIR, wait_for_endpoint

TEAMS = ORGS_DIR.parent / "teams" / "research.yaml"
NARROW = {"COLUMNS": "40"}


def quota(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m quota_constructs.commands ARGS`` with stdout a pipe and ``COLUMNS=40``."""
    return subprocess.run(
        [sys.executable, "-m", "quota_constructs.commands", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **NARROW},
        timeout=300,
        check=False,
    )


def row(output: str, first: str) -> str:
    """The first line of a table that holds ``first`` as a cell."""
    return next(line for line in output.splitlines() if f" {first} " in line)


def test_version_comes_from_the_package_metadata_and_names_the_core() -> None:
    result = quota("--version")
    expected = f"quota {package_version()} (scheduler core: {core_build()})\n"
    assert result.returncode == 0 and result.stdout == expected


def test_org_validate_prints_whole_values_one_share_per_line() -> None:
    result = quota("org", "validate", *(str(p) for p in sorted(ORGS_DIR.glob("*.yaml"))))
    assert result.returncode == 0, result.stderr
    line = row(result.stdout, "generative")
    assert "LEND_AND_BORROW" in line and "4 x ml.g5.xlarge" in line and "6 x ml.g5.xlarge" in line
    principals = row(result.stdout.split("team access")[1], "generative")
    assert "arn:aws:iam::111122223333:role/GenerativeTeam, 444455556666" in principals
    assert "…" not in result.stdout


def test_org_validate_errors_are_one_line_each(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("organisation: x\nshares:\n  - {name: a, capacity: {ml.g5.xlargee: 1}}\n")
    result = quota("org", "validate", str(bad))
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2  # one line per problem (type and strategy), as every command prints
    assert all(line.startswith(f"error: {bad}: line 3: shares[0].") for line in lines)


def test_org_validate_json_lists_shares_with_aws_names(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("organisation: x\nshares: []\n")
    result = quota("org", "validate", str(ORGS_DIR / "seed-demo.yaml"), str(bad), "--json")
    assert result.returncode == 2
    good, invalid = json.loads(result.stdout)
    qs1 = good["quotaShares"][0]
    assert qs1["quotaShareName"] == "QS1" and qs1["resourceSharingConfiguration"] == {
        "strategy": "LEND_AND_BORROW",
        "borrowLimit": 200,
    }
    assert invalid["valid"] is False and invalid["problems"][0]["path"] == "shares"


def test_recommend_prints_each_team_on_one_line() -> None:
    result = quota("recommend", str(TEAMS))
    assert result.returncode == 0, result.stderr
    line = row(result.stdout, "generative")
    assert "LEND_AND_BORROW" in line and "50% (2 x ml.g5.xlarge)" in line
    assert "…" not in result.stdout


def test_simulate_prints_each_metric_on_one_line() -> None:
    result = quota("simulate", str(ORGS_DIR / "seed-demo.yaml"), "--generate", str(TEAMS))
    assert result.returncode == 2  # the teams of research are not shares of seed-demo
    result = quota(
        "simulate", str(ORGS_DIR / "research.yaml"), "--generate", str(TEAMS), "--days", "1"
    )
    assert result.returncode == 0, result.stderr
    assert "jobs (succeeded / failed / never started)" in result.stdout
    assert "…" not in result.stdout


def test_demo_lines_are_whole() -> None:
    result = quota("demo")
    assert result.returncode == 0, result.stderr
    assert any(
        "preempted by qs2-job (QS2, p1) (CROSS_SHARE), back to RUNNABLE" in line
        for line in result.stdout.splitlines()
    )
    assert max(len(line) for line in result.stdout.splitlines()) < 400  # no full-width rules


def test_local_serve_banner_prints_one_setting_per_line() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "quota_constructs.commands", "local", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **NARROW},
    )
    printed: list[str] = []
    try:
        endpoint = wait_for_endpoint(process, printed)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert f"  export AWS_ENDPOINT_URL_BATCH={endpoint}\n" in printed
    assert "  export AWS_DEFAULT_REGION=us-east-1\n" in printed
    assert any(
        line.startswith("  organisation seed-demo: seed-demo-queue (QS1, QS2, QS3)")
        for line in printed
    )
