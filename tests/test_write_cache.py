"""The array write-back cache (storagelab.components.write_cache): each test states the behaviour the
old ``WriteBackBuffer`` (FIFO destage of the original IOs at an assumed concurrency) did not have."""

from __future__ import annotations

import itertools

import pytest
from backends import Recorder, stats_of
from simpy.events import Event

from storagelab.components import raid
from storagelab.components.raid_set import RaidSet
from storagelab.components.write_cache import WriteBackCache, WriteCachePool, destage_depth
from storagelab.kernel import ClosedSource, Deterministic, FixedSampler, OpenSource, Station
from storagelab.kernel.component import Component
from storagelab.kernel.io import IORequest
from storagelab.kernel.simulation import simulate
from storagelab.workloads import AccessSpec

KiB, MiB = 1024, 1024**2


def pool(capacity: int = 64 * 16 * KiB, **kw) -> WriteCachePool:
    return WriteCachePool("pool", capacity_bytes=capacity, **kw)


def test_overwrites_of_dirty_blocks_coalesce_and_cost_the_back_end_nothing():
    back = Recorder("disk")
    cache = WriteBackCache("wb", back, pool(), volume_bytes=1 * MiB, destage_unit=16 * KiB, max_destage=4)
    # 4 KiB writes over 8 cache blocks (128 KiB): far below the 64-block share, so nothing is flushed by
    # the watermark; only the flush age (10 s) destages
    src = OpenSource("w", cache, FixedSampler(size=4 * KiB, read_pct=0, span=128 * KiB), rate=1000.0)
    res = simulate(cache, [src], duration=5.0, seed=1, progress=False)
    s = stats_of(res, "wb")
    assert s["writes"] > 4500
    assert s["coalesced_writes"] >= s["writes"] - 32  # at most 32 4-KiB writes found a clean block
    assert back.log == []  # the old buffer destaged every write it accepted
    assert res.summary()["mean_ms"][0] == pytest.approx(0.1, rel=1e-6)  # acknowledged from memory


class Tap(Component):
    """Passes IOs to ``inner`` and records when each address was first written."""

    def __init__(self, name: str, inner: Component) -> None:
        super().__init__(name)
        self.inner = inner
        self.writes: dict[int, float] = {}

    def children(self) -> list[Component]:
        return [self.inner]

    def submit(self, io: IORequest) -> Event:
        if not io.is_read:
            self.writes.setdefault(io.address, self.env.now)
        return self.inner.submit(io)


def test_dirty_data_are_flushed_once_they_reach_the_flush_age():
    back = Recorder("disk")
    cache = WriteBackCache(
        "wb", back, pool(flush_age=2.0), volume_bytes=1024 * MiB, destage_unit=16 * KiB, max_destage=4
    )
    tap = Tap("host", cache)
    # 5 random writes/s: about 30 dirty blocks in 6 s, below the 51-block start-flushing level, so only
    # the age flushes them (the old buffer flushed on a rate or watermark, never on age)
    src = OpenSource("w", tap, FixedSampler(size=16 * KiB, read_pct=0, span=1024 * MiB), rate=5.0)
    simulate(tap, [src], duration=6.0, seed=2, progress=False)
    destaged = {a: t for t, _r, a, _s in back.log}
    assert len(destaged) >= 10
    for address, t in destaged.items():
        assert t - tap.writes[address] == pytest.approx(2.0, abs=1e-6)
    # and everything written more than 2 s before the end was destaged
    assert {a for a, t in tap.writes.items() if t < 4.0 - 1e-6} <= set(destaged)


def test_destage_goes_in_address_order_and_writes_contiguous_blocks_as_one_io():
    back = Recorder("disk", service=5e-3)
    p = pool(capacity=256 * 16 * KiB, start_flush=0.5, stop_flush=0.25)
    cache = WriteBackCache("wb", back, p, volume_bytes=64 * MiB, destage_unit=64 * KiB, max_destage=1)
    # random 16 KiB writes over 64 MiB at 300/s, faster than the 200/s one-at-a-time destage absorbs
    src = OpenSource("w", cache, FixedSampler(size=16 * KiB, read_pct=0, span=64 * MiB), rate=300.0)
    simulate(cache, [src], duration=4.0, seed=3, progress=False)
    addresses = [a for _t, _r, a, _s in back.log]
    assert len(addresses) > 100
    descents = sum(1 for a, b in itertools.pairwise(addresses) if b < a)
    # a circular scan descends only when it wraps round: a few times in 4 s, not half the time as FIFO
    # order of random writes does
    assert descents <= len(addresses) / 20


def test_sequential_writes_reach_parity_raid_as_full_stripes():
    members = [Station(f"d{i}", Deterministic(4e-3)) for i in range(4)]
    layout = raid.Raid5(4, 64 * KiB)
    rset = RaidSet("r5", layout, members)
    p = pool(capacity=1024 * 16 * KiB, start_flush=0.25, stop_flush=0.25, block_bytes=16 * KiB)
    cache = WriteBackCache(
        "wb", rset, p, volume_bytes=1024 * MiB, destage_unit=layout.stripe_width,
        max_destage=destage_depth(4, 32, 4),
    )  # fmt: skip
    spec = AccessSpec(name="seq", sizes=[{"size": "16K", "pct": 100}], read_pct=0, random_pct=0)
    src = OpenSource("w", cache, spec, rate=400.0, span=1024 * MiB)
    res = simulate(cache, [src], duration=5.0, seed=4, progress=False)
    r = stats_of(res, "r5")
    w = stats_of(res, "wb")
    assert w["destage_ios"] > 20
    # 12 cache blocks (3 x 64 KiB of data) per destage, and each costs 4 member writes, no reads: the
    # old buffer sent each 16 KiB write on its own, a read-modify-write of 4 member IOs per 16 KiB
    assert w["blocks_per_destage"] == pytest.approx(12, rel=0.05)
    assert r["member_ios_per_io"] == pytest.approx(4, rel=0.02)
    assert r["ios"] <= w["writes"] / 10  # the old buffer: 942 RAID writes for about 2,000 host writes


def test_the_drives_set_the_sustained_write_rate():
    # one drive at 5 ms per write: 200 writes/s whatever the cache does; offered 400/s of random writes
    for depth in (1, 8):
        drive = Station("drive", Deterministic(5e-3))
        cache = WriteBackCache(
            "wb", drive, pool(capacity=64 * 16 * KiB), volume_bytes=1024 * MiB, destage_unit=16 * KiB,
            max_destage=depth,
        )  # fmt: skip
        src = OpenSource("w", cache, FixedSampler(size=16 * KiB, read_pct=0, span=1024 * MiB), rate=400.0)
        res = simulate(cache, [src], duration=6.0, warmup=2.0, seed=5, progress=False)
        s = stats_of(res, "wb")
        assert s["stalled_writes"] > 0
        assert stats_of(res, "drive")["throughput_iops"] == pytest.approx(200, rel=0.03)
        # host writes complete at the destage rate, not at the offered 400/s
        assert res.summary()["iops"][0] == pytest.approx(200, rel=0.05)


def test_destage_concurrency_grows_with_the_dirty_share_up_to_the_drive_queue_bound():
    back = Recorder("disk", service=50e-3)
    p = pool(capacity=100 * 16 * KiB, start_flush=0.5, stop_flush=0.5)
    cache = WriteBackCache("wb", back, p, volume_bytes=1024 * MiB, destage_unit=16 * KiB, max_destage=11)
    simulate(
        cache, [OpenSource("w", cache, FixedSampler(read_pct=0), rate=1.0)], duration=0.01, progress=False
    )
    cache._flushing_mode = True
    for dirty, depth in ((49, 1), (50, 1), (75, 6), (99, 10), (100, 11)):
        cache.dirty_blocks = dirty
        assert cache._depth() == depth
    assert destage_depth(8, 32, 2) == 128 and destage_depth(4, 32, 4) == 32


def test_reads_of_dirty_blocks_are_served_from_the_cache():
    back = Recorder("disk")
    cache = WriteBackCache("wb", back, pool(), volume_bytes=1 * MiB, destage_unit=16 * KiB, max_destage=4)
    tap = Tap("host", cache)
    src = ClosedSource("rw", tap, FixedSampler(size=16 * KiB, read_pct=50, span=256 * KiB), workers=1)
    res = simulate(tap, [src], duration=2.0, seed=6, progress=False)
    assert stats_of(res, "wb")["read_hit_ratio"] > 0.9  # 16 blocks, all dirty after the first few writes
    # only reads of blocks not yet written reach the back end (the old buffer sent every read there)
    for t, is_read, address, _size in back.log:
        assert is_read and (address not in tap.writes or tap.writes[address] > t)


def test_warm_start_fills_a_writing_volume_and_leaves_a_reading_one_clean():
    def run(read_pct: float) -> dict[str, float]:
        p = pool(capacity=200 * 16 * KiB, warm_start=0.5, flush_age=10.0)
        cache = WriteBackCache(
            "wb", Recorder("disk", 2e-3), p, volume_bytes=1024 * MiB, destage_unit=16 * KiB, max_destage=2
        )
        src = OpenSource(
            "w", cache, FixedSampler(size=16 * KiB, read_pct=read_pct, span=1024 * MiB), rate=50.0
        )
        return stats_of(simulate(cache, [src], duration=1.0, seed=7, progress=False), "wb")

    w, r = run(0.0), run(100.0)
    # 50 new blocks/s x 10 s flush age = 500 blocks, capped at the start level (80 % of 200 = 160); about
    # 25 were written in the 0.5 s watched, the warm start adds the rest
    assert w["warm_start_blocks"] == pytest.approx(160 - 25, abs=15)
    assert w["dirty_fraction"] >= 0.8 - 1e-9
    assert r["warm_start_blocks"] == 0 and r["dirty_fraction"] == 0


def test_bad_settings_are_refused_with_the_setting_named():
    with pytest.raises(ValueError, match="stop_flush <= start_flush"):
        WriteCachePool("p", 1 * MiB, start_flush=0.5, stop_flush=0.8)
    with pytest.raises(ValueError, match="warm_start"):
        WriteCachePool("p", 1 * MiB, warm_start=20.0, flush_age=10.0)
    with pytest.raises(ValueError, match="destage_unit must be a multiple"):
        WriteBackCache("v", Recorder("d"), pool(), volume_bytes=1 * MiB, destage_unit=8 * KiB, max_destage=1)
    with pytest.raises(ValueError, match="max_destage"):
        WriteBackCache("v", Recorder("d"), pool(), volume_bytes=1 * MiB, destage_unit=16 * KiB, max_destage=0)
    with pytest.raises(ValueError, match="queue_depth"):
        destage_depth(4, 0, 2)
