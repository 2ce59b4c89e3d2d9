"""Fit the forecast's default calibration: the one the commands and QueueClient use unless given
their own (``--calibration FILE``) or none (``--calibration none``).

Run: ``.venv/bin/python tools/default_calibration.py [--samples 60] [--workloads 48] [--output
quota_constructs/data/forecast-calibration.json]``.

Backtests ``--workloads`` generated weeks of each of the two example organisations on seeds
never used to judge the forecast (research: stacks/teams/research.yaml on
stacks/orgs/research.yaml, seeds 130-177; ml-platform: stacks/teams/ml-platform.yaml on the
organisation ``quota recommend`` makes of it, seeds 113-160), with the commands' defaults
(arrivals auto, the sampled priorities), and fits one calibration on their forecasts pooled
(:func:`~quota_constructs.forecast.backtest.fit_and_judge`, as ``quota forecast calibrate``
does: a shift per band of the forecast median).
It is judged on other seeds (research
104-123, ml-platform 101-112: docs/runtime.md, "Calibrated bounds"). Many workloads, because
the forecasts of one week miss together (a burst makes all of them late): fitted on two
disjoint sets of 24 weeks each, the p90 shift differed by 0.08 in log. Then prints how each
organisation's weeks are covered with a fit on the other weeks (leave one week out:
:meth:`~quota_constructs.forecast.backtest.HeldOut.of_periods`). About 21 CPU-minutes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from quota_constructs.commands.forecast import backtest_workloads
from quota_constructs.config import load_organisation
from quota_constructs.forecast.backtest import Prediction, backtest, fit_and_judge

ROOT = Path(__file__).resolve().parent.parent
TEAMS = ROOT / "stacks/teams"
CASES = (
    ("research", TEAMS / "research.yaml", ROOT / "stacks/orgs/research.yaml", 130),
    ("ml-platform", TEAMS / "ml-platform.yaml", None, 113),
)
"""(name, team profiles, organisation file or ``None`` for ``quota recommend``'s, first seed)."""
DAYS = 7
WORKLOADS = 48
"""Generated weeks per organisation (seeds from its first on)."""


def predictions(teams: Path, org: Path, seeds: range, samples: int) -> list[tuple[Prediction, ...]]:
    """The backtest forecasts of one organisation's generated weeks, one group per week."""
    queue = load_organisation(org).queue
    return [
        backtest(queue, jobs, samples=samples, seed=seed, arrivals="auto").predictions
        for _, seed, jobs in backtest_workloads(None, teams, DAYS, list(seeds))
    ]


def recommended(teams: Path, folder: Path) -> Path:
    """The organisation file ``quota recommend`` writes for ``teams``."""
    out = folder / f"{teams.stem}.yaml"
    quota = Path(sys.executable).with_name("quota")
    command = [str(quota), "recommend", str(teams), "--output", str(out)]
    subprocess.run(command, check=True, capture_output=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument(
        "--workloads", type=int, default=WORKLOADS, help="Generated weeks per organisation."
    )
    parser.add_argument(
        "--output", type=Path, default=ROOT / "quota_constructs/data/forecast-calibration.json"
    )
    args = parser.parse_args()
    weeks: dict[str, list[tuple[Prediction, ...]]] = {}
    described = []
    with tempfile.TemporaryDirectory() as folder:
        for name, teams, org, first in CASES:
            seeds = range(first, first + args.workloads)
            org_file = org or recommended(teams, Path(folder))
            weeks[name] = predictions(teams, org_file, seeds, args.samples)
            described.append(f"{name} seeds {seeds.start}-{seeds.stop - 1}")
    fitted_on = (
        f"default: generated {DAYS}-day weeks of {' and '.join(described)}, "
        f"{args.samples} samples (tools/default_calibration.py)"
    )
    groups = [week for found in weeks.values() for week in found]
    calibration, judged = fit_and_judge(groups, fitted_on=fitted_on)
    if isinstance(judged, str):
        raise SystemExit(f"cannot judge the default calibration: {judged}")
    calibration.save(args.output)
    print(f"wrote {args.output}: {calibration.describe()}")
    start = 0
    for name, found in weeks.items():
        print(f"{name}: {judged.of_periods(start, start + len(found)).describe()}")
        start += len(found)
    print(f"both: {judged.describe()}")


if __name__ == "__main__":
    main()
