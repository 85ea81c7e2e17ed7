"""Fitted curves: exact recovery on synthetic data, the closed-system bounds, and honest few-point fits."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from storagelab.published import curves


def param(fit: curves.CurveFit, name: str) -> curves.Parameter:
    return next(p for p in fit.parameters if p.name == name)


# --- closed system (exact MVA) ---


def test_mva_matches_its_limits():
    d, z = 2e-4, 8e-4
    x = curves.mva_throughput(np.array([1, 2, 1000]), d, z)
    assert x[0] == pytest.approx(1 / (d + z))  # one worker: no queueing
    assert x[2] == pytest.approx(1 / d, rel=1e-6)  # saturation at the bottleneck's rate
    n = np.arange(1, 200)
    xs = curves.mva_throughput(n, d, z)
    assert np.all(xs <= np.minimum(n / (d + z), 1 / d) * (1 + 1e-12))  # both asymptotic bounds
    assert np.all(np.diff(xs) >= -1e-12 * xs[1:])  # non-decreasing (flat at saturation)


def test_mva_two_workers_by_hand():
    # n=1: R=D, X=1/(D+Z), Q=D/(D+Z); n=2: R=D(1+Q1), X=2/(Z+R)
    d, z = 1.0, 3.0
    q1 = d / (d + z)
    assert curves.mva_throughput(np.array([2]), d, z)[0] == pytest.approx(2 / (z + d * (1 + q1)))


def test_closed_system_fit_recovers_known_parameters():
    pop = np.array([1, 2, 4, 8, 16, 32, 64])
    x = curves.mva_throughput(pop, 1e-4, 5e-4)
    fit = curves.fit_closed_system(pop, x, name="synthetic")
    assert param(fit, "service_demand").estimate == pytest.approx(1e-4, rel=1e-6)
    assert param(fit, "delay").estimate == pytest.approx(5e-4, rel=1e-6)
    assert fit.dof == 5
    assert fit.max_abs_relative_residual < 1e-8


def test_closed_system_intervals_cover_truth_with_noise():
    rng = np.random.default_rng(2024)
    pop = np.array([1, 2, 4, 8, 16, 32, 64, 128])
    x = curves.mva_throughput(pop, 1e-4, 5e-4) * np.exp(rng.normal(0, 0.02, pop.size))
    fit = curves.fit_closed_system(pop, x, name="noisy", confidence=0.99)
    d, z = param(fit, "service_demand"), param(fit, "delay")
    assert d.lower < 1e-4 < d.upper
    assert z.lower < 5e-4 < z.upper
    band = fit.predict(pop)
    assert (band["lower"] < band["fit"]).all() and (band["fit"] < band["upper"]).all()


def test_closed_system_prediction_respects_qd1_limit():
    fit = curves.fit_closed_system([16, 32, 64], [22300, 37000, 39500], name="all-flash")
    floor = param(fit, "min_latency").estimate
    n = np.arange(1, 257)
    pred = fit.predict(n)["fit"].to_numpy()
    assert np.all(pred <= n / floor * (1 + 1e-9))
    assert np.all(pred <= param(fit, "max_throughput").estimate * (1 + 1e-9))


def test_one_point_is_not_fitted():
    with pytest.raises(curves.InsufficientData, match="1 point"):
        curves.fit_closed_system([64], [11500], name="hybrid")


def test_as_many_points_as_parameters_gives_no_interval():
    fit = curves.fit_closed_system([16, 64], [22300, 39500], name="two")
    assert not fit.has_intervals
    assert fit.predict([32])["lower"].null_count() == 1
    assert "no interval" in fit.summary()["notes"][0]


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="populations must be >= 1"):
        curves.fit_closed_system([0, 2], [1, 2], name="bad")
    with pytest.raises(ValueError, match="equal length"):
        curves.fit_closed_system([1, 2, 3], [1, 2], name="bad")


# --- service-level curve ---


@pytest.mark.parametrize(
    ("distribution", "truth"),
    [("lognormal", stats.lognorm(0.7, scale=0.9)), ("weibull", stats.weibull_min(1.3, scale=1.1))],
)
def test_service_level_fit_recovers_a_known_distribution(distribution, truth):
    t = np.array([0.5, 1, 2, 5, 10])
    fit = curves.fit_service_level(t, 100 * truth.cdf(t), name="synthetic", distribution=distribution)
    assert param(fit, "median").estimate == pytest.approx(truth.median(), rel=1e-9)
    assert param(fit, "mean").estimate == pytest.approx(truth.mean(), rel=1e-9)
    grid = np.geomspace(0.1, 30, 7)
    assert fit.predict(grid)["fit"].to_numpy() == pytest.approx(100 * truth.cdf(grid), rel=1e-9)


def test_service_level_points_at_100_percent_are_reported_not_used():
    fit = curves.fit_service_level([1, 2, 10, 30], [71, 95.5, 99.5, 100], name="v2")
    assert fit.points.height == 4
    assert fit.points["used_in_fit"].to_list() == [True, True, True, False]
    assert fit.n_points == 3
    assert any("100 %" in n for n in fit.notes)


def test_service_level_rejects_impossible_shares():
    with pytest.raises(ValueError, match="0-100"):
        curves.fit_service_level([1, 2], [50, 120], name="bad")
    with pytest.raises(ValueError, match="distribution must be one of"):
        curves.fit_service_level([1, 2], [50, 60], name="bad", distribution="gamma")


# --- response time against load ---


def test_response_time_fit_recovers_the_single_queue_law():
    x = np.array([1000, 2000, 3000, 4000, 5000.0])
    r = 10.0 / (1 - x / 8000)
    fit = curves.fit_response_time(x, r, name="synthetic")
    assert param(fit, "service_time").estimate == pytest.approx(10.0, rel=1e-9)
    assert param(fit, "saturation_throughput").estimate == pytest.approx(8000, rel=1e-9)
    assert fit.predict([6000])["fit"][0] == pytest.approx(40.0, rel=1e-9)


def test_flat_response_time_reports_no_saturation():
    fit = curves.fit_response_time([1000, 2000, 3000], [5.0, 5.0, 4.9], name="flat")
    assert param(fit, "saturation_throughput").estimate == np.inf
    assert any("no saturation" in n for n in fit.notes)


# --- the published curve set ---


def test_published_curves_report_a_residual_for_every_fitted_point(published):
    cs = curves.fit_published(published)
    assert set(cs.families) == {
        "vsan_throughput",
        "vsan_service_level",
        "ds5020_throughput",
        "ds5020_response_time",
    }
    residuals = cs.residuals()
    measured_af = published.filter(
        study="vsan", metric="iops", configuration="all-flash NVMe", kind="measured"
    )
    assert set(measured_af["row_id"]) <= set(residuals["row_id"])
    assert residuals["fitted"].is_finite().all()
    # hybrid configurations publish one IOPS point each: listed as skipped, with the reason
    assert set(cs.skipped["series"]) == {"hybrid Xeon E5 v2", "hybrid Xeon E5 v3"}
    # every fit with residual degrees of freedom reports finite CIs on its primary parameters
    for fit in cs.fits():
        if fit.has_intervals:
            p = fit.parameters[0]
            assert p.lower < p.estimate < p.upper, fit.name


def test_ds5020_jetstress_fits_are_close_to_table_2(published):
    cs = curves.fit_published(published)
    tp = cs.families["ds5020_throughput"]["Jetstress"]
    assert tp.points.height == 4
    assert tp.max_abs_relative_residual < 0.05
    rt = cs.families["ds5020_response_time"]["Jetstress"]
    assert rt.points["observed"].to_list() == [14.0, 14.0, 16.0, 17.0]


def test_littles_law_check_only_where_the_fit_has_residual_freedom(published):
    cs = curves.fit_published(published)
    check = curves.vsan_littles_law_check(published, cs)
    no_dof = check.filter(pl.col("fit_dof") == 0)
    assert no_dof["iops_from_latency"].null_count() == no_dof.height
    with_pub = check.filter(pl.col("published_within_interval").is_not_null())
    assert with_pub.height >= 1


def test_round_off_residuals_are_reported_as_zero():
    """An exact fit shows residual 0 on every machine; a real misfit is kept, however small."""
    import numpy as np

    from storagelab.published.curves.base import residual_frame

    observed = np.array([86.0, 22300.0, 0.014])
    fitted = observed * np.array([1 + 1e-15, 1 - 3e-16, 1 + 1e-9])
    frame = residual_frame(np.arange(3.0), observed, fitted, np.ones(3, bool), ["a", "b", "c"])
    assert frame["residual"].to_list()[:2] == [0.0, 0.0]
    assert frame["relative_residual"][2] == pytest.approx(1e-9, rel=1e-3)
