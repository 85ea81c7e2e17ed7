"""NexGen analyses for the study's notebook: what the boot storm does to OLTP and Exchange, with the
LUNs' QoS policies off and on."""

from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import polars as pl

from storagelab import charts
from storagelab.studies.nexgen import preset
from storagelab.studies.nexgen.policies import LUN_POLICY, lun_levels
from storagelab.studies.nexgen.workloads import boot_storm_workload

#: A what-if where the storm and the databases share a saturated processor: the three VDI LUNs of
#: processor B moved to A, on processors of the N5 range's smallest model (50,000 IOPS for the pair,
#: the low end of the rating the preset's ``processor_iops`` quotes).
CONTENDED = {"processor_of": {"vdt-a": "A", "vdt-b": "A", "vdt-c": "A"}, "processor_iops": 25_000}


#: The four corners' span per volume: 500 GB (the three volumes together within the 2.4 TB flash tier).
CORNER_SPAN = 500 * 10**9


def four_corners(*, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None) -> pl.DataFrame:
    """The N5's four corners (:func:`storagelab.four_corners.four_corners`) over its six LUNs, 32 IOs
    outstanding per LUN, QoS off."""
    from storagelab import four_corners as corners

    return corners.four_corners(lambda: preset.nexgen(**(overrides or {})), span=CORNER_SPAN, seed=seed,
                                **corners.run_times(quick))  # fmt: skip


def _storm_run(qos: int, *, quick: bool, seed: int, overrides: Mapping[str, object]):
    # measured from half way up the ramp (6 s after the first power-on) to 4 s into the peak (44 s: long run)
    return preset.nexgen(**{**overrides, "qos": qos}).run(
        boot_storm_workload(), seed=seed, warmup=6.0, duration=16.0 if quick else 56.0
    )


def qos_off_and_on(
    *, quick: bool = True, seed: int = 1, overrides: Mapping[str, object] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The boot storm from half way up its ramp to 4 s into its peak (44 s in the long run), with the LUNs' QoS policies off and on
    (the same seed). Three frames: per LUN and QoS setting, IOPS, mean and 99th-percentile latency over
    the window and in its last half (the peak), against the LUN's latency target; per second, each LUN's
    mean latency (``mean_ms``), for :func:`latency_chart`; and the utilisation of the ports, storage
    processors and flash cards with QoS off and on. ``overrides`` go to the preset (e.g.
    :data:`CONTENDED`)."""
    targets = pl.DataFrame(
        {
            "lun": list(LUN_POLICY),
            "policy": [f"{lv.name} {lv.level}" for lv in lun_levels().values()],
            "target_ms": [lv.max_latency * 1e3 for lv in lun_levels().values()],
        }
    )
    tables, series, util = [], [], []
    for qos in (0, 1):
        res = _storm_run(qos, quick=quick, seed=seed, overrides=overrides or {})
        label = "QoS on" if qos else "QoS off"
        u = res.components().filter(
            (pl.col("statistic") == "utilisation") & pl.col("component").str.contains("port|processor|^ioMemory [AB]$")
        )
        util.append(u.select("component", utilisation=pl.col("value")).with_columns(qos=pl.lit(label)))
        rates = res.rates(1.0).rename({"class": "lun"}).with_columns(qos=pl.lit(label))
        half = rates["start_s"].max() / 2 + rates["start_s"].min() / 2
        peak = (
            rates.filter(pl.col("start_s") >= half)
            .group_by("lun")
            .agg(peak_mean_ms=(pl.col("mean_ms") * pl.col("ios")).sum() / pl.col("ios").sum())
        )
        tables.append(
            res.summary()
            .select(lun="class", iops="iops", mean_ms="mean_ms", p99_ms="p99_ms")
            .join(peak, on="lun")
            .with_columns(qos=pl.lit(label))
        )
        series.append(rates.select("qos", "lun", time_s="start_s", mean_ms="mean_ms"))
    table = (
        pl.concat(tables)
        .join(targets, on="lun")
        .with_columns(within_target=pl.col("peak_mean_ms") <= pl.col("target_ms"))
        .select("lun", "policy", "qos", "iops", "mean_ms", "peak_mean_ms", "p99_ms", "target_ms", "within_target")
        .sort("lun", "qos")
    )
    utilisation = pl.concat(util).pivot(on="qos", index="component", values="utilisation").sort("component")
    return table, pl.concat(series).join(targets.select("lun", "target_ms"), on="lun"), utilisation


#: The chart's series: the two runs and the LUN's target.
SERIES = ("QoS off", "QoS on", "latency target")


def latency_chart(series: pl.DataFrame, *, title: str, name: str) -> alt.Chart:
    """Per LUN (one panel each), mean latency per second with QoS off and on, and the LUN's latency
    target (a dashed line), on a log scale."""
    cols = ("qos", "lun", "time_s", "mean_ms")
    target = series.filter(pl.col("qos") == "QoS off").with_columns(
        qos=pl.lit("latency target"), mean_ms=pl.col("target_ms")
    )
    data = charts.chart_data(pl.concat([series.select(cols), target.select(cols)]).drop_nulls("mean_ms"))
    return (
        alt.Chart(data.to_pandas(), title=title)
        .mark_line(point=True)
        .encode(
            x=alt.X("time_s:Q", title="time since the first power-on (s)"),
            y=alt.Y("mean_ms:Q", title="mean latency (ms)", scale=alt.Scale(type="log")),
            color=alt.Color("qos:N", title=None, legend=alt.Legend(orient="top"),
                            scale=alt.Scale(domain=SERIES, range=["#d62728", "#2ca02c", "#7f7f7f"])),
            strokeDash=alt.StrokeDash("qos:N", legend=None,
                                      scale=alt.Scale(domain=SERIES, range=[[1, 0], [1, 0], [4, 4]])),
            facet=alt.Facet("lun:N", columns=3, title=None),
            tooltip=["lun", "qos", "time_s", "mean_ms"],
        )
        .properties(width=220, height=150, name=name)
    )
