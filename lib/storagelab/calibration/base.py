"""Calibration: published points, the scenarios that simulate them, and the table that sets them side by side.

A :class:`Point` is one published number (a ``datasets/`` row) that a model claims to reproduce, with the
way it is compared (two-sided, or a bound when the document says "over" / "under") and whether the
model's fitted parameters were fitted on it (``fitted``) or it is predicted (``predicted``). A
:class:`Scenario` runs one replication of an experiment and returns a simulated value per point.
:func:`calibrate` runs each scenario over independent seeds and tabulates published value, simulated
mean with a Student-t confidence interval, error, tolerance and pass/fail.

Default tolerances (the project's, not tuned per point): IOPS and MB/s within ±15 %; latencies and
durations within ±20 % or ±1 ms, whichever is wider; percentages (shares, relative performance) within
±5 points.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import polars as pl
from scipy import stats

from storagelab import datasets, units

ROLES = ("fitted", "predicted")
COMPARISONS = ("two-sided", "at-least", "at-most")

#: The table's columns, in order (the CSV written by ``storagelab calibrate``).
COLUMNS = (
    "study", "point", "role", "metric", "unit", "published", "simulated", "ci_low", "ci_high", "error",
    "tolerance", "pass", "comparison", "replications", "description", "note",
)  # fmt: skip


@cache
def _published() -> dict[str, dict]:
    df = datasets.load()
    return {r["row_id"]: r for r in df.iter_rows(named=True)}


@dataclass(frozen=True)
class Point:
    """A published number a model is checked against: ``row_id`` in ``datasets/`` (its value, unit and
    source), shown in ``unit`` (a latency is shown in ms; other times keep the document's unit). ``comparison``: ``two-sided``, or
    ``at-least``/``at-most`` when the document states a bound. ``description`` says what it is."""

    study: str
    row_id: str
    description: str
    comparison: str = "two-sided"
    note: str = ""
    case: str = ""

    @property
    def key(self) -> str:
        """The point's label in the table: the row id, with the case when one row is checked in several."""
        return f"{self.row_id} [{self.case}]" if self.case else self.row_id

    def __post_init__(self) -> None:
        if self.comparison not in COMPARISONS:
            raise ValueError(f"point {self.row_id!r}: comparison must be one of {COMPARISONS}")

    @property
    def row(self) -> dict:
        """The dataset row (raises ``KeyError`` naming the id if it is not in ``datasets/``)."""
        try:
            return _published()[self.row_id]
        except KeyError:
            raise KeyError(f"calibration point {self.row_id!r} is not a row of datasets/") from None

    @property
    def unit(self) -> str:
        u, latency = self.row["unit"], self.row["metric"].startswith("latency")
        return "ms" if latency and units.unit(u).quantity == "time" else u

    @property
    def metric(self) -> str:
        return self.row["metric"]

    @property
    def published(self) -> float:
        r = self.row
        return (
            units.convert(r["value"], r["unit"], self.unit) if r["unit"] != self.unit else float(r["value"])
        )

    def tolerance(self) -> float:
        """Allowed |simulated - published| in this point's unit."""
        q = units.unit(self.unit).quantity
        pub = abs(self.published)
        if self.unit == "%":
            return 5.0
        if q == "time":
            one_ms = units.convert(1.0, "ms", self.unit)
            return max(0.2 * pub, one_ms) if self.unit in ("ms", "us", "s") else 0.2 * pub
        return 0.15 * pub


@dataclass(frozen=True)
class Scenario:
    """One published experiment: ``run(seed, quick)`` simulates one replication and returns a simulated
    value per point key (:attr:`Point.key`, in the point's unit). ``points`` are the published numbers
    it reproduces."""

    study: str
    name: str
    points: tuple[Point, ...]
    run: Callable[[int, bool], dict[str, float]]


def _passes(comparison: str, sim: float, pub: float, tol: float) -> bool:
    if comparison == "at-least":
        return sim >= pub - tol
    if comparison == "at-most":
        return sim <= pub + tol
    return abs(sim - pub) <= tol


def interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of independent replications (NaN interval for one)."""
    x = np.asarray(values, dtype=float)
    m = float(x.mean())
    if x.size < 2:
        return m, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return m, m - half, m + half


def tabulate(
    scenario: Scenario, values: Sequence[dict[str, float]], fitted: set[str], confidence: float
) -> list[dict]:
    """Table rows for one scenario's replications."""
    rows = []
    for p in scenario.points:
        sims = [v[p.key] for v in values if p.key in v and math.isfinite(v[p.key])]
        pub, tol = p.published, p.tolerance()
        if sims:
            mean, lo, hi = interval(sims, confidence)
            ok: bool | None = _passes(p.comparison, mean, pub, tol)
        else:
            mean = lo = hi = math.nan
            ok = None
        rows.append(
            {
                "study": p.study,
                "point": p.key,
                "role": "fitted" if p.row_id in fitted else "predicted",
                "metric": p.metric,
                "unit": p.unit,
                "published": pub,
                "simulated": mean,
                "ci_low": lo,
                "ci_high": hi,
                "error": mean - pub,
                "tolerance": tol,
                "pass": ok,
                "comparison": p.comparison,
                "replications": len(sims),
                "description": p.description,
                "note": p.note,
            }
        )
    return rows


def run_scenarios(
    scenarios: Sequence[Scenario],
    fitted: set[str],
    *,
    replications: int,
    seed: int,
    quick: bool,
    confidence: float,
    progress: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """Run every scenario ``replications`` times (seeds ``seed``, ``seed + 1``, ...) and tabulate."""
    rows = []
    for sc in scenarios:
        if progress is not None:
            progress(f"{sc.study}: {sc.name}")
        values = [sc.run(seed + r, quick) for r in range(replications)]
        rows += tabulate(sc, values, fitted, confidence)
    return pl.DataFrame(rows, schema=SCHEMA).select(COLUMNS)


SCHEMA = {
    "study": pl.String, "point": pl.String, "role": pl.String, "metric": pl.String, "unit": pl.String,
    "published": pl.Float64, "simulated": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64,
    "error": pl.Float64, "tolerance": pl.Float64, "pass": pl.Boolean, "comparison": pl.String,
    "replications": pl.Int64, "description": pl.String, "note": pl.String,
}  # fmt: skip
