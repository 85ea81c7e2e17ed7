"""The report pipeline (papermill with a params file, pages, reuse of unchanged notebooks) on a small
project, and the hygiene of the committed notebooks. Whether each notebook reproduces its committed outputs
is nbval's job (ci/test.sh), so no notebook runs twice with the same parameters."""

from __future__ import annotations

import configparser
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from storagelab import charts
from storagelab.pipeline import report as report_module
from storagelab.pipeline.layout import ProjectLayout
from storagelab.pipeline.report import build_report

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
IGNORED_MIME = {"image/png"}  # as nbval: pixels are not compared; the spec they are drawn from is


def sanitizer() -> list[tuple[re.Pattern, str]]:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "ci" / "nbval_sanitize.cfg")
    return [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]


def comparable(nb: nbformat.NotebookNode) -> list[list[dict]]:
    """Per code cell (the injected-parameters cell dropped), its outputs as nbval compares them."""
    subs = sanitizer()

    def clean(value):
        if isinstance(value, str):
            for rx, rep in subs:
                value = rx.sub(rep, value)
        return value

    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code" or "injected-parameters" in cell.metadata.get("tags", []):
            continue
        outs = []
        for o in cell.outputs:
            item = {"type": o.output_type}
            if "data" in o:
                item |= {k: clean(v) for k, v in o.data.items() if k not in IGNORED_MIME}
            if "text" in o:
                item["text"] = clean(o.text)
            outs.append(item)
        cells.append(outs)
    return cells


def _small_project(tmp_path: Path) -> tuple[ProjectLayout, Path]:
    """A project with one real notebook (00-published-results) and a params file of other values than
    its defaults, so the report pipeline is tested without executing any notebook with the parameters
    nbval already runs it with."""
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "params").mkdir()
    shutil.copy(ROOT / "notebooks" / "00-published-results.ipynb", root / "notebooks")
    (root / "params" / "00-published-results.yaml").write_text("studies: [vsan]\nconfidence: 0.9\n")
    return ProjectLayout(root), root / "reports"


def test_report_executes_with_the_params_file_and_reuses_unchanged_pages(tmp_path, monkeypatch):
    layout, out = _small_project(tmp_path)
    index = build_report(layout, out)
    assert 'href="00-published-results.html"' in index.read_text()
    executed = nbformat.read(out / "00-published-results.ipynb", as_version=4)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "confidence = 0.9" in injected[0].source
    page = (out / "00-published-results.html").read_text()
    assert "data:image/png;base64," in page  # charts are visible offline, as static images
    assert (
        "defaults in params/00-published-results.yaml" not in page
    )  # the injected cell replaces the defaults
    shown = report_module.without_default_parameters(executed)
    assert [c.metadata.get("tags", []) for c in shown.cells].count(["injected-parameters"]) == 1
    assert not any("parameters" in c.metadata.get("tags", []) for c in shown.cells)
    first = (out / "00-published-results.key").read_text()

    class NoPool:  # a second report with nothing changed must execute nothing
        def __init__(self, *args, **kwargs):
            self.submitted = []

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, *args, **kwargs):
            raise AssertionError("an unchanged notebook was executed again")

    monkeypatch.setattr(report_module, "ProcessPoolExecutor", NoPool)
    index = build_report(layout, out)
    assert "inputs unchanged" in index.read_text()
    assert (out / "00-published-results.key").read_text() == first

    (layout.params / "00-published-results.yaml").write_text("studies: [vsan]\nconfidence: 0.8\n")
    with pytest.raises(AssertionError, match="executed again"):  # changed parameters: executed again
        build_report(layout, out)
    assert (out / "00-published-results.key").read_text() == first  # the failed build left the report


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_is_clean(notebook):
    nb = json.loads(notebook.read_text())
    assert "papermill" not in nb["metadata"]
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["execution_count"] is not None for c in code), "not executed top to bottom"
    assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1))
    for c in code:
        assert not {"papermill", "execution"} & set(c["metadata"])
        for o in c["outputs"]:
            assert o["output_type"] != "error"
            assert not (o["output_type"] == "stream" and o["name"] == "stderr"), (
                "warnings in committed outputs"
            )
            spec = o.get("data", {}).get(charts.SPEC_MIME_TYPE)
            if spec is not None:
                assert not re.search(r'"(view|param)_\d+|"view_[0-9a-f]{8,}', json.dumps(spec))
