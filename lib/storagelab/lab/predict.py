"""Blind predictions of a lab run with the workbench's own parts, and the share within tolerance per
mechanism.

**The page cache** is predicted with :class:`~storagelab.components.cache.ReadCache`'s policy in front of the
device model fitted on the same disk (``storagelab fit measurements/vda-ext4``):

- *Policy*: ARC (:class:`~storagelab.components.cache_policies.ARC`), the closest of the component's
  policies to the kernel's page cache on this machine. The kernel here has no multi-generational LRU
  (``CONFIG_LRU_GEN`` is not set: ``/sys/kernel/mm/lru_gen`` is absent), so its file pages are on the
  two-list LRU of ``mm/vmscan.c`` and ``mm/workingset.c``: a page read for the first time goes on the
  *inactive* list, a second access while it is there moves it to the *active* list; reclaim evicts from the
  inactive list's tail and leaves a *shadow entry*; a page that refaults within the active list's size is
  put straight on the active list. ARC has the same parts: T1 (seen once), T2 (seen twice or more), and a
  ghost list B1 of what T1 evicted, whose hit admits a page straight to T2. The differences: ARC moves the
  T1/T2 split adaptively, where the kernel keeps the inactive list at least as large as the active one for
  a group under 1 GiB (``inactive_is_low``: ``inactive_ratio = 1`` below 1 GiB); ARC's B2 (ghosts of
  frequent pages) has no kernel counterpart. LRU is predicted beside it (``lru_*`` columns): with uniform
  access every policy gives the same hit ratio, with skew the two bound the kernel's.
- *Size*: the group's limit less what the fully cached point shows the group holds that is not the test
  file's pages (fio's own memory and shared memory, the kernel's memory charged to the group):
  ``usage - (cache - shmem)`` there.
- *Access*: fio's own laws, drawn as fio draws them (``lib/zipf.c``: Gray et al.'s Zipf approximation over
  the job's blocks, Pareto as ``n * u^(log h / log(1 - h))``, then ``hash(rank) = rank * GOLDEN_RATIO_64
  mod 2^64`` plus a random offset, modulo the number of blocks; uniform for ``random`` with
  ``norandommap``), a warm-up of :data:`WARM_TURNS` times the cache's blocks (what fio's unmeasured run
  did, at least) and :data:`MEASURED` draws measured; reads that find their block cached are hits; a
  write of the 70/30 mix is admitted (``insert``: a buffered write puts its page in the cache,
  ``ReadCache``'s ``write_policy="update"``).
- *Latency*: the component's composition at one IO in flight (fio's ``psync``, one job): a hit takes the
  hit cost (the fully cached point's mean latency: the system call and the copy), a miss the hit cost plus
  the fitted device's QD1 4 KiB read latency (:func:`storagelab.measured.model.simulate_job`); the mean
  latency is their mix by the hit ratio, the IOPS its inverse (one IO in flight: nothing queues, so the
  simulated station would give the same). Writes cost the hit cost (they complete in the page cache;
  write-back to the disk runs later, in the kernel's flusher, not in fio's loop: **not modelled**).
- libCacheSim's LRU, ARC and TwoQ (the C library the cache tests check against) are run on the
  same draws, beside (``lcs_*`` columns).

**The block throttle** is predicted with :class:`~storagelab.qos.token_bucket.TokenBucket` as a station's
discipline (no service of its own) in front of the fitted device, one :class:`~storagelab.kernel.sources.ClosedSource`
per tenant at its queue depth. blk-throttle (``block/blk-throttle.c``) dispatches a group's bios within a
*slice* of ``throtl_slice`` jiffies: a bio goes if the IOs (bytes) dispatched in the slice stay within
``limit * roundup(elapsed + 1, throtl_slice) / HZ``, and a group idle past its slice's end starts a new
slice. So a group is allowed up to one slice's worth ahead of its rate, and after idle it may send one
slice's worth at once: a token bucket of ``rate = limit`` and ``burst = limit * throtl_slice``.
``throtl_slice`` is ``DFL_THROTL_SLICE_HD = HZ / 10`` (100 ms; this disk reports ``rotational=1``, and
since the removal of ``CONFIG_BLK_DEV_THROTTLING_LOW`` (Linux 6.9) the 20 ms ``DFL_THROTL_SLICE_SSD`` is
not used), :data:`THROTL_SLICE_S`. The bucket counts IOs (``*_iops``) or bytes (``*_bps``).

**Tolerances** (:func:`storagelab.measured.check.tolerance`, the calibration's): IOPS ±15 %, mean latency
±20 %. The hit ratio has no calibration rule; :data:`HIT_TOLERANCE` (±0.05, absolute) is an assumption: the
hit ratios of two fio runs of one point here differ by up to about 0.01 (the quick plan's runs), and 0.05
is the widest error that still puts a point's IOPS (dominated by its misses) in the right regime.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from storagelab.components.cache import make_policy
from storagelab.kernel import ClosedSource
from storagelab.kernel.composition import Path as IOPath
from storagelab.kernel.simulation import simulate
from storagelab.kernel.sources import FixedSampler
from storagelab.kernel.station import Station
from storagelab.measured.check import tolerance
from storagelab.measured.model import VOLUME, MeasuredFit, build_topology, simulate_job
from storagelab.qos.token_bucket import Bucket, TokenBucket
from storagelab.workloads.application import BurstThink

#: blk-throttle's slice (s): ``DFL_THROTL_SLICE_HD = HZ / 10`` in ``block/blk-throttle.c``, 100 ms whatever
#: HZ is (see the module's docstring).
THROTL_SLICE_S = 0.1
#: Warm-up draws per cache block before the measured draws (assumption: enough for the hit ratio of every
#: point of the committed plan to settle; fio's unmeasured runs drew more).
WARM_TURNS = 4
#: Measured draws per point (the standard error of a hit ratio near 0.5 is about 0.001).
MEASURED = 200_000
#: Tolerance of a hit ratio, absolute (an assumption: see the module's docstring).
HIT_TOLERANCE = 0.05
_GOLDEN_RATIO_64 = np.uint64(0x61C8864680B583EB)  # fio's hash.h (the kernel's GOLDEN_RATIO_64)


def fio_blocks(distribution: str, blocks: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` block numbers in ``[0, blocks)`` drawn as fio draws ``random_distribution`` (see the module's
    docstring): ``random``, ``zipf:theta`` or ``pareto:h``."""
    if distribution == "random":
        return rng.integers(0, blocks, n, dtype=np.int64)
    kind, _, arg = distribution.partition(":")
    value = float(arg)
    u = rng.random(n)
    if kind == "zipf":
        theta = value
        zetan = float(np.sum(np.power(1.0 / np.arange(1, min(blocks, 10_000_000) + 1), theta)))
        zeta2 = 1.0 + 0.5**theta
        alpha = 1.0 / (1.0 - theta)
        eta = (1.0 - (2.0 / blocks) ** (1.0 - theta)) / (1.0 - zeta2 / zetan)
        z = u * zetan
        ranks = np.where(z < 1.0, 1, np.where(z < 1.0 + 0.5**theta, 2,
                         1 + (blocks * np.power(eta * u - eta + 1.0, alpha)).astype(np.int64)))  # fmt: skip
        ranks = ranks - 1
    elif kind == "pareto":
        ranks = ((blocks - 1) * np.power(u, math.log(value) / math.log(1.0 - value))).astype(np.int64)
    else:
        raise ValueError(f"unknown distribution {distribution!r}")
    with np.errstate(over="ignore"):
        hashed = ranks.astype(np.uint64) * _GOLDEN_RATIO_64
    offset = np.uint64(rng.integers(0, 2**31))
    return ((hashed + offset) % np.uint64(blocks)).astype(np.int64)


@dataclass(frozen=True)
class CacheCalibration:
    """What the prediction takes from the fully cached point and the fit: ``capacity_bytes`` (the limit less
    the group's own use), ``hit_s`` (the hit cost), ``miss_device_s`` (the fitted device's QD1 read)."""

    capacity_bytes: int
    own_bytes: int
    hit_s: float
    miss_device_s: float


def calibrate(cache: pl.DataFrame, fitted: MeasuredFit, seed: int = 1) -> CacheCalibration:
    """The hit cost and the group's own use from the ``hit_cost`` row, the device's QD1 read from the fit."""
    hit = cache.filter(pl.col("role") == "hit_cost").row(0, named=True)
    own = int(hit["mem_usage"] - (hit["mem_cache"] - hit["mem_shmem"]))
    bs = int(hit["block_size"])
    job = {"job": "lab-miss", "pattern": "random", "read_pct": 100, "block_size": bs, "outstanding": 1}
    device = simulate_job(fitted.params, job, seed=seed, name=fitted.name)["read"]["lat_mean"] * 1e-6
    return CacheCalibration(int(hit["memory_limit"]) - own, own, hit["lat_mean_read_us"] * 1e-6, device)


def _libcachesim(blocks: np.ndarray, reads: np.ndarray, capacity: int, warm: int) -> dict[str, float]:
    try:
        import libcachesim as lcs
    except ImportError:
        return {}
    out = {}
    for name in ("LRU", "ARC", "TwoQ"):
        cache = getattr(lcs, name)(capacity)
        req = lcs.Request()
        req.obj_size = 1
        hits = n = 0
        for i, (b, r) in enumerate(zip(blocks.tolist(), reads.tolist(), strict=True)):
            req.obj_id = b
            hit = cache.get(req)
            if i >= warm and r:
                hits += hit
                n += 1
        out[f"lcs_{name.lower()}"] = hits / n if n else math.nan
    return out


def predict_cache_point(row: dict[str, Any], cal: CacheCalibration, *, seed: int = 1,
                        policies: tuple[str, ...] = ("arc", "lru"), reference: bool = True,
                        warm_draws: int | None = None) -> dict[str, Any]:  # fmt: skip
    """The predicted hit ratio (per policy), IOPS and mean latency of one measured cache point (a row of
    ``cache.csv``). ``warm_draws`` replaces the blind warm-up (:data:`WARM_TURNS` times the cache's blocks):
    a post-hoc check, e.g. with as many draws as fio's unmeasured run completed (its ``.warm.json``)."""
    bs = int(row["block_size"])
    blocks = int(row["ws_bytes"]) // bs
    capacity = max(cal.capacity_bytes // bs, 1)
    warm = WARM_TURNS * capacity if warm_draws is None else int(warm_draws)
    rng = np.random.default_rng(seed)
    trace = fio_blocks(row["distribution"], blocks, warm + MEASURED, rng)
    reads = (
        rng.random(trace.size) < row["read_pct"] / 100 if row["read_pct"] < 100 else np.ones(trace.size, bool)
    )
    out: dict[str, Any] = {"point": row["point"]}
    for name in policies:
        policy = make_policy(name, capacity)
        access, insert = policy.access, policy.insert
        hits = n = 0
        for i, (b, r) in enumerate(zip(trace.tolist(), reads.tolist(), strict=True)):
            if r:
                h = access(b)
                if i >= warm:
                    hits += h
                    n += 1
            else:
                insert(b)
        out[f"{name}_hit_ratio"] = hits / n if n else math.nan
    if reference:
        out |= _libcachesim(trace, reads, capacity, warm)
    h = out[f"{policies[0]}_hit_ratio"]
    share_r = row["read_pct"] / 100
    lat_read = cal.hit_s + (1 - h) * cal.miss_device_s
    lat = share_r * lat_read + (1 - share_r) * cal.hit_s
    out |= {"hit_ratio": h, "lat_mean_read_us": lat_read * 1e6, "iops_total": 1 / lat,
            "capacity_bytes": cal.capacity_bytes}  # fmt: skip
    return out


def predict_cache(
    cache: pl.DataFrame, fitted: MeasuredFit, *, seed: int = 1, reference: bool = True
) -> pl.DataFrame:
    """Measured beside predicted for every cache point of ``cache`` (``cache.csv``): hit ratio (ARC, LRU,
    libCacheSim's), IOPS (reads and writes) and the reads' mean latency, with errors and ``within_*`` per
    metric."""
    cal = calibrate(cache, fitted, seed)
    rows = []
    for r in cache.filter(pl.col("role") == "point").iter_rows(named=True):
        p = predict_cache_point(r, cal, seed=seed, reference=reference)
        measured_iops = r["iops_read"] + r["iops_write"]
        out = {k: r[k] for k in ("point", "distribution", "working_set", "read_pct")}
        out |= {
            "hit_measured": r["hit_ratio"], "hit_predicted": p["hit_ratio"], "hit_lru": p["lru_hit_ratio"],
            **{k: v for k, v in p.items() if k.startswith("lcs_")},
            "iops_measured": measured_iops, "iops_predicted": p["iops_total"],
            "lat_measured_us": r["lat_mean_read_us"], "lat_predicted_us": p["lat_mean_read_us"],
            "capacity_mib": cal.capacity_bytes / 2**20,
        }  # fmt: skip
        out["within_hit"] = abs(out["hit_predicted"] - out["hit_measured"]) <= HIT_TOLERANCE
        out["within_iops"] = abs(out["iops_predicted"] - measured_iops) <= tolerance(
            "iops", "IOPS", measured_iops
        )
        out["within_lat"] = abs(out["lat_predicted_us"] - out["lat_measured_us"]) <= tolerance(
            "lat_mean", "us", out["lat_measured_us"], digit=1e-3
        )
        rows.append(out)
    return pl.DataFrame(rows)


def _no_service(_io: object, _rng: object) -> float:
    """The throttle's station holds IOs only in its discipline: no service time of its own (s)."""
    return 0.0


def _limit(row: dict[str, Any]) -> tuple[float, bool]:
    """(rate, by bytes) of a scenario's throttle (one limit per scenario in the lab's plans)."""
    for key, by_bytes in (("limit_read_iops", False), ("limit_write_iops", False), ("limit_read_bps", True),
                          ("limit_write_bps", True)):  # fmt: skip
        v = row.get(key)
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            return float(v), by_bytes
    raise ValueError(f"scenario {row['scenario']}: no limit")


def predict_scenario(rows: pl.DataFrame, fitted: MeasuredFit, *, span: int, duration_s: float,
                     seed: int = 1, bin_s: float = THROTL_SLICE_S) -> tuple[list[dict[str, Any]], pl.DataFrame]:  # fmt: skip
    """One scenario's tenants (rows of ``throttle.csv``) simulated: per tenant IOPS, MB/s and mean latency,
    and the IOPS per ``bin_s`` over time."""
    first = rows.row(0, named=True)
    rate, by_bytes = _limit(first)
    bucket = Bucket(
        rate=rate, burst=max(rate * THROTL_SLICE_S, float(first["block_size"]) if by_bytes else 1.0)
    )
    disc = TokenBucket({"throttled": bucket}, cost=(lambda io: float(io.size)) if by_bytes else None)
    device = build_topology(fitted.name, fitted.params).volumes[VOLUME]
    gate = Station("blk-throttle", _no_service, servers=4096, discipline=disc)
    path = IOPath("lab", [gate, device])
    sources = []
    for r in rows.iter_rows(named=True):
        think: Any = 0.0
        burst = r.get("burst_ios")
        if (
            r["tenant"] == "throttled"
            and burst is not None
            and not (isinstance(burst, float) and math.isnan(burst))
        ):
            think = BurstThink(int(burst), float(r["idle_s"]))
        sampler = FixedSampler(size=int(r["block_size"]), read_pct=100.0, span=span)
        sources.append(ClosedSource(r["tenant"], path, sampler, outstanding=int(r["iodepth"]), think=think,
                                    cls=r["tenant"]))  # fmt: skip
    result = simulate(path, sources, duration=duration_s, warmup=0.0, seed=seed, progress=False)
    summary = {row["class"]: row for row in result.summary().iter_rows(named=True)}
    out = []
    for r in rows.iter_rows(named=True):
        s = summary.get(r["tenant"], {})
        out.append({"scenario": r["scenario"], "tenant": r["tenant"], "iops_predicted": s.get("iops", math.nan),
                    "mb_s_predicted": s.get("mb_per_s", math.nan),
                    "lat_predicted_us": (s.get("mean_ms") or math.nan) * 1e3})  # fmt: skip
    series = result.rates(bin_s).select(
        pl.lit(first["scenario"]).alias("scenario"), pl.col("class").alias("tenant"),
        pl.col("start_s").alias("t_s"), pl.col("iops"),
    )  # fmt: skip
    return out, series


def predict_throttle(throttle: pl.DataFrame, fitted: MeasuredFit, *, span: int, duration_s: float,
                     seed: int = 1) -> tuple[pl.DataFrame, pl.DataFrame]:  # fmt: skip
    """Measured beside predicted per scenario and tenant (IOPS, MB/s, mean latency, ``within_*``), and the
    predicted IOPS over time."""
    rows, series = [], []
    for name in throttle["scenario"].unique(maintain_order=True):
        part = throttle.filter(pl.col("scenario") == name)
        pred, s = predict_scenario(part, fitted, span=span, duration_s=duration_s, seed=seed)
        series.append(s)
        for r, p in zip(part.iter_rows(named=True), pred, strict=True):
            out = {"scenario": name, "tenant": r["tenant"], "throttled": r["throttled"],
                   "iops_measured": r["iops"], "iops_predicted": p["iops_predicted"], "mb_s_measured": r["mb_s"],
                   "mb_s_predicted": p["mb_s_predicted"], "lat_measured_us": r["lat_mean_us"],
                   "lat_predicted_us": p["lat_predicted_us"]}  # fmt: skip
            out["within_iops"] = abs(out["iops_predicted"] - r["iops"]) <= tolerance(
                "iops", "IOPS", r["iops"]
            )
            out["within_lat"] = abs(out["lat_predicted_us"] - r["lat_mean_us"]) <= tolerance(
                "lat_mean", "us", r["lat_mean_us"], digit=1e-3
            )
            rows.append(out)
    return pl.DataFrame(rows), pl.concat(series)


def shares(cache: pl.DataFrame | None, throttle: pl.DataFrame | None) -> pl.DataFrame:
    """The share within tolerance per mechanism and metric: the page cache's hit ratio, IOPS and latency;
    the throttle's throttled tenants and unthrottled tenants, IOPS and latency."""
    rows = []
    if cache is not None and cache.height:
        for m in ("hit", "iops", "lat"):
            rows.append({"mechanism": "page cache", "metric": m, "points": cache.height,
                         "within": int(cache[f"within_{m}"].sum())})  # fmt: skip
    if throttle is not None and throttle.height:
        for who, sel in (("throttled tenant", True), ("unthrottled tenants", False)):
            part = throttle.filter(pl.col("throttled") == sel)
            for m in ("iops", "lat"):
                if part.height:
                    rows.append({"mechanism": f"blk-throttle: {who}", "metric": m, "points": part.height,
                                 "within": int(part[f"within_{m}"].sum())})  # fmt: skip
    out = pl.DataFrame(rows, schema={"mechanism": pl.String, "metric": pl.String, "points": pl.Int64,
                                     "within": pl.Int64})  # fmt: skip
    return out.with_columns(share=pl.col("within") / pl.col("points"))


class TwoListSketch:
    """A post-hoc diagnostic, not a prediction and not a component policy: a sketch of the kernel's two-list
    LRU for unmapped file pages (``mm/swap.c`` ``folio_mark_accessed``, ``mm/vmscan.c``, ``mm/workingset.c``)
    of ``capacity`` pages. A missed page goes on the inactive list marked referenced (the read marks it
    accessed); a hit on an inactive page marked referenced moves it to the active list, a hit on an unmarked
    one marks it; a hit on an active page only marks it (the active list is not reordered). Before an
    eviction the active list's oldest pages move to the inactive list while it is the smaller one (the
    inactive ratio is 1 below 1 GiB); the inactive list's oldest page is evicted, leaving a shadow entry
    stamped with the count of evictions and activations; a page that refaults within the active list's size
    of that count goes straight to the active list. Left out: reclaim in batches, the referenced bit's finer
    rules, mapped and executable pages."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.inactive: dict[int, bool] = {}  # insertion order = list order, oldest first
        self.active: dict[int, bool] = {}
        self.shadow: dict[int, int] = {}
        self.age = 0

    def _make_room(self) -> None:
        while len(self.inactive) + len(self.active) >= self.capacity:
            while len(self.inactive) < len(self.active):
                key = next(iter(self.active))
                self.inactive[key] = self.active.pop(key)
            key = next(iter(self.inactive))
            del self.inactive[key]
            self.shadow[key] = self.age
            self.age += 1

    def access(self, key: int) -> bool:
        """Look ``key`` up: True on a hit; on a miss admit it (see the class docstring)."""
        if key in self.active:
            self.active[key] = True
            return True
        if key in self.inactive:
            if self.inactive[key]:
                del self.inactive[key]
                self.active[key] = False
                self.age += 1
            else:
                self.inactive[key] = True
            return True
        self._make_room()
        evicted_at = self.shadow.pop(key, None)
        if evicted_at is not None and self.age - evicted_at <= len(self.active):
            self.active[key] = False
            self.age += 1
        else:
            self.inactive[key] = True
        return False


def two_list_hit_ratio(row: dict[str, Any], cal: CacheCalibration, *, seed: int = 1, warm_turns: int = 8,
                       draws: int = 300_000) -> float:  # fmt: skip
    """The :class:`TwoListSketch`'s hit ratio on a read-only cache point's draws (post hoc)."""
    bs = int(row["block_size"])
    capacity = max(cal.capacity_bytes // bs, 1)
    warm = warm_turns * capacity
    trace = fio_blocks(
        row["distribution"], int(row["ws_bytes"]) // bs, warm + draws, np.random.default_rng(seed)
    )
    sketch = TwoListSketch(capacity)
    hits = 0
    for i, b in enumerate(trace.tolist()):
        h = sketch.access(b)
        if i >= warm:
            hits += h
    return hits / draws
