"""Units of measure used in published results and at the edges of the workbench.

Inside storagelab every quantity is held in SI base units (seconds, bytes, operations per second,
fractions in [0, 1]); documents and charts use the units people read (ms, MB/s, IOPS, %). This module
is the single vocabulary of those units and their factor to SI.

Decimal prefixes follow the documents: a vendor's "MB/s" and "GB" are 10**6 and 10**9 bytes; binary
units are written ``KiB``/``MiB``/``GiB``/``TiB``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """A unit of measure: its symbol, the physical quantity it measures, and its factor to SI.

    ``si_value = value * factor``, expressed in ``si_unit``.
    """

    symbol: str
    quantity: str
    factor: float
    si_unit: str


def _units(*rows: tuple[str, str, float, str]) -> dict[str, Unit]:
    return {symbol: Unit(symbol, quantity, factor, si) for symbol, quantity, factor, si in rows}


#: Every unit a published row or a parameter may carry.
UNITS: dict[str, Unit] = _units(
    ("IOPS", "io_rate", 1.0, "1/s"),
    ("IOPS/drive", "io_rate_per_drive", 1.0, "1/s"),
    ("IOPS/desktop", "io_rate_per_desktop", 1.0, "1/s"),
    ("IOPS/mailbox", "io_rate_per_mailbox", 1.0, "1/s"),
    ("IOPS/VM", "io_rate_per_vm", 1.0, "1/s"),
    ("IOPS/user", "io_rate_per_user", 1.0, "1/s"),
    ("OPM", "transaction_rate", 1.0 / 60.0, "1/s"),
    ("MB/s", "throughput", 1e6, "B/s"),
    ("GB/s", "throughput", 1e9, "B/s"),
    ("Gb/s", "link_rate", 1e9 / 8.0, "B/s"),
    ("us", "time", 1e-6, "s"),
    ("ms", "time", 1e-3, "s"),
    ("s", "time", 1.0, "s"),
    ("min", "time", 60.0, "s"),
    ("h", "time", 3600.0, "s"),
    ("%", "fraction", 0.01, "1"),
    ("ratio", "ratio", 1.0, "1"),
    ("count", "count", 1.0, "1"),
    ("users/server", "density", 1.0, "1"),
    ("desktops/server", "density", 1.0, "1"),
    ("VMs/server", "density", 1.0, "1"),
    ("B", "size", 1.0, "B"),
    ("KB", "size", 1e3, "B"),
    ("MB", "size", 1e6, "B"),
    ("GB", "size", 1e9, "B"),
    ("TB", "size", 1e12, "B"),
    ("KiB", "size", 2.0**10, "B"),
    ("MiB", "size", 2.0**20, "B"),
    ("GiB", "size", 2.0**30, "B"),
    ("TiB", "size", 2.0**40, "B"),
    ("rpm", "rotation_rate", 1.0 / 60.0, "1/s"),
    ("GHz", "frequency", 1e9, "1/s"),
)


def unit(symbol: str) -> Unit:
    """Return the :class:`Unit` for ``symbol``, or raise ``KeyError`` listing the known symbols."""
    try:
        return UNITS[symbol]
    except KeyError:
        raise KeyError(f"unknown unit {symbol!r}; known units: {', '.join(UNITS)}") from None


def to_si(value: float, symbol: str) -> float:
    """Convert ``value`` expressed in ``symbol`` to SI (seconds, bytes, 1/s, fraction)."""
    return value * unit(symbol).factor


def convert(value: float, from_symbol: str, to_symbol: str) -> float:
    """Convert ``value`` between two units of the same quantity (e.g. ``us`` to ``ms``)."""
    a, b = unit(from_symbol), unit(to_symbol)
    if a.si_unit != b.si_unit:
        raise ValueError(f"cannot convert {from_symbol!r} ({a.quantity}) to {to_symbol!r} ({b.quantity})")
    return value * a.factor / b.factor
