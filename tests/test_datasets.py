"""The published-results datasets: schema, units, provenance, coverage of the issue's list, conflicts."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest

from storagelab.published import datasets
from storagelab.published.units import UNITS

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
WORDS: dict[str, float] = {w: float(i) for i, w in enumerate(_ONES.split())} | {
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "hundred": 100,
    "half": 0.5,
    "double": 2,
    "twice": 2,
    "triple": 3,
    "doubling": 2,
    "doubled": 2,
    "tripled": 3,
    "dual": 2,
    "single": 1,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}


def numbers_in(quote: str) -> set[float]:
    """Every number a reader sees in a quote: 1,234 / .014 / 4.5 / 10K / 2M / number words."""
    found: set[float] = set()
    for m in re.finditer(r"(\d[\d,]*(?:\.\d+)?|\.\d+)\s?([kKM])?", quote):
        x = float(m.group(1).replace(",", ""))
        found.add(x)
        if m.group(2) in ("k", "K"):
            found.add(x * 1e3)
        elif m.group(2) == "M":
            found.add(x * 1e6)
    found |= {float(WORDS[w.lower()]) for w in re.findall(r"[A-Za-z]+", quote) if w.lower() in WORDS}
    for tens, ones in re.findall(r"\b([A-Za-z]+)-([A-Za-z]+)\b", quote):  # "Forty-two"
        if tens.lower() in _TENS and ones.lower() in WORDS and WORDS[ones.lower()] < 10:
            found.add(_TENS[tens.lower()] + WORDS[ones.lower()])
    # compound durations as a reader adds them up: "2 minutes 50 seconds" (s), "1 hour 50 minutes" (min)
    for big, small in re.findall(r"(\d+) minutes?,? (?:and )?(\d+) seconds?", quote):
        found.add(60.0 * int(big) + int(small))
    for big, small in re.findall(r"(\d+) hours?,? (?:and )?(\d+) minutes?", quote):
        found.add(60.0 * int(big) + int(small))
    return found


def test_every_study_loads_with_the_common_schema(published):
    assert published.columns[: len(datasets.COLUMNS)] == list(datasets.COLUMNS)
    assert set(published["study"].unique()) == set(datasets.SOURCES)
    counts = dict(published.group_by("study").len().iter_rows())
    assert all(n >= 100 for n in counts.values()), counts


def test_every_row_has_units_and_provenance(published):
    for col in ("unit", "source_file", "source_section", "quote", "kind", "metric", "value"):
        assert published[col].null_count() == 0, col
    assert set(published["unit"]) <= set(UNITS)
    assert published["si_value"].null_count() == 0
    assert set(published["kind"]) <= set(datasets.KINDS)
    wrong_source = published.filter(pl.col("source_file") != pl.col("study").replace_strict(datasets.SOURCES))
    assert wrong_source.is_empty()


def test_every_quote_occurs_in_its_source_document(published, seeds):
    texts = {
        f: datasets.normalise_whitespace((seeds / f).read_text(encoding="utf-8"))
        for f in datasets.SOURCES.values()
    }
    missing = [
        (r["row_id"], r["quote"][:60])
        for r in published.iter_rows(named=True)
        if datasets.normalise_whitespace(r["quote"]) not in texts[r["source_file"]]
    ]
    assert missing == []


def test_non_derived_values_appear_in_their_quote(published):
    """A measured/claimed/configured number is quoted as written; only derived rows may compute."""
    absent = [
        (r["row_id"], r["value"], r["quote"][:60])
        for r in published.filter(pl.col("kind") != "derived").iter_rows(named=True)
        if not any(abs(r["value"] - x) <= 1e-9 * max(1.0, abs(x)) for x in numbers_in(r["quote"]))
    ]
    assert absent == []


def test_derived_rows_explain_their_arithmetic(published):
    assert published.filter(kind="derived")["note"].null_count() == 0


def test_conflicts_named_in_the_issue_are_kept_on_both_sides(published):
    groups = datasets.conflicts(published).group_by("conflict_group").agg(pl.col("value").unique())
    by_group = dict(groups.iter_rows())
    # DS5020: the summary and "The Bigger Truth" give different Orion and web-server IOPS.
    assert {3539.0, 4144.0} <= set(by_group["ds5020-orion-iops"])
    assert {3317.0, 4551.0} <= set(by_group["ds5020-web-iops"])
    sizes = datasets.conflicts(published).group_by("conflict_group").len()
    assert sizes["len"].min() >= 2


def test_vsan_covers_iops_and_service_levels_per_configuration(published):
    vsan = published.filter(study="vsan")
    configs = {"hybrid Xeon E5 v2", "hybrid Xeon E5 v3", "all-flash NVMe"}
    assert set(vsan.filter(metric="iops")["configuration"]) >= configs
    shares = vsan.filter(metric="share_under_threshold")
    assert set(shares["configuration"]) >= configs
    assert set(shares["threshold_ms"].drop_nulls()) >= {1.0, 2.0, 5.0, 10.0, 30.0}
    assert shares["value"].is_between(0, 100).all()
    workload = vsan.filter(metric="read_pct")
    assert 70.0 in workload["value"].to_list()


def test_ds5020_covers_tables_mix_and_guidelines(published):
    ds = published.filter(study="ds5020")
    for table in ("Table 1", "Table 2", "Table 3", "Table 4", "Table 5"):
        assert ds.filter(pl.col("source_section").str.contains(table)).height > 0, table
    mix = ds.filter(metric="size_mix_share", workload="Iometer web server")
    assert mix.height == 10
    assert mix["value"].sum() == pytest.approx(100, abs=0.5)
    assert ds.filter(kind="rule-of-thumb").height >= 5
    jetstress = ds.filter(metric="iops", workload="Jetstress").filter(
        pl.col("source_section").str.contains("Table 2")
    )
    assert sorted(jetstress["tile_count"].to_list()) == [1, 2, 3, 4]


def test_nexgen_covers_qos_policies_and_results(published):
    nx = published.filter(study="nexgen")
    for metric in ("qos_iops_target_min", "qos_bandwidth_target_min", "qos_latency_target"):
        assert nx.filter(metric=metric).height == 5, metric
    assert nx.filter(metric="orders_per_minute").height >= 2
    assert nx.filter(metric="boot_time").height >= 1
    assert nx.filter(metric="lun_size").height >= 5


def test_vplex_latency_adders_are_ranges(published):
    vp = published.filter(study="vplex").filter(pl.col("metric").str.starts_with("latency_"))
    assert {"range-low", "range-high"} <= set(vp["qualifier"])
    assert vp.filter(qualifier="range-low").height == vp.filter(qualifier="range-high").height
    assert published.filter(study="vplex", kind="rule-of-thumb").height >= 1


def test_ilio_covers_section_7_and_boot_storm(published):
    il = published.filter(study="ilio")
    assert il.filter(pl.col("source_section").str.contains("7.1")).height >= 40
    assert il.filter(metric="boot_time").height >= 1
    assert il.filter(metric="iops_per_desktop").height >= 2
    assert 96.0 in il.filter(metric="iops_reduction")["value"].to_list()


def test_readme_row_counts_match_the_files(published):
    readme = (Path(datasets.dataset_dir()) / "README.md").read_text()
    for study, total in dict(published.group_by("study").len().iter_rows()).items():
        assert re.search(rf"^\| `{study}` .*\| {total} \|$", readme, re.M), f"{study}: {total} rows"


# --- bad dataset files are refused with a message naming file, line, column and what is allowed ---


@pytest.fixture
def broken(tmp_path: Path):
    """A copy of vsan.csv whose text a test edits before loading."""
    src = datasets.dataset_dir() / "vsan.csv"
    dst = tmp_path / "vsan.csv"
    shutil.copy(src, dst)

    def edit(old: str, new: str) -> Path:
        text = dst.read_text(encoding="utf-8")
        assert old in text
        dst.write_text(text.replace(old, new, 1), encoding="utf-8")
        return tmp_path

    return edit


def test_unknown_unit_is_named_with_the_allowed_list(broken):
    d = broken(",IOPS,", ",IOPs,")
    with pytest.raises(
        datasets.DatasetError, match=r"vsan\.csv line \d+ .*column 'unit': 'IOPs'.*allowed units: IOPS"
    ):
        datasets.read_study("vsan", d)


def test_non_numeric_value_is_named(broken):
    d = broken(",11500,", ",11.5k,")
    with pytest.raises(datasets.DatasetError, match=r"column 'value': '11.5k' is not a number"):
        datasets.read_study("vsan", d)


def test_missing_column_is_named(broken):
    d = broken("row_id,study,", "id,study,")
    with pytest.raises(datasets.DatasetError, match=r"missing \['row_id'\], unexpected \['id'\]"):
        datasets.read_study("vsan", d)


def test_wrong_source_file_and_kind_are_refused(broken, tmp_path):
    d = broken(",measured,", ",measurd,")
    with pytest.raises(datasets.DatasetError, match=r"column 'kind': 'measurd'.*allowed kinds"):
        datasets.read_study("vsan", d)


def test_one_sided_conflict_is_refused(broken, published):
    group = published.filter(study="vsan").filter(pl.col("conflict_group").is_not_null())["conflict_group"][0]
    d = broken(f",{group},", ",lonely-conflict,")
    with pytest.raises(datasets.DatasetError, match="conflict_group 'lonely-conflict' has only one row"):
        datasets.read_study("vsan", d)


def test_unknown_study_and_missing_file(tmp_path):
    with pytest.raises(datasets.DatasetError, match="unknown study 'emc'; known studies: nexgen"):
        datasets.read_study("emc")
    with pytest.raises(datasets.DatasetError, match="dataset file not found"):
        datasets.read_study("vsan", tmp_path)


def test_pandas_backend_returns_the_same_rows(published):
    pdf = datasets.load("vsan", backend="pandas")
    assert len(pdf) == published.filter(study="vsan").height
    assert "si_value" in pdf.columns
