"""NexGen analyses for the study's notebook: what the boot storm does to OLTP and Exchange."""

from __future__ import annotations

import polars as pl

from storagelab.studies.nexgen import preset
from storagelab.studies.nexgen.workloads import BOOT_DURATION_S, boot_storm_workload, steady_workload


def windows_and_utilisation(
    *, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two frames from the same runs: per workload class, IOPS and mean / 99th-percentile latency in the
    Login VSI steady state and at the boot-storm peak (QoS off), to show what the storm does to OLTP and
    Exchange; and per window, the utilisation of the ports, storage processors and flash units (the
    resources the classes share)."""
    frames, util = [], []
    for label, workload, t in (
        ("Login VSI steady state", steady_workload(), {"warmup": 3.0, "duration": 8.0 if quick else 60.0}),
        ("boot storm peak", boot_storm_workload(),
         {"warmup": BOOT_DURATION_S + 2, "duration": BOOT_DURATION_S + (6 if quick else 60)}),
    ):  # fmt: skip
        res = preset.nexgen(**(overrides or {})).run(workload, seed=seed, **t)
        frames.append(res.summary().select("class", "iops", "mean_ms", "p99_ms").with_columns(window=pl.lit(label)))
        u = res.components().filter(
            (pl.col("statistic") == "utilisation")
            & pl.col("component").str.contains("port|processor|ioMemory flash$")
        )
        util.append(u.select("component", utilisation=pl.col("value")).with_columns(window=pl.lit(label)))
    return (
        pl.concat(frames).select("window", "class", "iops", "mean_ms", "p99_ms"),
        pl.concat(util).pivot(on="window", index="component", values="utilisation"),
    )


def windows(*, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None) -> pl.DataFrame:
    """The first frame of :func:`windows_and_utilisation`."""
    return windows_and_utilisation(quick=quick, seed=seed, overrides=overrides)[0]

#: The four corners' span per volume: 500 GB (the three volumes together within the 2.4 TB flash tier).
CORNER_SPAN = 500 * 10**9


def four_corners(*, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None) -> pl.DataFrame:
    """The N5's four corners (:func:`storagelab.four_corners.four_corners`) over its three volumes, 32 IOs
    outstanding per volume, QoS off."""
    from storagelab import four_corners as corners

    return corners.four_corners(lambda: preset.nexgen(**(overrides or {})), span=CORNER_SPAN, seed=seed,
                                **corners.run_times(quick))  # fmt: skip
