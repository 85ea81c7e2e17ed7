"""Published results: the numbers of the five source studies as tidy tables with provenance.

Each study is one CSV in the project's ``datasets/`` folder, all with the same columns (see
``datasets/README.md``): what was measured (system, configuration, workload, metric, value, unit), under
which conditions (VM count, tile count, block size, read %, ...), and where it comes from (source file,
section, a verbatim quote, and the kind of number: measured, vendor-claim, derived, rule-of-thumb or
configuration).

>>> from storagelab.published import datasets
>>> vsan = datasets.load("vsan")                      # a Polars DataFrame
>>> vsan.filter(metric="iops").select("configuration", "vm_count", "value")

Loading validates every row (types, vocabularies, units, provenance present) and raises
:class:`DatasetError` naming the file, the line, the column and what is allowed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import pandera.polars as pa
import polars as pl
from pandera.errors import SchemaErrors

from storagelab.input_files import InputFileError
from storagelab.published.units import UNITS

#: Study id -> source document file name (as listed in the seeds' index).
SOURCES: dict[str, str] = {
    "nexgen": "000_95d1997ae9f905ef.txt",
    "vsan": "001_8f3c5816f8fbf1d5.txt",
    "ds5020": "002_3dbf0d9df4c2366f.txt",
    "vplex": "003_d9ad4d44f8318481.txt",
    "ilio": "004_496e3827612b8d9a.txt",
}

#: Study id -> one-line description of the source document.
TITLES: dict[str, str] = {
    "nexgen": "NexGen N5 Hybrid Flash Array + Cisco UCS + VMware (Principled Technologies, 2014/2015)",
    "vsan": "Intel + VMware Virtual SAN 5.5 reference architectures (2014)",
    "ds5020": "ESG Lab validation of IBM DS5020/DS3950 Express + BladeCenter HS22 (2010)",
    "vplex": "EMC VPLEX with XtremIO 2.4 white paper (2014)",
    "ilio": "Dell Wyse Datacenter for Citrix XenDesktop with Atlantis ILIO (2014)",
}

KINDS = ("measured", "vendor-claim", "derived", "rule-of-thumb", "configuration")
QUALIFIERS = ("exact", "approx", "at-least", "at-most", "over", "range-low", "range-high")

_TEXT = (
    "system",
    "configuration",
    "workload",
    "drive_type",
    "raid",
    "link",
    "scenario",
    "note",
    "conflict_group",
)
_INT = (
    "vm_count",
    "tile_count",
    "desktop_count",
    "mailbox_count",
    "host_count",
    "queue_depth",
    "threads",
    "drive_count",
    "drive_rpm",
    "host_paths",
)
_FLOAT = ("block_size_kib", "read_pct", "random_pct", "threshold_ms", "wan_rtt_ms")

#: The columns of every dataset file, in order.
COLUMNS: tuple[str, ...] = (
    "row_id",
    "study",
    "system",
    "configuration",
    "workload",
    "metric",
    "value",
    "qualifier",
    "unit",
    "vm_count",
    "tile_count",
    "desktop_count",
    "mailbox_count",
    "host_count",
    "block_size_kib",
    "read_pct",
    "random_pct",
    "queue_depth",
    "threads",
    "drive_count",
    "drive_type",
    "drive_rpm",
    "raid",
    "link",
    "host_paths",
    "threshold_ms",
    "wan_rtt_ms",
    "scenario",
    "source_file",
    "source_section",
    "quote",
    "kind",
    "conflict_group",
    "note",
)

#: The columns that describe the conditions of a measurement.
CONDITIONS: tuple[str, ...] = COLUMNS[COLUMNS.index("vm_count") : COLUMNS.index("source_file")]


def _schema(study: str) -> pa.DataFrameSchema:
    """The pandera schema every row of ``study``'s file must satisfy."""
    required = dict(nullable=False)
    cols: dict[str, pa.Column] = {
        "row_id": pa.Column(str, pa.Check.str_matches(r"^[a-z0-9][a-z0-9_.-]*$"), unique=True, **required),
        "study": pa.Column(str, pa.Check.isin([study]), **required),
        "metric": pa.Column(str, pa.Check.str_matches(r"^[a-z][a-z0-9_]*$"), **required),
        "value": pa.Column(pl.Float64, **required),
        "qualifier": pa.Column(str, pa.Check.isin(QUALIFIERS), **required),
        "unit": pa.Column(str, pa.Check.isin(list(UNITS)), **required),
        "source_file": pa.Column(str, pa.Check.isin([SOURCES[study]]), **required),
        "source_section": pa.Column(str, **required),
        "quote": pa.Column(str, pa.Check.str_length(min_value=3, max_value=400), **required),
        "kind": pa.Column(str, pa.Check.isin(KINDS), **required),
        "read_pct": pa.Column(pl.Float64, pa.Check.in_range(0, 100), nullable=True),
        "random_pct": pa.Column(pl.Float64, pa.Check.in_range(0, 100), nullable=True),
    }
    for c in _TEXT:
        cols[c] = pa.Column(str, nullable=c != "system")
    for c in _INT:
        cols[c] = pa.Column(pl.Int64, pa.Check.ge(0), nullable=True)
    for c in _FLOAT:
        cols.setdefault(c, pa.Column(pl.Float64, pa.Check.ge(0), nullable=True))
    return pa.DataFrameSchema({c: cols[c] for c in COLUMNS}, strict=True, ordered=True)


class DatasetError(InputFileError):
    """A dataset file that does not follow the schema; the message names the file, lines and columns."""


def dataset_dir() -> Path:
    """The folder holding the study CSVs: ``$STORAGELAB_DATASETS`` or the project's ``datasets/``."""
    env = os.environ.get("STORAGELAB_DATASETS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "datasets"


def studies() -> list[str]:
    """The study ids, in the order of the source documents."""
    return list(SOURCES)


def _read_raw(path: Path) -> pl.DataFrame:
    if not path.is_file():
        raise DatasetError(f"{path}: dataset file not found")
    try:
        raw = pl.read_csv(path, infer_schema=False, encoding="utf8")
    except (pl.exceptions.PolarsError, UnicodeDecodeError, OSError) as err:  # OSError: bytes polars takes
        # for a compressed stream (it sniffs zlib, gzip, zstd magic) that then fails to inflate
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise DatasetError(
            f"{path}: not a CSV of the {len(COLUMNS)} columns of datasets/README.md, UTF-8 ({first})"
        ) from None
    if tuple(raw.columns) != COLUMNS:
        missing = [c for c in COLUMNS if c not in raw.columns]
        extra = [c for c in raw.columns if c not in COLUMNS]
        raise DatasetError(
            f"{path}: header must be the {len(COLUMNS)} columns of datasets/README.md in order; "
            f"missing {missing}, unexpected {extra}"
        )
    if raw.height == 0:
        raise DatasetError(
            f"{path}: the header and no rows (a truncated file?); a study's file lists its rows"
        )
    # Empty cells are missing values; surrounding whitespace is never meaningful.
    return raw.with_columns(
        pl.when(pl.col(c).str.strip_chars() == "").then(None).otherwise(pl.col(c).str.strip_chars()).alias(c)
        for c in COLUMNS
    )


def _typed(path: Path, raw: pl.DataFrame) -> pl.DataFrame:
    """Cast the numeric columns, naming every cell that is not a number of the right kind."""
    casts = {c: pl.Int64 for c in _INT} | {c: pl.Float64 for c in ("value", *_FLOAT)}
    typed = raw.with_columns(pl.col(c).cast(t, strict=False) for c, t in casts.items())
    problems = []
    for c, t in casts.items():
        bad = raw.with_row_index("line", offset=2).filter(pl.col(c).is_not_null() & typed[c].is_null())
        what = "an integer" if t == pl.Int64 else "a number"
        problems += [
            f"  {path.name} line {r['line']} (row_id={r['row_id']!r}), column {c!r}: {r[c]!r} is not {what}"
            for r in bad.iter_rows(named=True)
        ]
        if t == pl.Float64:  # 'inf' and 'nan' cast to numbers no published table holds
            odd = raw.with_row_index("line", offset=2).filter(typed[c].is_infinite() | typed[c].is_nan())
            problems += [
                f"  {path.name} line {r['line']} (row_id={r['row_id']!r}), column {c!r}: {r[c]!r} is not a "
                "finite number"
                for r in odd.iter_rows(named=True)
            ]
    if problems:
        raise DatasetError(f"{path}: {len(problems)} value(s) of the wrong type\n" + "\n".join(problems))
    return typed


def _describe(path: Path, raw: pl.DataFrame, err: SchemaErrors, study: str, limit: int = 20) -> str:
    cases = err.failure_cases
    lines = []
    for case in cases.head(limit).iter_rows(named=True):
        idx = case.get("index")
        column, check = case.get("column"), str(case.get("check"))
        where = (
            f"{path.name} line {idx + 2} (row_id={raw['row_id'][idx]!r})" if idx is not None else path.name
        )
        allowed = {
            "unit": f"allowed units: {', '.join(UNITS)}",
            "kind": f"allowed kinds: {', '.join(KINDS)}",
            "qualifier": f"allowed qualifiers: {', '.join(QUALIFIERS)}",
            "source_file": f"must be {SOURCES[study]!r}",
            "study": f"must be {study!r}",
        }.get(str(column), check)
        lines.append(f"  {where}, column {column!r}: {case.get('failure_case')!r} — {allowed}")
    more = f"\n  ... and {len(cases) - limit} more" if len(cases) > limit else ""
    return f"{path}: {len(cases)} invalid value(s)\n" + "\n".join(lines) + more


def _check_rules(path: Path, df: pl.DataFrame) -> None:
    """Rules across columns that a per-column schema cannot state."""
    problems = []
    for row in df.iter_rows(named=True):
        where = f"{path.name} row_id={row['row_id']!r}"
        if row["kind"] == "derived" and not row["note"]:
            problems.append(f"  {where}: a derived value needs a note giving its derivation")
        if row["conflict_group"] and not row["note"]:
            problems.append(f"  {where}: a conflicting row needs a note explaining the conflict")
    groups = df.filter(pl.col("conflict_group").is_not_null()).group_by("conflict_group").len()
    for group, n in groups.iter_rows():
        if n < 2:
            problems.append(
                f"  {path.name}: conflict_group {group!r} has only one row; a conflict needs two sides"
            )
    if problems:
        raise DatasetError(f"{path}: {len(problems)} problem(s)\n" + "\n".join(problems))


def read_study(study: str, directory: Path | None = None) -> pl.DataFrame:
    """Read and validate one study's CSV; return it as a typed Polars frame (the file's own columns)."""
    if study not in SOURCES:
        raise DatasetError(f"unknown study {study!r}; known studies: {', '.join(SOURCES)}")
    path = (directory or dataset_dir()) / f"{study}.csv"
    raw = _read_raw(path)
    try:
        df = _schema(study).validate(_typed(path, raw), lazy=True)
    except SchemaErrors as err:
        raise DatasetError(_describe(path, raw, err, study)) from None
    _check_rules(path, df)
    return df


def _with_si(df: pl.DataFrame) -> pl.DataFrame:
    factors = pl.DataFrame(
        {
            "unit": list(UNITS),
            "si_factor": [u.factor for u in UNITS.values()],
            "si_unit": [u.si_unit for u in UNITS.values()],
            "quantity": [u.quantity for u in UNITS.values()],
        }
    )
    out = df.join(factors, on="unit", how="left", maintain_order="left")
    return out.with_columns(si_value=pl.col("value") * pl.col("si_factor")).drop("si_factor")


def load(
    study: str | Iterable[str] | None = None,
    *,
    directory: Path | None = None,
    backend: Literal["polars", "pandas"] = "polars",
) -> pl.DataFrame:
    """Load published results, validated, with ``si_value``/``si_unit``/``quantity`` columns added.

    ``study`` is one study id, several, or ``None`` for all five. ``backend="pandas"`` returns a
    pandas DataFrame instead of Polars.
    """
    names = list(SOURCES) if study is None else [study] if isinstance(study, str) else list(study)
    df = _with_si(pl.concat([read_study(s, directory) for s in names], how="vertical"))
    if backend == "pandas":
        return df.to_pandas()
    if backend != "polars":
        raise ValueError(f"backend must be 'polars' or 'pandas', got {backend!r}")
    return df


def conflicts(df: pl.DataFrame) -> pl.DataFrame:
    """The rows that the source contradicts elsewhere, grouped by ``conflict_group``."""
    return df.filter(pl.col("conflict_group").is_not_null()).sort("conflict_group", "row_id")


def row_counts(df: pl.DataFrame) -> pl.DataFrame:
    """Rows per study and kind of number, the table ``datasets/README.md`` quotes."""
    return (
        df.pivot(on="kind", index="study", values="row_id", aggregate_function="len")
        .fill_null(0)
        .with_columns(total=pl.sum_horizontal(pl.exclude("study")))
        .pipe(lambda t: t.select("study", *[k for k in KINDS if k in t.columns], "total"))
        .sort("study")
    )


_WS = re.compile(r"\s+")


def normalise_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space, as quote matching does."""
    return _WS.sub(" ", text).strip()
