"""The check of a fitted model: every held-back measurement predicted by simulating the model under the
same fio job (a closed loop at the job's IOs in flight, its read share, block size and pattern), with the
error per point and the share within tolerance.

Tolerances are the calibration's (:mod:`storagelab.calibration.claims`, "tolerances"): IOPS within
±15 %; a latency of 1 ms or more within ±20 % or ±1 ms, whichever is wider; a latency under 1 ms within
±20 % or one unit of its last stated digit, whichever is wider. fio states latencies in nanoseconds, so
that unit is 1 ns and a sub-millisecond latency is held to ±20 %. The rule is written here once for
measured points, in :func:`tolerance` (``calibration.claims.Point.tolerance`` reads its points'
``datasets/`` rows, which a measurement is not; the two could share this function if it moved down to
the calibration room).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import polars as pl

from storagelab.calibration import claims
from storagelab.measured.model import MeasuredFit, simulate_job

#: The metrics a check scores per held-back job and direction.
CHECKED = ("iops", "lat_mean")

#: The columns of a check table (:func:`predict`), so that a check of no rows still has them.
CHECK_SCHEMA = {
    "row_id": pl.String, "job": pl.String, "pattern": pl.String, "read_pct": pl.Int64, "block_size": pl.Int64,
    "outstanding": pl.Int64, "direction": pl.String, "metric": pl.String, "unit": pl.String,
    "measured": pl.Float64, "predicted": pl.Float64, "error": pl.Float64, "error_pct": pl.Float64,
    "tolerance": pl.Float64, "within": pl.Boolean,
}  # fmt: skip


def tolerance(metric: str, unit: str, value: float, digit: float = 0.0) -> float:
    """Allowed |predicted - measured| for a measured ``value`` in ``unit``: the calibration's rule
    (:func:`storagelab.calibration.claims.tolerance`), relative everywhere: rates ±15 %; latencies (unit
    ``us`` or ``ms``) ±20 % or ``digit`` (one unit of the last stated digit, in ``unit``), whichever is
    wider."""
    if unit not in ("IOPS", "MB/s", "us", "ms"):
        raise ValueError(f"no tolerance for metric {metric!r} in unit {unit!r}")
    return claims.tolerance(value, unit, fine=digit if unit in ("us", "ms") else None)


def predict(
    fitted: MeasuredFit,
    rows: pl.DataFrame,
    *,
    seed: int = 1,
    progress: Callable[[str], None] | None = None,
    by_direction: bool = False,
) -> pl.DataFrame:
    """Measured beside predicted for ``rows``' jobs and the :data:`CHECKED` metrics: one row per job,
    direction and metric, with ``error`` (predicted - measured), ``error_pct``, ``tolerance`` and
    ``within``; with the fit's run-to-run spread, the 80 % predictive interval (``pi_low``, ``pi_high``,
    ``covered``). ``by_direction``: simulated with reads and writes in separate batches (the alternative
    mechanism, for comparison)."""
    jobs = (
        rows.group_by("job", "pattern", "read_pct", "block_size", "outstanding")
        .agg(iops_total=pl.col("value").filter(pl.col("metric") == "iops").sum())
        .sort("read_pct", "block_size", "outstanding", "pattern", descending=[True, False, False, False])
    )
    out = []
    draws = fitted.spread.draws() if fitted.spread is not None else []
    drawn: list[dict] = [{} for _ in draws]  # per refit: job -> its predictions (the same seed as the fit's)
    for job in jobs.iter_rows(named=True):
        if progress:
            progress(job["job"])
        predicted = simulate_job(fitted.params, job, seed=seed, name=fitted.name, by_direction=by_direction)
        for k, refit in enumerate(draws):
            drawn[k][job["job"]] = simulate_job(refit.params, job, seed=seed, name=fitted.name)
        measured = rows.filter(pl.col("job") == job["job"], pl.col("metric").is_in(CHECKED))
        for r in measured.iter_rows(named=True):
            p = predicted.get(r["direction"], {}).get(r["metric"], math.nan)
            tol = tolerance(r["metric"], r["unit"], r["value"], digit=1e-3 if r["unit"] == "us" else 0.0)
            err = p - r["value"]
            out.append({
                "row_id": r["row_id"], "job": r["job"], "pattern": r["pattern"], "read_pct": r["read_pct"],
                "block_size": r["block_size"], "outstanding": r["outstanding"], "direction": r["direction"],
                "metric": r["metric"], "unit": r["unit"], "measured": r["value"], "predicted": p, "error": err,
                "error_pct": 100 * err / r["value"] if r["value"] else math.nan, "tolerance": tol,
                "within": bool(math.isfinite(p) and abs(err) <= tol),
            })  # fmt: skip
    table = pl.DataFrame(out, schema=CHECK_SCHEMA)
    if fitted.spread is None:
        return table
    from storagelab.measured.spread import predictive

    return predictive(table, fitted.spread, drawn)


def share_within(table: pl.DataFrame) -> dict[str, float]:
    """Points, points within tolerance and their share, overall and per metric; with predictive
    intervals, the points inside them (``covered``) and their share (``coverage``)."""
    out = {"points": table.height, "within": int(table["within"].sum())}
    out["share"] = out["within"] / out["points"] if out["points"] else math.nan
    for m in CHECKED:
        t = table.filter(metric=m)
        out[f"share_{m}"] = float(t["within"].mean()) if t.height else math.nan
    if "covered" in table.columns:  # the 80 % predictive intervals (storagelab.measured.spread)
        out["covered"] = int(table["covered"].sum())
        out["coverage"] = out["covered"] / out["points"] if out["points"] else math.nan
    return out


def misses_against_passes(table: pl.DataFrame, folder: str | Path, *, other_day: bool = True) -> pl.DataFrame:
    """The points of check ``table`` outside tolerance, each beside what else could have predicted it, from
    the dataset the table checks (``folder``):

    - ``pass_low``, ``pass_high``: the measured job's lowest and highest pass
      (:func:`storagelab.measured.spread.pass_ranges`; nulls without per-pass results), and
      ``inside_passes``, whether the prediction lies between them. Such a miss is no larger than the
      difference between two runs of the same job minutes apart: the measurement's own variation.
    - ``own_predicted``, ``own_within``: where ``table`` is another day's model on this dataset
      (``other_day``; False for the dataset's own ``check.csv``, whose own model is the table's) and the
      dataset's own check (``folder/check.csv``, its own model on its held-back points) or validation check
      by the same model as its ``check.csv`` holds the point, that prediction and whether it is within
      tolerance. A miss that the dataset's own model predicts is the change of the device between the
      days, which the two fits measure (their parameters side by side), not a mechanism either model lacks.
    - ``accounted``: ``"inside the job's own passes"``, ``"the day's own model within tolerance"`` or
      ``"neither"``, the first that applies."""
    from storagelab.measured.spread import pass_ranges

    misses = table.filter(~pl.col("within"))
    try:
        ranges = pass_ranges(folder)
    except FileNotFoundError:
        ranges = pl.DataFrame(
            schema={"row_id": pl.String, "pass_low": pl.Float64, "pass_high": pl.Float64, "passes": pl.UInt32}
        )
    own_path = Path(folder) / "check.csv"
    own = (
        pl.read_csv(own_path).select("row_id", own_predicted="predicted", own_within="within")
        if other_day and own_path.is_file()
        else pl.DataFrame(schema={"row_id": pl.String, "own_predicted": pl.Float64, "own_within": pl.Boolean})
    )
    joined = misses.join(ranges, on="row_id", how="left").join(own, on="row_id", how="left")
    inside = (pl.col("pass_low") <= pl.col("predicted")) & (pl.col("predicted") <= pl.col("pass_high"))
    return joined.with_columns(inside_passes=inside.fill_null(False)).with_columns(
        accounted=pl.when(pl.col("inside_passes"))
        .then(pl.lit("inside the job's own passes"))
        .when(pl.col("own_within").fill_null(False))
        .then(pl.lit("the day's own model within tolerance"))
        .otherwise(pl.lit("neither"))
    )


def unsteady_rows(rows: pl.DataFrame, folder: str | Path) -> pl.DataFrame:
    """The measured rows (of the :data:`CHECKED` metrics) one of whose passes lies farther from the kept
    median than the check's :func:`tolerance` of it: a single run of such a job could miss an exact model,
    so its check says less about the model than the others'. ``rows`` is the dataset (``measurements.csv``),
    ``folder`` the plan's per-pass results (:func:`storagelab.measured.spread.pass_ranges`; an empty table
    without them). Columns: ``row_id``, ``job``, ``metric``, ``unit``, ``value`` (the kept median),
    ``pass_low``, ``pass_high``, ``tolerance`` and ``worst``: the farther pass's distance from the median
    over the tolerance (above 1 for every row returned), largest first."""
    from storagelab.measured.spread import pass_ranges

    schema = {"row_id": pl.String, "job": pl.String, "metric": pl.String, "unit": pl.String, "value": pl.Float64,
              "pass_low": pl.Float64, "pass_high": pl.Float64, "tolerance": pl.Float64, "worst": pl.Float64}  # fmt: skip
    try:
        ranges = pass_ranges(folder)
    except FileNotFoundError:
        return pl.DataFrame(schema=schema)
    joined = rows.filter(pl.col("metric").is_in(CHECKED)).join(ranges, on="row_id", how="inner")
    out = []
    for r in joined.iter_rows(named=True):
        tol = tolerance(r["metric"], r["unit"], r["value"], digit=1e-3 if r["unit"] == "us" else 0.0)
        worst = max(r["value"] - r["pass_low"], r["pass_high"] - r["value"]) / tol
        if worst > 1:
            out.append({k: r[k] for k in schema if k in r} | {"tolerance": tol, "worst": worst})
    return pl.DataFrame(out, schema=schema).sort("worst", descending=True)


def simulated_rows(
    params: dict, jobs: list[dict], *, seed: int = 1, duration_s: float = 2.0, bin_s: float = 0.25
) -> pl.DataFrame:
    """Tidy rows (:data:`storagelab.measured.results.COLUMNS`) as fio would report them from a system
    that *is* the model with ``params``: per job (``job``, ``pattern``, ``read_pct``, ``block_size``,
    ``outstanding``) and direction, IOPS and MB/s with their standard deviation over ``bin_s`` bins,
    the mean latency and the median. For testing the fit on a known model."""
    from storagelab.kernel.simulation import simulate
    from storagelab.kernel.sources import ClosedSource
    from storagelab.measured.model import VOLUME, build_topology
    from storagelab.measured.results import SCHEMA
    from storagelab.workloads.access_spec import AccessSpec, SizeShare

    out = []
    for i, job in enumerate(jobs):
        topo = build_topology("synthetic", params)
        spec = AccessSpec(name=job["job"], sizes=(SizeShare(size=job["block_size"], pct=100),),
                          read_pct=job["read_pct"], random_pct=100.0 if job["pattern"] == "random" else 0.0,
                          align=4096, queue_depth=job["outstanding"])  # fmt: skip
        source = ClosedSource(job["job"], topo.volumes[VOLUME], spec, span=2**30)
        source.split_ops = True
        result = simulate(topo.volumes[VOLUME], [source], duration=duration_s + 0.25, warmup=0.25,
                          seed=seed + i, progress=False)  # fmt: skip
        rates = result.rates(bin_s)
        for row in result.summary().iter_rows(named=True):
            direction = row["class"].rsplit(" ", 1)[1]
            r = rates.filter(pl.col("class") == row["class"])
            base = {"job": job["job"], "pattern": job["pattern"], "read_pct": job["read_pct"],
                    "block_size": job["block_size"], "iodepth": job["outstanding"], "numjobs": 1,
                    "outstanding": job["outstanding"], "direction": direction, "ios": row["count"],
                    "runtime_s": duration_s, "source": "simulated"}  # fmt: skip
            values = {
                "iops": (row["iops"], float(r["iops"].std()), r.height, "IOPS"),
                "mb_s": (row["mb_per_s"], float(r["mb_per_s"].std()), r.height, "MB/s"),
                "lat_mean": (row["mean_ms"] * 1e3, None, None, "us"),
                "clat_p50": (row["p50_ms"] * 1e3, None, None, "us"),
            }
            for metric, (value, sd, n, unit) in values.items():
                out.append({**base, "row_id": f"{job['job']}/{direction}/{metric}", "metric": metric,
                            "value": value, "unit": unit, "stddev": sd, "samples": n})  # fmt: skip
    return pl.DataFrame(out, schema=SCHEMA)


def check_chart(table: pl.DataFrame, *, name: str = "measured-vs-predicted") -> object:
    """Measured (points) and predicted (lines) IOPS and mean latency against the IOs in flight, one
    panel per metric and read share, coloured by direction and block size; a held-back point within
    tolerance is filled, one outside it hollow. ``table``: :func:`predict`'s rows (random jobs)."""
    import altair as alt

    from storagelab import charts

    t = table.filter(pl.col("pattern") == "random").with_columns(
        series=pl.col("direction") + " " + (pl.col("block_size") // 1024).cast(pl.String) + " KiB",
        panel=pl.col("metric").replace({"iops": "IOPS", "lat_mean": "mean latency (us)"})
        + ", "
        + pl.col("read_pct").cast(pl.String)
        + " % read",
    )
    shown = t.select("panel", "series", "outstanding", "measured", "predicted", "error_pct", "within", "job")
    # the y axis is shared by a metric's measured points and predicted lines: one floor for both
    shown = charts.for_log_scale(shown, ["measured", "predicted"])
    shown = charts.for_log_scale(shown, ["outstanding"])
    data = charts.chart_data(shown).to_pandas()
    base = alt.Chart(data).encode(
        x=alt.X("outstanding:Q", title="IOs in flight (queue depth)", scale=alt.Scale(type="log", base=2)),
        color=alt.Color("series:N", title="direction, size"),
    )
    line = base.mark_line().encode(y=alt.Y("predicted:Q", title=None, scale=alt.Scale(type="log")))
    points = base.mark_point(size=60).encode(
        y="measured:Q",
        fill=alt.condition("datum.within", alt.Color("series:N"), alt.value("white")),
        tooltip=charts.with_clipped(
            shown, ["job", "series", "outstanding", "measured", "predicted", "error_pct", "within"]
        ),
    )
    return (
        alt.layer(line, points, data=data)
        .properties(width=230, height=170)
        .facet(facet=alt.Facet("panel:N", title=None), columns=4)
        .resolve_scale(y="independent")
        .properties(
            title=charts.titled(
                "Measured (points; hollow: outside tolerance) and predicted (lines)",
                charts.clipped_subtitle(shown, label="job"),
            ),
            name=name,
        )
    )


def by_kind(table: pl.DataFrame) -> pl.DataFrame:
    """Points within tolerance per kind of held-back job: ``read-only or write-only, between QD1 and
    saturation``, ``mixed reads and writes``, ``sequential``; per metric."""
    kind = (
        pl.when(pl.col("pattern") == "sequential")
        .then(pl.lit("sequential"))
        .when(pl.col("read_pct").is_in([0, 100]))
        .then(pl.lit("read-only or write-only, between QD1 and saturation"))
        .otherwise(pl.lit("mixed reads and writes"))
    )
    return (
        table.with_columns(kind=kind)
        .group_by("kind", "metric")
        .agg(
            points=pl.len(),
            within=pl.col("within").sum(),
            median_abs_error_pct=pl.col("error_pct").abs().median(),
        )
        .with_columns(share=pl.col("within") / pl.col("points"))
        .sort("kind", "metric")
    )


def summarize_checks(checks: list[tuple[str, str, str | Path]]) -> pl.DataFrame:
    """One row per committed check table ``(model fitted on, points checked, path)``: points, within
    tolerance and its share, per metric, for mixed jobs and for read-only or write-only ones (the
    sequential jobs in neither), the 80 % predictive intervals' coverage (NaN without them), and the misses
    and how many of them lie inside the measured job's own passes (:func:`misses_against_passes`, on the
    dataset in the table's folder)."""
    rows = []
    for model, points, path in checks:
        table = pl.read_csv(path)
        s = share_within(table)
        kinds = by_kind(table).group_by("kind").agg(pl.col("within").sum(), pl.col("points").sum())
        mixed = kinds.filter(kind="mixed reads and writes")
        pure = kinds.filter(~pl.col("kind").is_in(["mixed reads and writes", "sequential"]))
        misses = misses_against_passes(table, Path(path).parent, other_day=Path(path).name != "check.csv")
        rows.append({
            "model fitted on": model, "points checked": points, "points": s["points"], "within": s["within"],
            "share": s["share"], "share_iops": s["share_iops"], "share_lat_mean": s["share_lat_mean"],
            "share_mixed": float(mixed["within"].sum() / mixed["points"].sum()) if mixed.height else math.nan,
            "share_pure": float(pure["within"].sum() / pure["points"].sum()) if pure.height else math.nan,
            "coverage": s.get("coverage", math.nan),
            "misses": misses.height, "misses_inside_passes": int(misses["inside_passes"].sum()),
            "misses_own_model": int((misses["accounted"] == "the day's own model within tolerance").sum()),
        })  # fmt: skip
    return pl.DataFrame(rows)
