"""A warm read cache whose hit ratio follows from its size and the data it fronts, and the Virtual SAN
hybrid read cache built on it: data beyond the cache reads the drives."""

from __future__ import annotations

import polars as pl
import pytest

from storagelab.components.tiering import WorkingSetReadCache
from storagelab.kernel import ClosedSource, Deterministic, FixedSampler, Station
from storagelab.simulation import simulate

GB = 10**9


def _run(cache_bytes: int, data_bytes: int, *, seed: int = 1):
    flash = Station("flash", Deterministic(50e-6), servers=8)
    disk = Station("disk", Deterministic(1e-3), servers=8)
    cache = WorkingSetReadCache("read cache", flash, disk, cache_bytes)
    src = ClosedSource("reads", cache, FixedSampler(size=4096, span=data_bytes), workers=8)
    simulate(cache, [src], duration=4.0, warmup=0.5, seed=seed, progress=False)
    return cache


@pytest.mark.parametrize("data_gb, expected", [(4, 0.25), (10, 0.1), (1, 1.0), (0.5, 1.0)])
def test_uniform_reads_hit_the_share_of_the_data_the_cache_holds(data_gb, expected):
    """1 GB of cache over uniform 4 KiB reads of D bytes: hits min(1, 1 GB / D) of them."""
    cache = _run(GB, int(data_gb * GB))
    assert cache.stats(1.0)["read_hit_ratio"] == pytest.approx(expected, abs=0.02)
    assert cache.data_bytes == pytest.approx(data_gb * GB, rel=1e-3)


def test_a_bad_capacity_is_refused():
    s = Station("s", Deterministic(1e-3))
    with pytest.raises(ValueError, match="capacity must be a positive number of bytes"):
        WorkingSetReadCache("c", s, s, 0)


def test_vsan_hybrid_reads_the_drives_when_a_host_holds_more_than_its_read_cache():
    """8 TB of data on a 4-host hybrid Virtual SAN with two copies: each host holds 4 TB against its
    560 GB read cache (70 % of an 800 GB SSD), so about 14 % of reads hit and the 10K drives serve the
    rest; 200 GB fits, every read hits and the drives see no IO."""
    from storagelab.studies.vsan.preset import vsan

    def run(span):
        topo = vsan("hybrid Xeon E5 v3")
        ds = topo.volumes["datastore"]
        src = ClosedSource("vms", ds, FixedSampler(size=4096, read_pct=100, span=span), workers=64)
        res = simulate(ds, [src], duration=3.0, warmup=0.5, seed=1, progress=False)
        c = res.components()

        def total(component: str, statistic: str) -> pl.Series:
            return c.filter(pl.col("component").str.contains(component) & (pl.col("statistic") == statistic))[
                "value"
            ]

        reads = total("read cache$", "reads").sum()
        hit = total("read cache$", "read_hit_ratio").mean()
        drive_share = total(" 10K ", "completed").sum() / reads  # each 4 KiB miss is one drive read
        return hit, total("read cache$", "data_bytes").mean(), drive_share

    hit, data, drives = run(8 * 10**12)
    assert data == pytest.approx(4 * 10**12, rel=0.01)
    assert hit == pytest.approx(560 / 4000, abs=0.02) and drives == pytest.approx(1 - hit, abs=0.03)
    hit, data, drives = run(200 * GB)
    assert hit == 1.0 and drives == 0.0
