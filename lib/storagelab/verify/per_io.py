"""Where a realistic path spends its time per IO: the kernel benchmark's Virtual SAN scenario
(:func:`storagelab.verify.benchmark.vsan_scenario_run`), run once plainly and once under
:mod:`cProfile`, per IO simulated.

- **Events per IO**: the events the run scheduled (:attr:`SimulationResult.events`) over the IOs issued.
- **Python calls per IO** and **share of own time**, per source file of the call (a kernel module, a
  component, the event loop; calls into C, such as ``heapq`` or ``list.append``, under ``built-ins``),
  with the functions called most. cProfile charges each call its own overhead, so the time shares
  lean towards files whose functions are small and called often; the call counts are exact.
- **Wall microseconds per IO** from the plain run (noisy on a shared machine; the profiled run is
  several times slower and is not timed).

Where the per-IO modules are compiled (:mod:`storagelab.kernel.native`) it measures in a fresh process that
runs them as pure Python: cProfile sees no call inside compiled code, and the calls are what it counts.

``python -m storagelab.verify.per_io`` or ``storagelab bench --per-io`` prints both. What it showed when
written (2026-11): 7.4 events and about 150 Python calls per IO, no file above a fifth of the time;
dropping a sixth of the events (an experiment that fused the host port with the CPU station it alone
feeds) left the wall time unchanged, so the cost lies in the Python each stage runs, not in the events.
"""

from __future__ import annotations

import cProfile
import os
import pickle
import pstats
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from storagelab.kernel import native
from storagelab.verify.benchmark import VSAN_SCENARIO, vsan_scenario_run

#: What a call into C (no Python source file) is filed under.
BUILTINS = "built-ins"

#: Files shown: those called at least this often per IO, or with at least this share of the time (the
#: rest is the run's set-up and the results, which do not grow with the IOs).
MIN_CALLS_PER_IO, MIN_SHARE = 0.01, 0.005


@dataclass(frozen=True)
class PerIOCost:
    """One scenario's cost per simulated IO: ``ios`` issued, ``events_per_io``, ``calls_per_io``
    (Python-level calls, C built-ins included), ``wall_us_per_io`` (plain run) and ``by_file``
    (one row per source file: ``file``, ``calls_per_io``, ``own_time_share``, ``top_functions``, each
    function as ``name:line`` with its calls per IO) and ``by_function`` (the same per function, every
    function the run called)."""

    scenario: str
    ios: int
    events_per_io: float
    calls_per_io: float
    wall_us_per_io: float
    by_file: pl.DataFrame
    by_function: pl.DataFrame

    def summary(self) -> str:
        """One line: the scenario and its totals per IO."""
        return (
            f"{self.scenario}: {self.ios:,} IOs; {self.events_per_io:.2f} events, {self.calls_per_io:.0f} "
            f"Python calls and {self.wall_us_per_io:.1f} us of wall time per IO"
        )


def _file_of(key: tuple[str, int, str]) -> str:
    """The source file a cProfile key belongs to, from ``storagelab/`` (or the package's top folder
    for a dependency), or :data:`BUILTINS`."""
    filename = key[0]
    if filename == "~" or filename.startswith("<"):
        return BUILTINS
    parts = Path(filename).parts
    if "storagelab" in parts:
        return "/".join(parts[len(parts) - parts[::-1].index("storagelab") :])
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1]
    return Path(filename).name


def per_io_costs(horizon: float = 1.0, warmup: float = 0.2, seed: int = 1, top: int = 3) -> PerIOCost:
    """The Virtual SAN bench scenario's cost per IO (see the module docstring): ``horizon`` and ``warmup``
    simulated seconds, ``seed``; ``top`` functions named per file."""
    if not horizon > warmup >= 0:
        raise ValueError(f"need horizon > warmup >= 0 simulated seconds, got {horizon!r} and {warmup!r}")
    if native.status().startswith("compiled"):
        # cProfile sees no call inside compiled code: measure in a process that runs the modules as Python
        code = (
            "import pickle, sys\nfrom storagelab.verify.per_io import per_io_costs\n"
            "sys.stdout.buffer.write(pickle.dumps(per_io_costs(*map(float, sys.argv[1:3]), *map(int, sys.argv[3:]))))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(horizon), str(warmup), str(seed), str(top)],
            env={**os.environ, native.PURE_PYTHON_VARIABLE: "1"}, capture_output=True, check=True,
        )  # fmt: skip
        return pickle.loads(done.stdout)
    run = vsan_scenario_run()
    t = time.perf_counter()
    res, ios = run(horizon, warmup, seed)
    wall = time.perf_counter() - t

    run = vsan_scenario_run()  # a fresh topology: components belong to one run
    profile = cProfile.Profile()
    profile.enable()
    res_profiled, ios_profiled = run(horizon, warmup, seed)
    profile.disable()
    if ios_profiled != ios or res_profiled.events != res.events:
        raise RuntimeError("the profiled run simulated another run than the plain one (same seed)")

    rows = []
    for key, (_, calls, own, _, _) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if key[2] in ("enable", "disable") or "_lsprof" in key[0]:
            continue  # the profiler's own calls
        name = f"{key[2]}:{key[1]}" if key[1] else key[2]  # a built-in has no line
        rows.append({"file": _file_of(key), "function": name, "calls": calls, "own": own})
    schema = {"file": pl.String, "function": pl.String, "calls": pl.Int64, "own": pl.Float64}
    calls = pl.DataFrame(rows, schema=schema)
    total_own = float(calls["own"].sum())
    by_function = calls.select(
        "file", "function", calls_per_io=pl.col("calls") / ios, own_time_share=pl.col("own") / total_own
    ).sort("calls_per_io", descending=True)
    by_file = (
        by_function.group_by("file", maintain_order=True)
        .agg(
            pl.col("calls_per_io", "own_time_share").sum(),
            top_functions=pl.concat_str(
                pl.col("function"), pl.lit(" "), pl.col("calls_per_io").round(2).cast(pl.String)
            )
            .head(top)
            .str.join(", "),
        )
        .filter((pl.col("calls_per_io") >= MIN_CALLS_PER_IO) | (pl.col("own_time_share") >= MIN_SHARE))
        .sort("own_time_share", descending=True)
    )
    return PerIOCost(
        VSAN_SCENARIO,
        ios,
        res.events / ios,
        float(calls["calls"].sum()) / ios,
        1e6 * wall / ios,
        by_file,
        by_function,
    )


def main() -> None:
    cost = per_io_costs()
    print(cost.summary())
    with pl.Config(tbl_rows=-1, fmt_str_lengths=90, tbl_width_chars=200):
        print(cost.by_file.with_columns(pl.col("calls_per_io", "own_time_share").round(3)))


if __name__ == "__main__":
    main()
