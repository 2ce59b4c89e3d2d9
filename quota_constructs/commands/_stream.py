"""``quota simulate --workload`` of a file too big for memory: the streamed run and its progress.

A file of more than :data:`~quota_constructs.advisor.limits.MAX_WORKLOAD_JOBS` jobs is read as
a stream (:mod:`quota_constructs.advisor.workload_stream`) and simulated by
:func:`~quota_constructs.advisor.simulate.simulate_stream`: the same table and JSON as a run
in memory; ``--plot``, ``--prices`` and ``--save-workload`` need the jobs in memory and are
refused for it, naming the flag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

import typer
from rich.console import Console

from quota_constructs.advisor.limits import MAX_WORKLOAD_JOBS
from quota_constructs.advisor.simulate import (
    SimulationOptions,
    SimulationResult,
    check_share_names,
    simulate_stream,
)
from quota_constructs.advisor.workload import DAY_S
from quota_constructs.advisor.workload_stream import StreamedWorkload
from quota_constructs.commands._reports import results_json, results_table
from quota_constructs.model import Organisation, Problem, QuotaConfigError


def check_streamable(workload: StreamedWorkload, flags: Mapping[str, object]) -> None:
    """Refuse each given flag of ``flags`` (name -> value, ``None`` when not given) that needs
    the jobs in memory, naming it, before anything is simulated."""
    problems = [
        Problem(
            flag,
            str(value),
            f"needs the jobs in memory, at most {MAX_WORKLOAD_JOBS}; the workload has "
            f"{workload.scan.jobs}, so it is streamed",
            "leave it out (the simulation itself streams the file), or split the file",
        )
        for flag, value in flags.items()
        if value is not None
    ]
    if problems:
        raise QuotaConfigError(problems, context=workload.scan.source)


class StreamProgress:
    """Progress of a big workload on stderr: rows checked, then jobs read of the file's and
    simulated days.

    On a terminal one line rewritten in place; otherwise (``--progress`` with stderr
    redirected) a line each 262,144 rows checked and each tenth of the jobs simulated."""

    def __init__(self, out: TextIO, *, terminal: bool) -> None:
        self.out, self.terminal = out, terminal
        self.total = 0
        self.days: dict[str, float] = {}
        self._tenth = 0

    def checked(self, rows: int) -> None:
        text = f"{rows:,} rows checked"
        self.out.write(f"\r{text}" if self.terminal else f"{text}\n")
        self.out.flush()

    def simulated(self, organisation: str, now_s: float) -> None:
        self.days[organisation] = now_s / DAY_S

    def read(self, done: int) -> None:
        days = min(self.days.values(), default=0.0)
        text = f"{done:,}/{self.total:,} jobs read, {days:,.0f} simulated days"
        if self.terminal:
            self.out.write(f"\r{text}")
        elif done * 10 // self.total > self._tenth or done == self.total:
            self._tenth = done * 10 // self.total
            self.out.write(f"{text}\n")
        self.out.flush()

    def clear(self) -> None:
        if self.terminal:
            self.out.write("\r\033[K")
            self.out.flush()


def simulate_streamed(
    orgs: Sequence[Organisation],
    labels: Sequence[str],
    workload: StreamedWorkload,
    options: SimulationOptions,
    *,
    progress: StreamProgress | None,
    as_json: bool,
    console: Console,
    print_stuck: Callable[[list[SimulationResult], Console], None],
) -> None:
    """Run ``orgs`` on the streamed ``workload`` and print the results (JSON or table)."""
    for org in orgs:
        check_share_names(
            org,
            {
                share: (count, [f"line {line}" for line in lines])
                for share, (count, lines) in workload.scan.shares.items()
            },
        )
    if progress is not None:
        progress.total = workload.scan.jobs
    results = simulate_stream(
        orgs,
        workload.jobs(),
        window_s=workload.scan.window_s,
        options=options,
        progress=None if progress is None else progress.simulated,
        read=None if progress is None else progress.read,
    )
    if progress is not None:
        progress.clear()
    if as_json:
        typer.echo(results_json(results, labels))
        return
    console.print(f"{workload.scan.jobs} jobs (streamed from {Path(workload.path)})")
    console.print(results_table(results, labels))
    print_stuck(results, console)
