"""Write the README's figures of the measured disk's checks from the committed check tables
(measurements/vda-ext4/check.csv: the held-back points; measurements/vda-ext4-validation/check.csv: the
blind validation points), which `storagelab fit measurements/vda-ext4 [--check-on ...]` writes;
tests/test_measured.py checks that the README agrees and that a fresh fit reproduces the tables.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import polars as pl

from storagelab.measured.check import share_within

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- measured-checks: generated from measurements/*/check.csv -->", "<!-- /measured-checks -->"
CHECKS = (
    ("held-back points of `measurements/vda-ext4` (not blind: the model's structure was chosen on them)",
     "measurements/vda-ext4/check.csv"),
    ("validation points of `measurements/vda-ext4-validation` (blind: measured after the fit was frozen)",
     "measurements/vda-ext4-validation/check.csv"),
)  # fmt: skip


def block() -> str:
    lines = ["| check | points within tolerance | IOPS | mean latency |", "| --- | --- | --- | --- |"]
    for what, path in CHECKS:
        s = share_within(pl.read_csv(ROOT / path))
        lines.append(
            f"| {what} | {s['within']} of {s['points']} ({100 * s['share']:.1f} %) | "
            f"{100 * s['share_iops']:.1f} % | {100 * s['share_lat_mean']:.1f} % |"
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
