"""NexGen N5 scenario 1 with QoS off: OLTP (DVD Store) and Exchange (LoadGen) running while 600 desktops
boot and then run Login VSI. Simulated in two windows of the 90-minute test: the boot storm at its peak
and the Login VSI steady state."""

from __future__ import annotations

import math

import polars as pl

from storagelab.architectures import nexgen as preset
from storagelab.calibration.base import Point, Scenario
from storagelab.workloads import applications as apps

STUDY = "nexgen"
BOOT_DURATION_S = 12.0
IOS_PER_ORDER = 15


def _base() -> list[apps.ApplicationWorkload]:
    return [apps.dvd_store(ios_per_order=IOS_PER_ORDER), apps.loadgen_outlook_200()]


def boot_storm_workload() -> apps.ApplicationWorkload:
    """OLTP + Exchange + the 600-desktop boot storm (broker interval as fitted)."""
    storm = apps.boot_storm(
        desktops=600, power_on_rate=1 / preset.FITTED_POWER_ON_INTERVAL_S, boot_duration=BOOT_DURATION_S
    )
    return apps.combine("boot storm window", [*_base(), storm])


def steady_workload() -> apps.ApplicationWorkload:
    """OLTP + Exchange + 600 Login VSI desktops at steady state."""
    return apps.combine("Login VSI window", [*_base(), apps.login_vsi(desktops=600, ramp=False)])


def storm_length_s() -> float:
    """Boot storm length (s) of the generator: desktops x power-on interval + one boot."""
    return 600 * preset.FITTED_POWER_ON_INTERVAL_S + BOOT_DURATION_S


def scenarios() -> list[Scenario]:
    """The storm window (burst IOPS, storm length) and the steady window (sustained IOPS, OPM)."""

    def storm(seed: int, quick: bool) -> dict[str, float]:
        # the storm holds its peak from one boot after the start until the last power-on
        t = {"warmup": BOOT_DURATION_S + 2, "duration": BOOT_DURATION_S + (4 if quick else 30)}
        res = preset.nexgen().run(boot_storm_workload(), seed=seed, **t)
        total = float(res.summary()["iops"].sum())
        util = res.components().filter(pl.col("statistic") == "utilisation")["value"].max()
        # open loop: the storm lasts as scheduled if nothing on the path is saturated
        length = storm_length_s() / 60 if util is not None and util < 0.98 else math.nan
        return {"s1-iops-burst": total, "s1-boot-time": length}

    def steady(seed: int, quick: bool) -> dict[str, float]:
        t = {"warmup": 3.0, "duration": 8.0} if quick else {"warmup": 10.0, "duration": 70.0}
        res = preset.nexgen().run(steady_workload(), seed=seed, **t)
        s = res.summary()
        oltp = float(s.filter(pl.col("class") == "oltp")["iops"].sum())
        return {"s1-iops-sustained": float(s["iops"].sum()), "s1-opm": oltp * 60 / IOS_PER_ORDER}

    return [
        Scenario(
            STUDY,
            "scenario 1: boot storm at its peak",
            (
                Point(
                    STUDY,
                    "s1-iops-burst",
                    "IOPS at the boot-storm peak (OLTP + Exchange + boot)",
                    "at-least",
                    "published as 'above 20,000'; boot IOs per desktop derived from the ILIO study",
                ),
                Point(
                    STUDY,
                    "s1-boot-time",
                    "boot storm length (min)",
                    "two-sided",
                    "open loop: the schedule's length while the array keeps up; the power-on interval is fitted on it",
                ),
            ),
            storm,
        ),
        Scenario(
            STUDY,
            "scenario 1: Login VSI steady state",
            (
                Point(
                    STUDY,
                    "s1-iops-sustained",
                    "sustained IOPS (OLTP + Exchange + 600 Login VSI desktops)",
                    "at-least",
                    "published as a sustained level 'of about 6,000' or more",
                ),
                Point(
                    STUDY,
                    "s1-opm",
                    "DVD Store orders per minute",
                    "two-sided",
                    f"OPM = OLTP IOPS x 60 / {IOS_PER_ORDER} (IOs per order derived from scenario 2)",
                ),
            ),
            steady,
        ),
    ]


FITTED_ON: dict[str, tuple[str, ...]] = dict(preset.FITTED_ON)


def windows(*, quick: bool = True, seed: int = 1) -> pl.DataFrame:
    """Per workload class: IOPS and mean / 99th-percentile latency in the Login VSI steady state and at
    the boot-storm peak (QoS off), to show what the storm does to OLTP and Exchange."""
    frames = []
    for label, workload, t in (
        ("Login VSI steady state", steady_workload(), {"warmup": 3.0, "duration": 8.0 if quick else 60.0}),
        ("boot storm peak", boot_storm_workload(),
         {"warmup": BOOT_DURATION_S + 2, "duration": BOOT_DURATION_S + (6 if quick else 60)}),
    ):  # fmt: skip
        s = preset.nexgen().run(workload, seed=seed, **t).summary()
        frames.append(s.select("class", "iops", "mean_ms", "p99_ms").with_columns(window=pl.lit(label)))
    return pl.concat(frames).select("window", "class", "iops", "mean_ms", "p99_ms")
