"""The committed calibration run (notebooks/calibration-quick.csv) is what the code produces, and the
README's table is generated from it: every count a user sees comes from one run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from storagelab import studies
from storagelab.calibration import CalibrationResult

ROOT = Path(__file__).resolve().parents[1]

COMMITTED = ROOT / "notebooks" / "calibration-quick.csv"


def _readme_tool():
    spec = importlib.util.spec_from_file_location(
        "update_readme", ROOT / "ci" / "update_readme_calibration.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_table_is_generated_from_the_committed_run():
    block = _readme_tool().block()
    assert block in (ROOT / "README.md").read_text(encoding="utf-8"), (
        "README's calibration table differs from notebooks/calibration-quick.csv; run `make calibration` "
        f"(or python ci/update_readme_calibration.py). Expected:\n{block}"
    )


def test_committed_run_has_every_point():
    result = CalibrationResult.read_csv(COMMITTED)
    points = {p.key for sc in studies.scenarios() for p in sc.points}
    assert set(result.to_frame()["point"]) == points
    assert result.to_frame()["sensitive"].null_count() == 0


@pytest.mark.slow
def test_committed_run_is_reproduced(tmp_path):
    """Re-run the quick calibration and compare, as written to CSV."""
    fresh = studies.calibrate(quick=True, replications=3, perturbed_replications=1, seed=1)
    out = fresh.to_csv(tmp_path / "fresh.csv")
    assert out.read_text() == COMMITTED.read_text(), (
        "re-run differs from the committed table: `make calibration`"
    )
