"""Charts: deterministic specs (no auto-generated names), rounded data, and the notebook renderer."""

from __future__ import annotations

import base64
import json
import math
import re

import numpy as np
import polars as pl

from storagelab import charts
from storagelab.published import curves

AUTO_NAMES = re.compile(r'"(view|param)_\d+|"view_[0-9a-f]{8,}')


def demo_chart(name: str = "demo"):
    fit = curves.fit_closed_system([16, 32, 64], [22300, 37000, 39500], name="all-flash")
    extra = pl.DataFrame({"x": [64.0], "observed": [11500.0], "row_id": ["h"], "curve": ["hybrid"]})
    return charts.curve_chart(
        [fit], np.arange(1, 65), x_title="VMs", y_title="IOPS", title="t", name=name, extra_points=extra
    )


def test_curve_chart_spec_is_deterministic_and_names_its_selection():
    a, b = demo_chart().to_json(), demo_chart().to_json()
    assert a == b
    assert not AUTO_NAMES.search(a)
    spec = json.loads(a)
    assert spec["params"] == [
        {"name": "zoom_demo", "select": {"type": "interval"}, "bind": "scales", "views": ["demo_band"]}
    ]
    assert spec["layer"][0]["name"] == "demo_band"


def test_concatenated_charts_get_no_invented_names():
    spec = charts.alt.vconcat(demo_chart("a"), demo_chart("b")).to_json()
    assert not AUTO_NAMES.search(spec)


def test_chart_data_rounds_to_significant_digits():
    df = pl.DataFrame({"x": [1.23456789, 123456.789, 0.000123456789, 0.0], "s": ["a", "b", "c", "d"]})
    out = charts.chart_data(df, 4)
    assert out["x"].to_list() == [1.235, 123500.0, 0.0001235, 0.0]
    assert out["s"].to_list() == ["a", "b", "c", "d"]


def test_renderer_bundles_spec_png_and_text():
    bundle, _ = charts._render(demo_chart().to_dict())
    assert set(bundle) == {charts.SPEC_MIME_TYPE, "image/png", "text/plain"}
    assert charts.SPEC_MIME_TYPE.endswith("+json")  # nbformat keeps it as JSON, nbval compares it as data
    assert base64.b64decode(bundle["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert bundle["text/plain"] == "<storagelab chart: t>"


def test_renderer_stores_a_vega_lite_5_spec():
    bundle, _ = charts._render(demo_chart().to_dict())
    assert bundle[charts.SPEC_MIME_TYPE]["$schema"] == charts.SPEC_SCHEMA
    assert "/v5." in charts.SPEC_SCHEMA and charts.SPEC_MIME_TYPE == "application/vnd.vegalite.v5+json"


def _marks(vega: dict) -> list[tuple[str, str]]:
    """Every mark of a compiled Vega spec, as (type, name), depth first."""
    out = []
    for m in vega.get("marks", []):
        out.append((m["type"], m.get("name", "")))
        out.extend(_marks(m))
    return out


def _names(vega: dict, key: str) -> list[str]:
    return sorted(d["name"] for d in vega.get(key, []))


def _committed_chart_specs() -> list[tuple[str, dict]]:
    from pathlib import Path

    specs = []
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            for out in cell.get("outputs", []):
                spec = out.get("data", {}).get(charts.SPEC_MIME_TYPE)
                if spec is not None:
                    specs.append((path.name, spec))
    return specs


def test_committed_charts_are_the_same_chart_under_vega_lite_5_and_6():
    """Charts are stored as Vega-Lite 5 for JupyterLab; Altair writes them for Vega-Lite 6. Each committed
    chart compiles under both to the same marks, data sets, scales and selections."""
    latest = max(charts.vlc.get_vegalite_versions(), key=lambda v: tuple(map(int, v.split("."))))
    specs = _committed_chart_specs()
    assert len(specs) >= 10
    for name, spec in specs:
        v5 = charts.vlc.vegalite_to_vega(spec, vl_version=charts.VEGA_LITE_VERSION)
        v6 = charts.vlc.vegalite_to_vega({k: v for k, v in spec.items() if k != "$schema"}, vl_version=latest)
        assert _marks(v5) == _marks(v6), name
        for key in ("data", "scales"):
            assert _names(v5, key) == _names(v6, key), (name, key)
        assert _names(v5, "signals") == _names(v6, "signals"), name


def test_stored_spec_keeps_a_layer_selection_inside_its_layer():
    """JupyterLab's Vega-Lite 5.6 fails on a top-level selection with ``views`` ("Duplicate signal name");
    the stored spec has the zoom inside the band layer, and compiles to the same selection signals."""
    raw = demo_chart().to_dict()
    stored = charts._render(raw)[0][charts.SPEC_MIME_TYPE]
    assert "params" not in stored
    band = next(layer for layer in stored["layer"] if layer.get("name") == "demo_band")
    assert band["params"] == [{"name": "zoom_demo", "select": {"type": "interval"}, "bind": "scales"}]
    before = charts.vlc.vegalite_to_vega(raw, vl_version=charts.VEGA_LITE_VERSION)
    after = charts.vlc.vegalite_to_vega(stored, vl_version=charts.VEGA_LITE_VERSION)
    assert _names(before, "signals") == _names(after, "signals")


def test_frame_html_drops_polars_quotes_also_next_to_a_truncated_string():
    """A string cut at the display length ("bbb…") has no closing quote; the cell after it keeps its
    text without quotes, and a quote inside a string stays."""
    df = pl.DataFrame(
        {"name": ["drives", "b" * 100, "link_rate", 'say "hi"'], "unit": ["count", "x", "MB/s", "y"]}
    )
    with pl.Config(fmt_str_lengths=20, tbl_hide_column_data_types=True):
        html = charts.frame_html(df)
    cells = re.findall(r"<td>(.*?)</td>", html)
    assert cells[0] == "drives" and cells[2].startswith("bbb") and cells[4] == "link_rate"
    assert cells[6] == "say &quot;hi&quot;"
    assert "<td>&quot;" not in html


def test_a_value_a_log_scale_cannot_show_is_clipped_at_the_floor_and_said():
    df = pl.DataFrame({"label": ["a", "b", "c"], "low": [-0.142, 1.5, None], "mid": [0.96, 1.6, 4.0]})
    out = charts.for_log_scale(df, ["low", "mid"], also=[1.0])
    assert charts.log_floor([0.96, 1.5, 4.0], [1.0]) == 0.1  # the power of ten below the smallest shown value
    assert out["low"].to_list() == [0.1, 1.5, None] and out["mid"].equals(df["mid"])
    assert out[charts.CLIPPED].to_list() == [
        "low = -0.142 drawn at 0.1 (a log axis shows only values above 0)",
        "no",
        "no",
    ]
    assert charts.clipped_subtitle(out, label="label") == (
        "Not to scale: a: low = -0.142 drawn at 0.1 (a log axis shows only values above 0)"
    )
    assert charts.with_clipped(out, ["low"]) == ["low", charts.CLIPPED]
    # a second axis adds to the same column; a frame with nothing to clip is the same frame
    both = charts.for_log_scale(out.with_columns(y=pl.Series([2.0, 0.0, 3.0])), ["y"])
    assert both[charts.CLIPPED].to_list()[:2] == [out[charts.CLIPPED][0], "y = 0 drawn at 1 (a log axis shows only values above 0)"]  # fmt: skip
    assert charts.for_log_scale(df, ["mid"]) is df
    assert charts.with_clipped(df, ["mid"]) == ["mid"] and charts.clipped_subtitle(df) is None
    assert charts.log_floor([0.1, 0.5]) == 0.01 and charts.log_floor([None, -1.0]) == 1.0


def _scene_marks(scene: dict) -> list[dict]:
    """The data marks (role ``mark``) of a vl-convert scenegraph, depth first."""
    out = [scene] if scene.get("role") == "mark" else []
    for item in scene.get("items", []):
        for child in item.get("items", []) if "marktype" not in item else []:
            out += _scene_marks(child)
    return out


def _axis_labels(scene: dict) -> list[str]:
    out = (
        [i.get("text") for i in scene["items"] if i.get("text")] if scene.get("role") == "axis-label" else []
    )
    for item in scene.get("items", []):
        for child in item.get("items", []) if "marktype" not in item else []:
            out += _axis_labels(child)
    return out


def test_headroom_and_latency_charts_keep_their_log_axes_with_a_bound_at_or_below_zero():
    """Notebook 19's headroom table of 9c8f3ae (the NexGen's interval from -0.142) and a class with nothing
    measured (ratio 0): every mark is drawn at a position inside the plot (the log domain stays finite and
    positive; before, every position was NaN and the axis had no tick), spread over it, the clipped value
    drawn at the axis's floor and said in the tooltip and the subtitle."""
    from chart_cases import comparison_with_values_a_log_scale_cannot_show

    result = comparison_with_values_a_log_scale_cannot_show()
    chart = result.headroom_chart()
    spec = chart.to_dict()
    scene = charts.vlc.vegalite_to_scenegraph(spec, vl_version=charts.VEGA_LITE_VERSION)["scenegraph"]
    xs = [i[k] for m in _scene_marks(scene) for i in m["items"] for k in ("x", "x2") if k in i]
    assert xs and all(x is not None and 0 <= x <= 480 for x in xs), xs
    assert max(xs) - min(xs) > 0.3 * 480  # spread over the axis, not piled at one edge
    assert len([t for t in _axis_labels(scene) if t[0].isdigit()]) >= 2  # the log axis has its ticks
    nexgen = next(r for r in spec["datasets"].values() for r in r if r["label"].startswith("NexGen"))
    assert nexgen["low"] == 0.1 and nexgen["clipped"].startswith("low = -0.142 drawn at 0.1")
    assert "NexGen N5-150, QoS on: low = -0.142" in spec["title"]["subtitle"]
    assert {"field": "clipped", "type": "nominal"} in spec["layer"][1]["encoding"]["tooltip"]

    latency = result.latency_chart().to_dict()
    scene = charts.vlc.vegalite_to_scenegraph(latency, vl_version=charts.VEGA_LITE_VERSION)["scenegraph"]
    ys = [i.get("y") for m in _scene_marks(scene) if m["marktype"] in ("symbol", "line") for i in m["items"]]
    assert len(ys) >= 6 and all(y is not None and 0 <= y <= 200 for y in ys), ys
    assert "ratio = 0 drawn at 0.1" in latency["title"]["subtitle"]


def _finite_positions(spec: dict, key: str) -> list:
    scene = charts.vlc.vegalite_to_scenegraph(spec, vl_version=charts.VEGA_LITE_VERSION)["scenegraph"]
    return [
        i.get(key) for m in _scene_marks(scene) if m["marktype"] in ("symbol", "line") for i in m["items"]
    ]


def test_nexgen_latency_and_measured_check_charts_clip_a_zero_on_their_log_axes():
    """The two remaining log axes (notebook 13's per-LUN latency, notebook 20's measured-vs-predicted): a
    zero (a second with no IO measured, a model predicting nothing) is drawn at the axis's floor and said
    in the tooltip and the subtitle, and every mark keeps a finite position; data with nothing to clip keep
    their spec (no clipped column)."""
    from storagelab.measured.check import check_chart
    from storagelab.studies.nexgen.analysis import latency_chart

    series = pl.DataFrame({"qos": ["QoS off", "QoS off", "QoS on", "QoS on"], "lun": ["oltp"] * 4,
                           "time_s": [0.0, 1.0, 0.0, 1.0], "mean_ms": [2.0, 0.0, 1.5, 3.0],
                           "target_ms": [5.0] * 4})  # fmt: skip
    spec = latency_chart(series, title="t", name="n").to_dict()
    assert "oltp: mean_ms = 0 drawn at 1 (" in spec["title"]["subtitle"]
    ys = _finite_positions(spec, "y")
    assert len(ys) >= 6 and all(y is not None and math.isfinite(y) for y in ys), ys
    plain = latency_chart(series.with_columns(mean_ms=pl.col("mean_ms") + 1), title="t", name="n").to_dict()
    assert plain["title"] == "t" and "clipped" not in str(plain["encoding"]["tooltip"])

    table = pl.DataFrame({"pattern": ["random"] * 3, "direction": ["read"] * 3, "block_size": [4096] * 3,
                          "metric": ["iops"] * 3, "read_pct": [100] * 3, "outstanding": [1, 2, 4],
                          "measured": [100.0, 180.0, 300.0], "predicted": [0.0, 190.0, 310.0],
                          "error_pct": [-100.0, 5.6, 3.3], "within": [False, True, True],
                          "job": ["a", "b", "c"]})  # fmt: skip
    spec = check_chart(table).to_dict()
    assert "a: predicted = 0 drawn at 10 (" in spec["title"]["subtitle"]
    assert "clipped" in str(spec["spec"]["layer"][1]["encoding"]["tooltip"])
