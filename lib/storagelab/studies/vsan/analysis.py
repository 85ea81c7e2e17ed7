"""Virtual SAN analyses for the study's notebook: scaling with VM count, and the service-level curve."""

from __future__ import annotations

import functools

import polars as pl

from storagelab.architectures.topology import Topology
from storagelab.calibration.claims import published_rows
from storagelab.kernel.replications import interval
from storagelab.kernel.simulation import SimulationResult
from storagelab.studies.vsan import preset
from storagelab.studies.vsan.claims import (
    DRIVES_PER_HOST,
    HOSTS,
    READ,
    STUDY,
    THRESHOLDS_MS,
    _times,
    iops_is_published,
    mva_iops,
    protocol_hit_ratio,
    protocol_iops,
    protocol_overrides,
)
from storagelab.studies.vsan.workloads import vsan_iometer

__all__ = [
    "THRESHOLDS_MS",
    "all_flash_destage",
    "cold_cache",
    "destage_load",
    "destage_requirement",
    "four_corners",
    "ftt_write_time",
    "published_iops",
    "scaling",
    "scaling_curve",
    "service_levels",
]


def _mva(configuration: str, vms: int) -> float:
    """MVA throughput of the fitted model at the protocol's hit ratio (drives as FCFS queues)."""
    return mva_iops(vms, preset.FITTED_STACK_DELAY_MS, configuration, protocol_hit_ratio(configuration, vms))


def scaling_curve(configuration: str, vms: list[int]) -> pl.DataFrame:
    """MVA throughput of the fitted model at each VM count (the analytic companion of the simulation;
    its capacity drives are FCFS queues, where the simulated drives reorder their queues)."""
    return pl.DataFrame(
        {"configuration": configuration, "vms": vms, "mva_iops": [_mva(configuration, n) for n in vms]}
    )


def cold_cache(
    configurations: list[str] | tuple[str, ...] = ("hybrid Xeon E5 v2", "hybrid Xeon E5 v3"),
    vm_counts: list[int] | tuple[int, ...] = (4, 8, 16, 32, 64),
) -> pl.DataFrame:
    """The hybrids' read hit ratio under the study's protocol per VM count
    (:func:`~storagelab.studies.vsan.claims.protocol_hit_ratio`), with the cluster IOPS it follows from
    (the model's own, simulated, at every VM count: the fixed point of
    :data:`~storagelab.studies.vsan.claims.HIT_RATIO_METHOD`; ``published_iops`` says whether the study
    also states the IOPS there), the share of all IOs that then read a 10K drive, and the reads per
    second each of the 16 drives then serves."""
    rows, drives = [], HOSTS * DRIVES_PER_HOST
    for conf in configurations:
        for vms in vm_counts:
            hit, iops = protocol_hit_ratio(conf, vms), protocol_iops(conf, vms)
            rows.append({"configuration": conf, "vms": vms, "iops": iops, "published_iops": iops_is_published(conf, vms),
                         "hit_ratio_pct": 100 * hit, "drive_reads_pct_of_ios": 100 * READ * (1 - hit),
                         "reads_per_drive_per_s": iops * READ * (1 - hit) / drives})  # fmt: skip
    return pl.DataFrame(rows)


def scaling(
    configurations: list[str] | tuple[str, ...] = preset.CONFIGURATIONS,
    vm_counts: list[int] | tuple[int, ...] = (4, 8, 16, 32, 64),
    *,
    quick: bool = True,
    replications: int = 2,
    seed: int = 1,
    confidence: float = 0.95,
    overrides: dict[str, object] | None = None,
) -> pl.DataFrame:
    """Simulated IOPS, mean latency and share of IOs under 2 ms per configuration and VM count (mean
    and replication interval), the hybrids under the study's cold-cache protocol, beside the fitted
    model's MVA throughput (of the preset as declared: ``overrides`` change the simulated preset only)."""
    rows = []
    for conf in configurations:
        for vms in vm_counts:
            runs = [preset.vsan(conf, **{**protocol_overrides(conf, vms, seed + r), **(overrides or {})})
                    .run(vsan_iometer(vms=vms), seed=seed + r, **_times(quick, vms))
                    for r in range(replications)]  # fmt: skip
            iops = [float(r.summary()["iops"][0]) for r in runs]
            lat = [float(r.summary()["mean_ms"][0]) for r in runs]
            sub2 = [100 * float(r.service_level_curve([2.0])["share_under"][0]) for r in runs]
            m, lo, hi = interval(iops, confidence)
            rows.append({
                "configuration": conf, "vms": vms, "iops": m, "iops_low": lo, "iops_high": hi,
                "mean_ms": interval(lat, confidence)[0], "under_2ms_pct": interval(sub2, confidence)[0],
                "mva_iops": _mva(conf, vms),
            })  # fmt: skip
    return pl.DataFrame(rows)


def published_iops() -> pl.DataFrame:
    """The published IOPS points: configuration, vms, iops."""
    rows = [
        {"configuration": r["configuration"], "vms": int(r["vm_count"]), "iops": float(r["value"])}
        for r in published_rows().values()
        if r["study"] == STUDY and r["metric"] == "iops" and r["kind"] == "measured" and r["vm_count"]
    ]
    return pl.DataFrame(rows).sort("configuration", "vms")


def service_levels(
    vms: int = 64, *, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(simulated, published) share of IOs under t at ``vms`` VMs for the three configurations (the
    hybrids under the study's cold-cache protocol): columns configuration, threshold_ms, share_pct."""
    sim = []
    for conf in preset.CONFIGURATIONS:
        topo = {**protocol_overrides(conf, vms, seed), **(overrides or {})}
        res = preset.vsan(conf, **topo).run(vsan_iometer(vms=vms), seed=seed, **_times(quick, vms))
        curve = res.service_level_curve((0.5, 1, 2, 3, 5, 10, 20, 30))
        sim += [{"configuration": conf, "threshold_ms": t, "share_pct": 100 * s}
                for t, s in zip(curve["threshold_ms"], curve["share_under"], strict=True)]  # fmt: skip
    pub = [
        {"configuration": r["configuration"], "threshold_ms": float(r["threshold_ms"]), "share_pct": float(r["value"])}
        for r in published_rows().values()
        if r["study"] == STUDY and r["metric"] == "share_under_threshold" and r["vm_count"] == vms
        and r["kind"] == "measured"
    ]  # fmt: skip
    return pl.DataFrame(sim), pl.DataFrame(pub)


#: The four corners' span: the 64 VMs' data disks of the study (64 x 7.5 GB).
CORNER_SPAN = 480 * 10**9


def four_corners(
    *, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None
) -> pl.DataFrame:
    """Each configuration's four corners (:func:`storagelab.analysis.four_corners.four_corners`) on the datastore,
    64 IOs outstanding (the study's largest VM count, each VM at queue depth one)."""
    from storagelab.analysis import four_corners as corners

    frames = [
        corners.four_corners(lambda c=c: preset.vsan(c, **(overrides or {})), span=CORNER_SPAN, outstanding=64,
                             seed=seed, **corners.run_times(quick)).with_columns(configuration=pl.lit(c))
        for c in preset.CONFIGURATIONS
    ]  # fmt: skip
    return pl.concat(frames).select("configuration", *corners.COLUMNS)


def destage_requirement(
    vms: int = 64,
    *,
    seed: int = 1,
    duration: float = 4.0,
    disciplines: tuple[str, ...] = ("elevator", "satf"),
) -> pl.DataFrame:
    """What destaging the hybrid write log asks of each 10K drive at ``vms`` VMs if each write were
    destaged on its own, at a random address (the log's address-ordered sweep does better: see
    :func:`destage_load`). Per hybrid configuration and drive command ordering (``disciplines``:
    ``elevator``, seek distance only, and ``satf``, rotational position ordering, the preset's):
    the published IOPS, the writes per second each capacity drive would take if every 4 KiB VM write
    were destaged on its own (IOPS x write share x copies / hosts / drives per host), and what the
    model's 10K drive sustains for 4 KiB random writes with the preset's ``drive_queue_depth`` commands queued
    over its share of the data (VMs x 7.5 GB x copies / hosts / drives). ``sustain_ratio`` < 1:
    block-by-block destaging could not keep up."""
    from storagelab.kernel import ClosedSource, Station
    from storagelab.kernel.simulation import simulate
    from storagelab.workloads import AccessSpec, SizeShare

    pub = published_iops().filter(pl.col("vms") == vms)
    rows = []
    for conf in preset.CONFIGURATIONS[:2]:  # the two hybrids
        p = preset.vsan(conf).params
        hosts, copies = int(p["hosts"].value), int(p["copies"].value)
        drives = int(p["capacity_devices_per_host"].value)
        iops = float(pub.filter(pl.col("configuration") == conf)["iops"][0])
        workload = vsan_iometer(vms=vms)
        write_share = 1 - workload.streams[0].spec.read_pct / 100
        span = int(workload.streams[0].span * copies / hosts / drives)
        need = iops * write_share * copies / hosts / drives
        spec = AccessSpec(name="destage", sizes=(SizeShare(size=4096, pct=100),), read_pct=0, random_pct=100,
                          align=4096)  # fmt: skip
        for discipline in disciplines:
            drive = Station("10K drive", p.device("capacity_device"), discipline=discipline)
            src = ClosedSource("destage", drive, spec, workers=int(p["drive_queue_depth"].value), span=span)
            res = simulate(drive, [src], duration=duration, warmup=1.0, seed=seed, progress=False)
            sustained = float(res.summary()["iops"][0])
            rows.append({"configuration": conf, "ordering": discipline, "published_iops": iops,
                         "writes_per_drive_needed": need, "drive_span_gb": span / 1e9, "drive_sustains": sustained,
                         "sustain_ratio": sustained / need})  # fmt: skip
    return pl.DataFrame(rows)


def _role_values(topo: Topology, res: SimulationResult, role: str, statistic: str) -> pl.Series:
    """``statistic`` of each of ``topo``'s components in ``role``, from ``res``."""
    return topo.role_stats(res, role, statistic)["value"]


def destage_load(
    vms: int = 64,
    *,
    quick: bool = True,
    seed: int = 1,
    overrides: dict[str, object] | None = None,
    orderings: tuple[str, ...] = ("satf", "elevator"),
) -> pl.DataFrame:
    """Where the hybrids' time goes at ``vms`` VMs under the study's protocol, with the write log
    destaging to the 10K drives: per configuration and drive command ordering (``orderings``, values of
    the preset parameter ``drive_ordering``: ``satf`` by access time, the preset's; ``elevator`` the
    LOOK elevator, seek distance only), the simulated IOPS, the
    utilisation of the host CPU cores (a stated per-IO cost on the datasheet cores) and of the 10K drives, each drive's read
    misses and destage writes per second, the mean time a drive takes per IO, the share of writes the
    log absorbed (overwrites of blocks it still held, which it does not destage), the writes the log held
    (congestion) and the share of IOs under 2 and 10 ms (means over the hosts and drives)."""
    rows = []
    for conf in preset.CONFIGURATIONS[:2]:  # the two hybrids
        for ordering in orderings:
            topo = preset.vsan(
                conf,
                **{**protocol_overrides(conf, vms, seed), "drive_ordering": ordering, **(overrides or {})},
            )
            res = topo.run(vsan_iometer(vms=vms), seed=seed, **_times(quick, vms))
            stat = functools.partial(_role_values, topo, res)

            elapsed = res.measured
            drives = stat("drives", "completed").len()
            destage = float(stat("write logs", "destage_ios").sum())
            drive_ios = float(stat("drives", "completed").sum())
            curve = res.service_level_curve((2, 10))
            under = dict(zip(curve["threshold_ms"], curve["share_under"], strict=True))
            rows.append({
                "configuration": conf, "ordering": ordering,
                "iops": float(res.summary()["iops"][0]),
                "host_cpu_utilisation": float(stat("host CPUs", "utilisation").mean()),
                "drive_utilisation": float(stat("drives", "utilisation").mean()),
                "drive_reads_per_s": (drive_ios - destage) / drives / elapsed,
                "drive_destage_writes_per_s": destage / drives / elapsed,
                "drive_ms_per_io": float(stat("drives", "mean_service_ms").mean()),
                "absorbed_writes_pct": 100 * float(stat("write logs", "coalesced_writes").sum())
                / float(stat("write logs", "writes").sum()),
                "held_writes": float(stat("write logs", "held_writes").sum()),
                "under_2ms_pct": 100 * under[2.0], "under_10ms_pct": 100 * under[10.0],
            })  # fmt: skip
    return pl.DataFrame(rows)


def all_flash_destage(
    vms: int = 64,
    *,
    quick: bool = True,
    seed: int = 1,
    replications: int = 2,
    capacity_devices: tuple[str, ...] = ("Intel DC S3500", "SATA SSD"),
) -> pl.DataFrame:
    """What destaging the all-flash write buffer costs at ``vms`` VMs, its P3700 read cache at the study's
    protocol hit ratio (that of the preset's S3500s, for both devices: the read misses reach the capacity
    SSDs): per capacity device preset (the preset's ``Intel DC S3500``; ``SATA SSD``, the S3700 figures the
    preset used before), the simulated IOPS, the utilisation of the host CPU cores and of the capacity SSDs, each SSD's reads and destage
    writes per second, the writes the log held, and the share of IOs under 2, 5 and 10 ms (means over
    ``replications`` runs and over the hosts and SSDs)."""
    conf, rows = "all-flash NVMe", []
    for device in capacity_devices:
        runs = []
        for r in range(replications):
            topo = preset.vsan(conf, capacity_device=device, **protocol_overrides(conf, vms, seed + r))
            res = topo.run(vsan_iometer(vms=vms), seed=seed + r, **_times(quick, vms))
            stat = functools.partial(_role_values, topo, res)
            ssds = stat("capacity SSDs", "completed").len()
            destage = float(stat("write logs", "destage_ios").sum())
            ssd_ios = float(stat("capacity SSDs", "completed").sum())
            curve = res.service_level_curve((2, 5, 10))
            under = dict(zip(curve["threshold_ms"], curve["share_under"], strict=True))
            runs.append({
                "iops": float(res.summary()["iops"][0]),
                "host_cpu_utilisation": float(stat("host CPUs", "utilisation").mean()),
                "ssd_utilisation": float(stat("capacity SSDs", "utilisation").mean()),
                "ssd_reads_per_s": (ssd_ios - destage) / ssds / res.measured,
                "ssd_destage_writes_per_s": destage / ssds / res.measured,
                "held_writes": float(stat("write logs", "held_writes").sum()),
                "under_2ms_pct": 100 * under[2.0], "under_5ms_pct": 100 * under[5.0],
                "under_10ms_pct": 100 * under[10.0],
            })  # fmt: skip
        rows.append({"capacity_device": device, **{k: sum(r[k] for r in runs) / len(runs) for k in runs[0]}})
    return pl.DataFrame(rows)


def ftt_write_time(
    configurations: list[str] | tuple[str, ...] = preset.CONFIGURATIONS,
    vms: int = 4,
    *,
    seed: int = 1,
    duration: float = 3.0,
    overrides: dict[str, object] | None = None,
) -> pl.DataFrame:
    """What failures-to-tolerate 1 costs a write (document: 'every write IO is to two hosts ... nearly
    doubling the write time'): per configuration, the mean read and write time (ms) at ``vms`` VMs (a light
    load: the caches warm) with one copy (FTT=0) and with the study's two, and the ratio of the write times.
    The copies are written in parallel, so the ratio is that of the slower of two copies' paths to one."""
    import dataclasses

    from storagelab.workloads.application import ApplicationWorkload

    w = vsan_iometer(vms=vms)
    w = ApplicationWorkload(w.name, (dataclasses.replace(w.streams[0], split_ops=True),), w.params)
    rows = []
    for conf in configurations:
        means = {}
        for copies in (1, 2):
            res = preset.vsan(conf, copies=copies, **(overrides or {})).run(w, seed=seed, duration=duration,
                                                                             warmup=0.3)  # fmt: skip
            means[copies] = {r["class"]: r["mean_ms"] for r in res.summary().iter_rows(named=True)}
        rows.append({
            "configuration": conf, "read_ms_ftt0": means[1]["iometer read"], "read_ms_ftt1": means[2]["iometer read"],
            "write_ms_ftt0": means[1]["iometer write"], "write_ms_ftt1": means[2]["iometer write"],
            "write_ratio": means[2]["iometer write"] / means[1]["iometer write"],
        })  # fmt: skip
    return pl.DataFrame(rows)
