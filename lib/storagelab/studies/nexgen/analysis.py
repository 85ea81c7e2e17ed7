"""NexGen analyses for the study's notebook: what the boot storm does to OLTP and Exchange."""

from __future__ import annotations

import polars as pl

from storagelab.studies.nexgen import preset
from storagelab.studies.nexgen.workloads import BOOT_DURATION_S, boot_storm_workload, steady_workload


def windows(*, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None) -> pl.DataFrame:
    """Per workload class: IOPS and mean / 99th-percentile latency in the Login VSI steady state and at
    the boot-storm peak (QoS off), to show what the storm does to OLTP and Exchange."""
    frames = []
    for label, workload, t in (
        ("Login VSI steady state", steady_workload(), {"warmup": 3.0, "duration": 8.0 if quick else 60.0}),
        ("boot storm peak", boot_storm_workload(),
         {"warmup": BOOT_DURATION_S + 2, "duration": BOOT_DURATION_S + (6 if quick else 60)}),
    ):  # fmt: skip
        s = preset.nexgen(**(overrides or {})).run(workload, seed=seed, **t).summary()
        frames.append(s.select("class", "iops", "mean_ms", "p99_ms").with_columns(window=pl.lit(label)))
    return pl.concat(frames).select("window", "class", "iops", "mean_ms", "p99_ms")


#: The four corners' span per volume: 500 GB (the three volumes together within the 2.4 TB flash tier).
CORNER_SPAN = 500 * 10**9


def four_corners(*, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None) -> pl.DataFrame:
    """The N5's four corners (:func:`storagelab.four_corners.four_corners`) over its three volumes, 32 IOs
    outstanding per volume, QoS off."""
    from storagelab import four_corners as corners

    return corners.four_corners(lambda: preset.nexgen(**(overrides or {})), span=CORNER_SPAN, seed=seed,
                                **corners.run_times(quick))  # fmt: skip
