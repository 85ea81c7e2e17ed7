"""Charts: deterministic specs (no auto-generated names), rounded data, and the notebook renderer."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import polars as pl

from storagelab import charts, curves

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
