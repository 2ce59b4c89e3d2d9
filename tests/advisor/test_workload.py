"""Workloads: CSV loading with line-numbered errors, and the seeded generator."""

from __future__ import annotations

from pathlib import Path

import pytest

from quota_constructs.advisor.profiles import TeamsFile, load_teams, parse_teams
from quota_constructs.advisor.workload import (
    DAY_S,
    GeneratorOptions,
    WorkloadError,
    expected_busy_fraction,
    generate_workload,
    load_workload_csv,
    parse_workload_csv,
    workload_csv,
)
from tests.advisor.helpers import TEAMS_FILE

HEADER = "submit_time_s,share,instance_type,instance_count,duration_s,priority"


def problems(text: str) -> list[str]:
    with pytest.raises(WorkloadError) as info:
        parse_workload_csv(text, source="w.csv")
    assert info.value.context == "w.csv"
    return [str(p) for p in info.value.problems]


def test_parses_rows_sorted_by_submit_time_with_optional_checkpoint() -> None:
    text = (
        HEADER + ",checkpoint_interval_s\n"
        "60,a,ml.g5.xlarge,2,600,5,\n"
        "0, b, ml.g5.xlarge, 1, 30.5, 9999, 10\n"
    )
    first, second = parse_workload_csv(text)
    assert (first.share, first.duration_s, first.priority, first.checkpoint_interval_s) == (
        "b",
        30.5,
        9999,
        10.0,
    )
    assert (first.line, second.line) == (3, 2)
    assert second.checkpoint_interval_s is None and second.instance_count == 2


def test_rejects_every_bad_row_with_its_line_number() -> None:
    text = (
        HEADER + "\n"
        "0,a,ml.g5.xlarge,1,60,1\n"
        "x,a,ml.g5.xlarge,1,60,1\n"
        "0,a,g5,0,60,1\n"
        "0,a b,ml.g5.xlarge,1,-5,10000\n"
    )
    found = problems(text)
    assert any(p.startswith("line 3.submit_time_s: Input should be a valid number") for p in found)
    assert any(p.startswith("line 4.instance_count: Input should be greater") for p in found)
    assert any(p.startswith("line 5.duration_s: Input should be greater than 0") for p in found)
    # rule checks of rows whose shape is fine come from the model
    text2 = HEADER + "\n0,a b,g5,1,60,10000\n"
    found2 = problems(text2)
    assert any(p.startswith("line 2.share: quota share name must be") for p in found2)
    assert any(p.startswith("line 2.instance_type: capacity unit must be") for p in found2)
    assert any(p.startswith("line 2.priority: scheduling priority must be") for p in found2)


def test_rejects_rows_with_extra_values() -> None:
    [found] = problems(HEADER + "\n0,a,ml.g5.xlarge,1,60,1,7,8\n")
    assert found.startswith("line 2: more values than the 6 columns of the header")


def test_rejects_rows_with_missing_values() -> None:
    [found] = problems(HEADER + "\n0,a,ml.g5.xlarge\n")
    assert found.startswith("line 2: 3 values for the 6 columns of the header")


def test_rejects_missing_and_unknown_columns() -> None:
    found = problems("submit_time_s,share,instance_type,instance_count,duration,priority\n")
    given = "submit_time_s, share, instance_type, instance_count, duration, priority"
    assert f"line 1: missing column 'duration_s' (got '{given}')" in found[0]
    assert found[1].startswith("line 1: unknown column 'duration'")


def test_rejects_empty_workload() -> None:
    [found] = problems(HEADER + "\n")
    assert "the workload has no jobs" in found


def test_rejects_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="cannot read the file"):
        load_workload_csv(tmp_path / "nope.csv")


def test_csv_round_trip(tmp_path: Path) -> None:
    jobs = generate_workload(load_teams(TEAMS_FILE), days=2, seed=3)
    path = tmp_path / "w.csv"
    path.write_text(workload_csv(jobs))
    loaded = load_workload_csv(path)
    assert len(loaded) == len(jobs)
    for a, b in zip(jobs, loaded, strict=True):
        assert (a.share, a.instance_type, a.instance_count, a.priority) == (
            b.share,
            b.instance_type,
            b.instance_count,
            b.priority,
        )
        assert abs(a.submit_time_s - b.submit_time_s) < 1e-3
        assert a.checkpoint_interval_s == b.checkpoint_interval_s


def test_generator_is_deterministic_per_seed() -> None:
    teams = load_teams(TEAMS_FILE)
    assert generate_workload(teams, seed=7) == generate_workload(teams, seed=7)
    assert generate_workload(teams, seed=7) != generate_workload(teams, seed=8)


def test_generator_follows_the_profiles() -> None:
    jobs = generate_workload(load_teams(TEAMS_FILE), days=7, seed=1)
    rec = [j for j in jobs if j.share == "recommendation"]
    assert len(rec) == 24 * 7 and {j.instance_count for j in rec} == {2}
    assert all(j.submit_time_s % 3600 == 0 and j.checkpoint_interval_s is None for j in rec)
    weekend = [j for j in jobs if j.share == "data-analysis"]
    assert weekend and all(j.submit_time_s >= 5 * DAY_S for j in weekend)
    gen = [j for j in jobs if j.share == "generative"]
    assert all(j.submit_time_s < 5 * DAY_S and 1 <= j.instance_count <= 4 for j in gen)
    assert {j.checkpoint_interval_s for j in gen} == {900.0}


def test_intensity_multiplies_jobs_but_keeps_the_offered_load() -> None:
    teams = load_teams(TEAMS_FILE)
    base = generate_workload(teams, seed=2, options=GeneratorOptions(intensity=10))
    dense = generate_workload(teams, seed=2, options=GeneratorOptions(intensity=40))
    assert len(dense) > 3.5 * len(base)
    load = sum(j.instance_seconds for j in base)
    assert abs(sum(j.instance_seconds for j in dense) - load) / load < 0.1


def test_expected_busy_fraction_matches_the_generated_load() -> None:
    teams = load_teams(TEAMS_FILE)
    jobs = generate_workload(teams, seed=4, options=GeneratorOptions(intensity=100))
    for team in teams.teams:
        busy = sum(j.instance_seconds for j in jobs if j.share == team.name)
        measured = busy / (sum(team.capacity.values()) * 7 * DAY_S)
        assert measured == pytest.approx(expected_busy_fraction(team), rel=0.1)


def test_rejects_non_positive_intensity_and_days() -> None:
    with pytest.raises(WorkloadError, match="intensity: must be positive"):
        GeneratorOptions(intensity=0)
    with pytest.raises(WorkloadError, match="days: must be at least 1"):
        generate_workload(load_teams(TEAMS_FILE), days=0)


def one_team(**facts: object) -> TeamsFile:
    team = {"name": "t", "capacity": {"ml.g5.xlarge": 4}, **facts}
    return parse_teams({"organisation": "lab", "teams": [team]})


def test_a_daily_schedule_is_one_job_a_day_of_the_stated_duration() -> None:
    teams = one_team(workload="scheduled", schedule="daily", job_minutes={"p50": 240, "max": 250})
    jobs = generate_workload(teams, days=7, seed=3)
    assert [j.submit_time_s for j in jobs] == [d * DAY_S for d in range(7)]
    # p50 +- 20 %, cut at max: 192 to 250 minutes, never 14.4 hours
    assert all(192 * 60 <= j.duration_s <= 250 * 60 for j in jobs)
    assert {j.instance_count for j in jobs} == {4}


def test_durations_are_cut_at_job_minutes_max() -> None:
    teams = one_team(workload="experimental", job_minutes={"p50": 60, "max": 90})
    jobs = generate_workload(teams, days=7, seed=1)
    durations = [j.duration_s for j in jobs]
    assert max(durations) == 90 * 60 and min(durations) < 60 * 60


def test_instances_per_job_sets_the_size_of_every_job() -> None:
    fixed = generate_workload(one_team(workload="ad_hoc", instances_per_job=1), days=7)
    assert {j.instance_count for j in fixed} == {1}
    ranged = one_team(workload="experimental", instances_per_job={"min": 2, "max": 3})
    assert {j.instance_count for j in generate_workload(ranged, days=7)} == {2, 3}


PLAIN_AND_NOT = (
    HEADER + ",checkpoint_interval_s\n"
    "0,a,ml.g5.xlarge,1,600,1,\n"
    "0,a,ml.g5.xlarge,1,600,1,\n"
    "26.225,a,ml.g5.xlarge,4,893.036,1,300\n"
    "1e3,b,ml.g5.xlarge,2,60,0,\n"
    "5.,a,ml.g5.xlarge,02,7.5e1,9999,1.5\n"
    "000017.10,a,ml.g5.xlarge,3,0.000001,7,\n"
    "31622400,a,ml.g5.xlarge,1,2419200,1,2419200\n"
)


@pytest.mark.parametrize(
    "bad",
    [
        "7,a,ml.g5.xlarge,1,0,1,",  # duration 0
        "7,a,ml.g5.xlarge,1,0.0,1,0",  # checkpoint 0
        "7,a,ml.g5.xlarge,1,2419201,1,",  # longer than 28 days
        "7,a,ml.g5.xlarge,2147483648,60,1,",  # too many instances
        "7,a,ml.g5.xlarge,1,60,10000,",  # priority above 9999
        "7,a,ml.g5.xlrge,1,60,1,",  # unknown instance type
    ],
)
def test_plain_rows_read_without_pydantic_give_what_pydantic_gives(
    bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one-pattern reader of plain files yields the same jobs, and the same problems for a
    bad row, as the row-by-row checker (pydantic, then the model's rules)."""
    from quota_constructs.advisor import workload

    text = PLAIN_AND_NOT + bad + "\n"
    fast_jobs = parse_workload_csv(PLAIN_AND_NOT)
    fast_problems = problems(text)
    monkeypatch.setattr(workload, "_read_plain", lambda *_: None)
    assert parse_workload_csv(PLAIN_AND_NOT) == fast_jobs
    assert problems(text) == fast_problems and fast_problems[0].startswith("line 9")


PLAIN_FILES = {
    "with checkpoints": HEADER + ",checkpoint_interval_s\n0,a,ml.g5.xlarge,1,600,1,30\n"
    "5.25,b,ml.p4d.24xlarge,8,60.5,9999,\n",
    "without the column": HEADER + "\n7,a,ml.g5.xlarge,2,60,3\n1,a,ml.g5.xlarge,1,60,3\n",
    "columns reordered": "share,priority,submit_time_s,duration_s,instance_type,instance_count\n"
    "a,2,10,60,ml.g5.xlarge,1\nb,3,5,70,ml.g5.2xlarge,4\n",
    "blank lines, CRLF, spaces after commas": HEADER + "\r\n\r\n3, a, ml.g5.xlarge, 1, 60, 1\r\n"
    "\n4,a,ml.g5.xlarge,1,60,1",
    "bounds at their edges": HEADER + ",checkpoint_interval_s\n"
    "31622400,a,ml.g5.xlarge,10000,2419200,9999,2419200\n",
}


@pytest.mark.parametrize("name", PLAIN_FILES)
def test_files_of_plain_rows_read_in_one_pass_as_the_full_reader_reads_them(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose every line is plain is read by one line pattern (``_read_plain``): the
    same jobs, line numbers included, as the row-by-row reader gives."""
    from quota_constructs.advisor import workload

    text = PLAIN_FILES[name]
    header = [h.strip() for h in text.splitlines()[0].split(",")]
    fast = workload._read_plain(text, header)
    assert fast is not None
    monkeypatch.setattr(workload, "_read_plain", lambda *_: None)
    assert sorted(fast, key=lambda j: j.submit_time_s) == parse_workload_csv(text)


@pytest.mark.parametrize(
    "row",
    [
        "7,a,ml.g5.xlarge,1,0,1,",  # duration 0: the full reader names it
        "7,a,ml.g5.xlrge,1,60,1,",  # unknown instance type
        "7,a b,ml.g5.xlarge,1,60,1,",  # a space in a name
        '7,"a",ml.g5.xlarge,1,60,1,',  # a quoted value
        "7,a,ml.g5.xlarge,1,60,1,,",  # one value too many
        "7,a,ml.g5.xlarge,1,60",  # values missing
        "7,a,ml.g5.xlarge,1,60,1,10 ",  # a trailing space
        "7,a,ml.g5.xlarge,1,6e1,1,",  # an exponent
        "7,a,ml.g5.xlarge,1,2419201,1,",  # longer than 28 days
        "7,a,ml.g5.xlarge,2147483648,60,1,",  # too many instances
        "315619201,a,ml.g5.xlarge,1,60,1,",  # submitted after ten years
    ],
)
def test_a_line_that_is_not_plain_sends_the_whole_file_to_the_full_reader(row: str) -> None:
    from quota_constructs.advisor import workload

    text = HEADER + ",checkpoint_interval_s\n0,a,ml.g5.xlarge,1,600,1,\n" + row + "\n"
    header = text.splitlines()[0].split(",")
    assert workload._read_plain(text, header) is None


def test_rows_read_by_position_keep_their_line_numbers_around_blank_and_short_rows() -> None:
    """Blank lines are skipped and counted; a row without the optional last value is read
    in full (not by position) and is still a job."""
    text = (
        HEADER + ",checkpoint_interval_s\n"
        "\n"
        "0,a,ml.g5.xlarge,1,60,1,30\n"
        "5,a,ml.g5.xlarge,2,60,1\n"
        "\n"
        "9,a,ml.g5.xlarge,1,60,1,\n"
    )
    jobs = parse_workload_csv(text)
    assert [(j.line, j.instance_count, j.checkpoint_interval_s) for j in jobs] == [
        (3, 1, 30.0),
        (4, 2, None),
        (6, 1, None),
    ]
    [found] = problems(text + "\n\n1,a\n")
    assert found.startswith("line 9: 2 values for the 7 columns of the header")
