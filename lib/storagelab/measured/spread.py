"""Run-to-run variation as the fit's uncertainty: the interleaved passes of a plan (``json/<job>.rK.json``)
measure how much one run of a job differs from the next, and that spread is carried into the parameters and
into every prediction.

- **Resampling the runs** (:func:`resample`): per job, as many runs as were measured are drawn with
  replacement from its runs (one draw per job, so its directions and metrics stay together) and each
  row's median is kept, as the dataset keeps the median of its runs. Each resampled dataset is fitted
  again (:func:`storagelab.measured.model.fit`, the same rows, the same structure).
- **Parameter intervals** (:attr:`Spread.intervals`): the 10th and 90th percentiles of the refits' values
  (an 80 % interval over the runs' spread).
- **Predictive interval per point** (:func:`predictive`): the point's prediction times ``exp(±z sigma)``,
  ``z`` the standard normal's 90th percentile (1.2816: an 80 % interval), with ``sigma^2`` the sum of
  (a) the log-scale standard deviation of the point's prediction over :data:`PREDICTION_DRAWS` refits
  (simulated with one seed, so the spread is the parameters', not the simulation's), and (b) the
  log-scale standard deviation of a measured median about its expectation, pooled per metric over the
  fit subset's rows (the resampled medians' spread). (a) is the fit's uncertainty, (b) the noise a new
  measurement of the same point has on the same day.

What this does not carry: a change of the system between days (another load from other tenants, another
host), which the three passes of one plan, minutes apart, do not see. The cross-day checks show its size.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import polars as pl

from storagelab.measured.model import MeasuredFit, fit, split
from storagelab.measured.results import combine_repeats, read_fio_json
from storagelab.uncertainty.distributions import LogUniform

#: Refits per dataset (resampled runs). 100 keeps the 10th and 90th percentiles' own sampling error near
#: a percentile point (assumption: about the resolution the intervals are read at).
DRAWS = 100
#: Refits each checked job is simulated with for the prediction's own spread (assumption: 8 is enough for
#: a standard deviation within about ±25 %, chi distribution with 7 degrees of freedom, and keeps a check of
#: 50 jobs within a minute on two cores).
PREDICTION_DRAWS = 8
#: The central share of the predictive interval and the parameter intervals (issue 71: 80 %).
LEVEL = 0.8
_Z = 1.2815515655446004  # standard normal quantile at 0.9: the half-width of a central 80 % interval
_RUN = re.compile(r"\.r(\d+)\.json$")


def load_runs(folder: str | Path) -> pl.DataFrame:
    """Every run's tidy rows in ``folder/json`` (a plan's passes ``<job>.rK.json``), with ``run`` (K, or 1
    for a plan of one pass)."""
    files = sorted((Path(folder) / "json").glob("*.json"))
    if not files:
        raise FileNotFoundError(f"{folder}/json: no fio results (a measured plan writes one per job and run)")
    frames = []
    for path in files:
        m = _RUN.search(path.name)
        frames.append(
            read_fio_json(path, source=f"json/{path.name}").with_columns(run=pl.lit(int(m[1]) if m else 1))
        )
    return pl.concat(frames)


def pass_ranges(folder: str | Path) -> pl.DataFrame:
    """Each measured row's lowest and highest value over its plan's passes (:func:`load_runs`):
    ``row_id``, ``pass_low``, ``pass_high`` (in the row's unit) and ``passes`` (how many runs measured it).
    The dataset keeps the median of the passes; these are how far one pass of the same job, minutes from
    the others, went either side of it."""
    return (
        load_runs(folder)
        .group_by("row_id")
        .agg(pass_low=pl.col("value").min(), pass_high=pl.col("value").max(), passes=pl.len())
        .sort("row_id")
    )


def resample(runs: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    """One resampled dataset: per job, its runs drawn with replacement (as many as it has), each row's
    median of the drawn runs (the dataset's own rule, :func:`~storagelab.measured.results.combine_repeats`)."""
    picks = []
    for job, sub in runs.group_by("job", maintain_order=True):
        have = sorted(set(sub["run"]))
        picks += [{"job": job[0], "run": int(r)} for r in rng.choice(have, size=len(have), replace=True)]
    drawn = pl.DataFrame(picks, schema={"job": pl.String, "run": pl.Int64})
    return combine_repeats(drawn.join(runs, on=["job", "run"], how="left").drop("run"))


@dataclass
class Spread:
    """The run-to-run spread of a fitted dataset: the ``refits`` (one per resampled dataset), each
    parameter's 80 % ``intervals`` over them, and ``noise`` (metric -> log-scale standard deviation of a
    measured median about its expectation, pooled over the fit subset's rows)."""

    refits: list[MeasuredFit]
    intervals: dict[str, tuple[float, float]]
    noise: dict[str, float]
    notes: list[str] = field(default_factory=list)

    def draws(self, k: int = PREDICTION_DRAWS) -> list[MeasuredFit]:
        """``k`` refits spread over the draws (evenly, so the set does not depend on a second seed)."""
        step = max(len(self.refits) // k, 1)
        return self.refits[::step][:k]


def spread(fitted: MeasuredFit, runs: pl.DataFrame, *, draws: int = DRAWS, seed: int = 1) -> Spread:
    """The run-to-run spread of ``fitted`` (fitted on the medians of ``runs``): refits on ``draws``
    resampled datasets; see the module's docstring."""
    rng = np.random.default_rng(seed)
    refits, medians = [], []
    fit_ids = set(fitted.rows["row_id"])
    for _ in range(draws):
        rows = resample(runs, rng)
        refits.append(fit(rows, fitted.name))
        medians.append(rows.filter(pl.col("row_id").is_in(fit_ids)).select("row_id", "metric", "value"))
    intervals = {}
    for name in fitted.params:
        values = np.array([float(f.params[name].value) for f in refits if name in f.params])
        if values.size:
            intervals[name] = (
                float(np.quantile(values, (1 - LEVEL) / 2)),
                float(np.quantile(values, (1 + LEVEL) / 2)),
            )
    logs = pl.concat(medians).filter(pl.col("value") > 0).with_columns(log=pl.col("value").log())
    per_row = logs.group_by("row_id", "metric").agg(sd=pl.col("log").std())
    noise = {
        m: float(np.sqrt((per_row.filter(metric=m)["sd"].fill_null(0.0) ** 2).mean() or 0.0))
        for m in sorted(set(per_row["metric"]))
    }
    notes = [f"run-to-run spread: {draws} refits on resampled runs, seed {seed}"]
    return Spread(refits, intervals, noise, notes)


def run_spread_distribution(value: float, low: float, high: float) -> LogUniform | None:
    """The distribution a fitted parameter is drawn from when the measured system takes part in a decision
    under uncertainty (:mod:`storagelab.analysis.decision`): log-uniform, its central 80 % the runs' 80 %
    interval ``[low, high]`` (its ends ``(high / low) ** (1 / 8)`` beyond them), widened to hold the fitted
    ``value`` where the refits all fell on one side of it; None where the interval has no width or is not
    positive and finite. Each parameter is drawn on its own: the refits' correlations are not kept."""
    if not (math.isfinite(low) and math.isfinite(high) and 0 < low < high):
        return None
    beyond = (high / low) ** ((1 - LEVEL) / 2 / LEVEL)
    return LogUniform(min(low / beyond, value), max(high * beyond, value))


def with_run_spread(fitted: MeasuredFit) -> MeasuredFit:
    """``fitted`` with each parameter's ``uncertainty`` from its run-to-run interval
    (:func:`run_spread_distribution`), so that a comparison with ``uncertainty`` draws it like a preset's
    assumptions; counts (the largest batch) and parameters without an interval keep none. The values, the
    rows fitted on and the checks are unchanged."""
    if fitted.spread is None:
        return fitted
    params = dict(fitted.params)
    for name, p in fitted.params.items():
        low, high = fitted.spread.intervals.get(name, (math.nan, math.nan))
        dist = None if p.unit == "count" else run_spread_distribution(float(p.value), low, high)
        if dist is not None:
            params[name] = replace(
                p,
                uncertainty=dist,
                source=f"{p.source}; drawn in a decision from {dist.describe()} (central 80 %: the runs' 80 % interval "
                f"{low:.4g}-{high:.4g} over {len(fitted.spread.refits)} refits)",
            )
    return replace(fitted, params=params)


def predictive(
    table: pl.DataFrame, spread_: Spread, draws: list[dict[str, dict[str, dict[str, float]]]]
) -> pl.DataFrame:
    """``table`` (:func:`storagelab.measured.check.predict`'s rows) with the 80 % predictive interval
    ``pi_low``, ``pi_high`` and ``covered`` (the measurement inside it); ``draws``: per refit, its
    predictions per job, direction and metric (one seed for all)."""
    rows = []
    for r in table.iter_rows(named=True):
        values = [d.get(r["job"], {}).get(r["direction"], {}).get(r["metric"], math.nan) for d in draws]
        logs = np.log([v for v in values if v > 0 and math.isfinite(v)])
        s_param = float(logs.std(ddof=1)) if logs.size > 1 else 0.0
        s = math.hypot(s_param, spread_.noise.get(r["metric"], 0.0))
        p = r["predicted"]
        lo, hi = (
            (p * math.exp(-_Z * s), p * math.exp(_Z * s))
            if math.isfinite(p) and p > 0
            else (math.nan, math.nan)
        )
        rows.append({"pi_low": lo, "pi_high": hi, "covered": bool(lo <= r["measured"] <= hi)})
    extra = pl.DataFrame(rows, schema={"pi_low": pl.Float64, "pi_high": pl.Float64, "covered": pl.Boolean})
    return pl.concat([table, extra], how="horizontal")


def held_back(rows: pl.DataFrame) -> pl.DataFrame:
    """The rows the fit would hold back on ``rows`` (:func:`~storagelab.measured.model.split`): another
    day's measurement of the same plan is checked at the operating points that were never fitted on."""
    return split(rows)[1]
