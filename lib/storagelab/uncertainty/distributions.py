"""The distribution a parameter's value is drawn from, for the uncertainty analysis (issue 68).

Each is a small frozen dataclass whose numbers are in the unit of the
:class:`~storagelab.provenance.Param` that carries it (a ``Uniform(2, 8)`` on a parameter in ``ms`` is 2 to
8 ms). Each maps a quantile ``u`` in [0, 1] to a value (:meth:`ppf`, the inverse of its cumulative
distribution: a quasi-random design in the unit cube becomes parameter values through it), and gives its
median, its bounds and whether a value lies in its support (:meth:`contains`).

- :class:`Uniform` — every value between two bounds equally likely: what is known is a range;
- :class:`LogUniform` — every factor between two positive bounds equally likely: what is known is an order
  of magnitude (a working set of 100 GB to 1 TB, a per-IO CPU cost from another era);
- :class:`Triangular` — between two bounds, most likely at a stated value (a datasheet's "typical" within
  its "maximum");
- :class:`Choice` — one of a few values (numbers or names) with weights: a discrete configuration (outstanding
  IOs of 1, 2, 4 or 8; a warm or a cold cache) or a modelling choice whose physics is uncertain (a queue
  ordering, a hit-ratio method).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from itertools import accumulate, pairwise


def _check_quantile(u: float) -> float:
    if isinstance(u, bool) or not isinstance(u, int | float) or not 0.0 <= u <= 1.0:
        raise ValueError(f"a quantile lies in [0, 1], got {u!r}")
    return float(u)


def _finite(what: str, **values: float) -> None:
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ValueError(f"{what}: {name} must be a finite number, got {v!r}")


class _Interval:
    """What a distribution on ``[low, high]`` offers beside its own ``ppf``: its median (the value at
    quantile 0.5), its bounds and whether a value lies in them."""

    low: float
    high: float

    def ppf(self, u: float) -> float:  # pragma: no cover - each distribution defines it
        raise NotImplementedError

    @property
    def median(self) -> float:
        """The value at quantile 0.5."""
        return self.ppf(0.5)

    @property
    def bounds(self) -> tuple[float, float]:
        """The least and greatest value it can draw."""
        return (self.low, self.high)

    def contains(self, value: object) -> bool:
        """Whether ``value`` lies in [low, high]."""
        return _is_number(value) and self.low <= value <= self.high  # type: ignore[operator]


@dataclass(frozen=True)
class Uniform(_Interval):
    """Every value from ``low`` to ``high`` (in the Param's unit) equally likely; ``low < high``."""

    low: float
    high: float

    def __post_init__(self) -> None:
        _finite("Uniform", low=self.low, high=self.high)
        if not self.low < self.high:
            raise ValueError(f"Uniform needs low < high, got low={self.low!r}, high={self.high!r}")

    def ppf(self, u: float) -> float:
        """The value at quantile ``u`` in [0, 1]: ``low + u (high - low)``."""
        return self.low + _check_quantile(u) * (self.high - self.low)

    def describe(self) -> str:
        """In words, e.g. ``uniform on [2, 8]``."""
        return f"uniform on [{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class LogUniform(_Interval):
    """Every factor from ``low`` to ``high`` (in the Param's unit) equally likely: the logarithm of the
    value is uniform; ``0 < low < high``."""

    low: float
    high: float

    def __post_init__(self) -> None:
        _finite("LogUniform", low=self.low, high=self.high)
        if not 0 < self.low < self.high:
            raise ValueError(f"LogUniform needs 0 < low < high, got low={self.low!r}, high={self.high!r}")

    def ppf(self, u: float) -> float:
        """The value at quantile ``u`` in [0, 1]: ``low (high / low) ** u``."""
        u = _check_quantile(u)
        if u == 1.0:
            return self.high  # exact, whatever the rounding of the power
        return self.low * (self.high / self.low) ** u

    @property
    def median(self) -> float:
        """The value at quantile 0.5 (the geometric mean of the bounds)."""
        return math.sqrt(self.low * self.high)

    def describe(self) -> str:
        """In words, e.g. ``log-uniform on [100, 1000]``."""
        return f"log-uniform on [{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Triangular(_Interval):
    """From ``low`` to ``high`` (in the Param's unit), most likely at ``mode``: the density rises linearly
    from ``low`` to ``mode`` and falls linearly to ``high``; ``low <= mode <= high`` and ``low < high``."""

    low: float
    mode: float
    high: float

    def __post_init__(self) -> None:
        _finite("Triangular", low=self.low, mode=self.mode, high=self.high)
        if not (self.low <= self.mode <= self.high and self.low < self.high):
            raise ValueError(
                "Triangular needs low <= mode <= high and low < high, got "
                f"low={self.low!r}, mode={self.mode!r}, high={self.high!r}"
            )

    def ppf(self, u: float) -> float:
        """The value at quantile ``u`` in [0, 1] (the inverse of the triangular distribution function)."""
        u = _check_quantile(u)
        width = self.high - self.low
        at_mode = (self.mode - self.low) / width  # the quantile of the mode
        if u <= at_mode:
            return self.low + math.sqrt(u * width * (self.mode - self.low))
        return self.high - math.sqrt((1.0 - u) * width * (self.high - self.mode))

    def describe(self) -> str:
        """In words, e.g. ``triangular on [2, 8], mode 3``."""
        return f"triangular on [{self.low:g}, {self.high:g}], mode {self.mode:g}"


def _is_number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


@dataclass(frozen=True)
class Choice:
    """One of ``values`` (in the Param's unit: numbers, or names for a modelling choice or a device preset),
    drawn with probability proportional to ``weights`` (equal when empty).

    Numbers are listed in increasing order and names in the order the quantiles run through them, so that
    :meth:`ppf` is monotone: quantile ``u`` draws the first value whose cumulative weight exceeds ``u``
    (quantile 1 draws the last). Values are distinct; weights are positive and finite."""

    values: tuple[float | str, ...]
    weights: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        values, weights = tuple(self.values), tuple(self.weights)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "weights", weights)
        if not values:
            raise ValueError("Choice needs at least one value")
        names = all(isinstance(v, str) and v for v in values)
        if not names and not all(_is_number(v) for v in values):
            raise ValueError(f"Choice values are all finite numbers or all non-empty names, got {values!r}")
        if len(set(values)) != len(values):
            raise ValueError(f"Choice values must be distinct, got {values!r}")
        if not names and any(a >= b for a, b in pairwise(values)):  # type: ignore[operator]
            raise ValueError(f"Choice numbers are listed in increasing order, got {values!r}")
        if weights:
            if len(weights) != len(values):
                raise ValueError(f"Choice has {len(values)} values but {len(weights)} weights")
            if not all(_is_number(w) and w > 0 for w in weights):
                raise ValueError(f"Choice weights must be positive finite numbers, got {weights!r}")

    @property
    def probabilities(self) -> tuple[float, ...]:
        """Each value's probability (the weights normalised to sum to 1)."""
        w = self.weights or (1.0,) * len(self.values)
        total = math.fsum(w)
        return tuple(x / total for x in w)

    def ppf(self, u: float) -> float | str:
        """The value at quantile ``u`` in [0, 1]: the first value whose cumulative probability exceeds
        ``u``."""
        u = _check_quantile(u)
        cumulative = list(accumulate(self.probabilities))
        return self.values[min(bisect.bisect_right(cumulative, u), len(self.values) - 1)]

    @property
    def median(self) -> float | str:
        """The value at quantile 0.5 (for names, in their listed order)."""
        return self.ppf(0.5)

    @property
    def bounds(self) -> tuple[float | str, float | str]:
        """The first and last value (for numbers, the least and greatest)."""
        return (self.values[0], self.values[-1])

    def contains(self, value: object) -> bool:
        """Whether ``value`` is one of the values."""
        return value in self.values

    def describe(self) -> str:
        """In words, e.g. ``one of 1 (25 %), 4 (75 %)``."""
        return "one of " + ", ".join(
            f"{v!r} ({100 * p:.0f} %)" if isinstance(v, str) else f"{v:g} ({100 * p:.0f} %)"
            for v, p in zip(self.values, self.probabilities, strict=True)
        )


#: The distributions a :class:`~storagelab.provenance.Param`'s ``uncertainty`` may be.
Distribution = Uniform | LogUniform | Triangular | Choice
DISTRIBUTIONS = (Uniform, LogUniform, Triangular, Choice)
