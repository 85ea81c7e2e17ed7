"""How often ending a headroom search's runs early changes a decision: every run of a comparison that
:class:`~storagelab.analysis.headroom.ClearOutcome` stopped is run again to its end, and the two
decisions (every service level met with every component in its valid range, or not) are set side by side.
A pilot search's runs (:attr:`~storagelab.analysis.comparison.Settings.pilot_s`), which only choose where
the replications start and never enter a headroom, are not checked.

    python -m storagelab.verify.early_stop [params file] [--trajectories FILE]
    # default params: params/19-compare-architectures.yaml

prints one row per stopped run (architecture, seed, multiplier, simulated seconds of the stopped and
the full run, worst ratio of each, the two decisions) and the count of decisions that differ. The runs go
again on one process per core (Dask's process pool, as the comparison's searches do), the costliest first.

With ``--trajectories FILE``, the runs that went their full length are run again too, and each rerun
records each service level's measured/limit ratio, its IOs, the busiest component's utilisation and
whether a component was out of its valid range at every sixteenth of the measured time (:data:`SIXTEENTHS`), written to ``FILE`` (Parquet, one row per run,
level and check, with the full run's decision): what a stop rule would see at any of those checks, so that
a rule can be tried on a comparison's runs without simulating them again. A check measures on a copy of the
run's recorder (:func:`~storagelab.kernel.simulation.simulate`), so what a run sees at a check does not
depend on the other checks, and the full runs' results are those of runs without checks.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl

from storagelab.analysis.comparison import Candidate, Settings, _topology, candidate_run, compare
from storagelab.analysis.headroom import _beyond_range
from storagelab.analysis.workload_mix import WorkloadMix
from storagelab.kernel.simulation import SimulationResult
from storagelab.pipeline.params import load_params
from storagelab.pipeline.schemas import CandidateSpec

#: The checks at which each rerun records its ratios with ``--trajectories`` (fractions of the measured
#: time): every sixteenth, which includes :attr:`~storagelab.analysis.headroom.ClearOutcome.CHECKS`.
SIXTEENTHS = tuple(k / 16 for k in range(1, 16))


def full_run(
    mix: WorkloadMix, c: Candidate, s: Settings, bound: str, seed: int, multiplier: float, *, record: bool
) -> dict[str, Any]:
    """Run ``c`` (``bound``: a published curve's fit or band) under ``mix`` at ``multiplier`` on ``seed`` to
    its end, as the search's run would have gone without stopping: the worst level's ratio (``full_worst``),
    the decision (``full_met``) and, with ``record``, a row per level at each of :data:`SIXTEENTHS` and at the
    end (``fraction`` 1.0): its ``ratio``, the IOs it was measured over (``count``), the busiest component's
    utilisation (``busiest``) and whether a component was out of its valid range (``beyond``)."""
    levels = mix.service_levels(_topology(c, bound)[1])
    seen: list[dict[str, Any]] = []
    measured = s.duration_s - s.warmup_s

    def note(res: SimulationResult) -> bool:
        fraction = round((res.duration - s.warmup_s) / measured, 6)
        beyond, busiest = _beyond_range(res) is not None, res.bottleneck()[1]
        for lv in levels:
            seen.append({"fraction": fraction, "service_level": lv.label, "ratio": lv.ratio(res),
                         "count": lv.count(res), "busiest": busiest, "beyond": beyond})  # fmt: skip
        return False  # never stops: the run goes to its end

    res = candidate_run(mix, c, s, bound, early_stop=False, watch=(note, SIXTEENTHS) if record else None)(
        multiplier, seed
    )
    if record:
        note(res)
    worst = max(lv.ratio(res) for lv in levels)
    return {"full_worst": worst, "full_met": worst <= 1.0 and _beyond_range(res) is None, "trajectory": seen}


def stopped_against_full(
    params_file: Path, *, trajectories: bool = False, workers: int | None = None
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Per run the comparison of ``params_file`` stopped early: its decision and the full run's; with
    ``trajectories``, also every full-length run's, and the ratios of every run at each check
    (:func:`full_run`; None without)."""
    import dask
    from dask.diagnostics import ProgressBar

    p = load_params(Path("notebooks/19-compare-architectures.ipynb"), params_file)
    mix = WorkloadMix.from_mapping(p["mix"], str(params_file))
    candidates = [CandidateSpec.model_validate(c).candidate() for c in p["candidates"] + p.get("what_if", [])]
    settings = Settings(duration_s=p["duration_s"], warmup_s=p["warmup_s"], replications=p["replications"],
                        low=p["low"], high=p["high"], tolerance=p["tolerance"], seed=p["seed"])  # fmt: skip
    result = compare(mix, candidates, settings, workers=workers)
    key = ["architecture", "bound", "seed", "multiplier"]
    runs = (
        result.evaluations()
        .filter(~pl.col("pilot"))  # the pilot's runs are shorter and never enter a headroom
        .group_by(key, maintain_order=True)
        .agg(
            pl.col("run_s").first(),
            pl.col("ios").first(),
            pl.col("in_range").all(),
            stopped_worst=pl.col("ratio").max(),
        )
        .with_columns(stopped=pl.col("run_s") < settings.duration_s)
    )
    if not trajectories:
        runs = runs.filter(pl.col("stopped"))
    # the costliest first (what a run costs grows with its IOs per simulated second), so that the processes
    # stay busy to the end; each rerun is a function of its seed, so the order changes no result
    runs = runs.sort(pl.col("ios") / pl.col("run_s"), descending=True, maintain_order=True)
    by_label = {c.label: c for c in candidates}
    tasks = [
        dask.delayed(full_run)(mix, by_label[r["architecture"]], settings, r["bound"], r["seed"],
                               r["multiplier"], record=trajectories, dask_key_name=f"rerun-{runs.height - i:04d}")
        for i, r in enumerate(runs.iter_rows(named=True))
    ]  # fmt: skip
    n = workers or max(1, min(len(tasks), os.cpu_count() or 1))
    with ProgressBar(dt=5.0):
        done = dask.compute(*tasks, scheduler="processes", num_workers=n, chunksize=1)
    rows, steps = [], []
    for r, full in zip(runs.iter_rows(named=True), done, strict=True):
        rows.append({**{k: r[k] for k in key}, "run_s": r["run_s"], "stopped_worst": r["stopped_worst"],
                     "full_worst": full["full_worst"], "stopped_met": r["stopped_worst"] <= 1.0 and r["in_range"],
                     "full_met": full["full_met"], "stopped": r["stopped"]})  # fmt: skip
        steps += [
            {**{k: r[k] for k in key}, **row, "full_met": full["full_met"]} for row in full["trajectory"]
        ]
    table = pl.DataFrame(rows)
    return table, (pl.DataFrame(steps) if trajectories else None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m storagelab.verify.early_stop", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "params_file", nargs="?", type=Path, default=Path("params/19-compare-architectures.yaml")
    )
    parser.add_argument("--trajectories", type=Path, metavar="FILE",
                        help="also rerun the full-length runs and write every run's ratios at each sixteenth "
                             "of its measured time to FILE (Parquet)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.trajectories is not None and args.trajectories.suffix != ".parquet":
        parser.error(
            f"--trajectories: the file is written as Parquet; name it *.parquet, got {args.trajectories}"
        )
    t = time.perf_counter()
    table, steps = stopped_against_full(args.params_file, trajectories=args.trajectories is not None)
    stopped = table.filter(pl.col("stopped"))
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200):
        print(stopped.drop("stopped"))
    differ = stopped.filter(pl.col("stopped_met") != pl.col("full_met")).height
    print(f"{args.params_file}: {stopped.height} runs stopped early, {differ} decided otherwise by the full run "
          f"({time.perf_counter() - t:.0f} s)")  # fmt: skip
    if steps is not None:
        args.trajectories.parent.mkdir(parents=True, exist_ok=True)
        steps.write_parquet(args.trajectories)
        print(
            f"{args.trajectories}: the ratios of {table.height} runs at each sixteenth of their measured time"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
