"""Owns the simulator's input bounds: every workload value and run option, stated once.

A value outside its bound is one :class:`~quota_constructs.model.Problem` naming the field (a
CSV ``line N.column``, a profile's ``teams[i]...`` path, a flag), the value and the fix, so no
input can make ``quota simulate`` or ``quota recommend`` run for hours or fill the memory
(docs/input-limits.md, "Simulator inputs", gives the measured time and memory of the largest
accepted input).
"""

from __future__ import annotations

import math

from quota_constructs.model import MAX_INSTANCES_PER_TYPE, Problem

DAY_S = 86400.0
MAX_DAYS = 366
"""Most days of a generated workload (``--days``): a year."""
MAX_CSV_DAYS = 3653
"""Most days of a CSV's submit times: ten years (a public cluster trace spans several)."""
MAX_SUBMIT_S = MAX_CSV_DAYS * DAY_S
MAX_JOB_S = 28 * DAY_S
"""Longest job, and longest checkpoint interval: SageMaker's ``MaxRuntimeInSeconds`` limit
(2,419,200 s, 28 days)."""
MAX_JOB_MINUTES = MAX_JOB_S / 60
MAX_WAIT_TARGET_MINUTES = MAX_DAYS * DAY_S / 60
MAX_WORKLOAD_JOBS = 100_000
"""Most jobs of a workload held in memory: a generated one (expected count), and a CSV file
that is plotted, priced or saved; a bigger file is streamed (and sorted in runs of this many)."""
MAX_STREAM_JOBS = 10_000_000
"""Most jobs of a CSV file streamed through ``quota simulate``: about ten minutes of CPU at the
measured 20,000 jobs a second, and about 1 GB (docs/figures.md)."""
MAX_STREAM_FILE_BYTES = 2 * 1024**3
"""Largest streamed CSV file: 2 GiB (10 million rows of about 100 bytes, twice over)."""
MAX_PROBLEMS_SHOWN = 100
"""Most bad rows a streamed file's error lists (then how many more there are)."""
MAX_SEED = 2**63 - 1
MAX_INTENSITY = 1000.0
MAX_DELAY_S = DAY_S
"""Longest ``--startup-s`` and ``--preemption-s``."""
MAX_STARTUP_MINUTES = MAX_DELAY_S / 60
"""Longest ``startup_minutes`` of a team profile (the same day as ``--startup-s``)."""
MAX_SEARCH_WORKLOADS = 104
"""Most seeded weeks one ``quota recommend`` or ``quota simulate --generate`` judges on
(``--weeks``): two years."""
MAX_SEARCH_CANDIDATES = 1000
"""Most configurations ``--optimize`` simulates (``--max-candidates``)."""
MAX_SCHEDULE_CHARS = 100
MAX_PROFILE_DESCRIPTION_CHARS = 4096


def job_problems(
    submit_time_s: float,
    instance_count: int,
    duration_s: float,
    checkpoint_interval_s: float | None,
    where: str,
) -> list[Problem]:
    """The bounds of one workload job (a CSV row at ``where``, e.g. ``line 3``)."""
    problems = []
    if submit_time_s > MAX_SUBMIT_S:
        problems.append(
            Problem(
                f"{where}.submit_time_s",
                submit_time_s,
                f"must be at most {MAX_SUBMIT_S:.0f} seconds ({MAX_CSV_DAYS} days)",
                "submit the jobs within ten years of time 0",
            )
        )
    problems += _at_most(duration_s, f"{where}.duration_s", MAX_JOB_S, "seconds (28 days)")
    if checkpoint_interval_s is not None:
        path = f"{where}.checkpoint_interval_s"
        problems += _at_most(checkpoint_interval_s, path, MAX_JOB_S, "seconds (28 days)")
    if instance_count > MAX_INSTANCES_PER_TYPE:
        path = f"{where}.instance_count"
        problems += _at_most(instance_count, path, MAX_INSTANCES_PER_TYPE, "instances")
    return problems


def _at_most(value: float, path: str, high: float, unit: str) -> list[Problem]:
    if value <= high:
        return []
    return [Problem(path, value, f"must be at most {high:.0f} {unit}", f"lower it to {high:.0f}")]


def workload_size_problems(count: float, where: str, *, expected: bool = False) -> list[Problem]:
    """At most :data:`MAX_WORKLOAD_JOBS` jobs (``expected``: the generator's mean count)."""
    if count <= MAX_WORKLOAD_JOBS:
        return []
    if expected:
        what = "the generated workload would have about this many jobs"
        fix = "use fewer --days, a lower --intensity or fewer scheduled runs a day"
    else:
        what, fix = "the workload has this many jobs", "split it into several files"
    return [Problem(where, round(count), f"{what}; at most {MAX_WORKLOAD_JOBS}", fix)]


def stream_size_problems(count: int, where: str) -> list[Problem]:
    """At most :data:`MAX_STREAM_JOBS` jobs in a streamed CSV file."""
    if count <= MAX_STREAM_JOBS:
        return []
    return [
        Problem(
            where,
            count,
            f"the workload has this many jobs; at most {MAX_STREAM_JOBS}",
            "split it into several files (e.g. by year)",
        )
    ]


def run_problems(*, days: int, seed: int, startup_s: float, preemption_s: float) -> list[Problem]:
    """The bounds of a simulation run's options, named by their flags."""
    problems = []
    if not 1 <= days <= MAX_DAYS:
        problems.append(
            Problem("--days", days, f"must be from 1 to {MAX_DAYS}", "use e.g. --days 7 (a week)")
        )
    if not 0 <= seed <= MAX_SEED:
        problems.append(
            Problem("--seed", seed, f"must be from 0 to {MAX_SEED} (2^63 - 1)", "use e.g. 0")
        )
    for flag, value in (("--startup-s", startup_s), ("--preemption-s", preemption_s)):
        if not (math.isfinite(value) and 0 <= value <= MAX_DELAY_S):
            problems.append(
                Problem(
                    flag,
                    value,
                    f"must be a number of seconds from 0 to {MAX_DELAY_S:.0f} (a day)",
                    f"set {flag} between 0 and {MAX_DELAY_S:.0f}",
                )
            )
    return problems


def plan_stop_problems(seconds: float) -> list[Problem]:
    """``--plan-stop-before-end-s``: seconds from 0 to a day (every command that takes it)."""
    if math.isfinite(seconds) and 0 <= seconds <= MAX_DELAY_S:
        return []
    return [
        Problem(
            "--plan-stop-before-end-s",
            seconds,
            f"must be a number of seconds from 0 to {MAX_DELAY_S:.0f} (a day)",
            "use 1800 (AWS's 30 minutes) or 0 to let plan jobs run to the end",
        )
    ]
