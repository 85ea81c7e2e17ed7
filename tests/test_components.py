"""Components built on the kernel: RAID sets (exact member-IO counts), caches (hit counts equal to
libCacheSim through a whole simulation), the write-back buffer, disks with seek-aware scheduling, and
clear errors for bad inputs."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from storagelab import devices
from storagelab.components import raid
from storagelab.components.cache import ReadCache, WriteBackBuffer
from storagelab.components.cluster import ReplicatedCluster
from storagelab.components.raid_set import RaidSet
from storagelab.kernel import (
    ClosedSource,
    Delay,
    Deterministic,
    Environment,
    Exponential,
    FixedSampler,
    IORequest,
    Link,
    Mirror,
    OpenSource,
    Path,
    Station,
)
from storagelab.kernel.component import Component, RunContext, completion_in
from storagelab.kernel.disciplines import FIFO
from storagelab.kernel.randomness import RandomStreams
from storagelab.kernel.simulation import simulate
from storagelab.workloads import AccessSpec


def stats_of(result, component: str) -> dict[str, float]:
    rows = result.components().filter(component=component)
    return dict(zip(rows["statistic"], rows["value"], strict=True))


def small_writes(read_pct: float = 0.0) -> FixedSampler:
    return FixedSampler(size=4096, read_pct=read_pct, span=2**30)


@pytest.mark.parametrize(
    ("layout", "members", "per_write"),
    [
        (raid.Raid5(5, 64 * 1024), 5, 4),
        (raid.Raid6(6, 64 * 1024), 6, 6),
        (raid.Raid10(2, 64 * 1024), 4, 2),
    ],
)
def test_raid_small_write_amplification_is_counted_exactly(layout, members, per_write):
    disks = [Station(f"d{i}", Exponential(1e-4)) for i in range(members)]
    array = RaidSet("array", layout, disks)
    src = ClosedSource("w", array, small_writes(), workers=4)
    res = simulate(array, [src], duration=2.0, seed=1, progress=False)
    s = stats_of(res, "array")
    assert s["completed"] > 1000
    assert s["member_ios"] == per_write * s["completed"]  # 4K aligned writes never span a 64K stripe unit
    served = sum(stats_of(res, f"d{i}")["completed"] for i in range(members))
    assert s["member_ios"] <= served <= s["member_ios"] + per_write * 4  # + those of the 4 IOs in flight


def test_raid_set_on_fast_path_members_schedules_one_event_per_io_with_the_same_results():
    """A one-member IO on a FIFO station on its fast path: the RAID set schedules the event the IO
    completes at itself (the station says the time at arrival), with the latencies, counts and member
    statistics of serving it through the member's own event (the same FIFO order on the general path)."""

    class UnmarkedFifo(FIFO):
        fifo = False  # the same order, served on the station's general path

    def run(fast: bool) -> tuple[tuple, dict[str, float], dict[str, float]]:
        disks = [Station(f"d{i}", Exponential(2e-4), servers=2, discipline=None if fast else UnmarkedFifo())
                 for i in range(3)]  # fmt: skip
        array = RaidSet("array", raid.Raid0(3, 64 * 1024), disks)
        src = ClosedSource("rw", array, FixedSampler(size=4096, read_pct=70, span=2**30), workers=12)
        res = simulate(array, [src], duration=1.0, warmup=0.1, seed=5, progress=False)
        assert all(d.fast is fast for d in disks)
        return res.summary().row(0), stats_of(res, "array"), stats_of(res, "d1")

    fast, general = run(True), run(False)
    assert fast[0] == general[0] and fast[1] == general[1]
    assert fast[1]["completed"] > 5000 and fast[1]["member_ios"] == fast[1]["completed"]
    assert fast[2]["completed"] == general[2]["completed"] and fast[2]["utilisation"] == pytest.approx(
        general[2]["utilisation"], rel=1e-12
    )


def test_read_cache_hits_equal_libcachesim_lru_through_a_simulation():
    lcs = pytest.importorskip("libcachesim")
    block, capacity = 4096, 500
    spec = AccessSpec(
        name="zipf reads", sizes=[{"size": "4K", "pct": 100}], read_pct=100, random_pct=100, align=4096
    )
    from storagelab.workloads import Zipf

    backend = Station("disk", Deterministic(1e-4))
    cache = ReadCache("cache", backend, capacity_bytes=capacity * block, block_bytes=block, policy="lru")
    seen: list[int] = []
    sampler = spec.sampler(np.random.default_rng(0), span=5000 * block, locality=Zipf(1.0, blocks=5000))

    class Recorded:
        def bind(self, rng):
            return self

        def next_block(self, n):
            r, s, a = sampler.next_block(n)
            seen.extend((a // block).tolist())
            return r, s, a

    src = ClosedSource("reads", cache, Recorded(), workers=1)
    res = simulate(cache, [src], duration=5.0, seed=1, progress=False)
    issued = seen[: src.issued_total]
    ref = lcs.LRU(cache_size=capacity)
    ref_hits = sum(bool(ref.get(lcs.Request(obj_id=k, obj_size=1))) for k in issued)
    assert cache.policy.hits == ref_hits
    assert cache.policy.hits + cache.policy.misses == len(issued)
    assert 0 < stats_of(res, "cache")["read_hit_ratio"] < 1


def test_write_back_buffer_absorbs_writes_and_destages_them():
    disk = Station("disk", Deterministic(2e-3))
    wb = WriteBackBuffer(
        "nvram",
        disk,
        capacity_bytes=64 * 4096,
        high_watermark=0.5,
        low_watermark=0.25,
        destage_concurrency=1,
        write_latency=20e-6,
    )
    src = OpenSource("burst", wb, small_writes(), rate=300.0)  # below the disk's 500 writes/s
    res = simulate(wb, [src], duration=5.0, seed=2, progress=False)
    s = stats_of(res, "nvram")
    assert s["stalled_writes"] == 0
    assert res.summary()["mean_ms"][0] == pytest.approx(0.02, rel=1e-6)  # every write acked at buffer latency
    # destaging starts above the high watermark (32 blocks) and runs down to the low one (16): what is
    # left dirty at the end is at most the high watermark's worth
    assert s["writes"] - 32 <= s["destaged"] <= s["writes"]


def test_write_back_buffer_stalls_when_the_back_end_is_too_slow():
    disk = Station("disk", Deterministic(2e-3))
    wb = WriteBackBuffer("nvram", disk, capacity_bytes=16 * 4096, destage_concurrency=1)
    src = OpenSource("flood", wb, small_writes(), rate=1000.0)  # twice what the disk can destage
    res = simulate(wb, [src], duration=5.0, seed=3, progress=False)
    assert stats_of(res, "nvram")["stalled_writes"] > 0
    assert stats_of(res, "disk")["throughput_iops"] == pytest.approx(500, rel=0.02)  # destage-bound


def test_disk_with_shortest_seek_first_beats_fifo_under_load():
    model = devices.HDD.preset("15K FC/SAS")
    span = int(model.capacity) // 8192 * 8192

    def run(discipline: str) -> float:
        disk = Station("hdd", devices.HDD.preset("15K FC/SAS"), discipline=discipline)
        src = ClosedSource("oltp", disk, FixedSampler(size=8192, read_pct=100, span=span), workers=16)
        res = simulate(disk, [src], duration=20.0, warmup=2.0, seed=4, progress=False)
        return float(res.summary()["iops"][0])

    fifo, sstf = run("fifo"), run("sstf")
    # Without reordering, 16 queued commands are served one at a time: IOPS = 1 / mean service time.
    # ~3,600 IOs with a service-time CV near 0.35 give a relative standard error of ~0.6 %; 3 % is 5 SE.
    assert fifo == pytest.approx(1 / model.mean_service_time(True, 8192), rel=0.03)
    assert sstf > 1.3 * fifo  # reordering 16 commands shortens seeks substantially


def test_mirrored_writes_complete_with_the_slowest_copy():
    def mirror_run(read_pct: float, read_policy: str = "round-robin") -> float:
        fast, slow = Station("fast", Deterministic(0.1e-3)), Station("slow", Deterministic(5e-3))
        mirror = Mirror("mirror", [fast, slow], read_policy=read_policy)
        src = ClosedSource("w", mirror, small_writes(read_pct), workers=1)
        return simulate(mirror, [src], duration=2.0, progress=False).summary()["mean_ms"][0]

    assert mirror_run(0) == pytest.approx(5.0, rel=1e-9)  # a write waits for both copies
    assert mirror_run(100, "first") == pytest.approx(0.1, rel=1e-9)  # a read takes the first reply
    assert mirror_run(100) == pytest.approx((0.1 + 5.0) / 2, rel=0.01)  # alternating copies


def test_cluster_writes_every_block_to_two_nodes():
    nodes = [Station(f"n{i}", Exponential(1e-4), servers=2) for i in range(4)]
    cluster = ReplicatedCluster("vsan", nodes, replicas=2)
    src = ClosedSource("w", cluster, small_writes(0), workers=8)
    res = simulate(cluster, [src], duration=1.0, progress=False)
    extra = stats_of(res, "vsan")["node_ios"] - 2 * res.summary()["count"][0]
    assert 0 <= extra <= 2 * 8  # node IOs are counted at submission: those of the 8 writes in flight


def test_path_link_and_delay_add_their_times():
    link = Link("8G FC", bandwidth=800e6, propagation=5e-6)
    path = Path("host path", [link, Delay("switch", 10e-6), Station("ctrl", Deterministic(100e-6))])
    res = simulate(
        path, [ClosedSource("one", path, FixedSampler(size=8000), workers=1)], duration=0.5, progress=False
    )
    # QD1, no contention: the request crosses (5 us), 10 us + 100 us, the data come back (8000/800e6 s + 5 us)
    assert res.summary()["mean_ms"][0] == pytest.approx(
        1e3 * (5e-6 + 10e-6 + 100e-6 + 10e-6 + 5e-6), rel=1e-3
    )


def _link_run(stages_behind: list, ios: list[tuple[str, bool, float]], bandwidth: float = 100e6):
    """Completion times of 1 MB IOs (tag, is_read, submit time) through a path: a link, then the stages."""
    from storagelab.kernel import RunContext
    from storagelab.kernel.event_loop import run_until
    from storagelab.kernel.randomness import RandomStreams

    env = Environment()
    link = Link("link", bandwidth=bandwidth)
    path = Path("path", [link, *stages_behind])
    path.bind(RunContext(env=env, streams=RandomStreams(1)))
    done: dict[str, float] = {}
    for tag, is_read, at in ios:

        def go(_ev, tag=tag, is_read=is_read):
            path.submit(IORequest(is_read, 10**6)).callbacks.append(lambda e: done.setdefault(tag, e.env.now))

        completion_in(env, at, None).callbacks.append(go)
    run_until(env, 10.0)
    return done, link


def test_link_is_full_duplex_a_read_and_a_write_do_not_queue_behind_each_other():
    """A 1 MB read and a 1 MB write over a 100 MB/s link at once: the read's data come back while the
    write's go out, so both take 10 ms (on a shared FIFO the write waited for the read's 10 ms)."""
    done, link = _link_run([Delay("array", 0.0)], [("read", True, 0.0), ("write", False, 0.0)])
    assert done == {"write": pytest.approx(0.010), "read": pytest.approx(0.010)}
    stats = link.stats(0.010)
    assert stats["utilisation_request"] == pytest.approx(1.0) and stats[
        "utilisation_response"
    ] == pytest.approx(1.0)


def test_a_reads_data_cross_the_link_after_the_back_end_has_read_them():
    """A 1 MB read with a 5 ms back end and a 1 MB write issued 5 ms later: the read's data occupy the
    return direction from 5 to 15 ms, the write's the request direction from 5 to 15 ms. On the old link
    the read's payload crossed on the way in (0-10 ms) and the write queued behind it (done at 25 ms)."""
    done, _ = _link_run([Delay("array", 5e-3)], [("read", True, 0.0), ("write", False, 5e-3)])
    assert done["read"] == pytest.approx(0.015)
    assert done["write"] == pytest.approx(0.020)  # out 5-15 ms, 5 ms in the array, then the ack


# --- bad inputs are refused with the parameter and what is allowed ---


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Station("s", Exponential(1e-3), servers=0), "servers must be an integer >= 1"),
        (lambda: Station("s", Exponential(1e-3), discipline="lottery"), "unknown queue discipline 'lottery'"),
        (lambda: Station("s", "fast"), "service must be a ServiceDistribution"),
        (lambda: Exponential(-1.0), "mean service time must be > 0"),
        (lambda: Link("l", bandwidth=0), "bandwidth must be > 0"),
        (lambda: Delay("d", -1e-3), "delay must be >= 0"),
        (lambda: Mirror("m", [Station("a", Exponential(1e-3))]), "needs at least 2 members"),
        (lambda: FixedSampler(size=-4096), "size > 0"),
        (lambda: IORequest(True, -1).validate(), "IO size must be > 0"),
        (
            lambda: AccessSpec(name="x", sizes=[{"size": "4K", "pct": 60}], read_pct=50, random_pct=100),
            "sum to 100",
        ),
        (
            lambda: RaidSet(
                "r", raid.Raid5(5, 65536), [Station(f"d{i}", Exponential(1e-3)) for i in range(4)]
            ),
            "layout has 5 members but 4",
        ),
    ],
)
def test_bad_inputs_are_refused(build, message):
    with pytest.raises((ValueError, TypeError), match=message):
        build()


def test_sstf_needs_a_disk_model():
    st = Station("s", Exponential(1e-3), discipline="sstf")
    with pytest.raises(ValueError, match="needs a device with seek_distance"):
        simulate(st, [ClosedSource("w", st, FixedSampler())], duration=0.1, progress=False)


def test_duplicate_component_names_are_refused():
    a, b = Station("same", Exponential(1e-3)), Station("same", Exponential(1e-3))
    path = Path("p", [a, b])
    with pytest.raises(ValueError, match="two components are named 'same'"):
        simulate(path, [ClosedSource("w", path, FixedSampler())], duration=0.1, progress=False)


def test_same_seed_same_result_in_another_process():
    import subprocess
    import sys

    code = (
        "from storagelab.kernel import *; from storagelab.kernel.simulation import simulate;"
        "st=Station('q', Exponential(1e-3), servers=2);"
        "r=simulate(st,[OpenSource('a',st,FixedSampler(),rate=1500)],duration=5,seed=42,progress=False);"
        "print(repr(r.summary()['mean_ms'][0]), r.summary()['count'][0])"
    )
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    st = Station("q", Exponential(1e-3), servers=2)
    here = simulate(st, [OpenSource("a", st, FixedSampler(), rate=1500)], duration=5, seed=42, progress=False)
    assert runs == {f"{here.summary()['mean_ms'][0]!r} {here.summary()['count'][0]}\n"}


def test_open_loop_shortcuts_are_exact():
    """Recording at arrival and taking arrivals inline give the same run as one event per step."""

    def run(shortcuts: bool):
        st = Station("q", Exponential(1e-3), servers=2)
        src = OpenSource("a", st, FixedSampler(), rate=1700.0, shortcuts=shortcuts)
        return simulate(st, [src], duration=10.0, warmup=1.0, seed=9, progress=False)

    fast, slow = run(True), run(False)
    assert fast.summary().equals(slow.summary())
    assert fast.service_level_curve().equals(slow.service_level_curve())
    a, b = fast.littles_law().row(0, named=True), slow.littles_law().row(0, named=True)
    assert a["L_time_average"] == pytest.approx(b["L_time_average"], rel=1e-9)
    assert fast.events < slow.events / 2  # and it needed far fewer events


def test_littles_law_holds_in_component_scenarios():
    drives = [Station(f"hdd{i}", devices.preset("15K FC/SAS"), discipline="sstf") for i in range(4)]
    array = RaidSet("r10", raid.Raid10(2, 64 * 1024), drives)
    cache = ReadCache("cache", array, capacity_bytes=64 * 2**20, block_bytes=64 * 1024)
    sources = [
        ClosedSource("oltp", cache, FixedSampler(size=8192, read_pct=70, span=2**30), workers=8),
        OpenSource("web", cache, FixedSampler(size=4096, span=2**30), rate=200.0),
    ]
    res = simulate(cache, sources, duration=20.0, warmup=2.0, seed=5, progress=False)
    for row in res.littles_law().iter_rows(named=True):
        # edge effects: at most ~10 IOs in flight at either end of an 18 s window with >3,000 completions
        assert row["L_time_average"] == pytest.approx(row["lambda_W"], rel=0.02), row


def test_a_storm_phase_multiplies_the_open_loop_rate():
    from storagelab.workloads import PhaseSchedule, steady

    schedule = PhaseSchedule([steady(30.0)]).with_storm(start_s=10.0, duration_s=10.0, multiplier=4.0)
    st = Station("q", Exponential(1e-4), servers=4)
    src = OpenSource(
        "vdi", st, FixedSampler(), rate=500.0, rate_scale=schedule.rate_scale_at, max_scale=schedule.max_scale
    )
    res = simulate(st, [src], duration=30.0, seed=11, progress=False)
    rates = res.rates(10.0)
    per_window = dict(zip(rates["start_s"], rates["iops"], strict=True))
    # Poisson counts: 5,000 and 20,000 expected; 5 standard deviations are 354 and 707 IOs (~7 % and 3.5 %).
    assert per_window[0.0] == pytest.approx(500, rel=0.07)
    assert per_window[10.0] == pytest.approx(2000, rel=0.035)
    assert per_window[20.0] == pytest.approx(500, rel=0.07)


def test_write_back_flush_rate_is_honoured_with_one_timer():
    disk = Station("disk", Deterministic(1e-4))
    wb = WriteBackBuffer(
        "nvram", disk, capacity_bytes=256 * 4096, high_watermark=0.0, low_watermark=0.0, flush_rate=250 * 4096
    )
    res = simulate(
        wb,
        [OpenSource("w", wb, small_writes(), rate=300.0)],
        duration=8.0,
        warmup=1.0,
        seed=6,
        progress=False,
    )
    assert stats_of(res, "disk")["throughput_iops"] == pytest.approx(250, rel=0.02)  # 250 blocks/s flushed
    assert res.events < 8 * (300 + 250) * 3  # no pile-up of rate-limit timers


def test_write_larger_than_the_buffer_is_refused():
    wb = WriteBackBuffer("nvram", Station("disk", Deterministic(1e-4)), capacity_bytes=16 * 1024)
    src = ClosedSource("big", wb, FixedSampler(size=32 * 1024, read_pct=0), workers=1)
    with pytest.raises(ValueError, match="cannot fit in a 16384-byte buffer"):
        simulate(wb, [src], duration=0.1, progress=False)


def test_station_statistics_cover_the_window_even_in_overload():
    for discipline in ("fifo", "priority"):
        st = Station("q", Exponential(1e-3), servers=1, discipline=discipline)
        res = simulate(
            st,
            [OpenSource("a", st, FixedSampler(), rate=2000.0)],
            duration=5.0,
            warmup=1.0,
            seed=2,
            progress=False,
        )
        s = stats_of(res, "q")
        assert s["utilisation"] == pytest.approx(1.0, abs=1e-6), discipline  # busy all the time, never more
        assert s["throughput_iops"] == pytest.approx(1000, rel=0.05), discipline


def test_a_discipline_may_hold_jobs_back_and_name_a_wake_up_time():
    from storagelab.kernel import Discipline

    class HoldSlowUntil(Discipline):
        """Class 'slow' may not start before t = 0.5 s; 'fast' goes first whenever it can."""

        def __init__(self) -> None:
            self.jobs: list = []

        def push(self, job, now):
            self.jobs.append(job)

        def pop(self, now):
            for i, job in enumerate(self.jobs):
                if job[0].cls == "fast" or now >= 0.5:
                    return self.jobs.pop(i)
            return None

        def next_eligible(self, now):
            return 0.5

        def __len__(self):
            return len(self.jobs)

    def run(duration: float) -> dict:
        st = Station("q", Deterministic(1e-3), servers=1, discipline=HoldSlowUntil())
        slow = ClosedSource("slow", st, FixedSampler(), workers=1)
        fast = OpenSource("fast", st, FixedSampler(), interarrival=Deterministic(2e-3))
        res = simulate(st, [slow, fast], duration=duration, seed=1, progress=False)
        return {r["class"]: r for r in res.summary().iter_rows(named=True)}

    held = run(0.45)  # before the release time, the idle server takes every fast IO at once
    assert held["fast"]["mean_ms"] == pytest.approx(1.0, rel=1e-9)
    assert held["fast"]["count"] >= 200
    assert "slow" not in held or held["slow"]["count"] == 0
    released = run(2.0)
    assert released["slow"]["count"] > 500  # woken at 0.5 s, then served between the fast IOs


def test_components_belong_to_one_run():
    st = Station("q", Exponential(1e-3))
    simulate(st, [OpenSource("a", st, FixedSampler(), rate=100.0)], duration=0.5, progress=False)
    with pytest.raises(ValueError, match="already belongs to another run"):
        simulate(st, [OpenSource("b", st, FixedSampler(), rate=100.0)], duration=0.5, progress=False)


def test_sources_need_distinct_names_and_exponential_gaps_to_modulate():
    st = Station("q", Exponential(1e-3))
    with pytest.raises(ValueError, match="distinct names"):
        simulate(
            st,
            [OpenSource("a", st, FixedSampler(), rate=1.0), OpenSource("a", st, FixedSampler(), rate=1.0)],
            duration=1.0,
            progress=False,
        )
    with pytest.raises(ValueError, match="rate_scale modulates Poisson arrivals"):
        OpenSource("d", st, FixedSampler(), interarrival=Deterministic(1e-3), rate_scale=lambda t: 1.0)
    with pytest.raises(ValueError, match="think must be >= 0"):
        ClosedSource("c", st, FixedSampler(), think=-1.0)


def test_cluster_event_path_equals_its_timed_path():
    """Nodes on the general path (a priority queue with one class serves FIFO) give the same run as
    nodes on the fast path, where the cluster computes completion times at arrival."""

    def run(discipline: str):
        nodes = [Station(f"n{i}", Exponential(2e-4), servers=2, discipline=discipline) for i in range(4)]
        cluster = ReplicatedCluster("vsan", nodes, replicas=2)
        src = ClosedSource("w", cluster, small_writes(70), workers=16)
        return simulate(cluster, [src], duration=2.0, warmup=0.2, seed=8, progress=False), cluster

    (timed, c1), (events, c2) = run("fifo"), run("priority")
    assert c1.timed and not c2.timed
    assert timed.summary().equals(events.summary())


def _cache_run(backend_s: float = 5e-3, coalesce_fills: bool = True):
    """A cold 64-block read cache in front of a 5 ms back end, bound to a fresh run."""
    from storagelab.kernel import RunContext
    from storagelab.kernel.event_loop import run_until
    from storagelab.kernel.randomness import RandomStreams

    env = Environment()
    cache = ReadCache(
        "cache", Station("disk", Deterministic(backend_s), servers=8), capacity_bytes=64 * 4096,
        coalesce_fills=coalesce_fills,
    )  # fmt: skip
    cache.bind(RunContext(env=env, streams=RandomStreams(1)))
    done: dict[str, float] = {}

    def read(tag: str, address: int, at: float) -> None:
        def go(_ev=None):
            cache.submit(IORequest(True, 4096, address)).callbacks.append(
                lambda e: done.setdefault(tag, e.env.now)
            )

        completion_in(env, at, None).callbacks.append(go)

    return env, cache, done, read, lambda t: run_until(env, t)


def test_read_cache_serves_a_block_only_after_its_fill_completes():
    """A read of a block whose miss is still being fetched waits for that fill: no hit before the data
    exists. Several reads are outstanding at once (the QD1 case cannot show it)."""
    _env, cache, done, read, run = _cache_run()
    read("miss", 0, 0.0)  # fetches block 0 until 5 ms
    read("during fill", 0, 1e-3)  # same block, 1 ms later: must wait for the fill
    read("during fill 2", 0, 2e-3)
    read("other miss", 8192, 2e-3)  # another block: its own fill, 2-7 ms
    read("after fill", 0, 6e-3)  # block 0 resident by now: a plain hit
    run(0.1)
    hit = cache.hit_latency + 4096 / cache.hit_bandwidth
    assert done["miss"] == pytest.approx(5e-3)
    assert done["during fill"] == pytest.approx(5e-3 + hit)
    assert done["during fill 2"] == pytest.approx(5e-3 + hit)
    assert done["other miss"] == pytest.approx(7e-3)
    assert done["after fill"] == pytest.approx(6e-3 + hit)
    stats = cache.stats(0.1)
    assert (stats["read_ios"], stats["delayed_hits"]) == (5, 2)
    assert stats["read_hit_ratio"] == pytest.approx(1 / 5)


def test_a_read_cache_that_does_not_coalesce_sends_a_read_on_a_filling_block_to_the_back_end():
    """With ``coalesce_fills=False`` a read of a block still being fetched is a miss of its own: it reads
    the back end (5 ms from its arrival), and the block is a plain hit once resident."""
    _env, cache, done, read, run = _cache_run(coalesce_fills=False)
    read("miss", 0, 0.0)
    read("during fill", 0, 1e-3)
    read("after fill", 0, 6e-3)
    run(0.1)
    hit = cache.hit_latency + 4096 / cache.hit_bandwidth
    assert done["miss"] == pytest.approx(5e-3)
    assert done["during fill"] == pytest.approx(6e-3)
    assert done["after fill"] == pytest.approx(6e-3 + hit)
    stats = cache.stats(0.1)
    assert (stats["read_ios"], stats["delayed_hits"], stats["read_misses"]) == (3, 0, 2)
    assert cache.backend.stats(0.1)["completed"] == 2


def test_read_cache_write_during_a_fill_is_not_overwritten_by_the_fill():
    """With write_policy="invalidate", a write to a block being fetched drops it: the fill completing
    afterwards does not make the stale data resident, and a later read misses."""
    env, cache, done, read, run = _cache_run()
    read("miss", 0, 0.0)
    completion_in(env, 1e-3, None).callbacks.append(lambda _e: cache.submit(IORequest(False, 4096, 0)))
    read("after write", 0, 2e-3)  # invalidated: goes to the back end (2-7 ms), not onto block 0's fill
    run(0.1)
    assert done["after write"] == pytest.approx(7e-3)


def test_a_half_duplex_stage_queues_reads_and_writes_together():
    """duplex=False (a controller's time and transfer): one FIFO for both, the payload on the way in."""
    from storagelab.kernel import RunContext
    from storagelab.kernel.event_loop import run_until
    from storagelab.kernel.randomness import RandomStreams

    env = Environment()
    ctrl = Link("controller", bandwidth=100e6, per_io_overhead=1e-3, duplex=False)
    path = Path("p", [ctrl, Delay("array", 0.0)])
    path.bind(RunContext(env=env, streams=RandomStreams(1)))
    done: dict[str, float] = {}
    for tag, is_read in (("read", True), ("write", False)):
        path.submit(IORequest(is_read, 10**6)).callbacks.append(
            lambda e, tag=tag: done.setdefault(tag, e.env.now)
        )
    run_until(env, 1.0)
    assert done == {"read": pytest.approx(0.011), "write": pytest.approx(0.022)}
    assert "utilisation_response" not in ctrl.stats(1.0)


class _SequentialReads:
    """A sampler of back-to-back reads of ``size`` bytes from address 0 (one sequential stream)."""

    def __init__(self, size: int) -> None:
        self.size, self.pos = size, 0

    def bind(self, rng):
        return _SequentialReads(self.size)

    def next_block(self, n):
        addresses = self.pos + np.arange(n, dtype=np.int64) * self.size
        self.pos += n * self.size
        return np.ones(n, dtype=bool), np.full(n, self.size, dtype=np.int64), addresses


def test_raid10_sequential_stream_reads_at_the_drives_media_rate():
    """256 KiB sequential reads at one outstanding IO on a 2-pair RAID-10 with 512 KiB stripe units:
    each unit is read from one mirror, which streams (no seek, no rotation), so an IO takes the drive's
    overhead plus the transfer. With the old round-robin mirror choice, every second IO went to the other
    mirror, which had not read the previous piece, and paid a rotation: about 40 % slower."""
    size = 256 * 1024
    drives = [Station(f"d{i}", devices.preset("15K FC/SAS")) for i in range(4)]
    array = RaidSet("r10", raid.Raid10(2, 512 * 1024), drives)
    res = simulate(array, [ClosedSource("scan", array, _SequentialReads(size), workers=1)], duration=3.0,
                   warmup=0.2, seed=3, progress=False)  # fmt: skip
    d = drives[0].service_source
    expected = size / (d.overhead + size / d.media_rate) / 1e6  # MB/s
    assert float(res.summary()["mb_per_s"][0]) == pytest.approx(expected, rel=0.03)


def test_raid10_reads_go_to_the_mirror_with_the_shorter_queue():
    """One mirror is four times slower: balanced reads send most reads to the fast one (the old round
    robin split them evenly, so the slow mirror set the pace)."""
    slow, fast = Station("slow", Exponential(4e-3)), Station("fast", Exponential(1e-3))
    array = RaidSet("mirror", raid.Raid10(1, 64 * 1024), [slow, fast])
    res = simulate(array, [ClosedSource("r", array, FixedSampler(size=4096), workers=8)], duration=5.0,
                   seed=2, progress=False)  # fmt: skip
    served = {n: stats_of(res, n)["completed"] for n in ("slow", "fast")}
    assert served["fast"] > 3 * served["slow"], served
    # and the pair delivers near the two mirrors' combined rate (1,250 IOPS), not twice the slow one's (500)
    assert float(res.summary()["iops"][0]) > 1100


def test_raid10_layout_state_starts_afresh_in_each_run():
    layout = raid.Raid10(2, 64 * 1024)

    def run():
        drives = [Station(f"d{i}", devices.preset("15K FC/SAS"), discipline="sstf") for i in range(4)]
        array = RaidSet("r10", layout, drives)
        src = ClosedSource("r", array, FixedSampler(size=8192, read_pct=70, span=2**30), workers=6)
        return simulate(array, [src], duration=1.0, seed=4, progress=False).summary()

    first = run()
    layout.member_io_count(True, 0, 4096)  # planning outside a run moves the layout's state
    assert run().equals(first)


class _FixedAddressReads:
    """4 KiB reads, all at one byte address (a far corner of the disk, for the starvation test)."""

    def __init__(self, address: int) -> None:
        self.address = address

    def bind(self, rng):
        return self

    def next_block(self, n):
        return (
            np.ones(n, dtype=bool),
            np.full(n, 4096, dtype=np.int64),
            np.full(n, self.address, dtype=np.int64),
        )


@pytest.mark.parametrize("discipline", ["sstf", "elevator", "satf"])
def test_disk_scheduler_ages_a_far_command_instead_of_starving_it(discipline):
    """Eight workers keep the head busy in the first MiB; a read at the far end arrives twice a second.
    Without aging (max_age=inf, the old behaviour) SSTF and LOOK keep serving the near commands and the
    far read waits until the run ends; with aging it is served once it has waited max_age (default: a
    full 32-command window drained in arrival order, about 0.18 s on a 15K drive)."""
    from storagelab.kernel.disciplines import DISCIPLINES

    def run(max_age):
        disk = devices.preset("15K FC/SAS")
        st = Station("d", disk, discipline=DISCIPLINES[discipline](max_age=max_age))
        sources = [
            ClosedSource("near", st, FixedSampler(size=4096, span=2**20), workers=8),
            OpenSource("far", st, _FixedAddressReads(disk.capacity - 2**20), rate=2.0),
        ]
        res = simulate(st, sources, duration=20.0, seed=6, progress=False)
        return res.summary().filter(pl.col("class") == "far").row(0, named=True), st.discipline.max_age

    far, max_age = run(None)
    assert max_age == pytest.approx(32 * devices.preset("15K FC/SAS").mean_service_time(True, 4096))
    assert far["count"] >= 25  # Poisson(40) arrivals
    # served within its age limit plus the command in service and its own far seek and rotation
    assert far["max_ms"] < 1e3 * max_age + 30
    starved, _ = run(math.inf)
    assert starved["count"] <= 1 or starved["max_ms"] > 5_000


def test_flash_writes_complete_at_the_datasheet_latency_and_sustain_the_datasheet_iops():
    """P3700 ('NVMe SSD'): a QD1 4 KiB write completes in the datasheet's 20 us (buffered), not in the
    ~100 us that parallelism / write IOPS gives one unit (the old model's write latency); at queue depth
    64 the writes are paced by programming and run at the datasheet's 90,000 write IOPS."""
    from storagelab.components.flash import flash_drive

    ssd = devices.preset("NVMe SSD")

    def run(workers: int):
        drive = flash_drive("p3700", devices.preset("NVMe SSD"))
        src = ClosedSource("w", drive, FixedSampler(size=4096, read_pct=0, span=2**30), workers=workers)
        return (
            simulate(drive, [src], duration=0.5, warmup=0.2, seed=1, progress=False)
            .summary()
            .row(0, named=True)
        )

    qd1 = run(1)
    assert qd1["mean_ms"] == pytest.approx(ssd.params["host_write_latency"].si * 1e3, rel=0.01)
    assert ssd.mean_service_time(False, 4096) > 4 * ssd.host_write_time(
        4096
    )  # what one unit spends programming
    assert run(64)["iops"] == pytest.approx(ssd.params["write_iops"].si, rel=0.02)


def test_flash_reads_share_the_units_with_programming():
    """Reads of a buffered drive queue behind background programming: with a write stream at 90 % of
    the write IOPS, QD1 reads take longer than on an idle drive."""
    from storagelab.components.flash import flash_drive

    def read_ms(write_rate: float) -> float:
        drive = flash_drive("p3700", devices.preset("NVMe SSD"))
        sources = [ClosedSource("r", drive, FixedSampler(size=4096, span=2**30), workers=1)]
        if write_rate:
            sources.append(
                OpenSource("w", drive, FixedSampler(size=4096, read_pct=0, span=2**30), rate=write_rate)
            )
        res = simulate(drive, sources, duration=0.5, warmup=0.1, seed=2, progress=False)
        return float(res.summary().filter(pl.col("class") == "r")["mean_ms"][0])

    assert read_ms(0.9 * 90_000) > 1.2 * read_ms(0.0)


@pytest.mark.parametrize(("workers", "write_rate"), [(1, 20_000.0), (64, 0.0), (8, 120_000.0)])
def test_timed_destages_give_the_same_run_as_an_event_per_destage(workers, write_rate):
    """A buffer in front of a timed station schedules no event per destage; the same buffer in front of
    the station behind a one-stage Path (not timed) takes the event-per-destage path. Light load,
    writes paced by programming (QD 64, 30 % writes) and a write flood above the write IOPS (writes
    wait for space): every IO's latency and every statistic are the same. (Think times are random:
    with deterministic service and think times a destage can end at the instant of another event, and
    the two paths may order such a tie differently.)"""
    from storagelab.components.flash import flash_drive
    from storagelab.kernel import Path

    def run(timed: bool):
        drive = flash_drive("p3700", devices.preset("NVMe SSD"))
        if not timed:
            drive.backend = Path("p3700 units, untimed", [drive.backend])
        mix = FixedSampler(size=4096, read_pct=70, span=2**24)
        sources = [ClosedSource("mix", drive, mix, workers=workers, think=Exponential(20e-6))]
        if write_rate:
            sources.append(
                OpenSource("w", drive, FixedSampler(size=4096, read_pct=0, span=2**24), rate=write_rate)
            )
        res = simulate(drive, sources, duration=0.3, warmup=0.05, seed=7, progress=False)
        assert (drive._timed is not None) == timed
        return res.summary(), stats_of(res, "p3700 write buffer"), stats_of(res, "p3700")

    timed, events = run(True), run(False)
    assert timed[0].equals(events[0])
    assert timed[1] == events[1] and timed[2] == events[2]
    if write_rate > 100_000:
        assert timed[1]["stalled_writes"] > 0  # the flood case does wait for space
    assert timed[1]["destaged"] > 0


def test_two_stations_cannot_share_one_disk_model():
    from storagelab.kernel import Path

    disk = devices.HDD.preset("15K FC/SAS")
    a, b = Station("a", disk, discipline="sstf"), Station("b", disk, discipline="sstf")
    with pytest.raises(ValueError, match="share one HDD device model"):
        simulate(
            Path("ab", [a, b]), [OpenSource("r", a, FixedSampler(), rate=10.0)], duration=0.1, progress=False
        )


def test_a_compact_cluster_packs_each_nodes_copies_into_its_own_addresses():
    """Four nodes, two copies of each 1 MiB region, copies in runs of 4 regions: copy k of region r
    lands on node (r + k) % 4 at node-local region (j // 4) * 8 + k * 4 + j % 4, j = r // 4; every
    node's addresses are distinct and stay under half the cluster's (4 nodes hold 2x what one node
    addresses), and a node's primaries (its reads) take every residue of a 4-way stripe equally (with
    the copies interleaved region by region they took only the even ones)."""

    class Node(Component):
        def on_bind(self):
            self.seen = []

        def submit(self, io):
            self.seen.append((io.address, io.is_read))
            return completion_in(self.env, 1e-4, io)

    mib = 1 << 20
    nodes = [Node(f"n{i}") for i in range(4)]
    cluster = ReplicatedCluster("c", nodes, replicas=2, placement_bytes=mib, compact=True, copy_run=4)
    env = Environment()
    cluster.bind(RunContext(env=env, streams=RandomStreams(1)))
    regions = 64
    for r in range(regions):
        cluster.submit(IORequest(is_read=False, size=4096, address=r * mib + 8192))
        cluster.submit(IORequest(is_read=True, size=4096, address=r * mib + 8192))
    env.run()
    r = 29
    j = r // 4
    assert (((j // 4) * 8 + 0 + j % 4) * mib + 8192, False) in nodes[r % 4].seen
    assert (((j // 4) * 8 + 4 + j % 4) * mib + 8192, False) in nodes[(r + 1) % 4].seen
    assert (((j // 4) * 8 + 0 + j % 4) * mib + 8192, True) in nodes[r % 4].seen  # reads: the primary copy
    for n in nodes:
        writes = [a for a, is_read in n.seen if not is_read]
        assert len(writes) == regions * 2 // 4 == len(set(writes))
        assert max(writes) < regions * mib * 2 // 4
        reads = [a // mib % 4 for a, is_read in n.seen if is_read]
        assert sorted(reads.count(k) for k in range(4)) == [len(reads) // 4] * 4


def test_a_response_time_probe_measures_below_it_and_adds_nothing():
    """Four closed workers through a 2 ms host delay, then a probe in front of a 1 ms deterministic
    station (saturated: 4 IOs per 3 ms cycle), so end to end each IO takes 2 ms + a 1 ms wait + 1 ms;
    the probe sees the wait and the service only (the array's own view), and the run is the same IO for
    IO as without the probe."""
    from storagelab.kernel import ResponseTimeProbe

    def run(probe: bool):
        array = Station("array", Deterministic(1e-3))
        below = ResponseTimeProbe("array response", array) if probe else array
        path = Path("host", [Delay("host cpu", 2e-3), below])
        src = ClosedSource("w", path, FixedSampler(size=4096, span=10**9), workers=4, cls="w")
        res = simulate(path, [src], duration=2.0, warmup=0.5, seed=3, progress=False)
        return res, below

    res, probe = run(True)
    plain, _ = run(False)
    assert res.summary().equals(plain.summary())
    stats = probe.stats(res.measured)
    end_to_end = res.summary()["mean_ms"][0]
    assert stats["mean_ms"] == pytest.approx(end_to_end - 2.0, abs=1e-6)
    assert stats["mean_ms"] >= 1.0 and stats["p99_ms"] >= stats["mean_ms"]
    series = probe.series(0.5)
    assert series["start_s"].to_list() == [0.5, 1.0, 1.5]  # the window's bins, as the recorder's rates
    assert series["ios"].sum() == stats["completed"]
    assert series["mean_ms"].to_list() == pytest.approx([2.0, 2.0, 2.0])  # saturated: 1 ms wait + 1 ms
    with pytest.raises(ValueError, match="bin_s must be > 0"):
        probe.series(0)


def test_timed_buffer_indexes_the_writes_pending_at_its_first_read():
    """With timed destages the buffer builds its dirty-block index at the first read, from the writes
    queued and in flight then: reads that start while a write flood fills the buffer hit exactly as on
    the event-per-destage path, which keeps the index from the first write."""
    from storagelab.components.flash import flash_drive
    from storagelab.kernel import Path

    def run(timed: bool):
        drive = flash_drive("p3700", devices.preset("NVMe SSD"))
        if not timed:
            drive.backend = Path("p3700 units, untimed", [drive.backend])
        span = 2**24  # 4,096 blocks: some reads find their block still buffered, some do not
        writes = OpenSource("w", drive, FixedSampler(size=4096, read_pct=0, span=span), rate=150_000.0)
        reads = OpenSource("r", drive, FixedSampler(size=4096, read_pct=100, span=span), rate=20_000.0,
                           rate_scale=lambda t: 0.0 if t < 0.02 else 1.0)  # fmt: skip
        res = simulate(drive, [writes, reads], duration=0.1, warmup=0.0, seed=3, progress=False)
        assert (drive._timed is not None) == timed
        return res.summary(), stats_of(res, "p3700 write buffer")

    timed, events = run(True), run(False)
    assert timed[0].equals(events[0])
    assert timed[1] == events[1]
    assert timed[1]["stalled_writes"] > 0  # the buffer was full when the reads began
    assert 0.05 < timed[1]["read_hit_ratio"] < 0.95


def _random_reads_iops(device: str, discipline: str, workers: int, span_share: float, seed: int = 1) -> float:
    disk = devices.HDD.preset(device)
    st = Station("d", disk, discipline=discipline)
    span = int(disk.capacity * span_share) // 4096 * 4096
    src = ClosedSource("r", st, FixedSampler(size=4096, read_pct=100, span=span), workers=workers)
    res = simulate(st, [src], duration=20.0, warmup=2.0, seed=seed, progress=False)
    return float(res.summary()["iops"][0])


def test_a_turning_platter_gives_the_drawn_rotational_latency_at_queue_depth_one():
    """With its rotation tracked (shortest access first at QD1 has nothing to choose) the disk's random
    4 KiB reads take the analytic mean service time (mean seek + half a revolution + transfer +
    overhead), as with a drawn rotational latency: an address's angle on its track is as good as random
    for random IO. About 3,500 IOs with a CV near 0.35: 3 % is about 5 standard errors."""
    model = devices.HDD.preset("15K FC/SAS")
    iops = _random_reads_iops("15K FC/SAS", "satf", workers=1, span_share=1.0)
    assert 1 / iops == pytest.approx(model.mean_service_time(True, 4096), rel=0.03)


def test_shortest_access_first_serves_the_command_that_reaches_its_data_soonest():
    """The scheduler's estimate is the service: ``access_time`` is overhead + seek + the wait for the
    first byte to come round after the seek, the command popped is the one with the least of it, and
    serving it takes that time plus its transfer."""
    from storagelab.kernel.disciplines import ShortestAccessFirst
    from storagelab.kernel.event_loop import Environment

    disk = devices.HDD.preset("15K FC/SAS")
    clock = Environment(initial_time=0.0123)
    satf = ShortestAccessFirst()
    Station("d", disk, discipline=satf).bind(RunContext(env=clock, streams=RandomStreams(1)))  # binds satf
    disk.head = disk.cylinders // 3
    rng = np.random.default_rng(5)
    addresses = (rng.integers(0, disk.capacity // 4096, 12) * 4096).tolist()
    for a in addresses:
        satf.push([IORequest(True, 4096, a), None, 0.0], 0.0)
    times = [disk.access_time(True, a, clock.now) for a in addresses]
    for a, t in zip(addresses, times, strict=True):
        d = disk.cylinder(a) - disk.head
        seek = disk.seek_time(d, True) if d else 0.0
        assert t == pytest.approx(
            disk.overhead + seek + disk.rotational_latency(a, clock.now + disk.overhead + seek)
        )
        assert 0 <= disk.rotational_latency(a, clock.now) < disk.revolution
    assert len(set(times)) == len(times)  # no tie: the choice below is meaningful
    job = satf.pop(clock.now)
    best = addresses[times.index(min(times))]
    assert job[0].address == best
    served = disk.service_time(True, 4096, best, rng)
    assert served == pytest.approx(min(times) + 4096 / disk.media_rate_at(best))


@pytest.mark.parametrize("drive", ["15K FC/SAS", "10K SAS", "7.2K NL-SAS"])
def test_a_drives_own_shortest_access_loop_picks_what_access_time_picks(drive):
    """``HDD.shortest_access`` (the loop the drive's command queue runs at each dispatch) picks, among
    the first ``window`` commands, the one :meth:`HDD.access_time` ranks first (the first of equals),
    with the head anywhere, continuations of the last IO, reads and writes and windows of 1 to 32:
    2,000 random queues compared choice by choice, and a drive without the loop gives the same run."""
    disk = devices.HDD.preset(drive)
    rng = np.random.default_rng(11)
    for _ in range(2000):
        n = int(rng.integers(1, 33))
        window = int(rng.integers(1, n + 1))
        disk.head = int(rng.integers(0, disk.cylinders))
        addresses = (rng.integers(0, disk.capacity // 4096, n) * 4096).tolist()
        disk._next = addresses[int(rng.integers(n))] if rng.random() < 0.3 else -1
        if rng.random() < 0.2:  # equal commands: the first of them
            addresses[-1] = addresses[0]
        jobs = [[IORequest(bool(rng.random() < 0.6), 4096, a), None, 0.0] for a in addresses]
        now = float(rng.random())
        times = [disk.access_time(j[0].is_read, j[0].address, now) for j in jobs[:window]]
        assert disk.shortest_access(jobs, window, now) == times.index(min(times))

    class WithoutLoop:
        """The drive without its own loop: the discipline falls back to ranking by access_time."""

        def __init__(self, disk: devices.HDD) -> None:
            self._disk = disk

        def __getattr__(self, name: str) -> object:
            if name == "shortest_access":
                raise AttributeError(name)
            return getattr(self._disk, name)

    def run(model: object) -> tuple:
        st = Station("d", model, discipline="satf")
        src = ClosedSource(
            "r", st, FixedSampler(size=4096, read_pct=70, span=model.capacity // 10), workers=16
        )
        return simulate(st, [src], duration=2.0, warmup=0.2, seed=3, progress=False).summary().row(0)

    fast = run(devices.HDD.preset(drive))
    plain = WithoutLoop(devices.HDD.preset(drive))
    assert not hasattr(plain, "shortest_access") and hasattr(plain, "access_time")
    assert fast == run(plain) and fast[1] > 500


def test_rotational_position_ordering_beats_seek_ordering_at_depth():
    """4 KiB random reads over a tenth of a 10K drive, 16 commands queued: ordering by seek alone
    gains little over FIFO (the rotational latency, half a revolution on average, is left), ordering by
    seek plus rotation about doubles the IOPS (measured: FIFO 218, SSTF 262, SATF 546)."""
    fifo, sstf, satf = (
        _random_reads_iops("10K SAS", d, workers=16, span_share=0.1) for d in ("fifo", "sstf", "satf")
    )
    assert sstf < 1.3 * fifo
    assert satf > 1.8 * sstf


class _RecordingDisk(Component):
    """A back end that takes a fixed time per IO and records each IO's (address, size)."""

    def __init__(self, service_s: float) -> None:
        super().__init__("recording disk")
        self.service_s, self.seen = service_s, []

    def submit(self, io: IORequest):
        self.seen.append((io.address, io.size))
        return completion_in(self.env, self.service_s, io)


def _read_ahead_run(reads, read_ahead_to=512 * 1024, volume_bytes=None, block=16 * 1024):
    """Issue ``reads`` ((address, size), one at a time, each after the last completes) through a read
    cache that reads ahead to ``read_ahead_to``; returns the cache, the back end and completion times."""
    from storagelab.kernel.event_loop import run_until

    env = Environment()
    disk = _RecordingDisk(4e-3)
    cache = ReadCache("cache", disk, capacity_bytes=64 * 2**20, block_bytes=block, hit_latency=20e-6,
                      hit_bandwidth=float("inf"), read_ahead_to=read_ahead_to, volume_bytes=volume_bytes)  # fmt: skip
    cache.bind(RunContext(env=env, streams=RandomStreams(1)))
    times = []

    def issue(k: int = 0) -> None:
        if k < len(reads):
            address, size = reads[k]
            ev = cache.submit(IORequest(True, size, address))
            ev.callbacks.append(lambda e, k=k: (times.append(e.env.now), issue(k + 1)))

    issue()
    run_until(env, 10.0)
    return cache, disk, times


def test_read_ahead_extends_a_sequential_miss_to_the_segment_end():
    """One 256 KiB sequential reader (the DS5020 scan) over 512 KiB segments: the first read is not yet
    sequential; from the third on, a miss at a segment's start is read with the rest of its segment,
    and the next read is a hit. Reads ending on the boundary read nothing ahead."""
    kib = 1024
    reads = [(k * 256 * kib, 256 * kib) for k in range(8)]
    cache, disk, times = _read_ahead_run(reads)
    # read 0 (not sequential), read 1 (sequential, ends on the boundary), then extended reads at 512 KiB
    # multiples, each covering the following read
    assert disk.seen == [(0, 256 * kib), (256 * kib, 256 * kib), (512 * kib, 512 * kib),
                         (1024 * kib, 512 * kib), (1536 * kib, 512 * kib)]  # fmt: skip
    stats = cache.stats(1.0)
    assert (stats["read_misses"], stats["prefetches"], stats["read_ios"]) == (5, 3, 8)
    # the host read that missed completes with the extended read; the one after it is a plain hit
    assert times[2] - times[1] == pytest.approx(4e-3)
    assert times[3] - times[2] == pytest.approx(20e-6)


def test_read_ahead_ignores_random_reads_and_stops_at_cached_blocks_and_the_volume_end():
    kib = 1024
    # random reads never continue one another: no read is extended
    cache, disk, _ = _read_ahead_run([(0, 16 * kib), (10 * 2**20, 16 * kib), (3 * 2**20, 16 * kib)])
    assert cache.stats(1.0)["prefetches"] == 0 and all(size == 16 * kib for _, size in disk.seen)
    # 64 KiB at 448 KiB is resident: a sequential miss at 32 KiB reads ahead only up to it
    cache, disk, _ = _read_ahead_run([(448 * kib, 64 * kib), (0, 16 * kib), (16 * kib, 16 * kib)])
    assert disk.seen[-1] == (16 * kib, 448 * kib - 16 * kib)
    # the volume ends at 100 KiB: the extension stops there, inside the segment
    cache, disk, _ = _read_ahead_run(
        [(0, 16 * kib), (16 * kib, 16 * kib)], volume_bytes=100 * kib, block=4 * kib
    )
    assert disk.seen[-1] == (16 * kib, 84 * kib)


def test_read_ahead_setting_is_checked():
    with pytest.raises(ValueError, match=r"read_ahead_to must be 0 \(off\) or a multiple of block_bytes"):
        ReadCache(
            "c", Station("d", Deterministic(1e-3)), capacity_bytes=2**20, block_bytes=4096, read_ahead_to=5000
        )
    with pytest.raises(ValueError, match="streams must be >= 1"):
        ReadCache("c", Station("d", Deterministic(1e-3)), capacity_bytes=2**20, read_ahead_to=8192, streams=0)


class _SlowWrites(Component):
    """A back end that completes reads in 1 ms and writes in 50 ms, any number at once."""

    def submit(self, io):
        return completion_in(self.env, 1e-3 if io.is_read else 50e-3, io)


@pytest.mark.parametrize("outstanding", [1, 4])
def test_async_writes_hold_no_worker_so_slow_writes_do_not_slow_the_reads(outstanding):
    def run(async_writes: bool):
        target = _SlowWrites("slow writes")
        src = ClosedSource(
            "db", target, FixedSampler(size=8192, read_pct=60, span=2**30), workers=2, outstanding=outstanding,
            async_writes=async_writes,
        )  # fmt: skip
        src.split_ops = True
        res = simulate(target, [src], duration=2.0, warmup=0.5, seed=3, progress=False)
        s = res.summary()
        return {c: (iops, ms) for c, iops, ms in s.select("class", "iops", "mean_ms").iter_rows()}, src

    slots = 2 * outstanding
    waiting, _ = run(False)
    # each slot waits for every IO: a cycle of 0.6 x 1 ms + 0.4 x 50 ms
    assert waiting["db read"][0] + waiting["db write"][0] == pytest.approx(slots / 20.6e-3, rel=0.1)
    detached, src = run(True)
    reads, writes = detached["db read"][0], detached["db write"][0]
    assert reads == pytest.approx(slots / 1e-3, rel=0.02)  # each slot waits for its reads only
    assert writes / reads == pytest.approx(0.4 / 0.6, rel=0.05)  # the sampler's read share is kept
    assert detached["db write"][1] == pytest.approx(50.0)  # the writes' own latency is recorded
    law = src.littles_law()  # writes in flight count in the system: L = lambda W over both
    assert law["mean_in_system"] == pytest.approx(reads * 1e-3 + writes * 50e-3, rel=0.03)


def test_async_writes_refuse_a_source_with_nothing_to_wait_for():
    target = _SlowWrites("slow writes")
    with pytest.raises(ValueError, match="async_writes needs reads"):
        ClosedSource("w", target, small_writes(0.0), async_writes=True)


def test_a_fixed_sampler_draws_only_once_bound_to_a_generator():
    template = FixedSampler(size=4096, read_pct=70, span=2**20)  # what a source is given: bound per run
    with pytest.raises(
        RuntimeError, match=r"this FixedSampler has no generator: a source draws from bind\(rng\)"
    ):
        template.next_block(8)
    is_read, size, address = template.bind(np.random.default_rng(0)).next_block(8)
    assert size.tolist() == [4096] * 8
    assert ((address % 4096 == 0) & (address < 2**20)).all()
    assert is_read.dtype == bool
