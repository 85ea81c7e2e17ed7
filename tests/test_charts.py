"""Charts: deterministic specs (no auto-generated names), rounded data, and the notebook renderer."""

from __future__ import annotations

import base64
import json
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
