"""What a user sees, checked in a browser: the HTML report's charts, and a notebook's charts opened in
JupyterLab 4 on the project's environment, render as interactive Vega-Lite charts in headless Chromium
(Debian package ``chromium``; skipped with a message when it is not installed). Screenshots are kept
under results/browser-check/."""

from __future__ import annotations

import json
import os
import re
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

from storagelab.charts import SPEC_MIME_TYPE
from storagelab.pipeline.report import render_html

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "results" / "browser-check"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]  # fmt: skip

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed: apt-get install chromium (Debian package)"
)


def _chromium(*args: str, budget_ms: int = 15_000) -> str:
    """Chromium's standard output for ``args``, after ``budget_ms`` of virtual time for the page's scripts."""
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run([CHROMIUM, *FLAGS, f"--virtual-time-budget={budget_ms}", f"--user-data-dir={profile}",
                              *args], capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
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
    _chromium(
        "--window-size=1200,1400", f"--screenshot={ARTIFACTS / 'report-11-vsan-scaling.png'}", page.as_uri()
    )
    assert (ARTIFACTS / "report-11-vsan-scaling.png").stat().st_size > 10_000


def test_report_index_opens_on_its_findings_in_a_browser(committed_index):
    """The index (built from the committed notebooks) as a browser lays it out: the findings, each linking
    to its notebook's page, above the list of notebooks. The screenshot is kept."""
    dom = _chromium("--dump-dom", committed_index.as_uri())
    assert dom.index('id="findings"') < dom.index("<th>notebook</th>")
    assert 'href="19-compare-architectures.html"' in dom and 'href="benchmarks/bench-1.csv"' in dom
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report-index.png"
    _chromium(
        "--window-size=1200,2600", "--hide-scrollbars", f"--screenshot={shot}", committed_index.as_uri()
    )
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


def test_jupyterlab_renders_notebook_charts_interactively(tmp_path):
    """JupyterLab from the project's environment (its own settings and IPC kernels, as ``make lab``)
    opens a committed notebook; every chart output is drawn by Lab's Vega-Lite renderer (not the PNG),
    without a JavaScript error. The window is tall enough that Lab renders every cell."""
    name = "11-vsan-scaling.ipynb"
    root = tmp_path / "notebooks"  # a copy: Lab may write checkpoints and trust records next to it
    root.mkdir()
    shutil.copy(ROOT / "notebooks" / name, root / name)
    nb = json.loads((root / name).read_text())
    charts = sum(SPEC_MIME_TYPE in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
    assert charts >= 3
    port, token = _free_port(), secrets.token_hex(16)
    env = os.environ | {f"JUPYTER_{d}_DIR": str(tmp_path / d.lower()) for d in ("CONFIG", "DATA")}
    # a kernel's IPC socket paths start with the runtime folder's, and a socket path has at most 107 bytes
    env["JUPYTER_RUNTIME_DIR"] = runtime = tempfile.mkdtemp(prefix="sl-")
    lab = Path(sys.executable).with_name("jupyter-lab")
    log = (tmp_path / "jupyterlab.log").open("w")
    server = subprocess.Popen([lab, "--no-browser", "--allow-root", f"--port={port}", "--ip=127.0.0.1",
                               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}"],
                              env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        _wait_for(f"http://127.0.0.1:{port}/api/status?token={token}", server)
        url = f"http://127.0.0.1:{port}/lab/tree/{name}?token={token}"
        dom = _chromium("--window-size=1400,30000", "--dump-dom", url, budget_ms=30_000)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "jupyterlab-11-vsan-scaling.png"
        _chromium("--window-size=1400,2000", f"--screenshot={shot}", url, budget_ms=30_000)
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
        shutil.rmtree(runtime, ignore_errors=True)
    assert "jp-Notebook" in dom, "JupyterLab opened the notebook"
    assert "Error Starting Kernel" not in dom
    assert "Jupyter news" not in dom, "the news pop-up is off (ci/jupyterlab-overrides.json)"
    errors = re.findall(r"Javascript Error: [^<]*", dom)
    assert not errors, errors
    drawn = len(re.findall(r'class="[^"]*jp-RenderedVegaLite[^"]*"', dom))
    assert drawn == charts, f"{drawn} of {charts} charts drawn by Lab's Vega-Lite renderer"
    assert dom.count("<canvas") >= charts  # vega's canvas, not the static PNG
    server_log = (tmp_path / "jupyterlab.log").read_text()
    assert "Kernel started" in server_log, "Lab started the notebook's kernel"
    assert "without encryption" not in server_log  # and it talks over IPC (make lab's configuration)
    assert shot.stat().st_size > 10_000
