"""The host flash cache (ioTurbine on an ioDrive2): hit ratio against LRU theory, hits on the card and
queueing there, write-through, warm-up from cold, partitions, determinism, the wrapper, and the NexGen
scenario-2 fit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storagelab.architectures import host_cache
from storagelab.components.host_cache import Guests, HostFlashCache, WarmHostCache, partition
from storagelab.kernel import ClosedSource, Deterministic, FixedSampler, Station
from storagelab.kernel.simulation import simulate

BLOCK = 4096
ARRAY_S, CARD_S = 5e-3, 100e-6


def _cache(capacity_blocks, *, write_policy="update", interval=1.0):
    array = Station("array", Deterministic(ARRAY_S), servers=64)
    card = Station("card", Deterministic(CARD_S), servers=1)
    cache = HostFlashCache(
        "vm", array, card, capacity_blocks * BLOCK, BLOCK, write_policy=write_policy, interval=interval
    )
    return cache, array, card


def test_steady_hit_ratio_of_uniform_reads_is_cache_over_span():
    """LRU of 1,000 blocks over uniform reads of 4,000: once warm, a read hits with probability 1/4."""
    cache, _, _ = _cache(1000)
    src = ClosedSource("vm", cache, FixedSampler(size=BLOCK, span=4000 * BLOCK), workers=8, cls="vm")
    simulate(cache, [src], duration=30.0, seed=3, progress=False)
    late = cache.timeline()[10:]  # after 10 s: warm
    ratio = late["hits"].sum() / (late["hits"].sum() + late["misses"].sum())
    n = late["hits"].sum() + late["misses"].sum()
    assert ratio == pytest.approx(0.25, abs=4 * np.sqrt(0.25 * 0.75 / n) + 0.005)


def test_hits_are_card_reads_and_queue_when_guests_share_the_card():
    """QD1 reads over a span that fits: after the first pass every read is a hit costing exactly the card's
    100 us. Eight guests with 8 reads outstanding each on one card: hits wait for the card."""
    cache, _, _ = _cache(100)
    src = ClosedSource("vm", cache, FixedSampler(size=BLOCK, span=50 * BLOCK), workers=1, cls="vm")
    res = simulate(cache, [src], duration=2.0, warmup=1.0, seed=1, progress=False)
    assert res.summary()["mean_ms"][0] == pytest.approx(CARD_S * 1e3, rel=1e-6)
    card = Station("card", Deterministic(CARD_S), servers=1)
    array = Station("array", Deterministic(ARRAY_S), servers=64)
    guests = [HostFlashCache(f"vm{g}", array, card, 100 * BLOCK, BLOCK) for g in range(8)]
    router = Guests("vms", guests, 50 * BLOCK)
    src = ClosedSource("vms", router, FixedSampler(size=BLOCK, span=8 * 50 * BLOCK), workers=64, cls="vms")
    res = simulate(router, [src], duration=2.0, warmup=1.0, seed=1, progress=False)
    assert sum(g.read_hits for g in guests) > 0.99 * res.summary()["count"][0]  # all hits, on the 8 guests
    assert all(g.read_hits > 0 for g in guests)
    assert res.summary()["mean_ms"][0] > 10 * CARD_S * 1e3  # 64 reads outstanding on one card


def test_write_through_waits_for_the_array_and_keeps_or_drops_the_block():
    """Reads and writes of one block: a write completes no sooner than the array's 5 ms. With update the
    block stays cached (every read is a card hit); with invalidate the read after a write goes to the
    array."""
    for policy in ("update", "invalidate"):
        cache, _, _ = _cache(100, write_policy=policy)
        src = ClosedSource(
            "vm", cache, FixedSampler(size=BLOCK, span=BLOCK, read_pct=50), workers=1, cls="vm"
        )
        src.split_ops = True
        res = simulate(cache, [src], duration=1.0, warmup=0.1, seed=2, progress=False)
        s = res.summary()
        write = s.filter(s["class"] == "vm write")
        assert write["p50_ms"][0] >= ARRAY_S * 1e3 * 0.999  # acknowledged by the array, not the cache
        reads = cache.read_hits + cache.read_misses + cache.delayed_hits
        if policy == "update":  # only the very first read misses
            assert cache.read_misses <= 1 and cache.read_hits > 0.9 * reads
        else:  # a read after a write misses: about half the reads follow a write
            assert cache.read_misses > 0.3 * reads


def test_a_cold_cache_warms_up():
    """Per 100 ms, the hit ratio of a cold cache that will hold the whole span rises from 0 to 1."""
    cache, _, _ = _cache(2000, interval=0.1)
    src = ClosedSource("vm", cache, FixedSampler(size=BLOCK, span=2000 * BLOCK), workers=8, cls="vm")
    simulate(cache, [src], duration=8.0, seed=1, progress=False)
    ratio = cache.timeline()["hit_ratio"].to_numpy()
    assert ratio[0] < 0.3 and ratio[-1] > 0.9 and np.all(np.diff(ratio[:5]) > 0)


def test_partitions_may_not_exceed_the_card():
    assert partition(1000, {"a": 0.5, "b": 0.5}) == {"a": 500, "b": 500}
    with pytest.raises(ValueError, match="at most the card"):
        partition(1000, {"a": 0.7, "b": 0.5})


def test_same_seed_same_result():
    def run(seed):
        cache, _, _ = _cache(500)
        src = ClosedSource(
            "vm", cache, FixedSampler(size=BLOCK, span=2000 * BLOCK, read_pct=80), workers=4, cls="vm"
        )
        simulate(cache, [src], duration=2.0, seed=seed, progress=False)
        return cache.timeline()

    assert run(4).equals(run(4)) and not run(4).equals(run(5))


def test_warm_cache_hits_at_its_ratio_and_fills_misses():
    array = Station("array", Deterministic(ARRAY_S), servers=64)
    card = Station("card", Deterministic(CARD_S), servers=4)
    warm = WarmHostCache("vm", array, card, 0.7)
    src = ClosedSource("vm", warm, FixedSampler(size=BLOCK, span=10**9), workers=8, cls="vm")
    simulate(warm, [src], duration=3.0, seed=1, progress=False)
    tl = warm.timeline()
    assert tl["hits"].sum() / (tl["hits"].sum() + tl["misses"].sum()) == pytest.approx(0.7, abs=0.02)
    assert tl["fills"].sum() == pytest.approx(
        tl["misses"].sum(), abs=8
    )  # every miss filled, bar those in flight


def test_the_wrapper_leaves_the_rest_alone():
    from storagelab.studies.ds5020.preset import ds5020

    base = ds5020()
    volumes = dict(base.volumes)
    wrapped = host_cache.with_host_cache(base, {next(iter(volumes)): 2})
    first, *rest = volumes
    assert base.volumes == volumes  # the original is unchanged
    assert all(wrapped.volumes[v] is volumes[v] for v in rest)
    assert isinstance(wrapped.volumes[first], Guests)
    assert wrapped.param("host_cache_card").value == "ioDrive2 785GB"
    with pytest.raises(ValueError, match="no volume 'nope'"):
        host_cache.with_host_cache(base, {"nope": 1})


def test_nexgen_scenario_2_opm_is_the_vcpu_bound_the_fit_assumes():
    """The SQL vCPUs' time per IO is fitted by arithmetic on 37,500 OPM (16 vCPUs / (n IOs x c), n the
    fitted IOs per order); with the warm host cache the simulated OPM is that bound, so the fit is what
    it says it is."""
    from storagelab.studies.nexgen import preset
    from storagelab.studies.nexgen.workloads import IOS_PER_ORDER
    from storagelab.workloads.catalogue import dvd_store

    c = preset.SQL_CPU_PER_IO_US * 1e-6
    assert 16 / (IOS_PER_ORDER * c) * 60 == pytest.approx(37_500, rel=1e-9)
    topo = preset.nexgen(qos=1, host_cache=1)
    res = topo.run(dvd_store(think=0.0), seed=1, warmup=1.0, duration=4.0)
    assert res.summary()["iops"][0] * 60 / IOS_PER_ORDER == pytest.approx(37_500, rel=0.01)


def test_a_ram_host_cache_is_built_from_its_size_parameter_and_hits_like_a_flash_one():
    """A host cache on a memory tier ("DDR3 DRAM": timing, no capacity of its own) needs its size set
    (``host_cache_capacity``; without it the wrapper says so); built, two guests of 4 MiB each share
    2 MiB of RAM (1 MiB, 128 blocks of 8 KiB, each): uniform reads over a guest's 512 blocks hit an LRU
    cache of 128 of them 1/4 of the time once warm, and the hits are reads of the RAM (under a
    microsecond each, against the array's milliseconds)."""
    from storagelab.devices.dram import DRAM
    from storagelab.studies.ds5020.preset import ds5020

    with pytest.raises(ValueError, match=r"'DDR3 DRAM' has no capacity of its own.*host_cache_capacity"):
        host_cache.with_host_cache(ds5020(), {"oracle-1": 2}, host_cache_card="DDR3 DRAM")
    guest = 4 * 2**20
    topo = host_cache.with_host_cache(
        ds5020(), {"oracle-1": 2}, host_cache_card="DDR3 DRAM", host_cache_capacity=2 * 2**20 / 1e9,
        host_cache_guest_disk=guest / 1e9,
    )  # fmt: skip
    assert topo.param("host_cache_capacity").origin == "user"
    caches = topo.parts["host cache oracle-1"]
    assert [m.capacity_bytes for m in caches.members] == [2**20, 2**20]
    volume = topo.volumes["oracle-1"]
    src = ClosedSource("vms", volume, FixedSampler(size=8192, span=2 * guest), workers=16, cls="vms")
    simulate(volume, [src], duration=6.0, warmup=3.0, seed=1, progress=False)
    hits = sum(m.read_hits for m in caches.members)
    reads = hits + sum(m.read_misses + m.delayed_hits for m in caches.members)
    assert reads > 5000
    assert hits / reads == pytest.approx(0.25, abs=4 * np.sqrt(0.25 * 0.75 / reads) + 0.01)
    ram = topo.parts["cache card"]
    assert isinstance(ram.service_source, DRAM) and ram.service_source.mean_service_time(True, 8192) < 1e-6
    assert ram.stats(3.0)["completed"] >= hits  # every hit read the RAM (and every miss filled it)


def _readme_host_cache_builds() -> list[str]:
    """The README's calls that build a RAM host cache: the code spans of its host-cache bullet that name
    the memory tier."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    bullet = readme[readme.index("- **host cache**") :]
    bullet = bullet[: bullet.index("\n- **")]
    return [code for code in re.findall(r"`([^`]+)`", bullet.replace("\n  ", " ")) if "DDR3 DRAM" in code]


def _cache_members(topology) -> list:
    caches = [part for name, part in topology.parts.items() if name.startswith("host cache")]
    return [m for guests in caches for m in guests.members]


def test_a_ram_host_cache_builds_as_the_readme_says():
    """Each way the README gives of building a RAM host cache (the wrapper on a preset's volume, NexGen's
    own ``host_cache=1``) builds, on the DRAM preset, caches that share the 64 GB it names. NexGen's
    raised ``AttributeError: 'DRAM' object has no attribute 'capacity'`` (it read the card's capacity)."""
    from storagelab.devices.dram import DRAM
    from storagelab.studies.ds5020.preset import ds5020
    from storagelab.studies.nexgen.preset import nexgen

    builds = _readme_host_cache_builds()
    assert (
        len(builds) == 2
        and any("with_host_cache" in b for b in builds)
        and any("nexgen" in b for b in builds)
    )
    scope = {"with_host_cache": host_cache.with_host_cache, "ds5020": ds5020, "nexgen": nexgen}
    for code in builds:
        topology = eval(code, scope)  # the README's own text
        card = topology.parts["cache card"]
        assert isinstance(card.service_source, DRAM), code
        assert topology.param("host_cache_capacity").si == 64e9
        assert len(_cache_members(topology)) == 4, code


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    builder=st.sampled_from(["wrapper", "nexgen"]),
    card=st.sampled_from(["DDR3 DRAM", "ioDrive2 785GB", "NVMe SSD"]),
    capacity_gb=st.one_of(st.just(0.0), st.floats(0.001, 2000.0)),
    share=st.floats(0.05, 1.0),
)
def test_every_host_cache_builder_sizes_its_caches_from_the_card(builder, card, capacity_gb, share):
    """Whichever builds it, a cold host cache's guests each get ``host_cache_capacity`` (or, when it is
    0, the card's own capacity) x ``host_cache_share`` / guests; a memory tier with no size set is
    refused with an error naming ``host_cache_capacity``, never an ``AttributeError``."""
    from storagelab.devices.dram import DRAM
    from storagelab.studies.ds5020.preset import ds5020
    from storagelab.studies.nexgen.preset import SQL_VMS, nexgen

    settings_ = {"host_cache_card": card, "host_cache_capacity": capacity_gb, "host_cache_share": share}

    def build():
        if builder == "nexgen":
            return nexgen(host_cache=1, host_cache_warm=0, **settings_), SQL_VMS
        return host_cache.with_host_cache(ds5020(), {"oracle-1": 3}, **settings_), 3

    if capacity_gb == 0 and card == "DDR3 DRAM":
        with pytest.raises(ValueError, match=r"no capacity of its own.*host_cache_capacity"):
            build()
        return
    topology, guests = build()
    device = topology.parts["cache card"].service_source
    card_bytes = capacity_gb * 1e9 if capacity_gb > 0 else device.capacity
    assert not isinstance(device, DRAM) or capacity_gb > 0
    members = _cache_members(topology)
    assert len(members) == guests
    assert all(m.capacity_bytes == pytest.approx(card_bytes * share / guests, abs=1) for m in members)
