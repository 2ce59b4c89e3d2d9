"""``quota org diff`` and ``quota status`` know share calendars: the emulator flips the weekend
share on its calendar, diff compares with the settings in force (a scheduled change is not
drift), status shows the window in force and the next change."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from quota_constructs.commands import app
from quota_constructs.local.testing import EmulatorServer

ORG = """organisation: cal-demo
shares:
  - name: weekend
    capacity: {ml.g5.xlarge: 1}
    strategy: LEND
    schedule: [{days: [sat, sun], strategy: RESERVE}]
  - name: weekday
    capacity: {ml.g5.xlarge: 1}
    strategy: LEND_AND_BORROW
"""
runner = CliRunner()


def quota(command: str, emu: EmulatorServer) -> Result:
    return runner.invoke(app, shlex.split(command)[1:], env=emu.env)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[EmulatorServer, Path]]:
    path = tmp_path / "cal-demo.yaml"
    path.write_text(ORG, encoding="utf-8")
    with EmulatorServer(org_files=[path]) as server:
        yield server, path


def _weekend(when: datetime) -> bool:
    return when.weekday() >= 5


def _other_setting(now: datetime) -> datetime:
    """A moment two days away whose window differs from now's (weekday <-> weekend)."""
    for days in range(1, 8):
        later = now + timedelta(days=days)
        if _weekend(later) != _weekend(now):
            return later.replace(hour=12, minute=0, second=0, microsecond=0)
    raise AssertionError("no other window in a week")


def test_diff_compares_with_the_settings_in_force(served: tuple[EmulatorServer, Path]) -> None:
    emu, path = served
    now = datetime.now(UTC)
    expected = "RESERVE" if _weekend(now) else "LEND"
    matching = quota(f"quota org diff {path} --json", emu)
    assert matching.exit_code == 0, matching.output
    data = json.loads(matching.stdout)
    assert data["drifted"] is False
    assert data["calendars"][0]["inForce"]["strategy"] == expected

    other = _other_setting(now)
    drifted = quota(f"quota org diff {path} --json --at {other:%Y-%m-%dT%H:%M:%S}", emu)
    assert drifted.exit_code == 1
    assert json.loads(drifted.stdout)["differences"] == [
        {
            "quotaShareName": "weekend",
            "field": "strategy",
            "file": "LEND" if expected == "RESERVE" else "RESERVE",
            "queue": expected,
        }
    ]


def test_status_shows_the_window_in_force_and_the_next_change(
    served: tuple[EmulatorServer, Path],
) -> None:
    emu, path = served
    result = quota(f"quota status --organisation cal-demo --org-file {path} --json", emu)
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["calendars"]
    now = datetime.now(UTC)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if _weekend(now):
        assert row["window"] == "sat,sun 00:00-24:00"
        assert row["inForce"]["strategy"] == "RESERVE"
        change, then = midnight + timedelta(days=7 - now.weekday()), "LEND"
    else:
        assert row["window"] is None
        assert row["inForce"]["strategy"] == "LEND"
        change, then = midnight + timedelta(days=5 - now.weekday()), "RESERVE"
    assert row["nextChange"] == f"{change:%Y-%m-%dT%H:%M:%SZ}"
    assert row["nextSettings"]["strategy"] == then

    table = quota(f"quota status --organisation cal-demo --org-file {path}", emu)
    assert table.exit_code == 0, table.output
    line = next(
        ln for ln in table.stdout.splitlines() if "weekend" in ln and "->" not in ln and "Z" in ln
    )
    assert f"{change:%Y-%m-%dT%H:%M:%SZ}" in line and f"strategy={then}" in line


def test_status_refuses_org_file_with_watch(served: tuple[EmulatorServer, Path]) -> None:
    emu, path = served
    result = quota(f"quota status --organisation cal-demo --org-file {path} --watch", emu)
    assert result.exit_code == 2
    assert "--org-file shows calendars once: drop --watch" in result.output


SATURDAY_NOON = datetime(2026, 12, 5, 12, tzinfo=UTC)
MONDAY_NOON = datetime(2026, 12, 7, 12, tzinfo=UTC)


@pytest.mark.parametrize("start", [SATURDAY_NOON, MONDAY_NOON], ids=["saturday", "monday"])
def test_diff_plan_and_status_read_the_calendars_at_the_emulator_s_clock(
    tmp_path: Path, start: datetime
) -> None:
    """Whatever day the machine's clock says: one of the two cases is on another day."""
    path = tmp_path / "cal-demo.yaml"
    path.write_text(ORG, encoding="utf-8")
    with EmulatorServer(org_files=[path], start_epoch=start.timestamp()) as emu:
        diff = quota(f"quota org diff {path} --json", emu)
        plan = quota(f"quota org plan {path} --json", emu)
        status = quota(f"quota status --organisation cal-demo --org-file {path} --json", emu)
    in_force = "RESERVE" if _weekend(start) else "LEND"
    assert diff.exit_code == 0, diff.output
    (calendar,) = json.loads(diff.stdout)["calendars"]
    assert calendar["inForce"]["strategy"] == in_force
    assert plan.exit_code == 0, plan.output
    assert json.loads(plan.stdout)["changes"] == []
    assert status.exit_code == 0, status.output
    (row,) = json.loads(status.stdout)["calendars"]
    assert row["inForce"]["strategy"] == in_force
