"""The HTML report: every notebook executed with its parameters, one page each, and an index page.

The report is built in a temporary folder beside ``reports/`` and moved into place only when every
notebook has run, so a failure (bad parameters, a notebook error) never leaves a half-written report.
All params files are validated before the first notebook starts.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
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


class NotebookFailed(RuntimeError):
    """A notebook raised while the report ran; the executed copy is kept at ``executed`` for inspection."""

    def __init__(self, notebook: Path, executed: Path, cause: Exception) -> None:
        self.notebook, self.executed = notebook, executed
        super().__init__(
            f"{notebook.name} failed; no report written. Executed copy with the error: {executed}\n{cause}"
        )


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


def _title_and_summary(nb: nbformat.NotebookNode, limit: int = 300) -> tuple[str, str]:
    """The first markdown heading, and the paragraph after it cut at a word boundary."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            lines = [ln.strip() for ln in cell.source.splitlines() if ln.strip()]
            if lines and lines[0].startswith("#"):
                body = " ".join(ln for ln in lines[1:] if not ln.startswith("#")).replace("`", "")
                if len(body) > limit:
                    body = body[:limit].rsplit(" ", 1)[0] + " …"
                return lines[0].lstrip("# "), body
    return "", ""


def render_html(nb: nbformat.NotebookNode, path: Path) -> None:
    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb)
    path.write_text(body, encoding="utf-8")


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _write_index(runs: list[NotebookRun], path: Path) -> None:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("storagelab", "templates"), autoescape=jinja2.select_autoescape()
    )
    items = [
        {
            "name": r.name,
            "title": r.title or r.name,
            "summary": r.summary,
            "html": r.files["html"],
            "ipynb": r.files["ipynb"],
            "params_file": _relative(r.params_file),
            "parameters": r.parameters,
            "seconds": r.seconds,
        }
        for r in runs
    ]
    html = env.get_template("index.html.j2").render(notebooks=items, version=version("storagelab"))
    path.write_text(html, encoding="utf-8")


def build_report(
    layout: ProjectLayout, out_dir: Path | None = None, params_files: dict[str, Path] | None = None
) -> Path:
    """Execute every notebook and write the HTML report; return the path of ``index.html``."""
    runs = plan(layout, params_files)  # fails fast, before any kernel starts
    out_dir = out_dir or layout.reports
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    try:
        for run in tqdm(runs, desc="notebooks", unit="nb"):
            tqdm.write(f"running {run.notebook.name} with {run.params_file.name}")
            start = time.perf_counter()
            executed = staging / f"{run.name}.ipynb"
            try:
                nb = execute(
                    run.notebook, executed, run.parameters, progress={"desc": f"  {run.name}", "leave": False}
                )
            except PapermillExecutionError as err:
                kept = layout.root / "results" / "failed" / executed.name
                kept.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(executed, kept)
                raise NotebookFailed(run.notebook, kept, err) from None
            run.seconds = time.perf_counter() - start
            run.title, run.summary = _title_and_summary(nb)
            render_html(nb, staging / f"{run.name}.html")
            run.files = {"html": f"{run.name}.html", "ipynb": f"{run.name}.ipynb"}
        _write_index(runs, staging / "index.html")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir / "index.html"
