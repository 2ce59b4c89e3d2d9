"""Calibrated bounds: fitted by split conformal prediction on a backtest's predictions, they
cover the stated share of new starts; applied, they keep the forecast's order and its
"starts now"; files that are not a calibration are refused naming the field and the fix."""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from quota_constructs.forecast import (
    Calibration,
    CalibrationError,
    Judged,
    LiveJob,
    QueueState,
    default_calibration,
    fit_calibration,
    forecast,
    load_calibration,
    what_if,
)
from quota_constructs.forecast.backtest import (
    EPOCH_S,
    PERIOD_DAYS,
    HeldOut,
    Prediction,
    calibrated,
    held_out,
    leave_one_out,
    queue_state,
)
from quota_constructs.forecast.calibration import BAND_MIN_JOBS, MIN_JOBS, OFFSET_S, Band
from quota_constructs.model import JobQueueSpec, QuotaShareSpec, SharingStrategy
from quota_constructs.scheduling import JobRequest, Scheduler

HOUR = 3600.0
GPU = "ml.g5.xlarge"


@dataclass(frozen=True)
class Seen:
    p10_s: float
    p90_s: float
    actual_s: float
    p50_s: float = 0.0


def too_narrow(rng: random.Random, n: int, sigma: float = 1.0) -> list[Seen]:
    """Forecasts whose p10-p90 is far too narrow: the actual wait is the forecast's median
    times a log-normal error of ``sigma`` (p10 and p90 at +-0.3 in log: with sigma 1 about
    23 % inside)."""
    found = []
    for _ in range(n):
        median = rng.uniform(2 * HOUR, 8 * HOUR)  # the actual wait is then rarely 0
        actual = (median + OFFSET_S) * math.exp(rng.gauss(0.0, sigma)) - OFFSET_S
        low = (median + OFFSET_S) * math.exp(-0.3) - OFFSET_S
        high = (median + OFFSET_S) * math.exp(0.3) - OFFSET_S
        found.append(Seen(low, high, max(0.0, actual), median))
    return found


def coverage(calibration: Calibration | None, seen: list[Seen]) -> tuple[float, float]:
    inside = below = 0
    for p in seen:
        median = math.sqrt((p.p10_s + OFFSET_S) * (p.p90_s + OFFSET_S)) - OFFSET_S
        low, high = (
            calibration.bounds(p.p10_s, median, p.p90_s, math.inf)
            if calibration
            else (p.p10_s, p.p90_s)
        )
        assert low is not None and high is not None
        inside += low <= p.actual_s <= high
        below += p.actual_s <= high
    return inside / len(seen), below / len(seen)


def test_bounds_fitted_on_one_backtest_cover_what_they_say_on_new_forecasts() -> None:
    rng = random.Random(7)
    fitted = fit_calibration(too_narrow(rng, 2000), fitted_on="synthetic")
    inside, below = coverage(None, fresh := too_narrow(rng, 4000))
    assert inside < 0.3 and below < 0.7
    inside, below = coverage(fitted, fresh)  # 2,000 scores: each bound within about 1.5 points
    assert abs(inside - 0.8) < 0.03 and abs(below - 0.9) < 0.02
    assert fitted.jobs == 2000 and fitted.upper_shift > 0 > fitted.lower_shift


def skewed(rng: random.Random, n: int, median_s: float, bias: float) -> list[Seen]:
    """Forecasts of about ``median_s`` whose actual waits run ``bias`` (in log) later than
    their median (negative: earlier), p10 and p90 at +-0.3 in log."""
    found = []
    for _ in range(n):
        median = median_s * rng.uniform(0.8, 1.25)
        actual = (median + OFFSET_S) * math.exp(rng.gauss(bias, 0.5)) - OFFSET_S
        low = (median + OFFSET_S) * math.exp(-0.3) - OFFSET_S
        high = (median + OFFSET_S) * math.exp(0.3) - OFFSET_S
        found.append(Seen(low, high, max(0.0, actual), median))
    return found


def test_each_band_of_the_forecast_median_is_calibrated_apart() -> None:
    """Short forecasts that start late and long ones that start early (as the sampled bounds
    miss on the example organisations): one pooled shift leaves both bands off, a shift per
    band of the median covers what each states."""
    rng = random.Random(11)

    def both(n: int) -> tuple[list[Seen], list[Seen]]:
        return skewed(rng, n, 600.0, 0.6), skewed(rng, n, 12 * HOUR, -0.6)

    fitted = fit_calibration([p for band in both(1500) for p in band])
    pooled = fit_calibration([p for band in both(1500) for p in band], bands=())
    assert pooled.bands == () and [b.own for b in fitted.bands] == [True, False, False, True]
    short, long = both(3000)
    assert coverage(pooled, short)[1] < 0.85 < 0.97 < coverage(pooled, long)[1]
    for band in (short, long):
        inside, below = coverage(fitted, band)
        assert abs(inside - 0.8) < 0.04 and abs(below - 0.9) < 0.03
    assert fitted.shifts(600.0) == (fitted.bands[0].lower_shift, fitted.bands[0].upper_shift)
    assert fitted.shifts(HOUR) == (fitted.lower_shift, fitted.upper_shift)  # no own fit


@pytest.mark.parametrize("bands", [(1800.0,), (0.0, 7200.0, 1800.0), (0.0, 60.0, 60.0)])
def test_bands_that_do_not_start_at_0_and_rise_are_refused_naming_them(
    bands: tuple[float, ...],
) -> None:
    with pytest.raises(CalibrationError) as error:
        fit_calibration(too_narrow(random.Random(1), 100), bands=bands)
    assert str(error.value).startswith(f"bands: {list(bands)} must start at 0 and rise")
    assert "fix: pass e.g. (0, 1800, 7200, 28800), or () for none" in str(error.value)


def test_a_band_with_too_few_forecasts_takes_the_pooled_shifts() -> None:
    rng = random.Random(4)
    seen = skewed(rng, 300, 12 * HOUR, -0.6) + skewed(rng, BAND_MIN_JOBS - 1, 600.0, 0.6)
    fitted = fit_calibration(seen)
    short, long = fitted.bands[0], fitted.bands[3]
    assert short == Band(0.0, fitted.lower_shift, fitted.upper_shift, BAND_MIN_JOBS - 1, False)
    assert long.own and long.jobs == 300 and long.upper_shift != fitted.upper_shift
    assert "under 30 min" not in fitted.describe()
    assert f"8 h or more p90 x{math.exp(long.upper_shift):.2f} p10" in fitted.describe()


def test_bounds_wider_than_needed_are_narrowed() -> None:
    rng = random.Random(3)
    wide = [replace(p, p10_s=p.p10_s / 20, p90_s=p.p90_s * 20) for p in too_narrow(rng, 300)]
    fitted = fit_calibration(wide)
    assert fitted.upper_shift < 0 < fitted.lower_shift


def test_the_shifts_are_the_conformal_quantiles_of_the_scores() -> None:
    """99 forecasts with p10 = p90 = 0 s ... 98 s + 1 and known actual waits: the upper shift
    is the 90th smallest upper score (ceil(0.9 x 100)), the lower the 10th smallest."""
    seen = [Seen(1.0, 1.0, float(k)) for k in range(99)]
    fitted = fit_calibration(seen)
    scores = sorted(math.log((p.actual_s + OFFSET_S) / (1.0 + OFFSET_S)) for p in seen)
    assert fitted.upper_shift == pytest.approx(scores[89], abs=1e-12)
    assert fitted.lower_shift == pytest.approx(scores[9], abs=1e-12)


def test_jobs_forecast_to_start_now_are_neither_fitted_on_nor_changed() -> None:
    seen = [Seen(0.0, 0.0, 5 * HOUR)] * 50 + too_narrow(random.Random(1), MIN_JOBS)
    assert fit_calibration(seen).jobs == MIN_JOBS
    calibration = Calibration(-1.0, 1.0, MIN_JOBS)
    assert calibration.bounds(0.0, 0.0, 0.0, 7 * 86400) == (0.0, 0.0)


def test_calibrated_bounds_keep_their_order_around_the_median_and_the_horizon() -> None:
    calibration = Calibration(lower_shift=1.0, upper_shift=-0.5, jobs=40)
    low, high = calibration.bounds(100.0, 600.0, 900.0, 7 * 86400)
    assert low == 600.0 and high == 600.0  # never past the median
    low, high = Calibration(-9.0, 3.0, 40).bounds(100.0, 600.0, 5 * 86400, 7 * 86400)
    assert low == 0.0 and high is None  # never below 0; past the horizon: beyond it
    assert Calibration(-1, 1, 40).bounds(100.0, None, None, 7 * 86400) == (100.0, None)


def test_too_few_waiting_forecasts_to_fit_are_refused_naming_the_count_and_the_fix() -> None:
    with pytest.raises(CalibrationError) as error:
        fit_calibration(too_narrow(random.Random(2), MIN_JOBS - 1))
    assert f"{MIN_JOBS - 1} in the backtest, at least {MIN_JOBS}" in str(error.value)
    assert "fix: backtest more days or more seeds" in str(error.value)


def workload(seen: list[Seen]) -> list[Prediction]:
    """``seen`` as one workload's backtest predictions (the median between the bounds)."""
    return [
        Prediction(
            "s",
            p.p10_s,
            median := math.sqrt((p.p10_s + OFFSET_S) * (p.p90_s + OFFSET_S)) - OFFSET_S,
            p.p90_s,
            median,
            p.actual_s,
        )
        for p in seen
    ]


def test_judged_held_out_a_calibration_of_alike_periods_covers_what_it_states() -> None:
    rng = random.Random(5)
    judged = leave_one_out([workload(too_narrow(rng, 300)) for _ in range(8)])
    assert judged.periods == 8 and judged.waits.jobs == 2400
    assert abs(judged.waits.interval - 0.8) < 0.03 and abs(judged.waits.below_p90 - 0.9) < 0.025
    low, high = judged.spread["interval"]
    assert low < judged.waits.interval < high
    assert judged.as_json()["intervalCoverage95"] == [round(low, 3), round(high, 3)]
    assert judged.describe().startswith("judged on each of the 8 periods with a fit on the")


def test_judged_held_out_each_band_of_the_forecast_median_is_reported_and_covered() -> None:
    """Weeks of short forecasts that start late and long ones that start early: judged held
    out, each band says how it is covered, and the fit by band covers each as stated."""
    rng = random.Random(8)
    weeks = [
        workload(skewed(rng, 200, 600.0, 0.6) + skewed(rng, 200, 12 * HOUR, -0.6)) for _ in range(6)
    ]
    judged = leave_one_out(weeks)
    assert sorted(judged.bands) == [0, 3] and judged.bands[0].jobs == 1200
    for found in judged.bands.values():
        assert abs(found.interval - 0.8) < 0.04 and abs(found.below_p90 - 0.9) < 0.03
    bands = judged.as_json()["bands"]
    assert isinstance(bands, list)
    short, long = bands
    assert short == {
        "fromS": 0.0,
        "jobs": 1200,
        "intervalCoverage": round(judged.bands[0].interval, 3),
        "p90Coverage": round(judged.bands[0].below_p90, 3),
    }
    assert long["fromS"] == 28800.0
    assert (
        f"; by the forecast median: under 30 min {judged.bands[0].interval:.1%} / "
        f"{judged.bands[0].below_p90:.1%} (1200 jobs), 8 h or more "
    ) in judged.describe()


def test_judged_held_out_a_period_unlike_the_others_shows_what_fitting_on_it_hides() -> None:
    """Seven calm workloads and one whose starts scatter three times as wide: fitted on all
    eight, the bounds cover at least what they state on those very forecasts, while the wild
    one, judged with a fit on the calm ones, falls far short (and the calm ones, judged with
    a fit that the wild one widened, over-cover)."""
    rng = random.Random(9)
    groups = [workload(too_narrow(rng, 200)) for _ in range(7)]
    groups.append(workload(too_narrow(rng, 200, sigma=3.0)))
    pooled = [p for group in groups for p in group]
    fitted = fit_calibration(pooled)
    in_sample = [calibrated(p, fitted, 7 * 86400) for p in pooled]
    assert sum(p.actual_s <= p.p90_s for p in in_sample) / len(pooled) >= 0.9
    judged = held_out(groups)
    assert HeldOut.of(judged[-1:]).waits.below_p90 < 0.75
    assert HeldOut.of(judged[:-1]).waits.below_p90 > 0.9


def test_a_judgement_of_several_organisations_periods_gives_each_its_own() -> None:
    """Fitted together (as the default calibration is), each organisation's periods are
    judged alone from the one judgement: the same as judging those periods' predictions."""
    rng = random.Random(9)
    groups = [workload(too_narrow(rng, 200)) for _ in range(5)]
    groups += [workload(too_narrow(rng, 200, sigma=3.0)) for _ in range(2)]
    judged = leave_one_out(groups)
    wild = judged.of_periods(5, 7)
    assert wild == HeldOut.of(held_out(groups)[5:])
    assert wild.periods == 2
    assert wild.waits.below_p90 < judged.waits.below_p90 < judged.of_periods(0, 5).waits.below_p90
    with pytest.raises(ValueError) as error:
        judged.of_periods(5, 8)
    assert str(error.value) == "periods 5-8: not within the 7 judged; fix: 0 <= start < stop <= 7"


def test_a_calibration_is_judged_held_out_only_on_enough_periods_naming_the_fix() -> None:
    one = workload(too_narrow(random.Random(4), 100))
    with pytest.raises(CalibrationError) as error:
        leave_one_out([one])
    assert "periods: 1 backtested" in str(error.value)
    assert "fix: backtest a longer history (it is cut into --period-days periods)" in str(
        error.value
    )
    few = workload(too_narrow(random.Random(6), 10))
    with pytest.raises(CalibrationError) as error:
        leave_one_out([one, few, few])
    assert str(error.value).startswith(
        "the fit without period 1: jobs forecast to wait: 20 in the backtest, at least 30"
    )


def test_a_calibration_judged_held_out_keeps_the_figures_and_every_forecast_shows_them(
    tmp_path: Path,
) -> None:
    groups = [workload(too_narrow(random.Random(seed), 100)) for seed in (1, 2, 3)]
    judged = leave_one_out(groups)
    fitted = replace(
        fit_calibration([p for g in groups for p in g], fitted_on="three weeks"),
        judged=judged.judged(),
    )
    fitted.save(path := tmp_path / "c.json")
    assert json.loads(path.read_text())["heldOut"] == {
        "intervalCoverage": round(judged.waits.interval, 3),
        "p90Coverage": round(judged.waits.below_p90, 3),
        "periods": 3,
    }
    loaded = load_calibration(path)
    assert loaded.judged == Judged(
        round(judged.waits.interval, 3), round(judged.waits.below_p90, 3), 3
    )
    result = forecast(queue(), samples=12, calibration=loaded)
    (note,) = [c for c in result.caveats if c.startswith("bounds calibrated")]
    assert note.endswith(
        f"; judged on each of 3 periods with a fit on the others, "
        f"{loaded.judged.interval:.1%} of the waited jobs started in p10-p90 (80 % meant) and "
        f"{loaded.judged.below_p90:.1%} by p90 (90 % meant)"
    )
    assert "heldOut" not in fit_calibration([p for g in groups for p in g]).as_json()


def test_a_long_history_is_cut_into_periods_by_submit_and_workloads_stay_apart() -> None:
    from quota_constructs.forecast.backtest import by_period

    def at(day: float) -> Prediction:
        return Prediction("s", 0.0, 1.0, 2.0, 1.0, 1.0, day * 86400.0)

    history = (at(1.5), at(8.0), at(2.0), at(13.9), at(14.0))  # days 1-6, 7-13, 14-20
    other = (at(3.0), at(9.0))
    periods = by_period([history, other], 7 * 86400.0)
    assert [[p.submitted_s / 86400 for p in period] for period in periods] == [
        [1.5, 2.0],
        [8.0, 13.9],
        [14.0],
        [3.0],
        [9.0],
    ]
    assert by_period([history], 90 * 86400.0) == [list(history)]
    assert calibrate_default("period_days") == PERIOD_DAYS  # the command's and the tool's


def calibrate_default(option: str) -> object:
    import inspect

    from quota_constructs.commands.forecast import calibrate

    return inspect.signature(calibrate).parameters[option].default


def test_a_calibration_whose_jobs_mostly_never_started_is_refused() -> None:
    seen = [Seen(10.0, 20.0, math.inf)] * 10 + [Seen(10.0, 20.0, 15.0)] * 30
    with pytest.raises(CalibrationError, match="more than 10 % never started"):
        fit_calibration(seen)


def test_a_calibration_file_round_trips(tmp_path: Path) -> None:
    fitted = fit_calibration(too_narrow(random.Random(5), 100), fitted_on="research, 7 days")
    path = tmp_path / "calibration.json"
    fitted.save(path)
    loaded = load_calibration(path)
    assert loaded.jobs == 100 and loaded.fitted_on == "research, 7 days"
    assert loaded.upper_shift == pytest.approx(fitted.upper_shift, abs=1e-6)
    assert [(b.from_s, b.jobs, b.own) for b in loaded.bands] == [
        (b.from_s, b.jobs, b.own) for b in fitted.bands
    ]
    assert loaded.bands[2].upper_shift == pytest.approx(fitted.bands[2].upper_shift, abs=1e-6)
    assert loaded.describe() == fitted.describe()


def test_a_calibration_file_without_bands_shifts_every_forecast_alike(tmp_path: Path) -> None:
    """Files written before the bands (or fitted with ``bands=()``) stay valid."""
    path = tmp_path / "calibration.json"
    fit_calibration(too_narrow(random.Random(5), 100), bands=()).save(path)
    assert "bands" not in json.loads(path.read_text())
    loaded = load_calibration(path)
    assert loaded.bands == () and loaded.shifts(10 * HOUR) == (
        loaded.lower_shift,
        loaded.upper_shift,
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "kind: 'list' is not 'quota-forecast-calibration'"),
        ('{"kind": "x"}', "kind: 'x' is not 'quota-forecast-calibration'"),
        ('{"kind": "quota-forecast-calibration", "version": 9}', "version: 9 is not 1"),
        (
            '{"kind": "quota-forecast-calibration", "version": 1, "lowerShift": 0, '
            '"upperShift": "wide", "offsetS": 300, "jobs": 40}',
            "upperShift: 'wide' is not a finite number",
        ),
        (
            '{"kind": "quota-forecast-calibration", "version": 1, "lowerShift": 0, '
            '"upperShift": 0.4, "offsetS": 300, "jobs": 3}',
            "jobs: 3 is not a finite number of at least 30",
        ),
        (
            '{"kind": "quota-forecast-calibration", "version": 1, "lowerShift": 0, '
            '"upperShift": 0.4, "offsetS": 300, "jobs": 30, "shares": "a"}',
            "shares: 'a' is not a list of share names",
        ),
        (
            '{"kind": "quota-forecast-calibration", "version": 1, "lowerShift": 0, '
            '"upperShift": 0.4, "offsetS": 300, "jobs": 30, "heldOut": [0.8]}',
            "heldOut: [0.8] is not an object",
        ),
        (
            '{"kind": "quota-forecast-calibration", "version": 1, "lowerShift": 0, '
            '"upperShift": 0.4, "offsetS": 300, "jobs": 30, "heldOut": '
            '{"intervalCoverage": 79, "p90Coverage": 0.9, "periods": 4}}',
            "heldOut.intervalCoverage: 79.0 is not a share between 0 and 1",
        ),
        (
            '{"kind": "quota-forecast-calibration", "version": 1, "lowerShift": 0, '
            '"upperShift": 0.4, "offsetS": 300, "jobs": 30, "heldOut": '
            '{"intervalCoverage": 0.79, "p90Coverage": 0.9, "periods": 1}}',
            "heldOut.periods: 1 is not a finite number of at least 2",
        ),
        (
            '{"kind": "quota-forecast-calibration", "version": 1, "lowerShift": 0, '
            '"upperShift": 0.4, "offsetS": 300, "jobs": 30, "bands": {"fromS": 0}}',
            "bands: {'fromS': 0} is not a list of objects",
        ),
        (
            '{"kind": "quota-forecast-calibration", "version": 1, "lowerShift": 0, '
            '"upperShift": 0.4, "offsetS": 300, "jobs": 30, "bands": ['
            '{"fromS": 0, "lowerShift": 0, "upperShift": 0.4, "jobs": 30}, '
            '{"fromS": 60, "lowerShift": 0, "upperShift": "x", "jobs": 30}]}',
            "bands[1].upperShift: 'x' is not a finite number",
        ),
        (
            '{"kind": "quota-forecast-calibration", "version": 1, "lowerShift": 0, '
            '"upperShift": 0.4, "offsetS": 300, "jobs": 30, "bands": ['
            '{"fromS": 0, "lowerShift": 0, "upperShift": 0.4, "jobs": 30, "own": "yes"}]}',
            "bands[0].own: 'yes' is not true or false",
        ),
        (
            '{"kind": "quota-forecast-calibration", "version": 1, "lowerShift": 0, '
            '"upperShift": 0.4, "offsetS": 300, "jobs": 30, "bands": ['
            '{"fromS": 60, "lowerShift": 0, "upperShift": 0.4, "jobs": 30}, '
            '{"fromS": 30, "lowerShift": 0, "upperShift": 0.4, "jobs": 30}]}',
            "bands: fromS [60.0, 30.0] must start at 0 and rise",
        ),
    ],
)
def test_a_file_that_is_not_a_calibration_is_refused_naming_the_field_and_the_fix(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "c.json"
    path.write_text(content)
    with pytest.raises(CalibrationError) as error:
        load_calibration(path)
    assert str(error.value).startswith(f"{path}: ")
    assert expected in str(error.value) and "fix: " in str(error.value)


def test_a_missing_calibration_file_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match="cannot read the calibration"):
        load_calibration(tmp_path / "none.json")


def queue() -> QueueState:
    """One GPU, running a job with an hour left; one job waiting behind it."""
    a = QuotaShareSpec("a", {GPU: 1}, SharingStrategy.RESERVE)
    running = LiveJob("r", "r", "a", {GPU: 1}, started_s=-HOUR, hint_s=2 * HOUR)
    waiting = LiveJob("w", "w", "a", {GPU: 1}, created_s=-60.0, hint_s=HOUR)
    return QueueState(now_s=0.0, shares=(a,), running=(running,), waiting=(waiting,))


def test_the_default_calibration_is_the_packaged_fit_of_the_example_organisations() -> None:
    """What forecasts use unless given one: fitted on enough forecasts of both example
    organisations by the tool that writes it, it widens p90 and says where it comes from; it
    names no shares, so no queue is told it was fitted for others."""
    default = default_calibration()
    assert default.jobs >= MIN_JOBS and default.upper_shift > 0
    assert "research" in default.fitted_on and "ml-platform" in default.fitted_on
    assert "tools/default_calibration.py" in default.describe()
    assert default.shares == () and default.mismatch(["any", "queue"]) == ""
    # judged week by week with a fit on the other weeks, as the tool prints; the notes say so
    assert default.judged is not None and default.judged.periods == 96
    assert "; judged on each of 96 periods with a fit on the others, " in default.describe()


def test_a_calibrated_forecast_widens_the_waiting_jobs_bounds_and_says_so() -> None:
    calibration = Calibration(lower_shift=-0.4, upper_shift=0.5, jobs=120, fitted_on="tests")
    plain = forecast(queue(), samples=40).jobs["w"]
    wide = forecast(queue(), samples=40, calibration=calibration)
    job = wide.jobs["w"]
    assert job.p50_s == plain.p50_s
    expected = calibration.bounds(plain.p10_s, plain.p50_s, plain.p90_s, wide.horizon_s)
    assert (job.p10_s, job.p90_s) == expected
    assert job.p90_s is not None and plain.p90_s is not None and job.p90_s > plain.p90_s
    assert any("calibrated on 120 backtest forecasts (tests)" in c for c in wide.caveats)


def test_a_calibrated_what_if_that_starts_now_still_starts_now() -> None:
    idle = replace(queue(), running=(), waiting=())
    new = LiveJob("what-if", "new", "a", {GPU: 1}, hint_s=HOUR)
    answer = what_if(idle, new, samples=20, calibration=Calibration(-1.0, 2.0, 40))
    assert answer.outcome == "starts_now" and answer.as_json()["startsInS"] == {
        "p50": 0.0,
        "p90": 0.0,
    }


def test_a_saved_calibration_is_plain_json(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    Calibration(-0.2, 0.4, 50, fitted_on="x", shares=("a", "b")).save(path)
    assert json.loads(path.read_text()) == {
        "kind": "quota-forecast-calibration",
        "version": 1,
        "lowerShift": -0.2,
        "upperShift": 0.4,
        "offsetS": OFFSET_S,
        "jobs": 50,
        "fittedOn": "x",
        "shares": ["a", "b"],
    }
    assert load_calibration(path).shares == ("a", "b")


def busy_workload(path: Path, *, jobs: int, seed: int = 11, days: int = 2) -> Path:
    """``jobs`` jobs of one research share over ``days`` days (80 a day: more than its 4 GPUs
    run in 1-3 h runs of 1-2 instances): many wait (the backtest forecasts those after the
    first day)."""
    from quota_constructs.advisor.workload import WorkloadJob, workload_csv

    rng = random.Random(seed)
    found = [
        WorkloadJob(
            submit_time_s=rng.uniform(0.0, days * 86400.0),
            share="generative",
            instance_type=GPU,
            instance_count=rng.choice((1, 2)),
            duration_s=rng.uniform(HOUR, 3 * HOUR),
            priority=rng.randint(1, 5),
        )
        for _ in range(jobs)
    ]
    path.write_text(workload_csv(sorted(found, key=lambda j: j.submit_time_s)))
    return path


def run_tool(monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    from tests.helpers import ORGS_DIR, tool

    backtest_tool = tool("forecast_backtest")
    argv = ["forecast_backtest", "--org", str(ORGS_DIR / "research.yaml"), *args]
    monkeypatch.setattr("sys.argv", argv)
    backtest_tool.main()


def test_the_backtest_tool_fits_a_calibration_on_a_recorded_workload_and_runs_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    workload = busy_workload(tmp_path / "history.csv", jobs=160)
    saved = tmp_path / "calibration.json"
    common = ("--workload", str(workload), "--arrivals", "off", "--samples", "12", "--json")
    run_tool(monkeypatch, *common, "--save-calibration", str(saved))
    plain = json.loads(capsys.readouterr().out)["arrivals off"]["overall, waits"]
    fitted = load_calibration(saved)
    assert fitted.fitted_on == "recorded history.csv, 12 samples" and fitted.jobs >= MIN_JOBS
    assert fitted.judged is None  # one week of forecasts: no other period to judge it with
    run_tool(monkeypatch, *common, "--calibration", str(saved))
    calibrated = json.loads(capsys.readouterr().out)["arrivals off"]["overall, waits"]
    assert calibrated["jobs"] == plain["jobs"]
    # fitted on these very forecasts: at least 90 % of those forecast to wait are covered; the
    # few forecast to start now that waited are left as they were
    assert plain["p90Coverage"] < 0.5 and calibrated["p90Coverage"] >= 0.85
    assert calibrated["intervalCoverage"] > plain["intervalCoverage"] + 0.3


def test_the_backtest_tool_says_why_it_cannot_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workload = busy_workload(tmp_path / "quiet.csv", jobs=12)
    saved = tmp_path / "calibration.json"
    args = ("--workload", str(workload), "--arrivals", "off", "--save-calibration", str(saved))
    with pytest.raises(SystemExit) as stopped:
        run_tool(monkeypatch, *args, "--json")
    assert "at least 30 are needed" in str(stopped.value) and not saved.exists()
    with pytest.raises(SystemExit) as stopped:
        run_tool(monkeypatch, "--arrivals", "off", "auto", "--save-calibration", str(saved))
    assert stopped.value.code == 2


def quota(*args: str) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    from quota_constructs.commands import app

    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def test_quota_forecast_calibrate_fits_on_recorded_workloads_and_the_commands_read_it(
    tmp_path: Path,
) -> None:
    from tests.helpers import ORGS_DIR

    history = busy_workload(tmp_path / "history.csv", jobs=160)
    out = tmp_path / "calibration.json"
    org = str(ORGS_DIR / "research.yaml")
    args = ("forecast", "calibrate", org, "--workload", str(history), "-o", str(out))
    code, stdout, stderr = quota(*args, "--arrivals", "off", "--samples", "12", "--json")
    assert code == 0, stderr
    report = json.loads(stdout)
    assert report["calibration"] == json.loads(out.read_text())
    assert report["calibration"]["fittedOn"] == "recorded history.csv, 12 samples"
    assert report["calibration"]["shares"] == ["data-analysis", "generative", "recommendation"]
    assert report["uncalibratedWaits"]["p90Coverage"] < 0.5
    assert report["heldOut"] is None and "heldOut" not in report["calibration"]
    assert report["heldOutReason"].startswith("periods: 1 backtested; judging a calibration")
    assert "backtested history.csv: " in stderr
    fitted = load_calibration(out)
    assert fitted.upper_shift > 0 and fitted.jobs >= MIN_JOBS


def test_quota_forecast_calibrate_judges_the_fit_on_each_period_held_out(
    tmp_path: Path,
) -> None:
    from tests.helpers import ORGS_DIR

    periods = [busy_workload(tmp_path / f"week{n}.csv", jobs=160, seed=n) for n in (1, 2)]
    out = tmp_path / "calibration.json"
    args = ["forecast", "calibrate", str(ORGS_DIR / "research.yaml"), "-o", str(out)]
    for period in periods:
        args += ["--workload", str(period)]
    code, stdout, stderr = quota(*args, "--arrivals", "off", "--samples", "12", "--json")
    assert code == 0, stderr
    report = json.loads(stdout)
    judged = report["heldOut"]
    assert judged["periods"] == 2 and "heldOutReason" not in report
    assert judged["jobs"] > 2 * MIN_JOBS
    low, high = judged["intervalCoverage95"]
    assert low <= judged["intervalCoverage"] <= high
    kept = load_calibration(out).judged  # the file keeps the figures; each forecast shows them
    assert kept == Judged(judged["intervalCoverage"], judged["p90Coverage"], 2)


def test_quota_forecast_calibrate_judges_one_recorded_history_period_by_period(
    tmp_path: Path,
) -> None:
    """One recording of three days, cut into days: the second and the third are each judged
    with a fit on the other (the first is the backtest's warm-up, never forecast)."""
    from tests.helpers import ORGS_DIR

    history = busy_workload(tmp_path / "history.csv", jobs=240, days=3)
    out = tmp_path / "calibration.json"
    args = ["forecast", "calibrate", str(ORGS_DIR / "research.yaml"), "-o", str(out)]
    args += ["--workload", str(history), "--period-days", "1", "--arrivals", "off"]
    code, stdout, stderr = quota(*args, "--samples", "12", "--json")
    assert code == 0, stderr
    assert json.loads(stdout)["heldOut"]["periods"] == 2
    assert load_calibration(out).judged is not None


def test_quota_forecast_calibrate_says_what_is_missing_or_wrong(tmp_path: Path) -> None:
    from tests.helpers import ORGS_DIR

    org, out = str(ORGS_DIR / "research.yaml"), str(tmp_path / "c.json")
    code, _, stderr = quota("forecast", "calibrate", org, "-o", out)
    assert code == 2 and "--workload FILE (recorded) or --teams TEAMS.yaml" in stderr
    quiet = busy_workload(tmp_path / "quiet.csv", jobs=12)
    code, _, stderr = quota("forecast", "calibrate", org, "--workload", str(quiet), "-o", out)
    assert code == 1 and "at least 30 are needed" in stderr and not Path(out).exists()
    code, _, stderr = quota(
        "forecast", "calibrate", org, "--workload", str(quiet), "-o", out, "--arrivals", "x"
    )
    assert code == 2 and "--arrivals 'x' is not one of auto, on, off" in stderr


def test_a_backtest_puts_the_workloads_time_0_where_it_is_told() -> None:
    """A recorded history began on a Wednesday, not on the generated weeks' Monday: the state
    the forecast reads (now, submit and start times) is in its real epoch seconds."""
    queue = JobQueueSpec(shares=(QuotaShareSpec("a", {GPU: 1}, SharingStrategy.RESERVE),))
    sched = Scheduler.for_queue(queue, queue_name="q")
    sched.submit(JobRequest("j", "a", {GPU: 1}, duration_s=HOUR, job_id="j"), now=100.0)
    sched.advance(200.0)
    wednesday = EPOCH_S + 2 * 86400
    state = queue_state(sched, queue, 200.0, epoch_s=wednesday)
    assert state.now_s == wednesday + 200.0
    (running,) = state.running
    assert running.created_s == wednesday + 100.0
    assert running.started_s is not None and running.started_s >= wednesday + 100.0
    assert queue_state(sched, queue, 200.0).now_s == EPOCH_S + 200.0


def test_quota_forecast_calibrate_fits_on_the_teams_generated_days(tmp_path: Path) -> None:
    from tests.helpers import ORGS_DIR, ROOT

    out = tmp_path / "c.json"
    teams = str(ROOT / "stacks" / "teams" / "research.yaml")
    args = ("--teams", teams, "--days", "2", "--seed", "1", "--seed", "2", "--samples", "12")
    code, stdout, stderr = quota(
        "forecast", "calibrate", str(ORGS_DIR / "research.yaml"), *args, "-o", str(out)
    )
    assert code == 0, stderr
    assert stderr.splitlines()[:2] == [
        line for line in stderr.splitlines() if line.startswith("backtested seed ")
    ]
    fitted = load_calibration(out)
    assert fitted.fitted_on == "research.yaml, generated, 2 days, seeds 1 2, 12 samples"
    assert stdout.startswith(f"wrote {out}: bounds calibrated on {fitted.jobs} backtest")
    assert "(80 % meant)" in stdout and "(90 % meant)" in stdout
    # two days of each seed are too few forecasts to fit on one and judge on the other
    assert stdout.splitlines()[-1].startswith(
        "not judged held out: the fit without period 1: jobs forecast to wait: "
    )


def test_a_calibration_fitted_for_other_shares_says_so_and_still_applies() -> None:
    other = Calibration(-0.4, 0.5, 120, fitted_on="tests", shares=("x", "y"))
    result = forecast(queue(), samples=20, calibration=other)
    notes = [c for c in result.caveats if "fitted for shares x, y" in c]
    assert notes == [
        "the calibration was fitted for shares x, y, this queue has a: its bounds may be off; "
        "fix: fit one on this queue (quota forecast calibrate)"
    ]
    matching = forecast(queue(), samples=20, calibration=replace(other, shares=("a",)))
    assert not [c for c in matching.caveats if "fitted for" in c]
    assert result.jobs["w"].p90_s == matching.jobs["w"].p90_s
