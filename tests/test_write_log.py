"""The steady-state flash write log (storagelab.components.write_log) and the Virtual SAN hybrids built
on it: before it, a hybrid's writes stayed in the SSD and its 10K drives took no writes at all."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from backends import Recorder, stats_of

from storagelab.components.write_log import WriteLog, sweep_density
from storagelab.kernel import Deterministic, FixedSampler, OpenSource, Station
from storagelab.kernel.simulation import simulate

KiB, GB = 1024, 10**9


def test_sweep_density_is_the_dirty_share_ahead_of_a_steady_circular_sweep():
    """Simulated directly: blocks written uniformly at random, swept in address order, one block
    cleaned per block written; once the dirty count is steady, the share of dirty blocks just ahead of
    the sweep is ``sweep_density`` of the steady dirty share (and about twice it when that is small)."""
    rng = np.random.default_rng(7)
    n = 5_000
    for level in (0.05, 0.3):
        dirty = np.zeros(n, dtype=bool)
        dirty[rng.choice(n, int(level * n), replace=False)] = True
        cursor, ahead = 0, []
        for step in range(30 * n):
            b = int(rng.integers(n))
            if dirty[b]:
                continue  # an overwrite: nothing new to destage
            dirty[b] = True
            while not dirty[cursor]:  # the sweep takes the next dirty block
                cursor = (cursor + 1) % n
            dirty[cursor] = False
            if step > 10 * n:  # steady by then: the sweep has been round many times
                ahead.append(dirty[(cursor + 1) : cursor + 100].mean() if cursor + 100 < n else np.nan)
        measured = float(np.nanmean(ahead))
        assert dirty.mean() == pytest.approx(level, abs=0.002)
        assert measured == pytest.approx(sweep_density(level), rel=0.05), level
    assert sweep_density(0.01) == pytest.approx(0.02, rel=0.01)
    assert sweep_density(0.0) == 0.0 and sweep_density(1.0) == 1.0 and sweep_density(5.0) == 1.0


def test_each_write_is_acknowledged_by_the_log_and_destaged_once_in_address_order():
    ssd = Station("ssd", Deterministic(100e-6), servers=4)
    back = Recorder("drives", service=2e-3)
    log = WriteLog("log", ssd, back, level_bytes=GB, backlog_bytes=GB, max_destage=8)
    span = 50 * GB
    src = OpenSource("w", log, FixedSampler(size=4 * KiB, read_pct=0, span=span), rate=2000.0)
    res = simulate(log, [src], duration=2.0, seed=3, progress=False)
    s = stats_of(res, "log")
    assert res.summary()["mean_ms"][0] == pytest.approx(0.1, rel=1e-6)  # the SSD's time, not the drives'
    writes = [r for r in back.log if not r[1]]
    # one destage per write that did not overwrite a block still in the log (8 in flight at the end)
    assert len(writes) == pytest.approx(s["writes"] - s["coalesced_writes"], abs=8)
    assert s["coalesced_writes"] / s["writes"] == pytest.approx(GB / span, abs=0.01)  # 2 %
    assert all(size == 4 * KiB for *_, size in writes)
    addresses = np.array([a for _, _, a, _ in writes])
    steps = np.diff(addresses)
    assert (steps < 0).sum() <= 1  # one sweep, at most one wrap round to the start
    forward = steps[steps > 0] // (4 * KiB) - 1  # clean blocks the sweep skipped
    density = sweep_density(GB / span)  # the highest byte written is within a few blocks of the span
    assert forward.mean() == pytest.approx((1 - density) / density, rel=0.1)
    assert s["sweep_density"] == pytest.approx(density, rel=0.01)


@pytest.mark.parametrize(("span", "share"), [(2 * GB, 0.5), (GB // 2, 1.0), (20 * GB, 0.05)])
def test_overwrites_of_blocks_still_in_the_log_give_the_drives_nothing_to_destage(span, share):
    """At the level L over S bytes written uniformly at random, a write finds its block dirty with
    probability L / S: the log destages the rest (1 - L / S of the writes), and nothing once the data fit
    below the level. (Before coalescing was modelled, every write was destaged: this fails on it.)"""
    ssd = Station("ssd", Deterministic(50e-6), servers=8)
    back = Recorder("drives", service=1e-4)
    log = WriteLog("log", ssd, back, level_bytes=GB, backlog_bytes=GB, max_destage=8)
    src = OpenSource("w", log, FixedSampler(size=4 * KiB, read_pct=0, span=span), rate=4000.0)
    res = simulate(log, [src], duration=2.0, warmup=0.5, seed=5, progress=False)
    s = stats_of(res, "log")
    assert s["coalesced_writes"] / s["writes"] == pytest.approx(share, abs=0.02)
    assert s["destage_ios"] == pytest.approx(s["writes"] * (1 - share), abs=0.02 * s["writes"] + 8)
    if share == 1.0:
        assert s["destage_ios"] == 0 and not [r for r in back.log if not r[1]]


def test_reads_go_to_the_backend():
    back = Recorder("drives")
    log = WriteLog(
        "log", Station("ssd", Deterministic(1e-4)), back, level_bytes=GB, backlog_bytes=0, max_destage=1
    )
    src = OpenSource("r", log, FixedSampler(size=4 * KiB, read_pct=100, span=GB), rate=100.0)
    res = simulate(log, [src], duration=1.0, seed=1, progress=False)
    assert all(r[1] for r in back.log) and len(back.log) > 50
    assert res.summary()["mean_ms"][0] == pytest.approx(1.0, rel=1e-6)


def test_the_drives_set_the_sustained_write_rate_once_the_backlog_is_full():
    """Drives that destage 500 IOs/s (1 in flight, 2 ms each) under 2,000 writes/s offered: the
    backlog fills to its limit, then writes are held and complete at the drives' rate over the share of
    writes the log does not absorb (1 GB over 10 GB: 90 % are destaged)."""
    ssd = Station("ssd", Deterministic(50e-6), servers=8)
    back = Recorder("drives", service=2e-3)
    log = WriteLog("log", ssd, back, level_bytes=GB, backlog_bytes=400 * 4 * KiB, max_destage=1)
    src = OpenSource("w", log, FixedSampler(size=4 * KiB, read_pct=0, span=10 * GB), rate=2000.0)
    res = simulate(log, [src], duration=3.0, warmup=1.0, seed=1, progress=False)
    s = stats_of(res, "log")
    assert s["held_writes"] > 0
    assert res.summary()["iops"][0] == pytest.approx(500 / 0.9, rel=0.03)
    assert s["max_backlog_mb"] == pytest.approx(400 * 4 * KiB / 1e6, rel=0.01)


def test_bad_settings_are_refused():
    ssd, back = Station("ssd", Deterministic(1e-4)), Recorder("drives")
    with pytest.raises(ValueError, match="level_bytes must be"):
        WriteLog("log", ssd, back, level_bytes=100, backlog_bytes=0, max_destage=1)
    with pytest.raises(ValueError, match="max_destage must be"):
        WriteLog("log", ssd, back, level_bytes=GB, backlog_bytes=0, max_destage=0)
    with pytest.raises(ValueError, match="backlog_bytes must be"):
        WriteLog("log", ssd, back, level_bytes=GB, backlog_bytes=-1, max_destage=1)
    with pytest.raises(ValueError, match="level_share must be"):
        sweep_density(-0.1)


def test_vsan_hybrid_drives_order_by_rotation_and_take_the_destage():
    """The hybrid's 10K drives reorder by access time (SATF) and, with the write log, take a write
    per VM write; with the elevator the preset used before, which ignores rotation, the drives absorb
    the destage far more slowly, so the cluster runs fewer IOPS at the same host time."""
    from storagelab.studies.vsan import claims
    from storagelab.studies.vsan.workloads import vsan_iometer

    conf = "hybrid Xeon E5 v2"
    topo = claims.preset.vsan(conf, **claims.protocol_overrides(conf, 64))
    found, todo = {}, [topo.volumes["datastore"]]
    while todo:
        c = todo.pop()
        found[c.name] = c
        todo.extend(c.children())
    drive = found["host 1 10K 0"]
    assert type(drive.discipline).__name__ == "ShortestAccessFirst"
    assert topo.params["drive_ordering"].value == "satf"
    assert topo.params["drive_ordering"].origin == "device-physics"
    assert topo.params["log_level"].si == 8e9 and topo.params["log_high_limit"].si == 12e9
    iops = {}
    for ordering in ("elevator", "satf"):
        t = claims.preset.vsan(conf, drive_ordering=ordering, **claims.protocol_overrides(conf, 64))
        res = t.run(vsan_iometer(vms=64), seed=1, duration=1.0, warmup=0.3)
        iops[ordering] = float(res.summary()["iops"][0])
        c = res.components()
        util = c.filter(pl.col("component").str.contains(" 10K ") & (pl.col("statistic") == "utilisation"))
        assert util["value"].mean() > 0.85, ordering  # misses and destage keep the drives busy
    assert iops["satf"] > 1.2 * iops["elevator"]


def test_vsan_hosts_process_ios_on_their_cores_and_no_fit_sets_a_capacity():
    """Each host's IO processing is a per-IO CPU cost (stated, not fitted) on the host's cores (the
    processor's datasheet cores, two sockets); the only fit is the software/network delay, fitted on the
    all-flash IOPS at 16 VMs, so no hybrid point and no 64-VM point is fitted on."""
    from storagelab.studies.vsan import preset

    for conf in preset.CONFIGURATIONS:
        topo = preset.vsan(conf)
        cores = topo.roles["host CPUs"]
        expected = 2 * preset.PROCESSORS[conf][1]
        assert [c.servers for c in cores] == [expected] * 4, conf
        fits = {k: p.fitted_on for k, p in topo.params.declared().items() if p.origin == "fit"}
        assert fits == {"stack_delay": ("vsan-af-iops-vm16",)}, conf
        assert topo.param("cpu_cycles_per_io").origin == "assumption"


def test_a_fixed_point_is_computed_once_per_model_and_the_hybrids_differ_in_their_processors():
    """Equal parameter values share one fixed point; the two hybrids' hosts have different processors (the
    E5-2690 v2's 10 cores at 3.0 GHz, the E5-2699 v3's 18 at 2.3 GHz), so each has its own."""
    from storagelab.studies.vsan import claims

    assert claims._same_model("all-flash NVMe") == "all-flash NVMe"
    assert claims._same_model("hybrid Xeon E5 v3") == "hybrid Xeon E5 v3"
    assert claims._same_model("hybrid Xeon E5 v2") == "hybrid Xeon E5 v2"


def test_the_hybrids_iops_at_64_vms_are_predicted_because_their_hit_ratio_is_the_models_own():
    """At 64 VMs, as at 4, the protocol's hit ratio is the model's own fixed point, not
    read_hit_ratio(published IOPS / 64) (which made the published IOPS an input, so the calibration
    counted those two points as fitted): nothing is fitted on the study's hybrid points."""
    from storagelab import studies
    from storagelab.calibration.claims import published_value
    from storagelab.studies.vsan import claims

    fitted = studies.fitted_points("vsan")
    for tag, conf in (("hyb-v2", "hybrid Xeon E5 v2"), ("hyb-v3", "hybrid Xeon E5 v3")):
        row = f"vsan-{tag}-iops-vm64"
        hit = claims.protocol_hit_ratio(conf, 64)
        assert hit == claims.cold_cache_hit_ratio(64, conf)
        assert hit != pytest.approx(claims.read_hit_ratio(published_value(row) / 64), abs=0.01), tag
        assert not any(r.startswith(f"vsan-{tag}") for r in fitted), tag


def test_vsan_all_flash_destages_its_nvme_write_buffer_to_the_s3500s():
    """The all-flash hosts' P3700 buffers writes in a write log at the same congestion limits as the
    E5 v3 hybrid (set on those hosts) and destages one IO per write that brings a new block to the S3500
    capacity SSDs (8 GB over the 60 GB each host holds at 16 VMs: 13 % are overwrites the log absorbs),
    which are modelled with the S3500's own figures (11,500 random writes per second, against the S3700's
    36,000) and also serve the reads the P3700's read cache misses (here half, as after a cache clear)."""
    from storagelab.devices import preset as device
    from storagelab.studies.vsan.preset import vsan
    from storagelab.studies.vsan.workloads import SPAN_PER_VM, vsan_iometer

    topo = vsan("all-flash NVMe", read_cache_resident=0.5)
    p = topo.params
    assert p["capacity_device"].value == "Intel DC S3500" and p["capacity_device"].origin == "datasheet"
    assert device("Intel DC S3500").max_iops(False) == pytest.approx(11500)
    assert (p["log_level"].si, p["log_high_limit"].si) == (8e9, 12e9)
    assert p["log_level"].origin == "document" and p["capacity_queue_depth"].value == 32
    res = topo.run(vsan_iometer(vms=16), seed=1, duration=1.0, warmup=0.3)
    writes = topo.role_stats(res, "write logs", "writes")["value"].sum()
    destages = topo.role_stats(res, "write logs", "destage_ios")["value"].sum()
    completed = topo.role_stats(res, "capacity SSDs", "completed")["value"].sum()
    coalesced = topo.role_stats(res, "write logs", "coalesced_writes")["value"].sum()
    assert writes > 0 and destages == pytest.approx(writes - coalesced, rel=0.02)
    assert coalesced / writes == pytest.approx(8e9 / (16 * SPAN_PER_VM * 2 / 4), abs=0.02)
    assert completed > 1.5 * destages  # the read misses and the destage both reach the S3500s
    assert topo.role_stats(res, "write logs", "held_writes")["value"].sum() == 0


def test_vsan_all_flash_destage_loads_the_s3500s_without_moving_the_cluster():
    """Each S3500 takes the cluster's writes x 2 copies / 16 SSDs as destage, less the overwrites the
    log absorbs (8 GB of the 60 GB per host at 16 VMs); at the S3500's 11,500
    writes/s that keeps it busier than with the S3700's 36,000, yet far from saturated, so the cluster's
    rate barely moves (what analysis.all_flash_destage reports for notebook 11)."""
    from storagelab.studies.vsan import analysis
    from storagelab.studies.vsan.workloads import SPAN_PER_VM

    d = analysis.all_flash_destage(16, replications=1)
    s3500, s3700 = (d.filter(capacity_device=c).row(0, named=True) for c in ("Intel DC S3500", "SATA SSD"))
    for r in (s3500, s3700):
        absorbed = 8e9 / (16 * SPAN_PER_VM * 2 / 4)
        assert r["ssd_destage_writes_per_s"] == pytest.approx(
            r["iops"] * 0.3 * 2 / 16 * (1 - absorbed), rel=0.05
        )
        assert r["held_writes"] == 0
    assert s3500["ssd_utilisation"] > 1.5 * s3700["ssd_utilisation"]
    assert s3500["ssd_utilisation"] < 0.5
    assert s3500["iops"] == pytest.approx(s3700["iops"], rel=0.02)
