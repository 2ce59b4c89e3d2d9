"""How many seeded weeks make a verdict stable: the check behind ``DEFAULT_WEEKS``.

Run: ``.venv/bin/python benchmarks/verdict_stability.py [--blocks 8] [--weeks 4 6 8 10 12 16]``

For each team-profile file (default: every file of ``stacks/teams/``), the rule-based
recommendation is simulated once on each of ``max(weeks) x blocks`` seeded weeks (seeds 0, 1,
...; 7 days, the defaults of ``quota recommend``). Then, for each number of weeks N, the seeds
are cut into ``blocks`` disjoint blocks of N weeks (seeds 0..N-1, N..2N-1, ...), every target is
judged on each block as ``quota recommend`` judges it (:func:`advisor.targets.check_targets`),
and the script counts the targets whose status is not the same in every block: a stable
default has none, or the fewest. It prints one row per N: the targets judged, the unstable ones
(named), and the share of blocks agreeing with the most common status.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from quota_constructs.advisor.profiles import load_teams
from quota_constructs.advisor.recommend import recommend
from quota_constructs.advisor.simulate import SimulationOptions
from quota_constructs.advisor.targets import check_targets, weekly_figures
from quota_constructs.advisor.weeks import simulate_weeks, week_workloads
from quota_constructs.advisor.workload import DAY_S, GeneratorOptions, startup_phase_s

TEAMS = Path(__file__).resolve().parent.parent / "stacks" / "teams"


def stability(path: Path, weeks: list[int], blocks: int, days: int) -> None:
    """Print the unstable verdicts of ``path``'s teams for each number of weeks."""
    teams = load_teams(path)
    generator = GeneratorOptions()
    seeds = range(max(weeks) * blocks)
    workloads = week_workloads(teams, days=days, seeds=seeds, options=generator)
    org = recommend(teams, options=generator, workloads=workloads[:1], days=days).organisation
    options = SimulationOptions(
        startup_s=startup_phase_s(teams, generator.startup_s), window_s=days * DAY_S
    )
    figures = weekly_figures(simulate_weeks(org, workloads, options))
    print(f"{path.name}: {len(workloads)} weeks simulated")
    for n in weeks:
        verdicts: dict[tuple[str, str], list[str]] = {}
        for block in range(blocks):
            checks = check_targets(teams, figures[block * n : (block + 1) * n], days=days)
            for check in checks:
                verdicts.setdefault((check.team, check.target), []).append(check.status)
        unstable = {k: Counter(v) for k, v in verdicts.items() if len(set(v)) > 1}
        agree = [max(Counter(v).values()) / blocks for v in verdicts.values()]
        names = "; ".join(
            f"{team} {target} {dict(count)}" for (team, target), count in unstable.items()
        )
        print(
            f"  {n:>3} weeks: {len(verdicts)} targets, {len(unstable)} unstable across "
            f"{blocks} blocks, lowest agreement {min(agree):.0%}" + (f": {names}" if names else "")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--weeks", type=int, nargs="+", default=[4, 6, 8, 10, 12, 16])
    parser.add_argument("--days", type=int, default=7)
    args = parser.parse_args()
    for path in args.files or sorted(TEAMS.glob("*.yaml")):
        stability(path, args.weeks, args.blocks, args.days)


if __name__ == "__main__":
    main()
