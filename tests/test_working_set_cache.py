"""A warm read cache whose hit ratio follows from its size and the data it fronts, and the Virtual SAN
hybrid read cache built on it: data beyond the cache reads the drives."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import polars as pl
import pytest

from storagelab.components.extent import Extent
from storagelab.components.tiering import WorkingSetReadCache
from storagelab.kernel import ClosedSource, Deterministic, FixedSampler, OpenSource, Station
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
    assert cache.stats(1.0)["data_bytes"] == pytest.approx(data_gb * GB, rel=1e-3)


def _lru_trace(capacity_blocks: int, blocks: np.ndarray, classes: np.ndarray) -> dict[int, float]:
    """Per-class hit ratio of an LRU cache of ``capacity_blocks`` over a block trace (second half)."""
    lru: OrderedDict[int, None] = OrderedDict()
    hits, reads = {0: 0, 1: 0}, {0: 0, 1: 0}
    for i, (b, c) in enumerate(zip(blocks.tolist(), classes.tolist(), strict=True)):
        hit = b in lru
        if hit:
            lru.move_to_end(b)
        else:
            lru[b] = None
            if len(lru) > capacity_blocks:
                lru.popitem(last=False)
        if i >= blocks.size // 2:
            hits[c] += hit
            reads[c] += 1
    return {c: hits[c] / reads[c] for c in hits}


def test_a_small_busy_class_stays_resident_beside_a_large_quiet_one_as_in_lru():
    """A 2 MiB class read by 4 of 5 IOs beside a 64 MiB class, through a 4 MiB cache (4 KiB blocks):
    the per-class hit ratios match an LRU cache replaying the same kind of trace within 0.03, and the
    run's hit ratio is their read-weighted mean (uniform references would give 4/66 to both)."""
    block, cache_bytes = 4096, 4 * 2**20
    hot, cold = 2 * 2**20, 64 * 2**20
    flash = Station("flash", Deterministic(50e-6), servers=8)
    disk = Station("disk", Deterministic(1e-3), servers=64)
    cache = WorkingSetReadCache("read cache", flash, disk, cache_bytes)
    sources = [
        OpenSource("hot", cache, FixedSampler(size=block, span=hot), rate=4000.0, cls="hot"),
        OpenSource(
            "cold",
            Extent("cold data", cache, offset=hot),
            FixedSampler(size=block, span=cold),
            rate=1000.0,
            cls="cold",
        ),
    ]
    simulate(cache, sources, duration=4.0, warmup=1.0, seed=1, progress=False)
    model = cache.class_ratios()
    rng = np.random.default_rng(1)
    n = 400_000
    is_cold = (rng.random(n) < 0.2).astype(int)
    blocks = np.where(
        is_cold, hot // block + rng.integers(0, cold // block, n), rng.integers(0, hot // block, n)
    )
    lru = _lru_trace(cache_bytes // block, blocks, is_cold)
    assert model["hot"] == pytest.approx(lru[0], abs=0.03) and model["cold"] == pytest.approx(
        lru[1], abs=0.03
    )
    assert model["hot"] > 0.9 and model["cold"] < 0.05
    assert cache.stats(1.0)["read_hit_ratio"] == pytest.approx(
        0.8 * model["hot"] + 0.2 * model["cold"], abs=0.02
    )


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
