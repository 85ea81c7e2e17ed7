"""The NexGen N5's data placement as the sources describe it (issue 66 item 6): the flash tier admits each
data set by its own share (master images warm, databases cold), and the destage of writes to the NL-SAS
drives is a parameter the model honours."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storagelab.components.extent import Extent
from storagelab.components.tiering import WorkingSetReadCache
from storagelab.kernel import ClosedSource, Deterministic, FixedSampler, Station
from storagelab.kernel.component import Component
from storagelab.kernel.simulation import simulate

GB = 10**9


def _two_classes(capacity: int, hot_share: float, cold_share: float, *, cold_gb: float = 4.0):
    """A cache of ``capacity`` bytes before two classes of uniform 4 KiB reads on their own volumes:
    ``hot`` over 1 GB, ``cold`` over ``cold_gb`` (from 2 GB on), with their placement shares."""
    flash = Station("flash", Deterministic(50e-6), servers=8)
    disk = Station("disk", Deterministic(1e-3), servers=8)
    cache = WorkingSetReadCache(
        "tier", flash, disk, capacity, placement={"hot": hot_share, "cold": cold_share}
    )
    hot = ClosedSource("hot", cache, FixedSampler(size=4096, span=GB), workers=4)
    cold_data = Extent("cold data", cache, offset=2 * GB)  # disjoint from the hot class's bytes
    cold = ClosedSource("cold", cold_data, FixedSampler(size=4096, span=int(cold_gb * GB)), workers=4)
    simulate(cache, [hot, cold], duration=1.0, warmup=0.2, seed=1, progress=False)
    return cache.class_ratios()


@settings(max_examples=25, deadline=None)
@given(hot=st.floats(0.0, 1.0), cold=st.floats(0.0, 1.0))
def test_each_class_hits_its_own_share_when_what_the_tier_admits_fits(hot, cold):
    """5 GB of data in 10 GB of flash: each class's hit ratio is its own placement share."""
    ratios = _two_classes(10 * GB, hot, cold)
    assert ratios["hot"] == pytest.approx(hot)
    assert ratios["cold"] == pytest.approx(cold)


def test_a_class_the_tier_does_not_admit_takes_no_room():
    """1 GB of flash, 1 GB read by an admitted class and 4 GB by one that is not: the admitted class holds
    the whole tier (all hits), the other none; admitting both, they share it: the 4 GB take room (the
    Che steady state gives the busier 1 GB about 0.6 of its reads, the 4 GB about 0.1)."""
    placed = _two_classes(GB, 1.0, 0.0)
    assert placed["hot"] == pytest.approx(1.0) and placed["cold"] == 0.0
    shared = _two_classes(GB, 1.0, 1.0)
    assert 0.3 < shared["hot"] < 0.9 and 0.02 < shared["cold"] < 0.25


def _steady_raid(**overrides):
    """Scenario 1's Login VSI window, briefly: the preset's topology and its RAID-10 set's statistics."""
    import polars as pl

    from storagelab.studies.nexgen import preset
    from storagelab.studies.nexgen.workloads import steady_workload

    topo = preset.nexgen(qos=1, **overrides)
    res = topo.run(steady_workload(), seed=1, warmup=0.5, duration=1.5)
    raid = res.components().filter(pl.col("kind") == "RaidSet")
    return topo, dict(zip(raid["statistic"].to_list(), raid["value"].to_list(), strict=True))


@pytest.mark.parametrize("destage", [0, 1])
def test_the_destage_parameter_decides_whether_writes_reach_the_drives(destage):
    """With flash_destage=1 every write also reaches the NL-SAS drives, gathered into destage_segment
    writes (each a RAID-10 write of 4 stripe units on both mirrors); with 0 the drives serve reads only,
    one member each (the reads are no larger than a stripe unit and aligned)."""
    topo, raid = _steady_raid(flash_destage=destage, destage_segment=(256, "KiB"))
    assert topo.params["flash_destage"].value == destage
    if destage:
        stats = topo.parts["destage"].stats(1.0)
        assert stats["segments_out"] > 0 and stats["writes_per_segment"] > 10
        assert raid["member_ios_per_io"] > 1.0
    else:
        assert "destage" not in topo.parts
        assert raid["member_ios_per_io"] == 1.0


def test_figure_9_s_luns_hold_their_data_in_regions_of_their_own():
    """Figure 9's six LUNs are volumes of one pool: laid end to end in its order as provisioned
    (pool_stretch 1), their regions start where the previous ends (Exchange 450 GB, DVD-SQL 500 GB, VDT-A..D
    400 GB each), so that byte 0 of two LUNs is not the same byte of the drives."""
    from storagelab.studies.nexgen.preset import POOL_PAGE, lun_offsets

    pool = 24 * 10**12
    starts = {"exchange": 0, "oltp": 450, "vdt-a": 950, "vdt-b": 1350, "vdt-c": 1750, "vdt-d": 2150}  # GB
    for stretch in (1.0, 9.0):
        offsets = lun_offsets(pool, stretch)
        for lun, gb in starts.items():
            assert offsets[lun] == int(gb * GB * stretch) // POOL_PAGE * POOL_PAGE
    assert len(set(lun_offsets(pool, 9.0).values())) == 6


class _Drives(Component):
    """A station that records the address of every IO it is given."""

    def __init__(self) -> None:
        super().__init__("drives")
        self.station, self.seen = Station("drive", Deterministic(1e-3), servers=4), []

    def children(self) -> list[Component]:
        return [self.station]

    def submit(self, io):
        self.seen.append(io.address)
        return self.station.submit(io)


class _HostCache(Component):
    """What a host cache above the drives' pool reads of an IO: its address before and after it completes."""

    def __init__(self, below: Component) -> None:
        super().__init__("host cache")
        self.below, self.kept = below, []

    def children(self) -> list[Component]:
        return [self.below]

    def submit(self, io):
        before = io.address
        done = self.below.submit(io)
        done.callbacks.append(lambda _ev: self.kept.append((before, io.address)))
        return done


def test_a_database_read_reaches_its_lun_s_region_of_the_drives():
    """A cold DVD-SQL read at LUN byte a reaches the drives' pool at the LUN's offset + a x pool_stretch
    (not at byte a, where the Exchange LUN's data lie), as a member IO: the IO itself keeps the LUN's
    address, which a host cache above reads again to fill its card when the read completes (rewriting it
    made the drawn stretches fill the 785 GB ioDrive2 past its end)."""
    from storagelab.studies.nexgen import preset

    pool = 24 * 10**12
    for stretch in (1.0, 3.0, 9.0):
        start = preset.lun_offsets(pool, stretch)["oltp"]
        assert start == int(450 * GB * stretch) // preset.POOL_PAGE * preset.POOL_PAGE
        drives = _Drives()
        # the source's IOs are on volume 0: give it the DVD-SQL LUN's region
        cache = _HostCache(preset._PoolLayout("pool", drives, {0: start}, stretch, pool))
        source = ClosedSource("sql", cache, FixedSampler(size=8192, span=500 * GB), workers=2)
        simulate(cache, [source], duration=0.05, seed=1, progress=False)
        assert len(cache.kept) > 10 and all(before == after for before, after in cache.kept)
        for (address, _), pooled in zip(cache.kept, drives.seen, strict=False):
            page, within = divmod(address, preset.POOL_PAGE)
            assert pooled == (start + int(page * stretch) * preset.POOL_PAGE + within) % pool
    assert preset.nexgen().param("pool_stretch").uncertainty is not None
