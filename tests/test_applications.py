"""Application workloads: each generator's published defining numbers recomputed from its streams and
specs, the provenance of every parameter, the stream and workload rules, the boot-storm and Login VSI
schedules, Iometer bursts as think times, and a short end-to-end run of the ILIO extra writes."""

from __future__ import annotations

import bisect
import math
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from storagelab import provenance
from storagelab.kernel import Exponential, Station
from storagelab.kernel.component import Component, completion_in
from storagelab.kernel.simulation import simulate
from storagelab.kernel.sources import ClosedSource, OpenSource
from storagelab.published import datasets
from storagelab.studies.ds5020.workloads import (
    iometer_cache_reads,
    iometer_sequential_read,
    jetstress,
    orion_basic_matrix,
    orion_large,
    orion_small,
)
from storagelab.studies.ilio.workloads import atlantis_vdi_iometer, ilio_extra_writes
from storagelab.studies.vsan.workloads import vsan_iometer
from storagelab.workloads import IOMETER_WEB_SERVER, AccessSpec
from storagelab.workloads.application import ApplicationWorkload, BurstThink, Stream, combine
from storagelab.workloads.catalogue import (
    backup_stream,
    boot_storm,
    dvd_store,
    iometer_web_server,
    loadgen_outlook_200,
    login_vsi,
    sequential_scan,
)
from storagelab.workloads.catalogue.vdi import IOS_PER_BOOT

KiB, MiB = 1024, 1024**2

GENERATORS = [
    jetstress,
    loadgen_outlook_200,
    orion_small,
    orion_large,
    iometer_web_server,
    sequential_scan,
    iometer_sequential_read,
    iometer_cache_reads,
    vsan_iometer,
    dvd_store,
    boot_storm,
    login_vsi,
    ilio_extra_writes,
    atlantis_vdi_iometer,
]


def only_stream(w: ApplicationWorkload) -> Stream:
    assert len(w.streams) == 1, w.streams
    return w.streams[0]


def size_mix(spec: AccessSpec) -> dict[int, float]:
    return {s.size: s.pct for s in spec.sizes}


def spec(size: int = 4096) -> AccessSpec:
    return AccessSpec(name="t", sizes=({"size": size, "pct": 100},), read_pct=50, random_pct=100)


# --- provenance of the defining numbers ---------------------------------------------------------


@pytest.mark.parametrize("generator", GENERATORS, ids=lambda g: g.__name__)
def test_every_param_has_an_allowed_origin_and_a_source(generator):
    w = generator()
    assert w.params
    for key, p in w.params.items():
        assert isinstance(p, provenance.Param), key
        assert p.origin in provenance.ORIGINS, key
        assert isinstance(p.source, str) and p.source.strip(), key
        if p.origin == "assumption":
            assert len(p.source.strip()) > 20, f"{key}: an assumption must say why, got {p.source!r}"
    rows = w.param_table()
    assert [r["parameter"] for r in rows] == list(w.params)
    assert {r["workload"] for r in rows} == {w.name}


# --- Exchange -----------------------------------------------------------------------------------


def test_jetstress_target_rate_log_ratio_and_db_loop():
    w = jetstress()
    assert w.params["target_iops"].value == 1140 == 2280 * 0.5
    db, log = w.streams
    assert w.volumes == ("exchange-db", "exchange-log")
    # Log writes at Figure 16's log/database ratio of the target rate.
    assert not log.closed
    assert log.rate == pytest.approx(1140 * 252.745 / (630.229 + 481.876), rel=1e-9)
    assert log.peak_rate == log.rate
    assert (log.spec.read_pct, log.spec.random_pct, log.spec.max_size) == (0, 0, 5632)
    assert 5632 % 512 == 0 and abs(5632 - 5666.955) < 512
    # The database: a closed loop of 32 threads, one 8 KiB random read each, 56.67 % reads; the
    # writes are ESE's background flushes, so no thread waits for them.
    assert db.closed and (db.workers, db.outstanding) == (32, 1)
    assert db.async_writes and not log.async_writes
    assert db.think == pytest.approx(32 / 630.229 - 17e-3, rel=1e-12)
    assert db.peak_rate is None
    assert size_mix(db.spec) == {8192: 100}
    assert db.spec.read_pct == pytest.approx(100 * 630.229 / (630.229 + 481.876), abs=0.005)
    assert db.spec.read_pct == pytest.approx(56.67)
    assert db.spec.random_pct == 100
    assert w.params["db_read_pct"].value == db.spec.read_pct


def test_jetstress_target_follows_mailboxes_and_iops_per_mailbox():
    w = jetstress(mailboxes=1000, iops_per_mailbox=0.3, threads=8)
    assert w.params["target_iops"].value == pytest.approx(300)
    assert w.streams[1].rate == pytest.approx(300 * 252.745 / 1112.105, rel=1e-9)
    assert w.streams[0].workers == 8


def test_loadgen_outlook_200_rate_is_mailboxes_times_iops_per_mailbox():
    w = loadgen_outlook_200()
    s = only_stream(w)
    assert w.params["mailboxes"].value == 400
    assert not s.closed
    assert s.rate == pytest.approx(400 * w.params["iops_per_mailbox"].value, rel=1e-12)
    assert s.rate == pytest.approx(96.0)
    assert size_mix(s.spec) == {32 * KiB: 100}
    assert (s.spec.read_pct, s.spec.random_pct) == (w.params["read_pct"].value, 100)
    assert loadgen_outlook_200(mailboxes=100).streams[0].rate == pytest.approx(s.rate / 4)


# --- Oracle Orion -------------------------------------------------------------------------------


def test_orion_small_and_large():
    small, large = only_stream(orion_small()), only_stream(orion_large())
    assert size_mix(small.spec) == {8 * KiB: 100}
    assert size_mix(large.spec) == {1 * MiB: 100}
    for s in (small, large):
        assert s.closed and s.outstanding == 1
        assert 100 - s.spec.read_pct == 30  # 'Write: 30%'
        assert s.spec.random_pct == 100
        # Figure 17's raw-device size 1,924,071,424 B is the 557.793 GB (GiB) OR_0x LUN modulo 2**32
        assert s.span % 2**32 == 1_924_071_424
        assert abs(s.span / 2**30 - 557.793) < 0.002
    assert (small.workers, large.workers) == (25, 9)
    p = orion_small().params
    assert p["small_io_size"].value * KiB == small.spec.max_size
    assert p["write_pct"].value == 100 - small.spec.read_pct
    assert p["outstanding_small"].value == 5 * p["num_disks"].value
    assert orion_large().params["large_io_size"].value * KiB == large.spec.max_size


def test_orion_basic_matrix_has_the_36_points_of_figure_17():
    points = orion_basic_matrix(5)
    assert len(points) == 36 and len(set(points)) == 36
    small = [s for s, q in points if q == 0 and s > 0]
    large = [q for s, q in points if s == 0]
    assert small == list(range(1, 26))
    assert large == list(range(0, 11))
    assert all(s == 0 or q == 0 for s, q in points)  # each point runs one IO type alone
    assert orion_basic_matrix() == points
    assert len(orion_basic_matrix(1)) == 5 + 3


@pytest.mark.parametrize("num_disks", [0, -1, 2.5, "5", None])
def test_orion_basic_matrix_rejects_bad_disk_counts(num_disks):
    with pytest.raises(ValueError, match=r"num_disks must be an integer >= 1"):
        orion_basic_matrix(num_disks)


# --- Iometer ------------------------------------------------------------------------------------


def test_iometer_web_server_is_the_ds5020_appendix_mix():
    w = iometer_web_server()
    s = only_stream(w)
    assert s.spec is IOMETER_WEB_SERVER
    assert size_mix(s.spec) == {
        512: 22, 1024: 15, 2048: 8, 4096: 23, 8192: 15, 16384: 2, 32768: 6, 65536: 7, 131072: 1, 524288: 1
    }  # fmt: skip
    assert (s.spec.read_pct, s.spec.random_pct) == (100, 100)
    assert s.closed and (s.workers, s.outstanding) == (4, 4)
    assert round(s.spec.mean_size / KiB, 2) == 15.66
    assert w.params["mean_io_size"].value == 15.66
    published = datasets.load("ds5020").filter(row_id="ds5020-web-mean-block")["value"].item()
    assert w.params["mean_io_size"].value == pytest.approx(published)


def test_sequential_scan_and_sequential_read():
    scan = only_stream(sequential_scan())
    assert size_mix(scan.spec) == {256 * KiB: 100}
    assert (scan.spec.read_pct, scan.spec.random_pct) == (100, 0)
    assert scan.closed and (scan.workers, scan.outstanding) == (1, 1)
    workers = iometer_sequential_read("seq").streams
    assert [w.name for w in workers] == [f"seq worker {k}" for k in range(1, 5)]
    for seq in workers:
        assert size_mix(seq.spec) == {1 * MiB: 100}
        assert (seq.spec.read_pct, seq.spec.random_pct) == (100, 0)
        assert seq.closed and (seq.workers, seq.outstanding) == (1, 16)


def test_iometer_workers_on_one_lun_each_read_it_from_its_start():
    """Iometer keeps the sequential position per worker and target (src/IOTargetDisk.cpp: ``offset``
    starts at ``starting_position`` and advances by the worker's own transfers), so the four
    characterization workers read the same blocks: each one's first sixteen reads are 0, 1, ..., 15 MiB."""

    class Recorder(Component):
        def on_bind(self) -> None:
            self.seen: dict[str, list[int]] = {}

        def submit(self, io):
            self.seen.setdefault(io.cls, []).append(io.address)
            return completion_in(self.env, 1e-3, io)

    disk = Recorder("disk")
    w = iometer_sequential_read("seq", volume="lun")
    simulate(disk, w.sources({"lun": disk}), duration=0.0005, progress=False, seed=1)
    seen = disk.seen
    assert sorted(seen) == [f"seq worker {k}" for k in range(1, 5)]
    for addresses in seen.values():
        assert addresses[:16] == [k * MiB for k in range(16)]


def test_iometer_cache_reads_are_512_byte_sequential_reads_per_worker():
    workers = iometer_cache_reads("cache").streams
    assert len(workers) == 4
    for w in workers:
        assert size_mix(w.spec) == {512: 100} and (w.spec.read_pct, w.spec.random_pct) == (100, 0)
        assert (w.workers, w.outstanding) == (1, 16)
    assert iometer_cache_reads().params["io_size"].origin == "assumption"


@pytest.mark.parametrize("vms", [4, 64])
def test_vsan_iometer_one_qd1_worker_per_vm_over_its_7_5_gb(vms):
    w = vsan_iometer(vms=vms)
    s = only_stream(w)
    assert s.closed and (s.workers, s.outstanding) == (vms, 1)
    assert size_mix(s.spec) == {4096: 100}
    assert (s.spec.read_pct, s.spec.random_pct) == (70, 100)
    assert s.span == vms * 7_500_000_000
    assert s.span == round(w.params["vms"].value * w.params["span_per_vm"].value * 1e9)


# --- DVD Store and Iometer bursts as think times ------------------------------------------------


def test_dvd_store_threads_and_order_think_time():
    w = dvd_store()
    s = only_stream(w)
    assert s.closed and (s.workers, s.outstanding) == (4 * 12, 1)
    assert size_mix(s.spec) == {8192: 100}
    assert isinstance(s.think, BurstThink)
    n = w.params["ios_per_order"].value  # the fitted IOs per order: a burst of n IOs, then the think time
    assert (s.think.burst_length, s.think.delay) == (n, 0.1)
    assert s.think.mean == pytest.approx(0.1 / n, rel=1e-12)
    assert s.think.scv == n - 1
    draw = s.think.sampler(np.random.default_rng(0))
    assert [draw() for _ in range(3 * n)] == ([0.0] * (n - 1) + [0.1]) * 3
    assert only_stream(dvd_store(think=0)).think == 0.0
    assert only_stream(dvd_store(think=0.0, vms=2)).workers == 24


@pytest.mark.parametrize(("length", "delay"), [(1, 0.05), (3, 0.07), (15, 0.1)])
def test_burst_think_mean_and_scv_match_its_sequence(length, delay):
    think = BurstThink(length, delay)
    draw = think.sampler(np.random.default_rng(0))
    x = np.array([draw() for _ in range(length * 20)])
    assert think.mean == pytest.approx(x.mean(), rel=1e-12)
    assert think.scv == pytest.approx(x.var() / x.mean() ** 2, rel=1e-9, abs=1e-12)
    assert think.second_moment == pytest.approx(np.mean(x**2), rel=1e-9)


@pytest.mark.parametrize(("length", "delay"), [(0, 0.1), (2.0, 0.1), (3, -0.1), (3, math.inf), (3, "x")])
def test_burst_think_rejects_bad_arguments(length, delay):
    with pytest.raises(ValueError, match=r"burst"):
        BurstThink(length, delay)


# --- VDI ----------------------------------------------------------------------------------------


def test_boot_storm_peak_rate_and_envelope():
    w = boot_storm()
    s = only_stream(w)
    assert not s.closed
    assert (
        s.rate == 2.0 * IOS_PER_BOOT == 48_224
    )  # 24,112 IOs per boot (fitted on the ILIO study's 5-minute mean)
    assert s.schedule.max_scale == 1.0
    assert s.peak_rate == 48_224
    assert (s.spec.read_pct, s.spec.random_pct, s.spec.max_size) == (90, 100, 4096)
    assert w.params["power_on_interval"].value == 0.5


def scheduled_ios(s: Stream, end: float) -> float:
    """Integral of the offered rate (IO/s) over [0, end] s: every kink of the piecewise-linear
    schedule is a grid point, so the trapezoid rule is exact up to rounding."""
    t = np.union1d(np.linspace(0.0, end, 200_001), [b for b in s.schedule.boundaries() if b <= end])
    return float(np.trapezoid(s.rate * s.schedule.rate_scale_at(t), t))


BOOT_CASES = [
    {},  # 600 desktops at 2/s: 300 s of power-ons, longer than one 12 s boot
    {"desktops": 75, "power_on_rate": 0.5, "ios_per_boot": 1000.0, "boot_duration": 20.0, "start": 30.0},
    {"desktops": 24, "power_on_rate": 2.0},  # power-ons last exactly one boot
]


@pytest.mark.parametrize("kwargs", BOOT_CASES)
def test_boot_storm_issues_every_desktops_boot_ios_and_ends_on_time(kwargs):
    w = boot_storm(**kwargs)
    s = only_stream(w)
    desktops = w.params["desktops"].value
    rate = 1 / w.params["power_on_interval"].value
    ios, boot = w.params["ios_per_boot"].value, w.params["boot_duration"].value
    start = kwargs.get("start", 0.0)
    end = start + desktops / rate + boot
    assert scheduled_ios(s, end + 60) == pytest.approx(desktops * ios, rel=1e-3)
    after = np.linspace(end, end + 1000, 101)
    assert np.all(s.schedule.rate_scale_at(after) == 0)
    assert s.schedule.rate_scale_at(end - 1) > 0
    if start:
        assert np.all(s.schedule.rate_scale_at(np.linspace(0, start, 11)) == 0)


def test_from_time_starts_each_schedule_there_and_keeps_closed_streams():
    w = combine("mix", [dvd_store(), boot_storm(desktops=60, power_on_rate=2.0)])
    later = w.from_time(12.0)
    assert later.name == "mix from 12 s"
    closed, storm = later.streams
    assert closed == w.streams[0]
    u = np.linspace(0, storm.schedule.duration, 2001)
    np.testing.assert_allclose(storm.schedule.rate_scale_at(u), w.streams[1].schedule.rate_scale_at(12 + u))
    assert storm.schedule.rate_scale_at(0.0) == 1.0  # one boot in: every desktop powered on is booting
    assert (storm.rate, storm.spec) == (w.streams[1].rate, w.streams[1].spec)
    with pytest.raises(ValueError, match=r"workload 'mix': t must be a time > 0 s, got 0"):
        w.from_time(0)


def test_boot_storm_shorter_power_on_than_one_boot():
    w = boot_storm(desktops=10, power_on_rate=2.0)  # 5 s of power-ons, 12 s boots
    s = only_stream(w)
    end = 10 / 2.0 + 12.0
    assert scheduled_ios(s, end + 60) == pytest.approx(10 * IOS_PER_BOOT, rel=1e-3)
    assert s.schedule.rate_scale_at(end - 1) > 0


def test_login_vsi_steady_rate_and_logon_ramp():
    w = login_vsi()
    s = only_stream(w)
    assert s.rate == 600 * 10.0 == 6000
    assert (100 - s.spec.read_pct, s.spec.random_pct) == (80, 100)
    assert size_mix(s.spec) == {4096: 100}
    assert s.peak_rate == 6000
    logons = 600 * 20.0
    scale = s.schedule.rate_scale_at
    assert scale(0.0) == 0
    assert scale(logons / 2) == pytest.approx(0.5)
    assert scale(logons) == pytest.approx(1.0)
    assert scale(logons + 3600) == 1.0
    assert only_stream(login_vsi(ramp=False)).schedule is None
    delayed = only_stream(login_vsi(desktops=10, launch_interval=2.0, start=5.0)).schedule
    assert [delayed.rate_scale_at(t) for t in (0.0, 5.0, 15.0, 25.0, 100.0)] == pytest.approx(
        [0, 0, 0.5, 1, 1]
    )


def test_ilio_extra_writes_bursts_and_upper_bound():
    w = ilio_extra_writes()
    s = only_stream(w)
    assert s.closed and (s.workers, s.outstanding) == (75, 1)
    assert size_mix(s.spec) == {24 * KiB: 100}
    assert (s.spec.read_pct, s.spec.random_pct) == (0, 100)
    assert (s.spec.burst_length, s.spec.burst_delay) == (3, 0.070)
    assert isinstance(s.think, BurstThink) and (s.think.burst_length, s.think.delay) == (3, 0.070)
    assert s.think.timer_tick == pytest.approx(0.015625) and s.think.clocked
    upper = s.think.burst_length / s.think.delay  # without the timer, zero service time: 3 IOs per 70 ms
    assert round(upper, 2) == 42.86
    assert upper > w.params["target_iops_per_desktop"].value == 38
    assert 1 / s.think.mean == pytest.approx(upper)
    # with it, a burst repeats every ceil(70 / 15.625) = 5 ticks: the study's 38 per session, as the
    # ILIO notebook's table computes it from the workload's own parameters
    from storagelab.studies.ilio.analysis import extra_write_rate

    assert extra_write_rate()["iops_per_desktop"][1] == pytest.approx(3 / (5 * 0.015625))


def test_atlantis_vdi_iometer():
    s = only_stream(atlantis_vdi_iometer())
    assert s.closed and (s.workers, s.outstanding) == (4, 1)
    assert size_mix(s.spec) == {4096: 100}
    assert (100 - s.spec.read_pct, s.spec.random_pct) == (80, 100)
    assert s.span == 32 * 10**9


# --- streams and workloads ----------------------------------------------------------------------


def test_stream_needs_exactly_one_of_workers_and_rate():
    with pytest.raises(ValueError, match=r"give workers \(closed loop\) or rate \(open loop\), not both"):
        Stream("s", "v", spec(), 1 << 30, workers=2, rate=10.0)
    with pytest.raises(ValueError, match=r"give workers \(closed loop\) or rate \(open loop\)"):
        Stream("s", "v", spec(), 1 << 30)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"span": 4095}, r"span 4095 B is smaller than its largest IO"),
        ({"rate": 0.0}, r"rate must be > 0 IO/s"),
        ({"name": ""}, r"needs a name and a volume"),
        ({"volume": ""}, r"needs a name and a volume"),
    ],
)
def test_stream_rejects_impossible_streams(kwargs, message):
    body = {"name": "s", "volume": "v", "spec": spec(4096), "span": 1 << 30, "rate": 10.0} | kwargs
    with pytest.raises(ValueError, match=message):
        Stream(**body)
    assert Stream("s", "v", spec(4096), 4096, workers=1).span == 4096  # one IO fits exactly


def test_streams_build_kernel_sources():
    target = Station("disk", Exponential(0.001))
    closed = only_stream(dvd_store()).source(target)
    assert isinstance(closed, ClosedSource)
    assert (closed.workers, closed.outstanding, closed.span) == (48, 1, 4 * 50 * 10**9)
    assert isinstance(closed.think, BurstThink)
    opened = only_stream(boot_storm()).source(target)
    assert isinstance(opened, OpenSource)
    assert opened.max_scale == 1.0 and opened.rate_scale is not None
    assert opened.interarrival.mean == pytest.approx(1 / (2.0 * IOS_PER_BOOT))
    plain = only_stream(login_vsi(ramp=False)).source(target)
    assert plain.rate_scale is None and plain.max_scale == 1.0


def test_workload_rejects_duplicate_and_missing_streams():
    s = Stream("same", "v", spec(), 1 << 30, rate=1.0)
    with pytest.raises(ValueError, match=r"needs streams with distinct names"):
        ApplicationWorkload("w", (s, Stream("same", "u", spec(), 1 << 30, workers=1)))
    with pytest.raises(ValueError, match=r"needs streams with distinct names"):
        ApplicationWorkload("w", ())


def test_sources_name_the_missing_volume():
    w = jetstress()
    disk = Station("disk", Exponential(0.001))
    with pytest.raises(KeyError, match=r"'exchange-log'") as info:
        w.sources({"exchange-db": disk})
    assert "exchange-db" not in str(info.value).split("does not have")[0]
    sources = w.sources({"exchange-db": disk, "exchange-log": disk, "unused": disk})
    assert [x.name for x in sources] == ["jetstress db", "jetstress log"]
    assert all(x.target is disk for x in sources)


def test_combine_concatenates_streams_and_prefixes_params():
    parts = [jetstress(), iometer_web_server(), sequential_scan()]
    mixed = combine("mixed", parts, notes="DS5020 mixed workload")
    assert mixed.streams == tuple(s for w in parts for s in w.streams)
    assert mixed.volumes == ("exchange-db", "exchange-log", "web", "scan")
    assert len(mixed.params) == sum(len(w.params) for w in parts)
    assert mixed.params["jetstress: target_iops"] is parts[0].params["target_iops"]
    assert mixed.notes == "DS5020 mixed workload"
    with pytest.raises(ValueError, match=r"distinct names"):
        combine("twice", [jetstress(), jetstress()])
    assert len(combine("two", [jetstress(), jetstress("jetstress 2")]).streams) == 4


# --- running them -------------------------------------------------------------------------------


def run_ilio(desktops: int, seed: int):
    w = ilio_extra_writes(desktops=desktops)
    disk = Station("disk", Exponential(0.0005), servers=4)
    result = simulate(disk, w.sources({"vdi": disk}), duration=20, warmup=2, progress=False, seed=seed)
    return result.summary()


def test_ilio_extra_writes_runs_in_bursts():
    """Each desktop's bursts start on its timer's ticks: with IOs far faster than the 8 ms a burst
    has before the fifth tick, a burst repeats every 5 x 15.625 ms, 38.4 IOPS per desktop (the study's
    38); the 18 s window holds about 230 cycles per desktop, so the count is within a burst of it."""
    summary = run_ilio(5, seed=1)
    assert summary["class"].to_list() == ["extra writes"]
    per_desktop = summary["iops"].item() / 5
    assert per_desktop == pytest.approx(3 / 0.078125, abs=3 / 18)
    assert summary["count"].item() == pytest.approx(summary["iops"].item() * 18, abs=1)


def test_a_burst_delay_on_a_timer_ends_on_the_first_tick_after_it():
    """BurstThink with a timer tick: inside a burst no wait; before the next burst, the wait ends at
    the first tick of the worker's timer (its own phase) at or after the delay; without a tick, the
    delay itself."""
    think = BurstThink(3, 0.070, timer_tick=0.015625)
    draw = think.sampler(np.random.default_rng(4))
    waits = []
    now = 0.0
    for _ in range(30):
        gap = draw(now)
        waits.append(gap)
        now += gap + 0.0004  # the next IO's service
    delays = waits[2::3]
    assert all(w == 0.0 for k, w in enumerate(waits) if k % 3 != 2)
    assert all(0.070 <= d < 0.070 + 0.015625 for d in delays)
    ends = []
    now = 0.0
    for k, w in enumerate(waits):
        if k % 3 == 2:
            ends.append(now + w)
        now += w + 0.0004
    phase = ends[0] % 0.015625
    assert all((e - phase) / 0.015625 == pytest.approx(round((e - phase) / 0.015625), abs=1e-9) for e in ends)
    assert np.diff(ends) == pytest.approx(0.078125)  # locked to 5 ticks once the bursts start on one
    plain = BurstThink(3, 0.070).sampler(np.random.default_rng(4))
    assert [plain() for _ in range(3)] == [0.0, 0.0, 0.070]
    with pytest.raises(ValueError, match="timer_tick"):
        BurstThink(3, 0.070, timer_tick=0.0)


def test_same_seed_gives_an_identical_summary():
    first, again = run_ilio(5, seed=7), run_ilio(5, seed=7)
    assert first.equals(again)
    assert not first.equals(run_ilio(5, seed=8))


class Tracer(Component):
    """Serves each IO in its own random time (so completion times are distinct) and logs
    (submitted, completed) for each IO."""

    def on_bind(self) -> None:
        self.log: list[tuple[float, float]] = []

    def submit(self, io):
        d = float(self.rng.uniform(0.001, 0.002))
        self.log.append((self.env.now, self.env.now + d))
        return completion_in(self.env, d, io)


def burst_lengths(w: ApplicationWorkload, volume: str, delay: float) -> Counter:
    """IOs per burst, per worker. A worker's next IO starts when its previous one completes (think 0)
    or ``delay`` s later; the completion times are distinct, so each IO's predecessor is known."""
    tracer = Tracer("tracer")
    simulate(tracer, w.sources({volume: tracer}), duration=3, progress=False, seed=3)
    log = sorted(tracer.log)
    done = sorted((c, i) for i, (_, c) in enumerate(log))
    times = [c for c, _ in done]
    successor = {}
    for i, (start, _) in enumerate(log):
        if start == 0:
            continue
        for think in (0.0, delay):
            j = bisect.bisect_left(times, start - think - 1e-9)
            if j < len(times) and abs(times[j] + think - start) < 1e-9:
                successor[done[j][1]] = (i, think > 0)
                break
        else:
            raise AssertionError(f"IO submitted at {start} follows no completion")
    lengths = Counter()
    for i, (start, _) in enumerate(log):
        if start != 0:
            continue
        run = 1
        while i in successor:
            i, thought = successor[i]
            if thought:
                lengths[run] += 1
                run = 1
            else:
                run += 1
    return lengths


@pytest.mark.parametrize(
    "desktops",
    [
        1,
        4,
    ],
)
def test_each_worker_issues_bursts_of_three(desktops):
    # the burst structure, on the plain 70 ms delay (the timer's rounding, which makes the gap vary, is
    # tested above): each IO's predecessor is then found by its exact gap
    w = ilio_extra_writes(desktops=desktops)
    plain = ApplicationWorkload(w.name, (replace(w.streams[0], think=BurstThink(3, 0.070)),), w.params)
    lengths = burst_lengths(plain, "vdi", 0.070)
    assert sum(lengths.values()) >= 30 * desktops
    assert set(lengths) == {3}, lengths


# --- free workload axes: what a user varies, with fitted per-unit quantities held --------------------


#: Jetstress at the study's 32 threads, as the generator built it before threads were a free axis.
JETSTRESS_32_THINK_S = 32 / 630.229 - 17e-3
JETSTRESS_32_LOG_RATE = 1140 * 252.745 / (630.229 + 481.876)


@pytest.mark.parametrize("threads", [1, 4, 40])
def test_jetstress_any_thread_count_keeps_the_fitted_per_thread_think_time(threads):
    w = jetstress(threads=threads)
    db, log = w.streams
    assert (db.workers, db.outstanding) == (threads, 1)
    # the think time is a thread's own, fitted at the study's 32 threads: held, not re-derived
    assert db.think == pytest.approx(JETSTRESS_32_THINK_S, rel=1e-12)
    think = w.params["thread_think"]
    assert think.origin == "fit" and think.value == pytest.approx(1e3 * JETSTRESS_32_THINK_S, abs=5e-4)
    # the fit sets the read rate (Figure 16's reads, Table 2's four-tile IOPS); the latency is its input
    assert set(think.fitted_on) == {"ds5020-f16-db-reads", "ds5020-t2-iops-t4"}
    assert log.rate == pytest.approx(JETSTRESS_32_LOG_RATE, rel=1e-12)  # the target's, not the threads'
    assert w.params["threads"].value == threads and w.params["threads"].origin == "user"
    # and it runs: a closed loop of that many threads
    source = db.source(Station("disk", Exponential(5e-3)))
    assert isinstance(source, ClosedSource) and source.workers == threads


def test_jetstress_at_the_study_s_thread_count_is_the_generator_it_was():
    w = jetstress()
    assert w == jetstress(threads=32)
    db, log = w.streams
    assert db.think == JETSTRESS_32_THINK_S  # bit for bit: the committed results depend on it
    assert (db.workers, log.rate) == (32, pytest.approx(JETSTRESS_32_LOG_RATE, rel=1e-15))
    assert w.params["thread_think"].value == 33.775 and w.params["threads"].origin == "document"


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda: jetstress(threads=0), ["jetstress", "threads", ">= 1", "0"]),
        (lambda: jetstress(threads=2.5), ["jetstress", "threads", "integer"]),
        (lambda: jetstress(mailboxes=0), ["jetstress", "mailboxes", ">= 1"]),
        (lambda: jetstress(iops_per_mailbox=0), ["jetstress", "iops_per_mailbox", "> 0"]),
        (lambda: dvd_store(vms=0), ["dvd_store", "vms", ">= 1"]),
        (lambda: dvd_store(threads=0), ["dvd_store", "threads", ">= 1"]),
        (lambda: dvd_store(think=-0.1), ["dvd_store", "think", ">= 0"]),
        (lambda: dvd_store(database_size=100), ["dvd_store", "database_size", ">= 8192"]),
        (lambda: loadgen_outlook_200(mailboxes=0), ["loadgen_outlook_200", "mailboxes", ">= 1"]),
        (lambda: login_vsi(desktops=0), ["login_vsi", "desktops", ">= 1"]),
        (lambda: login_vsi(iops_per_desktop=0), ["login_vsi", "iops_per_desktop", "> 0"]),
        (lambda: boot_storm(desktops=0), ["boot_storm", "desktops", ">= 1"]),
        (lambda: boot_storm(power_on_rate=0), ["boot_storm", "power_on_rate", "> 0"]),
        (lambda: ilio_extra_writes(desktops=0), ["ilio_extra_writes", "desktops", ">= 1"]),
        (lambda: atlantis_vdi_iometer(outstanding=0), ["atlantis_vdi_iometer", "outstanding", ">= 1"]),
        (lambda: vsan_iometer(vms=0), ["vsan_iometer", "vms", ">= 1"]),
        (lambda: orion_small(outstanding=0), ["orion_small", "outstanding", ">= 1"]),
        (lambda: orion_large(outstanding=0), ["orion_large", "outstanding", ">= 1"]),
        (lambda: iometer_web_server(workers=0), ["iometer_web_server", "workers", ">= 1"]),
        (lambda: iometer_web_server(outstanding=0), ["iometer_web_server", "outstanding", ">= 1"]),
        (lambda: sequential_scan(outstanding=0), ["sequential_scan", "outstanding", ">= 1"]),
        (lambda: iometer_sequential_read(workers=0), ["iometer_sequential_read", "workers", ">= 1"]),
        (lambda: iometer_cache_reads(outstanding=0), ["iometer_cache_reads", "outstanding", ">= 1"]),
        (lambda: backup_stream(streams=0), ["backup_stream", "streams", ">= 1"]),
    ],
)
def test_a_refused_axis_value_names_the_argument_and_its_range(build, words):
    with pytest.raises(ValueError) as err:
        build()
    for w in words:
        assert w in str(err.value), (w, str(err.value))


def test_dvd_store_database_size_and_vms_set_the_data_with_ios_per_order_held():
    default = only_stream(dvd_store())
    assert default.span == 4 * 50 * 10**9
    eight = dvd_store(vms=8)
    assert only_stream(eight).span == 8 * 50 * 10**9 and only_stream(eight).workers == 8 * 12
    big = dvd_store(database_size=200 * 10**9)
    assert only_stream(big).span == 4 * 200 * 10**9
    assert big.params["database_size"].value == 200 and big.params["database_size"].origin == "user"
    assert dvd_store().params["database_size"].origin == "document"
    for w in (eight, big, dvd_store(threads=3, think=0.0)):
        assert w.params["ios_per_order"].value == 18 and w.params["ios_per_order"].origin == "fit"


def test_login_vsi_extra_writes_and_loadgen_data_follow_their_desktops_and_mailboxes():
    from storagelab.studies.ilio.workloads import DESKTOP_DISK
    from storagelab.workloads.catalogue.loadgen import LOADGEN_BYTES_PER_MAILBOX
    from storagelab.workloads.catalogue.vdi import SPAN_PER_DESKTOP

    assert only_stream(login_vsi()).span == 600 * SPAN_PER_DESKTOP
    assert only_stream(login_vsi(desktops=75)).span == 75 * SPAN_PER_DESKTOP
    assert only_stream(ilio_extra_writes()).span == 75 * DESKTOP_DISK
    assert only_stream(ilio_extra_writes(desktops=10)).span == 10 * DESKTOP_DISK
    assert only_stream(loadgen_outlook_200()).span == 4 * 450 * 10**9
    assert only_stream(loadgen_outlook_200(mailboxes=1000)).span == 1000 * LOADGEN_BYTES_PER_MAILBOX


@pytest.mark.parametrize("desktops", [1, 3, 150, 601, 1000])
def test_nexgen_workloads_take_any_desktop_count(desktops):
    from storagelab.studies.nexgen.workloads import boot_storm_workload, steady_workload, storm_length_s

    storm, steady = boot_storm_workload(desktops), steady_workload(desktops=desktops)
    counts = {k.split(":")[0]: p.value for k, p in storm.params.items() if k.endswith(": desktops")}
    assert sum(counts.values()) == desktops and max(counts.values()) - min(counts.values()) <= 1
    vdi = [s for s in steady.streams if s.volume.startswith("vdt-")]
    assert sum(s.rate for s in vdi) == pytest.approx(10.0 * desktops)
    assert storm_length_s(desktops) == pytest.approx(desktops * 0.48 + 12.0)
    # the fitted broker interval is held whatever the count
    assert all(p.value == 0.48 for k, p in storm.params.items() if k.endswith("power_on_interval"))


def test_nexgen_workloads_at_the_study_s_600_desktops_are_unchanged():
    from storagelab.studies.nexgen.workloads import POOLS, boot_storm_workload, steady_workload

    storm = boot_storm_workload()
    assert [s.volume for s in storm.streams[2:]] == list(POOLS)
    assert {storm.params[f"{p}: desktops"].value for p in POOLS} == {150}
    assert steady_workload() == steady_workload(1, 600)
