"""The calibration's results object: the table of every point, and the claims it adds up to."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from storagelab.calibration.claims import COLUMNS, SCHEMA, UNCERTAINTY_COLUMNS, UNCERTAINTY_SCHEMA

#: The studies in the order tables list them (``datasets/`` ids).
STUDY_ORDER = ("ds5020", "vsan", "nexgen", "ilio", "vplex")


@dataclass(frozen=True)
class CalibrationResult:
    """A calibration run (in the style of statsmodels' results): ``to_frame()`` is the table, one row per
    published point (:data:`~storagelab.calibration.claims.COLUMNS`); ``claims()`` one row per claim;
    ``pass_rates()`` the counts per study; ``summary()`` the headline with the insensitive and derived
    claims listed apart; ``chart()`` simulated against published.

    The headline is **informative predicted claims within tolerance / informative predicted claims**:
    predicted (no fitted parameter was fitted on them, not arithmetic) and sensitive (they fail when the
    presets' capacity is halved or doubled). Fitted claims are counted separately."""

    table: pl.DataFrame

    def __post_init__(self) -> None:
        missing = [c for c in COLUMNS if c not in self.table.columns]
        if missing:
            raise ValueError(f"a calibration table needs the columns {missing}")

    @property
    def columns(self) -> tuple[str, ...]:
        """The table's columns: :data:`~storagelab.calibration.claims.COLUMNS`, then
        :data:`~storagelab.calibration.claims.UNCERTAINTY_COLUMNS` when the run had ``uncertainty``."""
        return COLUMNS + (UNCERTAINTY_COLUMNS if self.has_uncertainty else ())

    @property
    def has_uncertainty(self) -> bool:
        """Whether the run drew the uncertain parameters (the table has every uncertainty column)."""
        return all(c in self.table.columns for c in UNCERTAINTY_COLUMNS)

    # -- frames -------------------------------------------------------------------------------------
    def to_frame(self) -> pl.DataFrame:
        """Every point: one row each, nothing dropped."""
        return self.table

    def study(self, *names: str) -> CalibrationResult:
        """The result of one study or several."""
        missing = [n for n in names if n not in self.studies]
        if missing or not names:
            raise ValueError(
                f"no study {missing or list(names)!r} in this result; it has {', '.join(self.studies)}"
            )
        return CalibrationResult(self.table.filter(pl.col("study").is_in(list(names))))

    @property
    def studies(self) -> list[str]:
        present = set(self.table["study"].to_list())
        return [s for s in STUDY_ORDER if s in present] + sorted(present - set(STUDY_ORDER))

    def claims(self) -> pl.DataFrame:
        """One row per claim: study, claim, role, sensitive, pass, its points, and a description."""
        return (
            self.table.group_by("study", "claim", maintain_order=True)
            .agg(
                role=pl.col("role").first(),
                sensitive=pl.col("sensitive").first(),
                passed=pl.col("pass").all(),
                points=pl.len(),
                description=pl.col("description").first(),
            )
            .rename({"passed": "pass"})
        )

    def pass_rates(self) -> pl.DataFrame:
        """Per study and in total: informative predicted claims and how many are within tolerance (the
        headline), insensitive predicted claims, fitted claims, and derived claims (never counted)."""
        c = self.claims()
        pred = pl.col("role") == "predicted"
        informative = pred & pl.col("sensitive")

        def counts(frame: pl.DataFrame, study: str) -> dict:
            def n(expr: pl.Expr) -> int:
                return frame.filter(expr).height

            inf, inf_ok = n(informative), n(informative & pl.col("pass"))
            return {
                "study": study,
                "informative_predicted": inf,
                "within_tolerance": inf_ok,
                "share_pct": round(100 * inf_ok / inf, 1) if inf else None,
                "insensitive_predicted": n(pred & ~pl.col("sensitive")),
                "fitted": n(pl.col("role") == "fitted"),
                "fitted_within_tolerance": n((pl.col("role") == "fitted") & pl.col("pass")),
                "derived": n(pl.col("role") == "derived"),
                "points": int(self.table.filter(pl.col("study") == study).height) if study != "total" else self.table.height,
            }  # fmt: skip

        rows = [counts(c.filter(pl.col("study") == s), s) for s in self.studies]
        rows.append(counts(c, "total"))
        return pl.DataFrame(rows)

    def headline(self) -> str:
        """The headline in one sentence: informative predicted claims within tolerance."""
        total = self.pass_rates().row(-1, named=True)
        share = "n/a" if total["share_pct"] is None else f"{total['share_pct']:g} %"
        return (
            f"{total['within_tolerance']} of {total['informative_predicted']} informative predicted claims "
            f"within tolerance ({share}); {total['fitted_within_tolerance']} of {total['fitted']} fitted; "
            f"{total['insensitive_predicted']} predicted claims insensitive and {total['derived']} derived, "
            "not counted"
        )

    def to_markdown(self) -> str:
        """The counts per study as a Markdown table (the README's, generated from the committed run)."""
        head = (
            "| study | informative predicted claims within tolerance | insensitive predicted | fitted within "
            "tolerance | derived | points |\n| --- | --- | --- | --- | --- | --- |"
        )
        lines = [head]
        for r in self.pass_rates().iter_rows(named=True):
            share = "" if r["share_pct"] is None else f" ({r['share_pct']:g} %)"
            name = "**total**" if r["study"] == "total" else f"`{r['study']}`"
            lines.append(
                f"| {name} | {r['within_tolerance']} of {r['informative_predicted']}{share} | "
                f"{r['insensitive_predicted']} | {r['fitted_within_tolerance']} of {r['fitted']} | {r['derived']} | "
                f"{r['points']} |"
            )
        return "\n".join(lines)

    def recount(self, before: CalibrationResult) -> pl.DataFrame:
        """The counts of :meth:`pass_rates` for ``before`` (an earlier run) and for this run side by side,
        per study and in total: informative predicted claims and how many are within tolerance, and the
        claims set apart (insensitive, fitted, derived)."""
        cols = ["informative_predicted", "within_tolerance", "share_pct", "insensitive_predicted", "fitted",
                "fitted_within_tolerance", "derived"]  # fmt: skip
        old = before.pass_rates().select("study", *[pl.col(c).alias(f"{c}_before") for c in cols])
        new = self.pass_rates().select("study", *cols)
        out = old.join(new, on="study", how="full", coalesce=True, maintain_order="left_right")
        order = [c for pair in zip([f"{c}_before" for c in cols], cols, strict=True) for c in pair]
        return out.select("study", *order)

    def changes(self, before: CalibrationResult, reasons: dict[str, str] | None = None) -> pl.DataFrame:
        """The claims whose role, sensitivity or result differ from ``before`` (an earlier run), or that
        only one of the two runs has: study, claim, each column before and now, and ``reason`` (from
        ``reasons`` by claim id, empty where none is given)."""
        cols = ["role", "sensitive", "pass"]
        old = before.claims().select("study", "claim", *cols)
        new = self.claims().select("study", "claim", *cols)
        joined = old.join(new, on=["study", "claim"], how="full", suffix="_now", coalesce=True)
        changed = pl.any_horizontal([pl.col(c).ne_missing(pl.col(f"{c}_now")) for c in cols])
        out = joined.filter(changed).select(
            "study", "claim",
            *[pl.col(c).alias(f"{c}_before") for c in cols],
            *[pl.col(f"{c}_now").alias(c) for c in cols],
        )  # fmt: skip
        why = reasons or {}
        return out.with_columns(
            reason=pl.col("claim").map_elements(lambda c: why.get(c, ""), return_dtype=pl.String)
        )

    def insensitive(self) -> pl.DataFrame:
        """Predicted claims that pass with the capacity halved, as declared, and doubled."""
        return self.claims().filter((pl.col("role") == "predicted") & ~pl.col("sensitive"))

    def derived(self) -> pl.DataFrame:
        """Claims whose simulated value is arithmetic on the inputs (shown, never counted)."""
        return self.claims().filter(pl.col("role") == "derived")

    def summary(self) -> str:
        """The headline, the counts per study, and the claims set apart, as text."""
        with pl.Config(
            tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, fmt_str_lengths=70, tbl_hide_dataframe_shape=True
        ):
            parts = [
                "Calibration: " + self.headline(),
                str(self.pass_rates()),
                "Insensitive predicted claims (pass with capacity x0.5, x1 and x2):",
                str(self.insensitive().select("study", "claim", "pass", "description")),
                "Derived claims (arithmetic on the inputs):",
                str(self.derived().select("study", "claim", "pass", "description")),
            ]  # fmt: skip
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.summary()

    def chart(self, title: str = "Simulated as % of published", name: str = "calibration"):
        """Simulated as % of published per point, coloured by role and marked by sensitivity."""
        from storagelab import charts

        return charts.calibration(self.table, title=title, name=name)

    # -- files --------------------------------------------------------------------------------------
    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write the table to ``path`` atomically (a temporary file renamed into place)."""
        path = Path(path)
        if path.is_dir():
            raise IsADirectoryError(f"cannot write {path}: it is a folder; give a file name")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        try:
            self.table.select(self.columns).write_csv(tmp, float_precision=6)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def read_csv(cls, path: str | os.PathLike) -> CalibrationResult:
        """A result written by :meth:`to_csv` (or ``storagelab calibrate --out``)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(
                f"no calibration table at {path}; write one with `storagelab calibrate --out`"
            )
        schema = {**SCHEMA, **UNCERTAINTY_SCHEMA}
        table = pl.read_csv(path, schema_overrides=schema)
        missing = [c for c in COLUMNS if c not in table.columns]
        if missing:
            raise ValueError(f"{path}: not a calibration table, columns {missing} are missing")
        some = [c for c in UNCERTAINTY_COLUMNS if c in table.columns]
        if some and len(some) != len(UNCERTAINTY_COLUMNS):
            absent = [c for c in UNCERTAINTY_COLUMNS if c not in table.columns]
            raise ValueError(f"{path}: a table with uncertainty has all its columns; {absent} are missing")
        columns = COLUMNS + (UNCERTAINTY_COLUMNS if some else ())
        return cls(table.select(columns).cast({c: schema[c] for c in columns}))
