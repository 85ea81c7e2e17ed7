"""DS5020 Express scenarios: the tile runs (Tables 2-4), the 3.1 GB/s characterization and the
4-vs-8 host path ratios of Table 5."""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

from storagelab.architectures.topology import Topology
from storagelab.calibration.claims import Point, Scenario
from storagelab.kernel.simulation import SimulationResult
from storagelab.provenance import Param
from storagelab.studies.ds5020.preset import ds5020, ds5020_characterization
from storagelab.studies.ds5020.workloads import (
    ORION_LARGE_PHASE,
    ORION_MBPS,
    ORION_MIN_LAT,
    cache_iops_workload,
    characterization_workload,
    orion_large_share,
    orion_test_name,
    tile_workload,
)
from storagelab.studies.fits import fits_of
from storagelab.workloads.application import ApplicationWorkload, combine
from storagelab.workloads.catalogue import iometer_web_server

STUDY = "ds5020"


def _times(quick: bool) -> dict[str, float]:
    return {"duration": 4.0, "warmup": 1.0} if quick else {"duration": 30.0, "warmup": 5.0}


def _total(res: SimulationResult, prefix: str, column: str = "iops") -> float:
    s = res.summary().filter(pl.col("class").str.starts_with(prefix))
    return float(s[column].sum()) if s.height else math.nan


def _mean_ms(res: SimulationResult, prefix: str) -> float:
    s = res.summary().filter(pl.col("class").str.starts_with(prefix))
    return float((s["mean_ms"] * s["count"]).sum() / s["count"].sum()) if s.height else math.nan


#: How the Orion points are read: one of the tile's two parallel tests (Figure 17), over the whole LUN.
_ORION_NOTE = (
    "one of the tile's two parallel Orion tests on its Oracle LUN (Figure 17: 'one of eight Orion tests running "
    "in parallel'); Orion span: the whole Oracle LUN (Figure 17 prints its size modulo 2**32)"
)


def _orion_table3_total(res: SimulationResult, column: str = "iops") -> float:
    """Table 3's total row as the study made it: the sum of its four tile rows, each the report of one
    of the tile's two parallel Orion tests (Figure 17's report is one test's, and it is a tile row)."""
    return sum(_total(res, orion_test_name(t), column) for t in range(1, 5))


def jetstress_over_orion_phases(
    small: SimulationResult, large: SimulationResult, tiles: int
) -> tuple[float, float]:
    """Jetstress's figures for a ``tiles``-tile run as the study logged them, over its two hours: the
    database IOPS of all tiles and tile 1's mean read latency (ms), each the time average of ``large``
    (a run in Orion's large phase, :data:`ORION_LARGE_PHASE`, for :func:`orion_large_share` of the time)
    and ``small`` (a run at Orion's small point, for the rest)."""
    w = orion_large_share()
    figures = []
    for r in (small, large):
        iops = sum(_total(r, f"jetstress {t} db") for t in range(1, tiles + 1))
        figures.append((iops, _mean_ms(r, "jetstress 1 db read")))
    (iops_s, lat_s), (iops_l, lat_l) = figures
    return (1 - w) * iops_s + w * iops_l, (1 - w) * lat_s + w * lat_l


def _point(row: str, what: str, note: str = "", claim: str = "", derived: bool = False) -> Point:
    return Point(STUDY, row, what, note, claim=claim, derived=derived)


def scenarios() -> list[Scenario]:
    """Every DS5020 scenario with the published points it reproduces."""
    out = []
    for k in range(1, 5):
        pts = [
            _point(f"ds5020-t2-iops-t{k}", f"Jetstress IOPS, {k} tile(s) (Table 2)",
                   note="the four-tile run is Figure 16's, which the thread think time is fitted on" if k == 4 else
                   "derived: threads / (fitted think time + the simulated read latency), which the latency claim "
                   "of the same tile count already scores",
                   derived=k < 4),
            _point(f"ds5020-t2-latency-t{k}", f"Jetstress DB read latency, {k} tile(s) (Table 2)",
                   note="threads wait for their reads; ESE writes the pages they dirty in the background; the time "
                        "average over Jetstress's logged run, 20 % of which is Orion's large phase (its 1 MB IOs "
                        "share the controllers' drive channels with the Exchange drives)"),
        ]  # fmt: skip
        if k == 4:
            pts += [
                _point(
                    f"ds5020-t4-{kind}-tile{t}",
                    f"{what}, tile {t} of 4 (Table 4)",
                    note=note,
                    claim=f"ds5020-t4-{kind}",
                )
                for t in range(1, 5)
                for kind, what, note in (
                    ("web-iops", "Iometer web server IOPS", ""),
                    (
                        "scan-mbps",
                        "256 KB scan MB/s",
                        "one read at a time: a read at a segment's start is read with "
                        "the rest of the segment (read-ahead) and the next read hits; "
                        "each read also spends the host's time per IO (Figure 16)",
                    ),
                )
            ]
            pts += [
                _point(f"ds5020-t3-iops-tile{t}", f"Orion small IOPS, tile {t} of 4 (Table 3)",
                       note=_ORION_NOTE, claim="ds5020-t3-iops")
                for t in range(1, 5)
            ]  # fmt: skip
            pts += [
                _point("ds5020-t3-iops-total", "Orion small IOPS, 4 tiles (Table 3)",
                       note=_ORION_NOTE, claim="ds5020-t3-iops"),
                _point("ds5020-t4-web-iops-total", "Iometer web server IOPS, 4 tiles (Table 4)",
                       claim="ds5020-t4-web-iops"),
                _point("ds5020-t4-scan-mbps-total", "256 KB scan MB/s, 4 tiles (Table 4)",
                       note="one read at a time, every second one read ahead by the controller",
                       claim="ds5020-t4-scan-mbps"),
            ]  # fmt: skip

        if k == 4:
            pts.append(_point("ds5020-t5-mixed-4paths", "4-tile mixed IOPS, 4 paths vs 8 (Table 5, %)"))

        def run(seed: int, quick: bool, k: int = k) -> dict[str, float]:
            res = ds5020().run(tile_workload(k), seed=seed, **_times(quick))
            # Jetstress's two hours span Orion's whole matrix: its figures are time averages over the
            # large phase (one run at the middle large point) and the rest (the small=25 run)
            large = ds5020().run(tile_workload(k, ORION_LARGE_PHASE), seed=seed, **_times(quick))
            iops, latency = jetstress_over_orion_phases(res, large, k)
            out = {f"ds5020-t2-iops-t{k}": iops, f"ds5020-t2-latency-t{k}": latency}
            if k == 4:
                out |= {f"ds5020-t4-web-iops-tile{t}": _total(res, f"web {t}") for t in range(1, 5)}
                out |= {
                    f"ds5020-t4-scan-mbps-tile{t}": _total(res, f"scan {t}", "mb_per_s") for t in range(1, 5)
                }
                out |= {f"ds5020-t3-iops-tile{t}": _total(res, orion_test_name(t)) for t in range(1, 5)}
                out |= {
                    "ds5020-t3-iops-total": _orion_table3_total(res),
                    "ds5020-t4-web-iops-total": _total(res, "web"),
                    "ds5020-t4-scan-mbps-total": _total(res, "scan", "mb_per_s"),
                }
                # Table 5's mixed workload: the same run with four host paths (the DS3950 emulation)
                four = ds5020(4).run(tile_workload(4), seed=seed, **_times(quick))
                out["ds5020-t5-mixed-4paths"] = 100 * _total(four, "") / _total(res, "")
            return out

        out.append(Scenario(STUDY, f"{k}-tile mixed run", tuple(pts), run))

    def orion_large(seed: int, quick: bool) -> dict[str, float]:
        res = ds5020().run(tile_workload(4, ORION_MBPS), seed=seed, **_times(quick))
        per_tile = {
            f"ds5020-t3-mbps-tile{t}": _total(res, orion_test_name(t), "mb_per_s") for t in range(1, 5)
        }
        return {"ds5020-t3-mbps-total": _orion_table3_total(res, "mb_per_s"), **per_tile}

    def orion_min_latency(seed: int, quick: bool) -> dict[str, float]:
        res = ds5020().run(tile_workload(4, ORION_MIN_LAT), seed=seed, **_times(quick))
        per_tile = {f"ds5020-t3-latency-tile{t}": _mean_ms(res, orion_test_name(t)) for t in range(1, 5)}
        return {"ds5020-t3-latency-avg": sum(per_tile.values()) / len(per_tile), **per_tile}

    out.append(
        Scenario(
            STUDY,
            "4 tiles, Orion large=9",
            (
                _point(
                    "ds5020-t3-mbps-total",
                    "Orion large MB/s, 4 tiles (Table 3)",
                    note=_ORION_NOTE,
                    claim="ds5020-t3-mbps",
                ),
                *(
                    _point(
                        f"ds5020-t3-mbps-tile{t}",
                        f"Orion large MB/s, tile {t} of 4 (Table 3)",
                        claim="ds5020-t3-mbps",
                    )
                    for t in range(1, 5)
                ),
            ),
            orion_large,
        )
    )
    out.append(
        Scenario(
            STUDY,
            "4 tiles, Orion small=1",
            (
                _point(
                    "ds5020-t3-latency-avg",
                    "Orion minimum latency, 4 tiles (Table 3)",
                    note="the mean of the four tile rows, as Table 3's 5.43 ms is; " + _ORION_NOTE,
                    claim="ds5020-t3-latency",
                ),
                *(
                    _point(
                        f"ds5020-t3-latency-tile{t}",
                        f"Orion minimum latency, tile {t} (Table 3)",
                        claim="ds5020-t3-latency",
                    )
                    for t in range(1, 5)
                ),
            ),
            orion_min_latency,
        )
    )

    def characterization(seed: int, quick: bool) -> dict[str, float]:
        # the host paths bind within milliseconds and the readers stay in step: a second is plenty
        t = {"duration": 1.0, "warmup": 0.25} if quick else {"duration": 10.0, "warmup": 1.0}
        mbps, share = {}, {}
        for hp in (8, 4):
            topo = ds5020_characterization(hp)
            res = topo.run(characterization_workload(), seed=seed, **t)
            mbps[hp] = _total(res, "seq", "mb_per_s")
            share[hp] = _cache_share(topo, res)
        return {
            "ds5020-char-throughput": mbps[8] / 1e3,
            "ds5020-char-cache-share": share[8],
            "ds5020-t5-thru-disk-4paths": 100 * mbps[4] / mbps[8],
        }

    out.append(Scenario(STUDY, "characterization, 8 and 4 paths", (
        _point("ds5020-char-throughput", "1 MB sequential reads, 8 LUNs of 4 drives (GB/s)",
               note="no parameter fitted on it; each LUN's four Iometer workers read the same blocks, so three reads "
                    "in four find them in (or on their way into) the controller's cache and the host paths bind "
                    "(8 x 800 MB/s); whether a read waits on another's fill is not stated (read_coalescing, 0 or 1 "
                    "evenly): without, every read goes to the drives (1.6 GB/s, nothing from cache)"),
        _point("ds5020-char-cache-share", "share of the characterization's reads served from the controller "
               "cache (%)", note="reads that find their blocks resident or being filled by another read (none "
               "of the second kind without read_coalescing)"),
        _point("ds5020-t5-thru-disk-4paths", "throughput from disk, 4 paths vs 8 (Table 5, %)",
               note="the characterization run on 4 paths; the host paths bind in both"),
    ), characterization))  # fmt: skip

    def path_ratios(seed: int, quick: bool) -> dict[str, float]:
        web, cached = {}, {}
        for hp in (8, 4):
            webs = _web_servers()
            web[hp] = _total(ds5020(hp).run(webs, seed=seed, **_times(quick)), "web")
            t = (
                {"duration": 0.15, "warmup": 0.05} if quick else {"duration": 5.0, "warmup": 1.0}
            )  # ~80,000 IO/s
            res = ds5020_characterization(hp).run(cache_iops_workload(), seed=seed, **t)
            cached[hp] = _total(res, "cache")
        return {
            "ds5020-t5-rand-disk-4paths": 100 * web[4] / web[8],
            "ds5020-t5-iops-cache-4paths": 100 * cached[4] / cached[8],
        }

    out.append(Scenario(STUDY, "4 vs 8 host paths", (
        _point("ds5020-t5-rand-disk-4paths", "random reads from disk, 4 paths vs 8 (Table 5, %; web server reads)"),
        _point("ds5020-t5-iops-cache-4paths", "IOPS from cache, 4 paths vs 8 (Table 5, %)",
               note="512 B sequential reads on the characterization's LUNs (the study gives no access "
                    "specification): nearly all hit, and the controllers' per-IO processing binds on 4 paths "
                    "as on 8; the host ports' 5 us per IO (an assumption, 2.5-10 us: 100,000-400,000 IO/s per "
                    "port) leaves 2 ports per controller far above the controller's 40,000 IO/s"),
    ), path_ratios))  # fmt: skip
    return out


def _cache_share(topo: Topology, res: SimulationResult) -> float:
    """% of the reads the controllers' read caches served (hits and delayed hits, not misses)."""
    c = topo.role_stats(res, "read caches")
    total = c.filter(statistic="read_ios")["value"].sum()
    misses = c.filter(statistic="read_misses")["value"].sum()
    return 100 * (1 - misses / total) if total else math.nan


def _web_servers() -> ApplicationWorkload:
    """The four tiles' web servers alone, as :func:`scenarios`' 4-vs-8 host path run makes them."""
    return combine("web", [iometer_web_server(f"web {t}", volume=f"web-{t}") for t in range(1, 5)])


def parameter_sets() -> list[Mapping[str, Param]]:
    """Every preset and workload parameter set this study's scenarios are built from: the DS5020 on 8 and
    4 host paths, its characterization layout on 8 and 4, the tile mixes (Orion's small and large
    points: their parameters differ), the characterization, the cache IOPS test and the web servers."""
    return [
        ds5020().params,
        ds5020(4).params,
        ds5020_characterization().params,
        ds5020_characterization(4).params,
        tile_workload(4).params,
        tile_workload(4, ORION_MBPS).params,
        characterization_workload().params,
        cache_iops_workload().params,
        _web_servers().params,
    ]


def fitted_on() -> dict[str, tuple[str, ...]]:
    """Fitted parameters of the DS5020 model and its workloads, and the points they were fitted on."""
    return fits_of(*parameter_sets())
