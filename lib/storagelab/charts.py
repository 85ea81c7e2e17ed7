"""Charts: Altair figures of published points, fitted curves and their uncertainty.

Charts are Vega-Lite specs built with Altair. :func:`enable` installs the ``storagelab`` renderer, which
puts two things in a notebook output: the Vega-Lite spec (interactive in JupyterLab, and what nbval
compares) and a static PNG made by vl-convert (what the HTML report, GitHub and nbval-skipped views
show). Specs are deterministic: data are rounded to :data:`SIGNIFICANT_DIGITS`, and every selection or
parameter is named, so re-executing a notebook reproduces its outputs byte for byte.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence

import altair as alt
import polars as pl
import vl_convert as vlc

#: Digits kept in chart data, so that last-bit floating-point noise never changes a stored output.
SIGNIFICANT_DIGITS = 6
#: Scale of the static PNG relative to the chart's pixel size.
PNG_SCALE = 1.5

_RENDERER = "storagelab"


def _round_significant(x: float | None, digits: int = SIGNIFICANT_DIGITS) -> float | None:
    if x is None or not math.isfinite(x) or x == 0:
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def chart_data(df: pl.DataFrame, digits: int = SIGNIFICANT_DIGITS) -> pl.DataFrame:
    """``df`` with every float column rounded to ``digits`` significant digits (for stable specs)."""
    floats = [c for c, t in df.schema.items() if t.is_float()]
    return df.with_columns(
        pl.col(c).map_elements(lambda v: _round_significant(v, digits), return_dtype=pl.Float64) for c in floats
    )


def _render(spec: dict, **metadata) -> tuple[dict, dict]:
    from altair.vegalite.v6.display import VEGALITE_MIME_TYPE

    png = vlc.vegalite_to_png(spec, scale=PNG_SCALE)
    title = spec.get("title")
    title = title.get("text") if isinstance(title, dict) else title
    bundle = {
        VEGALITE_MIME_TYPE: spec,
        "image/png": base64.b64encode(png).decode("ascii"),
        "text/plain": f"<storagelab chart: {title or 'untitled'}>",
    }
    return bundle, {}


def enable() -> None:
    """Render Altair charts in notebooks as a Vega-Lite spec plus a static PNG (see module docs)."""
    if _RENDERER not in alt.renderers.names():
        alt.renderers.register(_RENDERER, _render)
    alt.renderers.enable(_RENDERER)
    alt.data_transformers.disable_max_rows()


def zoom(name: str) -> alt.Parameter:
    """A named pan/zoom selection bound to the scales (names keep specs deterministic)."""
    return alt.selection_interval(bind="scales", name=name)


def fit_with_points(
    curve: pl.DataFrame,
    points: pl.DataFrame,
    *,
    x: str,
    y: str,
    color: str,
    x_title: str,
    y_title: str,
    title: str,
    name: str,
    log_x: bool = False,
    tooltip: Sequence[str] = (),
) -> alt.LayerChart:
    """Published points over a fitted curve with its confidence band, one colour per series.

    ``curve`` has columns ``x``, ``fit``, ``lower``, ``upper`` and ``color``; ``points`` has ``x``, ``y``
    and ``color`` (and whatever ``tooltip`` names).
    """
    scale = alt.Scale(type="log") if log_x else alt.Scale(zero=False)
    base_curve = alt.Chart(chart_data(curve))
    xenc = alt.X(f"{x}:Q", title=x_title, scale=scale)
    band = base_curve.mark_area(opacity=0.18).encode(
        x=xenc, y=alt.Y("lower:Q", title=y_title), y2="upper:Q", color=alt.Color(f"{color}:N")
    )
    line = base_curve.mark_line().encode(x=xenc, y="fit:Q", color=alt.Color(f"{color}:N", title=color))
    dots = (
        alt.Chart(chart_data(points))
        .mark_point(filled=True, size=70, stroke="black", strokeWidth=0.6)
        .encode(x=xenc, y=f"{y}:Q", color=f"{color}:N", shape=alt.Shape("kind:N", title="published"),
                tooltip=[*tooltip])
    )  # fmt: skip
    return (band + line + dots).add_params(zoom(f"zoom_{name}")).properties(title=title, width=420, height=260)


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
        .properties(title=title, width=420)
    )
