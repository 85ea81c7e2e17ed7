"""The benchmark's models simulate the same systems (their mean response times agree), and the README's
benchmark table is generated from the committed runs. No wall-clock time is asserted here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl
import pytest

from storagelab.verify import benchmark

ROOT = Path(__file__).resolve().parents[1]


def test_readme_bench_table_is_generated_from_the_committed_runs():
    spec = importlib.util.spec_from_file_location(
        "update_readme_bench", ROOT / "ci" / "update_readme_bench.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    block = module.block()
    assert block in (ROOT / "README.md").read_text(encoding="utf-8"), (
        f"README's benchmark table differs from benchmarks/; run `make bench`. Expected:\n{block}"
    )


def test_vsan_bench_models_are_the_same_cluster():
    """The calibration scenario in storagelab and the textbook SimPy model of it: same throughput and mean
    response within 3 % (each mean has a standard error of about 0.3 % over 0.8 simulated seconds)."""
    ours = benchmark.run_storagelab_vsan(1.0, 0.2, seed=3)
    textbook = benchmark.run_simpy_vsan(1.0, 0.2, seed=4)
    assert ours.mean_response_ms == pytest.approx(textbook.mean_response_ms, rel=0.03)
    assert ours.simulated_ios == pytest.approx(textbook.simulated_ios, rel=0.03)


def test_the_framework_free_vsan_model_is_the_simpy_models_cluster():
    """The floor row (the textbook SimPy model's cluster written with a heap of calls and no framework)
    simulates the same system as the SimPy model: throughput and mean response within 3 %, on other seeds
    (so neither can be the other's random draws replayed)."""
    floor = benchmark.run_floor_vsan(1.0, 0.2, seed=5)
    textbook = benchmark.run_simpy_vsan(1.0, 0.2, seed=6)
    assert floor.mean_response_ms == pytest.approx(textbook.mean_response_ms, rel=0.03)
    assert floor.simulated_ios == pytest.approx(textbook.simulated_ios, rel=0.03)
    assert floor.scenario == textbook.scenario == benchmark.VSAN_SCENARIO


def test_bench_against_a_revision_runs_both_checkouts_side_by_side(monkeypatch):
    """``bench --against``: the same rows in this checkout and at a git revision (here HEAD, with a
    short M/M/4 row), in fresh processes; same seed, same code path, so the same simulated IOs and
    mean response; the worktree is removed afterwards."""
    import subprocess

    def worktrees() -> str:
        return subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True
        ).stdout

    monkeypatch.setattr(benchmark, "STORAGELAB_ROWS", {"M/M/4 rho=0.9": ("run_storagelab_mm4", 2.0, 0.1)})
    before = worktrees()
    table = benchmark.against_revision("HEAD", rounds=2)
    assert worktrees() == before
    row = table.row(0, named=True)
    assert row["rounds"] == 2 and row["simulated_ios_revision"] == row["simulated_ios_this"] > 5_000
    assert row["mean_ms_revision"] == row["mean_ms_this"]
    assert row["this_over_revision"] == pytest.approx(row["wall_seconds_this"] / row["wall_seconds_revision"])


@pytest.mark.parametrize(("revision", "rounds", "message"), [
    ("no-such-revision", 1, "'no-such-revision' is not a commit"),
    ("HEAD", 0, "rounds must be an integer >= 1"),
])  # fmt: skip
def test_bench_against_refuses_what_it_cannot_run(revision, rounds, message):
    with pytest.raises(ValueError, match=message):
        benchmark.against_revision(revision, rounds=rounds)


def test_per_io_costs_count_the_runs_events_and_calls_per_io():
    """``bench --per-io``: the events per IO are the plain run's (the same scenario and seed run again here
    gives the same count), each IO is issued once (the closed source's issue call counts one per IO,
    exactly), the per-file rows add up to the functions', and a bad window is refused. No time is
    asserted."""
    from storagelab.verify.per_io import BUILTINS, per_io_costs

    cost = per_io_costs(horizon=0.15, warmup=0.05, seed=2)
    res, ios = benchmark.vsan_scenario_run()(0.15, 0.05, 2)
    assert (cost.ios, cost.events_per_io) == (ios, res.events / ios)
    sources = cost.by_function.filter(pl.col("file") == "kernel/sources.py")
    issue = sources.filter(pl.col("function").str.starts_with("_issue:"))
    assert issue["calls_per_io"].to_list() == [1.0]
    assert cost.calls_per_io == pytest.approx(cost.by_function["calls_per_io"].sum())
    assert cost.by_function["own_time_share"].sum() == pytest.approx(1.0)
    files = cost.by_file["file"].to_list()
    assert {"kernel/station.py", "kernel/event_loop.py", "components/write_log.py", BUILTINS} <= set(files)
    assert 1 < cost.events_per_io < cost.calls_per_io
    with pytest.raises(ValueError, match="horizon > warmup"):
        per_io_costs(horizon=0.1, warmup=0.1)
