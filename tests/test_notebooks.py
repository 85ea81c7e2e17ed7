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


# -- the findings that open the report's index -------------------------------------------------------------


def _tagged(nb: nbformat.NotebookNode, tag: str) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code" and tag in c.metadata.get("tags", [])]


def _soup(html: str):
    from bs4 import BeautifulSoup

    return BeautifulSoup(html, "html.parser")


def _table(table) -> tuple[list[str], list[list[str]]]:
    header = [th.get_text(strip=True) for th in table.thead.find_all("th")]
    return header, [
        [td.get_text(strip=True) for td in tr.find_all(["td", "th"])] for tr in table.tbody.find_all("tr")
    ]


def _shown(cell: nbformat.NotebookNode) -> list[tuple[list[str], list[list[str]]]]:
    """The tables a ``headline-table`` cell displays, read here with BeautifulSoup (not the report's
    parser), with the columns its metadata names, a null shown as a dash."""
    wanted = cell.metadata.get("storagelab", {}).get("headline_columns")
    out = []
    for o in cell.outputs:
        html = o.get("data", {}).get("text/html", "")
        for table in _soup(html).find_all("table"):
            header, rows = _table(table)
            keep = [c for c in wanted if c in header] if wanted else header
            out.append(
                (
                    keep,
                    [
                        ["–" if r[header.index(c)] == "null" else r[header.index(c)] for c in keep]
                        for r in rows
                    ],
                )
            )
    return out


def _readme_bench() -> dict[tuple[str, str], tuple[str, str]]:
    """The README's benchmark table (written from the committed runs by ci/update_readme_bench.py): per
    model and scenario, its x Ciw and x SimPy cells."""
    text = (ROOT / "README.md").read_text()
    block = text[text.index("<!-- bench-table") : text.index("<!-- /bench-table -->")]
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in block.splitlines()[3:]]
    return {(r[0], r[1]): (r[3], r[4]) for r in rows}


def test_the_index_opens_on_the_findings_of_the_committed_notebooks(committed_index):
    """The index starts with the findings: one item per notebook that tags cells ``headline`` or
    ``headline-table``, linking to its page and to each cell there, whose lines are the lines those cells
    print and whose tables are the tables they show (with the columns the cell names); then the benchmark
    ratios, which are the README's (both are written from the committed runs)."""
    html = committed_index.read_text()
    page = _soup(html)
    assert html.index('id="findings"') < html.index("<th>notebook</th>")  # the summary comes first
    parameters = {r.name: r.parameters for r in report_module.plan(ProjectLayout(ROOT))}
    items = 0
    for path in NOTEBOOKS:
        nb, name = nbformat.read(path, as_version=4), path.stem
        printed, tabled = _tagged(nb, "headline"), _tagged(nb, "headline-table")
        item = page.find(id=f"finding-{name}")
        if not (printed or tabled):
            assert item is None
            continue
        items += 1
        assert (
            item.h3.a["href"] == f"{name}.html"
            and item.h3.a.get_text() == report_module.describe(nb, parameters[name])[0]
        )
        cells = [c for c in nb.cells if c in printed or c in tabled]
        links = [a["href"] for a in item.find_all("a") if "#cell-id=" in a["href"]]
        assert set(links) == {f"{name}.html#cell-id={c.id}" for c in cells}
        lines = [
            ln.strip()
            for c in printed
            for o in c.outputs
            if o.get("name") == "stdout"
            for ln in o.text.splitlines()
        ]
        assert [li.find(class_="line").get_text() for li in item.find_all("li")] == [ln for ln in lines if ln]
        assert [_table(t) for t in item.find_all("table")] == [t for c in tabled for t in _shown(c)]
    assert items >= 4

    def item_text(name: str) -> str:
        return page.find(id=f"finding-{name}").get_text(" ", strip=True)

    calibration = [
        li.find(class_="line").get_text() for li in page.find(id="finding-10-calibration").find_all("li")
    ]
    assert [ln.split(":")[0] for ln in calibration] == [
        "In study", "Out of study", "In study, with the model's discrepancy",
        "Out of study, with the model's discrepancy",
    ]  # fmt: skip
    header, rows = _table(
        page.find(id="finding-10-calibration").table
    )  # the scores, raw and with discrepancy
    assert {"scope", "intervals", "claims", "coverage80", "sharpness80", "within_tolerance"} <= set(header)
    assert len(rows) == 4
    header, rows = _table(page.find(id="finding-19-compare-architectures").table)
    assert {"architecture", "headroom", "low", "high", "status", "fails_first", "bottleneck"} <= set(header)
    assert len(rows) >= 5
    # where the bottleneck's capacity comes from: a column once notebook 19 has run with it, until then
    # named as asked for and missing
    assert "bottleneck_capacity" in header or "not in this output: bottleneck_capacity" in item_text(
        "19-compare-architectures"
    )
    # the decision table and the ranking matrix say what they are, with the run's growth target and cap
    captions = [
        p.get_text() for p in page.find(id="finding-19-compare-architectures").find_all(class_="caption")
    ]
    params19 = parameters["19-compare-architectures"]
    assert len(captions) == 2
    assert f"growth target of {params19['growth']:g}x (p_meets_growth)" in captions[0]
    assert f"cap of {params19['high']:g}x" in captions[0]
    assert captions[1].startswith(
        "Each cell: the probability that the row's architecture has a larger headroom"
    )
    header, rows = _table(page.find(id="finding-15-vplex-replication").table)
    assert {"rtt_ms", "delta_ms"} <= set(header)
    assert {"0.0", "1.0", "10.0"} <= {r[header.index("rtt_ms")] for r in rows}
    assert page.find(id="finding-17-qos-promises").find_all("li")

    bench = page.find(id="finding-bench")
    hrefs = [a["href"] for a in bench.find_all("a")]
    assert hrefs == ["benchmarks/bench-1.csv", "benchmarks/bench-2.csv"]
    assert all((committed_index.parent / h).read_bytes() == (ROOT / h).read_bytes() for h in hrefs)
    header, rows = _table(bench.table)
    readme = _readme_bench()
    assert header == ["model", "scenario", "x Ciw", "x SimPy"]
    assert {(m, s): (ciw, simpy) for m, s, ciw, simpy in rows} == {
        k: v for k, v in readme.items() if k[0].startswith("storagelab") and any(v)
    }


def test_a_headline_table_shows_the_columns_its_cell_names_and_says_which_are_missing():
    """A cell tagged ``headline-table`` gives its table's columns in the order its metadata names them,
    without the frame's dtype row; a named column the output lacks (a notebook not re-run since the
    column was added) is listed as missing, not an error. A ``headline`` cell gives its printed lines."""
    html = (  # as a Polars frame shows itself with its dtypes: a second header row
        "<div><style>.dataframe {}</style><small>shape: (2, 3)</small><table class='dataframe'><thead>"
        "<tr><th>a</th><th>b</th><th>c</th></tr><tr><td>f64</td><td>str</td><td>i64</td></tr></thead><tbody>"
        "<tr><td>1.5</td><td>x &lt;= y</td><td>1</td></tr><tr><td>null</td><td>z</td><td>2</td></tr>"
        "</tbody></table></div>"
    )
    new = nbformat.v4
    nb = new.new_notebook(cells=[
        new.new_code_cell("print()", metadata={"tags": ["headline"]},
                          outputs=[new.new_output("stream", name="stdout", text="one\n\n two \n")]),
        new.new_code_cell("frame", metadata={"tags": ["headline-table"], "storagelab": {"headline_columns": ["b", "a", "later"]}},
                          outputs=[new.new_output("display_data", data={"text/html": html, "text/plain": "frame"})]),
    ])  # fmt: skip
    printed, table = report_module.findings(nb)
    assert printed.lines == ["one", "two"] and printed.cell == nb.cells[0].id
    assert (table.columns, table.rows, table.missing, table.caption) == (
        ["b", "a"],
        [["x <= y", "1.5"], ["z", "null"]],
        ["later"],
        "",
    )


def test_a_headline_tables_caption_is_filled_from_the_notebooks_parameters():
    """A ``headline-table`` cell's ``storagelab.headline_caption`` is shown with the parameters the
    notebook ran with filled in; a field naming no parameter is an error that names the cell and the
    parameters there are."""
    html = "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>"
    new = nbformat.v4
    cell = new.new_code_cell(
        "frame",
        metadata={
            "tags": ["headline-table"],
            "storagelab": {"headline_caption": "P(meets {growth:g}x), {n} draws"},
        },
        outputs=[new.new_output("display_data", data={"text/html": html, "text/plain": "frame"})],
    )
    nb = new.new_notebook(cells=[cell])
    (table,) = report_module.findings(nb, {"growth": 2.0, "n": 16, "other": "x"})
    assert table.caption == "P(meets 2x), 16 draws"
    with pytest.raises(ValueError, match=rf"cell {cell.id}: .*headline_caption.*'growth'.*\['n'\]"):
        report_module.findings(nb, {"n": 16})
