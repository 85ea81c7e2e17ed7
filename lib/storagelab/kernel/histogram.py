"""Latency histograms and service-level curves: the kernel's record of a latency distribution.

:class:`LatencyHistogram` is a thin wrapper over ``hdrh.histogram.HdrHistogram`` (HdrHistogram's
log-linear buckets): batches are binned with numpy using the library's own index arithmetic and added
straight into the library's counts array, so merging and the V2 wire encoding come from the library
and every bucket count equals what ``HdrHistogram.record_value`` would have produced value by value.
:class:`ServiceLevelCurve` is the share of IOs under each of a grid of thresholds, read from a histogram
(by default on :data:`DEFAULT_THRESHOLDS_MS`).

Units: SI inside (seconds); the histogram's integer unit is the nanosecond. Frames returned for people
use ms, named in the column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import polars as pl
from hdrh.histogram import HdrHistogram

__all__ = ["DEFAULT_THRESHOLDS_MS", "LatencyHistogram", "ServiceLevelCurve"]

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
