"""What a user sees, checked in a browser: every chart of every committed notebook, on its HTML report
page and opened in JupyterLab 4 on the project's environment, drawn as an interactive Vega-Lite chart in
headless Chromium (Debian package ``chromium``; skipped with a message when it is not installed) without
a JavaScript error, and readable: each continuous scale that places marks on x or y has a finite,
non-degenerate domain (a log scale's strictly positive), every mark item a position, and the marks
spread over the plot rather than piled at one edge; its axis has tick labels. The checks run in the
page (tests/vega_probe.js reads each chart's Vega view and scenegraph) over the DevTools protocol
(tests/cdp.py). One Chromium and one JupyterLab server serve all notebooks. Screenshots are kept under
results/browser-check/."""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from cdp import Browser

from storagelab.charts import SPEC_MIME_TYPE
from storagelab.pipeline.report import render_html

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "results" / "browser-check"
PROBE = (Path(__file__).with_name("vega_probe.js")).read_text()
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))

#: Marks are "at an edge" within this many pixels of it.
EDGE_PX = 3.0
#: The marks placed by a scale span at least this share of its range (when they are at two or more places).
MIN_SPREAD = 0.1

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed: apt-get install chromium (Debian package)"
)


def chart_count(nb: dict) -> int:
    return sum(SPEC_MIME_TYPE in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))


def _fmt(v: float | None) -> str:
    return "NaN" if v is None else f"{v:.4g}"


def chart_problems(chart: dict) -> list[str]:
    """What is wrong with one probed chart (tests/vega_probe.js), as sentences; empty when it is readable."""
    if "error" in chart:
        return [f"not drawn: {chart['error']}"]
    problems = [] if chart["marks"] > 0 else ["drew no marks"]
    for s in chart["scales"]:
        name, domain, positions = f"{s['type']} scale {s['name']}", s["domain"], s["positions"]
        if s.get("discrete"):  # a band or point scale (a heatmap's rows): categories, each mark placed
            problems += discrete_scale_problems(name, s)
            continue
        if domain is not None:  # None: a scale inside a facet group, which the view does not expose
            lo, hi = (domain[0], domain[-1]) if len(domain) >= 2 else (None, None)
            if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
                problems.append(f"{name}: domain [{', '.join(map(_fmt, domain))}] is not finite")
            elif lo == hi:
                problems.append(f"{name}: domain [{_fmt(lo)}, {_fmt(hi)}] is a single value")
            elif s["type"] == "log" and not (lo * hi > 0):
                problems.append(f"{name}: log domain [{_fmt(lo)}, {_fmt(hi)}] reaches zero or below")
        r0, r1 = sorted(v if v is not None else math.nan for v in s["range"][:2])
        if not (math.isfinite(r0) and math.isfinite(r1)) or r1 - r0 <= 0:
            problems.append(f"{name}: range {s['range']} is empty")
            continue
        missing = sum(p is None for p in positions)
        if missing:
            where = ", ".join(f"{k} ({v})" for k, v in s["unplaced"].items())
            problems.append(
                f"{name}: {missing} of {len(positions)} mark positions are not numbers (NaN): {where}"
            )
        placed = [p for p in positions if p is not None]
        if len({round(p, 1) for p in placed}) >= 2:
            span = max(placed) - min(placed)
            for edge, side in ((r0, "start"), (r1, "end")):
                if all(abs(p - edge) <= EDGE_PX for p in placed):
                    problems.append(
                        f"{name}: all {len(placed)} mark positions within {EDGE_PX:g} px of its {side}"
                    )
            if span < MIN_SPREAD * (r1 - r0):
                problems.append(
                    f"{name}: marks span {span:.1f} px of {r1 - r0:.0f} (under {MIN_SPREAD:.0%}): piled together"
                )
        if s["axes"] and len(s["ticks"]) < 2:
            problems.append(f"{name}: its axis shows {len(s['ticks'])} tick label(s)")
    return problems


def discrete_scale_problems(name: str, s: dict) -> list[str]:
    """What is wrong with one probed band or point scale: no category, an empty range, a mark without a
    position, or an axis without its category labels."""
    out = [] if s["domain"] else [f"{name}: no category in its domain"]
    r0, r1 = sorted(v if v is not None else math.nan for v in s["range"][:2])
    if not (math.isfinite(r0) and math.isfinite(r1)) or r1 - r0 <= 0:
        out.append(f"{name}: range {s['range']} is empty")
    missing = sum(p is None for p in s["positions"])
    if missing:
        out.append(f"{name}: {missing} of {len(s['positions'])} mark positions are not numbers (NaN)")
    if s["axes"] and not s["ticks"]:
        out.append(f"{name}: its axis shows no category label")
    return out


def problems_of(charts: list[dict]) -> list[str]:
    """The problems of every chart of a page, each named by its place and title. Every chart of the
    project places its marks with a continuous or a band scale on x or y (a heatmap: bands on both), so a
    chart in which the probe found none is one it could not read (a renamed scale or mark in a new
    Vega-Lite), not one that passed."""
    out = []
    for i, c in enumerate(charts):
        found = "error" in c or any(s["positions"] for s in c["scales"])
        problems = (
            chart_problems(c) if found else ["the probe found no continuous or band x or y scale to check"]
        )
        out += [f"chart {i + 1} ({c.get('title')!r}): {p}" for p in problems]
    return out


@pytest.fixture(scope="module")
def browser():
    with Browser(CHROMIUM) as b:
        yield b


def report_charts(
    browser: Browser, page_file: Path, shot: Path | None = None
) -> tuple[list[dict], list[str]]:
    """Open a report page; return its probed charts and the page's JavaScript errors."""
    page = browser.page(1200, 1400)
    try:
        page.goto(page_file.as_uri())
        page.evaluate(PROBE)
        charts = page.evaluate("storagelabReportCharts(60000)")
        if shot is not None:
            shot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(shot)
        return charts, page.errors
    finally:
        page.close()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_report_page_charts_are_drawn_and_readable(name, browser, tmp_path):
    """The report page of each committed notebook (render_html, no execution): every chart drawn by
    vega-embed (SVG with marks, not the PNG fallback), no JavaScript error, every continuous scale
    readable (see :func:`chart_problems`)."""
    committed = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    page_file = tmp_path / f"{Path(name).stem}.html"
    render_html(committed, page_file)
    shot = ARTIFACTS / f"report-{Path(name).stem}.png"
    charts, errors = report_charts(browser, page_file, shot)
    assert not errors, errors
    assert len(charts) == chart_count(committed), "every chart output is on the page"
    problems = problems_of(charts)
    assert not problems, "\n".join(problems)
    assert all(c["svg_marks"] > 0 and c["png_fallback"] == 0 for c in charts)  # vega's SVG, not the PNG
    assert shot.stat().st_size > 10_000


def test_the_check_catches_a_collapsed_log_scale_that_clipping_keeps(browser, tmp_path):
    """The case of 9c8f3ae (tests/chart_cases.py: notebook 19's table with the NexGen's low at -0.142, and a
    class with nothing measured): the real headroom and latency charts draw it readably (the value clipped
    at the axis's floor and said in a subtitle), while the same bounds on a plain log axis, as the headroom
    chart drew them before, are caught: NaN domain and positions, no tick."""
    import altair as alt
    from chart_cases import comparison_with_values_a_log_scale_cannot_show

    from storagelab import charts

    result = comparison_with_values_a_log_scale_cannot_show()
    plain = (
        alt.Chart(result.table().drop_nulls("low").to_pandas())
        .mark_rule()
        .encode(y="architecture:N", x=alt.X("low:Q", scale=alt.Scale(type="log")), x2="high:Q")
        .properties(title="plain log axis", width=480)
    )
    made = [result.headroom_chart(), result.latency_chart(), plain]
    outputs = [nbformat.v4.new_output("display_data", data=charts._render(c.to_dict())[0]) for c in made]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=outputs)])
    page_file = tmp_path / "clipped.html"
    render_html(nb, page_file)
    drawn, errors = report_charts(browser, page_file, ARTIFACTS / "report-clipped-values.png")
    assert not errors, errors
    assert not problems_of(drawn[:2]), problems_of(drawn[:2])
    caught = chart_problems(drawn[2])
    assert any("is not finite" in p for p in caught) and any("NaN" in p for p in caught), caught
    assert any("0 tick label(s)" in p for p in caught), caught


def test_the_heatmap_is_probed_on_its_band_scales(browser, tmp_path):
    """Notebook 19's ranking heatmap has no continuous position scale: the probe reads its two band scales
    instead, every cell placed on both (one cell per ordered pair of candidates), and finds it readable."""
    committed = nbformat.read(ROOT / "notebooks" / "19-compare-architectures.ipynb", as_version=4)
    page_file = tmp_path / "19.html"
    render_html(committed, page_file)
    charts, errors = report_charts(browser, page_file)
    assert not errors, errors
    heat = [c for c in charts if c.get("title") == "Rankings as probabilities"]
    assert len(heat) == 1, [c.get("title") for c in charts]
    bands = [s for s in heat[0]["scales"] if s["discrete"] and s["positions"]]
    assert sorted(s["type"] for s in bands) == ["band", "band"]
    n = len(bands[0]["domain"])
    cells = n * (n - 1)  # every ordered pair, the diagonal empty; the text marks place a second set
    assert all(len(s["positions"]) == 2 * cells and None not in s["positions"] for s in bands), bands
    assert not problems_of(heat), problems_of(heat)


def test_report_index_opens_on_its_findings_in_a_browser(committed_index, browser):
    """The index (built from the committed notebooks) as a browser lays it out: the findings, each linking
    to its notebook's page, above the list of notebooks. The screenshot is kept."""
    page = browser.page(1200, 2600)
    try:
        page.goto(committed_index.as_uri())
        dom = page.evaluate("document.documentElement.outerHTML")
        # no findings table spills past the card: a wide one scrolls inside it (at 1,200 px the calibration
        # scores table was 97.6 px wider than the card)
        spill = page.evaluate(
            """(() => {
              const card = document.getElementById("findings").getBoundingClientRect();
              return [...document.querySelectorAll("#findings table")].map(t => {
                const box = (t.closest(".table-wrap") || t).getBoundingClientRect();
                return box.right - card.right;
              }).filter(over => over > 1);
            })()"""
        )
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "report-index.png"
        page.screenshot(shot)
        assert not page.errors, page.errors
    finally:
        page.close()
    assert not spill, f"findings tables past the card's right edge by {spill} px"
    assert dom.index('id="findings"') < dom.index("<th>notebook</th>")
    assert 'href="19-compare-architectures.html"' in dom and 'href="benchmarks/bench-1.csv"' in dom
    assert shot.stat().st_size > 10_000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(url: str, server: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"JupyterLab did not answer {url} within {timeout} s")


@pytest.fixture(scope="module")
def lab(browser, tmp_path_factory):
    """One JupyterLab server from the project's environment (its own settings and IPC kernels, as
    ``make lab``) on a copy of the committed notebooks, and one Lab tab in the browser; the app is exposed
    to the page (``expose_app_in_browser``) so the probe can reach each chart's Vega view."""
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "notebooks"  # a copy: Lab may write checkpoints and trust records next to it
    root.mkdir()
    for name in NOTEBOOKS:
        shutil.copy(ROOT / "notebooks" / name, root / name)
    port, token = _free_port(), secrets.token_hex(16)
    env = os.environ | {f"JUPYTER_{d}_DIR": str(tmp / d.lower()) for d in ("CONFIG", "DATA")}
    # a kernel's IPC socket paths start with the runtime folder's, and a socket path has at most 107 bytes
    env["JUPYTER_RUNTIME_DIR"] = runtime = tempfile.mkdtemp(prefix="sl-")
    lab_bin = Path(sys.executable).with_name("jupyter-lab")
    log_path = tmp / "jupyterlab.log"
    log = log_path.open("w")
    server = subprocess.Popen([lab_bin, "--no-browser", "--allow-root", f"--port={port}", "--ip=127.0.0.1",
                               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                               "--LabApp.expose_app_in_browser=True"],
                              env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    page = None
    try:
        _wait_for(f"http://127.0.0.1:{port}/api/status?token={token}", server)
        page = browser.page(1400, 2000)
        page.goto(f"http://127.0.0.1:{port}/lab?reset&token={token}")
        page.evaluate(PROBE)
        yield page, log_path
    finally:
        if page is not None:
            page.close()
        server.terminate()
        server.wait(timeout=60)
        log.close()
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_jupyterlab_draws_notebook_charts_readably(name, lab):
    """Each committed notebook opened in JupyterLab: its kernel starts, every chart output is drawn by
    Lab's Vega-Lite renderer (canvas, not the PNG) without a JavaScript error, and every continuous scale
    is readable (the same checks as the report page's)."""
    page, log_path = lab
    expected = chart_count(json.loads((ROOT / "notebooks" / name).read_text()))
    before = len(page.errors)
    try:
        out = page.evaluate(f"storagelabLabCharts({json.dumps(name)}, {expected}, 90000)")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(ARTIFACTS / f"jupyterlab-{Path(name).stem}.png")
    finally:
        page.evaluate("storagelabLabClose()")
    assert out["opened"], "JupyterLab opened the notebook"
    assert not out["kernel_error"] and out["kernel"] == "python3", out["kernel"]
    assert not out["news"], "the news pop-up is off (ci/jupyterlab-overrides.json)"
    assert not out["js_errors"], out["js_errors"]
    assert not page.errors[before:], page.errors[before:]
    assert len(out["charts"]) == expected, (
        f"{len(out['charts'])} of {expected} charts drawn by Lab's renderer"
    )
    assert out["canvases"] >= expected  # vega's canvas, not the static PNG
    problems = problems_of(out["charts"])
    assert not problems, "\n".join(problems)
    server_log = log_path.read_text()
    assert "Kernel started" in server_log, "Lab started the notebook's kernel"
    assert "without encryption" not in server_log  # and it talks over IPC (make lab's configuration)
