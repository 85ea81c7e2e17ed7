"""A system known only from a published curve, as a station: a load-dependent server.

A :class:`LoadDependentStation` serves the IOs present first come first served at a total rate
``mu(n)`` IO/s when ``n`` are present, with exponential service, so that the number present is a
birth-death process. Two published curves give ``mu`` exactly:

- **Throughput against population** (:func:`~storagelab.published.curves.fit_closed_system`: exact MVA of a queue
  of demand ``D`` and a delay ``Z``): the *flow-equivalent server* of that network has ``mu(n) = X(n)``,
  its throughput with ``n`` IOs in it (Chandy, Herzog and Woo, 1975: exact for product-form networks).
  Its range is the published populations: a run whose time-average population exceeds the largest
  published one (e.g. 64 VMs at one outstanding IO each) has left it.
- **Response time against throughput** (:func:`~storagelab.published.curves.fit_response_time`: ``R = S / (1 -
  X / Xsat)``): ``mu(n) = Xsat n / (n + k - 1)`` with ``k = S Xsat``. Under Poisson arrivals at ``X`` the
  number present is then negative binomial, ``P(n) ~ C(n + k - 1, n) rho**n`` with ``rho = X / Xsat``,
  whose mean ``k rho / (1 - rho)`` gives, by Little's law, ``R = S / (1 - rho)``: the published law
  exactly (``k = 1`` is M/M/1). Its range is the published throughputs.

Either way the station reports :data:`~storagelab.kernel.component.BEYOND_RANGE` (1.0) when a run took it past
its range, so that a headroom search stops there instead of answering from an extrapolated curve; the
fit's interval is carried by building the station from the curve's lower or upper band (``bound``).
What a published curve cannot say: how the system treats IOs unlike the published ones (sizes, read
share, locality), and the latency *distribution* (exponential service is the model's assumption).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Literal

import numpy as np
from simpy.events import Event

from storagelab.kernel.component import BEYOND_RANGE, Component, completion_in, fire
from storagelab.kernel.io import IORequest
from storagelab.published.curves.base import CurveFit

Bound = Literal["fit", "lower", "upper"]


class LoadDependentStation(Component):
    """IOs served first come first served at a total rate ``rate(n)`` (IO/s, > 0) with ``n`` present
    (see the module docstring). ``max_population`` / ``max_throughput``: the range the rate function is
    valid for (None: unbounded); ``curve`` names where it comes from, for results."""

    def __init__(
        self,
        name: str,
        rate: Callable[[int], float],
        *,
        max_population: float | None = None,
        max_throughput: float | None = None,
        curve: str = "",
    ) -> None:
        super().__init__(name)
        self._rate_fn, self.curve = rate, curve
        self.max_population, self.max_throughput = max_population, max_throughput
        self._rates: list[float] = [0.0]

    def rate(self, n: int) -> float:
        """The total service rate (IO/s) with ``n`` IOs present (computed once per ``n``)."""
        while len(self._rates) <= n:
            k = len(self._rates)
            mu = float(self._rate_fn(k))
            if not (math.isfinite(mu) and mu > 0):
                raise ValueError(
                    f"station {self.name!r}: rate({k}) must be a positive number of IO/s, got {mu!r}"
                )
            self._rates.append(mu)
        return self._rates[n]

    def on_bind(self) -> None:
        self._queue: deque[tuple[IORequest, Event]] = deque()
        self._generation = 0
        self.reset_stats()

    def reset_stats(self) -> None:
        self.completed = 0
        self._since = self.env.now
        self._last = self.env.now
        self._area = 0.0  # integral of the number present over time (IO s)
        self._busy = 0.0

    def _account(self) -> None:
        now = self.env.now
        n = len(self._queue)
        self._area += n * (now - self._last)
        if n:
            self._busy += now - self._last
        self._last = now

    def _reschedule(self) -> None:
        self._generation += 1
        n = len(self._queue)
        if n:
            delay = self.rng.exponential(1.0 / self.rate(n))
            completion_in(self.env, delay, self._generation).callbacks.append(self._complete)

    def submit(self, io: IORequest) -> Event:
        self._account()
        done = Event(self.env)
        self._queue.append((io, done))
        self._reschedule()  # memoryless: the next completion is redrawn at the new rate
        return done

    def _complete(self, event: Event) -> None:
        if event._value != self._generation:
            return  # superseded by an arrival or a completion since
        self._account()
        io, done = self._queue.popleft()
        self.completed += 1
        self._reschedule()
        fire(done, io)

    def stats(self, elapsed: float) -> dict[str, float]:
        """Over the measurement window: IOs completed, throughput (IO/s), time-average population,
        utilisation (share of time with an IO present), and whether the run left the curve's range."""
        self._account()
        span = self.env.now - self._since
        population = self._area / span if span > 0 else 0.0
        throughput = self.completed / elapsed if elapsed > 0 else 0.0
        beyond = (self.max_population is not None and population > self.max_population) or (
            self.max_throughput is not None and throughput > self.max_throughput
        )
        return {
            "completed": float(self.completed),
            "throughput": throughput,
            "mean_population": population,
            "utilisation": self._busy / span if span > 0 else 0.0,
            BEYOND_RANGE: float(beyond),
        }


def _parameter(fit: CurveFit, name: str, bound: Bound, pessimistic_high: bool) -> float:
    p = next(p for p in fit.parameters if p.name == name)
    if bound == "fit":
        return float(p.estimate)
    value = p.upper if (bound == "lower") == pessimistic_high else p.lower
    if not math.isfinite(value):
        raise ValueError(f"curve {fit.name!r} has no interval for {name} (too few points): use bound='fit'")
    return float(value)


def closed_system_station(name: str, fit: CurveFit, bound: Bound = "fit") -> LoadDependentStation:
    """The flow-equivalent server of a throughput-against-population fit (``rate(n) = X(n)``, IO/s):
    its fitted curve, or its pointwise ``lower`` / ``upper`` confidence band. Valid up to the largest
    published population; computed up to four times that (at least 256 IOs), held constant beyond."""
    if fit.x_name == "" or "service_demand" not in {p.name for p in fit.parameters}:
        raise ValueError(f"curve {fit.name!r} is not a throughput-against-population (MVA) fit")
    top = float(fit.points["x"].max())
    # the curve once, up to well past its range; beyond, the rate holds (X(n) approaches 1/D there)
    table = fit.predict(np.arange(1.0, max(4 * top, 256) + 1))[bound]
    if table.null_count():
        raise ValueError(f"curve {fit.name!r} has no {bound} band (too few points): use bound='fit'")
    rates = table.to_list()

    def rate(n: int) -> float:
        return rates[min(n, len(rates)) - 1]

    return LoadDependentStation(name, rate, max_population=top, curve=f"{fit.name} ({bound})")


def response_time_station(
    name: str, fit: CurveFit, bound: Bound = "fit", time_unit_s: float = 1e-3
) -> LoadDependentStation:
    """The load-dependent server whose mean response under Poisson arrivals is ``S / (1 - X / Xsat)``
    (see the module docstring), from a response-time-against-throughput fit whose times are in units of
    ``time_unit_s`` seconds (ms by default); ``lower`` / ``upper``: the slow and fast ends of the
    parameters' intervals (``S`` high and ``Xsat`` low, or the reverse). Valid up to the largest
    published throughput."""
    s = _parameter(fit, "service_time", bound, pessimistic_high=True) * time_unit_s
    xsat = _parameter(fit, "saturation_throughput", bound, pessimistic_high=False)
    if not (math.isfinite(xsat) and xsat > 0 and s > 0):
        raise ValueError(
            f"curve {fit.name!r}: no saturation throughput was estimated; it cannot be a station"
        )
    k = s * xsat
    top = float(fit.points["x"].max())
    return LoadDependentStation(
        name, lambda n: xsat * n / (n + k - 1), max_throughput=top, curve=f"{fit.name} ({bound})"
    )


__all__ = ["LoadDependentStation", "closed_system_station", "response_time_station"]
