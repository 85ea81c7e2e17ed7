"""Analytic queueing results the storagelab simulator is validated against.

Every function here is an exact closed form or an exact recursion from the queueing literature; none
simulates. Times are in seconds, rates in 1/s, loads in erlangs (dimensionless), queue lengths in jobs.

- M/M/c: :func:`erlang_c`, :func:`mmc_mean_wait`, :func:`mmc_mean_response`;
- M/G/1: :func:`pollaczek_khinchine_mean_wait`, :func:`mg1_mean_response`;
- M/G/1 with non-preemptive priority classes: :func:`cobham_priority_waits`;
- closed product-form networks: :func:`mva_closed` (exact single-class Mean Value Analysis);
- :func:`littles_law_residual`, a consistency check on measured ``L``, ``lambda`` and ``W``.

References: L. Kleinrock, *Queueing Systems, Vol. I* (1975) and *Vol. II* (1976); M. Harchol-Balter,
*Performance Modeling and Design of Computer Systems* (2013); E. D. Lazowska, J. Zahorjan, G. S. Graham,
K. C. Sevcik, *Quantitative System Performance* (1984); M. Reiser and S. S. Lavenberg, "Mean-value
analysis of closed multichain queuing networks", J. ACM 27(2), 1980; A. Cobham, "Priority assignment in
waiting line problems", Operations Research 2(1), 1954.

Unstable inputs (utilisation >= 1) raise :class:`ValueError` naming the load: these formulas have no
steady state there, and a simulator compared against them would never converge.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl

#: Station kinds :func:`mva_closed` solves exactly.
STATION_KINDS: tuple[str, ...] = ("queue", "delay")


# --- input checks ---------------------------------------------------------------------------------------


def _finite(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def _positive(name: str, value: float, unit: str) -> float:
    v = _finite(name, value)
    if v <= 0.0:
        raise ValueError(f"{name} must be > 0 {unit}, got {value!r}")
    return v


def _non_negative(name: str, value: float, unit: str) -> float:
    v = _finite(name, value)
    if v < 0.0:
        raise ValueError(f"{name} must be >= 0 {unit}, got {value!r}")
    return v


def _count(name: str, value: int, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _require_stable(utilisation: float, what: str) -> None:
    if utilisation >= 1.0:
        raise ValueError(
            f"utilisation {what} = {utilisation:.6g} >= 1: the queue is unstable (no steady state); "
            "this formula needs utilisation < 1"
        )


# --- M/M/c ----------------------------------------------------------------------------------------------


def erlang_c(c: int, offered_load: float) -> float:
    """Probability that an arrival to an M/M/c queue has to wait (Erlang's C formula), a fraction in [0, 1).

    ``offered_load`` is ``a = lambda / mu`` in erlangs and must satisfy ``0 <= a < c``. Computed by the
    Erlang B recursion, stable for any ``c`` (no factorials or powers that overflow):

        B(0) = 1,   B(k) = a B(k-1) / (k + a B(k-1)),   C(c, a) = c B(c) / (c - a (1 - B(c))).

    Kleinrock (1975) Vol. I, ch. 3 (M/M/m); Harchol-Balter (2013) ch. 14 (M/M/k, Erlang-B and Erlang-C).
    """
    c = _count("c (servers)", c)
    a = _non_negative("offered_load", offered_load, "erlangs")
    _require_stable(a / c, f"a/c = {a:.6g} erlangs / {c} servers")
    b = 1.0
    for k in range(1, c + 1):
        ab = a * b
        b = ab / (k + ab)
    return c * b / (c - a * (1.0 - b))


def mmc_mean_wait(arrival_rate: float, service_rate: float, servers: int) -> float:
    """Mean time (s) a job waits in queue, before service, in an M/M/c FCFS queue.

    ``W_q = C(c, a) / (c mu - lambda)`` with ``a = lambda / mu`` (Kleinrock 1975 Vol. I ch. 3;
    Harchol-Balter 2013 ch. 14). ``arrival_rate`` (lambda) and ``service_rate`` (mu, per server) are
    in 1/s; requires ``lambda < c mu``.
    """
    lam = _positive("arrival_rate", arrival_rate, "1/s")
    mu = _positive("service_rate", service_rate, "1/s")
    c = _count("servers", servers)
    _require_stable(lam / (c * mu), f"lambda/(c mu) = {lam:.6g}/({c} x {mu:.6g})")
    return erlang_c(c, lam / mu) / (c * mu - lam)


def mmc_mean_response(arrival_rate: float, service_rate: float, servers: int) -> float:
    """Mean response time (s), waiting plus service, in an M/M/c FCFS queue: ``W_q + 1/mu``.

    See :func:`mmc_mean_wait`. For ``c = 1`` this is ``1 / (mu - lambda)``.
    """
    return mmc_mean_wait(arrival_rate, service_rate, servers) + 1.0 / float(service_rate)


# --- M/G/1 ----------------------------------------------------------------------------------------------


def pollaczek_khinchine_mean_wait(arrival_rate: float, mean_service: float, scv_service: float) -> float:
    """Mean time (s) a job waits in queue in an M/G/1 FCFS queue (Pollaczek-Khinchine formula).

        W_q = lambda E[S^2] / (2 (1 - rho)) = rho E[S] (1 + C_S^2) / (2 (1 - rho)),   rho = lambda E[S],

    where ``scv_service`` is the squared coefficient of variation ``C_S^2 = Var[S] / E[S]^2``
    (M/D/1: 0; M/M/1: 1; hyperexponential: > 1). ``arrival_rate`` in 1/s, ``mean_service`` in s.
    Kleinrock (1975) Vol. I ch. 5; Harchol-Balter (2013) ch. 23.
    """
    lam = _positive("arrival_rate", arrival_rate, "1/s")
    es = _positive("mean_service", mean_service, "s")
    scv = _non_negative("scv_service", scv_service, "(squared coefficient of variation)")
    rho = lam * es
    _require_stable(rho, f"rho = lambda E[S] = {lam:.6g} x {es:.6g}")
    return rho * es * (1.0 + scv) / (2.0 * (1.0 - rho))


def mg1_mean_response(arrival_rate: float, mean_service: float, scv_service: float) -> float:
    """Mean response time (s), waiting plus service, in an M/G/1 FCFS queue: ``W_q + E[S]``.

    See :func:`pollaczek_khinchine_mean_wait`.
    """
    return pollaczek_khinchine_mean_wait(arrival_rate, mean_service, scv_service) + float(mean_service)


def cobham_priority_waits(
    arrival_rates: Sequence[float], mean_services: Sequence[float], second_moments: Sequence[float]
) -> list[float]:
    """Mean time (s) each class waits in queue in an M/G/1 queue with non-preemptive priority classes.

    Class 0 has the highest priority; FCFS within a class; a job in service is never interrupted.
    For class ``k`` (Cobham 1954; Kleinrock 1976 Vol. II ch. 3; Harchol-Balter 2013 ch. 31):

        W_k = W_0 / ((1 - sigma_{k-1}) (1 - sigma_k)),   W_0 = sum_i lambda_i E[S_i^2] / 2,
        sigma_k = sum_{i <= k} rho_i,   rho_i = lambda_i E[S_i],   sigma_{-1} = 0.

    ``W_0`` is the mean residual work of the job in service found by an arrival. ``arrival_rates`` in 1/s,
    ``mean_services`` (E[S_i]) in s, ``second_moments`` (E[S_i^2]) in s^2, one entry per class. The
    total utilisation ``sum rho_i`` must be < 1 (otherwise the lowest class has no steady state).
    The waits obey Kleinrock's conservation law: ``sum rho_i W_i = rho W_0 / (1 - rho)`` whatever the
    priority order.
    """
    n = len(arrival_rates)
    if n == 0:
        raise ValueError("arrival_rates must name at least one class, got an empty list")
    if len(mean_services) != n or len(second_moments) != n:
        raise ValueError(
            "arrival_rates, mean_services and second_moments must have one entry per class; got lengths "
            f"{n}, {len(mean_services)}, {len(second_moments)}"
        )
    lam = [_positive(f"arrival_rates[{i}]", v, "1/s") for i, v in enumerate(arrival_rates)]
    es = [_positive(f"mean_services[{i}]", v, "s") for i, v in enumerate(mean_services)]
    es2 = [_positive(f"second_moments[{i}]", v, "s^2") for i, v in enumerate(second_moments)]
    for i in range(n):
        # E[S^2] >= E[S]^2 (variance >= 0); allow one ulp-scale rounding below for deterministic service.
        if es2[i] < es[i] * es[i] * (1.0 - 1e-12):
            raise ValueError(
                f"second_moments[{i}] = {es2[i]!r} s^2 is below mean_services[{i}]^2 = {es[i] ** 2!r} s^2: "
                "a second moment must be >= the squared mean (variance >= 0)"
            )
    rho = [lam[i] * es[i] for i in range(n)]
    _require_stable(sum(rho), "sum_i lambda_i E[S_i] over all classes")
    w0 = 0.5 * sum(lam[i] * es2[i] for i in range(n))
    waits: list[float] = []
    sigma_prev = 0.0
    for i in range(n):
        sigma = sigma_prev + rho[i]
        waits.append(w0 / ((1.0 - sigma_prev) * (1.0 - sigma)))
        sigma_prev = sigma
    return waits


# --- closed networks: exact MVA -------------------------------------------------------------------------


@dataclass(frozen=True)
class MvaResult:
    """Exact MVA solution of a closed single-class network, for every population ``n = 1..N``.

    Row ``n - 1`` of each array is population ``n``; column ``k`` is station ``k`` (as given in
    ``demands``). Arrays are read-only.

    - ``population``: (N,) int, the number of jobs circulating, ``1..N``;
    - ``throughput``: (N,) jobs/s, the rate at which jobs complete a cycle (one pass through all demands
      and the think time);
    - ``response_time``: (N,) s, time per cycle spent at the stations (queueing + service), i.e. the sum of
      residence times; it EXCLUDES the think time ``delay`` but includes stations of kind ``"delay"``;
    - ``residence_times``: (N, K) s per cycle at each station (all visits together);
    - ``queue_lengths``: (N, K) mean jobs at each station, waiting or in service;
    - ``utilisations``: (N, K) ``throughput x demand`` (service demand law): the busy fraction of a
      ``"queue"`` station; for a ``"delay"`` station it is the mean number of jobs in service;
    - ``thinking``: (N,) mean jobs in the think time ``delay``, ``throughput x delay``.
    """

    demands: tuple[float, ...]
    delay: float
    station_kinds: tuple[str, ...]
    population: np.ndarray
    throughput: np.ndarray
    response_time: np.ndarray
    residence_times: np.ndarray
    queue_lengths: np.ndarray
    utilisations: np.ndarray
    thinking: np.ndarray

    def to_frame(self) -> pl.DataFrame:
        """A tidy (long) table: one row per (population, station), with the network-level columns repeated.

        Columns: ``population``, ``station`` (index), ``kind``, ``demand_s``, ``residence_time_s``,
        ``queue_length``, ``utilisation``, ``throughput_per_s``, ``response_time_s``.
        """
        import polars as pl

        n, k = self.residence_times.shape
        return pl.DataFrame(
            {
                "population": np.repeat(self.population, k),
                "station": np.tile(np.arange(k), n),
                "kind": np.tile(np.array(self.station_kinds, dtype=object), n).tolist(),
                "demand_s": np.tile(np.array(self.demands), n),
                "residence_time_s": self.residence_times.ravel(),
                "queue_length": self.queue_lengths.ravel(),
                "utilisation": self.utilisations.ravel(),
                "throughput_per_s": np.repeat(self.throughput, k),
                "response_time_s": np.repeat(self.response_time, k),
            }
        )


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def mva_closed(
    population: int,
    demands: Sequence[float],
    delay: float = 0.0,
    station_kinds: Sequence[str] | None = None,
) -> MvaResult:
    """Exact single-class Mean Value Analysis of a closed product-form queueing network.

    ``population`` jobs (N >= 1) cycle through K stations; ``demands[k]`` is the total service demand
    ``D_k = V_k S_k`` in seconds a job places on station ``k`` per cycle (visits x service time per
    visit), and ``delay`` (``Z``, s) is a pure delay per cycle (think time, an infinite-server station)
    that is not counted in the response time. ``station_kinds[k]`` is

    - ``"queue"`` (default): a single-server, load-independent station: FCFS with exponential service,
      or processor sharing / LCFS-preemptive-resume with any service distribution (BCMP);
    - ``"delay"``: an infinite-server station (no queueing; residence time = demand).

    Multi-server and load-dependent stations are NOT supported: their exact MVA needs marginal
    queue-length probabilities, and approximations do not belong among reference results.

    Recursion (Reiser & Lavenberg 1980; Lazowska et al. 1984, ch. 6), from ``Q_k(0) = 0``:

        R_k(n) = D_k (1 + Q_k(n-1))  (queue),   R_k(n) = D_k  (delay),
        X(n) = n / (Z + sum_k R_k(n)),   Q_k(n) = X(n) R_k(n).

    Returns all populations ``1..N`` (:class:`MvaResult`). Cost O(N K).
    """
    n_max = _count("population", population)
    k = len(demands)
    if k == 0:
        raise ValueError("demands must list at least one station, got an empty list")
    d = np.array([_non_negative(f"demands[{i}]", v, "s") for i, v in enumerate(demands)], dtype=float)
    z = _non_negative("delay", delay, "s")
    if station_kinds is None:
        kinds = ("queue",) * k
    else:
        kinds = tuple(station_kinds)
        if len(kinds) != k:
            raise ValueError(f"station_kinds must have one entry per station ({k}), got {len(kinds)}")
        for i, kind in enumerate(kinds):
            if kind not in STATION_KINDS:
                raise ValueError(
                    f"station_kinds[{i}] = {kind!r} is not supported; exact MVA here handles only "
                    f"{STATION_KINDS} (single-server queue or infinite-server delay)"
                )
    if d.sum() + z <= 0.0:
        raise ValueError("demands and delay are all zero: a cycle must take some time (sum > 0 s)")

    is_queue = np.array([kind == "queue" for kind in kinds])
    residence = np.empty((n_max, k))
    queue = np.empty((n_max, k))
    throughput = np.empty(n_max)
    q = np.zeros(k)
    for n in range(1, n_max + 1):
        r = np.where(is_queue, d * (1.0 + q), d)
        x = n / (z + r.sum())
        q = x * r
        residence[n - 1] = r
        queue[n - 1] = q
        throughput[n - 1] = x
    return MvaResult(
        demands=tuple(float(v) for v in d),
        delay=z,
        station_kinds=kinds,
        population=_read_only(np.arange(1, n_max + 1)),
        throughput=_read_only(throughput),
        response_time=_read_only(residence.sum(axis=1)),
        residence_times=_read_only(residence),
        queue_lengths=_read_only(queue),
        utilisations=_read_only(throughput[:, None] * d[None, :]),
        thinking=_read_only(throughput * z),
    )


# --- Little's law ---------------------------------------------------------------------------------------


def littles_law_residual(mean_number: float, arrival_rate: float, mean_time: float) -> float:
    """Relative residual of Little's law ``L = lambda W``: ``(L - lambda W) / L`` (dimensionless).

    ``mean_number`` (L, jobs, > 0), ``arrival_rate`` (lambda, 1/s, > 0) and ``mean_time`` (W, s, >= 0)
    measured over the same window of the same system. Zero for a consistent set; positive when
    ``lambda W`` falls short of ``L``. Little (1961); Lazowska et al. (1984) ch. 3.
    """
    big_l = _positive("mean_number", mean_number, "jobs")
    lam = _positive("arrival_rate", arrival_rate, "1/s")
    w = _non_negative("mean_time", mean_time, "s")
    return (big_l - lam * w) / big_l
