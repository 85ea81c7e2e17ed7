"""Device service-time models: seek-curve fit, HDD timing and head state, SSD/NVMe datasheet
reproduction, DRAM, parameter provenance and argument validation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from storagelab.devices import (
    DATASHEET_BLOCK,
    DRAM,
    HDD,
    SSD,
    NVMe,
    SeekCurve,
    SeekSpec,
    preset,
    preset_names,
)
from storagelab.provenance import ORIGINS, Param
from storagelab.published import datasets

HDD_PRESETS = ("15K FC/SAS", "10K SAS", "7.2K NL-SAS")

#: Published random-IOPS classes of a single drive at queue depth 1 (the per-spindle planning figures
#: vendors and sizing guides quote for 15K, 10K and 7.2K rpm drives).
IOPS_CLASS = {"15K FC/SAS": (170, 200), "10K SAS": (130, 150), "7.2K NL-SAS": (75, 100)}


def _brute_force_seek(curve: SeekCurve) -> tuple[float, float]:
    """(manual-style weighted average, mean between independent uniform cylinders), by summing the
    curve over every distance with numpy, independently of the model's prefix-sum arithmetic."""
    c = curve.cylinders
    d = np.arange(1, c, dtype=np.float64)
    t = np.where(d < curve.boundary, curve.a + curve.b * np.sqrt(d), curve.c + curve.e * d)
    w = c - d
    weighted = float((w * t).sum() / w.sum())
    random_pair = float((2 * w / c**2 * t).sum())  # P(d) = 2 (C - d) / C^2, t(0) = 0
    return weighted, random_pair


# -- Param ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"origin": "guess"}, "origin"),
        ({"unit": "furlongs"}, "unit"),
        ({"source": "  "}, "source"),
        ({"value": math.nan}, "finite"),
    ],
)
def test_param_rejects_bad_fields(kwargs, message):
    fields = {"value": 1.0, "unit": "ms", "origin": "datasheet", "source": "a manual"} | kwargs
    with pytest.raises(ValueError, match=message):
        Param(**fields)


def test_param_si_conversion():
    assert Param(3.4, "ms", "datasheet", "x").si == pytest.approx(3.4e-3)
    assert Param(15000, "rpm", "document", "x").si == pytest.approx(250.0)
    assert Param(1.2, "TB", "document", "x").si == pytest.approx(1.2e12)


# -- seek curve ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("t1", "avg", "tf", "c"), [(0.2e-3, 3.4e-3, 6.6e-3, 107500), (1e-3, 8e-3, 20e-3, 5000)]
)
def test_seek_curve_fit_hits_the_three_datasheet_times(t1, avg, tf, c):
    curve = SeekCurve.fit(t1, avg, tf, c)
    assert curve(0) == 0.0
    assert curve(1) == pytest.approx(t1, rel=1e-9)
    assert curve(c - 1) == pytest.approx(tf, rel=1e-9)
    weighted, _ = _brute_force_seek(curve)
    assert weighted == pytest.approx(avg, rel=1e-9)
    assert curve.weighted_average() == pytest.approx(weighted, rel=1e-9)
    # continuous, with a continuous slope, at the boundary (Ruemmler & Wilkes form, C1 hand-over)
    r = math.sqrt(curve.boundary)
    assert curve.a + curve.b * r == pytest.approx(curve.c + curve.e * curve.boundary, rel=1e-12)
    assert curve.b / (2 * r) == pytest.approx(curve.e, rel=1e-12)
    # monotone in distance, symmetric in direction
    d = np.unique(np.geomspace(1, c - 1, 200).astype(int))
    times = [curve(int(x)) for x in d]
    assert all(b >= a for a, b in itertools.pairwise(times))
    assert curve(-1234) == curve(1234)


def test_seek_curve_mean_between_random_cylinders_matches_brute_force():
    curve = HDD.preset("15K FC/SAS").read_curve
    _, random_pair = _brute_force_seek(curve)
    assert curve.mean_random() == pytest.approx(random_pair, rel=1e-9)


def test_seek_curve_infeasible_average_is_an_error_with_the_allowed_range():
    # a linear curve from 1 to 10 ms averages ~4 ms; a pure sqrt one ~5.8 ms: 9 ms is out of reach
    with pytest.raises(ValueError, match="allowed range"):
        SeekCurve.fit(1e-3, 9e-3, 10e-3, 10000)
    with pytest.raises(ValueError, match="single_track < average < full_stroke"):
        SeekCurve.fit(1e-3, 12e-3, 10e-3, 10000)


def test_seek_curve_must_be_continuous():
    with pytest.raises(ValueError, match="continuous"):
        SeekCurve(a=1e-3, b=1e-5, c=5e-3, e=1e-8, boundary=1000.0, cylinders=10000)


# -- HDD -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", HDD_PRESETS)
def test_hdd_analytic_mean_is_seek_plus_half_rotation_plus_transfer_plus_overhead(name):
    disk = HDD.preset(name)
    p = disk.params
    rev = 60.0 / p["rpm"].value
    _, seek = _brute_force_seek(disk.read_curve)
    outer, inner = p["media_rate"].si, p.get("media_rate_inner", p["media_rate"]).si
    mean_inverse_rate = math.log(outer / inner) / (outer - inner) if inner < outer else 1 / outer
    expected = seek + rev / 2 + DATASHEET_BLOCK * mean_inverse_rate + p["overhead"].si
    assert disk.mean_service_time(True, DATASHEET_BLOCK) == pytest.approx(expected, rel=1e-9)
    # the fitted mean random seek is the datasheet average up to the (C-1)/C share of zero-length seeks
    c = disk.cylinders
    assert seek == pytest.approx(p["read_seek.average"].si * (c - 1) / c, rel=1e-9)


@pytest.mark.parametrize("name", HDD_PRESETS)
def test_hdd_presets_land_in_their_published_iops_class(name):
    low, high = IOPS_CLASS[name]
    iops = 1.0 / HDD.preset(name).mean_service_time(True, DATASHEET_BLOCK)
    assert low <= iops <= high


def test_15k_random_4k_read_is_5_5_to_6_ms():
    mean = HDD.preset("15K FC/SAS").mean_service_time(True, DATASHEET_BLOCK)
    assert 5.5e-3 <= mean <= 6.0e-3


@pytest.mark.parametrize("name", HDD_PRESETS)
def test_hdd_simulated_random_reads_match_the_analytic_mean(name):
    """Mean of simulated 4 KiB random reads vs the model's analytic mean.

    Successive seek distances share an endpoint (the head), so single draws are correlated; the
    tolerance therefore comes from R independent replications (fresh drive, head on a random cylinder,
    own generator): a two-sided 99.9% Student-t interval on the mean of the replication means.
    """
    reps, n = 30, 2000
    means = []
    for r in range(reps):
        rng = np.random.default_rng([20240601, r])
        disk = HDD.preset(name)
        disk.reset(int(rng.integers(disk.cylinders)))
        blocks = disk.capacity // DATASHEET_BLOCK
        addresses = (rng.integers(0, blocks, n) * DATASHEET_BLOCK).tolist()
        means.append(np.mean([disk.service_time(True, DATASHEET_BLOCK, a, rng) for a in addresses]))
    means = np.asarray(means)
    half_width = stats.t.ppf(0.9995, reps - 1) * means.std(ddof=1) / math.sqrt(reps)
    analytic = HDD.preset(name).mean_service_time(True, DATASHEET_BLOCK)
    assert abs(means.mean() - analytic) <= half_width
    # the interval is informative: narrower than the rotational part of the mean
    assert half_width < 0.05 * analytic


def test_hdd_writes_seek_longer_than_reads():
    disk = HDD.preset("15K FC/SAS")
    assert disk.mean_service_time(False, DATASHEET_BLOCK) > disk.mean_service_time(True, DATASHEET_BLOCK)
    for d in (1, 100, 10_000, disk.cylinders - 1):
        assert disk.seek_time(d, is_read=False) > disk.seek_time(d, is_read=True)


def test_hdd_address_to_cylinder_and_head_movement():
    disk = HDD.preset("15K FC/SAS")
    cap, cyl = disk.capacity, disk.cylinders
    assert disk.cylinder(0) == 0
    assert disk.cylinder(cap - 1) == cyl - 1
    assert disk.cylinder(cap // 2) == cyl // 2
    assert disk.head == 0
    target = 3 * cap // 4
    assert disk.seek_distance(target) == disk.cylinder(target) > 0
    disk.service_time(True, 8192, target, np.random.default_rng(1))
    assert disk.head == disk.cylinder(target + 8192 - 1)
    assert disk.seek_distance(target) == 0
    assert disk.seek_distance(0) == -disk.head  # signed: negative means inward (towards cylinder 0)


def test_hdd_seek_component_follows_the_curve():
    """With rotation removed (subtract the draw the drive made), the time is overhead + seek + transfer."""
    disk = HDD.preset("10K SAS")
    rng_model = np.random.default_rng(7)
    rng_copy = np.random.default_rng(7)
    uniforms = rng_copy.random(4096)  # the drive draws its uniforms in blocks of 4096 from the generator
    p = disk.params
    address = disk.capacity // 3
    t = disk.service_time(True, 65536, address, rng_model)
    rotation = uniforms[0] * 60.0 / p["rpm"].value
    expected = (
        p["overhead"].si
        + disk.read_curve(disk.cylinder(address))
        + rotation
        + 65536 / disk.media_rate_at(address)
    )
    assert t == pytest.approx(expected, rel=1e-12)


def test_hdd_sequential_continuation_pays_no_seek_and_no_rotation():
    disk = HDD.preset("7.2K NL-SAS")
    rng = np.random.default_rng(3)
    size = 256 * 1024
    disk.service_time(True, size, 10 * size, rng)
    t = disk.service_time(True, size, 11 * size, rng)
    assert t == pytest.approx(disk.params["overhead"].si + size / disk.media_rate_at(11 * size), rel=1e-12)


@pytest.mark.parametrize("name", HDD_PRESETS)
def test_hdd_zoned_transfer_rate_falls_from_outer_to_inner_zone(name):
    """Zoned recording: a sequential read at the start of the disk (outer zone) transfers at the
    datasheet's highest rate, at the end (inner zone) at its lowest (the old model used one rate)."""
    disk = HDD.preset(name)
    p = disk.params
    size = 1 << 20
    rng = np.random.default_rng(0)

    def streaming(address: int) -> float:
        disk.service_time(True, size, address, rng)
        return size / (disk.service_time(True, size, address + size, rng) - p["overhead"].si)

    assert streaming(0) == pytest.approx(p["media_rate"].si, rel=1e-3)
    assert streaming(disk.capacity - 2 * size) == pytest.approx(p["media_rate_inner"].si, rel=1e-3)
    assert p["media_rate_inner"].si < 0.7 * p["media_rate"].si


def test_hdd_rotational_latency_is_uniform_over_one_revolution():
    """Same-cylinder, non-sequential IOs: time - overhead - transfer is the rotational latency alone."""
    disk = HDD.preset("15K FC/SAS")
    rng = np.random.default_rng(11)
    rev = 60.0 / 15000
    fixed = disk.params["overhead"].si + 512 / disk.media_rate_at(4096)
    lat = []
    for _ in range(20000):
        disk.reset(0)  # head on cylinder 0 and no pending sequential stream
        lat.append(disk.service_time(True, 512, 4096, rng) - fixed)
    lat = np.asarray(lat)
    assert lat.min() >= -1e-15
    assert lat.max() < rev
    # Kolmogorov-Smirnov against U[0, rev); p > 0.001 (the seed is fixed, so this is deterministic)
    assert stats.kstest(lat / rev, "uniform").pvalue > 1e-3


def test_hdd_is_deterministic_for_a_given_generator_seed():
    def run(seed):
        disk = HDD.preset("10K SAS")
        rng = np.random.default_rng(seed)
        addrs = (rng.integers(0, disk.capacity // 4096, 500) * 4096).tolist()
        return [disk.service_time(i % 3 != 0, 4096, a, rng) for i, a in enumerate(addrs)]

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_hdd_station_attributes():
    disk = HDD.preset("15K FC/SAS")
    assert disk.parallelism == 1
    assert disk.state_dependent is True
    assert disk.name == "15K FC/SAS"
    assert HDD.preset("15K FC/SAS") is not disk  # presets are fresh instances (each has its own head)


@pytest.mark.parametrize(
    ("size", "address", "message"),
    [(0, 0, "size"), (4096, -1, "address"), (4096, None, "capacity")],
)
def test_hdd_rejects_bad_io(size, address, message):
    disk = HDD.preset("15K FC/SAS")
    if address is None:
        address = disk.capacity - 2048
    with pytest.raises(ValueError, match=message):
        disk.service_time(True, size, address, np.random.default_rng(0))


def _hdd_kwargs(**changes):
    ms = lambda v: Param(v, "ms", "datasheet", "test")  # noqa: E731
    kwargs = {
        "rpm": Param(15000, "rpm", "datasheet", "test"),
        "capacity": Param(300, "GB", "datasheet", "test"),
        "cylinders": Param(100000, "count", "datasheet", "test"),
        "read_seek": SeekSpec(ms(0.2), ms(3.4), ms(6.6)),
        "write_seek": SeekSpec(ms(0.4), ms(3.9), ms(7.4)),
        "media_rate": Param(150, "MB/s", "datasheet", "test"),
        "overhead": ms(0.1),
    }
    return kwargs | changes


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rpm": Param(15000, "ms", "datasheet", "t")}, "rpm must be a rotation_rate"),
        ({"rpm": Param(0, "rpm", "datasheet", "t")}, "rpm must be >= 1"),
        ({"cylinders": Param(1000.5, "count", "datasheet", "t")}, "cylinders must be a whole number"),
        ({"media_rate": Param(-5, "MB/s", "datasheet", "t")}, "media_rate must be >= 1"),
        ({"overhead": 0.1}, "overhead must be a Param"),
        ({"read_seek": (0.2, 3.4, 6.6)}, "read_seek must be a SeekSpec"),
    ],
)
def test_hdd_constructor_validation_names_the_parameter(changes, message):
    with pytest.raises(ValueError, match=message):
        HDD("test", **_hdd_kwargs(**changes))


def test_hdd_reset_validates_the_cylinder():
    disk = HDD("test", **_hdd_kwargs())
    with pytest.raises(ValueError, match="cylinder must be in"):
        disk.reset(100000)


# -- SSD / NVMe ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("family", "name"), [(SSD, "SATA SSD"), (NVMe, "NVMe SSD")])
def test_ssd_presets_reproduce_datasheet_iops(family, name):
    """parallelism / mean 4 KiB service time = datasheet IOPS. The base latencies are fitted for this,
    so the only error is floating-point: checked to 1e-9 relative (far inside 'a few percent')."""
    dev = family.preset(name)
    assert isinstance(dev, family)
    for is_read, key in ((True, "read_iops"), (False, "write_iops")):
        iops = dev.parallelism / dev.mean_service_time(is_read, DATASHEET_BLOCK)
        assert iops == pytest.approx(dev.params[key].si, rel=1e-9)
        assert dev.max_iops(is_read) == pytest.approx(iops, rel=1e-12)


@pytest.mark.parametrize(("family", "name"), [(SSD, "SATA SSD"), (NVMe, "NVMe SSD")])
def test_ssd_preset_read_latency_is_the_datasheet_latency_up_to_parallelism_rounding(family, name):
    """parallelism = round(IOPS x latency) = round(x), so the modelled QD1 latency P / IOPS differs from
    the datasheet latency x / IOPS by |P - x| / x <= 0.5 / x (relative)."""
    dev = family.preset(name)
    x = dev.params["read_iops"].si * dev.params["datasheet_read_latency"].si
    modelled = dev.mean_service_time(True, DATASHEET_BLOCK)
    assert modelled == pytest.approx(dev.params["datasheet_read_latency"].si, rel=0.5 / x)


def test_ssd_service_time_is_base_plus_size_over_the_units_share_of_bandwidth_without_jitter():
    dev = SSD.preset("SATA SSD")
    rng = np.random.default_rng(0)
    for is_read, bw in ((True, 500e6), (False, 460e6)):
        t4 = dev.service_time(is_read, 4096, 0, rng)
        t64 = dev.service_time(is_read, 65536, 123 * 4096, rng)
        assert t4 == dev.mean_service_time(is_read, 4096)
        assert t64 - t4 == pytest.approx((65536 - 4096) * dev.parallelism / bw, rel=1e-9)


@pytest.mark.parametrize("name", ["SATA SSD", "NVMe SSD"])
def test_ssd_large_ios_in_flight_reach_the_datasheet_bandwidth_not_a_multiple(name):
    """1 MiB IOs on every unit at once: the device delivers about its datasheet sequential bandwidth
    (the units share it). The old model gave each unit the whole bandwidth: parallelism times too much."""
    dev = SSD.preset(name) if name == "SATA SSD" else NVMe.preset(name)
    size = 1 << 20
    for is_read, key in ((True, "read_bandwidth"), (False, "write_bandwidth")):
        rate = dev.parallelism * size / dev.mean_service_time(is_read, size)
        assert dev.params[key].si * 0.9 < rate <= dev.params[key].si
    assert dev.mean_service_time(False, 4096) > dev.mean_service_time(True, 4096)
    assert dev.state_dependent is False


def test_ssd_jitter_keeps_the_mean_and_has_the_requested_scv():
    """Lognormal factor with mean 1, scv 0.25. Tolerances: the sample mean within a 99.9% normal CI
    (sd = sqrt(scv)/sqrt(n) relative); the sample scv within 5%: the relative sampling sd of a variance
    is sqrt((kurtosis - 1) / n), about 0.6% here (lognormal, sigma^2 = ln 1.25, kurtosis 8.0)."""
    base = SSD.preset("SATA SSD")
    dev = SSD(
        "jittery",
        read_latency=base.params["read_latency"],
        write_latency=base.params["write_latency"],
        read_bandwidth=base.params["read_bandwidth"],
        write_bandwidth=base.params["write_bandwidth"],
        parallelism=base.params["parallelism"],
        jitter_scv=0.25,
    )
    rng = np.random.default_rng(42)
    n = 200_000
    x = np.array([dev.service_time(True, 4096, 0, rng) for _ in range(n)])
    mean = dev.mean_service_time(True, 4096)
    assert abs(x.mean() - mean) <= stats.norm.ppf(0.9995) * math.sqrt(0.25) * mean / math.sqrt(n)
    assert x.var() / x.mean() ** 2 == pytest.approx(0.25, rel=0.05)
    assert x.min() > 0


def test_ssd_from_datasheet_rejects_impossible_numbers():
    with pytest.raises(ValueError, match="leaves no time"):
        SSD.from_datasheet(
            "impossible",
            read_iops=Param(1e6, "IOPS", "datasheet", "t"),
            write_iops=Param(1e6, "IOPS", "datasheet", "t"),
            read_latency=Param(1, "us", "datasheet", "t"),
            read_bandwidth=Param(100, "MB/s", "datasheet", "t"),  # 4 KiB takes 41 us at 100 MB/s
            write_bandwidth=Param(100, "MB/s", "datasheet", "t"),
        )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"parallelism": Param(2.5, "count", "datasheet", "t")}, "parallelism must be a whole number"),
        ({"parallelism": Param(0, "count", "datasheet", "t")}, "parallelism must be >= 1"),
        ({"read_latency": Param(50, "MB/s", "datasheet", "t")}, "read_latency must be a time"),
        ({"jitter_scv": -0.1}, "jitter_scv"),
    ],
)
def test_ssd_constructor_validation_names_the_parameter(changes, message):
    kwargs = {
        "read_latency": Param(50, "us", "datasheet", "t"),
        "write_latency": Param(65, "us", "datasheet", "t"),
        "read_bandwidth": Param(500, "MB/s", "datasheet", "t"),
        "write_bandwidth": Param(460, "MB/s", "datasheet", "t"),
        "parallelism": Param(4, "count", "datasheet", "t"),
    } | changes
    with pytest.raises(ValueError, match=message):
        SSD("test", **kwargs)


def test_ssd_rejects_io_past_capacity():
    dev = SSD.preset("SATA SSD")
    with pytest.raises(ValueError, match="capacity"):
        dev.service_time(True, 4096, dev.capacity - 1024, np.random.default_rng(0))


# -- DRAM ----------------------------------------------------------------------------------------


def test_dram_is_latency_plus_size_over_bandwidth():
    mem = DRAM.preset("DDR3 DRAM")
    rng = np.random.default_rng(0)
    expected = 100e-9 + 4096 / 10.664e9
    assert mem.service_time(True, 4096, 0, rng) == pytest.approx(expected, rel=1e-12)
    assert mem.service_time(False, 4096, 0, rng) == mem.service_time(True, 4096, 0, rng)
    assert mem.mean_service_time(True, 4096) == pytest.approx(expected, rel=1e-12)
    assert mem.parallelism == 4
    with pytest.raises(ValueError, match="size"):
        mem.service_time(True, 0, 0, rng)


def test_dram_validation():
    with pytest.raises(ValueError, match="bandwidth must be a throughput"):
        DRAM("m", latency=Param(1, "us", "datasheet", "t"), bandwidth=Param(1, "ms", "datasheet", "t"),
             parallelism=Param(1, "count", "datasheet", "t"))  # fmt: skip


# -- presets and provenance ----------------------------------------------------------------------


def test_every_preset_is_reachable_by_name_and_unknown_names_list_the_known_ones():
    names = preset_names()
    assert set(HDD_PRESETS) | {
        "SATA SSD",
        "Intel DC S3500",
        "NVMe SSD",
        "ioDrive2 785GB",
        "DDR3 DRAM",
    } == set(names)
    for name in names:
        assert preset(name).name == name
    with pytest.raises(ValueError, match=r"known: .*15K FC/SAS"):
        preset("15K SATA")
    with pytest.raises(ValueError, match="unknown HDD preset"):
        HDD.preset("SATA SSD")


def test_document_parameters_cite_a_source_study_file():
    """Every parameter taken from "document" names one of the project's five seed files, and the
    other origins say which manual, physics or fit they come from."""
    seed_files = set(datasets.SOURCES.values())
    for name in preset_names():
        for key, p in preset(name).params.items():
            assert p.origin in ORIGINS, (name, key)
            if p.origin == "document":
                assert any(f in p.source for f in seed_files), (name, key, p.source)


def test_the_iodrive2_reproduces_its_datasheet():
    """ioDrive2 785 GB (MLC): 141,000 read IOPS at 512 B through 10 units; a QD1 read takes the datasheet's
    68 us to within the rounding of the units."""
    dev = preset("ioDrive2 785GB")
    rng = np.random.default_rng(0)
    read_512 = np.mean([dev.service_time(True, 512, 0, rng) for _ in range(200)])
    assert dev.parallelism / read_512 == pytest.approx(141_000, rel=1e-6)
    assert read_512 == pytest.approx(68e-6, rel=0.5 / (141_000 * 68e-6))
    assert dev.capacity == 785 * 10**9


def test_hdd_mean_over_a_short_stroked_span_matches_simulated_reads():
    """4 KiB random reads confined to the first 5 % of a 10K drive (a Virtual SAN drive's share of the
    study's data): the analytic mean over that span matches simulated reads within a 99.9 % interval
    over replications, and is well under the full-surface mean (shorter seeks)."""
    reps, n, span = 20, 2000, 60 * 10**9
    means = []
    for r in range(reps):
        rng = np.random.default_rng([20251125, r])
        disk = HDD.preset("10K SAS")
        addresses = (rng.integers(0, span // DATASHEET_BLOCK, n) * DATASHEET_BLOCK).tolist()
        means.append(np.mean([disk.service_time(True, DATASHEET_BLOCK, a, rng) for a in addresses[1:]]))
    means = np.asarray(means)
    half_width = stats.t.ppf(0.9995, reps - 1) * means.std(ddof=1) / math.sqrt(reps)
    disk = HDD.preset("10K SAS")
    analytic = disk.mean_service_time(True, DATASHEET_BLOCK, span=span)
    assert abs(means.mean() - analytic) <= half_width and half_width < 0.05 * analytic
    assert analytic < 0.7 * disk.mean_service_time(True, DATASHEET_BLOCK)
    assert disk.mean_service_time(True, DATASHEET_BLOCK, span=disk.capacity) == disk.mean_service_time(
        True, DATASHEET_BLOCK
    )
    with pytest.raises(ValueError, match="span must be a whole number of bytes"):
        disk.mean_service_time(True, DATASHEET_BLOCK, span=100)


def test_jitter_is_drawn_in_blocks_from_the_callers_generator_and_a_new_generator_starts_a_fresh_block():
    """The draws behind the results: the jitter factors are the caller's generator's lognormal
    variates in order, 4096 per numpy call; a call with another generator starts a fresh block of that
    one, and coming back to the first starts a fresh block of it too (its unused values are dropped)."""
    base = SSD.preset("SATA SSD")
    keys = ("read_latency", "write_latency", "read_bandwidth", "write_bandwidth", "parallelism")
    dev = SSD("jittery", **{k: base.params[k] for k in keys}, jitter_scv=0.5)
    sigma = math.sqrt(math.log1p(0.5))

    def blocks(seed: int, n: int) -> list[float]:
        g = np.random.default_rng(seed)
        return [x for _ in range(n) for x in g.lognormal(-sigma * sigma / 2, sigma, 4096).tolist()]

    a, b = np.random.default_rng(1), np.random.default_rng(2)
    mean = dev.mean_service_time(True, 4096)
    factors = [dev.service_time(True, 4096, 0, g) / mean for g in [a] * 4100 + [b] * 2 + [a]]
    ref_a, ref_b = blocks(1, 3), blocks(2, 1)
    assert factors == pytest.approx(ref_a[:4100] + ref_b[:2] + [ref_a[2 * 4096]], rel=1e-12)
