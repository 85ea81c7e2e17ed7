"""The headroom search on systems whose answer is known in closed form: an M/M/1 queue with a mean
response-time service level, and a closed network whose response time follows exact MVA."""

from __future__ import annotations

import math

import polars as pl
import pytest

from storagelab import theory
from storagelab.analysis.headroom import (
    BEYOND_RANGE,
    ClearOutcome,
    LatencyObjective,
    OutsideBracket,
    headroom,
)
from storagelab.kernel import ClosedSource, Exponential, FixedSampler, OpenSource, Path, Station
from storagelab.kernel.simulation import simulate

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

    level = LatencyObjective("io", "mean_ms", 2.0)
    h = headroom(run, [level], low=1.0, high=9.9, replications=3, tolerance=0.005)
    for seed in (1, 2, 3):
        assert level.ratio(run(h.low * 0.99, seed)) <= 1.0
        assert level.ratio(run(h.high * 1.01, seed)) > 1.0
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

    h = headroom(
        run, [LatencyObjective("job", "mean_ms", 37.5)], low=1, high=20, replications=3, integer=True
    )
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

    with pytest.raises(
        OutsideBracket, match=r"lowest multiplier 9 .* io mean_ms <= 1 ms already fails"
    ) as err:
        headroom(run, [LatencyObjective("io", "mean_ms", 1.0)], low=9.0, high=9.5)
    assert (err.value.side, err.value.multiplier, err.value.failing) == ("low", 9.0, "io mean_ms <= 1 ms")
    with pytest.raises(OutsideBracket, match="still hold at the highest") as err:
        headroom(run, [LatencyObjective("io", "mean_ms", 50.0)], low=0.1, high=2.0, start=0.3)
    assert (err.value.side, err.value.multiplier) == ("high", 2.0)
    with pytest.raises(OutsideBracket) as err:  # walking down from start reaches low and still fails
        headroom(run, [LatencyObjective("io", "mean_ms", 1.0)], low=7.0, high=9.5, start=9.0)
    assert err.value.side == "low"
    for metric in ("p95", "p100_ms", "p0_ms", "median"):
        with pytest.raises(ValueError, match="metric must be mean_ms, or pNN_ms"):
            LatencyObjective("io", metric, 5.0)


def test_a_percentile_over_several_classes_and_a_walk_from_start():
    """Two Poisson classes of 50/s x m share one exponential server of 1,000/s; their response time is
    exponential with rate 1000 - 100 m, so the p95 of both together is ln(20) / (1000 - 100 m): at most
    6 ms up to m = 5.007. The service level measures the two classes together; the search walks out from
    start = 1, where the server is 10 % busy, to where it would saturate (m = 10, the utilisation law;
    9.9 is the bracket's top), which fails, and bisects; the second replication starts at the first's
    answer and steps by (1 + tolerance)**2. Its runs are all in ``evaluations``."""

    def run(m, seed):
        disk = Station("disk", Exponential(1e-3), servers=1)
        srcs = [OpenSource(c, disk, SAMPLER, rate=50.0 * m, cls=c) for c in ("io a", "io b")]
        return simulate(disk, srcs, duration=100.0, warmup=2.0, seed=seed, progress=False)

    level = LatencyObjective("io", "p95_ms", 6.0, members=("io a", "io b"))
    res = run(3.0, 1)
    together = res.recorder.histogram()  # every class merged
    assert level.measure(res) == pytest.approx(together.percentile(95) * 1e3)
    assert LatencyObjective("io", "mean_ms", 6.0, members=("io a", "io b")).measure(res) == pytest.approx(
        together.mean * 1e3
    )
    assert LatencyObjective("io", "p95_ms", 6.0).ratio(res) == math.inf  # no class is called "io"
    h = headroom(run, [level], low=0.5, high=9.9, start=1.0, replications=2, tolerance=0.01)
    exact = (1000 - math.log(20) / 0.006) / 100
    assert h.mean == pytest.approx(exact, rel=0.03)
    first = h.evaluations.filter(pl.col("seed") == 1)["multiplier"].unique(maintain_order=True).to_list()
    assert first[:2] == [1.0, 9.9] and all(first[0] < m < first[1] for m in first[2:])
    second = h.evaluations.filter(pl.col("seed") == 2)["multiplier"].unique(maintain_order=True).to_list()
    assert second[0] == pytest.approx(h.per_replication[0])
    assert second[1] == pytest.approx(second[0] * 1.01**2) or second[1] == pytest.approx(second[0] / 1.01**2)
    assert len(second) < len(first)  # the warm start needs fewer runs
    assert not h.censored


class _Curve(Station):
    """A station that reports leaving its valid range above a load of 1,000 IO/s."""

    def stats(self, elapsed):
        return {**super().stats(elapsed), BEYOND_RANGE: float(self.completed / elapsed > 1000)}


def test_leaving_a_valid_range_stops_the_search_and_censors_the_answer():
    """A 0.1 ms server meets a 5 ms mean up to 9,800 IO/s (m = 98 at 100/s x m), but it is valid only
    up to 1,000 IO/s (m = 10): the range, not the level, stops the search, and the answer is censored."""

    def run(m, seed):
        disk = _Curve("curve", Exponential(1e-4), servers=1)
        src = OpenSource("io", disk, SAMPLER, rate=100.0 * m, cls="io")
        return simulate(disk, [src], duration=20.0, warmup=1.0, seed=seed, progress=False)

    h = headroom(run, [LatencyObjective("io", "mean_ms", 5.0)], low=1.0, high=50.0, start=2.0, replications=2)
    assert h.censored and h.fails_first == "curve: beyond its published range"
    assert h.mean == pytest.approx(10.0, rel=0.03)


def _mm1(m: float, seed: int, stop=None):
    """Poisson arrivals at 100/s x m on one exponential server of 1,000/s for 20 s (1 s warm-up)."""
    disk = Station("disk", Exponential(1e-3), servers=1)
    src = OpenSource("io", disk, SAMPLER, rate=100.0 * m, cls="io")
    return simulate(disk, [src], duration=20.0, warmup=1.0, seed=seed, progress=False, stop=stop)


def test_checks_that_never_stop_leave_the_run_as_it_was():
    """Pausing at the checks (and measuring there) does not perturb the run: the same seed gives the
    same IOs and latencies to the last digit."""
    asked: list[float] = []

    def never(partial):
        asked.append(partial.duration)
        return False

    plain, checked = _mm1(5.0, 3), _mm1(5.0, 3, stop=never)
    assert asked == pytest.approx([1.0 + 19.0 * f for f in (0.125, 0.25, 0.5)])
    assert checked.summary().equals(plain.summary()) and checked.duration == plain.duration == 20.0
    assert checked.components().equals(plain.components())
    disk = Station("d", Exponential(1e-3))
    src = OpenSource("io", disk, SAMPLER, rate=100.0, cls="io")
    with pytest.raises(ValueError, match="checks must be increasing"):
        simulate(disk, [src], duration=1.0, stop=never, checks=(0.5, 0.25))


@pytest.mark.parametrize(
    ("m", "verdict"),
    [(1.0, "met"), (12.0, "missed"), (5.0, "undecided")],
)
def test_a_clear_outcome_ends_the_run_early_and_an_unclear_one_does_not(m, verdict):
    """The M/M/1 above: at m = 1 the mean response is 1.1 ms, and against a 4 ms limit (ratio 0.28) the
    level is clearly met at the second check; at m = 12 the server is overloaded (rho = 1.2) and the
    queue and the ratio to a 2 ms limit only grow: clearly missed at the second check; at m = 5 the mean
    is at its 2 ms limit and the run goes to its end, unchanged. A stopped run decides as the full run."""
    level = LatencyObjective("io", "mean_ms", 4.0 if verdict == "met" else 2.0)
    full = _mm1(m, 1)
    stopped = _mm1(m, 1, stop=ClearOutcome([level]))
    if verdict == "undecided":
        assert stopped.duration == 20.0 and stopped.summary().equals(full.summary())
        return
    assert stopped.duration == pytest.approx(1.0 + 19.0 * 0.25)  # the first check only sets the trend
    assert (level.ratio(stopped) <= 1) == (level.ratio(full) <= 1) == (verdict == "met")
