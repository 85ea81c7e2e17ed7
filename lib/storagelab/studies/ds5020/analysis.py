"""DS5020 analyses for the study's notebook: the mixed workload on one to four tiles."""

from __future__ import annotations

import polars as pl

from storagelab.kernel.replications import interval
from storagelab.studies.ds5020.claims import _times, _total, jetstress_over_orion_phases
from storagelab.studies.ds5020.preset import ds5020
from storagelab.studies.ds5020.workloads import ORION_LARGE_PHASE, tile_workload


def tile_scaling(
    tiles: list[int] | tuple[int, ...] = (1, 2, 3, 4),
    *,
    quick: bool = True,
    replications: int = 2,
    seed: int = 1,
    confidence: float = 0.95,
    overrides: dict[str, object] | None = None,
) -> pl.DataFrame:
    """Per tile count: Jetstress database IOPS (all tiles) and read latency (tile 1), averaged over
    Orion's phases as the calibration does (:func:`~storagelab.studies.ds5020.claims.jetstress_over_orion_phases`),
    web server IOPS and scan MB/s (all tiles, Orion at its small point), each the replication mean with
    its interval, on the DS5020 built with ``overrides``."""
    rows = []
    for k in tiles:
        runs, large = (
            [
                ds5020(**(overrides or {})).run(tile_workload(k, *orion), seed=seed + r, **_times(quick))
                for r in range(replications)
            ]
            for orion in ((), (ORION_LARGE_PHASE,))
        )
        jetstress = [jetstress_over_orion_phases(x, y, k) for x, y in zip(runs, large, strict=True)]
        values = {
            "jetstress_iops": [j[0] for j in jetstress],
            "jetstress_read_ms": [j[1] for j in jetstress],
            "web_iops": [_total(x, "web") for x in runs],
            "scan_mbps": [_total(x, "scan", "mb_per_s") for x in runs],
        }
        for quantity, xs in values.items():
            m, lo, hi = interval(xs, confidence)
            rows.append({"tiles": k, "quantity": quantity, "simulated": m, "ci_low": lo, "ci_high": hi})
    return pl.DataFrame(rows)


#: The four corners' span per volume: a 4-drive RAID-10 volume's usable capacity (Table 1: 2,231 GB over
#: four LUNs), which every volume of the layout has at least.
CORNER_SPAN = 557 * 10**9


def four_corners(
    *, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None
) -> pl.DataFrame:
    """The DS5020's four corners (:func:`storagelab.analysis.four_corners.four_corners`) over all 24 volumes of the
    four-tile layout, 32 IOs outstanding per volume. Measured from 2.5 s on (quick runs), once the write
    cache has filled and host writes wait for destages: a shorter warm-up measures the cache absorbing
    writes, not the drives' sustained write rate."""
    from storagelab.analysis import four_corners as corners

    times = {"duration": 4.0, "warmup": 2.5} if quick else corners.run_times(quick)
    return corners.four_corners(lambda: ds5020(**(overrides or {})), span=CORNER_SPAN, seed=seed, **times)
