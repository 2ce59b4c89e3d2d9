"""A team's training-job names and log streams: the prefix that keeps teams' logs apart.

SageMaker writes a training job's logs, with the job's execution role, to streams named
``<training job name>/algo-<n>-<epoch>`` in ``/aws/sagemaker/TrainingJobs``, and AWS Batch names
the training job of each attempt ``AWSBatch<TrainingJobName><32 hex attempt id>`` (AWS's
examples; docs/aws-semantics.md). A team whose every ``TrainingJobName`` starts with its own
prefix therefore writes only streams matching ``AWSBatch<prefix>*``, and its execution role
needs no other stream (docs/security.md, "Training logs and metrics").

The prefix is a fixed-length token of the team tag's value (``<organisation>/<share>``, unique
in an account) and ``-``: of two different tokens of the same length neither starts with the
other, so no team's pattern matches another team's streams, whatever their share names
(``a`` and ``a-b``, characters a training job name cannot hold, 128-character names).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

from quota_constructs.model.problems import Problem

TRAINING_LOGS_TEAM_PREFIXED = "team-prefixed"
"""``access.training_logs`` default: the execution role writes only its team's streams."""
TRAINING_LOGS_SHARED = "shared"
"""``access.training_logs: shared``: every stream of the group (if AWS names jobs otherwise)."""
TRAINING_LOGS_MODES = (TRAINING_LOGS_TEAM_PREFIXED, TRAINING_LOGS_SHARED)

TRAINING_JOB_NAME_MAX = 63
"""SageMaker ``CreateTrainingJob.TrainingJobName``: 1 to 63 characters."""
TRAINING_JOB_NAME_BODY = r"[a-zA-Z0-9](?:-*[a-zA-Z0-9]){0,62}"
"""SageMaker's pattern of a training job name (letters, digits, hyphens inside)."""
BATCH_TRAINING_JOB_PREFIX = "AWSBatch"
"""What AWS Batch puts before the ``TrainingJobName`` of the training job it creates."""
BATCH_ATTEMPT_ID_LENGTH = 32
"""The hexadecimal attempt id AWS Batch puts after it."""
BATCH_NAME_ROOM = TRAINING_JOB_NAME_MAX - len(BATCH_TRAINING_JOB_PREFIX) - BATCH_ATTEMPT_ID_LENGTH
"""23: the characters of a ``TrainingJobName`` that Batch's training job name keeps in full
when a longer name is cut to 63 (UNCONFIRMED how Batch shortens; the emulator cuts the end)."""
TRAINING_JOB_TOKEN_LENGTH = 8
"""Base32 characters (40 bits of SHA-256) of the team token."""
TRAINING_JOB_PREFIX_LENGTH = TRAINING_JOB_TOKEN_LENGTH + 1
"""The token and ``-``: 9 characters, within :data:`BATCH_NAME_ROOM`."""

_TRAINING_JOB_NAME = re.compile(TRAINING_JOB_NAME_BODY)


def training_job_prefix(team: str) -> str:
    """The ``TrainingJobName`` prefix of team ``team`` (the team tag's value): 8 lowercase
    base32 characters of its SHA-256 and ``-``, e.g. ``research/generative`` -> ``...-``."""
    digest = base64.b32encode(hashlib.sha256(team.encode()).digest()).decode().lower()
    return digest[:TRAINING_JOB_TOKEN_LENGTH] + "-"


def prefixed_training_job_name(name: str, prefix: str) -> str:
    """``name`` with ``prefix`` in front (unchanged if it starts with it already)."""
    return name if name.startswith(prefix) else prefix + name


def training_log_stream_pattern(prefix: str) -> str:
    """The log-stream names of a team's Batch training jobs: ``AWSBatch<prefix>*``."""
    return f"{BATCH_TRAINING_JOB_PREFIX}{prefix}*"


def training_logs_problems(value: object, path: str) -> list[Problem]:
    """A problem if ``value`` is not one of :data:`TRAINING_LOGS_MODES`."""
    if value in TRAINING_LOGS_MODES:
        return []
    return [
        Problem(
            path,
            value,
            f"training_logs is {' or '.join(TRAINING_LOGS_MODES)}",
            f"write {TRAINING_LOGS_TEAM_PREFIXED} (the default: the team's execution role "
            f"writes only its own jobs' log streams) or {TRAINING_LOGS_SHARED} (every stream "
            "of /aws/sagemaker/TrainingJobs, see docs/security.md)",
        )
    ]


def training_job_name_problems(name: str, prefix: str, path: str) -> list[Problem]:
    """Why ``name`` (a ``TrainingJobName`` already prefixed with ``prefix``) is not one
    SageMaker accepts: longer than 63 characters, or not letters, digits and inner hyphens."""
    if len(name) > TRAINING_JOB_NAME_MAX:
        room = TRAINING_JOB_NAME_MAX - len(prefix)
        return [
            Problem(
                path,
                name,
                f"with the team's prefix {prefix!r} the training job name has {len(name)} "
                f"characters; SageMaker allows {TRAINING_JOB_NAME_MAX}",
                f"shorten the name after the prefix to at most {room} characters",
            )
        ]
    if not _TRAINING_JOB_NAME.fullmatch(name):
        return [
            Problem(
                path,
                name,
                "a training job name is letters, digits and hyphens, starting and ending with a "
                "letter or digit",
                "replace other characters (such as '_' or '.') with '-'",
            )
        ]
    return []


def training_prefix_problems(teams: Iterable[tuple[str, str]]) -> list[Problem]:
    """Teams whose prefixes are equal (40-bit tokens: about one pair in 10^12 teams).

    ``teams``: ``(field path, team tag value)`` in file order, across every organisation of
    the account that can be checked together.
    """
    seen: dict[str, tuple[str, str]] = {}
    problems: list[Problem] = []
    for path, team in teams:
        prefix = training_job_prefix(team)
        if prefix in seen and seen[prefix][1] != team:
            problems.append(
                Problem(
                    path,
                    team,
                    f"its training job prefix {prefix!r} is the same as that of "
                    f"{seen[prefix][1]} ({seen[prefix][0]}): each could write the other's logs",
                    "rename this share (or its organisation)",
                )
            )
        seen.setdefault(prefix, (path, team))
    return problems
