"""A model of a measured system, fitted on a stated subset of its fio measurements, so it is a
:class:`~storagelab.architectures.Topology` like a preset.

The model is one **batching stage** (:class:`~storagelab.measured.batching.BatchingStage`, a component on the
kernel's interface): it takes every IO waiting when it starts, up to ``concurrency``, and completes them
together after an overhead per batch plus a time per IO of the batch. Per direction (read, write) an IO's
time in a batch is ``1 / {read,write}_rate_cap + size / {read,write}_bandwidth`` (the rate cap and the
bandwidth limit no queue depth exceeds), and the overhead is the rest of its QD1 latency, ``{read,write}_floor
+ size / {read,write}_transfer_rate`` less that time; a batch's time varies as a lognormal with the squared
coefficient of variation ``{read,write}_scv``. With ``n`` IOs in flight the latency is ``overhead + n x
time per IO``: the QD1 latency at ``n = 1``, ``1 / time per IO`` IOPS as ``n`` grows, and between them the
knee of a device whose cost per IO falls as IOs queue (a virtual disk's notifications covering every request
queued since the last, a controller coalescing commands).

Fitted (least squares on relative errors, Student-t intervals; NaN with two sizes only, ``inf`` where an
interval reaches an unlimited rate):

- on the **QD1 rows**: latency against size, a line: ``floor`` and ``transfer_rate``; the scv from the
  QD1 mean and median (lognormal: ``mean/median = exp(sigma^2 / 2)``);
- on the **saturated rows** (the largest queue depth ``n`` measured per direction and size): the time per IO
  ``(1 / IOPS - QD1 latency / n) / (1 - 1 / n)`` against size, a line: ``1 / rate_cap`` and ``1 /
  bandwidth``; ``concurrency`` (the largest batch) is the largest queue depth measured: the data bound it
  only from below. A saturated row at ``n / QD1 latency`` or faster shows no limit at its depth (a write
  cache, a device that scales past its QD1 rate): it is left out of the line and a note names it; with
  fewer than two sizes left the direction has no rate cap or bandwidth limit.

**Fit subset** (:func:`split`): random, read-only or write-only jobs at QD1 and at the largest queue depth
measured for their direction and size. Everything else (mixed read shares, intermediate queue depths,
sequential jobs) is held back for the check (:mod:`storagelab.measured.check`).

**Not modelled** (the check shows where they matter): sequential speed-ups (read-ahead, write coalescing),
a write cache that fills (the model has no state), a token bucket's burst (short runs after a ramp cannot
show one), a device with parallel servers and no batching (its knee is sharper than this model's), and load
from outside the plan (other tenants).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from storagelab.architectures.parameters import ParamSet
from storagelab.architectures.topology import Topology
from storagelab.kernel import ClosedSource, IORequest
from storagelab.kernel.simulation import simulate
from storagelab.measured.batching import BatchingStage
from storagelab.provenance import Param
from storagelab.workloads.access_spec import AccessSpec, SizeShare

VOLUME = "measured"
_DIRS = ("read", "write")


class FitError(ValueError):
    """The measurements cannot be fitted; the message says what is missing."""


def split(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows fitted on and the rows held back (see the module's docstring)."""
    pure = (pl.col("pattern") == "random") & pl.col("read_pct").is_in([0, 100])
    top = pl.col("outstanding").max().over(["pattern", "read_pct", "block_size"])
    fit = pure & ((pl.col("outstanding") == 1) | ((pl.col("outstanding") == top) & (top > 1)))
    # at most one mixed job per read share: random, its smallest block size, its largest queue depth (> 1)
    mixed = (pl.col("pattern") == "random") & ~pl.col("read_pct").is_in([0, 100])
    smallest = pl.col("block_size").min().over(["pattern", "read_pct"])
    deepest = pl.col("outstanding").max().over(["pattern", "read_pct", "block_size"])
    fit = fit | (
        mixed & (pl.col("block_size") == smallest) & (pl.col("outstanding") == deepest) & (deepest > 1)
    )
    marked = rows.with_columns(_fit=fit)
    return marked.filter("_fit").drop("_fit"), marked.filter(~pl.col("_fit")).drop("_fit")


def _row(rows: pl.DataFrame, **where: Any) -> dict:
    sel = rows.filter(**where)
    if sel.height != 1:
        raise FitError(f"expected one row for {where}, found {sel.height}")
    return sel.row(0, named=True)


def _ols(x: np.ndarray, y: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Intercept and slope of y on x by least squares on the relative errors (weights 1 / y^2, so a
    large value does not outweigh the small ones), with their half-widths (NaN with as many points as
    parameters)."""
    a = np.column_stack([np.ones_like(x), x]) / y[:, None]
    y = np.ones_like(y)
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    dof = len(x) - 2
    if dof < 1:
        return coef, np.full(2, np.nan)
    resid = y - a @ coef
    s2 = float(resid @ resid) / dof
    cov = s2 * np.linalg.inv(a.T @ a)
    return coef, stats.t.ppf(0.5 + confidence / 2, dof) * np.sqrt(np.diag(cov))


def _inverse(value: float, half: float) -> tuple[float, float]:
    """The interval of ``1 / value`` from ``value``'s half-width (NaN without one; ``inf`` when the
    interval of ``value`` reaches 0)."""
    if math.isnan(half):
        return math.nan, math.nan
    lo, hi = value - half, value + half
    return (1 / hi if hi > 0 else math.inf), (1 / lo if lo > 0 else math.inf)


def _se(r: dict) -> tuple[float, float]:
    """Standard error of a rate row's mean (fio's per-interval samples) and the t quantile's dof."""
    n = r["samples"] or 0
    if not r["stddev"] or n < 2:
        return 0.0, 1
    return float(r["stddev"]) / math.sqrt(n), n - 1


@dataclass
class MeasuredFit:
    """A fitted model of a measured system: ``params`` (every one a :class:`Param` with origin ``fit`` and
    the ``row_id`` s it was fitted on), ``intervals`` (parameter -> (low, high) in its unit; NaN where
    a fit has as many points as parameters, ``inf`` where only a lower bound is known), the ``rows``
    fitted on and the rows ``held_back``."""

    name: str
    params: dict[str, Param]
    intervals: dict[str, tuple[float, float]]
    rows: pl.DataFrame
    held_back: pl.DataFrame
    notes: list[str] = field(default_factory=list)
    #: The run-to-run spread (:class:`storagelab.measured.spread.Spread`), when the runs are known.
    spread: Any = None

    def build(self, **overrides: Any) -> Topology:
        """The model as a :class:`Topology` (one volume, ``"measured"``); ``overrides`` by parameter name."""
        return build_topology(self.name, self.params, overrides)

    def parameters(self) -> pl.DataFrame:
        """One row per parameter: value, interval (``low``, ``high``: the fit's confidence interval), unit,
        and the rows it was fitted on; with the run-to-run spread, ``spread_low`` and ``spread_high`` (the
        80 % interval of the refits on resampled runs, :mod:`storagelab.measured.spread`)."""
        spread = self.spread.intervals if self.spread is not None else {}
        return pl.DataFrame(
            [
                {"parameter": k, "value": float(p.value), "low": self.intervals[k][0], "high": self.intervals[k][1],
                 **({"spread_low": spread.get(k, (math.nan,))[0], "spread_high": spread.get(k, (0, math.nan))[1]}
                    if self.spread is not None else {}),
                 "unit": p.unit, "source": p.source, "fitted_on": ", ".join(p.fitted_on)}
                for k, p in self.params.items()
            ]
        )  # fmt: skip


def build_topology(name: str, params: dict[str, Param], overrides: dict[str, Any] | None = None, *,
                   by_direction: bool = False) -> Topology:  # fmt: skip
    """A fitted model's :class:`Topology` from its parameters (see the module's docstring); with
    ``by_direction``, reads and writes in separate batches instead (the alternative issue 71 named, kept to
    compare: :class:`~storagelab.measured.batching.BatchingStage`)."""
    p = ParamSet(name, params, overrides)
    si = lambda key: p[key].si if key in p else math.inf  # noqa: E731
    per_io = [1 / si(f"{d}_rate_cap") for d in _DIRS]
    per_byte = [1 / si(f"{d}_bandwidth") for d in _DIRS]
    floor = [p[f"{d}_floor"].si for d in _DIRS]
    transfer = [1 / si(f"{d}_transfer_rate") for d in _DIRS]
    scv = [p[f"{d}_scv"].si for d in _DIRS]

    def time(io: IORequest) -> float:
        i = 0 if io.is_read else 1
        return per_io[i] + per_byte[i] * io.size

    def overhead(io: IORequest) -> float:
        i = 0 if io.is_read else 1
        return max(floor[i] + transfer[i] * io.size - per_io[i] - per_byte[i] * io.size, 0.0)

    rho = p["mix_read_lead"].si if "mix_read_lead" in p else 0.0  # without it: all complete at the end
    memo: list = [None, (False, 0.0, 0.0)]  # the last batch asked about and its figures

    def lead(io: IORequest, batch: Sequence[IORequest]) -> float:
        """How long before a mixed batch's end ``io`` completes (s): by the batch's overhead less its own,
        and, a read, by ``mix_read_lead`` times the batch's per-IO time; 0 in a batch of one direction."""
        if memo[0] is not batch:  # one batch's figures, kept while its IOs are asked about
            mixed = len({b.is_read for b in batch}) == 2
            memo[:] = [batch, (mixed, max(overhead(b) for b in batch) if mixed else 0.0,
                               sum(time(b) for b in batch) if mixed else 0.0)]  # fmt: skip
        mixed, top, per_io_sum = memo[1]
        if not mixed:
            return 0.0
        return top - overhead(io) + (rho * per_io_sum if io.is_read else 0.0)

    stage = BatchingStage(VOLUME, overhead, time, lambda io: scv[0 if io.is_read else 1],
                          max_batch=int(p["concurrency"].value),
                          lead=lead if "mix_read_lead" in p else None, by_direction=by_direction)  # fmt: skip
    return Topology(name, {VOLUME: stage}, p, notes="fitted on fio measurements", roles={"device": [stage]})


def fit(rows: pl.DataFrame, name: str = "measured system", confidence: float = 0.95) -> MeasuredFit:
    """Fit the model on ``rows``' fit subset (:func:`split`); see the module's docstring."""
    fit_rows, held = split(rows)
    params: dict[str, Param] = {}
    intervals: dict[str, tuple[float, float]] = {}
    notes: list[str] = []
    qd1 = fit_rows.filter(pl.col("outstanding") == 1)
    service: dict[str, tuple[float, float]] = {}  # direction -> (floor s, per-byte s/B)
    for d, pct in zip(_DIRS, (100, 0), strict=True):
        lat = qd1.filter(direction=d, metric="lat_mean", read_pct=pct).sort("block_size")
        if lat.height < 2:
            raise FitError(
                f"the {d} QD1 rows cover {lat.height} block size(s); the fit needs random {d}s at QD1 "
                "at two sizes or more (the default plan has five)"
            )
        x = lat["block_size"].to_numpy().astype(float)
        y = lat["value"].to_numpy() * 1e-6
        (a, b), (ha, hb) = _ols(x, y, confidence)
        ids = tuple(lat["row_id"])
        params[f"{d}_floor"] = Param(round(a * 1e6, 3), "us", "fit", f"QD1 {d} latency at size 0 (least squares over {lat.height} sizes)",
                                     fitted_on=ids)  # fmt: skip
        intervals[f"{d}_floor"] = ((a - ha) * 1e6, (a + ha) * 1e6)
        if b > 0:
            params[f"{d}_transfer_rate"] = Param(round(1 / b / 1e6, 3), "MB/s", "fit",
                                                 f"inverse slope of QD1 {d} latency against size", fitted_on=ids)  # fmt: skip
            lo, hi = b - hb, b + hb
            intervals[f"{d}_transfer_rate"] = (
                (math.nan, math.nan) if math.isnan(hb)
                else (1 / hi / 1e6 if hi > 0 else math.inf, 1 / lo / 1e6 if lo > 0 else math.inf)
            )  # fmt: skip
        else:
            b = 0.0
            notes.append(f"{d}: QD1 latency does not grow with size; no transfer time per byte")
        service[d] = (a, b)
        med = qd1.filter(direction=d, metric="clat_p50", read_pct=pct).sort("block_size")
        joined = lat.join(
            med.select("block_size", pl.col("value").alias("p50"), pl.col("row_id").alias("p50_id")),
            on="block_size",
        )
        ratio = (joined["value"] / joined["p50"]).to_numpy()
        scvs = np.expm1(2 * np.log(np.clip(ratio, 1.0, 10.0)))
        params[f"{d}_scv"] = Param(round(float(np.median(scvs)), 4), "ratio", "fit",
                                   f"QD1 {d} mean over median latency, read as a lognormal", high=100.0,
                                   fitted_on=ids + tuple(joined["p50_id"]))  # fmt: skip
        intervals[f"{d}_scv"] = (float(scvs.min()), float(scvs.max()))
    _fit_limits(fit_rows, service, params, intervals, notes, confidence)
    _fit_mix_lead(fit_rows, params, intervals, notes, confidence)
    return MeasuredFit(name, params, intervals, fit_rows, held, notes)


def _per_io(params: dict[str, Param], direction: str, size: float) -> tuple[float, float]:
    """A direction's overhead and time per IO in a batch (s) at ``size`` bytes, as the model runs them."""
    p = ParamSet("fit", params)
    si = lambda key: p[key].si if key in p else math.inf  # noqa: E731
    t = 1 / si(f"{direction}_rate_cap") + size / si(f"{direction}_bandwidth")
    return max(p[f"{direction}_floor"].si + size / si(f"{direction}_transfer_rate") - t, 0.0), t


def _fit_mix_lead(fit_rows: pl.DataFrame, params: dict[str, Param], intervals: dict[str, tuple[float, float]],
                  notes: list[str], confidence: float) -> None:  # fmt: skip
    """``mix_read_lead`` from the mixed fit jobs (one per read share): in a closed loop of ``n`` IOs, every
    batch holds all ``n``; if a read completes ``L`` before a write of the same batch, a read waits on
    average ``T - (1 - p) L`` and a write ``T + p L`` (``T`` the batch's time, ``p`` the read share), so the
    measured write latency less the read latency is ``L``. ``L = (write overhead - read overhead) + rho x
    the batch's per-IO time (n (p t_read + (1 - p) t_write))``, solved for ``rho`` per job; the value is
    their mean, clipped to [0, 1], with a Student-t interval over the jobs (NaN with one job)."""
    mixed = fit_rows.filter(~pl.col("read_pct").is_in([0, 100]), metric="lat_mean").sort("read_pct")
    if mixed.is_empty():
        notes.append("no mixed read/write job to fit on: in a mixed batch reads and writes complete together")
        return
    estimates, ids = [], []
    for job in mixed["job"].unique(maintain_order=True):
        lat = mixed.filter(job=job)
        if lat.height != 2:
            continue
        r, w = (_row(lat, direction=d) for d in _DIRS)
        n, p, size = float(r["outstanding"]), r["read_pct"] / 100, float(r["block_size"])
        (o_r, t_r), (o_w, t_w) = _per_io(params, "read", size), _per_io(params, "write", size)
        per_io_sum = n * (p * t_r + (1 - p) * t_w)
        estimates.append(((w["value"] - r["value"]) * 1e-6 - (o_w - o_r)) / per_io_sum)
        ids += [r["row_id"], w["row_id"]]
    if not estimates:
        notes.append("no mixed job with both directions' latencies: reads and writes complete together")
        return
    est = np.array(estimates)
    value = float(np.clip(est.mean(), 0.0, 1.0))
    half = (
        float(stats.t.ppf(0.5 + confidence / 2, est.size - 1) * est.std(ddof=1) / math.sqrt(est.size))
        if est.size > 1 else math.nan
    )  # fmt: skip
    params["mix_read_lead"] = Param(round(value, 4), "ratio", "fit",
                                    "in a batch of reads and writes, the share of the batch's per-IO time by "
                                    "which a read completes ahead of the batch's end (reads dispatched ahead "
                                    "of writes): from each mixed job's write less read mean latency",
                                    high=1.0, fitted_on=tuple(ids))  # fmt: skip
    intervals["mix_read_lead"] = (max(est.mean() - half, 0.0), min(est.mean() + half, 1.0)) if est.size > 1 else (
        math.nan, math.nan)  # fmt: skip


def _fit_limits(fit_rows: pl.DataFrame, service: dict[str, tuple[float, float]], params: dict[str, Param],
                intervals: dict[str, tuple[float, float]], notes: list[str], confidence: float) -> None:  # fmt: skip
    """Per direction the time per IO in a batch (rate cap and bandwidth) from the saturated rows; the
    concurrency (the largest batch)."""
    sat = fit_rows.filter(pl.col("outstanding") > 1, pl.col("read_pct").is_in([0, 100]), metric="iops")
    if sat.is_empty():
        raise FitError("no saturated rows (random reads or writes above QD1): the limits cannot be fitted")
    top_qd = int(sat["outstanding"].max())
    for d in _DIRS:
        rows = sat.filter(direction=d).sort("block_size")
        if rows.height < 2:
            raise FitError(
                f"the saturated {d} rows cover {rows.height} block size(s); the fit needs random {d}s at "
                "a high queue depth at two sizes or more"
            )
        a, b = service[d]
        x = rows["block_size"].to_numpy().astype(float)
        n = rows["outstanding"].to_numpy().astype(float)
        per_io = (1 / rows["value"].to_numpy() - (a + b * x) / n) / (1 - 1 / n)
        unlimited = per_io <= 0  # n IOs in flight ran at n / (QD1 latency) or faster: no limit reached
        if unlimited.any():
            scaling = ", ".join(
                f"{job} {v * lat / k:.2f}x"
                for job, v, lat, k in zip(rows["job"].filter(unlimited), rows["value"].to_numpy()[unlimited],
                                          (a + b * x)[unlimited], n[unlimited], strict=True)
            )  # fmt: skip
            kept = int((~unlimited).sum())
            notes.append(
                f"{d}: {scaling} of n / (QD1 latency) at their depth n, so no limit is reached there; "
                + (f"the limits are fitted on the other {kept} sizes" if kept >= 2
                   else "no rate cap or bandwidth limit is fitted (the model runs at most concurrency / QD1 "
                        "latency, below these measurements)")
            )  # fmt: skip
            if kept < 2:
                continue
            rows, x, per_io = rows.filter(~unlimited), x[~unlimited], per_io[~unlimited]
        (t0, tb), (h0, hb) = _ols(x, per_io, confidence)
        ids = tuple(rows["row_id"]) + tuple(
            fit_rows.filter(
                metric="lat_mean", direction=d, outstanding=1, read_pct=100 if d == "read" else 0
            )["row_id"]
        )
        if t0 > 0:
            params[f"{d}_rate_cap"] = Param(round(1 / t0, 1), "IOPS", "fit",
                                            f"{d} IOPS limit (1 / the time per IO in a batch at size 0, from the "
                                            "saturated IOPS less the QD1 latency shared by the batch)", fitted_on=ids)  # fmt: skip
            intervals[f"{d}_rate_cap"] = _inverse(t0, h0)
        else:
            notes.append(
                f"{d}: no IOPS limit (the time per IO in a batch has no positive intercept at size 0)"
            )
        if tb > 0:
            params[f"{d}_bandwidth"] = Param(round(1 / tb / 1e6, 3), "MB/s", "fit",
                                             f"{d} byte-rate limit (1 / the slope of the time per IO in a batch "
                                             "against size)", fitted_on=ids)  # fmt: skip
            lo, hi = _inverse(tb, hb)
            intervals[f"{d}_bandwidth"] = (lo / 1e6, hi / 1e6)
        else:
            notes.append(f"{d}: no bandwidth limit (the time per IO in a batch does not grow with size)")
    params["concurrency"] = Param(top_qd, "count", "fit",
                                  "the largest batch: the largest queue depth measured (the saturated rows fit "
                                  "batches that large; the data bound it only from below)",
                                  fitted_on=tuple(sat["row_id"]), high=4096)  # fmt: skip
    intervals["concurrency"] = (float(top_qd), math.inf)


def simulate_job(params: dict[str, Param], job: dict, *, span: int = 2**30, duration_s: float | None = None,
                 seed: int = 1, name: str = "measured system", ios: int = 20_000, by_direction: bool = False) -> dict[str, dict[str, float]]:  # fmt: skip
    """Simulate one fio job (a row of the tidy dataset: pattern, read_pct, block_size, outstanding) on the
    model with ``params``: per direction, ``iops``, ``mb_s`` and ``lat_mean`` (us)."""
    topo = build_topology(name, params, by_direction=by_direction)
    spec = AccessSpec(
        name=job["job"], sizes=(SizeShare(size=int(job["block_size"]), pct=100),), read_pct=float(job["read_pct"]),
        random_pct=100.0 if job["pattern"] == "random" else 0.0, align=min(4096, int(job["block_size"])),
        queue_depth=int(job["outstanding"]),
    )  # fmt: skip
    source = ClosedSource(job["job"], topo.volumes[VOLUME], spec, span=span)
    source.split_ops = 0 < spec.read_pct < 100
    if duration_s is None:  # enough simulated time for ``ios`` IOs at the measured rate, within 0.1..2 s
        iops = float(job.get("iops_total") or 10_000)
        duration_s = min(2.0, max(0.1, ios / max(iops, 1.0)))
    result = simulate(topo.volumes[VOLUME], [source], duration=duration_s, warmup=duration_s / 5, seed=seed,
                      progress=False)  # fmt: skip
    out = {}
    for row in result.summary().iter_rows(named=True):
        cls = row["class"]
        direction = (
            cls.rsplit(" ", 1)[1] if source.split_ops else ("read" if spec.read_pct == 100 else "write")
        )
        out[direction] = {"iops": row["iops"], "mb_s": row["mb_per_s"], "lat_mean": row["mean_ms"] * 1e3}
    return out
