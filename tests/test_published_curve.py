"""Published curves as stations: the load-dependent server reproduces the curve it is built from, and
says when a run leaves the published range."""

from __future__ import annotations

import numpy as np
import pytest

from storagelab import theory
from storagelab.components.published_curve import (
    LoadDependentStation,
    closed_system_station,
    response_time_station,
)
from storagelab.kernel import ClosedSource, FixedSampler, OpenSource
from storagelab.kernel.component import BEYOND_RANGE
from storagelab.kernel.simulation import simulate
from storagelab.published.curves import fit_closed_system, fit_response_time

SAMPLER = FixedSampler(size=4096, span=10**9)


def _open(station, rate, duration=200.0, seed=1):
    src = OpenSource("io", station, SAMPLER, rate=rate, cls="io")
    return simulate(station, [src], duration=duration, warmup=5.0, seed=seed, progress=False)


def _stat(res, name):
    return res.components().filter(statistic=name)["value"][0]


def test_a_constant_rate_is_mm1():
    """rate(n) = 1,000/s for every n is M/M/1: at 700/s the mean response is 1 / (1000 - 700) s."""
    res = _open(LoadDependentStation("s", lambda n: 1000.0), 700.0)
    assert res.summary()["mean_ms"][0] == pytest.approx(1e3 / 300, rel=0.03)
    assert _stat(res, "utilisation") == pytest.approx(0.7, rel=0.02)


@pytest.mark.parametrize("rho", [0.3, 0.6, 0.8])
def test_the_response_time_law_is_reproduced(rho):
    """From points on R = S / (1 - X/Xsat) with S = 4 ms and Xsat = 1,000/s (k = S Xsat = 4 servers'
    worth, not M/M/1), the station's mean response at X = rho Xsat is the law's value, within 4 %."""
    x = np.array([100.0, 300.0, 500.0, 700.0, 850.0])
    fit = fit_response_time(x, 4.0 / (1 - x / 1000.0), name="law")
    station = response_time_station("law", fit)
    res = _open(station, rho * 1000.0, duration=300.0)
    assert res.summary()["mean_ms"][0] == pytest.approx(4.0 / (1 - rho), rel=0.04)
    assert _stat(res, BEYOND_RANGE) == 0.0


def test_the_flow_equivalent_server_gives_the_published_throughput():
    """Points from exact MVA of a 1 ms queue and a 2 ms delay at 2..32 outstanding IOs; with N IOs always
    present (N QD1 workers, no think time) the station completes X(N) IO/s, the curve's value."""
    pops = np.array([2, 4, 8, 16, 32])
    xs = [theory.mva_closed(int(n), [1e-3], delay=2e-3).throughput[-1] for n in pops]
    fit = fit_closed_system(pops, xs, name="mva", population_name="IOs")
    for n in (3, 12, 30):
        station = closed_system_station("fes", fit)
        src = ClosedSource("io", station, SAMPLER, workers=n, cls="io")
        res = simulate(station, [src], duration=100.0, warmup=2.0, seed=2, progress=False)
        exact = theory.mva_closed(n, [1e-3], delay=2e-3).throughput[-1]
        assert res.summary()["iops"][0] == pytest.approx(exact, rel=0.02)
        assert _stat(res, BEYOND_RANGE) == 0.0
    station = closed_system_station("fes", fit)  # 40 outstanding IOs: past the last published point
    src = ClosedSource("io", station, SAMPLER, workers=40, cls="io")
    res = simulate(station, [src], duration=20.0, warmup=2.0, seed=2, progress=False)
    assert _stat(res, BEYOND_RANGE) == 1.0


def test_past_the_published_throughput_the_station_says_so_and_bands_bracket_the_fit():
    x = np.array([100.0, 300.0, 500.0, 700.0])
    r = 4.0 / (1 - x / 1000.0) * np.array([1.03, 0.97, 1.02, 0.99])  # scatter, so the fit has an interval
    fit = fit_response_time(x, r, name="law")
    assert _stat(_open(response_time_station("law", fit), 800.0, duration=30.0), BEYOND_RANGE) == 1.0
    means = [
        _open(response_time_station("law", fit, bound), 600.0, duration=100.0).summary()["mean_ms"][0]
        for bound in ("upper", "fit", "lower")
    ]
    assert means[0] < means[1] < means[2]  # the fast end, the fit, the slow end
    with pytest.raises(ValueError, match="must be a positive number"):
        _open(LoadDependentStation("s", lambda n: 0.0), 10.0, duration=10.0)
