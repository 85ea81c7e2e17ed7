"""The calibration with uncertainty (issue 68): each point's predictive interval over the draws of the
uncertain parameters its scenario reads, its drivers, the leave-one-out of a fit on its own rows, and the
same numbers in any process, on synthetic scenarios whose value is set by the test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from storagelab.architectures.parameters import ParamSet
from storagelab.calibration import UNCERTAINTY_COLUMNS, Point, Scenario, run_scenarios
from storagelab.provenance import Param
from storagelab.uncertainty import LogUniform, Uniform
from storagelab.uncertainty.propagation import interval, predictive_sample, stability

# two real rows of datasets/ (vplex): a ratio near 1 and a latency in us
RATIO, LATENCY = "geo-drain-rate-limit", "write-adder-local-range-low"


def _params() -> dict[str, Param]:
    return {
        "rate": Param(1000.0, "IOPS", "assumption", "test: 500-1500", uncertainty=Uniform(500.0, 1500.0)),
        "idle": Param(0.5, "ratio", "assumption", "test: read, unused", uncertainty=Uniform(0.1, 0.9)),
        "cost": Param(
            200.0, "us", "fit", "test: fitted on the latency row", fitted_on=(LATENCY,),
            uncertainty=Uniform(190.0, 210.0), prior=LogUniform(50.0, 800.0),
        ),
    }  # fmt: skip


def _scenario(noise: float = 0.01) -> Scenario:
    ratio, latency = Point("vplex", RATIO, "ratio"), Point("vplex", LATENCY, "latency")

    def run(seed: int, quick: bool) -> dict[str, float]:
        ps = ParamSet("toy", _params())
        ps["idle"]  # read, recorded and drawn, but the output does not depend on it
        jitter = np.random.default_rng(seed).normal(0.0, noise)
        return {ratio.key: ps["rate"].value / 1000.0 + jitter, latency.key: ps["cost"].value / 1000.0}

    return Scenario("vplex", "toy", (ratio, latency), run)


def _run(n: int = 16, workers: int | None = 1):
    return run_scenarios(
        [_scenario()], set(), replications=3, sensitivity=False, seed=1, uncertainty=n, workers=workers
    )


@pytest.fixture(scope="module")
def table():
    return _run().to_frame()


def test_every_point_gets_its_predictive_interval_from_the_draws(table):
    assert set(UNCERTAINTY_COLUMNS) <= set(table.columns)
    row = table.row(0, named=True)  # the ratio: rate drawn uniform on [0.5, 1.5], plus noise of sd 0.01
    assert row["draws"] == 16
    assert row["low95"] <= row["low80"] < row["median"] < row["high80"] <= row["high95"]
    # the 10 % and 90 % quantiles of U(0.5, 1.5) are 0.6 and 1.4; 16 balanced draws land near them
    assert row["low80"] == pytest.approx(0.6, abs=0.07) and row["high80"] == pytest.approx(1.4, abs=0.07)
    assert row["median"] == pytest.approx(1.0, abs=0.07)
    assert 0 <= row["halving_shift"] < 0.5


def test_the_parameter_that_decides_a_point_is_named_first(table):
    drivers = table.row(0, named=True)["drivers"]
    assert drivers.startswith("toy: rate ("), drivers


def test_a_fit_on_a_point_s_own_row_is_drawn_from_its_prior(table):
    ratio, latency = table.row(0, named=True), table.row(1, named=True)
    assert latency["left_out_of_fit"] and not ratio["left_out_of_fit"]
    # drawn from the prior (50-800 us, in ms here), not from the fit's own spread (190-210 us)
    assert latency["low80"] < 0.15 and latency["high80"] > 0.4
    assert latency["simulated"] == pytest.approx(0.2)  # the nominal run keeps the fitted value


def test_the_same_seed_gives_the_same_intervals_here_and_on_workers(table):
    again = _run(workers=2).to_frame()
    assert again.select(UNCERTAINTY_COLUMNS).equals(table.select(UNCERTAINTY_COLUMNS))


def test_without_uncertainty_the_table_has_no_interval_columns():
    plain = run_scenarios([_scenario()], set(), replications=3, sensitivity=False, seed=1)
    assert not set(UNCERTAINTY_COLUMNS) & set(plain.to_frame().columns)


def test_a_scenario_with_no_uncertain_parameter_reports_its_noise_alone():
    p = Point("vplex", RATIO, "ratio")
    sc = Scenario("vplex", "plain", (p,), lambda seed, quick: {p.key: 1.0 + seed / 100})
    row = (
        run_scenarios([sc], set(), replications=3, sensitivity=False, seed=1, uncertainty=8)
        .to_frame()
        .row(0, named=True)
    )
    assert row["draws"] == 0 and row["drivers"] == ""
    # replications 1.01, 1.02, 1.03: centred on their mean, with the Student-t noise of one new run
    # (s = 0.01, sqrt(1 + 1/3), t with 2 degrees of freedom: 4.303 at 97.5 %)
    assert row["median"] == pytest.approx(1.02)
    assert row["high95"] - row["median"] == pytest.approx(0.01 * math.sqrt(4 / 3) * 4.303, rel=0.02)


def test_predictive_sample_centres_the_draws_on_the_replications_and_adds_a_new_run_s_noise():
    sample = predictive_sample([10.0, 20.0], [1.0, 2.0, 3.0])  # draws at the first replication's seed
    per_draw = sample.reshape(2, -1)
    assert np.median(per_draw[0]) == pytest.approx(11.0) and np.median(per_draw[1]) == pytest.approx(21.0)
    # one new run's noise: wider than the replications' own deviations (+-1)
    assert np.quantile(per_draw[0], 0.9) - 11.0 > 1.0
    assert predictive_sample([10.0, math.nan], [1.0]).tolist() == [10.0]  # one replication: no noise known
    assert math.isnan(interval([math.nan], [1.0, 2.0]).median)


def test_a_repeat_that_shares_the_seed_s_noise_changes_nothing_and_own_noise_narrows_the_added_term():
    """``repeats``: draw 0 run again at the second replication's seed. Replications 1, 2, 3 (s = 1)."""
    reps = [1.0, 2.0, 3.0]
    plain = predictive_sample([10.0, 20.0], reps)
    # the repeat moved exactly as the replications did (2 - 1): the draw carries the seed's noise, w = 0
    assert np.array_equal(predictive_sample([10.0, 20.0], reps, repeats=[11.0]), plain)
    # D = (10 - 1) - (10 - 2) = 1, so w = 1 / 4 and a^2 = 1 + 1/3 - 2 (1/4)(4/3) + 2 / 16 = 0.7917
    own = predictive_sample([10.0, 20.0], reps, repeats=[10.0]).reshape(2, -1)
    width = np.quantile(own[0], 0.975) - np.median(own[0])
    assert width / (np.quantile(plain.reshape(2, -1)[0], 0.975) - 11.0) == pytest.approx(
        math.sqrt(0.7917 / (4 / 3)), rel=1e-3
    )
    assert np.median(own[0]) == pytest.approx(11.0)  # the draws are moved as before
    # a repeat whose run failed is left out; a repeat for the replications' mean is refused
    assert np.array_equal(predictive_sample([10.0, 20.0], reps, repeats=[math.nan]), plain)
    with pytest.raises(ValueError, match="target 'run'"):
        predictive_sample([10.0], reps, target="mean", repeats=[10.0])


def test_the_mean_s_noise_has_welch_satterthwaite_s_degrees_of_freedom():
    """``target="mean"``: replications 1, 2, 3 (s = 1, u = s / sqrt(3)). Draws that agree leave the noise
    the whole interval, a t with 2 degrees of freedom; draws spread 30 times wider make it a normal term
    (nu = (tau^2 + u^2)^2 / (u^4 / 2) is about 1.6 million), not a t with 2: its 90 % point 1.28 u, not
    1.89 u; the run's noise (``target="run"``) keeps n - 1 whatever the draws."""
    reps = [1.0, 2.0, 3.0]
    u = 1 / math.sqrt(3)

    def ninety(draws: list[float], target: str = "mean") -> float:
        first = predictive_sample(draws, reps, target=target).reshape(len(draws), -1)[0]  # type: ignore[arg-type]
        return float(np.quantile(first, 0.9) - np.median(first))

    assert ninety([10.0, 10.0]) == pytest.approx(u * stats.t.ppf(0.9, 2), rel=0.01)
    spread = [10.0 + 30 * k * u for k in range(-8, 8)]
    assert ninety(spread) == pytest.approx(u * stats.norm.ppf(0.9), rel=0.01)
    assert ninety(spread, "run") == pytest.approx(math.sqrt(4 / 3) * stats.t.ppf(0.9, 2), rel=0.01)


def test_the_calibration_runs_the_first_draw_again_at_the_second_seed():
    lines: list[str] = []
    run_scenarios([_scenario()], set(), replications=3, sensitivity=False, seed=1, uncertainty=4,
                  progress=lines.append)  # fmt: skip
    again = [x.split("] ", 1)[1] for x in lines if x.endswith("again")]
    assert again == ["vplex: toy, seed 2, parameter draw 1 again"], lines
    assert len(lines) == 3 + 4 + 1  # the replications, the draws, one repeat


def test_stability_is_the_bounds_shift_on_half_the_draws_over_the_width():
    draws = [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]
    assert stability(draws, [0.0, 0.0]) == 0.0  # the first half is the same sample
    assert stability([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 10.0, 10.0], [0.0, 0.0]) > 0.5
    assert math.isnan(stability([1.0, math.nan, 2.0, 3.0], [0.0, 0.0]))


def test_a_negative_or_fractional_number_of_draws_is_refused():
    with pytest.raises(ValueError, match="whole number of draws"):
        run_scenarios([_scenario()], set(), replications=2, sensitivity=False, uncertainty=-1)


def test_the_command_refuses_a_negative_number_of_draws_before_any_run():
    from typer.testing import CliRunner

    from storagelab.cli import app

    result = CliRunner().invoke(app, ["calibrate", "--study", "vplex", "--quick", "--uncertainty", "-2"])
    assert result.exit_code != 0 and "--uncertainty must be a number of draws >= 0, got -2" in result.output
    assert "Traceback" not in result.output
