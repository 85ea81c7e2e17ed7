"""Write the README's calibration tables from the committed runs: the in-study table from
notebooks/calibration-quick.csv and the out-of-study (envelope) table from notebooks/envelope-quick.csv,
two headline figures never added together. ``--envelope`` first re-runs the envelope claims (quick, seed 1)
and rewrites notebooks/envelope-quick.csv.

Called by `make calibration` after it re-runs the calibration; tests check the README and the runs agree.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from storagelab.calibration import CalibrationResult

ROOT = Path(__file__).resolve().parents[1]
START, END = (
    "<!-- calibration-table: generated from notebooks/calibration-quick.csv -->",
    "<!-- /calibration-table -->",
)
ENV_START, ENV_END = (
    "<!-- envelope-table: generated from notebooks/envelope-quick.csv -->",
    "<!-- /envelope-table -->",
)
SCORES_START, SCORES_END = (
    "<!-- uncertainty-scores: generated from notebooks/calibration-quick.csv and notebooks/envelope-quick.csv -->",
    "<!-- /uncertainty-scores -->",
)
ENVELOPE_CSV = ROOT / "notebooks" / "envelope-quick.csv"
#: Draws of the uncertain parameters per scenario in the committed runs (`make calibration`).
DRAWS = 16


def block() -> str:
    table = CalibrationResult.read_csv(ROOT / "notebooks" / "calibration-quick.csv").to_markdown()
    return f"{START}\n{table}\n{END}"


def scores_block() -> str:
    """The four scores, in study and out of study, raw and with the discrepancy band, from the committed
    runs (:func:`storagelab.calibration.scores.scores`)."""
    import polars as pl

    from storagelab.calibration import scores

    calibration = CalibrationResult.read_csv(ROOT / "notebooks" / "calibration-quick.csv").to_frame()
    table = scores.scores(calibration, pl.read_csv(ENVELOPE_CSV))
    lines = [
        "| scope | interval | claims | 80 % interval covers | 95 % interval covers | median high / low (80 %) "
        "| median \\|ln(simulated / published)\\| | within tolerance (today's count) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in table.iter_rows(named=True):
        lines.append(
            f"| {r['scope']} | {r['intervals']} | {r['claims']} | {r['covered80']} ({r['coverage80']:.0%}) | "
            f"{r['covered95']} ({r['coverage95']:.0%}) | {r['sharpness80']:.2f} | {r['median_error']:.2f} | "
            f"{r['within_tolerance']} |"
        )
    return f"{SCORES_START}\n" + "\n".join(lines) + f"\n{SCORES_END}"


def envelope_block() -> str:
    import polars as pl

    from storagelab.studies import envelope

    table = pl.read_csv(ENVELOPE_CSV)
    within, counted = envelope.headline(table)
    apart = envelope.set_apart(table)
    statements = {r["statement"]: r for r in envelope.statements(table).iter_rows(named=True)}
    lines = [
        f"**Out of study: {within} of {counted} informative envelope statements within tolerance** "
        f"({100 * within / counted:.1f} %; {sum(apart.values())} set apart: "
        + ", ".join(f"{n} {why}" for why, n in apart.items())
        + ").",
        "",
        "| claim | statement | family | published | model | within | counted |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {r['claim']} | {r['statement'] if r['statement'] != r['claim'] else '(itself)'} | {r['family']} | "
        f"{r['published']} {r['unit']} ({r['reading']}) | {envelope._number(r['model'])} | "
        f"{'yes' if r['within'] else 'no'} | "
        f"{'yes' if statements[r['statement']]['counted'] else 'no: ' + statements[r['statement']]['set_apart']} |"
        for r in table.iter_rows(named=True)
    ]
    return f"{ENV_START}\n" + "\n".join(lines) + f"\n{ENV_END}"


def main() -> int:
    if "--envelope" in sys.argv[1:]:
        from storagelab.studies import envelope

        envelope.evaluate(seed=1, quick=True, uncertainty=DRAWS, workers=None).write_csv(ENVELOPE_CSV)
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    blocks = ((START, END, block), (ENV_START, ENV_END, envelope_block), (SCORES_START, SCORES_END, scores_block))
    for start, end, make in blocks:
        pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
        if not pattern.search(text):
            print(f"README.md has no {start!r} block", file=sys.stderr)
            return 1
        text = pattern.sub(lambda _, make=make: make(), text)
    readme.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
