"""Architectures side by side on one workload mix: the headroom of each, with a confidence interval, the
class and resource that fail first, what each was given, and the per-class latency against load.

>>> from storagelab import studies
>>> from storagelab.analysis.comparison import compare
>>> from storagelab.analysis.workload_mix import WorkloadMix
>>> mix = WorkloadMix.from_yaml("params/19-compare-architectures.yaml")
>>> result = compare(mix, [studies.candidate("XtremIO", "XtremIO, 1 X-Brick(s)"),
...                        studies.candidate("vSAN, 8 hosts", "Virtual SAN 5.5, all-flash NVMe", overrides={"hosts": 8})])
>>> result.table()            # headroom, interval, what fails first, the bottleneck
>>> result.headroom_chart()

A :class:`Candidate` is an architecture preset (its name and the function that builds it: see
:func:`storagelab.studies.candidate`) with overrides (the way to equalise one axis, e.g. the same
number of drives or hosts) and a placement of the mix's workload kinds on its volumes, or a system known
only from a published curve (``curve="vsan_throughput/all-flash NVMe"``), which enters as a
:mod:`load-dependent station <storagelab.components.published_curve>`: its headroom is searched on the
fitted curve and on both ends of its confidence band, and never past the published range (the answer is
then *at least* that much).

Each candidate's search is a headroom search over the mix's multiplier (:mod:`storagelab.analysis.headroom`):
its first replication (:func:`~storagelab.analysis.headroom.search_replication`, probing the top of the bracket
where the mix as given holds with a component already saturated; where runs are long, from the bracket of a
pilot search of short runs), then its later ones side by side, each from the first's final bracket, as Dask
tasks on one process per core, deterministic by seed. Where there are pilots, they all run first, side by
side, and the searches then start by what their pilots cost, the costliest first (:func:`search_tasks`).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import polars as pl

from storagelab.analysis.decision import Decision
from storagelab.analysis.headroom import (
    ClearOutcome,
    OutsideBracket,
    Replication,
    combine,
    search_replication,
)
from storagelab.analysis.workload_mix import GENERATORS, WorkloadMix
from storagelab.architectures.topology import Topology
from storagelab.calibration.discrepancy import Band
from storagelab.devices import CapacityExceeded
from storagelab.kernel.component import Component
from storagelab.kernel.run_limits import check_limits
from storagelab.kernel.simulation import SimulationResult, simulate
from storagelab.published.curves.base import CurveFit

if TYPE_CHECKING:  # altair is imported by the charts that use it: the calibration's workers never chart
    import altair as alt

#: Published-curve families a candidate may name (``family/series`` of :func:`storagelab.published.curves.fit_published`).
CURVE_FAMILIES = ("vsan_throughput", "ds5020_response_time")

#: Parameter name fragments that describe what an architecture was given (hardware, not behaviour).
_GIVEN_WORDS = ("drive", "hdd", "ssd", "flash", "host", "port", "path", "processor", "controller", "brick",
                "device", "link", "data_cache", "copies", "raid", "card")  # fmt: skip
_GIVEN_UNITS = ("count", "preset", "TB", "GB", "MB", "GB/s", "MB/s", "IOPS")


@dataclass(frozen=True)
class Candidate:
    """One architecture in a comparison: a ``preset`` (its name; ``build`` is the function that builds it
    from overrides, e.g. from :data:`storagelab.studies.PRESETS`: :func:`storagelab.studies.candidate`
    fills it in) with ``overrides`` and a ``placement`` (workload kind -> volumes; default: everything on
    a single-volume preset's one volume, see :func:`default_placement`), or a published ``curve``
    (``family/series``) as a station."""

    label: str
    preset: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    placement: Mapping[str, Sequence[str]] | None = None
    curve: str | None = None
    build: Callable[..., Topology] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.preset is None) == (self.curve is None):
            raise ValueError(f"candidate {self.label!r}: give exactly one of preset and curve")
        if self.preset is not None and self.build is None:
            raise ValueError(
                f"candidate {self.label!r}: a preset candidate needs the function that builds it "
                "(storagelab.studies.candidate(label, preset) fills it in)"
            )
        if self.curve is not None:
            family = self.curve.split("/", 1)[0]
            if family not in CURVE_FAMILIES or "/" not in self.curve:
                raise ValueError(
                    f"candidate {self.label!r}: curve must be 'family/series' with family one of {CURVE_FAMILIES}, "
                    f"got {self.curve!r}"
                )
            if self.overrides:
                raise ValueError(f"candidate {self.label!r}: a published curve takes no overrides")

    def check(self) -> None:
        """Build the candidate once (an unknown preset, parameter or volume raises, naming it)."""
        if self.build is not None:
            top = self.build(**self.overrides)
            placement = self.placement_on(top.volumes)
            bad = sorted({v for vs in placement.values() for v in vs} - set(top.volumes))
            if bad:
                raise ValueError(
                    f"candidate {self.label!r}: placement names volumes {bad}; {self.preset!r} has: "
                    f"{', '.join(top.volumes)}"
                )
        else:
            _curve_fit(self.curve)

    def placement_on(self, volumes: Mapping[str, Component]) -> Mapping[str, Sequence[str]]:
        """This candidate's placement on ``volumes``: its own, or :func:`default_placement`."""
        return self.placement if self.placement is not None else default_placement(self.preset or "", volumes)


def default_placement(preset: str, volumes: Mapping[str, Component]) -> dict[str, list[str]]:
    """Where each workload kind goes on ``preset``: everything on the one volume of a single-volume
    architecture (a datastore, an XtremIO LUN); a preset with several volumes needs a placement (its
    study may give one: :data:`storagelab.studies.PLACEMENTS`)."""
    if len(volumes) == 1:
        return {kind: list(volumes) for kind in GENERATORS}
    raise ValueError(
        f"preset {preset!r} has several volumes ({', '.join(volumes)}): give the candidate a placement "
        "(workload kind -> volumes)"
    )


@functools.cache
def _curve_fit(curve: str) -> CurveFit:
    from storagelab.published import datasets
    from storagelab.published.curves import fit_published

    family, series = curve.split("/", 1)
    fits = fit_published(datasets.load()).families.get(family, {})
    if series not in fits:
        raise ValueError(
            f"published curve {curve!r} not found; {family} has: {', '.join(fits) or 'no fitted series'}"
        )
    return fits[series]


def _topology(c: Candidate, bound: str) -> tuple[Mapping[str, Component], Mapping[str, Sequence[str]]]:
    if c.build is not None:
        top = c.build(**c.overrides)
        return top.volumes, c.placement_on(top.volumes)
    from storagelab.components.published_curve import closed_system_station, response_time_station

    fit = _curve_fit(c.curve)
    make = closed_system_station if c.curve.startswith("vsan_throughput") else response_time_station
    station = make(c.label, fit, bound)
    return {"curve": station}, {kind: ["curve"] for kind in GENERATORS}


@dataclass(frozen=True)
class Settings:
    """How each headroom is searched: ``duration_s`` simulated seconds per run (``warmup_s`` of them
    discarded), ``replications`` (independent searches: the headroom is their geometric mean, its interval
    a Student-t interval on the log of the multiplier widened for the bisection's resolution; see
    :mod:`storagelab.analysis.headroom`), the multiplier bracket ``[low, high]`` walked from ``start``, the
    bisection's relative ``tolerance``, the ``seed`` and the interval's ``confidence``. Three replications:
    with two, the t factor is 12.7 and the interval is several times wider for two thirds of the cost
    (``python -m storagelab.verify.headroom_coverage --cases mm1-mean --replications 2 3 4 5 --tolerance
    0.1``). ``early_stop``: a run whose outcome is already clear ends early
    (:class:`~storagelab.analysis.headroom.ClearOutcome`). ``pilot_s``: where runs are at least twice as
    long as this, a *pilot* search with runs this long (the warm-up scaled alike) is made first, and the
    first replication starts from its final bracket instead of walking from ``start`` (0: no pilot); the
    pilot's runs are kept (``pilot`` in the evaluations) but never enter the headroom. ``max_events`` and
    ``max_wall_s``: each run stops with :class:`~storagelab.kernel.run_limits.RunLimitReached` past that
    many events or wall-clock seconds (None: no limit; see :func:`storagelab.simulate`)."""

    duration_s: float = 2.0
    warmup_s: float = 0.5
    replications: int = 3
    low: float = 0.125
    high: float = 4.0
    start: float = 1.0
    tolerance: float = 0.1
    seed: int = 1
    confidence: float = 0.95
    early_stop: bool = True
    pilot_s: float = 2.0
    max_events: int | None = None
    max_wall_s: float | None = None

    def __post_init__(self) -> None:
        check_limits(self.max_events, self.max_wall_s)
        if not self.pilot_s >= 0:
            raise ValueError(
                f"pilot_s must be >= 0 simulated seconds (0: no pilot search), got {self.pilot_s!r}"
            )

    @property
    def pilot(self) -> Settings | None:
        """The settings of the pilot search (short runs, the warm-up scaled alike), or None where runs are
        shorter than twice ``pilot_s`` (a pilot would cost about as much as the search it guides)."""
        if not self.pilot_s or self.duration_s < 2 * self.pilot_s:
            return None
        share = self.pilot_s / self.duration_s
        return replace(self, duration_s=self.pilot_s, warmup_s=self.warmup_s * share, pilot_s=0.0)


def candidate_run(
    mix: WorkloadMix,
    c: Candidate,
    s: Settings,
    bound: str = "fit",
    *,
    early_stop: bool = True,
    watch: tuple[Callable[[SimulationResult], bool], Sequence[float]] | None = None,
) -> Callable[[float, int], SimulationResult]:
    """One run of ``c`` (``bound``: a published curve's fit or band) under ``mix`` scaled by a multiplier,
    with a seed, as the headroom search makes it; ``early_stop``: ended by
    :class:`~storagelab.analysis.headroom.ClearOutcome` once its outcome is clear; ``watch``, instead:
    ``(stop, checks)``, ``stop`` called with what the run measured so far at each of ``checks`` (fractions
    of the measured time), ending the run where it returns True (``simulate``'s own arguments)."""
    _, placement = _topology(c, bound)
    levels = mix.service_levels(placement)

    def run(m: float, seed: int) -> SimulationResult:
        volumes, placement = _topology(c, bound)
        sources = mix.sources(volumes, placement, m)
        stop, checks = watch or (ClearOutcome(levels) if early_stop else None, ClearOutcome.CHECKS)
        return simulate(sources[0].target, sources, duration=s.duration_s, warmup=s.warmup_s, seed=seed,
                        progress=False, stop=stop, checks=checks, max_events=s.max_events,
                        max_wall_s=s.max_wall_s)  # fmt: skip

    return run


def _replication(
    mix: WorkloadMix,
    c: Candidate,
    s: Settings,
    bound: str,
    r: int,
    first: Replication | dict[str, Any] | None,
    pilot: bool = False,
) -> Replication | dict[str, Any]:
    """Replication ``r`` of ``c``'s search (one band of a curve) on seed ``s.seed + r``: the first
    (``first`` None) from ``s.start``, probing ``s.high`` where the start holds with a component already
    saturated (an architecture that holds the mix there is answered in two runs, not a walk of doublings);
    a later one from the first's final bracket (two
    runs where its ends hold and fail again, as common random numbers make likely), so that the later
    replications of a search run side by side once the first is done. A search
    that ends without an answer (its data do not fit, or the service levels fail at ``low`` or hold at
    ``high``) gives its finished row instead (a dict, as :func:`_search` returns), which the later
    replications pass on without running. With ``pilot``, ``first`` is the pilot search (:func:`_pilot`)
    and this the first replication: it starts from the pilot's final bracket; where the pilot's short runs
    found none (the levels failed at ``low`` or held at ``high``: long runs may not), it walks from
    ``s.start`` as without a pilot; where the data do not fit, that row is passed on."""
    if pilot and isinstance(first, dict) and first["row"]["status"] != "cannot host":
        first = None
    if isinstance(first, dict):
        return first
    _, placement = _topology(c, bound)
    levels = mix.service_levels(placement)
    run = candidate_run(mix, c, s, bound, early_stop=s.early_stop)
    try:
        return search_replication(run, levels, s.seed + r, low=s.low, high=s.high, start=s.start,
                                  tolerance=s.tolerance, probe_high=True,
                                  warm=None if first is None else first.bracket)  # fmt: skip
    except CapacityExceeded as err:  # the mix's data does not fit where the placement puts it
        row = _row(c, bound, headroom=None, low=None, high=None, status="cannot host", fails_first=str(err),
                   bottleneck="", bottleneck_utilisation=None)  # fmt: skip
        return {"row": row, "evaluations": None}
    except OutsideBracket as err:
        status = "fails at the lowest load" if err.side == "low" else "holds at the highest load"
        # the busiest component at that end of the bracket: what would bind first beyond it
        row = _row(c, bound, headroom=err.multiplier, low=None, high=None, status=status,
                   fails_first=err.failing or str(err).split(" (seed")[0], bottleneck=err.bottleneck,
                   bottleneck_utilisation=err.bottleneck_utilisation)  # fmt: skip
        return {"row": row, "evaluations": err.evaluations}


def _pilot(mix: WorkloadMix, c: Candidate, s: Settings, bound: str) -> Replication | dict[str, Any] | None:
    """The pilot search of ``c`` (one band of a curve) with the short runs of ``s.pilot``, on seed
    ``s.seed``: the bracket the first replication starts from (:func:`_replication`), or None where ``s``
    makes no pilot."""
    short = s.pilot
    return None if short is None else _replication(mix, c, short, bound, 0, None)


def _row(c: Candidate, bound: str, **found: Any) -> dict[str, Any]:
    """A row of the comparison's table: the candidate, its kind, the band searched, and what was found."""
    return {
        "architecture": c.label,
        "kind": "published curve" if c.curve else "model",
        "bound": bound,
        **found,
    }


def _search_result(
    c: Candidate,
    s: Settings,
    bound: str,
    pilot: Replication | dict[str, Any] | None,
    *replications: Replication | dict[str, Any],
) -> dict[str, Any]:
    """One candidate's headroom (one band of a curve) from its replications, as a row and its evaluations:
    the interval of :func:`~storagelab.analysis.headroom.combine`, or the row of the first replication
    that ended without an answer, with the runs of every replication before it; the ``pilot`` search's runs
    first, marked ``pilot`` (they never enter the interval)."""
    done: list[Replication] = []
    row, ev = None, None
    for rep in replications:
        if isinstance(rep, dict):
            row, ev = rep["row"], rep["evaluations"]
            if done and ev is not None:
                earlier = pl.DataFrame([run for d in done for run in d.evaluations])
                ev = pl.concat([earlier, ev], how="vertical_relaxed")
            break
        done.append(rep)
    else:
        h = combine(done, low=s.low, high=s.high, confidence=s.confidence)
        status = "at least (the published range ends)" if h.censored else "found"
        row = _row(c, bound, headroom=h.mean, low=h.low, high=h.high, status=status, fails_first=h.fails_first,
                   bottleneck=h.bottleneck, bottleneck_utilisation=h.bottleneck_utilisation)  # fmt: skip
        ev = h.evaluations
    if ev is not None:
        ev = ev.with_columns(pilot=pl.lit(False))
    if isinstance(pilot, Replication):
        ran = pl.DataFrame(list(pilot.evaluations))
    else:
        ran = None if pilot is None else pilot["evaluations"]
    if ran is not None:
        ran = ran.with_columns(pilot=pl.lit(True))
        ev = ran if ev is None else pl.concat([ran, ev], how="vertical_relaxed")
    label = {"architecture": pl.lit(c.label), "bound": pl.lit(bound)}
    return {"row": row, "evaluations": None if ev is None else ev.with_columns(**label),
            "answers": [r.answer for r in done], "first": replications[0] if replications else None}  # fmt: skip


def _search(mix: WorkloadMix, c: Candidate, s: Settings, bound: str) -> dict[str, Any]:
    """One candidate's headroom (one band of a curve), as a row and its evaluations: its pilot (where ``s``
    makes one) and replications one after another here (:func:`search_tasks` runs them as tasks)."""
    pilot = _pilot(mix, c, s, bound)
    first = _replication(mix, c, s, bound, 0, pilot, pilot=pilot is not None)
    later = [_replication(mix, c, s, bound, r, first) for r in range(1, s.replications)]
    return _search_result(c, s, bound, pilot, first, *later)


def bottleneck_capacity(result: Comparison) -> pl.Series:
    """Per row of ``result``'s table, where its bottleneck's capacity comes from: ``"published curve"`` for
    a curve, else :func:`~storagelab.architectures.capacities.capacity_origin` on the candidate's preset
    (``"hardware (datasheet)"``, ``"fit (saturates: <row>)"``...; ``"no declared stage"`` if no stage
    holds it); ``""`` for a row with no bottleneck (*cannot host*)."""
    from storagelab.architectures.capacities import capacity_origin

    built: dict[str, Topology] = {}
    by_label = {c.label: c for c in result.candidates}
    out = []
    for row in result.rows:
        c = by_label.get(row["architecture"])
        if not row["bottleneck"] or c is None:
            out.append("")
        elif c.curve is not None:
            out.append("published curve")
        else:
            if c.label not in built:
                built[c.label] = c.build(**c.overrides)
            out.append(capacity_origin(built[c.label], row["bottleneck"]) or "no declared stage")
    return pl.Series("bottleneck_capacity", out, dtype=pl.String)


@dataclass
class Comparison:
    """The result of :func:`compare`: per candidate (and per band of a published curve) its headroom."""

    mix: WorkloadMix
    candidates: list[Candidate]
    settings: Settings
    rows: list[dict[str, Any]]
    runs: list[pl.DataFrame]
    #: With ``uncertainty``: the decision under uncertainty (:mod:`storagelab.analysis.decision`) and every
    #: run of the draws' searches (as :meth:`evaluations`, with their ``draw``).
    decision: Decision | None = None
    draw_runs: pl.DataFrame | None = None

    def table(self) -> pl.DataFrame:
        """One row per architecture (and band of a curve): headroom (the mix's multiplier; the geometric mean
        of the searches), its interval, status, the service level that fails first, the bottleneck with its
        utilisation and where its capacity comes from (:func:`bottleneck_capacity`)."""
        schema = {"architecture": pl.String, "kind": pl.String, "bound": pl.String, "headroom": pl.Float64,
                  "low": pl.Float64, "high": pl.Float64, "status": pl.String, "fails_first": pl.String,
                  "bottleneck": pl.String, "bottleneck_utilisation": pl.Float64}  # fmt: skip
        return pl.DataFrame(self.rows, schema=schema).with_columns(
            bottleneck_capacity=bottleneck_capacity(self)
        )

    def evaluations(self) -> pl.DataFrame:
        """Every run of every search: architecture, bound, seed, multiplier, service level, measured (ms),
        limit (ms), their ratio, the run's simulated seconds (``run_s``: shorter where it stopped early)
        and the IOs it simulated (``ios``, warm-up included), whether every component stayed in its valid
        range, and whether it was the pilot's (:attr:`Settings.pilot_s`)."""
        return pl.concat([r for r in self.runs if r is not None], how="vertical_relaxed")

    def cost(self) -> pl.DataFrame:
        """What each search simulated, its pilot's runs included: per architecture (and band of a curve)
        its ``runs``, their simulated seconds (``simulated_s``, less than asked where a run stopped early)
        and the IOs they issued (``ios``, warm-up included: what a search's time grows with, at some
        microseconds per IO), with each search's share of all the IOs (``ios_share``), largest first. An
        architecture that cannot host the mix made no run and has no row. With uncertainty, the draws'
        searches of each architecture are one more row, its ``bound`` ``"parameter draws"``."""
        per_run = ["architecture", "bound", "pilot", "seed", "multiplier"]
        runs = self.evaluations().unique(subset=per_run, keep="first", maintain_order=True)
        if self.draw_runs is not None:  # the draws' searches (uncertainty), one row per candidate
            drawn = self.draw_runs.unique(subset=[*per_run, "draw"], keep="first", maintain_order=True)
            drawn = drawn.with_columns(bound=pl.lit("parameter draws")).select(runs.columns)
            runs = pl.concat([runs, drawn], how="vertical_relaxed")
        return (
            runs.group_by("architecture", "bound", maintain_order=True)
            .agg(runs=pl.len(), simulated_s=pl.col("run_s").sum(), ios=pl.col("ios").sum())
            .with_columns(ios_share=pl.col("ios") / pl.col("ios").sum())
            .sort("ios", descending=True, maintain_order=True)
        )

    #: The parts a run plays in a search, in the order :meth:`cost_by_role` lists them.
    ROLES = ("pilot", "walk and bisection", "bracket held", "bracket failed")

    def cost_by_role(self) -> pl.DataFrame:
        """Where the searches' IOs went, by the part each run played: the ``pilot``'s short runs; each
        replication's ``bracket held`` (its highest multiplier at which every level held and every
        component stayed in range) and ``bracket failed`` (its lowest at which one did not), the two runs
        its answer lies between; and the rest of its ``walk and bisection``. Per role: its ``runs``, how
        many went their ``full_length`` (the pilot's or the search's ``duration_s``; the others stopped
        early once their outcome was clear), their ``ios`` (warm-up included) and share of all the IOs
        (``ios_share``), and the IOs of the full-length runs (``full_length_ios``). A held bracket run
        near the boundary can rarely stop early, so the held runs at full length are about the least a
        search of one bisection per replication spends at these settings."""
        per_run = ["architecture", "bound", "pilot", "seed", "multiplier"]
        runs = (
            self.evaluations()
            .group_by(per_run, maintain_order=True)
            .agg(
                ios=pl.col("ios").first(),
                run_s=pl.col("run_s").first(),
                held=(pl.col("ratio").max() <= 1.0) & pl.col("in_range").all(),
            )
        )
        search = ["architecture", "bound", "seed"]
        ends = (
            runs.filter(~pl.col("pilot"))
            .group_by(search)
            .agg(
                lo=pl.col("multiplier").filter(pl.col("held")).max(),
                hi=pl.col("multiplier").filter(~pl.col("held")).min(),
            )
        )
        pilot = self.settings.pilot
        asked = self.settings.duration_s
        role = (
            pl.when(pl.col("pilot"))
            .then(pl.lit(self.ROLES[0]))
            .when(pl.col("multiplier") == pl.col("lo"))
            .then(pl.lit(self.ROLES[2]))
            .when(pl.col("multiplier") == pl.col("hi"))
            .then(pl.lit(self.ROLES[3]))
            .otherwise(pl.lit(self.ROLES[1]))
        )
        length = pl.when(pl.col("pilot")).then(pl.lit(pilot.duration_s if pilot else asked)).otherwise(asked)
        full = pl.col("run_s") >= length
        by = (
            runs.join(ends, on=search, how="left")
            .with_columns(role=role, full_length=full)
            .group_by("role")
            .agg(
                runs=pl.len(),
                full_length=pl.col("full_length").sum(),
                ios=pl.col("ios").sum(),
                full_length_ios=pl.col("ios").filter(pl.col("full_length")).sum(),
            )
        )
        order = pl.DataFrame({"role": list(self.ROLES)})
        return (
            order.join(by, on="role", how="inner", maintain_order="left")
            .with_columns(ios_share=pl.col("ios") / pl.col("ios").sum())
            .select("role", "runs", "full_length", "ios", "ios_share", "full_length_ios")
        )

    def given(self) -> pl.DataFrame:
        """What each architecture was given: its hardware parameters (drives, flash, hosts, ports, links,
        processors) with their values and origins; a published curve, the points it was fitted on."""
        frames = []
        for c in self.candidates:
            if c.preset is None:
                fit = _curve_fit(c.curve)
                frames.append(pl.DataFrame({
                    "architecture": [c.label], "parameter": ["published points"],
                    "value": [f"{fit.n_points} points, {fit.x_name} {fit.points['x'].min():g}..{fit.points['x'].max():g}"],
                    "unit": [""], "origin": ["document"],
                }))  # fmt: skip
                continue
            table = c.build(**c.overrides).param_table()
            table = table.filter(
                pl.col("unit").is_in(_GIVEN_UNITS),
                pl.col("parameter").str.contains("|".join(_GIVEN_WORDS)),
                ~pl.col("parameter").str.contains("hit_ratio|share|warm|block|cpu|overhead|time"),
            )
            frames.append(
                table.select(pl.lit(c.label).alias("architecture"), "parameter", "value", "unit", "origin")
            )
        return pl.concat(frames)

    def headroom_chart(
        self, labels: Sequence[str] | None = None, *, name: str = "headroom"
    ) -> alt.LayerChart:
        """The headroom of each architecture (of ``labels``, default all: the mix's multiplier that still
        meets every service level) with its confidence interval; a published curve's bands beside its fit;
        an answer that is a bound (the published range ends, or the search's bracket) drawn as a triangle.
        A value the log axis cannot show (an interval's bound at or below 0) is drawn clipped at the axis's
        floor and said so in the tooltip and a subtitle (:func:`storagelab.charts.for_log_scale`)."""
        import altair as alt

        from storagelab import charts

        t = self.table().filter(pl.col("headroom").is_not_null())  # "cannot host": no number to draw
        if labels is not None:
            t = t.filter(pl.col("architecture").is_in(list(labels)))
        t = t.with_columns(
            label=pl.when(pl.col("bound") == "fit").then(pl.col("architecture"))
            .otherwise(pl.col("architecture") + " (" + pl.col("bound") + " band)"),
            bound_kind=pl.when(pl.col("status") == "found").then(pl.lit("headroom"))
            .when(pl.col("status").str.starts_with("at least") | pl.col("status").str.starts_with("holds"))
            .then(pl.lit("at least")).otherwise(pl.lit("below")),
        )  # fmt: skip
        shown = charts.for_log_scale(
            t.select("label", "headroom", "low", "high", "status", "bound_kind", "fails_first", "bottleneck"),
            ["low", "headroom", "high"],
            also=[1.0],  # the dashed rule at the mix as given
        )
        data = charts.chart_data(shown).to_pandas()
        order = t["label"].to_list()
        y = alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=360))
        base = alt.Chart(data)
        bars = base.mark_rule(strokeWidth=2, color="#444444").encode(y=y, x=alt.X("low:Q"), x2="high:Q")
        points = base.mark_point(filled=True, size=90).encode(
            y=y,
            x=alt.X(
                "headroom:Q", title="load multiplier meeting every service level", scale=alt.Scale(type="log")
            ),
            shape=alt.Shape(
                "bound_kind:N",
                title=None,
                scale=alt.Scale(
                    domain=["headroom", "at least", "below"],
                    range=["circle", "triangle-right", "triangle-left"],
                ),
            ),
            color=alt.Color(
                "bound_kind:N",
                title=None,
                scale=alt.Scale(
                    domain=["headroom", "at least", "below"], range=["#1f77b4", "#2ca02c", "#d62728"]
                ),
            ),
            tooltip=charts.with_clipped(
                shown, ["label", "headroom", "low", "high", "status", "fails_first", "bottleneck"]
            ),
        )
        one = alt.Chart(data).mark_rule(strokeDash=[4, 4], color="#999999").encode(x=alt.datum(1.0))
        return alt.layer(bars, points, one).properties(
            title=charts.titled(
                f"Headroom on {self.mix.name} (1 = the mix as given)",
                charts.clipped_subtitle(shown, label="label"),
            ),
            width=480,
            height=max(120, 26 * len(order)),
            name=name,
        )

    def latency_chart(
        self, labels: Sequence[str] | None = None, *, name: str = "latency-vs-load"
    ) -> alt.Chart:
        """Per class, the measured metric over its limit against the load multiplier, per architecture (of
        ``labels``, default all; every run of the searches; above 1 the class misses its service level).
        A value the log axes cannot show (a ratio of 0: nothing measured) is drawn clipped at the axis's
        floor and said so in the tooltip and a subtitle (:func:`storagelab.charts.for_log_scale`)."""
        import altair as alt

        from storagelab import charts

        ev = self.evaluations().filter(pl.col("bound") == "fit")
        if "pilot" in ev.columns:  # a pilot search's short runs only chose where a search started
            ev = ev.filter(~pl.col("pilot"))
        if labels is not None:
            ev = ev.filter(pl.col("architecture").is_in(list(labels)))
        ev = ev.group_by("architecture", "class", "service_level", "multiplier").agg(pl.col("ratio").mean())
        ev = charts.for_log_scale(ev.sort("architecture", "class", "multiplier"), ["multiplier"])
        ev = charts.for_log_scale(ev, ["ratio"], also=[1.0])  # the dashed rule at the limit
        data = charts.chart_data(ev).to_pandas()
        line = (
            alt.Chart(data)
            .mark_line(point=True)
            .encode(
                x=alt.X("multiplier:Q", title="load multiplier", scale=alt.Scale(type="log")),
                y=alt.Y("ratio:Q", title="measured / limit", scale=alt.Scale(type="log")),
                color=alt.Color("architecture:N", title=None),
                tooltip=charts.with_clipped(ev, ["architecture", "service_level", "multiplier", "ratio"]),
            )
        )
        limit = alt.Chart(data).mark_rule(strokeDash=[4, 4], color="#999999").encode(y=alt.datum(1.0))
        return (
            alt.layer(line, limit, data=data)
            .properties(width=260, height=200)
            .facet(facet=alt.Facet("class:N", title=None), columns=3)
            .properties(
                title=charts.titled(
                    "Each class against its service level as the mix grows",
                    charts.clipped_subtitle(ev, label="architecture"),
                ),
                name=name,
            )
        )


def _searches(candidates: Sequence[Candidate]) -> list[tuple[Candidate, str]]:
    """Every search of ``candidates``: a preset's on its fit, a published curve's on its fit and both bands."""
    return [(c, b) for c in candidates for b in (("fit", "lower", "upper") if c.curve else ("fit",))]


def pilot_tasks(mix: WorkloadMix, candidates: Sequence[Candidate], s: Settings) -> list[Any]:
    """The Dask tasks of every search's pilot (:func:`_pilot`; none where ``s`` makes no pilot), in the order
    of :func:`_searches`: :func:`compare` runs them first, side by side, and orders the searches by what
    their pilots cost (:func:`search_tasks`)."""
    import dask

    if s.pilot is None:
        return []
    return [dask.delayed(_pilot)(mix, c, s, bound, dask_key_name=f"pilot-{i:04d}")
            for i, (c, bound) in enumerate(_searches(candidates))]  # fmt: skip


def pilot_ios(pilot: Replication | dict[str, Any] | None) -> int:
    """The IOs a finished pilot search issued (warm-up included; 0 without a pilot): what its search's
    long runs will cost grows with it (the same multipliers, five times longer at notebook 19's full
    settings), which :func:`search_tasks` orders the searches by."""
    if pilot is None:
        return 0
    runs = pilot.evaluations if isinstance(pilot, Replication) else pilot["evaluations"]
    if runs is None:
        return 0
    rows = runs.to_dicts() if isinstance(runs, pl.DataFrame) else list(runs)
    per_run = {(r["seed"], r["multiplier"]): int(r["ios"]) for r in rows}  # a run has a row per level
    return sum(per_run.values())


def search_tasks(
    mix: WorkloadMix,
    candidates: Sequence[Candidate],
    s: Settings,
    pilots: Sequence[Replication | dict[str, Any] | None] | None = None,
) -> list[Any]:
    """The Dask tasks of :func:`compare`: per candidate (a published curve: per band), in the order given,
    its pilot search where runs are long (:attr:`Settings.pilot`), its first replication (from the pilot's
    bracket), then its later ones side by side (each starts from the first's final bracket), then the row
    made of them. The first replications start in the order given with the published curves (one
    station each: the cheap searches) last, and a search's later replications start as soon as its first
    is done, ahead of other searches' first replications, so that a long search is not left to the end
    while a process idles: Dask orders a graph by its keys and runs a task's dependents first, which
    these keys and dependencies set.

    With ``pilots`` (the finished pilots of :func:`pilot_tasks`, in their order), the pilots are values
    and the searches start by what their pilots cost (:func:`pilot_ios`), the costliest first, ties in the
    order above: the longest search then starts at once instead of in its place in the list (the
    processes are busy to the end, as longest-first scheduling keeps them). Where the tasks run changes
    no result: each is a function of its seed."""
    import dask

    searches = _searches(candidates)
    started = sorted(range(len(searches)), key=lambda i: searches[i][0].curve is not None)
    if pilots is not None:
        if len(pilots) != len(searches):
            raise ValueError(f"search_tasks: {len(pilots)} pilots for {len(searches)} searches")
        cost = [pilot_ios(p) for p in pilots]
        started = sorted(started, key=lambda i: -cost[i])  # stable: ties keep the order above
    rank = {i: r for r, i in enumerate(started)}
    has_pilot = s.pilot is not None
    tasks = []
    for i, (c, bound) in enumerate(searches):
        key = f"{len(searches) - rank[i]:04d}"
        if pilots is not None:
            pilot = pilots[i]
        elif has_pilot:
            pilot = dask.delayed(_pilot)(mix, c, s, bound, dask_key_name=f"pilot-{key}")
        else:
            pilot = None
        first = dask.delayed(_replication)(
            mix, c, s, bound, 0, pilot, has_pilot, dask_key_name=f"replication-0-{key}"
        )
        later = [
            dask.delayed(_replication)(mix, c, s, bound, r, first, dask_key_name=f"replication-{r}-{key}")
            for r in range(1, s.replications)
        ]
        tasks.append(
            dask.delayed(_search_result)(c, s, bound, pilot, first, *later, dask_key_name=f"search-{key}")
        )
    return tasks


def compare(
    mix: WorkloadMix,
    candidates: Sequence[Candidate],
    settings: Settings | None = None,
    *,
    scheduler: str = "processes",
    workers: int | None = None,
    uncertainty: int = 0,
    growth: float = 2.0,
    discrepancy: Band | None = None,
) -> Comparison:
    """Search every candidate's headroom on ``mix`` (a published curve: on its fit and both bands), one
    replication per task (:func:`search_tasks`) on Dask's ``scheduler`` ("processes", "threads" or
    "synchronous"). Every candidate is built once first, so a bad preset, parameter, placement or curve
    fails before any run.

    With ``uncertainty=n`` (draws, a power of two such as 8 or 16), each candidate built from a preset is
    also searched once per draw of the uncertain parameters, and :attr:`Comparison.decision` holds each
    headroom with its 80 % interval, the probabilities that it meets the mix as given and ``growth`` times
    it, the pairwise ranking probabilities and what to measure (:mod:`storagelab.analysis.decision`), the
    model's ``discrepancy`` band included where given."""
    import dask

    if isinstance(uncertainty, bool) or not isinstance(uncertainty, int) or uncertainty < 0:
        raise ValueError(f"uncertainty is a number of draws >= 0 (0: off), got {uncertainty!r}")
    if 0 < uncertainty <= 8:
        raise ValueError(
            f"uncertainty needs more than 8 draws to rank what moves a headroom, got {uncertainty}"
        )
    if not (math.isfinite(growth) and growth > 0):
        raise ValueError(f"growth is the mix's growth target, a multiplier > 0, got {growth!r}")
    s = settings or Settings()
    labels = [c.label for c in candidates]
    if not candidates or len(set(labels)) < len(labels):
        raise ValueError(f"compare needs candidates with distinct labels, got {labels}")
    for c in candidates:
        c.check()
    n = workers or max(1, min(len(_searches(candidates)), os.cpu_count() or 1))
    # one task per dispatch: the process pool's default hands tasks out in chunks of six, which put six of
    # notebook 19's nine searches on one process and left the other idle for most of the run
    run = functools.partial(dask.compute, scheduler=scheduler, num_workers=n, chunksize=1)
    # the pilots first, side by side: the searches then start by their cost, the longest first
    pilots = list(run(*pilot_tasks(mix, candidates, s))) if s.pilot is not None else None
    done = run(*search_tasks(mix, candidates, s, pilots))
    result = Comparison(mix, list(candidates), s, [d["row"] for d in done], [d["evaluations"] for d in done])
    if uncertainty:
        result.decision, result.draw_runs = _decide(
            mix, candidates, s, done, uncertainty, growth, discrepancy, run
        )
    return result


def _decide(
    mix: WorkloadMix,
    candidates: Sequence[Candidate],
    s: Settings,
    done: Sequence[dict[str, Any]],
    n: int,
    growth: float,
    band: Band | None,
    run: Callable[..., Any],
) -> tuple[Decision, pl.DataFrame | None]:
    """The draws' searches of every preset candidate (:func:`~storagelab.analysis.decision.draw_search`,
    one Dask task each, the costliest candidates' first) and the :class:`~storagelab.analysis.decision.
    Decision` made of them and the nominal searches ``done`` (in :func:`_searches`' order)."""
    import dask

    from storagelab.analysis.decision import candidate_sample, draw_design, draw_search

    design, keys = draw_design(mix, candidates, n, s.seed)
    by_label = {
        c.label: d for (c, bound), d in zip(_searches(candidates), done, strict=True) if bound == "fit"
    }
    drawn = [c for c in candidates if c.preset is not None]
    tasks = [
        dask.delayed(draw_search)(mix, c, s, j, {k: design.draws[j][k] for k in keys[c.label]},
                                  by_label[c.label]["first"], dask_key_name=f"draw-{i:03d}-{j:04d}")
        for i, c in enumerate(drawn) for j in range(n)
    ]  # fmt: skip
    found = run(*tasks)
    draws: dict[str, list[dict[str, Any]]] = {c.label: [] for c in drawn}
    frames = []
    for c, d in zip((c for c in drawn for _ in range(n)), found, strict=True):
        draws[c.label].append({k: v for k, v in d.items() if k != "evaluations"})
        if d["evaluations"] is not None:
            frames.append(d["evaluations"].with_columns(architecture=pl.lit(c.label), bound=pl.lit("fit"),
                                                        draw=pl.lit(d["draw"]), pilot=pl.lit(False)))  # fmt: skip
    samples = {}
    for c in drawn:
        answers = by_label[c.label]["answers"]
        if (
            len(answers) < 2
        ):  # ended without an answer (at a bound, or cannot host): the draws alone, no noise
            bound = by_label[c.label]["row"]["headroom"]
            if bound is None:
                continue
            answers = [bound]
        sample = candidate_sample(c.label, [d["answer"] for d in draws[c.label]], answers, band, s.low, s.high,
                                  [d["status"] for d in draws[c.label]],
                                  [d["resolution"] for d in draws[c.label]])  # fmt: skip
        if sample is not None:
            samples[c.label] = sample
    runs = pl.concat(frames, how="vertical_relaxed") if frames else None
    return Decision(samples, design, keys, draws, growth, band), runs
