"""Write the README's benchmark table from the two committed `storagelab bench` runs
(benchmarks/bench-1.csv and benchmarks/bench-2.csv, written by `make bench`).

Each figure cell shows run 1 / run 2. tests/test_benchmark.py checks the README and the files agree.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
RUNS = (ROOT / "benchmarks" / "bench-1.csv", ROOT / "benchmarks" / "bench-2.csv")
START, END = "<!-- bench-table: generated from benchmarks/bench-1.csv and bench-2.csv -->", "<!-- /bench-table -->"


def _cell(values: list[float | None], fmt: str) -> str:
    if all(v is None for v in values):
        return ""
    return " / ".join(format(v, fmt) if v is not None else "" for v in values)


def block() -> str:
    runs = [pl.read_csv(p) for p in RUNS]
    lines = [
        "| model | scenario | simulated IOs / wall s | x Ciw | x SimPy | mean response (ms) | Erlang C (ms) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for i, row in enumerate(runs[0].iter_rows(named=True)):
        both = [r.row(i, named=True) for r in runs]
        if any((b["model"], b["scenario"]) != (row["model"], row["scenario"]) for b in both):
            raise ValueError("the two benchmark runs do not have the same rows in the same order")
        lines.append(
            f"| {row['model']} | {row['scenario']} | {_cell([b['ios_per_second'] for b in both], ',.0f')} "
            f"| {_cell([b['ratio_to_ciw'] for b in both], '.1f')} | {_cell([b['ratio_to_simpy'] for b in both], '.2f')} "
            f"| {_cell([b['mean_response_ms'] for b in both], '.3f')} | {_cell([row['analytic_mean_ms']], '.3f')} |"
        )
    return "\n".join([START, *lines, END])


def main() -> int:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        print(f"README.md has no {START!r} block", file=sys.stderr)
        return 1
    readme.write_text(pattern.sub(lambda _: block(), text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
