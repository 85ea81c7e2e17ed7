"""ILIO study analyses for its notebook: Tier-2 load on the EqualLogic as desktops scale out."""

from __future__ import annotations

import math

import polars as pl

from storagelab.calibration.claims import published_value
from storagelab.studies.ilio import preset
from storagelab.studies.ilio.claims import tier1_iops, tier2_iops
from storagelab.studies.ilio.workloads import DESKTOPS, ilio_extra_writes, login_vsi_run

#: Desktops per host (each host runs its own ILIO VM): the study ran 75 sessions on one host.
DESKTOPS_PER_HOST = DESKTOPS


def scale_out(
    desktop_counts: list[int],
    *,
    quick: bool = True,
    seed: int = 1,
    overrides: dict[str, object] | None = None,
) -> pl.DataFrame:
    """Login VSI (+ 38 IOPS Iometer) desktops behind ILIO at each count, 75 per host (one ILIO VM each):
    Tier-1 IOPS (what the desktops send to ILIO), the Tier-2 IOPS that reach the EqualLogic (ILIO's
    destage and the desktops' user data and infrastructure IO, which scale with the desktops), the
    drives' utilisation, beside the 1,934 IOPS Iometer baseline."""
    rows = []
    for n in desktop_counts:
        w = login_vsi_run(n)
        hosts = math.ceil(n / DESKTOPS_PER_HOST)
        topo = preset.equallogic(ilio=True, **{"ilio_hosts": hosts, **(overrides or {})})
        res = topo.run(w, seed=seed, warmup=1.0, duration=5.0 if quick else 60.0)
        tier2 = tier2_iops(res, topo)
        rows.append({
            "desktops": n, "hosts": hosts, "tier1_iops": tier1_iops(res), "tier2_iops": tier2,
            "drive_utilisation": float(topo.role_stats(res, "drives", "utilisation")["value"].mean()),
            "baseline_iops": published_value("iom-eql-iops"),
        })  # fmt: skip
    return pl.DataFrame(rows)


#: The four corners' span: 1 TB of the EqualLogic volume.
CORNER_SPAN = 10**12


def four_corners(
    *, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None
) -> pl.DataFrame:
    """The EqualLogic PS6100E's four corners (:func:`storagelab.analysis.four_corners.four_corners`), without
    ILIO in front, 32 IOs outstanding."""
    from storagelab.analysis import four_corners as corners

    return corners.four_corners(lambda: preset.equallogic(**(overrides or {})), span=CORNER_SPAN, seed=seed,
                                **corners.run_times(quick))  # fmt: skip


def reduction_sweep(
    *,
    unique_shares: list[float],
    ram_gb: list[float],
    desktops: int = DESKTOPS,
    quick: bool = True,
    seed: int = 1,
    overrides: dict[str, object] | None = None,
) -> pl.DataFrame:
    """What reaches the EqualLogic from ``desktops`` Login VSI desktops behind ILIO (75 per host) as one
    thing changes at a time from the preset: the unique share of the desktops' content (%), the RAM of
    each ILIO VM (GB), and the write mix (with and without the 38 extra Iometer write IOPS per desktop).
    One row per run: what was changed and to what, Tier-1 and Tier-2 IOPS, Tier-2 MB/s, the IOPS
    reduction (%), the drives' utilisation and the RAM ILIO used per host (GB)."""
    hosts = math.ceil(desktops / DESKTOPS_PER_HOST)
    runs = [("unique share (%)", "ilio_unique_share", v, True) for v in unique_shares]
    runs += [("ILIO RAM per host (GB)", "ilio_ram", v, True) for v in ram_gb]
    runs += [("extra Iometer writes (0: off, 1: on)", None, v, bool(v)) for v in (1.0, 0.0)]
    rows = []
    for axis, key, value, extra in runs:
        o = {"ilio_hosts": hosts, **(overrides or {})}
        if key is not None:
            o[key] = (value, "GB") if key == "ilio_ram" else value
        topo = preset.equallogic(ilio=True, **o)
        res = topo.run(
            login_vsi_run(desktops, extra_writes=extra),
            seed=seed,
            warmup=1.0,
            duration=4.0 if quick else 30.0,
        )
        t1, t2 = tier1_iops(res), tier2_iops(res, topo)
        link = topo.role_stats(res, "link", "mb_per_s")["value"][0]
        drives = topo.role_stats(res, "drives", "utilisation")
        memory = topo.role_stats(res, "ILIO", "memory_gb")
        rows.append({
            "axis": axis, "value": float(value), "desktops": desktops, "tier1_iops": t1, "tier2_iops": t2,
            "tier2_mb_s": float(link), "reduction_pct": 100 * (1 - t2 / t1),
            "drive_utilisation": float(drives["value"].mean()), "ram_used_gb": float(memory["value"].mean()),
        })  # fmt: skip
    return pl.DataFrame(rows)


def capacity_per_desktop(
    diverged_shares: list[float], desktop_counts: list[int], **overrides: object
) -> pl.DataFrame:
    """Array capacity per desktop (GB) from the content model's arithmetic, not a simulation: the shared
    image stored once, compressed, plus each desktop's own data, compressed. A desktop holds ``D`` =
    ``ilio_desktop_data`` (16.2 GB), of which a share ``d`` (``diverged_shares``, %: a share of the
    capacity, not ILIO's 5 % unique share of the IO) is its own and the rest the image:
    D / ratio x ((1 - d) / desktops + d)."""
    p = preset.equallogic(ilio=True, **overrides).params
    data_gb, ratio = p["ilio_desktop_data"].si / 1e9, p["ilio_compression"].value
    return pl.DataFrame(
        [{"diverged_share_pct": s, "desktops": n,
          "capacity_per_desktop_gb": data_gb / ratio * ((1 - s / 100) / n + s / 100)}
         for s in diverged_shares for n in desktop_counts]
    )  # fmt: skip


def extra_write_rate() -> pl.DataFrame:
    """The study's extra Iometer writes per desktop (IOPS): what the access specification allows with
    the burst delay taken as written (3 IOs per 70 ms, with IOs taking no time), what it gives when the
    delay ends on a tick of the desktop's Windows timer (a burst then repeats every whole number of
    ticks), and what the study states. IOs are taken to take no time: on ILIO they take under a
    millisecond, far less than the 8 ms a burst has before its next tick."""
    w = ilio_extra_writes(desktops=1)
    think = w.streams[0].think
    n, delay, tick = think.burst_length, think.delay, think.timer_tick
    return pl.DataFrame({
        "extra_writes": ["access specification, delay as written", f"delay ending on a {tick * 1e3:g} ms timer tick",
                         "study: 'a further 38 random write IOPs per session'"],
        "iops_per_desktop": [n / delay, n / (math.ceil(delay / tick) * tick), w.params["target_iops_per_desktop"].value],
    })  # fmt: skip
