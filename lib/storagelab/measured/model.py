"""A model of a measured system, fitted on a stated subset of its fio measurements and built from kernel
parts, so it is a :class:`~storagelab.architectures.Topology` like a preset.

The model, in the order an IO meets it (one volume, ``"measured"``):

1. **shared stage**: one server every IO crosses, taking per direction ``1 / {read,write}_rate_cap``
   per IO plus ``size / {read,write}_bandwidth``: the rate cap and the bandwidth limit that no queue depth
   exceeds (a virtual disk's queue thread, a hypervisor's limit, a controller); its time is drawn with
   squared coefficient of variation ``shared_stage_scv`` (1, exponential: an assumption, see below);
2. **device**: ``concurrency`` servers, each IO taking a lognormal time with mean ``{read,write}_floor +
   size / {read,write}_transfer_rate`` less what the shared stage takes, and squared coefficient of
   variation ``{read,write}_scv``.

At queue depth 1 an IO crosses both stages without queueing, so its mean latency is ``floor + size /
transfer_rate``: a straight line in the size, fitted on the QD1 rows. At the largest queue depth the
shared stage is saturated, so ``1 / IOPS = 1 / rate_cap + size / bandwidth``: a straight line in the size,
fitted on the saturated rows. Both by least squares on relative errors, with Student-t intervals (NaN with
two sizes only; ``inf`` where the interval reaches an unlimited rate). The concurrency is then the
candidate (1, 2, 4, ... up to the largest queue depth) whose simulated saturated IOPS fit best (squared
log error); its interval is the candidates within 5 % of the best score, open above when the largest
one is among them. The scv comes from the QD1 rows' mean and median (lognormal: ``mean/median =
exp(sigma^2 / 2)``). ``shared_stage_scv`` is an assumption (origin ``assumption``): how sharply throughput
bends towards the cap is not identifiable from QD1 and saturated points; 1 is a processor shared by IOs,
0 a token bucket's even pacing.

**Fit subset** (:func:`split`): random, read-only or write-only jobs at QD1 and at the largest queue depth
measured for their direction and size. Everything else (mixed read shares, intermediate queue depths,
sequential jobs) is held back for the check (:mod:`storagelab.measured.check`).

**Not modelled** (the check shows where they matter): sequential speed-ups (read-ahead, write
coalescing), a write cache that fills (the model has no state), a token bucket's burst (the short runs
after a ramp cannot show one), reads and writes each with their own concurrency, interference between
reads and writes beyond sharing the two stages, and load from outside the plan (other tenants).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from storagelab.architectures.parameters import ParamSet
from storagelab.architectures.topology import Topology
from storagelab.kernel import ClosedSource, Path, Station
from storagelab.kernel.simulation import simulate
from storagelab.provenance import Param
from storagelab.workloads.access_spec import AccessSpec, SizeShare

VOLUME = "measured"
_DIRS = ("read", "write")


class FitError(ValueError):
    """The measurements cannot be fitted; the message says what is missing."""


@dataclass(frozen=True)
class MeasuredDevice:
    """The device stage: per direction (read, write) a mean ``floor`` (s) plus ``per_byte`` (s/B) times
    the size, lognormal with squared coefficient of variation ``scv``; ``parallelism`` servers."""

    parallelism: int
    floor: tuple[float, float]
    per_byte: tuple[float, float]
    scv: tuple[float, float]
    state_dependent: bool = False

    def mean(self, is_read: bool, size: int) -> float:
        i = 0 if is_read else 1
        return max(self.floor[i] + self.per_byte[i] * size, 1e-7)

    def service_time(self, is_read: bool, size: int, address: int, rng: np.random.Generator) -> float:
        mean = self.mean(is_read, size)
        scv = self.scv[0 if is_read else 1]
        if scv <= 0:
            return mean
        s2 = math.log1p(scv)
        return float(rng.lognormal(math.log(mean) - s2 / 2, math.sqrt(s2)))


@dataclass(frozen=True)
class SharedStage:
    """The stage every IO crosses, one at a time: per direction ``per_io`` seconds plus ``per_byte``
    seconds per byte (a rate cap and a bandwidth limit), drawn with squared coefficient of variation
    ``scv`` (1: exponential; 0: constant, as a token bucket's pacing)."""

    per_io: tuple[float, float]
    per_byte: tuple[float, float]
    scv: float = 1.0
    parallelism: int = 1
    state_dependent: bool = False

    def service_time(self, is_read: bool, size: int, address: int, rng: np.random.Generator) -> float:
        i = 0 if is_read else 1
        mean = self.per_io[i] + self.per_byte[i] * size
        if self.scv <= 0 or mean <= 0:
            return mean
        if self.scv == 1.0:
            return float(rng.exponential(mean))
        shape = 1 / self.scv
        return float(rng.gamma(shape, mean / shape))


def split(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows fitted on and the rows held back (see the module's docstring)."""
    pure = (pl.col("pattern") == "random") & pl.col("read_pct").is_in([0, 100])
    top = pl.col("outstanding").max().over(["pattern", "read_pct", "block_size"])
    fit = pure & ((pl.col("outstanding") == 1) | ((pl.col("outstanding") == top) & (top > 1)))
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

    def build(self, **overrides: Any) -> Topology:
        """The model as a :class:`Topology` (one volume, ``"measured"``); ``overrides`` by parameter name."""
        return build_topology(self.name, self.params, overrides)

    def parameters(self) -> pl.DataFrame:
        """One row per parameter: value, interval, unit, and the rows it was fitted on."""
        return pl.DataFrame(
            [
                {"parameter": k, "value": float(p.value), "low": self.intervals[k][0], "high": self.intervals[k][1],
                 "unit": p.unit, "source": p.source, "fitted_on": ", ".join(p.fitted_on)}
                for k, p in self.params.items()
            ]
        )  # fmt: skip


def build_topology(name: str, params: dict[str, Param], overrides: dict[str, Any] | None = None) -> Topology:
    """A fitted model's :class:`Topology` from its parameters (see the module's docstring)."""
    p = ParamSet(name, params, overrides)
    si = lambda key: p[key].si if key in p else math.inf  # noqa: E731
    cap = (si("read_rate_cap"), si("write_rate_cap"))
    bw = (si("read_bandwidth"), si("write_bandwidth"))
    stage = SharedStage((1 / cap[0], 1 / cap[1]), (1 / bw[0], 1 / bw[1]), p["shared_stage_scv"].si)
    stages = [Station("shared stage", stage, servers=1)]
    roles: dict[str, list] = {"shared stage": [stages[0]]}
    floors, per_byte = [], []
    for i, d in enumerate(_DIRS):
        floors.append(p[f"{d}_floor"].si - stage.per_io[i])
        per_byte.append(1 / si(f"{d}_transfer_rate") - stage.per_byte[i])
    device = MeasuredDevice(
        parallelism=int(p["concurrency"].value), floor=(floors[0], floors[1]),
        per_byte=(per_byte[0], per_byte[1]), scv=(p["read_scv"].si, p["write_scv"].si),
    )  # fmt: skip
    stages.append(Station("device", device))
    roles["device"] = [stages[-1]]
    return Topology(name, {VOLUME: Path(VOLUME, stages)}, p, notes="fitted on fio measurements", roles=roles)


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
    return MeasuredFit(name, params, intervals, fit_rows, held, notes)


def _fit_limits(fit_rows: pl.DataFrame, service: dict[str, tuple[float, float]], params: dict[str, Param],
                intervals: dict[str, tuple[float, float]], notes: list[str], confidence: float) -> None:  # fmt: skip
    """Per direction a rate cap (the saturated IOPS of the smallest size) and a bandwidth (the largest
    saturated MB/s); then the concurrency, by simulating the saturated jobs at each candidate."""
    sat = fit_rows.filter(pl.col("outstanding") > 1, metric="iops")
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
        x = rows["block_size"].to_numpy().astype(float)
        (t0, tb), (h0, hb) = _ols(x, 1 / rows["value"].to_numpy(), confidence)
        ids = tuple(rows["row_id"])
        if t0 > 0:
            params[f"{d}_rate_cap"] = Param(round(1 / t0, 1), "IOPS", "fit",
                                            f"{d} IOPS limit of the shared stage (1 / its time per IO: the intercept "
                                            "of 1 / saturated IOPS against size)", fitted_on=ids)  # fmt: skip
            intervals[f"{d}_rate_cap"] = _inverse(t0, h0)
        else:
            notes.append(f"{d}: no IOPS limit (1 / saturated IOPS has no positive intercept at size 0)")
        if tb > 0:
            params[f"{d}_bandwidth"] = Param(round(1 / tb / 1e6, 3), "MB/s", "fit",
                                             f"{d} byte-rate limit of the shared stage (1 / the slope of 1 / saturated "
                                             "IOPS against size)", fitted_on=ids)  # fmt: skip
            lo, hi = _inverse(tb, hb)
            intervals[f"{d}_bandwidth"] = (lo / 1e6, hi / 1e6)
        else:
            notes.append(f"{d}: no bandwidth limit (saturated IOPS do not fall with size)")
    params["shared_stage_scv"] = Param(1.0, "ratio", "assumption",
                                   "the per-IO stage's time taken as exponential (scv 1), as a processor shared "
                                   "by IOs: how sharply throughput bends towards the cap is not identifiable from "
                                   "QD1 and saturated points", high=100.0)  # fmt: skip
    intervals["shared_stage_scv"] = (math.nan, math.nan)
    candidates = sorted({2**k for k in range(12) if 2**k < top_qd} | {top_qd})
    jobs = list(sat.group_by("job", "pattern", "read_pct", "block_size", "outstanding").agg(
        iops_total=pl.col("value").sum()).iter_rows(named=True))  # fmt: skip
    measured = {j["job"]: j["iops_total"] for j in jobs}
    scores = {}
    for c in candidates:
        trial = {**params, "concurrency": Param(c, "count", "user", "candidate", high=4096)}
        err = 0.0
        for j in jobs:
            pred = sum(v["iops"] for v in simulate_job(trial, j, seed=1, ios=8_000).values())
            err += math.log(pred / measured[j["job"]]) ** 2
        scores[c] = err
    best = min(scores.values())
    near = sorted(c for c, v in scores.items() if v <= best * 1.05 + 1e-12)
    c = min(scores, key=lambda k: (scores[k], k))
    ids = tuple(sat["row_id"])
    params["concurrency"] = Param(c, "count", "fit", "IOs the device serves at once: the candidate (1, 2, 4 .. the "
                                  "largest queue depth) whose simulated saturated IOPS fit best (squared log error)",
                                  fitted_on=ids, high=4096)  # fmt: skip
    censored = near[-1] == candidates[-1]
    intervals["concurrency"] = (float(near[0]), math.inf if censored else float(near[-1]))
    if censored:
        notes.append(f"concurrency: {near[0]} or more fit the saturated points as well (bounded below only)")


def simulate_job(params: dict[str, Param], job: dict, *, span: int = 2**30, duration_s: float | None = None,
                 seed: int = 1, name: str = "measured system", ios: int = 20_000) -> dict[str, dict[str, float]]:  # fmt: skip
    """Simulate one fio job (a row of the tidy dataset: pattern, read_pct, block_size, outstanding) on the
    model with ``params``: per direction, ``iops``, ``mb_s`` and ``lat_mean`` (us)."""
    topo = build_topology(name, params)
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
