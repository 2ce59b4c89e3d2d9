"""The team's training-job prefix: no team's log-stream pattern matches another team's streams.

Property-tested over every organisation and share name the model accepts (share names with
``_``, one a prefix of another, 128 characters) and every job name the runtime sends: the
stream of a job of team A (runtime prefix, Batch's ``AWSBatch<name><32 hex>`` as the emulator
forms it, cut included, then SageMaker's ``/algo-<n>-<epoch>``) matches A's pattern and never
B's. Patterns are matched as IAM matches resource ARNs (``*`` any run of characters).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quota_constructs.config import OrgFileError, load_organisation, load_organisations
from quota_constructs.contracts import team_tag_value
from quota_constructs.local.state.arns import training_job_name
from quota_constructs.model import (
    TRAINING_JOB_NAME_BODY,
    TRAINING_JOB_NAME_MAX,
    TRAINING_JOB_PREFIX_LENGTH,
    prefixed_training_job_name,
    training_job_name_problems,
    training_job_prefix,
    training_log_stream_pattern,
)

organisations = st.from_regex(r"\A[A-Za-z][A-Za-z0-9-]{0,63}\Z")
shares = st.from_regex(r"\A[A-Za-z0-9_-]{1,128}\Z")
teams = st.builds(team_tag_value, organisations, shares)
job_names = st.from_regex(rf"\A{TRAINING_JOB_NAME_BODY}\Z").filter(
    lambda n: len(n) <= TRAINING_JOB_NAME_MAX - TRAINING_JOB_PREFIX_LENGTH
)
attempts = st.from_regex(r"\A[0-9a-f]{32}\Z")

COLLISION = ("team-20314", "team-658264")
"""Two shares of organisation ``collide`` whose 40-bit tokens are equal (found by search)."""
ACROSS = ("east/team-626181", "west/team-1081195")
"""Two teams of organisations ``east`` and ``west`` whose tokens are equal (found by search)."""


def iam_matches(pattern: str, value: str) -> bool:
    """IAM's resource matching: ``*`` any characters, ``?`` one, everything else literal."""
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(body, value, flags=re.DOTALL) is not None


def stream(team: str, name: str, attempt: str) -> str:
    sent = prefixed_training_job_name(name, training_job_prefix(team))
    return f"{training_job_name(sent, attempt)}/algo-1-1764662400"


@given(teams)
def test_a_prefix_is_nine_characters_a_training_job_name_may_start_with(team: str) -> None:
    prefix = training_job_prefix(team)
    assert len(prefix) == TRAINING_JOB_PREFIX_LENGTH and prefix.endswith("-")
    assert re.fullmatch(r"[a-z2-7]{8}-", prefix)


@settings(max_examples=200)
@given(teams, teams, job_names, attempts)
def test_a_teams_streams_match_its_own_pattern_and_no_other_teams(
    mine: str, theirs: str, name: str, attempt: str
) -> None:
    written = stream(mine, name, attempt)
    assert iam_matches(training_log_stream_pattern(training_job_prefix(mine)), written)
    if theirs != mine:
        assert not iam_matches(training_log_stream_pattern(training_job_prefix(theirs)), written)


@settings(max_examples=200)
@given(teams, teams)
def test_no_prefix_starts_with_another_teams(mine: str, theirs: str) -> None:
    if mine != theirs:
        assert not training_job_prefix(theirs).startswith(training_job_prefix(mine))


@given(teams, job_names)
def test_prefixing_is_idempotent_and_always_fits(team: str, name: str) -> None:
    prefix = training_job_prefix(team)
    once = prefixed_training_job_name(name, prefix)
    assert prefixed_training_job_name(once, prefix) == once
    assert training_job_name_problems(once, prefix, "TrainingJobName") == []


def test_a_prefix_stays_whole_when_batch_cuts_a_long_name() -> None:
    prefix = training_job_prefix("research/generative")
    cut = training_job_name(prefix + "n" * 54, "0" * 32)
    assert len(cut) == TRAINING_JOB_NAME_MAX and cut.startswith(f"AWSBatch{prefix}")


def organisation_file(tmp_path: Path, organisation: str, *shares: str) -> Path:
    """An organisation file whose every share has team access."""
    text = "".join(
        f"  - name: {name}\n    capacity: {{ml.g5.xlarge: 1}}\n    strategy: LEND\n"
        "    access: {principals: ['111122223333']}\n"
        for name in shares
    )
    path = tmp_path / f"{organisation}.yaml"
    path.write_text(f"organisation: {organisation}\nshares:\n{text}", encoding="utf-8")
    return path


def test_rejects_an_organisation_whose_two_teams_have_the_same_prefix(tmp_path: Path) -> None:
    assert training_job_prefix(f"collide/{COLLISION[0]}") == training_job_prefix(
        f"collide/{COLLISION[1]}"
    )
    path = organisation_file(tmp_path, "collide", *COLLISION)

    with pytest.raises(OrgFileError) as caught:
        load_organisation(path)
    (problem,) = caught.value.problems
    assert problem.path == "shares[1].name" and problem.value == f"collide/{COLLISION[1]}"
    assert f"the same as that of collide/{COLLISION[0]} (shares[0].name)" in problem.message
    assert problem.fix == "rename this share (or its organisation)"


def test_rejects_an_unknown_training_logs_mode_naming_field_value_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "org.yaml"
    path.write_text(
        "organisation: research\nshares:\n  - name: generative\n"
        "    capacity: {ml.g5.xlarge: 1}\n    strategy: LEND\n"
        "    access: {principals: ['111122223333'], training_logs: public}\n",
        encoding="utf-8",
    )
    with pytest.raises(OrgFileError) as caught:
        load_organisation(path)
    (problem,) = caught.value.problems
    assert (problem.path, problem.value) == ("shares[0].access.training_logs", "public")
    assert problem.message == "training_logs is team-prefixed or shared"
    assert problem.fix.startswith("write team-prefixed (the default")
    assert "or shared (every stream" in problem.fix


def test_rejects_two_files_whose_teams_have_the_same_prefix(tmp_path: Path) -> None:
    assert training_job_prefix(ACROSS[0]) == training_job_prefix(ACROSS[1])
    paths = [organisation_file(tmp_path, *team.split("/")) for team in ACROSS]

    with pytest.raises(OrgFileError) as caught:
        load_organisations(paths)
    (problem,) = caught.value.problems
    assert problem.path == f"{paths[1]}: shares[0].name" and problem.value == ACROSS[1]
    assert f"the same as that of {ACROSS[0]} ({paths[0]}: shares[0].name)" in problem.message
