"""What every device model shares: the datasheet block size, the capacity error, the checks of a model's
:class:`~storagelab.provenance.Param` arguments and of an IO, per-IO variates and the preset look-up."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from storagelab.kernel.randomness import variates
from storagelab.provenance import Param
from storagelab.published.units import UNITS

#: Block size of the datasheets' random-IO figures ("4 KB random" means 4,096-byte transfers).
DATASHEET_BLOCK = 4096


class CapacityExceeded(ValueError):
    """An IO addressed past a device's capacity: the data placed on it does not fit."""


def _param(name: str, p: object, quantity: str, low: float, high: float = math.inf) -> float:
    """Check that ``p`` is a :class:`Param` measuring ``quantity`` with SI value in [low, high]."""
    if not isinstance(p, Param):
        raise ValueError(f"{name} must be a Param(value, unit, origin, source), got {type(p).__name__}")
    q = UNITS[p.unit].quantity
    if q != quantity:
        raise ValueError(
            f"{name} must be a {quantity} (e.g. unit {_EXAMPLE_UNIT[quantity]!r}), got unit {p.unit!r}"
        )
    v = p.si
    if not low <= v <= high:
        hi = "" if math.isinf(high) else f" and <= {high:g}"
        raise ValueError(
            f"{name} must be >= {low:g}{hi} {UNITS[p.unit].si_unit} (SI), got {v:g} ({p.value} {p.unit})"
        )
    return v


_EXAMPLE_UNIT = {"time": "ms", "size": "GB", "throughput": "MB/s", "rotation_rate": "rpm", "count": "count",
                 "io_rate": "IOPS"}  # fmt: skip


def _check_io(name: str, size: int, address: int) -> None:
    if size <= 0:
        raise ValueError(f"{name}: IO size must be > 0 bytes, got {size}")
    if address < 0:
        raise ValueError(f"{name}: IO address must be >= 0 bytes, got {address}")


class _Variates:
    """Variates handed out one at a time from the caller's generator, drawn a block (4096) at a time by
    ``draw(generator, n)`` through :func:`storagelab.kernel.randomness.variates`. A different generator
    object from the last call's starts a fresh block, so results depend only on the sequence of calls and
    generators, never on global state.
    """

    __slots__ = ("_draw", "_next", "_rng")

    def __init__(self, draw: Callable[[np.random.Generator, int], np.ndarray]) -> None:
        self._draw = draw
        self._rng: np.random.Generator | None = None
        self._next: Callable[[], float] | None = None

    def __call__(self, rng: np.random.Generator) -> float:
        if rng is not self._rng:
            self._rng = rng
            self._next = variates(rng, self._draw).__next__
        return self._next()


def _lookup(table: dict, name: str, family: str):
    try:
        return table[name]
    except KeyError:
        raise ValueError(f"unknown {family} preset {name!r}; known: {', '.join(map(repr, table))}") from None
