"""Service-time sources for stations: distributions drawn in numpy blocks, and device models.

A station asks its service source for a time (seconds) per IO. Two kinds:

- a :class:`ServiceDistribution` (exponential, deterministic, gamma, lognormal) whose time does not
  depend on the IO or on state: drawn in blocks of 4096 for speed, and letting FIFO stations take the
  fast path (completion time computed at arrival);
- :class:`CarriedTime`: each job brings its own time in ``tag`` (a processor's CPU time per job), known at
  arrival and independent of state, so FIFO stations take the fast path too;
- a device model (any object with ``service_time(is_read, size, address, rng) -> seconds`` and a
  ``parallelism`` attribute, e.g. :mod:`storagelab.devices`): called when service *starts*, because a
  disk's time depends on where its head is. A device with ``state_dependent = False`` (SSD, DRAM) may
  still use the fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from storagelab.kernel.io import IORequest
from storagelab.kernel.randomness import variates


@dataclass(frozen=True)
class ServiceDistribution:
    """A service-time distribution with ``mean`` seconds and squared coefficient of variation ``scv``."""

    mean: float
    scv: float

    def __post_init__(self) -> None:
        if not self.mean > 0:
            raise ValueError(f"mean service time must be > 0 s, got {self.mean}")
        if self.scv < 0:
            raise ValueError(f"squared coefficient of variation must be >= 0, got {self.scv}")

    @property
    def second_moment(self) -> float:
        """E[S^2] = mean^2 (1 + scv), as Pollaczek–Khinchine and Cobham need."""
        return self.mean**2 * (1 + self.scv)

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        raise NotImplementedError

    def sampler(self, rng: np.random.Generator) -> Callable[[], float]:
        """A zero-argument callable returning one service time per call (block-drawn)."""
        return variates(rng, self._draw).__next__


class Exponential(ServiceDistribution):
    """Exponential service (M): ``scv = 1``."""

    def __init__(self, mean: float) -> None:
        super().__init__(mean, 1.0)

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.exponential(self.mean, n)


class Deterministic(ServiceDistribution):
    """Constant service (D): ``scv = 0``."""

    def __init__(self, value: float) -> None:
        super().__init__(value, 0.0)

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(n, self.mean)

    def sampler(self, rng: np.random.Generator) -> Callable[[], float]:
        value = self.mean
        return lambda: value


class Gamma(ServiceDistribution):
    """Gamma service with the given mean and scv (shape ``1/scv``)."""

    def __init__(self, mean: float, scv: float) -> None:
        if not scv > 0:
            raise ValueError(f"gamma service needs scv > 0, got {scv}")
        super().__init__(mean, scv)

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        shape = 1.0 / self.scv
        return rng.gamma(shape, self.mean / shape, n)


class Lognormal(ServiceDistribution):
    """Lognormal service with the given mean and scv."""

    def __init__(self, mean: float, scv: float) -> None:
        if not scv > 0:
            raise ValueError(f"lognormal service needs scv > 0, got {scv}")
        super().__init__(mean, scv)

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        sigma2 = np.log1p(self.scv)
        return rng.lognormal(np.log(self.mean) - sigma2 / 2, np.sqrt(sigma2), n)


class CarriedTime:
    """Service whose time (s) each job carries in its ``tag``, set by the component that submits it (e.g. the
    CPU time of an inline-reduction step). The time is known when the job arrives and depends on no state, so
    a FIFO station computes its completion at arrival (the fast path): the same completion times as serving
    it when a server frees, one event per job instead of two."""

    state_dependent = False

    def __call__(self, io: IORequest, rng: np.random.Generator) -> float:
        return io.tag  # type: ignore[return-value]
