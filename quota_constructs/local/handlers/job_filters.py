"""Owns ListServiceJobs' filter rules: which jobs a ``filters`` / ``jobStatus`` pair selects.

The rules are the sentences of botocore's documentation of ``ListServiceJobsRequest``:

- "Only one filter can be used at a time."
- "If the filters parameter is specified, the jobStatus parameter is ignored and jobs with any
  status are returned. The exceptions are the SHARE_IDENTIFIER filter and QUOTA_SHARE_NAME
  filter, which can be used with jobStatus."
- "If you don't specify a status, only RUNNING jobs are returned."
- JOB_NAME: "a case-insensitive match for the job name. If the value ends with an asterisk (*),
  the filter matches any job name that begins with the string before the '*'." and "When the
  JOB_NAME filter is used, the results are grouped by the job name".
- BEFORE_CREATED_AT / AFTER_CREATED_AT: "a string representation of the number of
  milliseconds since 00:00:00 UTC (midnight) on January 1, 1970."
- "The results are sorted by the createdAt field, with the most recent jobs being first."
- "Filter names are case sensitive."

Choices where AWS is UNCONFIRMED: a filter needs at least one value; several values of
``JOB_NAME`` or ``QUOTA_SHARE_NAME`` match any of them; a time filter takes exactly one value;
JOB_NAME groups appear in the order of their names (so that the order, and with it every page's
position, does not change when a job is submitted between two pages).

The order is also the listing's pagination order (:meth:`JobFilter.order_key`): most recent
first, ties by submit order then job id, so that a ``nextToken`` names a position that jobs
submitted, finished or expired between two pages do not move.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from quota_constructs.local.handlers.job_view import is_quota_share
from quota_constructs.local.handlers.pagination import SortKey
from quota_constructs.local.state.errors import InvalidParameter
from quota_constructs.model import JobStatus
from quota_constructs.scheduling import Job

STATUS_FILTERS = ("QUOTA_SHARE_NAME", "SHARE_IDENTIFIER")
"""Filters that combine with ``jobStatus``; every other filter lists jobs of any status."""
TIME_FILTERS = ("BEFORE_CREATED_AT", "AFTER_CREATED_AT")
FILTER_NAMES = ("JOB_NAME", *TIME_FILTERS, *STATUS_FILTERS)


def name_matches(name: str, pattern: str) -> bool:
    """``JOB_NAME``: case-insensitive; a trailing ``*`` matches any name with that prefix."""
    if pattern.endswith("*"):
        return name.lower().startswith(pattern[:-1].lower())
    return name.lower() == pattern.lower()


def _epoch_ms(value: str, path: str) -> int:
    text = value.strip()
    if not text.isascii() or not text.isdigit():
        raise InvalidParameter(
            f"{path}: {value!r} is not a time; the value is the number of milliseconds since "
            "1970-01-01 00:00:00 UTC as a string, e.g. '1767225600000'"
        )
    return int(text)


@dataclass(frozen=True)
class JobFilter:
    """One ListServiceJobs selection: an optional filter and the status that applies."""

    name: str | None
    values: tuple[str, ...]
    status: str | None

    @classmethod
    def from_request(cls, filters: Sequence[Mapping[str, Any]], status: str | None) -> JobFilter:
        """Read ``filters`` and ``jobStatus``; :class:`InvalidParameter` names a bad field."""
        if len(filters) > 1:
            names = ", ".join(str(f.get("name")) for f in filters)
            raise InvalidParameter(
                f"filters: only one filter can be used at a time (got {len(filters)}: {names}); "
                "send one filter per ListServiceJobs call"
            )
        if not filters:
            return cls(None, (), status or JobStatus.RUNNING.value)
        name, values = filters[0].get("name"), tuple(filters[0].get("values") or ())
        if name not in FILTER_NAMES:
            raise InvalidParameter(
                f"filters[0].name: unknown filter {name!r} (names are case sensitive); use "
                + ", ".join(FILTER_NAMES)
            )
        if not values:
            raise InvalidParameter(f"filters[0].values: filter {name} needs a value")
        if name in TIME_FILTERS:
            if len(values) != 1:
                raise InvalidParameter(
                    f"filters[0].values: {name} takes exactly one time (got {len(values)})"
                )
            _epoch_ms(values[0], "filters[0].values[0]")
        if name in STATUS_FILTERS:
            return cls(name, values, status or JobStatus.RUNNING.value)
        return cls(name, values, None)

    def select(
        self, jobs: Iterable[Job], *, created_ms: Callable[[float], int | None]
    ) -> list[Job]:
        """The jobs this filter keeps in :meth:`order_key` order: most recent first (JOB_NAME:
        grouped by name, the groups in name order)."""
        kept = [job for job in jobs if self._keeps(job, created_ms(job.created_at) or 0)]
        return sorted(kept, key=self.order_key)

    @property
    def scope(self) -> str:
        """The listing's name in its ``nextToken`` (each order its own)."""
        return "ListServiceJobs:JOB_NAME" if self.name == "JOB_NAME" else "ListServiceJobs"

    def order_key(self, job: Job) -> SortKey:
        """The job's place in the listing: unique, and unchanged while the job exists."""
        newest_first = (-job.created_at, -job.seq, job.job_id)
        if self.name == "JOB_NAME":
            return (job.request.job_name, *newest_first)
        return newest_first

    @cached_property
    def _name_patterns(self) -> tuple[frozenset[str], tuple[str, ...]]:
        """JOB_NAME values as :func:`name_matches` reads them: exact names and prefixes, lower
        case, so that a job is matched against all values at once (not jobs x values calls)."""
        exact = frozenset(v.lower() for v in self.values if not v.endswith("*"))
        return exact, tuple(v[:-1].lower() for v in self.values if v.endswith("*"))

    def _keeps(self, job: Job, created: int) -> bool:
        if self.status is not None and job.status.value != self.status:
            return False
        if self.name == "JOB_NAME":
            exact, prefixes = self._name_patterns
            name = job.request.job_name.lower()
            return name in exact or name.startswith(prefixes)
        if self.name == "QUOTA_SHARE_NAME":  # a FIFO queue's jobs are in no quota share
            return is_quota_share(job.share_name) and job.share_name in self.values
        if self.name == "SHARE_IDENTIFIER":
            return False  # quota-share queues have no fair-share identifiers
        if self.name == "BEFORE_CREATED_AT":
            return created < _epoch_ms(self.values[0], "filters[0].values[0]")
        if self.name == "AFTER_CREATED_AT":
            return created > _epoch_ms(self.values[0], "filters[0].values[0]")
        return True
