"""The storagelab command: fails fast and cleanly on bad input, and leaves no half-written report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from storagelab.cli import app
from storagelab.pipeline.layout import ProjectLayout
from storagelab.pipeline.report import NotebookFailed, build_report

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A throw-away copy of the project's notebooks and params, used as the working project."""
    for sub in ("notebooks", "params"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    monkeypatch.setenv("STORAGELAB_ROOT", str(tmp_path))
    return tmp_path


def test_report_with_a_bad_params_file_fails_before_running_anything(project):
    (project / "params" / "00-published-results.yaml").write_text("confidence: 2\n")
    result = runner.invoke(app, ["report"])
    assert result.exit_code == 2
    assert "00-published-results.yaml" in result.output and "key 'confidence'" in result.output
    assert not (project / "reports").exists()
    assert list(project.glob(".reports-*")) == []


def test_run_with_a_bad_params_file_names_file_and_key(project, tmp_path):
    bad = tmp_path / "mine.yaml"
    bad.write_text("studies: [vsan]\nmax_populaton: 64\n")
    out = tmp_path / "out.ipynb"
    result = runner.invoke(app, ["run", "00-published-results", "-p", str(bad), "-o", str(out)])
    assert result.exit_code == 2
    assert str(bad) in result.output and "key 'max_populaton'" in result.output
    assert not out.exists()


def test_run_with_a_missing_params_file_or_notebook(project):
    result = runner.invoke(app, ["run", "00-published-results", "-p", "nope.yaml"])
    assert result.exit_code == 2 and "params file not found" in result.output
    result = runner.invoke(app, ["run", "07-nothing"])
    assert (
        result.exit_code == 2
        and "notebook '07-nothing' not found; notebooks: 00-published-results" in result.output
    )


def test_check_params_accepts_the_defaults(project):
    result = runner.invoke(app, ["check-params", str(project / "params" / "00-published-results.yaml")])
    assert result.exit_code == 0, result.output
    assert "ok" in result.output


def test_a_failing_notebook_leaves_no_report_and_keeps_the_failed_copy(project):
    nb_path = project / "notebooks" / "00-published-results.ipynb"
    nb = json.loads(nb_path.read_text())
    nb["cells"].insert(
        3,
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "boom",
            "metadata": {},
            "outputs": [],
            "source": "raise RuntimeError('storage on fire')",
        },
    )
    nb_path.write_text(json.dumps(nb))
    with pytest.raises(NotebookFailed, match=r"00-published-results\.ipynb failed; no report written") as err:
        build_report(ProjectLayout(project))
    assert not (project / "reports").exists()
    assert list(project.glob(".reports-*")) == []
    assert "storage on fire" in err.value.executed.read_text()
