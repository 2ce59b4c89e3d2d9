"""Workload CSV files read as a stream: one row at a time, in bounded memory.

:func:`scan_workload_csv` checks a whole file in one pass (every row as
:func:`~quota_constructs.advisor.workload.parse_workload_csv` checks it, the first
:data:`~quota_constructs.advisor.limits.MAX_PROBLEMS_SHOWN` bad rows listed by line) and
returns what a streamed run needs before it starts: the job count, the window, whether the rows
are in submit-time order and the share names; :func:`iter_workload_csv` then yields the jobs
one at a time, as often as a run needs them (a simulation and its all-RESERVE baseline each
read the file once). Nothing holds more than one row.
"""

from __future__ import annotations

import csv
import heapq
import itertools
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from operator import attrgetter
from pathlib import Path
from typing import BinaryIO, NoReturn

from quota_constructs.advisor.limits import (
    MAX_PROBLEMS_SHOWN,
    MAX_STREAM_FILE_BYTES,
    MAX_WORKLOAD_JOBS,
    stream_size_problems,
)
from quota_constructs.advisor.workload import (
    JobFields,
    WorkloadError,
    WorkloadJob,
    header_problems,
    plain_reader,
    row_job,
)
from quota_constructs.model import Problem

_ENCODING_FIX = "save the file as UTF-8 (without a byte-order mark)"
SHARE_LINES_KEPT = 5
"""Lines kept per share name (an unknown share's error names its first lines)."""


@dataclass
class WorkloadScan:
    """What one checking pass over a workload file found (no job is kept)."""

    source: str
    jobs: int = 0
    window_s: float = 0.0
    """The latest submit + duration: the default measurement window."""
    in_order: bool = True
    """Every row's submit time is at least the one before (a stream needs no sorting)."""
    shares: dict[str, tuple[int, list[int]]] = field(default_factory=dict)
    """Share name -> (jobs, first :data:`SHARE_LINES_KEPT` lines)."""

    def add(self, line: int, fields: JobFields, last_submit_s: float) -> None:
        """Count the job of ``line``; ``last_submit_s``: the submit time of the row before."""
        submit_s, share, _, _, duration_s, _, _ = fields
        self.jobs += 1
        end_s = submit_s + duration_s
        if end_s > self.window_s:
            self.window_s = end_s
        if submit_s < last_submit_s:
            self.in_order = False
        seen = self.shares.get(share)
        if seen is None:
            self.shares[share] = (1, [line])
            return
        lines = seen[1]
        if len(lines) < SHARE_LINES_KEPT:
            lines.append(line)
        self.shares[share] = (seen[0] + 1, lines)


class _Lines:
    """A file's lines as text (split at ``\\n`` only, as the whole-file reader splits them),
    counted; a byte that is not UTF-8, a NUL byte or a byte-order mark is a
    :class:`WorkloadError` naming its line."""

    def __init__(self, handle: Iterator[bytes], source: str) -> None:
        self._handle = handle
        self.source = source
        self.line = 0

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        raw = next(self._handle)
        self.line += 1
        if self.line == 1 and raw.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
            self._fail(raw, 0, "a byte-order mark")
        if b"\x00" in raw:
            self._fail(raw, raw.index(b"\x00"), "a NUL byte (UTF-16, UTF-32 or binary?)")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._fail(raw, exc.start, f"byte 0x{raw[exc.start]:02x}, which is not valid UTF-8")

    def _fail(self, raw: bytes, offset: int, what: str) -> NoReturn:
        problem = Problem(
            f"line {self.line}, column {offset + 1}",
            None,
            f"the file has {what}",
            _ENCODING_FIX,
        )
        raise WorkloadError([problem], context=self.source)


def _open(path: str | Path) -> BinaryIO:
    """The lines of a regular file of at most :data:`MAX_STREAM_FILE_BYTES`, as bytes."""
    source = str(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise WorkloadError(
                [Problem("<file>", source, "not a regular file", "pass a regular file")],
                context=source,
            )
        if info.st_size > MAX_STREAM_FILE_BYTES:
            raise WorkloadError(
                [
                    Problem(
                        "<file>",
                        f"{info.st_size} bytes",
                        f"the file is larger than the limit of {MAX_STREAM_FILE_BYTES} bytes",
                        "split it into several files (e.g. by year)",
                    )
                ],
                context=source,
            )
        return open(path, "rb")
    except OSError as exc:
        problem = Problem("<file>", source, f"cannot read the file: {exc.strerror or exc}", "")
        raise WorkloadError([problem], context=source) from None


def csv_rows(path: str | Path, problems: list[Problem]) -> Iterator[tuple[int, JobFields]]:
    """The line and fields of every valid job of the file at ``path``, in file order, one at a
    time; each bad row's problems are appended to ``problems`` (a header problem ends them at
    once). A plain line is read by :func:`plain_reader`, any other row by the csv module and
    checked in full (:func:`row_job`), as the whole-file reader reads them."""
    source = str(path)
    with _open(path) as handle:
        lines = _Lines(iter(handle), source)
        header_row = next(csv.reader(lines, skipinitialspace=True), [])
        header = [h.strip() for h in header_row]
        found = header_problems(header)
        if found:
            problems += found
            return
        plain = plain_reader(header) if lines.line == 1 else None
        valid: set[tuple[str, str, int]] = set()
        for text in lines:
            line = lines.line
            body = text[:-1] if text.endswith("\n") else text
            fields = plain(body, valid) if plain is not None else None
            if fields is not None:
                yield line, fields
                continue
            if body in ("", "\r"):
                continue  # a blank line, skipped as csv skips it
            full = _full_row(text, lines, header, valid, problems)
            if full is False:
                return
            if isinstance(full, WorkloadJob):
                yield lines.line, _fields(full)


def _fields(job: WorkloadJob) -> JobFields:
    return (
        job.submit_time_s,
        job.share,
        job.instance_type,
        job.instance_count,
        job.duration_s,
        job.priority,
        job.checkpoint_interval_s,
    )


def _full_row(
    text: str,
    lines: _Lines,
    header: list[str],
    valid: set[tuple[str, str, int]],
    problems: list[Problem],
) -> WorkloadJob | bool | None:
    """The row starting with ``text`` read by the csv module (a quoted value may take more
    lines) and checked in full; ``False`` when the csv module cannot read it (the file's
    last problem, as in the whole-file reader)."""
    reader = csv.reader(itertools.chain([text], lines), skipinitialspace=True)
    first = lines.line
    try:
        values = next(reader, [])
    except csv.Error as error:
        problems.append(
            Problem(
                f"line {first}",
                str(error),
                "not valid CSV",
                "quote values that hold a line break or a carriage return",
            )
        )
        return False
    if not values:
        return None
    return row_job(values, header, lines.line, valid, problems)


class _FirstProblems(list[Problem]):
    """The first :data:`MAX_PROBLEMS_SHOWN` problems appended; the others only counted."""

    def __init__(self) -> None:
        super().__init__()
        self.more = 0

    def append(self, problem: Problem) -> None:
        if len(self) < MAX_PROBLEMS_SHOWN:
            super().append(problem)
        else:
            self.more += 1

    def __iadd__(self, problems: Iterable[Problem]) -> _FirstProblems:  # type: ignore[override, misc]
        for problem in problems:
            self.append(problem)
        return self

    def append_shown(self, problem: Problem) -> None:
        super().append(problem)


CHECKED_EVERY = 1 << 18
"""Rows between two calls of :func:`scan_workload_csv`'s ``checked``."""


def scan_workload_csv(
    path: str | Path, checked: Callable[[int], None] | None = None
) -> WorkloadScan:
    """Check every row of the file at ``path`` in one pass, keeping no job.

    :class:`WorkloadError` lists the first :data:`MAX_PROBLEMS_SHOWN` problems (then how many
    more bad rows there are), or says the file has no jobs or more than
    :data:`~quota_constructs.advisor.limits.MAX_STREAM_JOBS`. ``checked``: called with the
    jobs read so far every :data:`CHECKED_EVERY` of them (progress)."""
    problems = _FirstProblems()
    scan = WorkloadScan(str(path))
    last = 0.0
    for line, fields in csv_rows(path, problems):
        scan.add(line, fields, last)
        last = fields[0]
        if checked is not None and not scan.jobs % CHECKED_EVERY:
            checked(scan.jobs)
    if not scan.jobs and not problems:
        problems.append(Problem("<file>", str(path), "the workload has no jobs", "add rows"))
    problems += stream_size_problems(scan.jobs, "<file>")
    if problems.more:
        problems.append_shown(
            Problem("<file>", problems.more, "more problems not shown", "fix the rows above first")
        )
    if problems:
        raise WorkloadError(problems, context=str(path))
    return scan


def iter_workload_csv(path: str | Path) -> Iterator[WorkloadJob]:
    """The jobs of a file :func:`scan_workload_csv` accepted, in file order, one at a time
    (a problem found now, the file having changed, is a :class:`WorkloadError`)."""
    problems: list[Problem] = []
    for line, fields in csv_rows(path, problems):
        if problems:
            break
        yield WorkloadJob(*fields, line=line)
    if problems:
        raise WorkloadError(problems[:MAX_PROBLEMS_SHOWN], context=str(path))


SORT_RUN_JOBS = MAX_WORKLOAD_JOBS
"""Jobs sorted in memory at a time when a streamed file is not in submit-time order."""
_ORDER = attrgetter("submit_time_s", "line")
"""Submit time, then file order (a stable sort's order)."""


@dataclass(frozen=True)
class StreamedWorkload:
    """A checked workload file too big to hold in memory, read again for each run."""

    path: Path
    scan: WorkloadScan
    runs: tuple[Path, ...] = ()
    """A file out of submit-time order: its jobs in sorted runs (temporary files), merged."""
    directory: tempfile.TemporaryDirectory[str] | None = field(default=None, compare=False)
    """Where the runs are (removed with this object, or at exit)."""

    def jobs(self) -> Iterator[WorkloadJob]:
        """Its jobs, in submit-time order (file order for equal times), one at a time."""
        if not self.runs:
            return iter_workload_csv(self.path)
        return heapq.merge(*(_read_run(run) for run in self.runs), key=_ORDER)


def _sorted_runs(path: str | Path) -> StreamedWorkload:
    """The jobs of the file at ``path`` sorted in runs of :data:`SORT_RUN_JOBS`, each written
    to a temporary file (about the size of the file in all), for :meth:`StreamedWorkload.jobs`
    to merge: an external sort, in bounded memory."""
    directory = tempfile.TemporaryDirectory(prefix="quota-workload-")
    runs: list[Path] = []
    jobs = iter_workload_csv(path)
    while chunk := list(itertools.islice(jobs, SORT_RUN_JOBS)):
        chunk.sort(key=_ORDER)
        run = Path(directory.name) / f"run-{len(runs)}.tsv"
        with run.open("w", encoding="utf-8") as out:
            out.writelines(map(_run_line, chunk))
        runs.append(run)
    return StreamedWorkload(Path(path), WorkloadScan(str(path)), tuple(runs), directory)


def _run_line(job: WorkloadJob) -> str:
    """One job of a sorted run: every field exactly (``repr`` of each float), tab-separated
    (names hold no tab)."""
    interval = "" if job.checkpoint_interval_s is None else repr(job.checkpoint_interval_s)
    return (
        f"{job.submit_time_s!r}\t{job.share}\t{job.instance_type}\t{job.instance_count}\t"
        f"{job.duration_s!r}\t{job.priority}\t{interval}\t{job.line}\n"
    )


def _read_run(run: Path) -> Iterator[WorkloadJob]:
    with run.open(encoding="utf-8") as lines:
        for text in lines:
            submit, share, itype, count, duration, priority, interval, line = text.split("\t")
            yield WorkloadJob(
                float(submit),
                share,
                itype,
                int(count),
                float(duration),
                int(priority),
                float(interval) if interval else None,
                line=int(line),
            )


def read_workload_file(
    path: str | Path, checked: Callable[[int], None] | None = None
) -> list[WorkloadJob] | StreamedWorkload:
    """The workload of the CSV file at ``path``, checked in one streamed pass: its jobs sorted
    by submit time (as :func:`~quota_constructs.advisor.workload.load_workload_csv` reads
    them) when it has at most :data:`MAX_WORKLOAD_JOBS`, else a :class:`StreamedWorkload`
    (sorted in runs on disk first when its rows are not in submit-time order).
    ``checked``: progress of the checking pass (:func:`scan_workload_csv`)."""
    scan = scan_workload_csv(path, checked)
    if scan.jobs <= MAX_WORKLOAD_JOBS:
        return sorted(iter_workload_csv(path), key=attrgetter("submit_time_s"))
    if not scan.in_order:
        return replace(_sorted_runs(path), scan=scan)
    return StreamedWorkload(Path(path), scan)
