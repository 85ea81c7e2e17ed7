"""NexGen analyses for the study's notebook: what the boot storm does to OLTP and Exchange, with the
LUNs' QoS policies off and on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import polars as pl

from storagelab import charts
from storagelab.studies.nexgen import preset
from storagelab.studies.nexgen.policies import LUN_POLICY, lun_levels
from storagelab.studies.nexgen.workloads import IOS_PER_ORDER, boot_storm_workload

#: A what-if where the storm and the databases share a saturated processor: the three VDI LUNs of
#: processor B moved to A, on processors of the N5 range's smallest model (50,000 IOPS for the pair,
#: the low end of the rating the preset's ``processor_iops`` quotes).
CONTENDED = {"processor_of": {"vdt-a": "A", "vdt-b": "A", "vdt-c": "A"}, "processor_iops": 25_000}


#: The four corners' span per volume: 500 GB (the three volumes together within the 2.4 TB flash tier).
CORNER_SPAN = 500 * 10**9


def four_corners(
    *, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None
) -> pl.DataFrame:
    """The N5's four corners (:func:`storagelab.analysis.four_corners.four_corners`) over its six LUNs, 32 IOs
    outstanding per LUN, QoS off."""
    from storagelab.analysis import four_corners as corners

    return corners.four_corners(lambda: preset.nexgen(**(overrides or {})), span=CORNER_SPAN, seed=seed,
                                **corners.run_times(quick))  # fmt: skip


def _storm_run(qos: int, *, quick: bool, seed: int, overrides: Mapping[str, object]):
    # measured from half way up the ramp (6 s after the first power-on) to 4 s into the peak (44 s: long run)
    topo = preset.nexgen(**{**overrides, "qos": qos})
    res = topo.run(boot_storm_workload(), seed=seed, warmup=6.0, duration=16.0 if quick else 56.0)
    return topo, res


#: The IO-weighted mean of per-bin mean latencies (ms).
_weighted_mean = (pl.col("mean_ms") * pl.col("ios")).sum() / pl.col("ios").sum()


#: The columns of :func:`qos_off_and_on`'s table.
COLUMNS = ("lun", "policy", "qos", "iops", "host_mean_ms", "array_mean_ms", "array_peak_mean_ms", "array_p99_ms",
           "target_ms", "within_target")  # fmt: skip


def qos_off_and_on(
    *, quick: bool = True, seed: int = 1, overrides: Mapping[str, object] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The boot storm from half way up its ramp to 4 s into its peak (44 s in the long run), with the
    LUNs' QoS policies off and on (the same seed). Three frames:

    - per LUN and QoS setting: IOPS; the mean latency the hosts see (``host_mean_ms``: for OLTP it
      includes the SQL VMs' vCPU time per IO); the latency the array sees (``array_*``: below the
      hosts, what the N5's statistics show and its QoS latency targets refer to), as the mean over the
      window, the mean over its second half (the peak) and the 99th percentile; the LUN's latency
      target, and whether the array's mean at the peak is within it;
    - per second, each LUN's mean latency at the array (``mean_ms``), for :func:`latency_chart`;
    - the utilisation of the ports, storage processors, flash cards and (mean over the 16) NL-SAS drives
      with QoS off and on.

    ``overrides`` go to the preset (e.g. :data:`CONTENDED`)."""
    targets = pl.DataFrame(
        {
            "lun": list(LUN_POLICY),
            "policy": [f"{lv.name} {lv.level}" for lv in lun_levels().values()],
            "target_ms": [lv.max_latency * 1e3 for lv in lun_levels().values()],
        }
    )
    tables, series, util = [], [], []
    for qos in (0, 1):
        topo, res = _storm_run(qos, quick=quick, seed=seed, overrides=overrides or {})
        label = "QoS on" if qos else "QoS off"
        drives = topo.role_stats(res, "drives", "utilisation")
        hdd = topo.params.device_label("hdd", "NL-SAS")  # the drives' device ('NL-SAS' as the study's)
        u = pl.concat([
            topo.role_stats(res, "front end", "utilisation").select("component", "value"),
            pl.DataFrame({"component": [f"{hdd} drives (mean)"], "value": [float(drives["value"].mean())]}),
        ])  # fmt: skip
        util.append(u.select("component", utilisation=pl.col("value")).with_columns(qos=pl.lit(label)))
        rates = res.rates(1.0).rename({"class": "lun"}).filter(pl.col("ios") > 0)
        probe = topo.parts["oltp array response"]
        per_second = pl.concat([
            rates.filter(pl.col("lun") != "oltp").select("lun", "start_s", "ios", "mean_ms"),
            probe.series(1.0).select(pl.lit("oltp").alias("lun"), "start_s", pl.col("ios").cast(pl.Int64), "mean_ms"),
        ])  # fmt: skip
        half = per_second["start_s"].max() / 2 + per_second["start_s"].min() / 2
        peak = (
            per_second.filter(pl.col("start_s") >= half)
            .group_by("lun")
            .agg(array_peak_mean_ms=_weighted_mean)
        )
        summary = res.summary().rename({"class": "lun"})
        oltp = probe.stats(res.measured)
        array = summary.select(
            "lun",
            array_mean_ms=pl.when(pl.col("lun") == "oltp").then(oltp["mean_ms"]).otherwise(pl.col("mean_ms")),
            array_p99_ms=pl.when(pl.col("lun") == "oltp").then(oltp["p99_ms"]).otherwise(pl.col("p99_ms")),
        )
        tables.append(
            summary.select("lun", "iops", host_mean_ms="mean_ms")
            .join(array, on="lun")
            .join(peak, on="lun")
            .with_columns(qos=pl.lit(label))
        )
        series.append(
            per_second.select(pl.lit(label).alias("qos"), "lun", time_s="start_s", mean_ms="mean_ms")
        )
    table = (
        pl.concat(tables)
        .join(targets, on="lun")
        .with_columns(within_target=pl.col("array_peak_mean_ms") <= pl.col("target_ms"))
        .select(COLUMNS)
        .sort("lun", "qos")
    )
    utilisation = pl.concat(util).pivot(on="qos", index="component", values="utilisation").sort("component")
    return table, pl.concat(series).join(targets.select("lun", "target_ms"), on="lun"), utilisation


#: The chart's series: the two runs and the LUN's target.
SERIES = ("QoS off", "QoS on", "latency target")


def latency_chart(series: pl.DataFrame, *, title: str, name: str) -> alt.Chart:
    """Per LUN (one panel each), mean latency at the array per second with QoS off and on, and the LUN's
    latency target (a dashed line), on a log scale (a latency of zero drawn clipped, and said so)."""
    cols = ("qos", "lun", "time_s", "mean_ms")
    target = series.filter(pl.col("qos") == "QoS off").with_columns(
        qos=pl.lit("latency target"), mean_ms=pl.col("target_ms")
    )
    shown = charts.for_log_scale(
        pl.concat([series.select(cols), target.select(cols)]).drop_nulls("mean_ms"), ["mean_ms"]
    )
    data = charts.chart_data(shown)
    return (
        alt.Chart(data.to_pandas(), title=charts.titled(title, charts.clipped_subtitle(shown, label="lun")))
        .mark_line(point=True)
        .encode(
            x=alt.X("time_s:Q", title="time since the first power-on (s)"),
            y=alt.Y("mean_ms:Q", title="mean latency at the array (ms)", scale=alt.Scale(type="log")),
            color=alt.Color(
                "qos:N",
                title=None,
                legend=alt.Legend(orient="top"),
                scale=alt.Scale(domain=SERIES, range=["#d62728", "#2ca02c", "#7f7f7f"]),
            ),
            strokeDash=alt.StrokeDash(
                "qos:N", legend=None, scale=alt.Scale(domain=SERIES, range=[[1, 0], [1, 0], [4, 4]])
            ),
            facet=alt.Facet("lun:N", columns=3, title=None),
            tooltip=charts.with_clipped(shown, ["lun", "qos", "time_s", "mean_ms"]),
        )
        .properties(width=220, height=150, name=name)
    )


def host_cache_warmup(
    *,
    scale: float = 0.002,
    duration: float = 30.0,
    seed: int = 1,
    overrides: Mapping[str, object] | None = None,
) -> pl.DataFrame:
    """Scenario 2's heavy OLTP alone behind a cold ioTurbine cache, each VM's database disk shrunk to
    ``scale`` of the study's 50 GB so that the whole warm-up fits a short run. With uniform page reads the
    hit ratio is a function of reads per cached block, so the warm-up takes ``1 / scale`` times as long on
    the full disk at the same IO rates. Per second: ``hit_ratio``, host-cache IOPS, array OLTP IOPS,
    orders per minute, and ``full_size_min`` (the time at the study's size, in minutes)."""
    from storagelab.workloads.catalogue import dvd_store

    guest = 50 * scale
    topo = preset.nexgen(**{"qos": 1, **(overrides or {}), "host_cache": 1, "host_cache_warm": 0,
                            "host_cache_guest_disk": f"{guest} GB"})  # fmt: skip
    workload = dvd_store(think=0.0, ios_per_order=IOS_PER_ORDER, span=int(4 * guest * 1e9))
    res = topo.run(workload, seed=seed, warmup=0.0, duration=duration)
    cache = topo.parts["host cache"].timeline()
    oltp = res.rates(1.0).filter(pl.col("class") == "oltp").select(time_s="start_s", iops="iops")
    return (
        cache.join(oltp, on="time_s")
        .with_columns(
            array_iops=pl.col("iops") - pl.col("cache_iops"),
            opm=pl.col("iops") * 60 / IOS_PER_ORDER,
            full_size_min=pl.col("time_s") / scale / 60,
        )
        .select("time_s", "full_size_min", "hit_ratio", "cache_iops", "array_iops", "opm")
    )


def host_cache_sizes(
    sizes_gb: Sequence[float],
    *,
    quick: bool = True,
    seed: int = 1,
    overrides: Mapping[str, object] | None = None,
) -> pl.DataFrame:
    """Scenario 2's Login VSI window (heavy OLTP, Exchange, 600 desktops) with each SQL VM's ioTurbine
    cache at each size of ``sizes_gb`` (0: no host cache), warm: an LRU cache of ``C`` over uniform reads
    of the ``D`` = 50 GB disk hits ``min(1, C / D)`` of them (``tests/test_host_cache.py`` checks that
    ratio on the block cache). Per size: hit ratio, host-cache IOPS, the array's OLTP IOPS (what the cache
    offloads), OPM, and the mission-critical array IOPS (OLTP + VDT-A)."""
    from storagelab.studies.nexgen.workloads import steady_workload

    t = {"warmup": 3.0, "duration": 8.0} if quick else {"warmup": 10.0, "duration": 40.0}
    card_gb = 785.0
    rows = []
    for size in sizes_gb:
        if not 0 <= size <= card_gb / preset.SQL_VMS:
            raise ValueError(
                f"host cache sizes must be 0..{card_gb / preset.SQL_VMS:g} GB per VM, got {size}"
            )
        on = size > 0
        ratio = min(1.0, size / 50.0)
        settings = {"qos": 1, **(overrides or {}), "host_cache": int(on)}
        if on:
            settings |= {"host_cache_share": size * preset.SQL_VMS / card_gb, "host_cache_hit_ratio": ratio}
        topo = preset.nexgen(**settings)
        res = topo.run(steady_workload(scenario=2), seed=seed, **t)
        s = res.summary()
        oltp = float(s.filter(pl.col("class") == "oltp")["iops"][0])
        hits = 0.0
        if on:
            tl = topo.parts["host cache"].timeline().filter(pl.col("time_s") >= t["warmup"])
            hits = float(tl["hits"].sum()) / res.measured
        mc = float(s.filter(pl.col("class") == "vdt-a")["iops"][0]) + oltp - hits
        rows.append({"cache_gb_per_vm": float(size), "hit_ratio": ratio if on else 0.0, "cache_iops": hits,
                     "array_oltp_iops": oltp - hits, "opm": oltp * 60 / IOS_PER_ORDER, "mission_critical_array_iops": mc})  # fmt: skip
    return pl.DataFrame(rows)


def host_cache_chart(sizes: pl.DataFrame, *, title: str, name: str) -> alt.Chart:
    """OPM and the array's OLTP IOPS against the cache size per VM (two panels)."""
    long = sizes.unpivot(
        index="cache_gb_per_vm", on=["opm", "array_oltp_iops", "cache_iops"], variable_name="measure"
    )
    return (
        alt.Chart(charts.chart_data(long).to_pandas(), title=title)
        .mark_line(point=True)
        .encode(
            x=alt.X("cache_gb_per_vm:Q", title="ioTurbine cache per SQL VM (GB)"),
            y=alt.Y("value:Q", title=None),
            color=alt.Color("measure:N", title=None, legend=None),
            facet=alt.Facet("measure:N", columns=3, title=None),
            tooltip=["measure", "cache_gb_per_vm", "value"],
        )
        .resolve_scale(y="independent")
        .properties(width=200, height=160, name=name)
    )
