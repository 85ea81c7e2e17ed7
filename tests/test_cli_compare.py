"""``storagelab compare``: the decision under uncertainty from the command line, and bad options refused
before any search runs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest
from typer.testing import CliRunner

from storagelab.analysis import comparison
from storagelab.calibration.discrepancy import Band
from storagelab.cli import app

ROOT = Path(__file__).resolve().parents[1]
MIX = str(ROOT / "params" / "19-compare-architectures.yaml")
CALIBRATION = str(ROOT / "notebooks" / "calibration-quick.csv")
runner = CliRunner()


def _must_not_run(*args, **kwargs):
    raise AssertionError("compare ran although the options were invalid")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([], ["--measured", "--preset"]),
        (["--preset", "EqualLogic PS6100E", "--uncertainty", "4"], ["--uncertainty", "more than 8", "4"]),
        (["--preset", "EqualLogic PS6100E", "--uncertainty", "-1"], ["--uncertainty"]),
        (["--preset", "EqualLogic PS6100E", "--uncertainty", "16", "--growth", "0"], ["--growth", "0"]),
        (["--preset", "EqualLogic PS6100E", "--discrepancy-from", CALIBRATION], ["--discrepancy-from"]),
        (["--preset", "EqualLogic PS6100E", "--workers", "0"], ["--workers"]),
        (["--preset", "no such preset"], ["no such preset"]),
        (
            ["--preset", "EqualLogic PS6100E", "--uncertainty", "16", "--discrepancy-from", "missing.csv"],
            ["missing.csv"],
        ),
    ],
)
def test_bad_options_fail_before_any_search(monkeypatch, args, words):
    monkeypatch.setattr(comparison, "compare", _must_not_run)
    result = runner.invoke(app, ["compare", MIX, *args])
    assert result.exit_code == 2, result.output
    assert all(w in result.output for w in words), result.output


def test_uncertainty_growth_band_seed_and_workers_reach_the_comparison(monkeypatch):
    calls = []

    class FakeDecision:
        def table(self):
            return pl.DataFrame(
                {"architecture": ["EqualLogic PS6100E"], "headroom": [0.125], "p_meets_1x": [0.0]}
            )

        def pairwise(self):
            return pl.DataFrame({"architecture": ["EqualLogic PS6100E"], "EqualLogic PS6100E": [None]})

        def what_to_measure(self):
            return pl.DataFrame({"architecture": ["EqualLogic PS6100E"], "parameter": ["drive_rpm_marker"]})

    def fake(mix, candidates, settings, *, workers, uncertainty, growth, discrepancy):
        calls.append((mix.name, [c.label for c in candidates], settings.seed, workers, uncertainty, growth,
                      discrepancy))  # fmt: skip
        return SimpleNamespace(table=lambda: pl.DataFrame({"architecture": ["x"]}), decision=FakeDecision())

    monkeypatch.setattr(comparison, "compare", fake)
    result = runner.invoke(
        app,
        ["compare", MIX, "--preset", "EqualLogic PS6100E", "--uncertainty", "16", "--growth", "3",
         "--discrepancy-from", CALIBRATION, "--seed", "7", "--workers", "1"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    [(name, labels, seed, workers, draws, growth, band)] = calls
    assert (labels, seed, workers, draws, growth) == (["EqualLogic PS6100E"], 7, 1, 16, 3.0)
    assert name == "NexGen study mix"
    assert isinstance(band, Band)
    assert "decision under uncertainty" in result.output
    assert "drive_rpm_marker" in result.output  # what to measure
    assert "P(the row's headroom > the column's)" in result.output


def test_without_uncertainty_no_decision_is_printed(monkeypatch):
    def fake(mix, candidates, settings, *, workers, uncertainty, growth, discrepancy):
        assert (uncertainty, discrepancy) == (0, None)
        return SimpleNamespace(table=lambda: pl.DataFrame({"architecture": ["x"]}), decision=None)

    monkeypatch.setattr(comparison, "compare", fake)
    result = runner.invoke(app, ["compare", MIX, "--preset", "EqualLogic PS6100E"])
    assert result.exit_code == 0, result.output
    assert "decision under uncertainty" not in result.output
