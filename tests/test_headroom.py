"""The headroom search on systems whose answer is known in closed form: an M/M/1 queue with a mean
response-time service level, and a closed network whose response time follows exact MVA."""

from __future__ import annotations

import pytest

from storagelab import theory
from storagelab.headroom import ServiceLevel, headroom
from storagelab.kernel import ClosedSource, Exponential, FixedSampler, OpenSource, Path, Station
from storagelab.simulation import simulate

SAMPLER = FixedSampler(size=4096, span=10**9)


def test_mm1_headroom_matches_the_closed_form():
    """Poisson arrivals at 100/s x m on one exponential server of 1,000/s, mean response <= 2 ms:
    1 / (1000 - 100 m) = 0.002 gives m = 5. The search finds where the simulation crosses the limit (the
    limit holds just under the interval and fails just over it, in every replication), and that is the
    closed form within 2 % (the kernel's M/M/1 means are validated to about that: 5 x 200 s at m = 5.012
    measured 1.993 ms where theory says 2.005, -0.6 %). The server is the bottleneck."""

    def run(m, seed):
        disk = Station("disk", Exponential(1e-3), servers=1)
        src = OpenSource("io", disk, SAMPLER, rate=100.0 * m, cls="io")
        return simulate(disk, [src], duration=200.0, warmup=2.0, seed=seed, progress=False)

    level = ServiceLevel("io", "mean_ms", 2.0)
    h = headroom(run, [level], low=1.0, high=9.9, replications=3, tolerance=0.005)
    for seed in (1, 2, 3):
        assert level.ratio(run(h.low * 0.99, seed).summary()) <= 1.0
        assert level.ratio(run(h.high * 1.01, seed).summary()) > 1.0
    exact = (1000 - 1 / 0.002) / 100
    assert h.mean == pytest.approx(exact, rel=0.02)
    assert h.bottleneck == "disk" and h.bottleneck_utilisation > 0.45
    assert h.fails_first == "io mean_ms <= 2 ms" and h.fail_ratio > 1


def test_closed_network_headroom_is_the_mva_population():
    """Workers cycling through a CPU (2 ms) and a disk (5 ms), both exponential single servers, no think
    time; response time <= 37.5 ms. Exact MVA gives the largest population meeting it; the integer search
    over the number of workers finds it in every replication."""
    demands = [2e-3, 5e-3]
    mva = theory.mva_closed(20, demands)
    n_star = max(n for n in range(1, 21) if mva.response_time[n - 1] <= 0.0375)

    def run(m, seed):
        cpu = Station("cpu", Exponential(demands[0]), servers=1)
        disk = Station("disk", Exponential(demands[1]), servers=1)
        path = Path("job", [cpu, disk])
        src = ClosedSource("job", path, SAMPLER, workers=int(m), cls="job")
        return simulate(path, [src], duration=200.0, warmup=5.0, seed=seed, progress=False)

    h = headroom(run, [ServiceLevel("job", "mean_ms", 37.5)], low=1, high=20, replications=3, integer=True)
    # the simulated mean response at n_star and n_star + 1 lies within noise of the limit only if the MVA
    # value does; here MVA puts n_star at least 4 % under and n_star + 1 at least 4 % over
    assert mva.response_time[n_star - 1] < 0.96 * 0.0375 < 0.0375 * 1.04 < mva.response_time[n_star]
    assert set(h.per_replication) == {float(n_star)}
    assert h.bottleneck == "disk"


def test_bad_brackets_and_levels_are_refused():
    def run(m, seed):
        disk = Station("disk", Exponential(1e-3), servers=1)
        return simulate(disk, [OpenSource("io", disk, SAMPLER, rate=100.0 * m, cls="io")], duration=5.0,
                        warmup=0.5, seed=seed, progress=False)  # fmt: skip

    with pytest.raises(ValueError, match="already fail at the lowest"):
        headroom(run, [ServiceLevel("io", "mean_ms", 1.0)], low=9.0, high=9.5)
    with pytest.raises(ValueError, match="still hold at the highest"):
        headroom(run, [ServiceLevel("io", "mean_ms", 50.0)], low=0.1, high=2.0)
    with pytest.raises(ValueError, match="metric must be one of"):
        ServiceLevel("io", "p95", 5.0)
