"""Checks of the analytic queueing results against independent closed forms and a brute-force CTMC.

Nothing here simulates. Tolerances are floating-point rounding bounds, stated next to each comparison.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import linalg, special

from storagelab import theory

# Both sides of most comparisons are a handful of flops apart; a relative error of 1e-12 is ~5000 ulps,
# far above double-precision rounding of such short computations yet far below any modelling error.
RTOL = 1e-12


# --- Erlang C / M/M/c -----------------------------------------------------------------------------------


def erlang_c_factorial(c: int, a: float) -> float:
    """Erlang C by its textbook closed form with factorials (fine for small c)."""
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


def erlang_c_log_space(c: int, a: float) -> float:
    """Erlang C by the closed form evaluated in log space (gammaln + logsumexp), for large c."""
    k = np.arange(c)
    log_terms = k * math.log(a) - special.gammaln(k + 1)
    log_top = c * math.log(a) - special.gammaln(c + 1) + math.log(c / (c - a))
    return math.exp(log_top - special.logsumexp(np.append(log_terms, log_top)))


@pytest.mark.parametrize("rho", [0.01, 0.3, 0.5, 0.9, 0.999])
def test_erlang_c_with_one_server_is_the_utilisation(rho):
    assert theory.erlang_c(1, rho) == pytest.approx(rho, rel=RTOL)


def test_mm1_response_time_is_one_over_mu_minus_lambda():
    for lam, mu in [(1.0, 2.0), (90.0, 100.0), (999.0, 1000.0)]:
        assert theory.mmc_mean_response(lam, mu, 1) == pytest.approx(1.0 / (mu - lam), rel=1e-9)
        assert theory.mmc_mean_wait(lam, mu, 1) == pytest.approx(lam / (mu * (mu - lam)), rel=1e-9)
    # rel=1e-9 here: mu - lam at rho = 0.999 cancels ~3 digits, so rounding is ~1e3 x larger than RTOL.


def test_erlang_c_table_values():
    assert theory.erlang_c(2, 1.0) == pytest.approx(1.0 / 3.0, rel=RTOL)
    for c, a in [(10, 8.0), (5, 4.5), (3, 0.1), (20, 15.0)]:
        assert theory.erlang_c(c, a) == pytest.approx(erlang_c_factorial(c, a), rel=RTOL)


def test_erlang_c_large_server_count_is_stable():
    # a**c / c! overflows a double for c = 2000; the log-space closed form is independent of the recursion.
    # Its error is ~eps x |log term| ~ 2e-16 x 1.5e4 = 3e-12 relative; 1e-9 leaves a wide margin.
    c, a = 2000, 1900.0
    got = theory.erlang_c(c, a)
    assert 0.0 < got < 1.0
    assert got == pytest.approx(erlang_c_log_space(c, a), rel=1e-9)


def test_mm2_mean_wait_matches_its_closed_form():
    # M/M/2: L_q = 2 rho^3 / (1 - rho^2) with rho = lambda / (2 mu); W_q = L_q / lambda.
    for lam, mu in [(1.0, 1.0), (3.0, 2.0), (0.2, 1.0)]:
        rho = lam / (2 * mu)
        assert theory.mmc_mean_wait(lam, mu, 2) == pytest.approx(2 * rho**3 / (1 - rho**2) / lam, rel=RTOL)
        assert theory.mmc_mean_response(lam, mu, 2) == pytest.approx(
            2 * rho**3 / (1 - rho**2) / lam + 1 / mu, rel=RTOL
        )


def test_unstable_mmc_names_the_load():
    with pytest.raises(ValueError, match=r"utilisation .*= 1\.2 >= 1"):
        theory.erlang_c(10, 12.0)
    with pytest.raises(ValueError, match=r"utilisation .*= 1 >= 1"):
        theory.mmc_mean_wait(2.0, 1.0, 2)
    with pytest.raises(ValueError, match="arrival_rate must be > 0"):
        theory.mmc_mean_response(0.0, 1.0, 1)
    with pytest.raises(ValueError, match="service_rate must be > 0"):
        theory.mmc_mean_response(1.0, -2.0, 1)
    with pytest.raises(ValueError, match="servers must be an integer >= 1"):
        theory.mmc_mean_wait(1.0, 2.0, 1.5)
    with pytest.raises(ValueError, match="offered_load must be finite"):
        theory.erlang_c(3, float("nan"))


# --- Pollaczek-Khinchine --------------------------------------------------------------------------------


@pytest.mark.parametrize(("lam", "es"), [(50.0, 0.01), (10.0, 0.09), (1.0, 0.2)])
def test_pk_reduces_to_mm1_and_md1(lam, es):
    rho = lam * es
    mm1_wait = rho * es / (1 - rho)  # = lambda / (mu (mu - lambda))
    assert theory.pollaczek_khinchine_mean_wait(lam, es, 1.0) == pytest.approx(mm1_wait, rel=RTOL)
    assert theory.pollaczek_khinchine_mean_wait(lam, es, 0.0) == pytest.approx(mm1_wait / 2, rel=RTOL)
    assert theory.mg1_mean_response(lam, es, 1.0) == pytest.approx(
        theory.mmc_mean_response(lam, 1 / es, 1), rel=RTOL
    )
    assert theory.mg1_mean_response(lam, es, 0.0) == pytest.approx(mm1_wait / 2 + es, rel=RTOL)


def test_pk_is_linear_in_service_variability():
    base = theory.pollaczek_khinchine_mean_wait(30.0, 0.02, 0.0)
    for scv in [0.25, 1.0, 4.0, 19.0]:
        got = theory.pollaczek_khinchine_mean_wait(30.0, 0.02, scv)
        assert got == pytest.approx(base * (1 + scv), rel=RTOL)


def test_pk_rejects_bad_input():
    with pytest.raises(ValueError, match=r"utilisation rho = lambda E\[S\] .*= 1\.5 >= 1"):
        theory.pollaczek_khinchine_mean_wait(150.0, 0.01, 1.0)
    with pytest.raises(ValueError, match="mean_service must be > 0"):
        theory.mg1_mean_response(1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="scv_service must be >= 0"):
        theory.pollaczek_khinchine_mean_wait(1.0, 0.1, -0.5)


# --- Cobham non-preemptive priority ---------------------------------------------------------------------


def test_cobham_with_one_class_is_pk():
    lam, es, scv = 40.0, 0.015, 2.5
    (w,) = theory.cobham_priority_waits([lam], [es], [es**2 * (1 + scv)])
    assert w == pytest.approx(theory.pollaczek_khinchine_mean_wait(lam, es, scv), rel=RTOL)


def test_cobham_two_classes_worked_example():
    # Class 0: lambda 20/s, deterministic 10 ms -> rho 0.2, E[S^2] = 1e-4 s^2.
    # Class 1: lambda 40/s, exponential 10 ms  -> rho 0.4, E[S^2] = 2e-4 s^2.
    # W0 = (20 x 1e-4 + 40 x 2e-4) / 2 = 5e-3 s; W_0 = 5e-3 / 0.8 = 6.25e-3 s; W_1 = 5e-3 / (0.8 x 0.4).
    w = theory.cobham_priority_waits([20.0, 40.0], [0.01, 0.01], [1e-4, 2e-4])
    assert w == pytest.approx([6.25e-3, 15.625e-3], rel=RTOL)


def test_cobham_obeys_kleinrock_conservation_law():
    # Kleinrock (1976) Vol. II ch. 3: for any work-conserving non-preemptive discipline,
    # sum_i rho_i W_i = rho W0 / (1 - rho), whatever the order of the classes.
    lam = [30.0, 5.0, 12.0]
    es = [0.004, 0.05, 0.01]
    es2 = [0.004**2, 0.05**2 * 3.0, 0.01**2 * 2.0]  # deterministic, hyperexponential, exponential
    rho = [lam[i] * es[i] for i in range(3)]
    w0 = sum(lam[i] * es2[i] for i in range(3)) / 2
    invariant = sum(rho) * w0 / (1 - sum(rho))
    weighted = []
    for order in itertools.permutations(range(3)):
        waits = theory.cobham_priority_waits(
            [lam[i] for i in order], [es[i] for i in order], [es2[i] for i in order]
        )
        weighted.append(sum(rho[i] * w for i, w in zip(order, waits, strict=True)))
        assert waits == sorted(waits)  # a higher-priority class never waits longer
    assert weighted == pytest.approx([invariant] * 6, rel=RTOL)


def test_cobham_identical_classes_average_to_fcfs():
    # Classes with the same service distribution: the arrival-weighted mean wait equals the FCFS (P-K)
    # wait of the merged stream (conservation law with rho_i proportional to lambda_i).
    lam, es, scv = [10.0, 25.0, 5.0], 0.012, 0.7
    waits = theory.cobham_priority_waits(lam, [es] * 3, [es**2 * (1 + scv)] * 3)
    mean_wait = sum(rate * w for rate, w in zip(lam, waits, strict=True)) / sum(lam)
    assert mean_wait == pytest.approx(theory.pollaczek_khinchine_mean_wait(sum(lam), es, scv), rel=RTOL)


def test_cobham_rejects_bad_input():
    with pytest.raises(ValueError, match="one entry per class; got lengths 2, 1, 2"):
        theory.cobham_priority_waits([1.0, 2.0], [0.1], [0.02, 0.02])
    with pytest.raises(ValueError, match=r"utilisation sum_i lambda_i E\[S_i\] .*= 1\.1 >= 1"):
        theory.cobham_priority_waits([5.0, 6.0], [0.1, 0.1], [0.02, 0.02])
    with pytest.raises(ValueError, match=r"arrival_rates\[1\] must be > 0"):
        theory.cobham_priority_waits([1.0, 0.0], [0.1, 0.1], [0.02, 0.02])
    with pytest.raises(ValueError, match=r"second_moments\[0\] .* must be >= the squared mean"):
        theory.cobham_priority_waits([1.0], [0.1], [0.005])
    with pytest.raises(ValueError, match="at least one class"):
        theory.cobham_priority_waits([], [], [])


# --- MVA ------------------------------------------------------------------------------------------------


def test_mva_population_one_sees_no_queueing():
    d, z = [0.004, 0.011, 0.0025], 0.3
    res = theory.mva_closed(1, d, delay=z)
    assert res.response_time[0] == pytest.approx(sum(d), rel=RTOL)
    assert res.residence_times[0] == pytest.approx(d, rel=RTOL)
    assert res.throughput[0] == pytest.approx(1 / (sum(d) + z), rel=RTOL)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_mva_balanced_network_closed_form(k):
    # K stations of equal demand D, no delay: X(N) = N / (D (N + K - 1)), Q_k(N) = N / K.
    # 50 recursion steps of a few flops each: rounding stays ~50 x K ulps, well inside RTOL.
    d, n = 0.007, 50
    res = theory.mva_closed(n, [d] * k)
    pop = np.arange(1, n + 1)
    np.testing.assert_allclose(res.throughput, pop / (d * (pop + k - 1)), rtol=RTOL)
    np.testing.assert_allclose(res.response_time, d * (pop + k - 1), rtol=RTOL)
    np.testing.assert_allclose(res.queue_lengths, np.repeat(pop[:, None] / k, k, axis=1), rtol=RTOL)


def test_mva_approaches_the_bottleneck_bound():
    # Product form, no delay: 1 - U_b(N) = P(bottleneck idle) = G_{-b}(N) / G(N) with G(N) >= D_max^N,
    # so 1 - X(N) D_max <= sum over the (N + K - 2 choose K - 2) ways to place N jobs on the other
    # stations of prod (D_k / D_max)^{n_k} <= (N + 1) u^N for K = 3, u = second-largest D_k / D_max.
    d = [0.010, 0.005, 0.002]
    d_max, u = max(d), 0.5
    res = theory.mva_closed(80, d)
    pop = res.population
    gap = 1.0 - res.throughput * d_max
    # Rounding allowance on X(N) D_max: 1e-13, ~450 ulps of 1 for a short, stable recursion.
    assert np.all(gap >= -1e-13)  # never above the bound 1/D_max
    assert np.all(gap <= (pop + 1) * u**pop + 1e-13)  # at N = 80 the bound is 81 x 2^-80 ~ 7e-23
    assert np.all(np.diff(res.throughput) >= -1e-13 * res.throughput[1:])  # non-decreasing in N


def test_mva_respects_asymptotic_and_balanced_job_bounds():
    # Lazowska et al. (1984) ch. 5. Asymptotic: X(N) <= min(N / (D + Z), 1 / D_max).
    # Balanced job bounds (Z = 0): N / (D + (N-1) D_max) <= X(N) <= N / (D + (N-1) D_avg).
    d = [0.003, 0.008, 0.0055, 0.001]
    total, d_max, d_avg = sum(d), max(d), sum(d) / len(d)
    for z in [0.0, 0.05]:
        res = theory.mva_closed(60, d, delay=z)
        n = res.population
        assert np.all(res.throughput <= np.minimum(n / (total + z), 1 / d_max) * (1 + RTOL))
    res = theory.mva_closed(60, d)
    n = res.population
    assert np.all(res.throughput >= n / (total + (n - 1) * d_max) * (1 - RTOL))
    assert np.all(res.throughput <= n / (total + (n - 1) * d_avg) * (1 + RTOL))


def test_mva_matches_the_curves_module_for_one_queue_plus_delay():
    # storagelab.published.curves.closed_system.mva_throughput is an independent scalar implementation.
    from storagelab.published.curves import mva_throughput

    d, z, n = 0.002, 0.0005, 40
    res = theory.mva_closed(n, [d], delay=z)
    np.testing.assert_allclose(res.throughput, mva_throughput(np.arange(1, n + 1), d, z), rtol=RTOL)
    np.testing.assert_allclose(res.thinking + res.queue_lengths[:, 0], res.population, rtol=RTOL)


def ctmc_closed(population, rates, routing, kinds):
    """Brute-force stationary solution of a closed network of exponential stations.

    ``rates[i]`` is the service rate (1/s) of station i (per server; a ``"delay"`` station serves every job
    present at once), ``routing[i][j]`` the probability of moving from i to j (i == j is a self-loop that
    leaves the state unchanged). Returns (mean jobs per station, completion rate per station in 1/s).
    """
    k = len(rates)
    states = [s for s in itertools.product(range(population + 1), repeat=k) if sum(s) == population]
    index = {s: i for i, s in enumerate(states)}

    def service_rate(state, i):
        return rates[i] * (state[i] if kinds[i] == "delay" else min(state[i], 1))

    gen = np.zeros((len(states), len(states)))
    for s in states:
        for i, j in itertools.product(range(k), range(k)):
            if i != j and routing[i][j] > 0 and s[i] > 0:
                t = list(s)
                t[i] -= 1
                t[j] += 1
                gen[index[s], index[tuple(t)]] += service_rate(s, i) * routing[i][j]
    np.fill_diagonal(gen, -gen.sum(axis=1))
    # pi Q = 0 with sum(pi) = 1: replace one (redundant) balance equation by the normalisation.
    a = gen.T.copy()
    a[-1, :] = 1.0
    b = np.zeros(len(states))
    b[-1] = 1.0
    # A direct solve is accurate to ~cond(A) x eps; require that to be far below the 1e-9 tolerance used.
    assert np.linalg.cond(a) * np.finfo(float).eps < 1e-11
    pi = linalg.solve(a, b)
    occupancy = np.array(states, dtype=float)
    mean_jobs = pi @ occupancy
    completions = np.array([sum(pi[index[s]] * service_rate(s, i) for s in states) for i in range(k)])
    return mean_jobs, completions


def test_mva_matches_ctmc_for_two_queues_and_think_time():
    # N = 3 jobs cycle: think (Z = 0.5 s, infinite server) -> queue 0 (20 ms) -> queue 1 (35 ms) -> think.
    n, s0, s1, z = 3, 0.020, 0.035, 0.5
    mean_jobs, completions = ctmc_closed(
        n, [1 / s0, 1 / s1, 1 / z], [[0, 1, 0], [0, 0, 1], [1, 0, 0]], ["queue", "queue", "delay"]
    )
    res = theory.mva_closed(n, [s0, s1], delay=z)
    # Both are exact; 1e-9 covers the CTMC solve's rounding (bounded above by cond x eps < 1e-11).
    assert res.throughput[-1] == pytest.approx(completions[0], rel=1e-9)
    assert completions[1] == pytest.approx(completions[0], rel=1e-9)
    assert res.queue_lengths[-1] == pytest.approx(mean_jobs[:2], rel=1e-9)
    assert res.thinking[-1] == pytest.approx(mean_jobs[2], rel=1e-9)
    assert res.response_time[-1] == pytest.approx(mean_jobs[:2].sum() / completions[0], rel=1e-9)

    # The same network with the think time as a station of kind "delay": its time now counts in R.
    as_station = theory.mva_closed(n, [s0, s1, z], station_kinds=["queue", "queue", "delay"])
    assert as_station.throughput == pytest.approx(res.throughput, rel=RTOL)
    assert as_station.response_time == pytest.approx(res.response_time + z, rel=RTOL)
    assert as_station.queue_lengths[-1] == pytest.approx(mean_jobs, rel=1e-9)


def test_mva_matches_ctmc_for_a_central_server_with_branching():
    # Central server (Lazowska et al. 1984): CPU, then disk A w.p. 0.5, disk B w.p. 0.3, or the job
    # completes w.p. 0.2 and a new one starts at the CPU (self-loop). Visits per job: CPU 1/0.2 = 5,
    # disk A 2.5, disk B 1.5; demands D = V S test the demand abstraction, not just a cycle.
    n = 3
    s_cpu, s_a, s_b = 0.004, 0.012, 0.020
    routing = [[0.2, 0.5, 0.3], [1, 0, 0], [1, 0, 0]]
    mean_jobs, completions = ctmc_closed(n, [1 / s_cpu, 1 / s_a, 1 / s_b], routing, ["queue"] * 3)
    job_throughput = 0.2 * completions[0]
    res = theory.mva_closed(n, [5 * s_cpu, 2.5 * s_a, 1.5 * s_b])
    assert res.throughput[-1] == pytest.approx(job_throughput, rel=1e-9)
    assert res.queue_lengths[-1] == pytest.approx(mean_jobs, rel=1e-9)
    assert res.utilisations[-1] == pytest.approx(completions * np.array([s_cpu, s_a, s_b]), rel=1e-9)


def test_mva_result_layout_and_tidy_frame():
    res = theory.mva_closed(4, [0.01, 0.02], delay=0.1, station_kinds=["queue", "delay"])
    assert res.population.tolist() == [1, 2, 3, 4]
    assert res.residence_times.shape == res.queue_lengths.shape == res.utilisations.shape == (4, 2)
    assert not res.throughput.flags.writeable
    np.testing.assert_allclose(res.residence_times[:, 1], 0.02, rtol=RTOL)  # a delay station never queues
    frame = res.to_frame()
    assert frame.height == 8
    assert frame.filter(frame["population"] == 3)["kind"].to_list() == ["queue", "delay"]
    np.testing.assert_allclose(frame["queue_length"].to_numpy(), res.queue_lengths.ravel())


def test_mva_rejects_bad_input():
    with pytest.raises(ValueError, match="population must be an integer >= 1"):
        theory.mva_closed(0, [0.01])
    with pytest.raises(ValueError, match=r"demands\[1\] must be >= 0 s"):
        theory.mva_closed(3, [0.01, -0.02])
    with pytest.raises(ValueError, match="one entry per station"):
        theory.mva_closed(3, [0.01, 0.02], station_kinds=["queue"])
    with pytest.raises(ValueError, match=r"station_kinds\[0\] = 'multi-server' is not supported"):
        theory.mva_closed(3, [0.01], station_kinds=["multi-server"])
    with pytest.raises(ValueError, match="at least one station"):
        theory.mva_closed(3, [])
    with pytest.raises(ValueError, match="delay must be >= 0 s"):
        theory.mva_closed(3, [0.01], delay=-1.0)


# --- Little's law ---------------------------------------------------------------------------------------


def test_littles_law_residual():
    assert theory.littles_law_residual(2.0, 4.0, 0.5) == 0.0
    assert theory.littles_law_residual(2.0, 1.0, 1.5) == pytest.approx(0.25, rel=RTOL)
    assert theory.littles_law_residual(2.0, 1.0, 2.5) == pytest.approx(-0.25, rel=RTOL)
    with pytest.raises(ValueError, match="mean_number must be > 0"):
        theory.littles_law_residual(0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="arrival_rate must be > 0"):
        theory.littles_law_residual(1.0, -1.0, 1.0)
