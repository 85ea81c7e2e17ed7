"""The papermill smoke run: the report executes every notebook with its params/ file, and the outputs
equal the committed ones (after the same sanitizing nbval applies). Also notebook hygiene."""

from __future__ import annotations

import configparser
import json
import re
from pathlib import Path

import nbformat
import pytest

from storagelab import charts
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


@pytest.fixture(scope="module")
def report(layout, tmp_path_factory) -> Path:
    """Build the whole report once, exactly as `storagelab report` does, into a temporary folder."""
    return build_report(layout, tmp_path_factory.mktemp("report") / "reports")


def test_report_has_an_index_linking_every_notebook(report):
    index = report.read_text()
    for nb in NOTEBOOKS:
        assert f'href="{nb.stem}.html"' in index
        page = (report.parent / f"{nb.stem}.html").read_text()
        assert "data:image/png;base64," in page  # charts are visible offline, as static images
        assert (report.parent / f"{nb.stem}.ipynb").is_file()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_default_params_reproduce_the_committed_outputs(report, notebook):
    executed = nbformat.read(report.parent / notebook.name, as_version=4)
    committed = nbformat.read(notebook, as_version=4)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected, "papermill injected the params file's values"
    got, want = comparable(executed), comparable(committed)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"{notebook.name}: code cell {i} differs from the committed output (run: make refresh)"


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
