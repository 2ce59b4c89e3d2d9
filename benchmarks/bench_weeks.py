"""CPU time of the advisor's commands as users run them, with their default weeks (issue 39).

Run: ``.venv/bin/python benchmarks/bench_weeks.py [--rounds 3] [--against ../main]``

Two commands, each a child process timed by its CPU seconds (user + system of it and of every
process it waited for, the search's workers included: ``getrusage(RUSAGE_CHILDREN)``):

* ``quota recommend stacks/teams/research.yaml --optimize`` (budget: 30 CPU s);
* ``quota recommend TWENTY.yaml --simulate``, a 20-team organisation written here: the research
  teams repeated under new names (``recommendation-0``, ``generative-1``, ``data-analysis-2``,
  ...; as ``bench_year.py`` builds its year), access blocks dropped (budget: 60 CPU s).

``--against CHECKOUT`` runs each command with another checkout's code too (its
``quota_constructs``, its own compiled build), the two back to back in each round so that both
see the same load, and prints both. Each figure is the median of ``--rounds``.
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
RESEARCH = ROOT / "stacks" / "teams" / "research.yaml"
TEAMS = 20
BUDGETS = {"research --optimize": 30.0, "20 teams --simulate": 60.0}


class _Plain(yaml.SafeDumper):
    def ignore_aliases(self, data: object) -> bool:
        return True


def write_twenty(folder: Path) -> Path:
    """The 20-team profile file (the research teams repeated)."""
    research = yaml.safe_load(RESEARCH.read_text(encoding="utf-8"))
    teams = []
    for i in range(TEAMS):
        team = copy.deepcopy(research["teams"][i % len(research["teams"])])
        team["name"] = f"{team['name']}-{i}"
        team.pop("access", None)
        teams.append(team)
    path = folder / "twenty.yaml"
    data = {**research, "organisation": "twenty", "teams": teams}
    path.write_text(yaml.dump(data, Dumper=_Plain, sort_keys=False), encoding="utf-8")
    return path


def cpu_s(args: list[str], checkout: Path) -> float:
    """CPU seconds of ``quota ARGS`` with ``checkout``'s code, its children included."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    command = [sys.executable, "-m", "quota_constructs.commands", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, capture_output=True, check=False, cwd=checkout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        twenty = write_twenty(Path(tmp))
        runs = {
            "research --optimize": ["recommend", str(RESEARCH), "--optimize"],
            "20 teams --simulate": ["recommend", str(twenty), "--simulate"],
        }
        checkouts = {"this": ROOT, **({"other": args.against.resolve()} if args.against else {})}
        for name, command in runs.items():
            figures: dict[str, list[float]] = {label: [] for label in checkouts}
            for _ in range(args.rounds):
                for label, checkout in checkouts.items():
                    figures[label].append(cpu_s(command, checkout))
            medians = {label: statistics.median(v) for label, v in figures.items()}
            shown = ", ".join(f"{label} {m:.2f} CPU s" for label, m in medians.items())
            print(f"{name}: {shown} (median of {args.rounds}; budget {BUDGETS[name]:g})")


if __name__ == "__main__":
    main()
