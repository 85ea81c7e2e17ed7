"""Charts: Altair figures of published points, fitted curves and their uncertainty.

Charts are Vega-Lite specs built with Altair. :func:`enable` installs the ``storagelab`` renderer, which
puts two things in a notebook output: the Vega-Lite 5 spec (interactive in JupyterLab 4, and what nbval
compares) and a static PNG made by vl-convert (what the HTML report, GitHub and nbval-skipped views
show). Specs are deterministic: data are rounded to :data:`SIGNIFICANT_DIGITS`, and every selection or
parameter is named, so re-executing a notebook reproduces its outputs byte for byte.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Iterable, Sequence

import altair as alt
import numpy as np
import polars as pl
import vl_convert as vlc

from storagelab.published.curves import CurveFit

#: Digits kept in chart data, so that last-bit floating-point noise never changes a stored output.
SIGNIFICANT_DIGITS = 6
#: Scale of the static PNG relative to the chart's pixel size.
PNG_SCALE = 1.0

_RENDERER = "storagelab"

#: The Vega-Lite version every chart is stored and drawn in. JupyterLab 4 renders Vega-Lite 5 itself
#: (4.6 bundles 5.6) and no v6, so a chart is stored as a v5 spec (Altair 6 writes v6, whose specs our
#: charts share with v5; ``tests/test_charts.py`` compiles every committed chart with both), and its PNG
#: and the HTML report's interactive chart are drawn by vl-convert's Vega-Lite 5.8, its oldest and the
#: nearest to JupyterLab's.
VEGA_LITE_VERSION = "5.8"
#: The output key under which a chart's Vega-Lite spec is stored in a notebook: the one JupyterLab
#: renders, and a ``+json`` key, which nbformat keeps as a JSON object and nbval compares as data.
SPEC_MIME_TYPE = "application/vnd.vegalite.v5+json"
#: The ``$schema`` a stored spec names (vega-embed reads the version from it).
SPEC_SCHEMA = f"https://vega.github.io/schema/vega-lite/v{VEGA_LITE_VERSION}.0.json"


def _round_significant(x: float | None, digits: int = SIGNIFICANT_DIGITS) -> float | None:
    if x is None or not math.isfinite(x) or x == 0:
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def chart_data(df: pl.DataFrame, digits: int = SIGNIFICANT_DIGITS) -> pl.DataFrame:
    """``df`` with every float column rounded to ``digits`` significant digits (for stable specs)."""
    floats = [c for c, t in df.schema.items() if t.is_float()]
    return df.with_columns(
        pl.col(c).map_elements(lambda v: _round_significant(v, digits), return_dtype=pl.Float64)
        for c in floats
    )


#: The column a chart's data gets when one of its values was drawn clipped (see :func:`for_log_scale`):
#: per row "no", or which value was clipped, its true value and where it is drawn. Charts add it to their
#: tooltips (:func:`with_clipped`) and summarise it in a subtitle (:func:`clipped_subtitle`).
CLIPPED = "clipped"


def log_floor(*values: Iterable[float | None]) -> float:
    """Where a log axis draws a value it cannot show (zero or negative): the power of ten below the smallest
    value it can show among ``values`` (so never on a shown value), 1 when none can be shown."""
    shown = [v for vs in values for v in vs if v is not None and math.isfinite(v) and v > 0]
    return 10.0 ** (math.ceil(math.log10(min(shown))) - 1) if shown else 1.0


def for_log_scale(
    df: pl.DataFrame, columns: Sequence[str], *, floor: float | None = None, also: Sequence[float] = ()
) -> pl.DataFrame:
    """``df`` ready for a log axis that draws ``columns``: a value it cannot show (zero or negative, which
    would make the whole scale's domain NaN and pile every mark at the axis's edge) is replaced by
    ``floor`` (default :func:`log_floor` of the columns and of ``also``, the axis's other values such as a
    reference rule) and said in the :data:`CLIPPED` column, with its true value. A frame with nothing to
    clip is returned unchanged (no :data:`CLIPPED` column), so the charts of such data keep their specs.
    Several calls (one per log axis) add to the same :data:`CLIPPED` column."""
    bad = [c for c in columns if (df[c] <= 0).any()]
    if not bad:
        return df
    floor = log_floor(*(df[c].to_list() for c in columns), also) if floor is None else floor

    def note(row: dict) -> str:
        clipped = [f"{c} = {row[c]:.3g}" for c in bad if row[c] is not None and row[c] <= 0]
        if not clipped:
            return "no"
        return f"{', '.join(clipped)} drawn at {floor:g} (a log axis shows only values above 0)"

    notes = [note(r) for r in df.select(bad).iter_rows(named=True)]
    if CLIPPED in df.columns:  # an earlier call, for another axis
        notes = [
            n if old == "no" else old if n == "no" else f"{old}; {n}"
            for old, n in zip(df[CLIPPED], notes, strict=True)
        ]
    return df.with_columns(
        *(pl.when(pl.col(c) <= 0).then(pl.lit(floor)).otherwise(pl.col(c)).alias(c) for c in bad),
        pl.Series(CLIPPED, notes, dtype=pl.String),
    )


def with_clipped(df: pl.DataFrame, tooltip: Sequence) -> list:
    """``tooltip`` with the :data:`CLIPPED` field added when ``df`` has values drawn clipped."""
    return [*tooltip, CLIPPED] if CLIPPED in df.columns else list(tooltip)


def clipped_subtitle(*frames: pl.DataFrame, label: str | None = None, listed: int = 3) -> str | None:
    """A chart subtitle saying which values of ``frames`` are drawn clipped (their :data:`CLIPPED` column;
    each named by its row's ``label``), or ``None`` when none is: what the static PNG tells a reader who
    cannot hover for the tooltip."""
    rows = [r for f in frames if CLIPPED in f.columns for r in f.filter(pl.col(CLIPPED) != "no").iter_rows(named=True)]  # fmt: skip
    if not rows:
        return None
    notes = [f"{r[label]}: {r[CLIPPED]}" if label else r[CLIPPED] for r in rows[:listed]]
    more = f"; and {len(rows) - listed} more (see the tooltips)" if len(rows) > listed else ""
    return "Not to scale: " + "; ".join(notes) + more


def titled(title: str, subtitle: str | None) -> str | alt.TitleParams:
    """``title``, with ``subtitle`` under it when there is one."""
    return alt.TitleParams(title, subtitle=subtitle) if subtitle else title


def _params_into_views(spec: dict) -> dict:
    """``spec`` with each top-level selection that names its ``views`` moved into those layers.

    Altair lifts a layer's selection to the top level with ``views: [layer name]``; JupyterLab's
    Vega-Lite 5.6 then defines the selection's signals twice ("Duplicate signal name") and draws no
    chart. A selection inside the layer it belongs to is the same selection in every Vega-Lite 5 and 6.
    """
    moving = [p for p in spec.get("params", []) if p.get("views") and "select" in p]
    if not moving or "layer" not in spec:
        return spec
    layers = [dict(layer) for layer in spec["layer"]]
    for param in moving:
        inner = {k: v for k, v in param.items() if k != "views"}
        for layer in layers:
            if layer.get("name") in param["views"]:
                layer["params"] = [*layer.get("params", []), inner]
    kept = [p for p in spec["params"] if p not in moving]
    out = {k: v for k, v in spec.items() if k != "params"} | {"layer": layers}
    return out | {"params": kept} if kept else out


def _render(spec: dict, **metadata) -> tuple[dict, dict]:
    spec = _params_into_views({**spec, "$schema": SPEC_SCHEMA})
    png = vlc.vegalite_to_png(spec, vl_version=VEGA_LITE_VERSION, scale=PNG_SCALE)
    title = spec.get("title")
    title = title.get("text") if isinstance(title, dict) else title
    bundle = {
        SPEC_MIME_TYPE: spec,
        "image/png": base64.b64encode(png).decode("ascii"),
        "text/plain": f"<storagelab chart: {title or 'untitled'}>",
    }
    return bundle, {}


def frame_html(df: pl.DataFrame) -> str:
    """A Polars frame as an HTML table for a reader: text cells without Polars' quotation marks."""
    # a cell's text never holds "<"; a string cut at the display length has no closing quote
    return re.sub(r"<td>&quot;([^<]*?)(?:&quot;)?</td>", r"<td>\1</td>", df._repr_html_())


def enable() -> None:
    """Set up a notebook's display: Altair charts as a Vega-Lite spec plus a static PNG (see module
    docs), and Polars tables shown whole, with long text kept, without shape, column types or quotes."""
    if _RENDERER not in alt.renderers.names():
        alt.renderers.register(_RENDERER, _render)
    alt.renderers.enable(_RENDERER)
    alt.data_transformers.disable_max_rows()
    pl.Config.set_tbl_rows(60)
    pl.Config.set_fmt_str_lengths(90)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    pl.Config.set_tbl_hide_column_data_types(True)
    try:
        from IPython import get_ipython
    except ImportError:  # not in IPython: nothing to register
        return
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pl.DataFrame, frame_html)


def rounded(df: pl.DataFrame, digits: int = 4) -> pl.DataFrame:
    """``df`` with floats rounded to ``digits`` significant digits, for tables a person reads."""
    return chart_data(df, digits)


def zoom(name: str) -> alt.Parameter:
    """A named pan/zoom selection bound to the scales (names keep specs deterministic)."""
    return alt.selection_interval(bind="scales", name=name)


def curve_chart(
    fits: Sequence[CurveFit],
    grid: Sequence[float] | np.ndarray,
    *,
    x_title: str,
    y_title: str,
    title: str,
    name: str,
    log_x: bool = False,
    log_y: bool = False,
    extra_points: pl.DataFrame | None = None,
    width: int = 420,
    height: int = 260,
    band_opacity: float = 0.15,
) -> alt.LayerChart:
    """Fitted curves (lines), their confidence bands (shaded) and the published points (dots).

    One colour per fit. ``extra_points`` (columns ``x``, ``observed``, ``curve``) adds published points
    that no curve was fitted to, so they are still shown. ``name`` names the chart's zoom selection.
    """
    curves = (
        pl.concat([f.predict(grid) for f in fits])
        if fits
        else pl.DataFrame(
            schema={
                "x": pl.Float64,
                "fit": pl.Float64,
                "lower": pl.Float64,
                "upper": pl.Float64,
                "curve": pl.String,
            }
        )
    )
    points = [
        f.points.select(
            "x",
            "observed",
            "row_id",
            curve=pl.lit(f.name),
            point=pl.when("used_in_fit").then(pl.lit("fitted on")).otherwise(pl.lit("not used")),
        )
        for f in fits
    ]
    if extra_points is not None and extra_points.height:
        points.append(extra_points.select("x", "observed", "row_id", "curve", point=pl.lit("no curve")))
    pts = pl.concat(points) if points else pl.DataFrame()
    for log, col, cols in ((log_x, "x", ["x"]), (log_y, "observed", ["lower", "fit", "upper"])):
        if log:  # one floor for the curves and the points, which share the axis
            floor = log_floor(*(curves[c] for c in cols), pts[col] if pts.height else [])
            curves = for_log_scale(curves, cols, floor=floor)
            pts = for_log_scale(pts, [col], floor=floor) if pts.height else pts
    xscale = alt.Scale(type="log") if log_x else alt.Scale(zero=False)
    yscale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    x = alt.X("x:Q", title=x_title, scale=xscale)
    color = alt.Color(
        "curve:N",
        title=None,
        legend=alt.Legend(
            orient="bottom",
            columns=2,
            labelLimit=260,
            symbolType="stroke",
            symbolStrokeWidth=3,
            symbolOpacity=1,
        ),
    )
    unlabelled = alt.Color("curve:N", legend=None)
    base = alt.Chart(chart_data(curves))
    # The zoom selection lives on the named band layer, so Altair never invents a view name for it.
    band = (
        base.mark_area(opacity=band_opacity)
        .encode(x=x, y=alt.Y("lower:Q", scale=yscale), y2="upper:Q", color=color)
        .add_params(zoom(f"zoom_{name}"))
        .properties(name=f"{name}_band")
    )
    line = base.mark_line().encode(x=x, y=alt.Y("fit:Q", title=y_title, scale=yscale), color=color)
    dots = (
        alt.Chart(chart_data(pts))
        .mark_point(filled=True, size=60, stroke="black", strokeWidth=0.5, opacity=1)
        .encode(
            x=x,
            y="observed:Q",
            color=unlabelled,
            shape=alt.Shape("point:N", title="published point"),
            tooltip=with_clipped(pts, ["curve", "row_id", "x", "observed"]),
        )
    )
    return alt.layer(band, line, dots).properties(
        title=titled(title, clipped_subtitle(curves, pts, label="curve")),
        width=width,
        height=height,
        name=name,
    )


def residual_bars(residuals: pl.DataFrame, *, label: str, title: str) -> alt.Chart:
    """Relative residual (fitted − published) / published per point, as horizontal bars in %."""
    data = chart_data(residuals.with_columns(residual_pct=100 * pl.col("relative_residual")))
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y(f"{label}:N", sort=None, title=None),
            x=alt.X("residual_pct:Q", title="fitted − published, % of published"),
            color=alt.Color("used_in_fit:N", title="used in fit"),
            tooltip=[label, "observed", "fitted", "residual_pct"],
        )
        .properties(title=title, width=420, name="residuals")
    )


def estimate_vs_reference(
    df: pl.DataFrame,
    *,
    label: str,
    estimate: str,
    low: str,
    high: str,
    reference: str,
    x_title: str,
    title: str,
    name: str,
) -> alt.LayerChart:
    """One row per item: an estimate with its interval (bar and dot) beside a reference value (diamond)."""
    data = chart_data(df.select(label, estimate, low, high, reference))
    y = alt.Y(f"{label}:N", sort=None, title=None)
    base = alt.Chart(data)
    interval = base.mark_rule(strokeWidth=2).encode(
        y=y, x=alt.X(f"{low}:Q", title=x_title, scale=alt.Scale(zero=False)), x2=f"{high}:Q"
    )
    point = base.mark_point(filled=True, size=60).encode(
        y=y, x=f"{estimate}:Q", tooltip=[label, estimate, low, high]
    )
    ref = base.mark_point(shape="diamond", size=90, color="#d62728", filled=False, strokeWidth=2).encode(
        y=y, x=f"{reference}:Q", tooltip=[label, reference]
    )
    return alt.layer(interval, point, ref).properties(title=title, width=460, name=name)


def service_level(curve: pl.DataFrame, *, title: str, name: str) -> alt.Chart:
    """The service-level curve: share of IOs completed in under t against t (log scale), per class."""
    shown = for_log_scale(curve.with_columns(share_pct=100 * pl.col("share_under")), ["threshold_ms"])
    data = chart_data(shown)
    return (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("threshold_ms:Q", scale=alt.Scale(type="log"), title="latency threshold t (ms)"),
            y=alt.Y("share_pct:Q", title="% of IOs under t", scale=alt.Scale(domain=[0, 100])),
            color=alt.Color("class:N", title="class"),
            tooltip=with_clipped(shown, ["class", "threshold_ms", "share_pct"]),
        )
        .properties(
            title=titled(title, clipped_subtitle(shown, label="class")), width=460, height=240, name=name
        )
    )


def calibration(table: pl.DataFrame, *, title: str, name: str) -> alt.LayerChart:
    """A calibration table as a chart: each point's simulated value (dot) with its replication interval
    (bar) as a percentage of the published value (the grey line at 100 %), coloured by pass, shaped by
    role (fitted, predicted, derived), faint when the claim is insensitive (it passes with the capacity
    halved and doubled); claim and tolerance in the tooltip. Points with nothing simulated are left out
    of the chart (they stay in the table, as failures)."""
    df = table.filter(pl.col("simulated").is_not_nan() & (pl.col("published") != 0)).with_columns(
        simulated_pct=100 * pl.col("simulated") / pl.col("published"),
        ci_low_pct=100 * pl.col("ci_low") / pl.col("published"),
        ci_high_pct=100 * pl.col("ci_high") / pl.col("published"),
        tolerance_pct=100 * pl.col("tolerance") / pl.col("published").abs(),
        within=pl.when(pl.col("pass")).then(pl.lit("within tolerance")).otherwise(pl.lit("outside")),
        evidence=pl.when(pl.col("sensitive").fill_null(True))
        .then(pl.lit("informative"))
        .otherwise(pl.lit("insensitive")),
    )
    df = for_log_scale(df, ["ci_low_pct", "simulated_pct", "ci_high_pct"], also=[100.0])  # 100: the grey line
    data = chart_data(
        df.select("claim", "point", "role", "evidence", "within", "published", "simulated", "unit", "simulated_pct",
                  "ci_low_pct", "ci_high_pct", "tolerance_pct", *([CLIPPED] if CLIPPED in df.columns else []))
    )  # fmt: skip
    y = alt.Y("point:N", sort=None, title=None)
    x_title = "simulated as % of published (interval: replications)"
    base = alt.Chart(data)
    bars = base.mark_rule(strokeWidth=2).encode(
        y=y, x=alt.X("ci_low_pct:Q", title=x_title, scale=alt.Scale(type="log")), x2="ci_high_pct:Q"
    )
    dots = base.mark_point(filled=True, size=60).encode(
        y=y,
        x="simulated_pct:Q",
        color=alt.Color("within:N", title=None, scale=alt.Scale(domain=["within tolerance", "outside"],
                                                               range=["#2ca02c", "#d62728"])),
        shape=alt.Shape("role:N", title="role"),
        opacity=alt.Opacity("evidence:N", title=None, scale=alt.Scale(domain=["informative", "insensitive"],
                                                                     range=[1.0, 0.3])),
        tooltip=with_clipped(df, ["claim", "point", "role", "evidence", "published", "simulated", "unit",
                                  "tolerance_pct", "within"]),
    )  # fmt: skip
    ref = (
        alt.Chart(pl.DataFrame({"x": [100.0]})).mark_rule(color="#7f7f7f", strokeDash=[4, 3]).encode(x="x:Q")
    )
    return alt.layer(bars, dots, ref).properties(
        title=titled(title, clipped_subtitle(df, label="point")), width=460, name=name
    )


def series_vs_published(
    simulated: pl.DataFrame,
    published: pl.DataFrame,
    *,
    x: str,
    y: str,
    color: str,
    x_title: str,
    y_title: str,
    title: str,
    name: str,
    low: str | None = None,
    high: str | None = None,
) -> alt.LayerChart:
    """Simulated series (lines, with an interval band when ``low``/``high`` are given) against published
    points (large open diamonds); both frames have columns ``x``, ``y`` and ``color``. Tooltips on the
    points; pan and zoom bound to the scales."""
    sim = chart_data(simulated.select(x, y, color, *(c for c in (low, high) if c)))
    pub = chart_data(published.select(x, y, color))
    enc = {"x": alt.X(f"{x}:Q", title=x_title), "color": alt.Color(f"{color}:N", title=None)}
    layers = []
    if low and high:
        layers.append(alt.Chart(sim).mark_area(opacity=0.2).encode(y=f"{low}:Q", y2=f"{high}:Q", **enc))
    layers.append(
        alt.Chart(sim)
        .mark_line(point=True)
        .encode(y=alt.Y(f"{y}:Q", title=y_title), tooltip=[x, y, color], **enc)
        .add_params(zoom(f"zoom_{name}"))  # pan and zoom in the interactive report (a named view)
        .properties(name=f"{name}_line")
    )
    layers.append(
        alt.Chart(pub)
        .mark_point(shape="diamond", size=140, filled=False, strokeWidth=2)
        .encode(y=f"{y}:Q", tooltip=[x, y, color], **enc)
    )
    return alt.layer(*layers).properties(title=title, width=460, height=260, name=name)
