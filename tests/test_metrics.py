"""Tests of the kernel's measurement side: HDR latency histograms, service-level curves, recorder frames."""

from __future__ import annotations

import math
import pickle

import numpy as np
import polars as pl
import pytest
from hdrh.histogram import HdrHistogram

from storagelab.kernel.histogram import DEFAULT_THRESHOLDS_MS, LatencyHistogram, ServiceLevelCurve
from storagelab.kernel.metrics import LatencyRecorder

#: (lowest_s, highest_s, digits): the default, a coarse unit (2**9 ns) with 2 digits, and 4 digits.
CONFIGS = [(1e-9, 3600.0, 3), (1e-6, 100.0, 2), (1e-9, 10.0, 4)]
PERCENTILES = [0.0, 0.1, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0]


def lognormal_latencies(seed: int, n: int = 100_000) -> np.ndarray:
    """Latencies (s): lognormal around 1 ms with a heavy spread (5 decades across 1e5 samples)."""
    return np.random.default_rng(seed).lognormal(math.log(1e-3), 1.5, n)


def reference_hdr(x: np.ndarray, lowest_s: float, highest_s: float, digits: int) -> HdrHistogram:
    """An hdrh histogram fed value by value with the documented quantisation, floor(seconds * 1e9) ns."""
    ref = HdrHistogram(round(lowest_s * 1e9), math.ceil(highest_s * 1e9), digits)
    for v in x.tolist():
        assert ref.record_value(math.floor(v * 1e9))
    return ref


def in_batches(hist: LatencyHistogram, x: np.ndarray, batch: int = 8192) -> LatencyHistogram:
    for i in range(0, x.size, batch):
        hist.record_many(x[i : i + batch])
    return hist


def counts_of(h: HdrHistogram) -> np.ndarray:
    return np.ctypeslib.as_array(h.counts).copy()


# -- LatencyHistogram vs hdrh ----------------------------------------------------------------------------
@pytest.mark.parametrize(("lowest_s", "highest_s", "digits"), CONFIGS)
def test_batched_histogram_equals_hdrh_fed_one_by_one(lowest_s: float, highest_s: float, digits: int) -> None:
    x = lognormal_latencies(seed=digits)
    hist = in_batches(LatencyHistogram(lowest_s, highest_s, digits), x)
    ref = reference_hdr(x, lowest_s, highest_s, digits)

    assert np.array_equal(counts_of(hist.hdr), counts_of(ref))
    assert hist.count == ref.get_total_count() == x.size
    assert hist.hdr.get_min_value() == ref.get_min_value()
    assert hist.hdr.get_max_value() == ref.get_max_value()
    ours_ns = [round(v * 1e9) for v in hist.percentiles(PERCENTILES)]
    assert ours_ns == [ref.get_value_at_percentile(q) for q in PERCENTILES]
    # The wire encoding comes from the library and decodes to the same histogram.
    assert HdrHistogram.decode(hist.encode()).equals(ref)


def test_bucket_edges_respect_the_stated_resolution() -> None:
    for lowest_s, highest_s, digits in CONFIGS:
        hist = LatencyHistogram(lowest_s, highest_s, digits)
        buckets = hist.to_frame(nonzero_only=False)
        lower, upper = buckets["lower_s"].to_numpy(), buckets["upper_s"].to_numpy()
        width = upper - lower
        assert hist.relative_error == 10.0**-digits
        assert np.all(lower[1:] == upper[:-1])  # contiguous, ascending
        assert upper[-1] >= highest_s
        bound = np.maximum(hist.relative_error * lower, hist.unit_s)
        assert np.all(width <= bound * (1 + 1e-12))  # 1e-12: ns -> s division rounding only


# -- merging and exact moments -------------------------------------------------------------------------
def test_merge_equals_histogram_of_concatenated_data() -> None:
    a, b = lognormal_latencies(1, 40_000), lognormal_latencies(2, 60_000) * 3.0
    merged = LatencyHistogram().add(in_batches(LatencyHistogram(), b))
    merged += in_batches(LatencyHistogram(), a)
    whole = in_batches(LatencyHistogram(), np.concatenate([a, b]))

    assert np.array_equal(counts_of(merged.hdr), counts_of(whole.hdr))
    assert merged.count == whole.count == a.size + b.size
    assert merged.min == whole.min and merged.max == whole.max
    # Sums accumulated in a different order: float64 rounding only, bounded by n * 2**-53 relative.
    assert merged.mean == pytest.approx(whole.mean, rel=whole.count * 2.0**-53, abs=0)
    assert list(merged.percentiles(PERCENTILES)) == list(whole.percentiles(PERCENTILES))


def test_merge_rejects_a_different_configuration() -> None:
    with pytest.raises(ValueError, match="different"):
        LatencyHistogram(digits=3).add(LatencyHistogram(digits=2))


def test_mean_min_max_are_exact_not_bucketed() -> None:
    x = lognormal_latencies(7)
    hist = in_batches(LatencyHistogram(digits=2), x)
    exact_mean = math.fsum(x.tolist()) / x.size
    # Float64 summation of n positive terms: relative error <= n * 2**-53. Bucket midpoints at 2 digits
    # would be off by ~1e-3, far outside this.
    assert hist.mean == pytest.approx(exact_mean, rel=x.size * 2.0**-53, abs=0)
    assert hist.min == x.min() and hist.max == x.max()
    assert hist.total_s == pytest.approx(math.fsum(x.tolist()), rel=x.size * 2.0**-53, abs=0)


def test_empty_histogram_statistics_are_nan() -> None:
    hist = LatencyHistogram()
    assert hist.count == 0
    assert math.isnan(hist.mean) and math.isnan(hist.min) and math.isnan(hist.max)
    assert math.isnan(hist.percentile(50)) and math.isnan(hist.share_under(1e-3))
    assert hist.to_frame().height == 0


# -- resolution bounds -----------------------------------------------------------------------------------
def test_share_under_is_within_the_stated_resolution() -> None:
    x = np.sort(lognormal_latencies(11))
    hist = in_batches(LatencyHistogram(), x)
    ts = np.concatenate([np.geomspace(2e-5, 0.2, 97), np.random.default_rng(5).uniform(1e-4, 5e-3, 50)])
    for t in ts:
        below_t = np.searchsorted(x, t, side="left")  # samples < t
        below_t_minus = np.searchsorted(x, t - hist.resolution_s(t), side="left")
        counted = round(hist.share_under(float(t)) * x.size)
        assert below_t_minus <= counted <= below_t, t
    # At a bucket edge the share is exact.
    edges = hist.to_frame()["upper_s"].to_numpy()
    for t in edges[:: max(1, edges.size // 40)]:
        assert round(hist.share_under(float(t)) * x.size) == np.searchsorted(x, t, side="left")


def test_percentile_is_within_the_stated_resolution_of_the_sample_quantile() -> None:
    x = np.sort(lognormal_latencies(12))
    hist = in_batches(LatencyHistogram(digits=2), x)
    for q in [1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99]:
        rank = max(int(q * x.size / 100 + 0.5), 1)  # HdrHistogram's target count
        exact = x[rank - 1]
        assert abs(hist.percentile(q) - exact) < hist.resolution_s(exact), q


# -- bad input, exchange ---------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [[-1e-6], [float("nan")], [3601.0], [float("inf")]])
def test_record_many_rejects_out_of_range_latencies(bad: list[float]) -> None:
    hist = LatencyHistogram(highest_s=3600.0)
    with pytest.raises(ValueError, match="latency must be in"):
        hist.record_many(np.array([1e-3, *bad]))
    assert hist.count == 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"digits": 0}, "digits"), ({"digits": 6}, "digits"), ({"lowest_s": 0.0}, "lowest_s"),
     ({"highest_s": 1e-9}, "highest_s"), ({"highest_s": 1e8}, "highest_s")],
)  # fmt: skip
def test_histogram_configuration_is_validated(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        LatencyHistogram(**kwargs)


def test_percentile_outside_0_100_is_rejected() -> None:
    hist = LatencyHistogram()
    hist.record_many([1e-3])
    with pytest.raises(ValueError, match=r"0\.\.100"):
        hist.percentile(101.0)


def test_pickle_keeps_buckets_and_exact_moments() -> None:
    x = lognormal_latencies(3, 5000)
    hist = in_batches(LatencyHistogram(1e-6, 100.0, 2), x)
    back = pickle.loads(pickle.dumps(hist))
    assert np.array_equal(counts_of(back.hdr), counts_of(hist.hdr))
    assert (back.mean, back.min, back.max, back.count) == (hist.mean, hist.min, hist.max, hist.count)
    assert back.config == hist.config
    back.record_many([1e-3])  # the restored histogram is live
    assert back.count == hist.count + 1


def test_from_encoded_gives_bucket_resolution_moments() -> None:
    x = lognormal_latencies(4, 5000)
    hist = in_batches(LatencyHistogram(), x)
    back = LatencyHistogram.from_encoded(hist.encode())
    assert np.array_equal(counts_of(back.hdr), counts_of(hist.hdr))
    # Each sample is replaced by its bucket midpoint: error < half a bucket, < relative_error / 2.
    assert back.mean == pytest.approx(hist.mean, rel=hist.relative_error / 2)
    assert back.min <= hist.min < back.min + hist.resolution_s(hist.min)
    assert back.max - hist.resolution_s(hist.max) < hist.max <= back.max


# -- recorder --------------------------------------------------------------------------------------------
def synthetic_trace(seed: int, n: int = 30_000, duration_s: float = 10.0):
    """(class, latency s, completion s, size B) arrays of a made-up run, in completion order."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, duration_s, n))
    cls = rng.choice(np.array(["read", "write"]), n, p=[0.7, 0.3])
    lat = rng.lognormal(math.log(5e-4), 1.0, n)
    size = rng.choice(np.array([4096, 8192, 65536]), n)
    return cls, lat, t, size


def fill(rec: LatencyRecorder, trace) -> LatencyRecorder:
    for c, lat, t, s in zip(*(a.tolist() for a in trace), strict=True):
        rec.record(c, lat, t, s)
    return rec


def test_warmup_and_window_end_exclude_samples() -> None:
    trace = synthetic_trace(21)
    cls, lat, t, size = trace
    rec = fill(LatencyRecorder(warmup_s=2.0, end_s=8.0, batch=1000), trace)
    summary = rec.summary()
    for name in ("read", "write"):
        keep = (cls == name) & (t >= 2.0) & (t < 8.0)
        expected = LatencyHistogram()
        expected.record_many(lat[keep])
        got = rec.histogram(name)
        assert got.count == keep.sum()
        assert np.array_equal(counts_of(got.hdr), counts_of(expected.hdr))
        assert got.max == lat[keep].max()
        row = summary.filter(pl.col("class") == name).row(0, named=True)
        assert row["count"] == keep.sum()
        assert row["iops"] == pytest.approx(keep.sum() / 6.0, rel=1e-12)
        assert row["mb_per_s"] == pytest.approx(size[keep].sum() / 1e6 / 6.0, rel=1e-12)
        assert row["p99_ms"] == pytest.approx(got.percentile(99.0) * 1e3, rel=1e-15)
        assert row["mean_ms"] == pytest.approx(lat[keep].mean() * 1e3, rel=keep.sum() * 2.0**-53)


def test_batch_size_does_not_change_results() -> None:
    trace = synthetic_trace(22, n=5000)
    small = fill(LatencyRecorder(warmup_s=1.0, batch=7), trace).summary(until_s=10.0)
    large = fill(LatencyRecorder(warmup_s=1.0, batch=100_000), trace).summary(until_s=10.0)
    assert small.drop("mean_ms").equals(large.drop("mean_ms"))
    assert np.allclose(small["mean_ms"], large["mean_ms"], rtol=5000 * 2.0**-53, atol=0)


def test_rates_integrate_to_the_count_and_bytes() -> None:
    trace = synthetic_trace(23)
    rec = fill(LatencyRecorder(warmup_s=1.5, rate_resolution_s=0.01), trace)
    summary = rec.summary(until_s=10.0)
    for bin_s in (0.01, 0.25, 1.0, 3.0):  # 3.0 leaves a partial last bin (8.5 s window)
        rates = rec.rates(bin_s, until_s=10.0)
        assert rates.filter(pl.col("class") == "read")["duration_s"].sum() == pytest.approx(8.5, rel=1e-12)
        for row in summary.iter_rows(named=True):
            r = rates.filter(pl.col("class") == row["class"])
            assert r["ios"].sum() == row["count"]
            assert (r["iops"] * r["duration_s"]).sum() == pytest.approx(row["count"], rel=1e-12)
            assert (r["mb_per_s"] * r["duration_s"]).sum() == pytest.approx(row["mb_per_s"] * 8.5, rel=1e-12)
            weighted = (r["mean_ms"].fill_null(0.0) * r["ios"]).sum() / r["ios"].sum()
            assert weighted == pytest.approx(row["mean_ms"], rel=1e-9)  # bin means weight back to the mean
    coarse = rec.rates(0.5, until_s=10.0).filter(pl.col("class") == "read")["ios"].to_numpy()
    fine = rec.rates(0.01, until_s=10.0).filter(pl.col("class") == "read")["ios"].to_numpy()
    assert np.array_equal(coarse, fine.reshape(-1, 50).sum(axis=1))


def test_rates_on_a_hand_made_trace() -> None:
    rec = LatencyRecorder(warmup_s=1.0, rate_resolution_s=0.5)
    for t, lat in zip(
        (0.2, 1.1, 1.2, 1.7, 2.6, 3.0), (9, 1, 2, 6, 4, 8), strict=True
    ):  # 0.2: warm-up; 3.0: the end
        rec.record("a", lat * 1e-3, t, 1_000_000)
    rec.record("b", 5e-3, 1.3, 512)
    rates = rec.rates(1.0, until_s=3.0)
    assert rates.filter(pl.col("class") == "a")["mean_ms"].to_list() == pytest.approx([3.0, 6.0])
    assert rates.filter(pl.col("class") == "b")["mean_ms"].to_list() == [5.0, None]  # no IO: no mean
    rates = rates.filter(pl.col("class") == "a")
    assert rates["start_s"].to_list() == [1.0, 2.0]
    assert rates["ios"].to_list() == [3, 2]
    assert rates["iops"].to_list() == [3.0, 2.0]
    assert rates["mb_per_s"].to_list() == [3.0, 2.0]
    assert rec.summary(until_s=3.0).filter(pl.col("class") == "a")["iops"].to_list() == [2.5]


def test_window_end_defaults_and_validation() -> None:
    rec = LatencyRecorder(warmup_s=1.0)
    rec.record("a", 1e-3, 4.0, 512)
    assert rec.window_end() == 4.0  # latest counted completion
    assert rec.window_end(until_s=5.0) == 5.0
    with pytest.raises(ValueError, match="until_s"):
        rec.summary(until_s=3.0)
    with pytest.raises(ValueError, match="bin_s"):
        rec.rates(0.015)
    with pytest.raises(ValueError, match="end_s"):
        LatencyRecorder(warmup_s=2.0, end_s=1.0)


def test_a_bad_latency_is_reported_with_its_class() -> None:
    rec = LatencyRecorder()
    rec.record("slow", -1.0, 1.0, 512)
    with pytest.raises(ValueError, match="'slow'"):
        rec.flush()


def test_service_level_curve_frame() -> None:
    trace = synthetic_trace(24)
    rec = fill(LatencyRecorder(warmup_s=1.0), trace)
    curve = rec.service_level_curve()
    assert curve.schema == pl.Schema(
        {"class": pl.String, "threshold_ms": pl.Float64, "share_under": pl.Float64}
    )
    assert curve.height == 2 * len(DEFAULT_THRESHOLDS_MS)
    for name in ("read", "write"):
        c = curve.filter(pl.col("class") == name)
        assert c["threshold_ms"].to_list() == list(DEFAULT_THRESHOLDS_MS)
        assert np.all(np.diff(c["share_under"].to_numpy()) >= 0)
        hist = rec.histogram(name)
        assert c["share_under"].to_list() == [hist.share_under(t / 1e3) for t in DEFAULT_THRESHOLDS_MS]
    custom = rec.service_level_curve([10.0, 1.0, 1.0])
    assert custom["threshold_ms"].to_list() == [1.0, 10.0, 1.0, 10.0]


def test_default_thresholds_cover_the_log_grid_and_sla_points() -> None:
    t = np.array(DEFAULT_THRESHOLDS_MS)
    assert t[0] == 0.05 and t[-1] == 1000.0
    assert {1.0, 2.0, 5.0, 10.0, 30.0} <= set(DEFAULT_THRESHOLDS_MS)
    ratios = t[1:] / t[:-1]
    assert ratios.max() <= 1.3  # 10 points per decade: ratio ~1.26 (R10 rounding allows up to 1.28)


def test_service_level_curve_interpolates_in_log_time() -> None:
    curve = ServiceLevelCurve((1e-3, 1e-2, 1e-1), (0.2, 0.6, 1.0), count=10, cls="x")
    assert curve.at(1e-2) == 0.6
    assert curve.at(10**-1.5) == pytest.approx(0.8, rel=1e-12)  # halfway in log between 1e-2 and 1e-1
    assert curve.at(2e-3) == pytest.approx(0.2 + 0.4 * math.log(2) / math.log(10), rel=1e-12)
    with pytest.raises(ValueError, match="within"):
        curve.at(2e-1)
    with pytest.raises(ValueError, match="non-decreasing"):
        ServiceLevelCurve((1e-3, 1e-2), (0.5, 0.4), count=10)
    assert curve.to_frame()["threshold_ms"].to_list() == pytest.approx([1.0, 10.0, 100.0], rel=1e-15)


# -- frame schemas ---------------------------------------------------------------------------------------
def test_frame_schemas() -> None:
    rec = fill(LatencyRecorder(warmup_s=0.5), synthetic_trace(25, n=2000))
    assert rec.summary(until_s=10.0).schema == pl.Schema(
        {"class": pl.String, "count": pl.Int64, "mean_ms": pl.Float64, "p50_ms": pl.Float64,
         "p90_ms": pl.Float64, "p99_ms": pl.Float64, "p999_ms": pl.Float64, "max_ms": pl.Float64,
         "iops": pl.Float64, "mb_per_s": pl.Float64}
    )  # fmt: skip
    assert rec.rates(1.0, until_s=10.0).schema == pl.Schema(
        {"class": pl.String, "start_s": pl.Float64, "duration_s": pl.Float64, "ios": pl.Int64,
         "iops": pl.Float64, "mb_per_s": pl.Float64, "mean_ms": pl.Float64}
    )  # fmt: skip
    assert rec.histogram("read").to_frame().schema == pl.Schema(
        {"lower_s": pl.Float64, "upper_s": pl.Float64, "count": pl.Int64}
    )
    empty = LatencyRecorder(warmup_s=5.0)
    empty.record("late", 1e-3, 1.0, 512)  # completes during warm-up: class seen, nothing counted
    row = empty.summary(until_s=6.0).row(0, named=True)
    assert row["count"] == 0 and row["p99_ms"] is None and row["iops"] == 0.0
