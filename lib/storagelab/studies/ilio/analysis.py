"""ILIO study analyses for its notebook: Tier-2 load on the EqualLogic as desktops scale out."""

from __future__ import annotations

import polars as pl

from storagelab.calibration.claims import published_value
from storagelab.studies.ilio import preset
from storagelab.studies.ilio.claims import tier2_iops
from storagelab.workloads import applications as apps


def scale_out(
    desktop_counts: list[int], *, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None
) -> pl.DataFrame:
    """Login VSI (+ 38 IOPS Iometer) desktops behind ILIO at each count: Tier-1 IOPS, the Tier-2 IOPS that
    reach the EqualLogic, and the array's mean latency for them, beside the 1,934 IOPS Iometer baseline."""
    rows = []
    for n in desktop_counts:
        w = apps.combine("Login VSI + Iometer", [
            apps.login_vsi(desktops=n, ramp=False, span=n * 4 * 10**9),
            apps.ilio_extra_writes(desktops=n, span=n * 32 * 10**9),
        ])  # fmt: skip
        res = preset.equallogic(ilio=True, **(overrides or {})).run(w, seed=seed, warmup=2.0, duration=8.0 if quick else 60.0)
        c = res.components()
        tier2 = tier2_iops(res)
        rows.append({
            "desktops": n, "tier1_iops": float(res.summary()["iops"].sum()), "tier2_iops": tier2,
            "drive_utilisation": float(c.filter(pl.col("component").str.starts_with("NL-SAS")
                                                & (pl.col("statistic") == "utilisation"))["value"].mean()),
            "baseline_iops": published_value("iom-eql-iops"),
        })  # fmt: skip
    return pl.DataFrame(rows)


#: The four corners' span: 1 TB of the EqualLogic volume.
CORNER_SPAN = 10**12


def four_corners(*, quick: bool = True, seed: int = 1, overrides: dict[str, object] | None = None) -> pl.DataFrame:
    """The EqualLogic PS6100E's four corners (:func:`storagelab.four_corners.four_corners`), without
    ILIO in front, 32 IOs outstanding."""
    from storagelab import four_corners as corners

    return corners.four_corners(lambda: preset.equallogic(**(overrides or {})), span=CORNER_SPAN, seed=seed,
                                **corners.run_times(quick))  # fmt: skip
