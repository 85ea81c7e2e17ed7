"""Measurement side of the simulation kernel: the per-class recorder of a run (latency, rate time series,
service-level curves).

A simulation completes hundreds of thousands of IOs per second of wall time, so recording is split in
two: the per-IO hot path (:meth:`LatencyRecorder.record`) only appends floats to a Python list, and the
buffered samples are ingested in numpy batches (every ``batch`` samples of a class, and on
:meth:`LatencyRecorder.flush`) into a :class:`~storagelab.kernel.histogram.LatencyHistogram` and a rate
series per class.

Units: SI inside (seconds, bytes). Frames returned for people use ms, IOPS and MB/s (10**6 bytes/s),
named in the column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import polars as pl

from storagelab.kernel.histogram import (
    _SLC_SCHEMA,
    DEFAULT_THRESHOLDS_MS,
    LatencyHistogram,
    ServiceLevelCurve,
)

__all__ = ["LatencyRecorder"]

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
        a = np.fromiter(buf, dtype=np.float64, count=len(buf)).reshape(-1, 3)  # floats: no shape to discover
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
