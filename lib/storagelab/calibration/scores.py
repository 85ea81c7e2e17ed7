"""The four scores of a probabilistic prediction, in study and out of study (issue 68, item 6).

Gneiting and Raftery (2007, "Strictly proper scoring rules, prediction, and estimation", JASA 102(477),
section 1) judge a probabilistic forecast by its *calibration* (its 80 % intervals hold the truth 80 % of
the time) under the condition of *sharpness* (the intervals as narrow as that allows). Here, per claim:

- **coverage**: whether the published value or band meets the claim's 80 % interval [low, high] (and the
  95 % one beside it), read as the claim's comparison states it: ``two-sided`` and ``just-over`` (a band
  X .. X + tolerance) when the band [published_low, published_high] intersects the interval; ``at-least``
  when ``high >= published_low`` (the model can reach the bound); ``at-most`` when ``low <=
  published_high``. A claim with several points is covered when all its points are; a point with no
  interval (NaN) is not covered (nothing leaves the denominator);
- **sharpness**: high80 / low80, a dimensionless factor (1: a single value); a claim's is the median over its
  points, and the score the median over claims with an interval;
- **error**: |ln(simulated / published)|, dimensionless, with ``simulated`` the model at its declared values
  (the calibration's ``simulated``, the envelope's ``model``) and ``published`` the geometric middle of the
  published band for ``two-sided`` and ``just-over``; for a bound, how far the value is on the wrong side
  of it (0 when the bound is met: a model that meets "under 1 ms" by a wide margin is not wrong). A claim's
  error is its worst point's (as its coverage and its +/-20 % pass are all its points'); a point that
  failed to simulate has an infinite error;
- beside them, **today's +/-20 % count**: the claims whose points all pass (calibration ``pass``, envelope
  ``within``).

Which claims: every claim whose published value is not one of the model's inputs. In study, every
calibration claim whose role is not ``derived`` (``predicted`` and ``fitted``: a fitted claim is predicted
by its fit redone without its rows); out of study, the envelope claims whose role is ``predicted``, and none
of a statement that has an ``unscorable`` claim. Each is scored twice: with the model's own interval
(``raw``: parameters and simulation noise, the ``low80`` .. ``high95`` columns) and with the discrepancy
added (:mod:`storagelab.calibration.discrepancy`: in study, each study's band learned on the other
studies only; out of study, the band learned on every in-study claim).
"""

from __future__ import annotations

import math

import altair as alt
import polars as pl

from storagelab.calibration.discrepancy import (
    PREDICTIVE,
    calibration_with_discrepancy,
    envelope_with_discrepancy,
)
from storagelab.charts import CLIPPED, chart_data, clipped_subtitle, for_log_scale, titled, with_clipped

#: The comparisons a point may be read by (as :data:`storagelab.calibration.claims.COMPARISONS`).
READINGS = ("two-sided", "at-least", "at-most", "just-over")
#: The two scopes, in the order they are reported.
SCOPES = ("in study", "out of study")
#: The two kinds of interval, in the order they are reported.
INTERVALS = ("raw", "with discrepancy")
#: Per kind of interval, the columns of its (low80, high80, low95, high95).
BOUNDS = {
    "raw": ("low80", "high80", "low95", "high95"),
    "with discrepancy": ("pred_low80", "pred_high80", "pred_low95", "pred_high95"),
}
#: The per-point columns :func:`points` gives (beside the coverage, sharpness and error columns).
POINT_COLUMNS = (
    "scope", "study", "claim", "point", "role", "reading", "unit", "published_low", "published_high",
    "simulated", "within_tolerance", "median", "low80", "high80", "low95", "high95",
    "pred_low80", "pred_high80", "pred_low95", "pred_high95",
)  # fmt: skip


def _covered(low: str, high: str) -> pl.Expr:
    """Whether the published value or band meets [low, high] as the point's reading states it (module
    docstring). A bound that is null or NaN covers nothing (polars orders NaN above every number, so the
    finiteness is checked first)."""
    lo, hi = pl.col(low), pl.col(high)
    band = (lo <= pl.col("published_high")) & (hi >= pl.col("published_low"))
    met = (
        pl.when(pl.col("reading") == "at-least")
        .then(hi >= pl.col("published_low"))
        .when(pl.col("reading") == "at-most")
        .then(lo <= pl.col("published_high"))
        .otherwise(band)
    )
    return (lo.is_finite() & hi.is_finite() & met).fill_null(False)


def _error() -> pl.Expr:
    """|ln(simulated / published)| per point (module docstring); infinite when nothing was simulated."""
    sim = pl.col("simulated").log()
    middle = 0.5 * (pl.col("published_low").log() + pl.col("published_high").log())
    err = (
        pl.when(pl.col("reading") == "at-least")
        .then(pl.max_horizontal(pl.col("published_low").log() - sim, pl.lit(0.0)))
        .when(pl.col("reading") == "at-most")
        .then(pl.max_horizontal(sim - pl.col("published_high").log(), pl.lit(0.0)))
        .otherwise((sim - middle).abs())
    )
    ok = pl.col("simulated").is_finite() & (pl.col("simulated") > 0)
    return pl.when(ok).then(err).otherwise(pl.lit(math.inf))


def _published_band(envelope: pl.DataFrame) -> pl.DataFrame:
    """The envelope with numeric ``published_low`` / ``published_high``: as given, else read from its
    ``published`` text ("100,000 to 150,000", "2,000,000")."""
    if {"published_low", "published_high"} <= set(envelope.columns):
        return envelope
    values = pl.col("published").str.replace_all(",", "").str.split(" to ").cast(pl.List(pl.Float64))
    return envelope.with_columns(published_low=values.list.min(), published_high=values.list.max())


def _check_readings(frame: pl.DataFrame, column: str) -> None:
    odd = sorted(set(frame[column].unique().to_list()) - set(READINGS))
    if odd:
        raise ValueError(f"unknown reading(s) {odd} in column {column!r} (known: {', '.join(READINGS)})")


def points(calibration: pl.DataFrame, envelope: pl.DataFrame) -> pl.DataFrame:
    """Every scored point, in study and out of study: :data:`POINT_COLUMNS` (bounds in the point's
    ``unit``), then per kind of interval (``raw``, ``disc``) ``covered80_*``, ``covered95_*`` (bool) and
    ``sharpness_*`` (high80 / low80), and ``error`` (module docstring). The intervals with discrepancy are
    computed here unless the tables already carry the ``pred_*`` columns (e.g. from raw samples)."""
    pred = [name for name, _ in PREDICTIVE]
    cal = calibration if set(pred) <= set(calibration.columns) else calibration_with_discrepancy(calibration)
    env = _published_band(envelope)
    env = env if set(pred) <= set(env.columns) else envelope_with_discrepancy(env, calibration)
    _check_readings(cal, "comparison")
    _check_readings(env, "reading")
    in_study = cal.filter(pl.col("role") != "derived").select(
        scope=pl.lit("in study"),
        study="study",
        claim="claim",
        point="point",
        role="role",
        reading="comparison",
        unit="unit",
        published_low="published_low",
        published_high="published_high",
        simulated="simulated",
        within_tolerance="pass",
        **{c: c for c in POINT_COLUMNS[11:]},
    )
    unscorable = (
        (pl.col("role") == "unscorable").any().over("statement")
        if "statement" in env.columns
        else pl.lit(False)
    )
    out_of_study = env.filter((pl.col("role") == "predicted") & ~unscorable).select(
        scope=pl.lit("out of study"),
        study=pl.lit("envelope"),
        claim="claim",
        point="claim",
        role="role",
        reading="reading",
        unit="unit",
        published_low="published_low",
        published_high="published_high",
        simulated="model",
        within_tolerance="within",
        **{c: c for c in POINT_COLUMNS[11:]},
    )
    both = pl.concat([in_study, out_of_study], how="vertical_relaxed")
    return both.with_columns(
        covered80_raw=_covered("low80", "high80"),
        covered95_raw=_covered("low95", "high95"),
        sharpness_raw=pl.col("high80") / pl.col("low80"),
        covered80_disc=_covered("pred_low80", "pred_high80"),
        covered95_disc=_covered("pred_low95", "pred_high95"),
        sharpness_disc=pl.col("pred_high80") / pl.col("pred_low80"),
        error=_error(),
    ).with_columns(pl.col("sharpness_raw", "sharpness_disc").fill_nan(None))


def claims(calibration: pl.DataFrame, envelope: pl.DataFrame) -> pl.DataFrame:
    """One row per scored claim (:func:`points` grouped by scope, study and claim): ``points``, and per
    kind of interval whether it is covered (all its points), its sharpness (median over its points),
    its ``error`` (its worst point's) and ``within_tolerance`` (all its points pass)."""
    return (
        points(calibration, envelope)
        .group_by("scope", "study", "claim", maintain_order=True)
        .agg(
            points=pl.len(),
            reading=pl.col("reading").unique(maintain_order=True).str.join(", "),
            covered80_raw=pl.col("covered80_raw").all(),
            covered95_raw=pl.col("covered95_raw").all(),
            sharpness_raw=pl.col("sharpness_raw").median(),
            covered80_disc=pl.col("covered80_disc").all(),
            covered95_disc=pl.col("covered95_disc").all(),
            sharpness_disc=pl.col("sharpness_disc").median(),
            error=pl.col("error").max(),
            within_tolerance=pl.col("within_tolerance").fill_null(False).all(),
        )
    )


def scores(calibration: pl.DataFrame, envelope: pl.DataFrame) -> pl.DataFrame:
    """The four scores (module docstring), one row per scope (``in study``, ``out of study``) and kind of
    interval (``raw``, ``with discrepancy``): ``claims``; ``covered80`` and ``coverage80`` (their share,
    0-1), the same for 95 %; ``sharpness80`` (median high80 / low80, a factor); ``median_error`` (median
    |ln(simulated / published)|, the same in both rows of a scope: the discrepancy moves no median);
    ``within_tolerance`` (today's +/-20 % count) and its share."""
    per_claim = claims(calibration, envelope)
    rows = []
    for scope in SCOPES:
        mine = per_claim.filter(pl.col("scope") == scope)
        n = mine.height
        for kind, tag in zip(INTERVALS, ("raw", "disc"), strict=True):
            covered80 = int(mine[f"covered80_{tag}"].sum())
            covered95 = int(mine[f"covered95_{tag}"].sum())
            within = int(mine["within_tolerance"].sum())
            rows.append({
                "scope": scope, "intervals": kind, "claims": n,
                "covered80": covered80, "coverage80": covered80 / n if n else math.nan,
                "covered95": covered95, "coverage95": covered95 / n if n else math.nan,
                "sharpness80": mine[f"sharpness_{tag}"].median() if n else math.nan,
                "median_error": mine["error"].median() if n else math.nan,
                "within_tolerance": within, "within_tolerance_share": within / n if n else math.nan,
            })  # fmt: skip
    schema = {
        "scope": pl.String, "intervals": pl.String, "claims": pl.Int64, "covered80": pl.Int64,
        "coverage80": pl.Float64, "covered95": pl.Int64, "coverage95": pl.Float64, "sharpness80": pl.Float64,
        "median_error": pl.Float64, "within_tolerance": pl.Int64, "within_tolerance_share": pl.Float64,
    }  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


#: The fields :func:`interval_chart` draws (its data's columns, besides :data:`~storagelab.charts.CLIPPED`).
CHART_FIELDS = (
    "label", "scope", "study", "claim", "reading", "unit", "intervals", "published_low", "published_high",
    "median", "low80", "high80", "low95", "high95", "published_low_pct", "published_high_pct",
    "median_pct", "low80_pct", "high80_pct", "low95_pct", "high95_pct", "covered80",
)  # fmt: skip


def interval_chart(
    calibration: pl.DataFrame,
    envelope: pl.DataFrame,
    *,
    discrepancy: bool = True,
    title: str = "Each claim's 80 % and 95 % intervals against its published value",
    name: str = "intervals",
) -> alt.LayerChart:
    """Each scored point's interval against its published value or band, on a log axis in % of the
    published reference (the geometric middle of the band; the bound itself for ``at-least`` /
    ``at-most``), as :func:`storagelab.charts.calibration` draws the replication intervals: the 95 %
    interval a thin rule, the 80 % a thick one, the median a dot, coloured in study / out of study; the
    published band a grey bar, its reference a grey dashed line at 100 %; the marker's shape says whether
    the 80 % interval covers it. ``discrepancy``: the intervals with discrepancy (else the model's own).
    Values are in each point's ``unit`` in the tooltip. A point with no interval (NaN: nothing on the log
    scale) is left out of the chart; it stays in :func:`scores`, as not covered."""
    kind = "with discrepancy" if discrepancy else "raw"
    low80, high80, low95, high95 = BOUNDS[kind]
    tag = "disc" if discrepancy else "raw"
    pts = points(calibration, envelope)
    reference = (
        pl.when(pl.col("reading") == "at-least")
        .then(pl.col("published_low"))
        .when(pl.col("reading") == "at-most")
        .then(pl.col("published_high"))
        .otherwise((pl.col("published_low") * pl.col("published_high")).sqrt())
    )
    df = pts.select(
        label=pl.when(pl.col("scope") == "in study")
        .then(pl.col("study") + ": " + pl.col("point"))
        .otherwise(pl.lit("envelope: ") + pl.col("claim")),
        scope="scope",
        study="study",
        claim="claim",
        reading="reading",
        unit="unit",
        intervals=pl.lit(kind),
        published_low="published_low",
        published_high="published_high",
        median="median",
        low80=low80,
        high80=high80,
        low95=low95,
        high95=high95,
        reference=reference,
        covered80=pl.when(f"covered80_{tag}").then(pl.lit("80 % covers")).otherwise(pl.lit("80 % misses")),
    )
    df = df.with_columns(
        (100 * pl.col(c) / pl.col("reference")).fill_nan(None).alias(f"{c}_pct")
        for c in ("published_low", "published_high", "median", "low80", "high80", "low95", "high95")
    ).filter(pl.col("reference") > 0)  # a reference that is not positive cannot be a % of itself
    shown = ["published_low_pct", "published_high_pct", "median_pct", "low80_pct", "high80_pct", "low95_pct", "high95_pct"]  # fmt: skip
    df = for_log_scale(df.drop_nulls(shown), shown, also=[100.0])
    data = chart_data(df.select(*CHART_FIELDS, *([CLIPPED] if CLIPPED in df.columns else [])))
    y = alt.Y("label:N", sort=None, title=None)
    x_title = f"% of the published value (intervals {kind}; log scale)"
    # the first two colours of Vega's category10, which the house charts use for their first two groups
    color = alt.Color(
        "scope:N", title=None, scale=alt.Scale(domain=list(SCOPES), range=["#1f77b4", "#ff7f0e"])
    )
    base = alt.Chart(data)
    # light grey (category20's 15th colour) behind the intervals, 10 px: half the default 20 px row
    published = base.mark_bar(color="#c7c7c7", height=10).encode(
        y=y,
        x=alt.X("published_low_pct:Q", title=x_title, scale=alt.Scale(type="log")),
        x2="published_high_pct:Q",
    )
    wide = base.mark_rule(strokeWidth=1).encode(y=y, x="low95_pct:Q", x2="high95_pct:Q", color=color)
    narrow = base.mark_rule(strokeWidth=4).encode(y=y, x="low80_pct:Q", x2="high80_pct:Q", color=color)
    dots = base.mark_point(filled=True, size=50, stroke="black", strokeWidth=0.5).encode(
        y=y,
        x="median_pct:Q",
        color=color,
        shape=alt.Shape(
            "covered80:N", title=None, scale=alt.Scale(domain=["80 % covers", "80 % misses"], range=["circle", "cross"])
        ),
        tooltip=with_clipped(df, ["label", "scope", "reading", "unit", "published_low", "published_high", "median",
                                  "low80", "high80", "low95", "high95", "intervals", "covered80"]),
    )  # fmt: skip
    ref = (
        alt.Chart(pl.DataFrame({"x": [100.0]})).mark_rule(color="#7f7f7f", strokeDash=[4, 3]).encode(x="x:Q")
    )
    return alt.layer(published, wide, narrow, dots, ref).properties(
        title=titled(title, clipped_subtitle(df, label="label")), width=460, name=name
    )
