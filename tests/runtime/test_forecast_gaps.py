"""What the forecast does not model yet, and saying what it does not know (issue 44's gaps),
over real HTTP against the emulator: the caveats where people look."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from quota_constructs.commands import app
from tests.runtime.helpers import jobs
from tests.runtime.test_forecast import busy, now_of, quota  # noqa: F401 (busy: a fixture)


def notes(err: str) -> list[str]:
    return [line.removeprefix("note: ") for line in err.splitlines() if line.startswith("note: ")]


def test_status_prints_the_caveats_under_the_table_and_in_its_json(busy) -> None:  # noqa: F811
    emu, client, _ = busy
    expected = list(client.forecast(now_s=now_of(emu)).caveats)
    assert any("not foreseen" in c for c in expected)
    assert any("share QS1: 0 past run(s)" in c for c in expected)
    code, out, err = quota(emu, "status")
    assert code == 0, err
    assert notes(err) == expected
    code, out, err = quota(emu, "status", "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["forecastCaveats"] == expected
    assert "forecastStartS" in view["quotaShares"][0]["headJob"]  # the contract kept


def test_status_without_a_forecast_has_no_caveats(busy) -> None:  # noqa: F811
    emu, _, _ = busy
    code, out, err = quota(emu, "status", "--json", "--no-forecast")
    assert code == 0, err
    assert "forecastCaveats" not in json.loads(out)
    assert notes(err) == []


def test_jobs_ls_prints_the_caveats_on_stderr_and_keeps_its_json_a_list(busy) -> None:  # noqa: F811
    emu, client, _ = busy
    expected = list(client.forecast(now_s=now_of(emu)).caveats)
    code, out, err = jobs(emu, "ls")
    assert code == 0, err
    assert notes(err) == expected
    code, out, err = jobs(emu, "ls", "--json")
    assert code == 0, err
    assert isinstance(json.loads(out), list)
    assert notes(err) == expected


def test_jobs_describe_and_local_why_give_the_caveats(busy) -> None:  # noqa: F811
    emu, client, ids = busy
    waiting = ids["qs1-p1"]
    expected = list(client.forecast(now_s=now_of(emu)).caveats)
    code, out, err = jobs(emu, "describe", waiting, "--json")
    assert code == 0, err
    assert json.loads(out)["forecastCaveats"] == expected
    code, out, err = jobs(emu, "describe", waiting)
    assert notes(err) == expected
    why = ["local", "why", waiting, "--endpoint-url", emu.endpoint_url]
    result = CliRunner().invoke(app, [*why, "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["forecastCaveats"] == expected
    result = CliRunner().invoke(app, why)
    assert notes(result.stderr) == expected
