"""What a user sees, checked in a browser: the HTML report's charts render as interactive Vega-Lite
charts in headless Chromium (Debian package ``chromium``; skipped with a message when it is not
installed). A screenshot is kept under results/browser-check/."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat
import pytest

from storagelab.pipeline.report import render_html

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "results" / "browser-check"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--virtual-time-budget=15000"]  # fmt: skip

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed: apt-get install chromium (Debian package)"
)


def _chromium(*args: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                             text=True, timeout=120, check=True)  # fmt: skip
    return out.stdout


def test_report_charts_render_interactively_in_a_browser(tmp_path):
    committed = nbformat.read(ROOT / "notebooks" / "11-vsan-scaling.ipynb", as_version=4)
    page = tmp_path / "11-vsan-scaling.html"
    render_html(committed, page)
    dom = _chromium("--dump-dom", page.as_uri())
    charts = re.findall(r'<div class="storagelab-chart[^"]*"[^>]*>', dom)
    assert len(charts) >= 3, "the page has its charts"
    rendered = [c for c in charts if 'data-rendered="true"' in c]
    errors = re.findall(r'data-error="([^"]*)"', dom)
    assert not errors, errors
    assert len(rendered) == len(charts), f"{len(rendered)} of {len(charts)} charts drawn"
    assert dom.count('class="marks"') >= len(charts)  # vega's SVG, not the static PNG
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    _chromium("--window-size=1200,1400", f"--screenshot={ARTIFACTS / 'report-11-vsan-scaling.png'}", page.as_uri())
    assert (ARTIFACTS / "report-11-vsan-scaling.png").stat().st_size > 10_000
