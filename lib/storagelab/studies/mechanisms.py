"""The mechanisms behind the round-3 misses (issue 66), each built from what its source document states,
and its effect on every claim of its study, whether it helped or hurt.

Each study's table (``notebooks/mechanisms/<study>.csv``) was written by the engineer who built the
mechanisms, from quick calibration runs of that study (``storagelab calibrate --study <study> --quick``, seed 1)
before the first mechanism and after each one, cumulatively: one row per point and mechanism, with the
simulated value before and after that mechanism and the reason it moved (or did not). The committed run
(``notebooks/calibration-quick.csv``) holds the final values; :mod:`storagelab.studies.recount` gives each
claim's reason beside the round-3 run.
"""

from __future__ import annotations

from pathlib import Path

import altair as alt
import polars as pl

#: A mechanism table's columns: the claim and point (as in the calibration table), the published value (in
#: the point's unit), the simulated value before and after the mechanism, the mechanism, and why it moved.
COLUMNS = ("claim", "point", "published", "before", "after", "mechanism", "reason")


def load(folder: str | Path) -> pl.DataFrame:
    """Every ``<study>.csv`` of ``folder`` as one table with a ``study`` column, checked: the
    :data:`COLUMNS` are present, numbers are numbers, and every row names its mechanism and reason (a
    clear error names the file and what is wrong)."""
    folder = Path(folder)
    files = sorted(folder.glob("*.csv"))
    if not files:
        raise FileNotFoundError(f"{folder}: no mechanism tables (<study>.csv)")
    frames = []
    for f in files:
        try:
            t = pl.read_csv(f, infer_schema_length=None)
        except Exception as exc:  # polars raises several types for a malformed file
            raise ValueError(f"{f}: not a readable CSV ({exc})") from None
        missing = [c for c in COLUMNS if c not in t.columns]
        if missing:
            raise ValueError(f"{f}: missing columns {missing}; a mechanism table has {', '.join(COLUMNS)}")
        t = t.select(COLUMNS)
        for c in ("published", "before", "after"):
            try:
                t = t.with_columns(pl.col(c).cast(pl.Float64))
            except Exception:
                raise ValueError(f"{f}: column {c!r} must hold numbers") from None
        empty = t.filter(
            pl.col("mechanism").is_null()
            | (pl.col("mechanism").str.strip_chars() == "")
            | pl.col("reason").is_null()
            | (pl.col("reason").str.strip_chars() == "")
        )
        if empty.height:
            raise ValueError(f"{f}: rows without a mechanism or a reason: {empty['point'].to_list()}")
        frames.append(t.with_columns(study=pl.lit(f.stem)).select("study", *COLUMNS))
    return pl.concat(frames)


def effects(table: pl.DataFrame) -> pl.DataFrame:
    """Each mechanism's effect per point, as the share of the published value before and after
    (``before_pct``, ``after_pct``) and whether it moved the point towards the published value
    (``towards``: |ln(after / published)| < |ln(before / published)|)."""

    def log_miss(col: str) -> pl.Expr:
        return (pl.col(col) / pl.col("published")).log().abs()

    return table.with_columns(
        before_pct=100 * pl.col("before") / pl.col("published"),
        after_pct=100 * pl.col("after") / pl.col("published"),
        towards=log_miss("after") < log_miss("before"),
    )


def chart(table: pl.DataFrame) -> alt.FacetChart:
    """Per point, the simulated value as % of published before and after each mechanism (a line from the
    hollow 'before' to the filled 'after'), one panel per study; the dashed line is the published value."""
    e = effects(table).with_columns(label=pl.col("mechanism") + " | " + pl.col("point")).to_pandas()
    y = alt.Y("label:N", title=None, sort=None, axis=alt.Axis(labelLimit=420))
    x = alt.X("before_pct:Q", title="simulated as % of published", scale=alt.Scale(type="log"))
    tooltip = ["study", "mechanism", "point", "published", "before", "after", "reason"]
    rule = alt.Chart().mark_rule(color="#999").encode(y=y, x=x, x2="after_pct:Q")
    before = alt.Chart().mark_point(filled=False, color="#999").encode(y=y, x="before_pct:Q", tooltip=tooltip)
    after = (
        alt.Chart()
        .mark_point(filled=True)
        .encode(
            y=y, x="after_pct:Q", color=alt.Color("towards:N", title="towards published"), tooltip=tooltip
        )
    )
    published = alt.Chart().mark_rule(strokeDash=[4, 4]).encode(x=alt.datum(100))
    return (
        alt.layer(rule, before, after, published, data=e)
        .facet(row=alt.Row("study:N", title=None))
        .resolve_scale(y="independent")
    )
