"""The HTML report: every notebook executed with its parameters, one page each, and an index page.

The report is built in a temporary folder beside ``reports/`` and moved into place only when every
notebook has run, so a failure (bad parameters, a notebook error) never leaves a half-written report.
All params files are validated before the first notebook starts. Notebooks execute concurrently, one
process each, as many at once as the machine has cores. A notebook whose inputs have not changed since
the last report (its file, its parameters, the package's code and the files beside the notebooks it
reads) is not executed again: its pages are taken from the previous report.

The index opens on the findings (:func:`findings`): what each notebook declares as its result, by tagging
a cell ``headline`` (its printed lines are lifted) or ``headline-table`` (the table it displays; the cell's
``storagelab.headline_columns`` metadata may pick the columns, and its ``storagelab.headline_caption`` says what
the table is, with the run's parameters filled in, e.g. ``{growth:g}``), each linking to the cell on its page, and the
kernel's speed ratios read from the committed benchmark runs (:func:`bench_ratios`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import cache
from html.parser import HTMLParser
from importlib.metadata import version
from pathlib import Path
from typing import Any

import jinja2
import nbformat
from nbconvert import HTMLExporter
from papermill.exceptions import PapermillExecutionError
from tqdm.auto import tqdm

from storagelab.pipeline.layout import ProjectLayout
from storagelab.pipeline.notebooks import execute
from storagelab.pipeline.params import load_params
from storagelab.pipeline.results_store import canonical_json, code_version


class NotebookFailed(RuntimeError):
    """A notebook raised while the report ran; the executed copy is kept at ``executed`` for inspection."""

    def __init__(self, notebook: Path, executed: Path, cause: Exception) -> None:
        self.notebook, self.executed = notebook, executed
        super().__init__(
            f"{notebook.name} failed; no report written. Executed copy with the error: {executed}\n{cause}"
        )


@dataclass
class Finding:
    """What one cell of a notebook declares as a finding: its printed ``lines`` (a cell tagged
    ``headline``), or a table it displays (tagged ``headline-table``: ``columns`` and ``rows`` as the
    notebook shows them; ``missing``: columns the cell asks for that its output does not have; ``caption``:
    what the table is, from the cell's ``storagelab.headline_caption``). ``cell``: the cell's id, which its
    page uses as an anchor."""

    cell: str = ""
    caption: str = ""
    lines: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


@dataclass
class NotebookRun:
    """One notebook's place in the report: where it came from, its parameters, and its outputs."""

    notebook: Path
    params_file: Path
    parameters: dict[str, Any]
    seconds: float = 0.0
    title: str = ""
    summary: str = ""
    files: dict[str, str] = field(default_factory=dict)
    reused: bool = False
    findings: list[Finding] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.notebook.stem


def plan(layout: ProjectLayout, params_files: dict[str, Path] | None = None) -> list[NotebookRun]:
    """Validate the parameters of every notebook (raising :class:`ParamsError` on the first bad file)."""
    params_files = params_files or {}
    runs = []
    for nb in layout.notebook_paths():
        pfile = params_files.get(nb.stem, layout.default_params(nb))
        runs.append(NotebookRun(nb, pfile, load_params(nb, pfile)))
    if not runs:
        raise FileNotFoundError(f"no notebooks in {layout.notebooks}")
    return runs


def _printed(cell: nbformat.NotebookNode) -> list[str]:
    return [
        ln.strip()
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stdout"
        for ln in o.get("text", "").splitlines()
        if ln.strip()
    ]


def headlines(nb: nbformat.NotebookNode) -> list[str]:
    """The printed output of the notebook's cells tagged ``headline`` (computed figures, e.g. the
    calibration's in-study and out-of-study counts), one entry per non-empty line."""
    return [
        ln
        for cell in nb.cells
        if cell.cell_type == "code" and "headline" in cell.metadata.get("tags", [])
        for ln in _printed(cell)
    ]


class _Tables(HTMLParser):
    """The tables of an HTML output (a Polars or pandas frame): per table, its header and its rows, each
    cell's text as shown."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[list[str], list[list[str]]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._head = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self.tables.append(([], []))
        elif tag == "thead":
            self._head = True
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            header, rows = self.tables[-1]
            if self._head and not header:
                header.extend(self._row)
            elif not self._head:  # rows under the header in <thead> (a frame's dtypes) are not data
                rows.append(self._row)
            self._row = None
        elif tag == "thead":
            self._head = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _caption(cell: nbformat.NotebookNode, parameters: Mapping[str, Any]) -> str:
    """The cell's ``storagelab.headline_caption`` with ``parameters`` (the notebook's, as it ran) filled
    in by :meth:`str.format` (``"at {growth:g}x"``); a field that names no parameter is an error naming it."""
    text = cell.metadata.get("storagelab", {}).get("headline_caption", "")
    try:
        return str(text).format_map(parameters)
    except (KeyError, IndexError, ValueError) as err:
        raise ValueError(
            f"cell {cell.get('id', '?')}: storagelab.headline_caption {text!r} cannot be filled from the "
            f"notebook's parameters ({err!r}); its fields name parameters: {sorted(parameters)}"
        ) from None


def _tables(cell: nbformat.NotebookNode, parameters: Mapping[str, Any]) -> list[Finding]:
    """The tables ``cell`` displays, with the columns its ``storagelab.headline_columns`` metadata names
    (in that order; the columns its output lacks listed as missing), else every column, and its caption
    (:func:`_caption`)."""
    wanted = cell.metadata.get("storagelab", {}).get("headline_columns")
    caption = _caption(cell, parameters)
    out = []
    for o in cell.get("outputs", []):
        html = o.get("data", {}).get("text/html", "")
        if "<table" not in html:
            continue
        parser = _Tables()
        parser.feed(html)
        for header, rows in parser.tables:
            keep = [c for c in wanted if c in header] if wanted else header
            index = [header.index(c) for c in keep]
            out.append(Finding(
                cell=cell.get("id", ""), columns=keep, rows=[[r[i] for i in index] for r in rows if len(r) == len(header)],
                missing=[c for c in wanted or [] if c not in header], caption=caption,
            ))  # fmt: skip
    return out


def findings(nb: nbformat.NotebookNode, parameters: Mapping[str, Any] | None = None) -> list[Finding]:
    """What the notebook declares as its findings, in cell order: the printed lines of each cell tagged
    ``headline`` and the tables of each cell tagged ``headline-table`` (see :func:`_tables`; their captions
    filled in from ``parameters``, the notebook's as it ran)."""
    out = []
    for cell in nb.cells:
        tags = cell.metadata.get("tags", []) if cell.cell_type == "code" else []
        if "headline" in tags and (lines := _printed(cell)):
            out.append(Finding(cell=cell.get("id", ""), lines=lines))
        if "headline-table" in tags:
            out += _tables(cell, parameters or {})
    return out


@dataclass
class BenchRatios:
    """The kernel's speed against Ciw and SimPy from the committed ``storagelab bench`` runs (``files``):
    per storagelab row with a ratio, its model, scenario and the ratios of each run (run 1 / run 2)."""

    files: list[Path]
    columns: list[str]
    rows: list[list[str]]


def _runs_cell(values: list[float | None], fmt: str) -> str:
    return (
        ""
        if all(v is None for v in values)
        else " / ".join("" if v is None else format(v, fmt) for v in values)
    )


def bench_ratios(root: Path) -> BenchRatios | None:
    """The ratios of the committed benchmark runs ``benchmarks/bench-*.csv`` under ``root``, for each
    storagelab row that has one, each as the README's table shows it (``ci/update_readme_bench.py``:
    run 1 / run 2); None when there are no runs."""
    import polars as pl

    files = sorted((root / "benchmarks").glob("bench-*.csv"))
    if not files:
        return None
    runs = [{(r["model"], r["scenario"]): r for r in pl.read_csv(f).iter_rows(named=True)} for f in files]
    rows = []
    for model, scenario in runs[0]:
        each = [run.get((model, scenario), {}) for run in runs]
        ciw, simpy = ([r.get(k) for r in each] for k in ("ratio_to_ciw", "ratio_to_simpy"))
        if model.startswith("storagelab") and any(v is not None for v in ciw + simpy):
            rows.append([model, scenario, _runs_cell(ciw, ".1f"), _runs_cell(simpy, ".2f")])
    return BenchRatios(files, ["model", "scenario", "x Ciw", "x SimPy"], rows)


def _title_and_summary(nb: nbformat.NotebookNode, limit: int = 300) -> tuple[str, str]:
    """The first markdown heading, and the paragraph after it cut at a word boundary (the notebook's
    :func:`findings` open the index, above the list of notebooks)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            lines = [ln.strip() for ln in cell.source.splitlines() if ln.strip()]
            if lines and lines[0].startswith("#"):
                body = " ".join(ln for ln in lines[1:] if not ln.startswith("#")).replace("`", "")
                if len(body) > limit:
                    body = body[:limit].rsplit(" ", 1)[0] + " …"
                return lines[0].lstrip("# "), body
    return "", ""


def describe(
    nb: nbformat.NotebookNode, parameters: Mapping[str, Any] | None = None
) -> tuple[str, str, list[Finding]]:
    """An executed notebook's title, summary and findings (``parameters``: the notebook's, as it ran), as
    the index shows them."""
    return (*_title_and_summary(nb), findings(nb, parameters))


def inputs_key(run: NotebookRun) -> str:
    """A hash of everything a notebook's outputs depend on: the notebook, its parameters, the package's
    code and datasets, and the data files beside the notebooks (the committed calibration run)."""
    h = hashlib.sha256()
    h.update(run.notebook.read_bytes())
    h.update(canonical_json(run.parameters).encode())
    h.update(code_version().encode())
    for f in sorted(run.notebook.parent.glob("*.csv")):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def without_default_parameters(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook as a reader should see it: when papermill injected parameters, the injected cell
    (the values used) replaces the defaults cell instead of following it."""
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    if any("injected-parameters" in t for t in tags):
        nb = nbformat.from_dict(nb)
        nb.cells = [c for c, t in zip(nb.cells, tags, strict=True) if "parameters" not in t]
    return nb


#: Embeds every chart of a page from its Vega-Lite spec, replacing the static PNG it starts with (which
#: stays if scripts are off). ``data-rendered`` marks a chart drawn, ``data-error`` one that failed; the
#: element keeps vega-embed's result (its Vega view and compiled spec) as ``vegaEmbed``, for a reader's
#: browser console and the browser check's probe of scales and marks (tests/vega_probe.js).
_EMBED_SNIPPET = """
for (const el of document.querySelectorAll('.storagelab-chart')) {
  const spec = JSON.parse(el.dataset.spec);
  vegaEmbed(el, spec, {actions: false, renderer: 'svg'})
    .then((result) => { el.vegaEmbed = result; el.dataset.rendered = 'true'; })
    .catch((err) => { el.dataset.error = String(err); });
}
"""


@cache
def _vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed in one script, with the snippet above (no network needed)."""
    import vl_convert

    from storagelab.charts import VEGA_LITE_VERSION

    return vl_convert.javascript_bundle(_EMBED_SNIPPET, vl_version=VEGA_LITE_VERSION)


def interactive_charts(nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, int]:
    """The notebook with each chart output (its Vega-Lite spec and PNG) turned into an HTML block that the
    page's script renders as an interactive chart (tooltips, pan and zoom); the PNG is its fallback.
    Returns the notebook and the number of charts."""
    from html import escape

    from storagelab.charts import SPEC_MIME_TYPE

    nb, n = nbformat.from_dict(nb), 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if SPEC_MIME_TYPE in data and "image/png" in data:
                spec = json.dumps(data[SPEC_MIME_TYPE], separators=(",", ":"))
                alt_text = escape(str(data.get("text/plain", "chart")))
                out["data"] = {"text/html": (
                    f'<div class="storagelab-chart" data-spec="{escape(spec)}">'
                    f'<img src="data:image/png;base64,{data["image/png"]}" alt="{alt_text}"></div>'
                )}  # fmt: skip
                n += 1
    return nb, n


def render_html(nb: nbformat.NotebookNode, path: Path) -> None:
    """The page a reader sees: the injected parameters in place of the defaults, charts interactive."""
    nb, charts = interactive_charts(without_default_parameters(nb))
    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb)
    if charts:
        body = body.replace("</body>", f"<script>{_vega_bundle()}</script>\n</body>", 1)
    path.write_text(body, encoding="utf-8")


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _write_index(runs: list[NotebookRun], path: Path, bench: BenchRatios | None = None) -> None:
    """The index page: the findings (each notebook's, linking to the cell on its page; the benchmark
    ratios, linking to the runs copied beside the index), then every notebook with its parameters."""
    from markupsafe import Markup
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("storagelab", "templates"),
        autoescape=True,  # select_autoescape() would leave a .html.j2 template unescaped
    )
    items = [
        {
            "name": r.name,
            "title": r.title or r.name,
            "summary": Markup(markdown2html_mistune(r.summary)),  # the notebook's own markdown, rendered
            "html": r.files["html"],
            "ipynb": r.files["ipynb"],
            "params_file": _relative(r.params_file),
            "parameters": r.parameters,
            "seconds": r.seconds,
            "reused": r.reused,
        }
        for r in runs
    ]
    found = [
        {"name": r.name, "title": r.title or r.name, "html": r.files["html"], "findings": r.findings}
        for r in runs
        if r.findings
    ]
    html = env.get_template("index.html.j2").render(
        notebooks=items, findings=found, bench=bench, version=version("storagelab")
    )
    path.write_text(html, encoding="utf-8")


def _copy_bench(bench: BenchRatios | None, staging: Path) -> BenchRatios | None:
    """Copy the benchmark runs into the report (``benchmarks/``), so the index links to what it read."""
    if bench is None:
        return None
    (staging / "benchmarks").mkdir(exist_ok=True)
    for f in bench.files:
        shutil.copy2(f, staging / "benchmarks" / f.name)
    return bench


def _execute_and_render(
    notebook: Path, staging: Path, parameters: dict[str, Any]
) -> tuple[float, str, str, list[Finding]]:
    """Run one notebook into ``staging`` and render its page (in a worker process); return the run
    time, and its title, summary and findings (:func:`describe`)."""
    start = time.perf_counter()
    executed = staging / f"{notebook.stem}.ipynb"
    nb = execute(notebook, executed, parameters, progress=False)
    seconds = time.perf_counter() - start
    render_html(nb, staging / f"{notebook.stem}.html")
    return seconds, *describe(nb, parameters)


def _reuse(run: NotebookRun, key: str, previous: Path, staging: Path) -> bool:
    """Copy the notebook's pages from the previous report when they were made from the same inputs."""
    files = [previous / f"{run.name}.{ext}" for ext in ("key", "ipynb", "html")]
    if not all(f.is_file() for f in files) or files[0].read_text().split()[0] != key:
        return False
    for f in files:
        shutil.copy2(f, staging / f.name)
    run.seconds = float(files[0].read_text().split()[1])
    run.title, run.summary, run.findings = describe(nbformat.read(files[1], as_version=4), run.parameters)
    run.reused = True
    return True


def build_report(
    layout: ProjectLayout,
    out_dir: Path | None = None,
    params_files: dict[str, Path] | None = None,
    *,
    jobs: int | None = None,
    reuse: bool = True,
) -> Path:
    """Execute every notebook (``jobs`` at once, default: the cores) and write the HTML report; return the
    path of ``index.html``. With ``reuse``, notebooks whose inputs are unchanged since the previous report
    in ``out_dir`` are not executed again."""
    runs = plan(layout, params_files)  # fails fast, before any kernel starts
    out_dir = out_dir or layout.reports
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    keys = {r.name: inputs_key(r) for r in runs}
    try:
        todo = [r for r in runs if not (reuse and _reuse(r, keys[r.name], out_dir, staging))]
        for r in runs:
            if r.reused:
                tqdm.write(f"{r.notebook.name}: inputs unchanged, pages taken from the previous report")
        jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(_execute_and_render, r.notebook, staging, r.parameters): r for r in todo}
            for fut in tqdm(as_completed(futures), total=len(futures), desc="notebooks", unit="nb"):
                run = futures[fut]
                try:
                    run.seconds, run.title, run.summary, run.findings = fut.result()
                except PapermillExecutionError as err:
                    for other in futures:
                        other.cancel()
                    executed = staging / f"{run.name}.ipynb"
                    kept = layout.root / "results" / "failed" / executed.name
                    kept.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(executed, kept)
                    raise NotebookFailed(run.notebook, kept, err) from None
                tqdm.write(f"{run.notebook.name} ({run.params_file.name}): {run.seconds:.1f} s")
                (staging / f"{run.name}.key").write_text(f"{keys[run.name]} {run.seconds:.3f}\n")
        for run in runs:
            run.files = {"html": f"{run.name}.html", "ipynb": f"{run.name}.ipynb"}
        _write_index(runs, staging / "index.html", _copy_bench(bench_ratios(layout.root), staging))
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir / "index.html"
