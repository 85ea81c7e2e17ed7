"""A lab dataset measured beside its blind predictions, and the charts notebook 21 shows.

>>> from storagelab.lab.report import LabReport
>>> lab = LabReport.predict("measurements/lab-vda", "measurements/vda-ext4")
>>> lab.cache        # per page-cache point: hit ratio, IOPS and latency, measured and predicted, within
>>> lab.throttle     # per scenario and tenant: IOPS, MB/s and latency, measured and predicted, within
>>> lab.shares       # the share within tolerance per mechanism and metric
>>> hit_ratio_chart(lab.cache); throttle_chart(lab.series)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from storagelab.lab.predict import CacheCalibration, calibrate, predict_cache, predict_throttle, shares
from storagelab.lab.run import load_lab
from storagelab.measured.model import MeasuredFit
from storagelab.measured.system import MeasuredSystem


@dataclass
class LabReport:
    """A lab run (``measured``: its ``cache``, ``throttle``, ``series`` and ``provenance``) with the
    predictions: ``cache`` and ``throttle`` (measured beside predicted), ``series`` (IOPS over time of every
    tenant, measured and predicted), ``shares`` (within tolerance per mechanism), the ``calibration`` of the
    cache prediction and the device ``fitted``."""

    measured: dict[str, Any]
    fitted: MeasuredFit
    calibration: CacheCalibration | None
    cache: pl.DataFrame | None
    throttle: pl.DataFrame | None
    series: pl.DataFrame | None
    shares: pl.DataFrame

    @classmethod
    def predict(cls, folder: str | Path, device: str | Path, *, seed: int = 1) -> LabReport:
        """Predict every point of the lab run in ``folder`` with the model fitted on the measured system in
        ``device`` (a ``storagelab measure`` folder of the same disk), fitted as committed."""
        measured = load_lab(folder)
        fitted = MeasuredSystem.load(device).fit()
        cache = throttle = series = None
        cal = None
        if measured["cache"] is not None:
            cal = calibrate(measured["cache"], fitted, seed)
            cache = predict_cache(measured["cache"], fitted, seed=seed)
        if measured["throttle"] is not None:
            plan = measured["provenance"].get("plan", {})
            span = int(plan.get("file_size", 2**29))
            duration = float(plan.get("throttle", {}).get("runtime_s", 8.0))
            throttle, predicted = predict_throttle(
                measured["throttle"], fitted, span=span, duration_s=duration, seed=seed
            )
            m = (
                measured["series"]
                .filter(pl.col("kind") == "iops")
                .select("scenario", "tenant", "t_s", "iops", source=pl.lit("measured"))
            )
            series = pl.concat([m, predicted.with_columns(t_s=pl.col("t_s") + 0.1).select(
                "scenario", "tenant", "t_s", "iops", source=pl.lit("predicted"))])  # fmt: skip
        return cls(measured, fitted, cal, cache, throttle, series, shares(cache, throttle))


def hit_ratio_chart(cache: pl.DataFrame, *, name: str = "hit_ratio") -> object:
    """Hit ratio against the working set (a multiple of the memory limit), one panel per distribution and
    read share: measured (points; hollow outside ±0.05), predicted with ARC (solid line) and LRU (dashed)."""
    import altair as alt

    from storagelab import charts

    t = cache.with_columns(
        panel=pl.col("distribution") + ", " + pl.col("read_pct").cast(pl.String) + " % read"
    )
    keep = ["panel", "point", "working_set", "within_hit"]
    long = pl.concat([
        t.select(*keep, hit=pl.col("hit_measured"), series=pl.lit("measured")),
        t.select(*keep, hit=pl.col("hit_predicted"), series=pl.lit("ARC (predicted)")),
        t.select(*keep, hit=pl.col("hit_lru"), series=pl.lit("LRU (beside)")),
    ])  # fmt: skip
    base = alt.Chart().encode(
        x=alt.X("working_set:Q", title="working set (x the memory limit)", scale=alt.Scale(type="log", base=2)),
        y=alt.Y("hit:Q", title="hit ratio", scale=alt.Scale(domain=[0, 1])),
    )  # fmt: skip
    lines = (
        base.transform_filter("datum.series != 'measured'")
        .mark_line()
        .encode(strokeDash=alt.StrokeDash("series:N", title=None))
    )
    points = base.transform_filter("datum.series == 'measured'").mark_point(size=60, color="black").encode(
        fill=alt.condition("datum.within_hit", alt.value("black"), alt.value("white")),
        tooltip=["point", "working_set", "hit", "within_hit"],
    )  # fmt: skip
    return (
        alt.layer(lines, points, data=charts.chart_data(long).to_pandas())
        .properties(width=200, height=160)
        .facet(facet=alt.Facet("panel:N", title=None), columns=3)
        .properties(
            title="Page cache in a memory cgroup: measured hit ratio (points; hollow: outside ±0.05) "
            "and predicted (lines)",
            name=name,
        )
    )


def throttle_chart(series: pl.DataFrame, *, name: str = "throttle") -> object:
    """IOPS of every tenant over time, one panel per scenario: measured (fio's log, solid) and predicted
    (the token bucket over the fitted device, dashed), per 100 ms; log scale. fio leaves a window with no
    completion out of its log, so a measured line jumps over it."""
    import altair as alt

    from storagelab import charts

    data = charts.chart_data(series.filter(pl.col("iops") > 0)).to_pandas()
    return (
        alt.Chart(data)
        .mark_line()
        .encode(
            x=alt.X("t_s:Q", title="time (s)"),
            y=alt.Y("iops:Q", title="IOPS (per 100 ms)", scale=alt.Scale(type="log")),
            color=alt.Color("tenant:N"),
            strokeDash=alt.StrokeDash("source:N", title=None),
            tooltip=["scenario", "tenant", "source", "t_s", "iops"],
        )
        .properties(width=230, height=150)
        .facet(facet=alt.Facet("scenario:N", title=None), columns=3)
        .resolve_scale(y="independent")
        .properties(
            title="blk-throttle: every tenant's IOPS over time, measured (solid) and predicted (dashed)",
            name=name,
        )
    )
