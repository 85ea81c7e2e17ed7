"""The simulation kernel against results nobody here wrote: queueing theory, exact MVA and Ciw.

Every comparison runs independent replications (different seeds) and builds a Student-t confidence
interval for the simulated mean; the analytic value must fall inside it. The level is 99.9 % so that
a correct kernel fails a given check about once in a thousand seeds — the seeds are fixed, so a run is
reproducible, and a failure means a real bias, not bad luck, unless the check sits at that margin.
Every scenario also checks Little's law: the time-averaged number of IOs in the system equals the
completion rate times the mean latency.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from storagelab import theory
from storagelab.kernel.composition import Path
from storagelab.kernel.disciplines import PriorityByClass
from storagelab.kernel.service import Deterministic, Exponential, Gamma, Lognormal
from storagelab.kernel.simulation import simulate
from storagelab.kernel.sources import ClosedSource, FixedSampler, OpenSource
from storagelab.kernel.station import Station

LEVEL = 0.999
LITTLE_TOLERANCE = 0.02  # edge effects: IOs in flight at the window's ends (tens) over >= 10^4 completions


def ci(samples: list[float], level: float = LEVEL) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of independent replication means."""
    x = np.asarray(samples)
    half = stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return x.mean(), x.mean() - half, x.mean() + half


def check_little(result) -> None:
    for row in result.littles_law().iter_rows(named=True):
        assert row["L_time_average"] == pytest.approx(row["lambda_W"], rel=LITTLE_TOLERANCE), row


def replicate(build, reps: int, duration: float, warmup: float, metric) -> list[float]:
    out = []
    for seed in range(reps):
        target, sources = build()
        res = simulate(target, sources, duration=duration, warmup=warmup, seed=1000 + seed, progress=False)
        check_little(res)
        out.append(metric(res))
    return out


def mean_ms(res, cls: str | None = None) -> float:
    s = res.summary()
    row = s.filter(s["class"] == cls) if cls else s
    return float(row["mean_ms"][0])


@pytest.mark.parametrize(("servers", "rho"), [(1, 0.7), (4, 0.8)])
def test_mmc_mean_response_matches_erlang_c(servers, rho):
    mu = 1000.0
    lam = rho * servers * mu

    def build():
        st = Station("q", Exponential(1 / mu), servers=servers)
        return st, [OpenSource("arrivals", st, FixedSampler(), rate=lam)]

    sims = replicate(build, reps=10, duration=20.0, warmup=2.0, metric=mean_ms)
    mean, lo, hi = ci(sims)
    analytic = 1e3 * theory.mmc_mean_response(lam, mu, servers)
    assert lo <= analytic <= hi, (analytic, mean, lo, hi)


@pytest.mark.parametrize(
    ("name", "service"), [("M/D/1", Deterministic(1e-3)), ("M/G/1 gamma scv 2", Gamma(1e-3, 2.0))]
)
def test_mg1_mean_response_matches_pollaczek_khinchine(name, service):
    lam = 700.0  # rho = 0.7

    def build():
        st = Station("q", service, servers=1)
        return st, [OpenSource("arrivals", st, FixedSampler(), rate=lam)]

    sims = replicate(build, reps=10, duration=20.0, warmup=2.0, metric=mean_ms)
    mean, lo, hi = ci(sims)
    analytic = 1e3 * theory.mg1_mean_response(lam, service.mean, service.scv)
    assert lo <= analytic <= hi, (name, analytic, mean, lo, hi)


def test_two_priority_classes_match_cobham():
    mean_s, lam_hi, lam_lo = 1e-3, 300.0, 450.0  # rho = 0.75, exponential service for both classes

    def build():
        st = Station(
            "q", Exponential(mean_s), servers=1, discipline=PriorityByClass({"gold": 0, "bronze": 1})
        )
        return st, [
            OpenSource("gold", st, FixedSampler(), rate=lam_hi),
            OpenSource("bronze", st, FixedSampler(), rate=lam_lo),
        ]

    waits = theory.cobham_priority_waits([lam_hi, lam_lo], [mean_s, mean_s], [2 * mean_s**2, 2 * mean_s**2])
    for cls, wait in zip(("gold", "bronze"), waits, strict=True):
        sims = replicate(build, reps=10, duration=20.0, warmup=2.0, metric=lambda r, c=cls: mean_ms(r, c))
        mean, lo, hi = ci(sims)
        analytic = 1e3 * (wait + mean_s)
        assert lo <= analytic <= hi, (cls, analytic, mean, lo, hi)


@pytest.mark.parametrize("workers", [1, 4, 16])
def test_closed_qd1_workers_match_exact_mva(workers):
    """N QD1 workers, each IO visiting 3 queueing stations in turn, then a think time: product form."""
    demands = [0.5e-3, 0.3e-3, 0.2e-3]
    think = 1e-3
    expected = theory.mva_closed(workers, demands, delay=think)

    def build():
        stations = [Station(f"s{k}", Exponential(d), servers=1) for k, d in enumerate(demands)]
        path = Path("path", stations)
        return path, [
            ClosedSource("workers", path, FixedSampler(), workers=workers, think=Exponential(think))
        ]

    def throughput(res):
        return float(res.summary()["iops"][0])

    sims_x = replicate(build, reps=8, duration=20.0, warmup=2.0, metric=throughput)
    mean, lo, hi = ci(sims_x)
    assert lo <= expected.throughput[-1] <= hi, ("throughput", expected.throughput[-1], mean, lo, hi)
    sims_r = replicate(build, reps=8, duration=20.0, warmup=2.0, metric=mean_ms)
    mean, lo, hi = ci(sims_r)
    assert lo <= 1e3 * expected.response_time[-1] <= hi, (
        "response",
        expected.response_time[-1],
        mean,
        lo,
        hi,
    )


def test_tandem_with_non_exponential_service_matches_ciw():
    """Poisson arrivals into two FIFO stations in series with lognormal and gamma service, simulated by
    storagelab and by Ciw; the two replication means must agree within their joint CI (Welch)."""
    ciw = pytest.importorskip("ciw")
    lam, s1, s2 = 600.0, Lognormal(1.2e-3, 1.5), Gamma(0.9e-3, 0.5)
    duration, warmup, reps = 20.0, 2.0, 10

    def build():
        a, b = Station("a", s1, servers=1), Station("b", s2, servers=1)
        path = Path("tandem", [a, b])
        return path, [OpenSource("arrivals", path, FixedSampler(), rate=lam)]

    ours = replicate(build, reps=reps, duration=duration, warmup=warmup, metric=mean_ms)
    sigma1 = np.sqrt(np.log1p(s1.scv))
    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(lam), None],
        service_distributions=[
            ciw.dists.Lognormal(np.log(s1.mean) - sigma1**2 / 2, sigma1),
            ciw.dists.Gamma(1 / s2.scv, s2.mean * s2.scv),
        ],
        routing=[[0.0, 1.0], [0.0, 0.0]],
        number_of_servers=[1, 1],
    )
    theirs = []
    for seed in range(reps):
        ciw.seed(seed)
        sim = ciw.Simulation(network)
        sim.simulate_until_max_time(duration)
        recs = sim.get_all_records()
        arrivals: dict[int, float] = {}
        exits: dict[int, float] = {}
        for r in recs:
            if r.node == 1:
                arrivals[r.id_number] = r.arrival_date
            else:
                exits[r.id_number] = r.exit_date
        resp = [exits[i] - t for i, t in arrivals.items() if i in exits and t >= warmup]
        theirs.append(1e3 * float(np.mean(resp)))
    result = stats.ttest_ind(ours, theirs, equal_var=False)
    assert result.pvalue > 1 - LEVEL, (np.mean(ours), np.mean(theirs), result)
