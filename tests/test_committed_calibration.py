"""The committed calibration run (notebooks/calibration-quick.csv) is what the code produces, and the
README's table is generated from it: every count a user sees comes from one run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl
import pytest

from storagelab import studies
from storagelab.calibration import COLUMNS, CalibrationResult

ROOT = Path(__file__).resolve().parents[1]

COMMITTED = ROOT / "notebooks" / "calibration-quick.csv"


def _readme_tool():
    spec = importlib.util.spec_from_file_location(
        "update_readme", ROOT / "ci" / "update_readme_calibration.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_table_is_generated_from_the_committed_run():
    block = _readme_tool().block()
    assert block in (ROOT / "README.md").read_text(encoding="utf-8"), (
        "README's calibration table differs from notebooks/calibration-quick.csv; run `make calibration` "
        f"(or python ci/update_readme_calibration.py). Expected:\n{block}"
    )


def test_readme_scores_are_generated_from_the_committed_runs():
    block = _readme_tool().scores_block()
    assert block in (ROOT / "README.md").read_text(encoding="utf-8"), (
        "README's uncertainty scores differ from the committed runs; run `make calibration`. Expected:\n"
        + block
    )


def test_committed_run_has_every_point():
    result = CalibrationResult.read_csv(COMMITTED)
    points = {p.key for sc in studies.scenarios() for p in sc.points}
    assert set(result.to_frame()["point"]) == points
    assert result.to_frame()["sensitive"].null_count() == 0


def _committed_text(path: Path, study: str | None = None, columns: tuple[str, ...] = COLUMNS) -> str:
    """The committed table's ``columns`` (of one ``study``, or all), written as ``to_csv`` writes them."""
    table = CalibrationResult.read_csv(COMMITTED).to_frame()
    if study is not None:
        table = table.filter(pl.col("study") == study)
    table.select(columns).write_csv(path, float_precision=6)
    return path.read_text()


@pytest.mark.slow
def test_committed_run_is_reproduced(tmp_path):
    """Re-run the quick calibration at the declared values and compare, as written to CSV (the columns of a
    run without uncertainty: the committed run's draws are checked on one study below)."""
    fresh = studies.calibrate(quick=True, replications=3, perturbed_replications=1, seed=1)
    out = fresh.to_csv(tmp_path / "fresh.csv")
    assert out.read_text() == _committed_text(tmp_path / "committed.csv"), (
        "re-run differs from the committed table: `make calibration`"
    )


#: The study whose draws CI re-runs byte for byte (the stated part of the committed run with uncertainty:
#: its scenarios are the cheapest that read uncertain parameters of presets and workloads).
REPRODUCED_STUDY = "vsan"


@pytest.mark.slow
def test_the_committed_draws_of_one_study_are_reproduced(tmp_path):
    """Re-run one study's calibration with the committed run's draws and compare its rows, every column,
    as written to CSV: the same seed gives the same intervals, drivers and leave-one-out flags."""
    committed = CalibrationResult.read_csv(COMMITTED)
    assert committed.has_uncertainty, "the committed run has no uncertainty columns: `make calibration`"
    draws = _readme_tool().DRAWS
    fresh = studies.calibrate(
        REPRODUCED_STUDY, quick=True, replications=3, perturbed_replications=1, seed=1, uncertainty=draws,
        workers=None,
    )  # fmt: skip
    out = fresh.to_csv(tmp_path / "fresh.csv")
    expected = _committed_text(tmp_path / "committed.csv", REPRODUCED_STUDY, committed.columns)
    assert out.read_text() == expected, f"{REPRODUCED_STUDY}'s draws differ from the committed run"


#: Dataset columns that say what a published number is a number *of* (the system, the test, the
#: conditions), as opposed to how the document words it (metric name, qualifier, quote, note).
CONDITIONS = (
    "study", "system", "configuration", "workload", "scenario", "quantity", "vm_count", "tile_count",
    "desktop_count", "mailbox_count", "host_count", "block_size_kib", "read_pct", "random_pct", "queue_depth",
    "threads", "drive_count", "drive_type", "raid", "link", "host_paths", "threshold_ms", "wan_rtt_ms",
)  # fmt: skip


def _same_quantity_in_two_claims(table) -> list[tuple[str, str]]:
    """Pairs of claims that score one simulated value (equal in the main and both perturbed runs)
    against rows that publish the same quantity of the same system under the same conditions."""
    from storagelab.calibration.claims import published_rows

    def conditions(point: str) -> tuple:
        row = published_rows()[point.split(" [")[0]]
        return tuple(row[c] for c in CONDITIONS)

    seen: dict[tuple, str] = {}
    pairs = []
    for r in table.iter_rows(named=True):
        key = (
            r["scenario"],
            r["simulated"],
            r["simulated_half"],
            r["simulated_double"],
            conditions(r["point"]),
        )
        other = seen.setdefault(key, r["claim"])
        if other != r["claim"]:
            pairs.append((other, r["claim"]))
    return pairs


def test_one_simulated_value_against_one_published_quantity_is_one_claim():
    """Statements that restate one number are one claim: two claims may not score the same simulated
    value against the same published quantity (NexGen's 'bursts into the 15,000 IOPS range' and 'as
    many as 17,000' were two, one of them read as an upper bound that 1 IOPS would pass)."""
    pairs = _same_quantity_in_two_claims(CalibrationResult.read_csv(COMMITTED).to_frame())
    assert not pairs, f"claims scoring one simulated value against one published quantity: {pairs}"


def test_the_check_for_restated_numbers_can_fail():
    table = CalibrationResult.read_csv(COMMITTED).to_frame()
    row = table.filter(table["point"] == "s2-cache-iops-mean").row(0, named=True)
    twin = {**row, "claim": "a second claim", "point": "s2-cache-iops-burst"}
    import polars as pl

    doubled = pl.concat(
        [table.filter(table["point"] == "s2-cache-iops-mean"), pl.DataFrame([twin], schema=table.schema)]
    )
    assert _same_quantity_in_two_claims(doubled) == [("s2-cache-iops-mean", "a second claim")]


def test_every_committed_point_reads_its_row_as_the_row_states():
    from storagelab.calibration.claims import READINGS, published_rows

    table = CalibrationResult.read_csv(COMMITTED).to_frame()
    wrong = [
        (r["point"], r["comparison"])
        for r in table.iter_rows(named=True)
        if r["comparison"] != READINGS[published_rows()[r["point"].split(" [")[0]]["qualifier"]]
    ]
    assert not wrong, f"points read otherwise than their rows state: {wrong}"


def test_every_claim_that_moved_between_committed_runs_says_why():
    """Notebook 10's recount: each claim whose role, sensitivity or result differs between two successive
    committed runs (round two, the even rules, capacities from hardware) has a reason in
    ``studies.recount.RUNS`` (and no reason is left for a claim that did not move)."""
    from storagelab.studies import recount

    for before_csv, (after_csv, reasons) in recount.RUNS.items():
        before = CalibrationResult.read_csv(ROOT / "notebooks" / before_csv)
        moved = set(CalibrationResult.read_csv(ROOT / "notebooks" / after_csv).changes(before)["claim"])
        assert moved - set(reasons) == set(), f"claims that moved without a reason since {before_csv}"
        assert set(reasons) - moved == set(), f"reasons for claims that did not move since {before_csv}"


# -- out of study: envelope claims (issue 35) -------------------------------------------------------------


def test_envelope_rows_carry_addresses_quotes_and_readable_qualifiers(tmp_path):
    """Every envelope row names an address, quotes its source and has a qualifier the calibration reads; a
    row without an address is refused, naming the file, line and row."""
    from storagelab.studies import envelope

    table = envelope.rows()
    assert len(table) >= 12
    for claim in envelope.CLAIMS:
        assert all(r in table for r in claim.rows), claim.claim
    bad = tmp_path / envelope.ENVELOPE_FILE
    text = (envelope.dataset_dir() / envelope.ENVELOPE_FILE).read_text()
    header, first, *_ = text.splitlines()
    bad.write_text(header + "\n" + first.replace("https://", "ftp://", 1) + "\n")
    with pytest.raises(ValueError, match=r"line 2 .*source_file"):
        envelope.rows(tmp_path)


def test_committed_envelope_run_reproduces_and_the_readme_shows_it_apart():
    """The committed envelope run is what the claims give (quick, seed 1), and the README shows its figure
    beside, not added to, the in-study one."""
    import polars as pl
    from polars.testing import assert_frame_equal

    from storagelab.studies import envelope

    committed = pl.read_csv(ROOT / "notebooks" / "envelope-quick.csv")
    fresh = envelope.evaluate(seed=1, quick=True)
    columns = ("claim", "statement", "model", "within", "role", "sensitive")
    assert_frame_equal(fresh.select(columns), committed.select(columns), rel_tol=1e-9)
    within, counted = envelope.headline(committed)
    assert committed.filter(pl.col("role") == "predicted").height >= 12
    readme = (ROOT / "README.md").read_text()
    assert f"Out of study: {within} of {counted} informative envelope statements within tolerance" in readme


def test_every_scored_point_of_the_committed_run_has_all_its_draws():
    """A parameter draw that failed leaves its point's interval resting on the draws that ran (a warning
    at run time only): in the committed run every point that is scored (not derived) has every draw. Two
    derived boot times have fewer (a drawn power-on interval lengthens the storm past the quick run)."""
    import polars as pl

    table = CalibrationResult.read_csv(COMMITTED).to_frame()
    n = table["draws"].max()
    assert n == 16
    short = table.filter((pl.col("role") != "derived") & (pl.col("draws") < n))
    assert short.is_empty(), (
        f"scored points with failed draws: {short.select('study', 'point', 'draws').rows()}"
    )
