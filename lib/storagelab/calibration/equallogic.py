"""Dell EqualLogic PS6100E (ILIO study): the Iometer baseline with the Atlantis VDI pattern, and the
Tier-2 load that reaches it from behind Atlantis ILIO during the boot storm and the Login VSI run."""

from __future__ import annotations

import math

import polars as pl
from scipy.optimize import brentq

from storagelab.architectures import equallogic as preset
from storagelab.calibration.base import Point, Scenario, _published
from storagelab.workloads import applications as apps

STUDY = "ilio"
DESKTOPS = 75
BOOT_DURATION_S = 12.0


def _read_latency_ms(hit: float, seed: int, quick: bool) -> float:
    topo = preset.equallogic(read_hit_ratio=hit)
    t = {"warmup": 2.0, "duration": 8.0} if quick else {"warmup": 5.0, "duration": 60.0}
    res = topo.run(apps.atlantis_vdi_iometer(), seed=seed, **t)
    return float(res.summary().filter(pl.col("class") == "atlantis vdi read")["mean_ms"][0])


def fit(seed: int = 1) -> float:
    """The controller read-hit ratio at which the simulated Iometer read latency equals the published
    1.0752 ms (root of a monotone function, Brent's method over [0.5, 1], common random numbers)."""
    target = float(_published()["iom-eql-lat"]["value"])
    return float(brentq(lambda h: _read_latency_ms(h, seed, False) - target, 0.5, 1.0, xtol=1e-3))


def power_on_interval_s() -> float:
    """Seconds between power-ons that make 75 desktops boot in the published 170 s (fitted point
    boot-time-75): (170 s - one 12 s boot) / 75."""
    return (float(_published()["boot-time-75"]["value"]) - BOOT_DURATION_S) / DESKTOPS


def scenarios() -> list[Scenario]:
    """The Iometer baseline, the Login VSI run and the boot storm (Tier 1 and Tier 2 IOPS)."""

    def baseline(seed: int, quick: bool) -> dict[str, float]:
        t = {"warmup": 2.0, "duration": 8.0} if quick else {"warmup": 5.0, "duration": 60.0}
        s = preset.equallogic().run(apps.atlantis_vdi_iometer(), seed=seed, **t).summary()
        read = s.filter(pl.col("class") == "atlantis vdi read")
        return {"iom-eql-iops": float(s["iops"].sum()), "iom-eql-lat": float(read["mean_ms"][0])}

    def tier_iops(workload: apps.ApplicationWorkload, seed: int, t: dict[str, float]) -> tuple[float, float]:
        res = preset.equallogic(ilio=True).run(workload, seed=seed, **t)
        tier1 = float(res.summary()["iops"].sum())
        c = res.components().filter(pl.col("component") == "Atlantis ILIO")
        stats = dict(zip(c["statistic"].to_list(), c["value"].to_list(), strict=True))
        return tier1, stats["ios"] * stats["passed_ratio"] / res.measured

    def login_vsi(seed: int, quick: bool) -> dict[str, float]:
        w = apps.combine("Login VSI + Iometer", [
            apps.login_vsi(desktops=DESKTOPS, ramp=False), apps.ilio_extra_writes(desktops=DESKTOPS),
        ])  # fmt: skip
        t1, t2 = tier_iops(w, seed, {"warmup": 2.0, "duration": 10.0 if quick else 60.0})
        return {"vsi-t1-peak": t1, "vsi-t2-peak": t2}

    def boot(seed: int, quick: bool) -> dict[str, float]:
        storm = apps.boot_storm(desktops=DESKTOPS, power_on_rate=1 / power_on_interval_s(),
                                boot_duration=BOOT_DURATION_S, span=32 * 10**9)  # fmt: skip
        t = {"warmup": BOOT_DURATION_S + 2, "duration": BOOT_DURATION_S + (6 if quick else 60)}
        _, t2 = tier_iops(apps.combine("boot storm", [storm]), seed, t)
        length = (DESKTOPS * power_on_interval_s() + BOOT_DURATION_S) if math.isfinite(t2) else math.nan
        return {"boot-t2-peak": t2, "boot-time-75": length}

    return [
        Scenario(
            STUDY,
            "EqualLogic Iometer baseline (Atlantis VDI pattern)",
            (
                Point(STUDY, "iom-eql-lat", "Iometer read latency on the EqualLogic (ms)"),
                Point(STUDY, "iom-eql-iops", "Iometer IOPS on the EqualLogic"),
            ),
            baseline,
        ),
        Scenario(
            STUDY,
            "Login VSI heavy + 38 IOPS Iometer, 75 desktops on ILIO",
            (
                Point(
                    STUDY,
                    "vsi-t1-peak",
                    "Tier-1 (ILIO) IOPS, Login VSI run",
                    note="Login VSI IOPS per desktop from the NexGen study (10, medium); published value is a peak",
                ),
                Point(
                    STUDY,
                    "vsi-t2-peak",
                    "Tier-2 (EqualLogic) IOPS, Login VSI run",
                    note="ILIO passes the vendor-claimed ~5 % unique IO; published value is a peak",
                ),
            ),
            login_vsi,
        ),
        Scenario(
            STUDY,
            "boot storm, 75 desktops on ILIO",
            (
                Point(
                    STUDY,
                    "boot-t2-peak",
                    "Tier-2 (EqualLogic) IOPS at the boot-storm peak",
                    note="boot IOs per desktop derived from this study's Tier-1 peak, so this tests the 5 % claim",
                ),
                Point(
                    STUDY,
                    "boot-time-75",
                    "boot storm length, 75 desktops (s)",
                    note="open loop: the power-on interval is fitted on it",
                ),
            ),
            boot,
        ),
    ]


FITTED_ON: dict[str, tuple[str, ...]] = {**preset.FITTED_ON, "power_on_interval": ("boot-time-75",)}


def scale_out(desktop_counts: list[int], *, quick: bool = True, seed: int = 1) -> pl.DataFrame:
    """Login VSI (+ 38 IOPS Iometer) desktops behind ILIO at each count: Tier-1 IOPS, the Tier-2 IOPS that
    reach the EqualLogic, and the array's mean latency for them, beside the 1,934 IOPS Iometer baseline."""
    rows = []
    for n in desktop_counts:
        w = apps.combine("Login VSI + Iometer", [
            apps.login_vsi(desktops=n, ramp=False, span=n * 4 * 10**9),
            apps.ilio_extra_writes(desktops=n, span=n * 32 * 10**9),
        ])  # fmt: skip
        res = preset.equallogic(ilio=True).run(w, seed=seed, warmup=2.0, duration=8.0 if quick else 60.0)
        c = res.components()
        st = {(a, b): v for a, b, v in c.select("component", "statistic", "value").iter_rows()}
        tier2 = st[("Atlantis ILIO", "ios")] * st[("Atlantis ILIO", "passed_ratio")] / res.measured
        rows.append({
            "desktops": n, "tier1_iops": float(res.summary()["iops"].sum()), "tier2_iops": tier2,
            "drive_utilisation": float(c.filter(pl.col("component").str.starts_with("NL-SAS")
                                                & (pl.col("statistic") == "utilisation"))["value"].mean()),
            "baseline_iops": float(_published()["iom-eql-iops"]["value"]),
        })  # fmt: skip
    return pl.DataFrame(rows)
