"""Write a big workload CSV and its organisation file, to replay through ``quota simulate``.

Run: ``.venv/bin/python tools/gen_big_workload.py OUT_DIR [--jobs 1000000] [--days 364]``.

The organisation is a 20-team one: the research profiles (``stacks/teams/research.yaml``:
hourly, experimental, weekend ad-hoc) repeated under new names, and ``quota recommend``'s
organisation for them (``OUT_DIR/org.yaml``, sized on the first period). The jobs
(``OUT_DIR/workload.csv``, in submit-time order, so ``quota simulate`` streams it) are
generated in periods of 28 days (14 or 7 when 28 days would hold more than the generator's
100,000 jobs; day 0 of each is a Monday), one seed each, at the intensity that gives about
``--jobs`` jobs over ``--days`` (a multiple of 28), as ``benchmarks/bench_year.py`` builds its
year (the same jobs for its million). Each period is written before the next is drawn, so the
tool holds one period at a time. The data is not committed: a million jobs are about 60 MB.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PERIOD_DAYS = 28
sys.path.insert(0, str(ROOT / "benchmarks"))  # bench_year: the 20 teams and their periods


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="directory for org.yaml and workload.csv")
    parser.add_argument("--jobs", type=int, default=1_000_000, help="about this many jobs")
    parser.add_argument("--days", type=int, default=364, help="days (a multiple of 28)")
    args = parser.parse_args()
    if args.days % PERIOD_DAYS or args.days <= 0:
        sys.exit(f"--days must be a positive multiple of {PERIOD_DAYS}")
    from bench_year import year_periods, year_teams

    from quota_constructs.advisor.limits import MAX_WORKLOAD_JOBS
    from quota_constructs.advisor.recommend import recommend
    from quota_constructs.advisor.workload import GeneratorOptions, generate_workload, workload_csv

    teams = year_teams()
    per_unit = len(generate_workload(teams, days=PERIOD_DAYS, seed=0))
    options = GeneratorOptions(intensity=args.jobs / (per_unit * (args.days // PERIOD_DAYS)))
    period_days = PERIOD_DAYS  # a generator call: at most 100,000 jobs (limits.py)
    while per_unit * options.intensity * period_days / PERIOD_DAYS > MAX_WORKLOAD_JOBS:
        period_days //= 2
    args.out.mkdir(parents=True, exist_ok=True)
    advice = recommend(teams, options=options, days=period_days)
    (args.out / "org.yaml").write_text(advice.to_yaml(), encoding="utf-8")
    periods = args.days // period_days
    written = 0
    with (args.out / "workload.csv").open("w", encoding="utf-8") as out:
        for period, jobs in enumerate(year_periods(teams, options, period_days, periods)):
            text = workload_csv(jobs)
            out.write(text if period == 0 else text.split("\n", 1)[1])
            written += len(jobs)
    print(f"{written} jobs over {args.days} days in {args.out / 'workload.csv'}")


if __name__ == "__main__":
    main()
