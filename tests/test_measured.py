"""A user's own system: measuring with real fio (safe by default), fio JSON in, the fit (recovering a known
model's parameters within their intervals), the check on held-back points, and the fitted model as a
candidate in the comparison. Real fio runs are skipped with a message when fio is not installed. No
assertion is on the measured figures: a shared machine cannot promise them."""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from storagelab.calibration.claims import tolerance as calibration_tolerance
from storagelab.cli import app
from storagelab.measured.check import share_within, simulated_rows, tolerance
from storagelab.measured.model import fit, simulate_job, split
from storagelab.measured.plan import QUICK_PLAN, Plan, PlanError, load_plan
from storagelab.measured.results import COLUMNS, FioResultError, read_fio_json
from storagelab.measured.run import MEASUREMENTS, PROVENANCE, measure
from storagelab.measured.system import MeasuredSystem
from storagelab.measured.target import Allow, UnsafeTarget, check_target
from storagelab.provenance import Param

runner = CliRunner()
needs_fio = pytest.mark.skipif(
    shutil.which("fio") is None, reason="fio is not installed: apt-get install fio (Debian package)"
)


def _block_device() -> str | None:
    for p in ("/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1", "/dev/xvda"):
        try:
            if stat.S_ISBLK(os.stat(p).st_mode):
                return p
        except OSError:
            continue
    return None


def _mounted_block_device() -> str | None:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        source = line.partition(" - ")[2].split()[1:2]
        if source and source[0].startswith("/dev/"):
            try:
                if stat.S_ISBLK(os.stat(source[0]).st_mode):
                    return source[0]
            except OSError:
                continue
    return None


# --- safety -------------------------------------------------------------------------------------------


def test_a_block_device_is_refused_before_it_is_opened(tmp_path):
    dev = _block_device()
    if dev is None:
        pytest.skip("no block device on this machine")
    with pytest.raises(UnsafeTarget, match=r"block device.*--allow-block-device"):
        check_target(dev, 2**20, tmp_path)
    result = runner.invoke(app, ["measure", dev, "--quick", "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "--allow-block-device" in result.output
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_a_mounted_device_is_refused_even_with_the_block_device_flag(tmp_path):
    dev = _mounted_block_device()
    if dev is None:
        pytest.skip("no mounted block device on this machine")
    with pytest.raises(UnsafeTarget, match=r"in use: .*mounted.*--allow-mounted-device"):
        check_target(dev, 2**20, tmp_path, Allow(block_device=True))
    result = runner.invoke(
        app, ["measure", dev, "--quick", "--allow-block-device", "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "--allow-mounted-device" in result.output


def test_an_existing_file_the_command_did_not_create_is_refused(tmp_path):
    mine = tmp_path / "precious.dat"
    mine.write_bytes(b"important" * 1000)
    with pytest.raises(UnsafeTarget, match=r"did not create.*--allow-existing-file"):
        check_target(mine, 1000, tmp_path / "out")
    result = runner.invoke(app, ["measure", str(mine), "--quick", "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "--allow-existing-file" in result.output
    assert mine.read_bytes() == b"important" * 1000
    assert check_target(mine, 1000, tmp_path / "out", Allow(existing_file=True)) == "existing file"


def test_a_size_beyond_the_free_space_is_refused(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    with pytest.raises(UnsafeTarget, match=r"does not fit the free space.*--allow-filling-disk"):
        check_target(tmp_path / "big.dat", free * 2, tmp_path / "out")
    assert not (tmp_path / "big.dat").exists()
    assert check_target(tmp_path / "small.dat", 2**20, tmp_path / "out") == "new file"


def test_a_folder_is_never_a_target(tmp_path):
    with pytest.raises(UnsafeTarget, match="neither a regular file nor a block device"):
        check_target(tmp_path, 2**20, tmp_path / "out", Allow(True, True, True, True))


# --- plans and fio JSON in ----------------------------------------------------------------------------


def test_a_bad_plan_names_the_file_and_the_key(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(
        "size: 16M\nruntime_s: 1\nramp_s: 0\njobs: [{read_pct: 150, block_size: 4K, iodepth: 1}]\n"
    )
    with pytest.raises(PlanError, match=r"(?s)plan.yaml.*jobs\.0\.read_pct"):
        load_plan(path)
    path.write_text(
        "size: 16M\nruntime_s: 1\nramp_s: 0\ngrids: [{read_pct: [100, 0], block_size: 4K, iodepth: [1, 8]}]\n"
    )
    assert [j.name for j in load_plan(path).planned()] == [
        "rand-r100-4k-qd1", "rand-r100-4k-qd8", "rand-r0-4k-qd1", "rand-r0-4k-qd8",
    ]  # fmt: skip


def _fio_json(**change) -> dict:
    side = {"total_ios": 100, "runtime": 1000, "iops": 100.0, "iops_stddev": 1.0, "iops_samples": 4,
            "bw_bytes": 409600, "bw_dev": 1.0, "bw_samples": 4, "io_bytes": 409600,
            "lat_ns": {"mean": 1e6}, "clat_ns": {"mean": 9e5, "percentile": {"50.000000": 900000}}}  # fmt: skip
    empty = dict(side, total_ios=0)
    job = {"jobname": "j", "error": 0, "job options": {"rw": "randread", "bs": "4k", "iodepth": "4"},
           "read": side, "write": empty}  # fmt: skip
    data = {"fio version": "fio-3.33", "jobs": [job]}
    for k, v in change.items():
        if k == "job":
            job.update(v)
        else:
            data[k] = v
    return data


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json at all", "not valid JSON"),
        (json.dumps({"jobs": []}), "no 'fio version'"),
        (json.dumps(_fio_json(**{"fio version": "fio-2.21"})), "fio-2.21.*not supported.*fio 3.x"),
        (json.dumps(_fio_json(jobs=[])), "no 'jobs' list"),
        (json.dumps(_fio_json(job={"error": 5})), "error 5"),
        (json.dumps(_fio_json(job={"read": {"total_ios": 3}})), r"job 'j', read: missing or unreadable key"),
        (json.dumps(_fio_json(job={"job options": {"rw": "trim"}})), "rw='trim' is not supported"),
    ],
)
def test_import_fio_refuses_malformed_or_unsupported_json_naming_the_file(tmp_path, content, message):
    path = tmp_path / "result.json"
    path.write_text(content)
    with pytest.raises(FioResultError, match=message):
        read_fio_json(path)
    result = runner.invoke(app, ["import", "fio", str(path)])
    assert result.exit_code == 2 and "result.json" in result.output


def test_import_fio_reads_a_result_into_tidy_rows(tmp_path):
    path = tmp_path / "result.json"
    path.write_text("note: fio printed this first\n" + json.dumps(_fio_json()))
    rows = read_fio_json(path)
    assert rows.columns == list(COLUMNS)
    iops = rows.filter(metric="iops").row(0, named=True)
    assert (iops["direction"], iops["value"], iops["block_size"], iops["outstanding"]) == (
        "read",
        100.0,
        4096,
        4,
    )
    assert rows.filter(metric="lat_mean")["value"].item() == 1000.0  # us
    assert set(rows["direction"]) == {"read"}  # no write IO: no write rows


# --- the fit on a known model ---------------------------------------------------------------------------

KNOWN = {
    "read_floor": Param(90.0, "us", "user", "known"), "read_transfer_rate": Param(400.0, "MB/s", "user", "known"),
    "read_scv": Param(0.5, "ratio", "user", "known"), "write_floor": Param(140.0, "us", "user", "known"),
    "write_transfer_rate": Param(300.0, "MB/s", "user", "known"), "write_scv": Param(0.5, "ratio", "user", "known"),
    "read_rate_cap": Param(25000.0, "IOPS", "user", "known"), "read_bandwidth": Param(600.0, "MB/s", "user", "known"),
    "write_rate_cap": Param(15000.0, "IOPS", "user", "known"), "write_bandwidth": Param(450.0, "MB/s", "user", "known"),
    "concurrency": Param(256, "count", "user", "known", high=4096),
}  # fmt: skip


def test_the_fit_recovers_a_known_models_parameters_within_their_intervals():
    """Rows simulated from a known model (the fit's own structure): every fitted parameter's interval holds
    its true value (the concurrency's is open above: the data bound it from below). The scv are not
    compared: their range is the spread of one estimate per size, not a confidence interval."""
    jobs = [
        {"job": f"rand-r{pct}-{s // 1024}k-qd{qd}", "pattern": "random", "read_pct": pct, "block_size": s,
         "outstanding": qd}
        for pct in (100, 0) for s in (4096, 16384, 65536, 262144) for qd in (1, 64)
    ]  # fmt: skip
    rows = simulated_rows(KNOWN, jobs, seed=3, duration_s=1.5)
    fitted = fit(rows, "known")
    table = fitted.parameters()
    for r in table.iter_rows(named=True):
        name = r["parameter"]
        if name.endswith("scv"):
            continue
        truth = float(KNOWN[name].value)
        assert r["low"] <= truth <= r["high"], (
            f"{name}: {truth} outside [{r['low']}, {r['high']}] ({r['value']})"
        )
    assert {p.origin for p in fitted.params.values()} == {"fit"}
    for p in fitted.params.values():  # every fitted parameter names its rows, all in the fit subset
        assert set(p.fitted_on) <= set(fitted.rows["row_id"])


KNOWN_MIX = KNOWN | {"mix_read_lead": Param(0.15, "ratio", "user", "known", high=1.0)}


def test_the_fit_recovers_a_known_mixed_mechanism_and_the_pure_parameters_with_it():
    """Rows simulated from a known model whose reads complete ahead of writes in a mixed batch
    (``mix_read_lead`` 0.15), with one mixed job per read share in the fit subset (4 KiB at the deepest
    queue depth): every fitted parameter's interval holds its true value, the lead is within 0.05 of it
    (its interval, over two jobs, is wide), and it names the mixed rows it was fitted on. A mix held back
    (QD8) is then predicted within the calibration's tolerances, and a model without the lead (reads and
    writes completing together) misses its reads' or writes' latency: the mechanism is what the check sees."""
    jobs = [
        {"job": f"rand-r{pct}-{s // 1024}k-qd{qd}", "pattern": "random", "read_pct": pct, "block_size": s,
         "outstanding": qd}
        for pct in (100, 0) for s in (4096, 16384, 65536, 262144) for qd in (1, 64)
    ] + _jobs((70, 30), (4096,), (8, 64))  # fmt: skip
    rows = simulated_rows(KNOWN_MIX, jobs, seed=3, duration_s=1.5)
    fitted = fit(rows, "known mix")
    assert set(fitted.held_back["job"]) == {"rand-r70-4k-qd8", "rand-r30-4k-qd8"}
    for r in fitted.parameters().iter_rows(named=True):
        if r["parameter"].endswith("scv"):
            continue
        truth = float(KNOWN_MIX[r["parameter"]].value)
        assert r["low"] <= truth <= r["high"], f"{r['parameter']}: {truth} outside [{r['low']}, {r['high']}]"
    lead = fitted.params["mix_read_lead"]
    assert abs(float(lead.value) - 0.15) < 0.05, lead
    assert {i.split("/")[0] for i in lead.fitted_on} == {"rand-r70-4k-qd64", "rand-r30-4k-qd64"}
    assert set(lead.fitted_on) <= set(fitted.rows["row_id"])

    from storagelab.measured.check import predict

    table = predict(fitted, fitted.held_back)
    assert table.filter(metric="lat_mean")["within"].all(), table
    without = {k: v for k, v in fitted.params.items() if k != "mix_read_lead"}
    together = predict(type(fitted)("together", without, fitted.intervals, fitted.rows, fitted.held_back),
                       fitted.held_back)  # fmt: skip

    def latency(t: pl.DataFrame, direction: str) -> dict[str, float]:
        rows = t.filter(metric="lat_mean", direction=direction).iter_rows(named=True)
        return {r["job"]: r["predicted"] for r in rows}

    w_with, r_with = latency(table, "write"), latency(table, "read")
    w_without, r_without = latency(together, "write"), latency(together, "read")
    for job in w_with:  # with the lead, writes wait longer than reads; without it, much less so
        assert w_with[job] - r_with[job] > 2 * abs(w_without[job] - r_without[job]) + 10


def _jobs(pcts, sizes, qds) -> list[dict]:
    return [
        {"job": f"rand-r{pct}-{s // 1024}k-qd{qd}", "pattern": "random", "read_pct": pct, "block_size": s,
         "outstanding": qd}
        for pct in pcts for s in sizes for qd in qds
    ]  # fmt: skip


def _faster_than_qd1_allows(rows: pl.DataFrame, jobs: set[str], by: float) -> pl.DataFrame:
    """``rows`` with the IOPS of ``jobs`` (random writes at depth n) set to ``by`` x n / their QD1 latency."""
    lat = {(r["block_size"]): r["value"] * 1e-6 for r in rows.filter(
        outstanding=1, read_pct=0, metric="lat_mean", direction="write").iter_rows(named=True)}  # fmt: skip
    return pl.DataFrame([
        {**r, "value": by * r["outstanding"] / lat[r["block_size"]]}
        if r["job"] in jobs and r["metric"] == "iops" and r["direction"] == "write" else r
        for r in rows.iter_rows(named=True)
    ], schema=rows.schema)  # fmt: skip


def test_saturated_rows_beyond_n_times_the_qd1_rate_show_no_limit_and_the_notes_name_them():
    """A device whose writes at depth n run faster than n / QD1 latency (a write cache, as a CI machine's
    virtual disk did) reaches no limit the model can fit at that depth: with two sizes both beyond, the
    writes get no rate cap or bandwidth limit and the model runs them at concurrency / QD1 latency (below
    the measurement); with three sizes and one beyond, the limits are fitted on the other two. Either way a
    note names the rows, and the reads' limits are fitted as before."""
    rows = simulated_rows(KNOWN, _jobs((100, 0), (4096, 65536), (1, 8)), seed=3, duration_s=0.5)
    both = _faster_than_qd1_allows(rows, {"rand-r0-4k-qd8", "rand-r0-64k-qd8"}, 1.2)
    fitted = fit(both, "cached writes")
    assert {"write_rate_cap", "write_bandwidth"}.isdisjoint(fitted.params)
    assert {"read_rate_cap", "read_bandwidth"} <= set(fitted.params)
    (note,) = [n for n in fitted.notes if n.startswith("write:")]
    assert "rand-r0-4k-qd8 1.20x" in note and "rand-r0-64k-qd8 1.20x" in note and "no rate cap" in note
    job = {"job": "rand-r0-4k-qd8", "pattern": "random", "read_pct": 0, "block_size": 4096, "outstanding": 8}
    predicted = simulate_job(fitted.params, job, duration_s=0.3)["write"]["iops"]
    measured = both.filter(job="rand-r0-4k-qd8", metric="iops", direction="write")["value"].item()
    assert 0.75 * measured < predicted < measured  # 8 / QD1 latency: 1 / 1.2 of the measurement, noise aside

    rows = simulated_rows(KNOWN, _jobs((100, 0), (4096, 16384, 65536), (1, 8)), seed=3, duration_s=0.5)
    fitted = fit(_faster_than_qd1_allows(rows, {"rand-r0-4k-qd8"}, 1.1), "one size cached")
    assert {"write_rate_cap", "write_bandwidth"} <= set(fitted.params)
    assert not any("rand-r0-4k-qd8" in r for r in fitted.params["write_rate_cap"].fitted_on)
    (note,) = [n for n in fitted.notes if n.startswith("write:")]
    ratio = float(note.split("rand-r0-4k-qd8 ")[1].split("x")[0])  # against the QD1 line, not the row
    assert abs(ratio - 1.1) < 0.05 and "fitted on the other 2 sizes" in note


def test_a_frozen_fit_is_checked_on_another_folders_points(tmp_path):
    """The path of a blind check: a model fitted on one folder predicts every point of another folder of
    the same system (measured later, at other operating points), fit unchanged; a point it was fitted on
    is refused; the command writes the other folder's check.csv. No assertion on accuracy."""
    # fit subset (the 70 % mix at QD8 is its read share's one mixed job fitted on), one held back (QD2)
    first = _jobs((100, 0), (4096, 65536), (1, 64)) + _jobs((70,), (4096,), (2, 8))
    fit_rows = simulated_rows(KNOWN, first, seed=3, duration_s=0.5)
    later = _jobs((100, 0), (4096,), (3, 12)) + _jobs((50,), (4096,), (8,))
    later_rows = simulated_rows(KNOWN, later, seed=5, duration_s=0.3)
    for folder, rows in (("first", fit_rows), ("later", later_rows)):
        (tmp_path / folder).mkdir()
        rows.write_csv(tmp_path / folder / MEASUREMENTS)

    system = MeasuredSystem.load(tmp_path / "first")
    fitted = system.fit()
    before = fitted.parameters()
    table = system.check(fitted, MeasuredSystem.load(tmp_path / "later").rows)
    assert set(table["job"]) == {j["job"] for j in later}
    assert table.height == 2 * (4 + 2)  # IOPS and latency: four pure jobs, one mix with two directions
    assert table["predicted"].is_finite().all()
    shares = share_within(table)
    assert shares["points"] == table.height and 0 <= shares["share"] <= 1
    assert fitted.parameters().equals(before)  # the check does not touch the fit
    with pytest.raises(ValueError, match="fitted on"):
        system.check(fitted, fit_rows)

    result = runner.invoke(app, ["fit", str(tmp_path / "first"), "--check-on", str(tmp_path / "later")])
    assert result.exit_code == 0, result.output
    assert f"checked on {tmp_path / 'later'}" in result.output
    written = pl.read_csv(tmp_path / "later" / "check.csv")
    assert sorted(written["row_id"]) == sorted(table["row_id"])
    refused = runner.invoke(app, ["fit", str(tmp_path / "first"), "--check-on", str(tmp_path / "first")])
    assert refused.exit_code == 2 and "fitted on" in refused.output


def test_the_fit_subset_is_qd1_and_saturated_pure_random_jobs():
    rows = pl.DataFrame(
        [{"row_id": f"{j}", "job": j, "pattern": pat, "read_pct": pct, "block_size": 4096, "outstanding": qd}
         for j, pat, pct, qd in [("a", "random", 100, 1), ("b", "random", 100, 8), ("c", "random", 100, 64),
                                 ("d", "random", 70, 1), ("e", "sequential", 100, 1), ("f", "random", 0, 64)]]
    )  # fmt: skip
    fit_rows, held = split(rows)
    assert sorted(fit_rows["job"]) == ["a", "c", "f"] and sorted(held["job"]) == ["b", "d", "e"]


def test_tolerances_are_the_calibrations():
    assert tolerance("iops", "IOPS", 1000) == 150
    assert math.isclose(tolerance("lat_mean", "us", 5000), 1000)  # 20 % = 1 ms
    assert math.isclose(tolerance("lat_mean", "us", 2000), 400)  # relative everywhere: no 1 ms floor
    assert math.isclose(
        tolerance("lat_mean", "ms", 0.4349, digit=1e-4), calibration_tolerance(0.4349, "ms", fine=1e-4)
    )
    assert math.isclose(tolerance("lat_mean", "us", 500, digit=1e-3), 100)  # sub-ms: 20 %, not 1 ms


# --- end to end on real fio -------------------------------------------------------------------------------

TINY = Plan(
    name="tiny", size=8 * 2**20, runtime_s=0.4, ramp_s=0.1,
    grids=({"pattern": "random", "read_pct": [100, 0], "block_size": ["4K", "64K"], "iodepth": [1, 8]},
           {"pattern": "random", "read_pct": [70], "block_size": "4K", "iodepth": [2, 4]}),
)  # fmt: skip


@needs_fio
def test_measure_fit_check_and_compare_end_to_end_on_real_fio(tmp_path):
    target, out = tmp_path / "test.dat", tmp_path / "mine"
    done = measure(target, TINY, out, progress=False)
    assert (done.run, done.skipped) == (10, 0)
    assert not target.exists()  # the file the command created is removed at the end
    rows = pl.read_csv(out / MEASUREMENTS)
    assert rows.columns == list(COLUMNS) and set(rows["job"]) == {j.name for j in TINY.planned()}
    prov = json.loads((out / PROVENANCE).read_text())
    assert prov["fio_version"].startswith("fio-3.") and prov["kernel"] and prov["started_utc"]
    assert prov["device"].get("fs_type") and prov["device"].get("devnum")
    assert len(prov["job_files"]) == 10 and all((out / f).is_file() for f in prov["job_files"])

    # an interrupted plan resumes: only the job whose result is missing runs again
    (out / "json" / "rand-r70-4k-qd4.json").unlink()
    again = measure(target, TINY, out, progress=False)
    assert (again.run, again.skipped) == (1, 9)

    system = MeasuredSystem.load(out)
    fitted = system.fit()
    assert fitted.build().param_table()["origin"].to_list() == ["fit"] * len(fitted.params)
    table = system.check(fitted)
    # the mix at QD4 is its read share's one mixed job fitted on; QD2 is held back: read and write, IOPS and latency
    assert set(table["job"]) == {"rand-r70-4k-qd2"} and table.height == 4
    assert table["predicted"].is_finite().all()
    assert 0 <= share_within(table)["share"] <= 1

    from storagelab.analysis.comparison import Settings, compare
    from storagelab.analysis.workload_mix import WorkloadMix

    mix = WorkloadMix.model_validate({"name": "one class", "classes": [
        {"name": "oltp", "workload": "oltp", "size": 1, "service_level": {"metric": "mean_ms", "limit_ms": 20}}]})  # fmt: skip
    result = compare(mix, [system.candidate(fitted, "mine")],
                     Settings(duration_s=0.3, warmup_s=0.1, replications=2, high=2.0), scheduler="synchronous")  # fmt: skip
    row = result.table().row(0, named=True)
    assert row["architecture"] == "mine" and row["status"]
    assert row["bottleneck_capacity"] == (
        "fit (the whole model)" if row["bottleneck"] else ""
    )  # every parameter fitted

    from storagelab.pipeline.scenarios import measured_fio_job  # a sweep's scenario on the fitted model

    measured_fio_job.validate(str(out), read_pct=70, iodepth=2)
    point = measured_fio_job(str(out), read_pct=70, iodepth=2, overrides={"concurrency": 4})
    assert set(point) == {"read_iops", "read_mean_ms", "write_iops", "write_mean_ms"}
    assert all(math.isfinite(v) and v > 0 for v in point.values())


@needs_fio
def test_the_measure_command_runs_the_quick_plan_and_import_reads_its_json(tmp_path):
    out = tmp_path / "q"
    result = runner.invoke(app, ["measure", str(tmp_path / "t.dat"), "--quick", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{len(QUICK_PLAN.planned())} jobs run" in result.output
    files = sorted(str(p) for p in (out / "json").glob("*.json"))
    imported = runner.invoke(app, ["import", "fio", *files, "-o", str(tmp_path / "imported")])
    assert imported.exit_code == 0, imported.output
    assert pl.read_csv(tmp_path / "imported" / MEASUREMENTS).height == pl.read_csv(out / MEASUREMENTS).height


# --- the committed measurement of this machine's disk -------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_checks_are_reproduced_and_the_readme_states_them():
    """A fresh fit of measurements/vda-ext4 gives the committed check tables (the held-back points and the
    blind validation points, with their 80 % predictive intervals), and the README's figures (both days'
    four checks) are generated from the committed tables (`make measured`)."""
    import importlib.util

    system = MeasuredSystem.load(ROOT / "measurements" / "vda-ext4")
    fitted = system.fit()
    for table, path in (
        (system.check(fitted), ROOT / "measurements" / "vda-ext4" / "check.csv"),
        (
            system.check(fitted, MeasuredSystem.load(ROOT / "measurements" / "vda-ext4-validation").rows),
            ROOT / "measurements" / "vda-ext4-validation" / "check.csv",
        ),
    ):
        committed = pl.read_csv(path)
        assert (
            table.select(committed.columns)
            .select("row_id", "predicted", "within", "covered")
            .equals(committed.select("row_id", "predicted", "within", "covered"))
        ), f"{path} is not what the fit gives now: `make measured`"
        for bound in ("pi_low", "pi_high"):  # exp and log of the same numbers, to the last bit or so
            assert ((table[bound] / committed[bound] - 1).abs() < 1e-9).all(), (
                f"{path}: {bound}: `make measured`"
            )
    spec = importlib.util.spec_from_file_location(
        "update_readme_measured", ROOT / "ci" / "update_readme_measured.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.block() in (ROOT / "README.md").read_text(encoding="utf-8"), (
        "README's measured figures: `make measured`"
    )


def test_the_run_to_run_spread_gives_parameter_intervals_and_predictive_intervals():
    """Three passes of a known model's plan (three seeds) as a plan's runs: resampling them gives refits
    whose 80 % intervals hold each parameter's value fitted on the medians, a pooled noise per metric, and
    predictive intervals around every checked point that widen with the noise (a check can fail to cover)."""
    from storagelab.measured.check import predict
    from storagelab.measured.results import combine_repeats
    from storagelab.measured.spread import Spread, predictive, resample, spread

    jobs = _jobs((100, 0), (4096, 65536), (1, 32)) + _jobs((70,), (4096,), (4, 32))
    runs = pl.concat([
        simulated_rows(KNOWN_MIX, jobs, seed=10 * k, duration_s=0.3).with_columns(run=pl.lit(k)) for k in (1, 2, 3)
    ])  # fmt: skip
    rows = combine_repeats(runs.drop("run"))
    fitted = fit(rows, "three passes")
    drawn = resample(runs, __import__("numpy").random.default_rng(1))
    assert drawn.height == rows.height and set(drawn["row_id"]) == set(rows["row_id"])
    s = spread(fitted, runs, draws=20)
    assert len(s.refits) == 20 and s.noise["iops"] > 0 and s.noise["lat_mean"] > 0
    for name, (lo, hi) in s.intervals.items():
        if name == "concurrency":
            continue
        assert lo <= float(fitted.params[name].value) * 1.0001 + 1e-9 and lo <= hi, (name, lo, hi)
    fitted.spread = s
    table = predict(fitted, fitted.held_back, seed=1)
    assert {"pi_low", "pi_high", "covered"} <= set(table.columns)
    assert (table["pi_low"] < table["predicted"]).all() and (table["predicted"] < table["pi_high"]).all()
    assert 0 <= share_within(table)["coverage"] <= 1
    narrow = predictive(table.drop("pi_low", "pi_high", "covered"), Spread([], {}, {"iops": 1e-9, "lat_mean": 1e-9}),
                        [])  # fmt: skip
    assert (narrow["pi_high"].to_numpy() / narrow["predicted"].to_numpy() < 1.0001).all()
    far = table.with_columns(measured=pl.col("predicted") * 3)  # three times the prediction: not covered
    assert not predictive(far.drop("pi_low", "pi_high", "covered"), s, [])["covered"].any()


def test_a_measured_candidate_draws_its_parameters_over_the_runs_spread():
    """The fitted model as a comparison candidate carries each parameter's run-to-run interval as a
    log-uniform whose central 80 % is that interval (issue 69: a measured system in the decision on the
    same footing as the presets): a recording finds them, a draw changes the build, the fit is untouched."""
    from storagelab.measured.spread import run_spread_distribution
    from storagelab.provenance import parameter_draw, recording_uncertain

    d = run_spread_distribution(50.0, 40.0, 60.0)
    assert d.ppf(0.1) == pytest.approx(40.0) and d.ppf(0.9) == pytest.approx(60.0)
    assert run_spread_distribution(70.0, 40.0, 60.0).high == 70.0  # widened to hold the fitted value
    assert run_spread_distribution(5.0, 5.0, 5.0) is None and run_spread_distribution(1.0, 0.0, 2.0) is None

    system = MeasuredSystem.load(ROOT / "measurements" / "vda-ext4")
    fitted = system.fit()
    c = system.candidate(fitted, "disk")
    with recording_uncertain() as recorded:
        c.build()
    names = {name for (_, name) in recorded}
    with_interval = {
        k
        for k, (lo, hi) in fitted.spread.intervals.items()
        if 0 < lo < hi and fitted.params[k].unit != "count"
    }
    assert names == with_interval and "read_floor" in names
    assert all(p.uncertainty is None for p in fitted.params.values())  # the fit's own Params unchanged
    key = next(k for k in recorded if k[1] == "read_floor")
    low = recorded[key].uncertainty.low
    with parameter_draw({key: low}):
        drawn = c.build()
    assert drawn.params["read_floor"].value == pytest.approx(low)
    assert c.build().params["read_floor"].value == fitted.params["read_floor"].value


def test_each_miss_is_set_beside_its_jobs_passes_and_the_days_own_model(tmp_path, monkeypatch):
    """A miss is accounted for by the first that applies: the prediction inside the measured job's own
    passes, the dataset's own model within tolerance, or neither; a point within tolerance is no miss.
    The pass ranges of a committed dataset hold its median (the value the dataset keeps) for every row."""
    import storagelab.measured.spread as spread
    from storagelab.measured.check import misses_against_passes

    ranges = spread.pass_ranges(ROOT / "measurements" / "vda-ext4")
    kept = pl.read_csv(ROOT / "measurements" / "vda-ext4" / "measurements.csv").select("row_id", "value")
    both = kept.join(ranges, on="row_id", how="inner")
    assert both.height == kept.height and (ranges["passes"] == 3).all()
    assert (
        (both["pass_low"] <= both["value"] * (1 + 1e-9)) & (both["value"] <= both["pass_high"] * (1 + 1e-9))
    ).all()

    def row(row_id: str, measured: float, predicted: float, within: bool) -> dict:
        return {"row_id": row_id, "measured": measured, "predicted": predicted, "within": within}

    table = pl.DataFrame([
        row("a/read/iops", 100.0, 130.0, False),  # inside its passes (90-135)
        row("b/read/iops", 100.0, 150.0, False),  # outside (95-105); the day's own model 110: within
        row("c/read/iops", 100.0, 150.0, False),  # outside (95-105); own model 140: a miss too
        row("d/read/iops", 100.0, 101.0, True),  # within tolerance: no miss
    ])  # fmt: skip
    fake = pl.DataFrame({"row_id": ["a/read/iops", "b/read/iops", "c/read/iops", "d/read/iops"],
                         "pass_low": [90.0, 95.0, 95.0, 95.0], "pass_high": [135.0, 105.0, 105.0, 105.0],
                         "passes": [3, 3, 3, 3]})  # fmt: skip
    monkeypatch.setattr(spread, "pass_ranges", lambda folder: fake)
    pl.DataFrame([
        row("b/read/iops", 100.0, 110.0, True), row("c/read/iops", 100.0, 140.0, False),
    ]).write_csv(tmp_path / "check.csv")  # fmt: skip
    out = misses_against_passes(table, tmp_path).sort("row_id")
    assert out["row_id"].to_list() == ["a/read/iops", "b/read/iops", "c/read/iops"]
    assert out["accounted"].to_list() == [
        "inside the job's own passes", "the day's own model within tolerance", "neither",
    ]  # fmt: skip


def test_a_row_whose_pass_strays_past_the_tolerance_is_named(monkeypatch, tmp_path):
    """A row is unsteady when one of its passes lies farther from the kept median than the check's
    tolerance (IOPS: 15 %; a latency under 1 ms: 20 %), and only then; the worst comes first, and a dataset
    without per-pass results has none. The committed first day has such rows (its QD1 1 MiB reads ran from
    802 to 1,906 IOPS about a median of 906), so the note `fit` prints is not empty there."""
    import storagelab.measured.spread as spread
    from storagelab.measured.check import unsteady_rows

    rows = pl.DataFrame({
        "row_id": ["a/read/iops", "b/read/iops", "c/read/lat_mean", "d/read/clat_p50"],
        "job": ["a", "b", "c", "d"], "metric": ["iops", "iops", "lat_mean", "clat_p50"],
        "unit": ["IOPS", "IOPS", "us", "us"], "value": [100.0, 100.0, 500.0, 500.0],
    })  # fmt: skip
    fake = pl.DataFrame({"row_id": ["a/read/iops", "b/read/iops", "c/read/lat_mean", "d/read/clat_p50"],
                         "pass_low": [90.0, 70.0, 480.0, 100.0], "pass_high": [114.0, 101.0, 650.0, 900.0],
                         "passes": [3, 3, 3, 3]})  # fmt: skip
    monkeypatch.setattr(spread, "pass_ranges", lambda folder: fake)
    out = unsteady_rows(rows, tmp_path)
    assert out["row_id"].to_list() == ["b/read/iops", "c/read/lat_mean"]  # a within 15 %; d not checked
    assert out["worst"].to_list() == pytest.approx([30 / 15, 150 / 100])
    monkeypatch.undo()
    assert unsteady_rows(rows, tmp_path).is_empty()  # no json/ folder: no passes
    day1 = ROOT / "measurements" / "vda-ext4"
    committed = unsteady_rows(pl.read_csv(day1 / "measurements.csv"), day1)
    assert "rand-r100-1m-qd1/read/iops" in committed["row_id"].to_list()


def test_measure_and_fit_print_the_unsteady_jobs_note():
    """The note both commands print: the committed first day's unsteady jobs, worst first, and nothing for
    a dataset without per-pass results."""
    from storagelab.cli import unsteady_note

    day1 = ROOT / "measurements" / "vda-ext4"
    rows = pl.read_csv(day1 / "measurements.csv")
    note = unsteady_note(rows, day1)
    assert note is not None and note.startswith("note: 40 of 50 jobs had a pass farther")
    assert "rand-r100-256k-qd1 (10.6x the tolerance)" in note and note.endswith(", ...")
    assert unsteady_note(rows, ROOT / "measurements") is None  # no json/ there
