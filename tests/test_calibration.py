"""Calibration: the table's shape and pass rule, no over-fitting, reproducible fits and simulations, the
``storagelab calibrate`` command, and the origin tags on every preset parameter.

One real calibration runs (vsan, quick, two replications, ~15 s) in a module fixture; everything else
uses scenario definitions, the MVA fit, or a stubbed :func:`storagelab.calibration.calibrate`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import polars as pl
import pytest
from typer.testing import CliRunner

import storagelab.architectures as architectures
from storagelab import calibration, datasets, devices, units
from storagelab.architectures import ds5020 as ds5020_preset
from storagelab.architectures import vsan as vsan_preset
from storagelab.architectures.topology import Topology
from storagelab.calibration.base import Point, _passes
from storagelab.cli import app
from storagelab.provenance import Param

runner = CliRunner()


@pytest.fixture(scope="module")
def vsan_table() -> pl.DataFrame:
    """The one real calibration of this file: vsan, quick, two replications."""
    return calibration.calibrate("vsan", quick=True, replications=2, seed=1)


def _scenario_points(study: str) -> set[str]:
    return {p.row_id for sc in calibration.scenarios(study) for p in sc.points}


# -- the table ----------------------------------------------------------------------------------------


def test_table_columns_and_roles(vsan_table):
    assert tuple(vsan_table.columns) == calibration.COLUMNS
    assert set(vsan_table["role"].unique()) <= {"fitted", "predicted"}
    assert set(vsan_table["study"].unique()) == {"vsan"}
    fitted = calibration.fitted_points("vsan")
    for point, role in vsan_table.select("point", "role").iter_rows():
        assert role == ("fitted" if point in fitted else "predicted"), point
    assert vsan_table.height == len(_scenario_points("vsan"))


def test_table_published_values_are_the_dataset_rows(vsan_table, published):
    rows = {r["row_id"]: r for r in published.iter_rows(named=True)}
    for r in vsan_table.iter_rows(named=True):
        assert r["point"] in rows, f"{r['point']} is not a row of datasets/"
        src = rows[r["point"]]
        expected = (
            units.convert(src["value"], src["unit"], r["unit"]) if src["unit"] != r["unit"] else src["value"]
        )
        assert r["published"] == pytest.approx(expected, rel=1e-12), r["point"]
        assert r["published"] == Point("vsan", r["point"], "").published
        assert r["metric"] == src["metric"]


def test_pass_is_null_exactly_where_nothing_was_simulated(vsan_table):
    null_pass = vsan_table["pass"].is_null().to_list()
    nan_sim = vsan_table["simulated"].is_nan().to_list()
    assert null_pass == nan_sim


def test_the_simulation_reproduces_its_fitted_points(vsan_table):
    """Consistency of the MVA fit with the simulation: every fitted point within tolerance."""
    fitted = vsan_table.filter(pl.col("role") == "fitted")
    assert fitted.height == len(calibration.fitted_points("vsan")) > 0
    bad = fitted.filter(~pl.col("pass")).select("point", "published", "simulated", "tolerance")
    assert bad.is_empty(), bad


def test_pass_rates_cover_every_simulated_point(vsan_table):
    rates = calibration.pass_rates(vsan_table)
    assert set(rates["role"]) == {"fitted", "predicted"}
    assert rates["points"].sum() == vsan_table["pass"].is_not_null().sum()
    assert rates["within_tolerance"].sum() == vsan_table["pass"].sum()


# -- the pass rule ------------------------------------------------------------------------------------


def test_tolerances_by_unit():
    iops = Point("vsan", "vsan-af-iops-vm64", "IOPS at 64 VMs")
    assert iops.unit == "IOPS" and iops.published == 39500.0
    assert iops.tolerance() == pytest.approx(0.15 * 39500.0)

    share = Point("vsan", "vsan-af-qos2-vm64", "% under 2 ms")
    assert share.unit == "%" and share.published == 86.2
    assert share.tolerance() == 5.0

    latency = Point("ds5020", "ds5020-t2-latency-t1", "read latency")  # 0.014 s in the dataset
    assert latency.row["unit"] == "s"
    assert latency.unit == "ms"
    assert latency.published == pytest.approx(14.0)
    assert latency.tolerance() == pytest.approx(2.8)  # max(20 %, 1 ms)

    small = Point("ds5020", "ds5020-f16-log-log-write-lat", "log write latency")  # 0.0004 s
    assert small.unit == "ms" and small.published == pytest.approx(0.4)
    assert small.tolerance() == pytest.approx(1.0)  # the 1 ms floor wins

    minutes = Point("ds", "ds-runtime", "run time")  # minutes stay minutes
    assert minutes.unit == "min" and minutes.tolerance() == pytest.approx(18.0)


def test_passes_two_sided_and_bounds():
    assert _passes("two-sided", 110.0, 100.0, 10.0)
    assert _passes("two-sided", 90.0, 100.0, 10.0)
    assert not _passes("two-sided", 110.5, 100.0, 10.0)
    assert not _passes("two-sided", 89.5, 100.0, 10.0)

    assert _passes("at-least", 1000.0, 100.0, 10.0)  # "over 100": anything above passes
    assert _passes("at-least", 90.0, 100.0, 10.0)
    assert not _passes("at-least", 89.5, 100.0, 10.0)

    assert _passes("at-most", 0.0, 100.0, 10.0)  # "under 100": anything below passes
    assert _passes("at-most", 110.0, 100.0, 10.0)
    assert not _passes("at-most", 110.5, 100.0, 10.0)


def test_point_rejects_unknown_comparison_and_unknown_row():
    with pytest.raises(ValueError, match="comparison"):
        Point("vsan", "vsan-af-iops-vm64", "x", comparison="roughly")
    with pytest.raises(KeyError, match="no-such-row"):
        _ = Point("vsan", "no-such-row", "x").published


# -- no over-fitting (from the scenario definitions, nothing simulated) --------------------------------


@pytest.mark.parametrize("study", list(calibration.STUDIES))
def test_more_predicted_than_fitted_points(study):
    points = _scenario_points(study)
    fitted = calibration.fitted_points(study)
    assert fitted <= points, f"fitted points no scenario reproduces: {sorted(fitted - points)}"
    predicted = points - fitted
    assert len(predicted) >= len(fitted), (study, sorted(fitted), sorted(predicted))


@pytest.mark.parametrize("study", list(calibration.STUDIES))
def test_scenario_points_are_dataset_rows(study, published):
    ids = set(published["row_id"])
    missing = _scenario_points(study) - ids
    assert not missing, missing
    study_of = dict(zip(published["row_id"].to_list(), published["study"].to_list(), strict=True))
    for sc in calibration.scenarios(study):  # points belong to the study that published them
        assert all(p.study == sc.study == study_of[p.row_id] for p in sc.points)


def test_unknown_study_is_refused():
    with pytest.raises(ValueError, match="vsan"):
        calibration.scenarios("nosuch")
    with pytest.raises(ValueError, match="replications"):
        calibration.calibrate("vsan", replications=1)


# -- reproducibility ----------------------------------------------------------------------------------


def test_vsan_fit_reproduces_the_stored_constants():
    stack, node = calibration.vsan.fit()
    assert stack == pytest.approx(vsan_preset.FITTED_STACK_DELAY_MS, rel=1e-3)
    assert set(node) == set(vsan_preset.FITTED_NODE_SERVICE_US)
    for conf, value in vsan_preset.FITTED_NODE_SERVICE_US.items():
        assert node[conf] == pytest.approx(value, rel=1e-3), conf


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    return a.keys() == b.keys() and all(a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])) for k in a)


def test_a_scenario_is_deterministic_given_its_seed():
    sc = calibration.scenarios("vsan")[0]
    first, second = sc.run(7, True), sc.run(7, True)
    assert first.keys() == {p.row_id for p in sc.points}
    assert _same(first, second), (first, second)


# -- the command --------------------------------------------------------------------------------------


def _must_not_run(*args, **kwargs):
    raise AssertionError("calibrate ran although the input was invalid")


def test_cli_unknown_study_fails_before_running(monkeypatch):
    monkeypatch.setattr(calibration, "calibrate", _must_not_run)
    result = runner.invoke(app, ["calibrate", "--study", "nosuch"])
    assert result.exit_code == 2, result.output
    assert "nosuch" in result.output and "vsan" in result.output and "ds5020" in result.output


def test_cli_too_few_replications_fails_before_running(monkeypatch):
    monkeypatch.setattr(calibration, "calibrate", _must_not_run)
    result = runner.invoke(app, ["calibrate", "--study", "vsan", "--replications", "1"])
    assert result.exit_code == 2, result.output
    assert "replications" in result.output


def test_cli_out_in_a_missing_folder_fails_before_running(monkeypatch, tmp_path):
    monkeypatch.setattr(calibration, "calibrate", _must_not_run)
    missing = tmp_path / "nonexistent" / "dir" / "x.csv"
    result = runner.invoke(app, ["calibrate", "--study", "vsan", "--quick", "--out", str(missing)])
    assert result.exit_code == 2, result.output
    assert str(missing.parent) in result.output
    assert not missing.parent.exists()


def test_cli_writes_the_full_table(monkeypatch, tmp_path, vsan_table):
    calls = []

    def fake(study, *, quick, replications, seed, progress):
        calls.append((study, quick, replications, seed))
        progress("vsan: first scenario")
        return vsan_table

    monkeypatch.setattr(calibration, "calibrate", fake)
    out = tmp_path / "cal.csv"
    result = runner.invoke(
        app, ["calibrate", "--study", "vsan", "--quick", "--replications", "2", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert calls == [("vsan", True, 2, 1)]
    assert "vsan: first scenario" in result.output  # progress, on stderr
    assert "within_tolerance" in result.output  # the pass rates follow the table
    assert f"rows written: {out}" in result.output
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left beside it

    assert out.read_text().splitlines()[0] == ",".join(calibration.COLUMNS)
    written = pl.read_csv(out)
    assert written.height == vsan_table.height
    assert sorted(written["point"]) == sorted(_scenario_points("vsan"))


# -- origin tags on every preset parameter ------------------------------------------------------------


def _presets() -> dict[str, Callable[[], Topology]]:
    presets = getattr(architectures, "PRESETS", None)
    if presets is not None:
        return dict(presets)
    fixed: dict[str, Callable[[], Topology]] = {
        f"vsan {c}": (lambda c=c: vsan_preset.vsan(c)) for c in vsan_preset.CONFIGURATIONS
    }
    fixed["ds5020"] = ds5020_preset.ds5020
    fixed["ds5020 characterization"] = ds5020_preset.ds5020_characterization
    return fixed


@pytest.mark.parametrize("name", list(_presets()))
def test_every_preset_parameter_carries_its_origin(name):
    topology = _presets()[name]()
    assert isinstance(topology, Topology)
    assert topology.params, f"{name}: no parameters"
    for key, p in topology.params.items():
        assert isinstance(p, Param), f"{name}: {key} is not a Param"
        assert p.origin in provenance.ORIGINS, (name, key, p.origin)
        assert p.source.strip(), (name, key)
    fits = {k for k, p in topology.params.items() if p.origin == "fit"}
    assert fits <= set(topology.fitted_on), (
        f"{name}: fitted without saying on what: {fits - set(topology.fitted_on)}"
    )
    rows = set(datasets.load()["row_id"])
    for key, on in topology.fitted_on.items():
        assert on and set(on) <= rows, f"{name}: {key} fitted on unknown rows {set(on) - rows}"


def test_topology_refuses_untagged_or_unexplained_parameters():
    with pytest.raises(ValueError, match="origin"):
        Topology("t", {}, {"x": 3.0})
    with pytest.raises(ValueError, match="fitted on"):
        Topology("t", {}, {"x": Param(1.0, "ms", "fit", "a fit on something")})
    with pytest.raises(ValueError, match="not a fitted parameter"):
        Topology(
            "t", {}, {"x": Param(1.0, "ms", "document", "p. 3")}, fitted_on={"x": ("vsan-af-iops-vm64",)}
        )
    Topology("t", {}, {"x": Param(1.0, "ms", "fit", "a fit")}, fitted_on={"x": ("vsan-af-iops-vm64",)})
