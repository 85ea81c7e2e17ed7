"""Write the README's calibration table from the committed run (notebooks/calibration-quick.csv).

Called by `make calibration` after it re-runs the calibration; tests/test_readme.py checks the two agree.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from storagelab.calibration import CalibrationResult

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- calibration-table: generated from notebooks/calibration-quick.csv -->", "<!-- /calibration-table -->"


def block() -> str:
    table = CalibrationResult.read_csv(ROOT / "notebooks" / "calibration-quick.csv").to_markdown()
    return f"{START}\n{table}\n{END}"


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
