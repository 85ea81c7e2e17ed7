"""Measurement side of the simulation kernel: latency histograms, rate time series, service-level curves.

A simulation completes hundreds of thousands of IOs per second of wall time, so recording is split in
two: the per-IO hot path (:meth:`LatencyRecorder.record`) only appends floats to a Python list, and the
buffered samples are ingested in numpy batches (every ``batch`` samples of a class, and on
:meth:`LatencyRecorder.flush`).

:class:`LatencyHistogram` is a thin wrapper over ``hdrh.histogram.HdrHistogram`` (HdrHistogram's
log-linear buckets): batches are binned with numpy using the library's own index arithmetic and added
straight into the library's counts array, so merging and the V2 wire encoding come from the library
and every bucket count equals what ``HdrHistogram.record_value`` would have produced value by value.

Units: SI inside (seconds, bytes); the histogram's integer unit is the nanosecond. Frames returned for
people use ms, IOPS and MB/s (10**6 bytes/s), named in the column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import polars as pl
from hdrh.histogram import HdrHistogram

__all__ = [
    "DEFAULT_THRESHOLDS_MS",
    "LatencyHistogram",
    "LatencyRecorder",
    "ServiceLevelCurve",
    "UtilisationTracker",
]

#: Nanoseconds per second: the histogram records integer nanoseconds, ``floor(seconds * 1e9)``.
NS_PER_S = 1_000_000_000
#: Largest highest-trackable value (ns): below 2**52 every bucket arithmetic in float64 is exact.
_MAX_TRACKABLE_NS = 2**52


#: Renard R10 series: ten preferred numbers per decade, equally spaced in log (ratio 10**0.1, rounded).
_R10 = (1.0, 1.25, 1.6, 2.0, 2.5, 3.15, 4.0, 5.0, 6.3, 8.0)


def _default_thresholds_ms() -> tuple[float, ...]:
    # A log grid 0.05..1000 ms (R10, so it contains 1, 2, 5 and 10) plus 30 ms, a common SLA figure.
    grid = {round(m * 10.0**e, 10) for e in range(-2, 3) for m in _R10} | {1000.0, 30.0}
    return tuple(sorted(x for x in grid if 0.05 <= x <= 1000.0))


#: Default service-level thresholds (ms): a log grid 0.05..1000 ms (Renard R10, 10 per decade, which
#: includes 1, 2, 5 and 10 ms) plus 30 ms.
DEFAULT_THRESHOLDS_MS: tuple[float, ...] = _default_thresholds_ms()


# ------------------------------------------------------------------------------------------------------
# Histogram
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Layout:
    """Bucket layout of one HdrHistogram configuration, precomputed for vectorised binning."""

    unit_magnitude: int
    sub_bucket_half_count_magnitude: int
    sub_bucket_half_count: int
    sub_bucket_mask: int
    counts_len: int
    lower_ns: np.ndarray  # lowest value (ns) of each counts index
    upper_ns: np.ndarray  # first value (ns) above each counts index (exclusive upper edge)


@lru_cache(maxsize=32)
def _layout(lowest_ns: int, highest_ns: int, digits: int) -> _Layout:
    probe = HdrHistogram(lowest_ns, highest_ns, digits)
    um = probe.unit_magnitude
    shm = probe.sub_bucket_half_count_magnitude
    half = probe.sub_bucket_half_count
    index = np.arange(probe.counts_len, dtype=np.int64)
    # HdrHistogram.get_value_from_index, vectorised.
    bucket = (index >> shm) - 1
    sub = (index & (half - 1)) + half
    first = bucket < 0
    sub[first] -= half
    bucket[first] = 0
    lower = sub << (bucket + um)
    upper = lower + (np.int64(1) << (bucket + um))
    for arr in (lower, upper):
        arr.flags.writeable = False
    return _Layout(um, shm, half, probe.sub_bucket_mask, probe.counts_len, lower, upper)


class LatencyHistogram:
    """A mergeable latency histogram with HdrHistogram's log-linear buckets; values in seconds.

    Samples are recorded as integer nanoseconds ``floor(seconds * 1e9)`` into the buckets of an
    ``HdrHistogram(lowest, highest, digits)``: ``lowest_s`` is the lowest discernible value (rounded
    down by the scheme to a power of two of ns, the *unit*), ``highest_s`` the highest trackable value
    and ``digits`` the significant decimal digits (1..5). Every bucket is at most
    ``max(relative_error * value, unit)`` wide, ``relative_error = 10**-digits``; see
    :meth:`resolution_s`. Bucket ``i`` holds exactly the samples ``x`` with
    ``lower_i <= x < upper_i`` (edges in :meth:`to_frame`).

    ``count``, ``mean``, ``min`` and ``max`` are exact (the sum, minimum and maximum of the samples
    are tracked beside the buckets); percentiles and shares are at bucket resolution. Statistics of an
    empty histogram are NaN.
    """

    __slots__ = (
        "_counts",
        "_hdr",
        "_layout",
        "_max_s",
        "_min_s",
        "_sum_s",
        "digits",
        "highest_s",
        "lowest_s",
    )

    def __init__(self, lowest_s: float = 1e-9, highest_s: float = 3600.0, digits: int = 3) -> None:
        if not (isinstance(digits, int | np.integer) and 1 <= digits <= 5):
            raise ValueError(
                f"digits must be an integer in 1..5 (significant decimal digits), got {digits!r}"
            )
        if not (math.isfinite(lowest_s) and lowest_s >= 1e-9):
            raise ValueError(f"lowest_s must be >= 1e-9 s (one ns, the recording unit), got {lowest_s!r}")
        lowest_ns = round(lowest_s * NS_PER_S)
        if not (math.isfinite(highest_s) and 2 * lowest_ns <= highest_s * NS_PER_S <= _MAX_TRACKABLE_NS):
            raise ValueError(
                f"highest_s must be finite, >= 2 * lowest_s ({2 * lowest_s!r} s) and <= "
                f"{_MAX_TRACKABLE_NS / NS_PER_S:.0f} s, got {highest_s!r}"
            )
        self.lowest_s = float(lowest_s)
        self.highest_s = float(highest_s)
        self.digits = int(digits)
        self._attach(HdrHistogram(lowest_ns, math.ceil(highest_s * NS_PER_S), self.digits))
        self._sum_s = 0.0
        self._min_s = math.inf
        self._max_s = -math.inf

    def _attach(self, hdr: HdrHistogram) -> None:
        self._hdr = hdr
        self._layout = _layout(
            hdr.lowest_trackable_value, hdr.highest_trackable_value, hdr.significant_figures
        )
        # A zero-copy numpy view of the library's counts (a native-endian ctypes uint64 array).
        self._counts = np.ctypeslib.as_array(hdr.counts)

    # -- recording ---------------------------------------------------------------------------------
    def record_many(self, seconds: np.ndarray | Iterable[float]) -> None:
        """Record a batch of latencies (seconds, each in ``0 <= x <= highest_s``)."""
        x = np.asarray(seconds, dtype=np.float64).ravel()
        if x.size == 0:
            return
        ns = x * NS_PER_S
        lo, hi = float(ns.min()), float(ns.max())
        if not (lo >= 0.0 and hi <= self._hdr.highest_trackable_value):  # also catches NaN
            bad = x[~((ns >= 0.0) & (ns <= self._hdr.highest_trackable_value))][0]
            raise ValueError(
                f"latency must be in 0..{self.highest_s} s (highest_s), got {bad!r} s; "
                "raise highest_s if such latencies are genuine"
            )
        v = ns.astype(np.int64)  # truncation == floor for non-negative values
        lay = self._layout
        # HdrHistogram._counts_index_for, vectorised: frexp's exponent is the bit length (exact < 2**53).
        bit_length = np.frexp((v | lay.sub_bucket_mask).astype(np.float64))[1].astype(np.int64)
        bucket = bit_length - (lay.unit_magnitude + lay.sub_bucket_half_count_magnitude + 1)
        sub = v >> (bucket + lay.unit_magnitude)
        index = ((bucket + 1) << lay.sub_bucket_half_count_magnitude) + sub - lay.sub_bucket_half_count
        binned = np.bincount(index)
        view = self._counts[: binned.size]
        np.add(view, binned.astype(np.uint64), out=view)
        hdr = self._hdr
        hdr.total_count += int(x.size)
        hdr.min_value = min(hdr.min_value, int(lo))
        hdr.max_value = max(hdr.max_value, int(hi))
        self._sum_s += float(x.sum())
        self._min_s = min(self._min_s, float(x.min()))
        self._max_s = max(self._max_s, float(x.max()))

    def add(self, other: LatencyHistogram) -> LatencyHistogram:
        """Merge ``other`` into this histogram (same configuration required); returns ``self``."""
        if not isinstance(other, LatencyHistogram):
            raise ValueError(f"other must be a LatencyHistogram, got {type(other).__name__}")
        if self.config != other.config:
            raise ValueError(
                f"cannot merge histograms with different (lowest_ns, highest_ns, digits): "
                f"{self.config} and {other.config}"
            )
        if other.count:
            self._hdr.add(other._hdr)
            self._sum_s += other._sum_s
            self._min_s = min(self._min_s, other._min_s)
            self._max_s = max(self._max_s, other._max_s)
        return self

    def __iadd__(self, other: LatencyHistogram) -> LatencyHistogram:
        return self.add(other)

    def copy(self) -> LatencyHistogram:
        """An independent histogram with the same configuration and contents."""
        return LatencyHistogram(self.lowest_s, self.highest_s, self.digits).add(self)

    # -- configuration -----------------------------------------------------------------------------
    @property
    def config(self) -> tuple[int, int, int]:
        """``(lowest_ns, highest_ns, digits)`` of the underlying HdrHistogram."""
        h = self._hdr
        return (h.lowest_trackable_value, h.highest_trackable_value, h.significant_figures)

    @property
    def hdr(self) -> HdrHistogram:
        """The underlying ``hdrh`` histogram (values in ns): for the library's iterators and reports."""
        return self._hdr

    @property
    def relative_error(self) -> float:
        """The stated relative resolution ``10**-digits``: no bucket above the unit is wider than this
        fraction of its values (HdrHistogram's guarantee; the actual bound is ``1/sub_bucket_half_count``,
        which is smaller)."""
        return 10.0**-self.digits

    @property
    def unit_s(self) -> float:
        """The width of the finest buckets (s): the lowest discernible value rounded down to 2**k ns."""
        return (1 << self._layout.unit_magnitude) / NS_PER_S

    def resolution_s(self, t_s: float) -> float:
        """Bound (s) on the width of the bucket holding ``t_s``: ``max(relative_error * t_s, unit_s)``.

        A reported percentile differs from the exact sample quantile by less than this, and
        :meth:`share_under` ``(t)`` lies between the exact shares under ``t - resolution_s(t)`` and ``t``.
        """
        return max(self.relative_error * t_s, self.unit_s)

    # -- statistics --------------------------------------------------------------------------------
    @property
    def count(self) -> int:
        """Number of samples recorded."""
        return int(self._hdr.total_count)

    @property
    def total_s(self) -> float:
        """Exact sum of the samples (s)."""
        return self._sum_s

    @property
    def mean(self) -> float:
        """Exact mean of the samples (s), from the tracked sum (not from buckets); NaN when empty."""
        n = self.count
        return self._sum_s / n if n else math.nan

    @property
    def min(self) -> float:
        """Exact smallest sample (s); NaN when empty."""
        return self._min_s if self.count else math.nan

    @property
    def max(self) -> float:
        """Exact largest sample (s); NaN when empty."""
        return self._max_s if self.count else math.nan

    def percentiles(self, qs: Iterable[float]) -> np.ndarray:
        """Values (s) at percentiles ``qs`` (each in 0..100), with HdrHistogram's semantics.

        Like ``HdrHistogram.get_value_at_percentile``: the bucket where the cumulative count first
        reaches ``max(int(q * count / 100 + 0.5), 1)``, reported as its highest equivalent value
        (``upper edge - 1 ns``; the lowest value for ``q == 0``). All NaN when empty.
        """
        q = np.asarray(list(qs) if not isinstance(qs, np.ndarray) else qs, dtype=np.float64).ravel()
        if q.size and not (np.all(q >= 0.0) and np.all(q <= 100.0)):
            raise ValueError(f"percentiles must be in 0..100, got {q[~((q >= 0) & (q <= 100))].tolist()}")
        total = self.count
        if total == 0:
            return np.full(q.size, math.nan)
        targets = np.array([max(int(p * total / 100 + 0.5), 1) for p in q.tolist()], dtype=np.uint64)
        idx = np.searchsorted(np.cumsum(self._counts), targets, side="left")
        lay = self._layout
        ns = np.where(q > 0.0, lay.upper_ns[idx] - 1, lay.lower_ns[idx])
        return ns / NS_PER_S

    def percentile(self, q: float) -> float:
        """Value (s) at percentile ``q`` in 0..100 (see :meth:`percentiles`); NaN when empty."""
        return float(self.percentiles([q])[0])

    def shares_under(self, t_s: np.ndarray | Iterable[float]) -> np.ndarray:
        """Fractions of samples below each threshold in ``t_s`` (s); see :meth:`share_under`."""
        t = np.asarray(t_s, dtype=np.float64).ravel()
        total = self.count
        if total == 0:
            return np.full(t.size, math.nan)
        cum = np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(self._counts)])
        # Buckets entirely below t: their upper edge is <= t.
        k = np.searchsorted(self._layout.upper_ns, t * NS_PER_S, side="right")
        return cum[k] / total

    def share_under(self, t_s: float) -> float:
        """Fraction of samples ``< t_s`` (s), at bucket resolution; NaN when empty.

        It is the exact share of samples below the lower edge of the bucket that holds ``t_s``, so
        ``F(t - resolution_s(t)) <= share_under(t) <= F(t)`` where ``F(u)`` is the exact fraction of
        samples ``< u``: a lower bound, exact when ``t`` is a bucket edge.
        """
        return float(self.shares_under([t_s])[0])

    def to_frame(self, nonzero_only: bool = True) -> pl.DataFrame:
        """Buckets as a frame: ``lower_s``, ``upper_s`` (a bucket holds ``lower_s <= x < upper_s``) and
        ``count``; only buckets with samples unless ``nonzero_only`` is false."""
        counts = self._counts
        keep = np.flatnonzero(counts) if nonzero_only else np.arange(counts.size)
        return pl.DataFrame(
            {
                "lower_s": self._layout.lower_ns[keep] / NS_PER_S,
                "upper_s": self._layout.upper_ns[keep] / NS_PER_S,
                "count": counts[keep].astype(np.int64),
            },
            schema={"lower_s": pl.Float64, "upper_s": pl.Float64, "count": pl.Int64},
        )

    # -- exchange ----------------------------------------------------------------------------------
    def encode(self) -> bytes:
        """The buckets in HdrHistogram's compressed V2 format (base64), readable by any HdrHistogram
        implementation. Exact sum, minimum and maximum are not part of that format."""
        return self._hdr.encode()

    @classmethod
    def from_encoded(cls, blob: bytes | str) -> LatencyHistogram:
        """A histogram from an HdrHistogram V2 blob (values in ns).

        The blob carries only buckets, so ``mean`` is the bucket-midpoint mean and ``min``/``max`` are
        the edges of the outermost occupied buckets: within :meth:`resolution_s`, no longer exact.
        """
        hdr = HdrHistogram.decode(blob)
        self = cls.__new__(cls)
        self.lowest_s = hdr.lowest_trackable_value / NS_PER_S
        self.highest_s = hdr.highest_trackable_value / NS_PER_S
        self.digits = int(hdr.significant_figures)
        self._attach(hdr)
        nz = np.flatnonzero(self._counts)
        if nz.size:
            lay = self._layout
            mid = (lay.lower_ns[nz] + lay.upper_ns[nz]) / 2.0 / NS_PER_S
            self._sum_s = float(np.dot(self._counts[nz].astype(np.float64), mid))
            self._min_s = float(lay.lower_ns[nz[0]] / NS_PER_S)
            self._max_s = float(lay.upper_ns[nz[-1]] / NS_PER_S)
        else:
            self._sum_s, self._min_s, self._max_s = 0.0, math.inf, -math.inf
        return self

    def __getstate__(self) -> dict:
        # ctypes count arrays do not pickle: ship the V2 blob plus the exact moments.
        return {
            "blob": self.encode(),
            "sum_s": self._sum_s,
            "min_s": self._min_s,
            "max_s": self._max_s,
            "lowest_s": self.lowest_s,
            "highest_s": self.highest_s,
        }

    def __setstate__(self, state: dict) -> None:
        restored = LatencyHistogram.from_encoded(state["blob"])
        self.digits = restored.digits
        self._attach(restored._hdr)
        self.lowest_s, self.highest_s = state["lowest_s"], state["highest_s"]
        self._sum_s, self._min_s, self._max_s = state["sum_s"], state["min_s"], state["max_s"]

    def __repr__(self) -> str:
        return (
            f"LatencyHistogram(count={self.count}, mean={self.mean:.6g} s, "
            f"p99={self.percentile(99):.6g} s, digits={self.digits})"
        )


# ------------------------------------------------------------------------------------------------------
# Service-level curve
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ServiceLevelCurve:
    """Share of IOs completing in under ``t``, for ``t`` on an ascending grid of thresholds (s).

    ``shares[i]`` is the fraction of the ``count`` IOs with latency ``< thresholds_s[i]`` (from a
    :class:`LatencyHistogram`, so a lower bound within its resolution, see
    :meth:`LatencyHistogram.share_under`). ``cls`` names the IO class the curve describes.
    """

    thresholds_s: tuple[float, ...]
    shares: tuple[float, ...]
    count: int
    cls: str = ""

    def __post_init__(self) -> None:
        t = np.asarray(self.thresholds_s, dtype=np.float64)
        s = np.asarray(self.shares, dtype=np.float64)
        if t.size == 0 or t.shape != s.shape:
            raise ValueError(
                f"thresholds_s and shares must be non-empty and of equal length, got {t.size} and {s.size}"
            )
        if not (np.all(np.isfinite(t)) and np.all(t > 0) and np.all(np.diff(t) > 0)):
            raise ValueError(
                f"thresholds_s must be positive, finite and strictly ascending, got {t.tolist()}"
            )
        if self.count > 0 and not (np.all((s >= 0) & (s <= 1)) and np.all(np.diff(s) >= 0)):
            raise ValueError(f"shares must be non-decreasing fractions in 0..1, got {s.tolist()}")

    @classmethod
    def from_histogram(
        cls, hist: LatencyHistogram, thresholds_s: Iterable[float], name: str = ""
    ) -> ServiceLevelCurve:
        """The curve of ``hist`` on ``thresholds_s`` (s, ascending); shares are NaN when it is empty."""
        t = tuple(float(x) for x in thresholds_s)
        return cls(t, tuple(float(x) for x in hist.shares_under(t)), hist.count, name)

    def at(self, t_s: float) -> float:
        """Share of IOs under ``t_s`` (s), for ``t_s`` within the grid.

        Exact grid values at grid points; between neighbouring thresholds ``t_i < t < t_j``, linear
        interpolation in ``log t``: ``s_i + (s_j - s_i) * log(t / t_i) / log(t_j / t_i)``. The
        curve is non-decreasing, so the true share lies in ``[s_i, s_j]``: the interpolation error is
        at most ``s_j - s_i``. Outside the grid there is no information: ValueError.
        """
        t = self.thresholds_s
        if not (t[0] <= t_s <= t[-1]):
            raise ValueError(f"t_s must be within the curve's grid {t[0]!r}..{t[-1]!r} s, got {t_s!r}")
        return float(np.interp(math.log(t_s), np.log(t), self.shares))

    def to_frame(self) -> pl.DataFrame:
        """Columns ``class``, ``threshold_ms``, ``share_under``."""
        return pl.DataFrame(
            {
                "class": [self.cls] * len(self.thresholds_s),
                "threshold_ms": [x * 1e3 for x in self.thresholds_s],
                "share_under": list(self.shares),
            },
            schema=_SLC_SCHEMA,
        )


_SLC_SCHEMA = {"class": pl.String, "threshold_ms": pl.Float64, "share_under": pl.Float64}
_SUMMARY_SCHEMA = {
    "class": pl.String,
    "count": pl.Int64,
    "mean_ms": pl.Float64,
    "p50_ms": pl.Float64,
    "p90_ms": pl.Float64,
    "p99_ms": pl.Float64,
    "p999_ms": pl.Float64,
    "max_ms": pl.Float64,
    "iops": pl.Float64,
    "mb_per_s": pl.Float64,
}
_RATES_SCHEMA = {
    "class": pl.String,
    "start_s": pl.Float64,
    "duration_s": pl.Float64,
    "ios": pl.Int64,
    "iops": pl.Float64,
    "mb_per_s": pl.Float64,
    "mean_ms": pl.Float64,
}


# ------------------------------------------------------------------------------------------------------
# Recorder
# ------------------------------------------------------------------------------------------------------
class _RateSeries:
    """Completed IOs, bytes and summed latency (s) of one class per fine time bin of the measurement
    window (growable)."""

    __slots__ = ("bytes", "ios", "latency")

    def __init__(self) -> None:
        self.ios = np.zeros(0, dtype=np.int64)
        self.bytes = np.zeros(0, dtype=np.float64)
        self.latency = np.zeros(0, dtype=np.float64)

    def add(self, bins: np.ndarray, sizes: np.ndarray, latencies: np.ndarray) -> None:
        if bins.size == 0:
            return
        n = int(bins.max()) + 1
        if n > self.ios.size:
            cap = max(n, 2 * self.ios.size, 1024)
            self.ios = np.concatenate([self.ios, np.zeros(cap - self.ios.size, dtype=np.int64)])
            self.bytes = np.concatenate([self.bytes, np.zeros(cap - self.bytes.size)])
            self.latency = np.concatenate([self.latency, np.zeros(cap - self.latency.size)])
        self.ios[:n] += np.bincount(bins, minlength=n)
        self.bytes[:n] += np.bincount(bins, weights=sizes, minlength=n)
        self.latency[:n] += np.bincount(bins, weights=latencies, minlength=n)


class LatencyRecorder:
    """Per-class latency, rate and service-level measurement of one simulation run.

    :meth:`record` is the per-IO hot path: it appends three floats to the class's buffer. Every
    ``batch`` samples of a class (and on :meth:`flush`, which every query calls first) the buffer is
    ingested with numpy into the class's :class:`LatencyHistogram` and its rate series.

    The measurement window is ``[warmup_s, end_s)`` of *completion* time: IOs completing outside it are
    not counted anywhere. Rates are kept in bins of ``rate_resolution_s`` seconds from ``warmup_s``;
    :meth:`rates` aggregates them to any multiple. ``lowest_s``, ``highest_s`` and ``digits``
    configure the histograms (see :class:`LatencyHistogram`).
    """

    __slots__ = (
        "_batch3",
        "_buffers",
        "_hist_args",
        "_histograms",
        "_last_t",
        "_rates",
        "end_s",
        "rate_resolution_s",
        "warmup_s",
    )

    def __init__(
        self,
        warmup_s: float = 0.0,
        end_s: float | None = None,
        *,
        rate_resolution_s: float = 0.01,
        lowest_s: float = 1e-9,
        highest_s: float = 3600.0,
        digits: int = 3,
        batch: int = 8192,
    ) -> None:
        if not (math.isfinite(warmup_s) and warmup_s >= 0.0):
            raise ValueError(f"warmup_s must be a finite time >= 0 s, got {warmup_s!r}")
        if end_s is not None and not (math.isfinite(end_s) and end_s > warmup_s):
            raise ValueError(
                f"end_s must be None or a finite time > warmup_s ({warmup_s!r} s), got {end_s!r}"
            )
        if not (math.isfinite(rate_resolution_s) and rate_resolution_s > 0.0):
            raise ValueError(f"rate_resolution_s must be a finite duration > 0 s, got {rate_resolution_s!r}")
        if not (isinstance(batch, int) and batch >= 1):
            raise ValueError(f"batch must be an integer >= 1 (samples per numpy ingest), got {batch!r}")
        LatencyHistogram(lowest_s, highest_s, digits)  # validate the histogram configuration now
        self.warmup_s = float(warmup_s)
        self.end_s = None if end_s is None else float(end_s)
        self.rate_resolution_s = float(rate_resolution_s)
        self._hist_args = (lowest_s, highest_s, digits)
        self._batch3 = 3 * batch
        self._buffers: dict[str, list[float]] = {}
        self._histograms: dict[str, LatencyHistogram] = {}
        self._rates: dict[str, _RateSeries] = {}
        self._last_t = -math.inf  # latest completion time counted

    # -- hot path ----------------------------------------------------------------------------------
    def record(self, cls: str, latency_s: float, completion_time_s: float, size_bytes: int) -> None:
        """Record one completed IO of class ``cls``: latency (s), completion time (s), size (bytes)."""
        try:
            buf = self._buffers[cls]
        except KeyError:
            buf = self._new_class(cls)
        buf.append(latency_s)
        buf.append(completion_time_s)
        buf.append(size_bytes)
        if len(buf) >= self._batch3:
            self._ingest(cls)

    def _new_class(self, cls: str) -> list[float]:
        if not isinstance(cls, str):
            raise ValueError(f"an IO class must be a str, got {cls!r}")
        self._histograms[cls] = LatencyHistogram(*self._hist_args)
        self._rates[cls] = _RateSeries()
        buf: list[float] = []
        self._buffers[cls] = buf
        return buf

    def _ingest(self, cls: str) -> None:
        buf = self._buffers[cls]
        if not buf:
            return
        a = np.array(buf, dtype=np.float64).reshape(-1, 3)
        buf.clear()
        lat, t, size = a[:, 0], a[:, 1], a[:, 2]
        if not np.all(np.isfinite(t)):
            raise ValueError(
                f"completion times of class {cls!r} must be finite, got {t[~np.isfinite(t)][0]!r}"
            )
        keep = t >= self.warmup_s
        if self.end_s is not None:
            keep &= t < self.end_s
        if not keep.all():
            lat, t, size = lat[keep], t[keep], size[keep]
        if lat.size == 0:
            return
        try:
            self._histograms[cls].record_many(lat)
        except ValueError as exc:
            raise ValueError(f"class {cls!r}: {exc}") from None
        self._last_t = max(self._last_t, float(t.max()))
        bins = ((t - self.warmup_s) / self.rate_resolution_s).astype(np.int64)
        self._rates[cls].add(bins, size, lat)

    def flush(self) -> None:
        """Ingest every buffered sample into the histograms and rate series."""
        for cls in self._buffers:
            self._ingest(cls)

    # -- results -----------------------------------------------------------------------------------
    @property
    def classes(self) -> tuple[str, ...]:
        """The IO classes seen, sorted."""
        return tuple(sorted(self._buffers))

    def histogram(self, cls: str | None = None) -> LatencyHistogram:
        """The latency histogram of ``cls`` (live object), or a merged copy over all classes for None."""
        self.flush()
        if cls is None:
            merged = LatencyHistogram(*self._hist_args)
            for h in self._histograms.values():
                merged.add(h)
            return merged
        if cls not in self._histograms:
            raise ValueError(f"no IO of class {cls!r} was recorded; classes: {list(self.classes)}")
        return self._histograms[cls]

    def window_end(self, until_s: float | None = None) -> float:
        """End (s) of the measurement window: the earlier of ``end_s`` and ``until_s`` where given,
        else the latest counted completion (slightly short: pass ``until_s``, e.g. ``env.now``)."""
        self.flush()
        ends = [x for x in (self.end_s, until_s) if x is not None]
        if not ends:
            return self._last_t if self._last_t > self.warmup_s else self.warmup_s
        end = min(ends)
        if end < self._last_t:
            raise ValueError(
                f"until_s={until_s!r} is before the latest counted completion ({self._last_t!r} s); "
                "pass the time the simulation ran to"
            )
        if end < self.warmup_s:
            raise ValueError(f"until_s={until_s!r} is before warmup_s={self.warmup_s!r}")
        return float(end)

    def summary(self, until_s: float | None = None) -> pl.DataFrame:
        """One row per class: ``count``, ``mean_ms``, ``p50_ms``, ``p90_ms``, ``p99_ms``, ``p999_ms``,
        ``max_ms`` and ``iops``, ``mb_per_s`` (10**6 B/s) over the window (see :meth:`window_end`).
        Latency columns are null for a class with no counted IO; rates are null for an empty window."""
        span = self.window_end(until_s) - self.warmup_s
        rows = []
        for cls in self.classes:
            h = self._histograms[cls]
            n = h.count
            total_bytes = float(self._rates[cls].bytes.sum())
            if n:
                p50, p90, p99, p999 = (h.percentiles([50.0, 90.0, 99.0, 99.9]) * 1e3).tolist()
                lat = [h.mean * 1e3, p50, p90, p99, p999, h.max * 1e3]
            else:
                lat = [None] * 6
            iops = n / span if span > 0 else None
            mbps = total_bytes / 1e6 / span if span > 0 else None
            rows.append([cls, n, *lat, iops, mbps])
        return pl.DataFrame(rows, schema=_SUMMARY_SCHEMA, orient="row")

    def rates(self, bin_s: float | None = None, until_s: float | None = None) -> pl.DataFrame:
        """Rate time series: per class and time bin, ``start_s``, ``duration_s`` (the part of the bin
        inside the window), ``ios``, ``iops = ios / duration_s``, ``mb_per_s`` and ``mean_ms`` (the mean
        latency of the IOs completed in the bin; null when none did).

        ``bin_s`` (default ``rate_resolution_s``) must be a whole multiple of ``rate_resolution_s``.
        Bins start at ``warmup_s`` and cover the window (see :meth:`window_end`), zero bins included,
        so ``sum(iops * duration_s)`` is the count. An IO completing exactly at the window end is
        counted in the last bin."""
        res = self.rate_resolution_s
        bin_s = res if bin_s is None else bin_s
        m = round(bin_s / res) if math.isfinite(bin_s) and bin_s > 0 else 0
        if m < 1 or abs(m * res - bin_s) > 1e-9 * bin_s:
            raise ValueError(
                f"bin_s must be a positive whole multiple of rate_resolution_s={res!r}, got {bin_s!r}"
            )
        bin_s = m * res
        span = self.window_end(until_s) - self.warmup_s
        n_out = max(math.ceil(span / bin_s - 1e-9), 1) if span > 0 else 0
        starts = self.warmup_s + bin_s * np.arange(n_out)
        durations = np.minimum(bin_s, self.warmup_s + span - starts)
        frames = []
        for cls in self.classes:
            series = self._rates[cls]
            ios = np.zeros(n_out * m, dtype=np.int64)
            byt = np.zeros(n_out * m)
            lat = np.zeros(n_out * m)
            k = min(series.ios.size, n_out * m)
            ios[:k] = series.ios[:k]
            byt[:k] = series.bytes[:k]
            lat[:k] = series.latency[:k]
            if n_out and series.ios.size > k:  # completions at the window end (or within rounding)
                ios[-1] += series.ios[k:].sum()
                byt[-1] += series.bytes[k:].sum()
                lat[-1] += series.latency[k:].sum()
            ios_b = ios.reshape(n_out, m).sum(axis=1)
            byt_b = byt.reshape(n_out, m).sum(axis=1)
            lat_b = lat.reshape(n_out, m).sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean_ms = np.where(ios_b > 0, lat_b / ios_b * 1e3, np.nan)
            frames.append(
                pl.DataFrame(
                    {
                        "class": [cls] * n_out,
                        "start_s": starts,
                        "duration_s": durations,
                        "ios": ios_b,
                        "iops": ios_b / durations,
                        "mb_per_s": byt_b / 1e6 / durations,
                        "mean_ms": mean_ms,
                    },
                    schema=_RATES_SCHEMA,
                ).with_columns(pl.col("mean_ms").fill_nan(None))
            )
        return pl.concat(frames) if frames else pl.DataFrame(schema=_RATES_SCHEMA)

    def curve(self, cls: str | None, thresholds_ms: Iterable[float] | None = None) -> ServiceLevelCurve:
        """The :class:`ServiceLevelCurve` of ``cls`` (None: all classes, named ``"all"``)."""
        t_ms = _thresholds(thresholds_ms)
        return ServiceLevelCurve.from_histogram(
            self.histogram(cls), [x / 1e3 for x in t_ms], "all" if cls is None else cls
        )

    def service_level_curve(self, thresholds_ms: Iterable[float] | None = None) -> pl.DataFrame:
        """Per class and threshold: ``class``, ``threshold_ms``, ``share_under`` (fraction of counted
        IOs with latency below the threshold, a lower bound within histogram resolution).
        Thresholds default to :data:`DEFAULT_THRESHOLDS_MS`."""
        t_ms = _thresholds(thresholds_ms)
        frames = [self.curve(cls, t_ms).to_frame() for cls in self.classes]
        return pl.concat(frames) if frames else pl.DataFrame(schema=_SLC_SCHEMA)


def _thresholds(thresholds_ms: Iterable[float] | None) -> tuple[float, ...]:
    if thresholds_ms is None:
        return DEFAULT_THRESHOLDS_MS
    t = np.asarray(list(thresholds_ms), dtype=np.float64)
    if t.size == 0 or not (np.all(np.isfinite(t)) and np.all(t > 0)):
        raise ValueError(f"thresholds_ms must be a non-empty list of finite values > 0 ms, got {t.tolist()}")
    return tuple(float(x) for x in np.unique(t))


# ------------------------------------------------------------------------------------------------------
# Utilisation
# ------------------------------------------------------------------------------------------------------
class UtilisationTracker:
    """Time-weighted number of busy servers and queue length of one station.

    Call :meth:`update` whenever either changes (O(1): it adds the area of the last constant piece).
    Means are over ``[start, now]`` where start is construction or the last :meth:`reset` (warm-up).
    Times in seconds; ``busy`` and ``queue_len`` are counts (IOs in service, IOs waiting).
    """

    __slots__ = ("_busy", "_busy_area", "_queue", "_queue_area", "_start", "_t")

    def __init__(self, now: float = 0.0, busy: int = 0, queue_len: int = 0) -> None:
        if busy < 0 or queue_len < 0:
            raise ValueError(f"busy and queue_len must be >= 0, got busy={busy!r}, queue_len={queue_len!r}")
        self._start = self._t = float(now)
        self._busy, self._queue = busy, queue_len
        self._busy_area = self._queue_area = 0.0

    def update(self, now: float, busy: int, queue_len: int) -> None:
        """The station now has ``busy`` servers in use and ``queue_len`` IOs waiting (from ``now``)."""
        dt = now - self._t
        if dt < 0.0 or busy < 0 or queue_len < 0:
            raise ValueError(
                f"update needs now >= the last update ({self._t!r} s), busy >= 0 and queue_len >= 0; "
                f"got now={now!r}, busy={busy!r}, queue_len={queue_len!r}"
            )
        self._busy_area += self._busy * dt
        self._queue_area += self._queue * dt
        self._t = now
        self._busy = busy
        self._queue = queue_len

    def _elapsed(self, now: float) -> float:
        if now < self._t:
            raise ValueError(f"now must be >= the last update ({self._t!r} s), got {now!r}")
        span = now - self._start
        if span <= 0.0:
            raise ValueError(f"no time has elapsed since the start ({self._start!r} s) at now={now!r}")
        return span

    def mean_busy(self, now: float) -> float:
        """Time-average number of busy servers over ``[start, now]``."""
        span = self._elapsed(now)
        return (self._busy_area + self._busy * (now - self._t)) / span

    def mean_queue(self, now: float) -> float:
        """Time-average number of waiting IOs over ``[start, now]``."""
        span = self._elapsed(now)
        return (self._queue_area + self._queue * (now - self._t)) / span

    def utilisation(self, now: float, servers: int) -> float:
        """Mean busy servers over ``[start, now]`` as a fraction of ``servers``."""
        if servers < 1:
            raise ValueError(f"servers must be >= 1, got {servers!r}")
        return self.mean_busy(now) / servers

    def reset(self, now: float) -> None:
        """Forget the history before ``now`` (end of warm-up); the current state carries on."""
        self.update(now, self._busy, self._queue)
        self._start = float(now)
        self._busy_area = self._queue_area = 0.0

    @property
    def busy(self) -> int:
        """Servers in use now."""
        return self._busy

    @property
    def queue_len(self) -> int:
        """IOs waiting now."""
        return self._queue
