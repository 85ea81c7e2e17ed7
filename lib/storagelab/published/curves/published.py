"""The curves fitted to the source studies' published points, selected from :mod:`storagelab.published.datasets`.

- Virtual SAN: throughput against VM count per configuration (closed system, MVA), and the
  service-level curve per configuration and VM count (lognormal or Weibull);
- DS5020: Jetstress throughput against tile count (Table 2, closed system) and Jetstress database read
  latency against throughput (Table 2, open single-queue law).

Only ``measured`` rows are fitted. A series with too few points is not fitted: it is listed in
:attr:`CurveSet.skipped` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from storagelab.published.curves.base import CurveFit, InsufficientData
from storagelab.published.curves.closed_system import fit_closed_system
from storagelab.published.curves.response_time import fit_response_time
from storagelab.published.curves.service_level import Distribution, fit_service_level

VSAN_WORKLOAD = "Iometer 4K 70/30 random QD1"


@dataclass
class CurveSet:
    """Fitted curves grouped by family (``vsan_throughput``, ``vsan_service_level``, ...)."""

    families: dict[str, dict[str, CurveFit]] = field(default_factory=dict)
    skipped_rows: list[dict] = field(default_factory=list)

    def add(self, family: str, key: str, fit: CurveFit) -> None:
        self.families.setdefault(family, {})[key] = fit

    def skip(self, family: str, key: str, reason: str, points: int) -> None:
        self.skipped_rows.append({"family": family, "series": key, "points": points, "reason": reason})

    def fits(self, family: str | None = None) -> list[CurveFit]:
        """All fits, or those of one family, in insertion order."""
        fams = [family] if family else list(self.families)
        return [f for fam in fams for f in self.families.get(fam, {}).values()]

    @property
    def skipped(self) -> pl.DataFrame:
        """Series that were not fitted, with the reason."""
        schema = {"family": pl.String, "series": pl.String, "points": pl.Int64, "reason": pl.String}
        return pl.DataFrame(self.skipped_rows, schema=schema)

    def summary(self) -> pl.DataFrame:
        """One row per fit: family, form, points, dof, relative RMSE, worst residual, caveats."""
        return pl.concat(
            [
                f.summary().with_columns(family=pl.lit(fam))
                for fam, fs in self.families.items()
                for f in fs.values()
            ]
        ).select("family", pl.exclude("family"))

    def residuals(self, family: str | None = None) -> pl.DataFrame:
        """Every published point beside its fitted value, for every fit."""
        return pl.concat(
            [
                f.points.with_columns(curve=pl.lit(f.name), x_label=pl.lit(f.x_name), unit=pl.lit(f.y_unit))
                for f in self.fits(family)
            ]
        )

    def parameters(self, family: str | None = None) -> pl.DataFrame:
        """Every fitted parameter with its confidence interval."""
        return pl.concat([f.params_frame() for f in self.fits(family)])


def _measured(df: pl.DataFrame, **eq: object) -> pl.DataFrame:
    return df.filter(pl.col("kind") == "measured", **eq)


def _fit_or_skip(
    cs: CurveSet, family: str, key: str, rows: pl.DataFrame, fit: Callable[[], CurveFit]
) -> None:
    """Fit a series, or record why it cannot be fitted; note when its points are bounds, not values."""
    try:
        result = fit()
    except InsufficientData as err:
        cs.skip(family, key, str(err).split(": ", 1)[-1], rows.height)
        return
    inexact = sorted(set(rows["qualifier"]) - {"exact"})
    if inexact:
        result.notes.append(
            f"published values qualified as {', '.join(inexact)} ('over N', 'about N'): fitted as stated"
        )
    if "conflict_group" in rows.columns:
        groups = sorted(set(rows["conflict_group"].drop_nulls()))
        if groups:
            result.notes.append(f"both sides of conflict(s) {', '.join(groups)} are fitted")
    cs.add(family, key, result)


def fit_vsan(df: pl.DataFrame, cs: CurveSet, *, confidence: float, distribution: Distribution) -> None:
    """Virtual SAN throughput-vs-VMs and service-level fits (rows of ``study == 'vsan'``)."""
    vsan = df.filter(study="vsan", workload=VSAN_WORKLOAD)
    iops = _measured(vsan, metric="iops").filter(pl.col("vm_count").is_not_null()).sort("vm_count")
    for (config,), g in iops.group_by("configuration", maintain_order=True):
        _fit_or_skip(
            cs,
            "vsan_throughput",
            config,
            g,
            lambda g=g, config=config: fit_closed_system(
                g["vm_count"],
                g["value"],
                name=f"{config}",
                row_ids=g["row_id"].to_list(),
                population_name="VMs",
                confidence=confidence,
            ),
        )
    shares = _measured(vsan, metric="share_under_threshold").filter(pl.col("vm_count").is_not_null())
    for (config, vms), g in shares.sort("configuration", "vm_count", "threshold_ms").group_by(
        "configuration", "vm_count", maintain_order=True
    ):
        key = f"{config} · {vms} VMs"
        _fit_or_skip(
            cs,
            "vsan_service_level",
            key,
            g,
            lambda g=g, key=key: fit_service_level(
                g["threshold_ms"],
                g["value"],
                name=key,
                distribution=distribution,
                row_ids=g["row_id"].to_list(),
                confidence=confidence,
            ),
        )


def fit_ds5020(df: pl.DataFrame, cs: CurveSet, *, confidence: float) -> None:
    """DS5020 Jetstress (Table 2) throughput-vs-tiles and response-time-vs-throughput fits."""
    t2 = _measured(df.filter(study="ds5020", workload="Jetstress")).filter(
        pl.col("source_section").str.contains("Table 2"), pl.col("tile_count").is_not_null()
    )
    iops = t2.filter(metric="iops").sort("tile_count")
    lat = t2.filter(metric="latency_read_mean").sort("tile_count")
    _fit_or_skip(
        cs,
        "ds5020_throughput",
        "Jetstress",
        iops,
        lambda: fit_closed_system(
            iops["tile_count"],
            iops["value"],
            name="Jetstress (Table 2)",
            row_ids=iops["row_id"].to_list(),
            population_name="tiles",
            confidence=confidence,
        ),
    )
    joined = iops.select("tile_count", x="value").join(
        lat.select("tile_count", "row_id", "qualifier", r="si_value"), on="tile_count", how="inner"
    )
    _fit_or_skip(
        cs,
        "ds5020_response_time",
        "Jetstress",
        joined,
        lambda: fit_response_time(
            joined["x"],
            joined["r"] * 1e3,
            name="Jetstress DB read (Table 2)",
            row_ids=joined["row_id"].to_list(),
            confidence=confidence,
        ),
    )


def fit_published(
    df: pl.DataFrame, *, confidence: float = 0.95, distribution: Distribution = "lognormal"
) -> CurveSet:
    """Fit every published-curve family to the loaded datasets (see module docs)."""
    cs = CurveSet()
    fit_vsan(df, cs, confidence=confidence, distribution=distribution)
    fit_ds5020(df, cs, confidence=confidence)
    return cs


def vsan_littles_law_check(df: pl.DataFrame, cs: CurveSet) -> pl.DataFrame:
    """Cross-check two independent Virtual SAN tables through Little's law for QD1 workers.

    With ``N`` workers each keeping one IO outstanding, ``X = N / R``: the mean latency ``R`` of the
    fitted service-level curve at ``N`` VMs implies a throughput, to set beside the published IOPS
    (and the throughput curve's value at ``N``). Agreement means the two tables describe one system.
    """
    tp = cs.families.get("vsan_throughput", {})
    rows = []
    for fit in cs.fits("vsan_service_level"):
        config, vms = fit.name.split(" · ")
        n = int(vms.split()[0])
        mean = next(p for p in fit.parameters if p.name == "mean")
        published = df.filter(study="vsan", metric="iops", configuration=config, vm_count=n, kind="measured")
        curve = tp.get(config)
        at_n = curve.predict([n]).row(0, named=True) if curve else None
        # A curve through exactly two points says nothing about its tail, nor therefore its mean.
        ok = fit.has_intervals and np.isfinite([mean.lower, mean.upper]).all()
        pub = published["value"][0] if published.height else None
        lo = n / (mean.upper * 1e-3) if ok else None
        hi = n / (mean.lower * 1e-3) if ok else None
        rows.append(
            {
                "configuration": config,
                "vm_count": n,
                "fit_dof": fit.dof,
                "mean_latency_ms": mean.estimate if ok else None,
                "iops_from_latency": n / (mean.estimate * 1e-3) if ok else None,
                "iops_from_latency_lower": lo,
                "iops_from_latency_upper": hi,
                "iops_published": pub,
                "iops_throughput_curve": at_n["fit"] if at_n else None,
                "published_within_interval": (lo <= pub <= hi) if ok and pub is not None else None,
            }
        )
    return pl.DataFrame(rows, schema_overrides={"published_within_interval": pl.Boolean}).sort(
        "configuration", "vm_count"
    )
