"""Sweeps: specs validated before anything runs, the results store, resuming, and a sweep killed with
SIGKILL (the driver, or a worker) that loses no finished run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import psutil
import pytest

from storagelab.pipeline import results_store
from storagelab.pipeline.sweeps import SweepError, load_spec, plan, sweep

MMC = "storagelab.pipeline.scenarios:mmc_queue"
STORAGELAB = str(Path(sys.executable).with_name("storagelab"))


def _spec(path: Path, name: str, points: int, duration: float) -> Path:
    rhos = [round(0.3 + 0.6 * i / max(points - 1, 1), 4) for i in range(points)]
    path.write_text(
        f"name: {name}\nscenario: {MMC}\nfixed: {{servers: 4, duration_s: {duration}}}\n"
        f"grid: {{rho: {rhos}}}\nseeds: [1]\n"
    )
    return path


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"name": "x", "grid": {"rho": [0.5]}}, ["exactly one of 'scenario'", "'notebook'"]),
        ({"name": "x", "scenario": MMC, "notebook": "10-calibration"}, ["exactly one of"]),
        ({"name": "x y", "scenario": MMC}, ["key 'name'", "pattern"]),
        (
            {"name": "x", "scenario": MMC, "grid": {"rho": [0.5]}, "points": [{"rho": 0.5}]},
            ["either 'grid' or 'points'"],
        ),
        ({"name": "x", "scenario": MMC, "grdi": {}}, ["key 'grdi'", "allowed keys"]),
        ({"name": "x", "scenario": "no.such.module:f"}, ["cannot be imported"]),
        (
            {"name": "x", "scenario": MMC, "grid": {"rho": [0.5, 1.5]}},
            ["1 of 2 points are invalid", "point 1", "rho must be in (0, 1)"],
        ),
        (
            {"name": "x", "scenario": MMC, "points": [{"rhoo": 0.5}]},
            ["point 0", "unexpected keyword argument 'rhoo'"],
        ),
        (
            {"name": "x", "notebook": "11-vsan-scaling", "points": [{"overrides": {"hosts": 0}}]},
            ["point 0", "'hosts'"],
        ),
    ],
)
def test_a_bad_spec_or_point_is_refused_before_anything_runs(spec, words):
    with pytest.raises(SweepError) as err:
        plan(*load_spec(spec))
    assert all(w in str(err.value) for w in words), str(err.value)


def test_plan_keys_are_stable_and_distinct():
    spec = {"name": "x", "scenario": MMC, "grid": {"rho": [0.5, 0.7], "servers": [1, 2]}, "seeds": [1, 2]}
    first, second = plan(*load_spec(spec)), plan(*load_spec(spec))
    assert len(first) == 8 and len({r.key for r in first}) == 8
    assert [r.key for r in first] == [r.key for r in second]


def test_store_writes_atomically_and_reads_tidy(tmp_path):
    store = results_store.ResultsStore(tmp_path / "s", "s")
    store.write("k1", "t", {"rho": 0.5, "overrides": {"hosts": 8}}, 1, "v", {"a": 1.0, "b": 2.0}, 0.1)
    (store.runs / ".k2.123.tmp").write_bytes(b"half-written")
    assert store.done() == {"k1"}  # a temporary file is not a run
    frame = results_store.read(tmp_path / "s").collect()
    assert frame.height == 2 and set(frame["metric"]) == {"a", "b"}
    assert frame["p.overrides"][0] == '{"hosts":8}'
    assert store.clean_temporaries() == 1


def test_a_sweep_resumes_and_computes_only_what_is_missing(tmp_path):
    spec = _spec(tmp_path / "s.yaml", "resume", points=4, duration=1.0)
    first = sweep(spec, results=tmp_path / "results", workers=2, progress=False)
    assert (first.planned, first.skipped, first.computed, first.failed) == (4, 0, 4, ())
    (first.store.runs / sorted(first.store.done())[0]).with_suffix(".parquet").unlink()
    again = sweep(spec, results=tmp_path / "results", workers=1, progress=False)
    assert (again.skipped, again.computed) == (3, 1)
    frame = again.frame().collect()
    assert frame["key"].n_unique() == 4 and frame.height == 4 * 4
    means = frame.filter(pl.col("metric") == "mean_ms")
    assert means["value"].is_finite().all()


def _wait_for_runs(runs: Path, n: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if runs.is_dir() and len(list(runs.glob("*.parquet"))) >= n:
            return
        assert proc.poll() is None, "the sweep ended before it could be killed"
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} runs stored after {timeout} s")


def test_a_sweep_killed_with_sigkill_resumes_and_loses_no_finished_run(tmp_path):
    spec = _spec(tmp_path / "s.yaml", "killed", points=12, duration=4.0)
    runs = tmp_path / "results" / "killed" / "runs"
    proc = subprocess.Popen([STORAGELAB, "sweep", str(spec), "--workers", "2", "--results", str(tmp_path / "results")],
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        _wait_for_runs(runs, 3, proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, at once
        proc.wait()
    before = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.parquet")}
    assert 3 <= len(before) < 12
    for p in runs.glob("*.parquet"):  # every stored run is complete and readable
        assert pl.read_parquet(p).height == 4
    resumed = sweep(spec, results=tmp_path / "results", workers=2, progress=False)
    assert resumed.skipped == len(before) and resumed.computed == 12 - len(before) and not resumed.failed
    after = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.parquet")}
    assert len(after) == 12 and all(after[k] == v for k, v in before.items())  # nothing recomputed
    assert not list(runs.glob(".*.tmp"))


def test_a_worker_killed_with_sigkill_is_replaced_and_its_run_retried(tmp_path):
    spec = _spec(tmp_path / "s.yaml", "worker", points=8, duration=4.0)
    runs = tmp_path / "results" / "worker" / "runs"
    proc = subprocess.Popen([STORAGELAB, "sweep", str(spec), "--workers", "2", "--results", str(tmp_path / "results")],
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        _wait_for_runs(runs, 1, proc)
        busy = [c for c in psutil.Process(proc.pid).children(recursive=True) if not c.children()]
        victim = max(busy, key=lambda c: c.cpu_percent(interval=0.2))
        os.kill(victim.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err[-2000:]
    assert len(list(runs.glob("*.parquet"))) == 8
