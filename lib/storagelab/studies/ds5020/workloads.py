"""The DS5020 study's workloads: the Table 1 tiles, the characterization streams and the cache IOPS test."""

from __future__ import annotations

from storagelab.workloads import applications as apps

#: Orion's Table 3 maxima come from different points of its matrix: 25 small IOs outstanding (IOPS),
#: 9 large (MB/s), 1 small (minimum latency).
ORION_IOPS, ORION_MBPS, ORION_MIN_LAT = ("small", 25), ("large", 9), ("small", 1)


def tile_workload(tiles: int, orion: tuple[str, int] = ORION_IOPS) -> apps.ApplicationWorkload:
    """``tiles`` tiles of the mixed workload: Jetstress, Orion (``(kind, outstanding)``), the Iometer
    web server and the 256 KB scan, each against its own tile's volumes."""
    kind, q = orion
    parts = []
    for t in range(1, tiles + 1):
        oracle = (apps.orion_small if kind == "small" else apps.orion_large)(
            f"orion {t}", outstanding=q, volume=f"oracle-{t}"
        )
        parts += [
            apps.jetstress(f"jetstress {t}", db_volume=f"exchange-db-{t}", log_volume=f"exchange-log-{t}"),
            oracle,
            apps.iometer_web_server(f"web {t}", volume=f"web-{t}"),
            apps.sequential_scan(f"scan {t}", volume=f"scan-{t}"),
        ]
    return apps.combine(f"{tiles}-tile mix", parts)


def characterization_workload() -> apps.ApplicationWorkload:
    """Eight LUNs, each read by four workers with 16 outstanding 1 MB sequential reads."""
    return apps.combine(
        "characterization", [apps.iometer_sequential_read(f"seq {i}", volume=f"lun-{i}") for i in range(1, 9)]
    )


def cache_iops_workload() -> apps.ApplicationWorkload:
    """Table 5's IOPS from cache, as the model runs it: the characterization's eight LUNs and workers
    reading 512 B sequentially (the study does not give the access specification)."""
    return apps.combine(
        "cache IOPS", [apps.iometer_cache_reads(f"cache {i}", volume=f"lun-{i}") for i in range(1, 9)]
    )
