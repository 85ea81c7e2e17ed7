"""Claims and the rules that score them: published points, the scenarios that simulate them, and one
table row per point.

A :class:`Point` is one published number (a ``datasets/`` row) that a model claims to reproduce. A
**claim** is one published statement: points that restate it (both sides of a conflict group, the
per-tile rows of a table and its total, one sentence checked at several IO sizes) belong to one claim,
which passes only when every one of its points does. The rules (also in the README):

- **role**: ``fitted`` when a fitted parameter was fitted on one of the claim's points; ``derived`` when
  the simulated value is an arithmetic consequence of the inputs, not of the simulation (shown, never
  counted); ``predicted`` otherwise.
- **conflicts**: a two-sided point whose row belongs to a ``conflict_group`` is scored against the range
  the group's two-sided values of the same metric span (an end that is a single stated value with its
  tolerance, an end of a stated range without), not against one side; a bound in a group is its own
  row's bound (an at-least is never read against the group's low end).
- **failures**: a replication that raises, saturates or returns a missing or non-finite value makes the
  point fail, with the reason in ``note``; nothing leaves the denominator.
- **bounds**: "at least" / "under" / "up to" / "sub-millisecond" are checked as the bound, with no
  tolerance added.
- **"over X" in a results sentence** (qualifier ``over``) is a measured value just above X, not an open
  bound: the study's own sums treat it as a point ("peaks at over 39,500 IOPS with 64 VMs. An improvement
  of 232% or 22,500 IOPS over hybrid", seed 001). It is scored from X up to X plus its tolerance.
- **ranges**: a point whose document gives a range (two rows, ``range-low`` and ``range-high``) is scored
  against the range itself: the range is the band, with no tolerance added to its ends.
- **readings**: a row is read as its ``qualifier`` states (:data:`READINGS`), the same in every study;
  a claim file cannot override it.
- **tolerances** (the project's, the same for every point, relative everywhere): IOPS and MB/s within
  ±15 %; latencies and durations within ±20 % or one unit of the last digit the document states,
  whichever is wider (no absolute floor: a ±1 ms floor gave 1.075 ms ±93 %); percentages within ±5 points.
- **sensitivity**: every scenario also runs with the presets' capacity-setting parameters that are not
  fitted (document, datasheet, device physics, assumption) scaled by 0.5 and by 2
  (:func:`storagelab.provenance.capacity_scale`); fitted ones are held at their fitted values, as a refit
  on their own points would hold them. A claim that passes in all three runs would pass whatever the
  hardware did, and is ``insensitive``: a claim that is arithmetic on a fit shows as such.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

import polars as pl

from storagelab.kernel.replications import interval
from storagelab.provenance import Param, ParamKey, capacity_scale, parameter_draw, recording_uncertain
from storagelab.published import datasets, units

COMPARISONS = ("two-sided", "at-least", "at-most", "just-over")
#: How a ``datasets/`` row's ``qualifier`` is read: the only reading of it a point may make.
READINGS = {
    "exact": "two-sided", "approx": "two-sided", "range-low": "two-sided", "range-high": "two-sided",
    "at-least": "at-least", "at-most": "at-most", "over": "just-over",
}  # fmt: skip
#: Capacity scale factors of the sensitivity check.
SENSITIVITY_FACTORS = (0.5, 2.0)


def tolerance(value: float, unit: str, *, fine: float | None = None) -> float:
    """The project's tolerance, the same for every published or measured value: allowed |model - value|
    in ``unit`` (a :data:`storagelab.published.units.UNITS` symbol). Relative everywhere: percentages ±5
    points; times ±20 %, or ``fine`` (one unit of the last digit stated, in ``unit``) where that is wider;
    everything else (IOPS, MB/s, counts, ratios) ±15 %."""
    v = abs(value)
    if unit == "%":
        return 5.0
    if units.unit(unit).quantity == "time":
        return max(0.2 * v, fine or 0.0)
    return 0.15 * v


@cache
def published_rows() -> dict[str, dict]:
    """Every ``datasets/`` row by row id."""
    return {r["row_id"]: r for r in datasets.load().iter_rows(named=True)}


def published_value(row_id: str) -> float:
    """The value of one ``datasets/`` row, in the document's unit."""
    return float(published_rows()[row_id]["value"])


def _in_unit(row: dict, unit: str) -> float:
    return float(row["value"]) if row["unit"] == unit else units.convert(row["value"], row["unit"], unit)


@dataclass(frozen=True)
class Point:
    """A published number a model is checked against: ``row_id`` in ``datasets/`` (its value, unit and
    source), shown in ``unit`` (a latency is shown in ms; other times keep the document's unit).
    ``comparison`` is the row's reading (:data:`READINGS` of its ``qualifier``): ``at-least``/``at-most``
    when the document states a bound, ``just-over`` for "over X" in a results sentence, else
    ``two-sided``; a claim file cannot read a row otherwise.
    ``case`` tells apart several checks of one row; ``claim`` names the published statement when it
    is not the row itself or its conflict group (e.g. a table's per-tile rows and total);
    ``range_with``: the row of the range's other end, when the document gives a range;
    ``derived``: the simulated value follows from the inputs by arithmetic."""

    study: str
    row_id: str
    description: str
    note: str = ""
    case: str = ""
    claim: str = ""
    derived: bool = False
    range_with: str = ""

    def __post_init__(self) -> None:
        if self.range_with:
            ends = {
                published_rows()[r]["qualifier"]
                for r in (self.row_id, self.range_with)
                if r in published_rows()
            }
            if ends != {"range-low", "range-high"}:
                raise ValueError(
                    f"point {self.row_id!r}: range_with {self.range_with!r} must name the other end of a range "
                    "(one row range-low, the other range-high)"
                )

    @property
    def key(self) -> str:
        """The point's label in the table: the row id, with the case when one row is checked in several."""
        return f"{self.row_id} [{self.case}]" if self.case else self.row_id

    @property
    def row(self) -> dict:
        """The dataset row (raises ``KeyError`` naming the id if it is not in ``datasets/``)."""
        try:
            return published_rows()[self.row_id]
        except KeyError:
            raise KeyError(f"calibration point {self.row_id!r} is not a row of datasets/") from None

    @property
    def claim_id(self) -> str:
        """The published statement this point belongs to: ``claim``, else the row's conflict group,
        else the row id."""
        return self.claim or self.row["conflict_group"] or self.row_id

    @property
    def unit(self) -> str:
        u, latency = self.row["unit"], self.row["metric"].startswith("latency")
        return "ms" if latency and units.unit(u).quantity == "time" else u

    @property
    def metric(self) -> str:
        return self.row["metric"]

    @property
    def comparison(self) -> str:
        """``at-least``, ``at-most``, ``just-over`` or ``two-sided``: the row's qualifier read by
        :data:`READINGS`."""
        q = self.row["qualifier"]
        try:
            return READINGS[q]
        except KeyError:
            raise ValueError(
                f"datasets/ row {self.row_id!r}: qualifier {q!r} has no reading; known: {', '.join(READINGS)}"
            ) from None

    @property
    def published(self) -> float:
        return _in_unit(self.row, self.unit)

    @property
    def published_range(self) -> tuple[float, float]:
        """(low, high) of the values this point is scored against: the row's own value (always, for a
        bound), X to X plus its tolerance for "over X" (``just-over``), the range it ends (``range_with``),
        or the span of the two-sided values its conflict group gives for the same metric."""
        if self.comparison == "just-over":
            return self.published, self.published + self.tolerance(self.published)
        if self.range_with:
            other = _in_unit(published_rows()[self.range_with], self.unit)
            return min(self.published, other), max(self.published, other)
        group = self.row["conflict_group"]
        if not group or self.comparison != "two-sided":
            return self.published, self.published  # a bound is its own row's: 'over six times' is >= 6
        q = units.unit(self.unit).quantity
        values = [
            _in_unit(r, self.unit)
            for r in published_rows().values()
            if r["conflict_group"] == group
            and r["metric"] == self.metric
            and units.unit(r["unit"]).quantity == q
            and READINGS.get(r["qualifier"]) == "two-sided"
        ]
        return min(values), max(values)

    def tolerance(self, value: float | None = None) -> float:
        """Allowed |simulated - published| in this point's unit, around ``value`` (default: published)."""
        pub = self.published if value is None else value
        time = units.unit(self.unit).quantity == "time"
        return tolerance(pub, self.unit, fine=self.stated_precision() if time else None)

    def stated_precision(self) -> float:
        """One unit in the last place the document states the row's value to (``0.4349`` ms: 0.0001 ms;
        ``85`` us: 1 us; ``5`` min: 1 min), in this point's unit: the floor of a time's tolerance."""
        exponent = Decimal(repr(float(self.row["value"]))).normalize().as_tuple().exponent
        return units.convert(10.0 ** min(int(exponent), 0), self.row["unit"], self.unit)

    def passes(self, simulated: float) -> bool:
        """Whether a simulated value reproduces this point (NaN never does)."""
        if not math.isfinite(simulated):
            return False
        lo, hi = self.published_range
        if self.comparison == "at-least":
            return simulated >= lo
        if self.comparison == "at-most":
            return simulated <= hi
        if self.comparison == "just-over":
            return lo <= simulated <= hi
        lo_end, hi_end = self.range_ends()
        return (
            (lo if lo_end else lo - self.tolerance(lo))
            <= simulated
            <= (hi if hi_end else hi + self.tolerance(hi))
        )

    def range_ends(self) -> tuple[bool, bool]:
        """Whether the low and the high end of :attr:`published_range` are ends of a range the document
        states (a ``range-low`` or ``range-high`` row): such an end is the band's own edge, with no
        tolerance added; an end that is a single stated value gets its tolerance."""
        if self.comparison != "two-sided":
            return False, False
        if self.range_with:
            return True, True
        lo, hi = self.published_range
        group = self.row["conflict_group"]
        rows = [r for r in published_rows().values() if group and r["conflict_group"] == group] or [self.row]
        ends = {
            _in_unit(r, self.unit)
            for r in rows
            if r["metric"] == self.metric and r["qualifier"] in ("range-low", "range-high")
        }
        return lo in ends, hi in ends

    def error(self, simulated: float) -> float:
        """Simulated minus the nearest published value of the range (0 inside it)."""
        lo, hi = self.published_range
        return simulated - min(max(simulated, lo), hi)


@dataclass(frozen=True)
class Scenario:
    """One published experiment: ``run(seed, quick)`` simulates one replication and returns a simulated
    value per point key (:attr:`Point.key`, in the point's unit). ``points`` are the published numbers
    it reproduces."""

    study: str
    name: str
    points: tuple[Point, ...]
    run: Callable[[int, bool], dict[str, float]]


@dataclass(frozen=True)
class Replications:
    """The replications of one scenario: per replication, the simulated values, or the reason it
    failed (an exception's message)."""

    values: tuple[dict[str, float], ...]
    errors: tuple[str, ...]

    @staticmethod
    def one(
        scenario: Scenario,
        seed: int,
        quick: bool,
        scale: float | None = None,
        draw: Mapping[ParamKey, object] | None = None,
    ) -> tuple[dict[str, float], str]:
        """One replication: the scenario's values with ``seed`` (with ``scale``, inside
        :func:`~storagelab.provenance.capacity_scale`; with ``draw``, the presets' parameters drawn,
        inside :func:`~storagelab.provenance.parameter_draw`), or ``({}, reason)`` if it raised (a failed
        replication fails its points; it is not dropped)."""
        try:
            with (
                capacity_scale(scale) if scale is not None else nullcontext(),
                parameter_draw(draw) if draw else nullcontext(),
            ):
                return dict(scenario.run(seed, quick)), ""
        except Exception as exc:
            warnings.warn(
                f"calibration scenario {scenario.study}: {scenario.name!r}, seed {seed} failed: {exc!r}",
                stacklevel=2,
            )
            return {}, f"{type(exc).__name__}: {exc}"

    @staticmethod
    def discover(
        scenario: Scenario, seed: int, quick: bool
    ) -> tuple[tuple[dict[str, float], str], dict[ParamKey, Param]]:
        """:meth:`one` at the declared values, run inside
        :func:`~storagelab.provenance.recording_uncertain`: the replication, and the uncertain parameters
        the scenario's presets read (``{(preset, parameter): Param}``, as declared)."""
        with recording_uncertain() as recorded:
            result = Replications.one(scenario, seed, quick)
        return result, dict(recorded)

    @classmethod
    def of_runs(cls, runs: Sequence[tuple[dict[str, float], str]]) -> Replications:
        """The replications made of :meth:`one`'s results, in seed order."""
        return cls(tuple(v for v, _ in runs), tuple(e for _, e in runs))

    @classmethod
    def run(cls, scenario: Scenario, seeds: Sequence[int], quick: bool) -> Replications:
        """Run the scenario once per seed, here, one after another."""
        return cls.of_runs([cls.one(scenario, s, quick) for s in seeds])

    def of(self, point: Point) -> tuple[list[float], list[str]]:
        """The point's finite values, and why each other replication failed."""
        ok, why = [], []
        for v, err in zip(self.values, self.errors, strict=True):
            x = v.get(point.key, math.nan)
            if err:
                why.append(err)
            elif x is None or not math.isfinite(x):
                why.append("no finite value (saturated or not simulated)")
            else:
                ok.append(float(x))
        return ok, why

    def passes(self, point: Point) -> tuple[bool, float]:
        """(pass, mean) of the point over these replications: a failed replication fails it."""
        ok, why = self.of(point)
        mean = interval(ok)[0]
        return (not why and point.passes(mean)), mean


def tabulate(
    scenario: Scenario,
    main: Replications,
    perturbed: dict[float, Replications],
    fitted: set[str],
    confidence: float,
) -> list[dict]:
    """Table rows (one per point) for one scenario's replications; claim-level columns (role,
    sensitive) are settled by :func:`settle_claims`."""
    rows = []
    for p in scenario.points:
        ok, why = main.of(p)
        mean, lo, hi = interval(ok, confidence)
        passed = not why and p.passes(mean)
        note = p.note
        if why:
            reasons = sorted(set(why))
            note = "; ".join(
                [x for x in (note, f"FAILED: {len(why)} of {len(main.values)} replications: {'; '.join(reasons)}") if x]
            )  # fmt: skip
        half, double = (
            perturbed[f].passes(p) if f in perturbed else (None, math.nan) for f in SENSITIVITY_FACTORS
        )
        plo, phi = p.published_range
        role = "derived" if p.derived else "fitted" if p.row_id in fitted else "predicted"
        rows.append(
            {
                "study": p.study, "claim": p.claim_id, "point": p.key, "role": role, "sensitive": None,
                "pass": passed, "metric": p.metric, "unit": p.unit, "published": p.published,
                "published_low": plo, "published_high": phi, "simulated": mean, "ci_low": lo, "ci_high": hi,
                "error": p.error(mean), "tolerance": p.tolerance(), "comparison": p.comparison,
                "replications": len(main.values), "simulated_half": half[1], "pass_half": half[0],
                "simulated_double": double[1], "pass_double": double[0],
                "perturbed_replications": len(next(iter(perturbed.values())).values) if perturbed else 0,
                "scenario": scenario.name, "description": p.description, "note": note,
            }
        )  # fmt: skip
    return rows


def settle_claims(table: pl.DataFrame) -> pl.DataFrame:
    """Claim-level columns: a claim's role is ``derived`` if all its points are, ``fitted`` if any is,
    else ``predicted``; it is ``sensitive`` unless it passes in the main run and in both perturbed runs
    (a derived claim is never sensitive: it does not test the model)."""
    by = ["study", "claim"]
    passes_all = pl.col("pass").all() & pl.col("pass_half").fill_null(False).all() & pl.col("pass_double").fill_null(False).all()  # fmt: skip
    role = (
        pl.when(pl.col("role").eq("derived").all())
        .then(pl.lit("derived"))
        .when(pl.col("role").eq("fitted").any())
        .then(pl.lit("fitted"))
        .otherwise(pl.lit("predicted"))
    )
    return table.with_columns(role=role.over(by), sensitive=(~passes_all).over(by)).with_columns(
        sensitive=pl.when(pl.col("role") == "derived").then(False).otherwise(pl.col("sensitive"))
    )


#: The table's columns, in order (the CSV written by ``storagelab calibrate``).
SCHEMA = {
    "study": pl.String, "claim": pl.String, "point": pl.String, "role": pl.String, "sensitive": pl.Boolean,
    "pass": pl.Boolean, "metric": pl.String, "unit": pl.String, "published": pl.Float64,
    "published_low": pl.Float64, "published_high": pl.Float64, "simulated": pl.Float64,
    "ci_low": pl.Float64, "ci_high": pl.Float64, "error": pl.Float64, "tolerance": pl.Float64,
    "comparison": pl.String, "replications": pl.Int64, "simulated_half": pl.Float64, "pass_half": pl.Boolean,
    "simulated_double": pl.Float64, "pass_double": pl.Boolean, "perturbed_replications": pl.Int64,
    "scenario": pl.String, "description": pl.String, "note": pl.String,
}  # fmt: skip
COLUMNS = tuple(SCHEMA)

#: The columns a run with ``uncertainty`` adds (issue 68), after :data:`COLUMNS`: each point's predictive
#: median and its 80 % and 95 % intervals over the parameter draws plus the simulation noise
#: (:func:`storagelab.uncertainty.propagation.interval`, in the point's unit); ``draws``, the draws whose run
#: gave a finite value (0: the scenario reads no uncertain parameter, and the interval is the replications'
#: noise alone); ``drivers``, the parameters that decide it, most first, with their first-order index
#: (RBD-FAST on the draws, :func:`storagelab.uncertainty.sensitivity.sensitivity`); ``left_out_of_fit``,
#: whether a fit was fitted on this point and the draws took that fit from its ``prior`` (the range without
#: its rows) instead; ``halving_shift``, how far an 80 % bound moves when only the first half of the draws is
#: used, as a fraction of the 80 % width (:func:`storagelab.uncertainty.propagation.stability`).
UNCERTAINTY_SCHEMA = {
    "median": pl.Float64, "low80": pl.Float64, "high80": pl.Float64, "low95": pl.Float64,
    "high95": pl.Float64, "draws": pl.Int64, "drivers": pl.String, "left_out_of_fit": pl.Boolean,
    "halving_shift": pl.Float64,
}  # fmt: skip
UNCERTAINTY_COLUMNS = tuple(UNCERTAINTY_SCHEMA)
