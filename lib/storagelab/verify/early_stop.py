"""How often ending a headroom search's runs early changes a decision: every run of a comparison that
:class:`~storagelab.analysis.headroom.ClearOutcome` stopped is run again to its end, and the two
decisions (every service level met with every component in its valid range, or not) are set side by side.
A pilot search's runs (:attr:`~storagelab.analysis.comparison.Settings.pilot_s`), which only choose where
the replications start and never enter a headroom, are not checked.

    python -m storagelab.verify.early_stop [params file]   # default: params/19-compare-architectures.yaml

prints one row per stopped run (architecture, seed, multiplier, simulated seconds of the stopped and
the full run, worst ratio of each, the two decisions) and the count of decisions that differ.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import polars as pl
from tqdm.auto import tqdm

from storagelab.analysis.comparison import Settings, _topology, candidate_run, compare
from storagelab.analysis.headroom import _beyond_range
from storagelab.analysis.workload_mix import WorkloadMix
from storagelab.pipeline.params import load_params
from storagelab.pipeline.schemas import CandidateSpec


def stopped_against_full(params_file: Path) -> pl.DataFrame:
    """Per run the comparison of ``params_file`` stopped early: its decision and the full run's."""
    p = load_params(Path("notebooks/19-compare-architectures.ipynb"), params_file)
    mix = WorkloadMix.from_mapping(p["mix"], str(params_file))
    candidates = [CandidateSpec.model_validate(c).candidate() for c in p["candidates"] + p.get("what_if", [])]
    settings = Settings(duration_s=p["duration_s"], warmup_s=p["warmup_s"], replications=p["replications"],
                        low=p["low"], high=p["high"], tolerance=p["tolerance"], seed=p["seed"])  # fmt: skip
    result = compare(mix, candidates, settings)
    runs = (
        result.evaluations()
        .filter(~pl.col("pilot") & (pl.col("run_s") < settings.duration_s))  # the pilot's runs are shorter
        .group_by("architecture", "bound", "seed", "multiplier", maintain_order=True)
        .agg(pl.col("run_s").first(), pl.col("in_range").all(), stopped_worst=pl.col("ratio").max())
    )
    by_label = {c.label: c for c in candidates}
    rows = []
    for r in tqdm(runs.iter_rows(named=True), total=runs.height, desc="full runs", unit="run"):
        c = by_label[r["architecture"]]
        levels = mix.service_levels(_topology(c, r["bound"])[1])
        full = candidate_run(mix, c, settings, r["bound"], early_stop=False)(r["multiplier"], r["seed"])
        worst = max(lv.ratio(full) for lv in levels)
        met_full = worst <= 1.0 and _beyond_range(full) is None
        rows.append(
            {
                **r,
                "full_worst": worst,
                "stopped_met": r["stopped_worst"] <= 1.0 and r["in_range"],
                "full_met": met_full,
            }
        )
    return pl.DataFrame(rows)


def main(argv: list[str]) -> int:
    params_file = Path(argv[0] if argv else "params/19-compare-architectures.yaml")
    t = time.perf_counter()
    table = stopped_against_full(params_file)
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200):
        print(table)
    differ = table.filter(pl.col("stopped_met") != pl.col("full_met")).height
    print(f"{params_file}: {table.height} runs stopped early, {differ} decided otherwise by the full run "
          f"({time.perf_counter() - t:.0f} s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
