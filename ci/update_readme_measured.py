"""Write the README's figures of the measured disk's checks from the committed check tables, which
`storagelab fit` writes (`make measured`): each day's model (fitted on `measurements/vda-ext4`, 2026-11-27,
and on `measurements/vda-ext4-day2`, 2026-12-05) on each day's held-back points and on each day's blind
validation points (the tables notebook 20's `cross_checks` parameter lists by default); tests/test_measured.py
checks that the README agrees and that a fresh fit reproduces the day-1 tables.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from storagelab.measured.check import summarize_checks
from storagelab.pipeline.schemas import YourSystemParams

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- measured-checks: generated from measurements/*/check*.csv -->", "<!-- /measured-checks -->"


def block() -> str:
    checks = [(c.model, c.points, ROOT / "notebooks" / c.table) for c in YourSystemParams().cross_checks]
    lines = [
        "| model fitted on | points checked | within tolerance | IOPS | mean latency | mixed | read-only or "
        "write-only | 80 % interval covers | misses: inside the job's own passes / the day's own model "
        "within tolerance / neither |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    pct = lambda v: f"{100 * v:.1f} %"  # noqa: E731
    for r in summarize_checks(checks).iter_rows(named=True):
        lines.append(
            f"| {r['model fitted on']} | {r['points checked']} | {r['within']} of {r['points']} "
            f"({pct(r['share'])}) | {pct(r['share_iops'])} | {pct(r['share_lat_mean'])} | "
            f"{pct(r['share_mixed'])} | {pct(r['share_pure'])} | {pct(r['coverage'])} | "
            f"{r['misses_inside_passes']} / {r['misses_own_model']} / "
            f"{r['misses'] - r['misses_inside_passes'] - r['misses_own_model']} |"
        )
    return "\n".join([START, *lines, END])


def main() -> int:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    pattern = re.compile(r"<!-- measured-checks: generated from [^>]*-->.*?" + re.escape(END), re.S)
    if not pattern.search(text):
        print(f"README.md has no {START!r} block", file=sys.stderr)
        return 1
    readme.write_text(pattern.sub(lambda _: block(), text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
