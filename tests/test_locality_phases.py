"""Locality models (uniform, Zipf, hot spot) and phase schedules (ramp, steady, storm)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from storagelab.workloads import HotSpot, Locality, Phase, PhaseSchedule, Uniform, Zipf, ramp, steady

N = 200_000


def four_sigma(n: int, p: float) -> float:
    """4 standard deviations of a Binomial(n, p) count: a correct sampler fails one such check with
    probability 6.3e-5 (normal tail; every n*p here is >= 2,000)."""
    return 4.0 * math.sqrt(n * p * (1.0 - p))


# --- locality -----------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [Uniform(), Zipf(1.0, 10), HotSpot(0.2, 80)])
def test_models_satisfy_the_protocol_and_are_deterministic(model):
    assert isinstance(model, Locality)
    a = model.offsets(np.random.default_rng(4), 1000, 1 << 24, 4096)
    b = model.offsets(np.random.default_rng(4), 1000, 1 << 24, 4096)
    c = model.offsets(np.random.default_rng(5), 1000, 1 << 24, 4096)
    assert a.dtype == np.int64 and a.shape == (1000,)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert model.offsets(np.random.default_rng(4), 0, 1 << 24, 4096).shape == (0,)


def test_uniform_covers_the_span_evenly():
    span, align = (1 << 20) + 777, 4096  # not a multiple of align: 257 aligned offsets, the last 1 MiB
    off = Uniform().offsets(np.random.default_rng(1), N, span, align)
    assert (off % align == 0).all() and off.min() == 0 and off.max() == 256 * align
    counts = np.bincount(off // align, minlength=257)
    p = 1 / 257
    assert (np.abs(counts - N * p) <= four_sigma(N, p)).all()


@pytest.mark.parametrize("alpha", [0.8, 1.0, 1.2])
def test_zipf_rank_frequency_slope_is_minus_alpha(alpha):
    blocks, per_region, align = 1000, 64, 4096
    model = Zipf(alpha, blocks)
    off = model.offsets(np.random.default_rng(7), N, blocks * per_region * align, align)
    region = off // align // per_region  # regions are exactly per_region slots here
    count_by_rank = np.bincount(region, minlength=blocks)[model.region_of_rank()]

    # Fit log(count) = c - slope * log(rank) on the 20 hottest ranks by weighted least squares. There
    # each count is >= 1,000, so log(count) is close to normal with variance (1 - p_k) / (n p_k) (delta
    # method; its bias, about half that, is < 5e-4 and the multinomial covariances, -1/n, are two orders
    # smaller than the variances). The weights are the inverse variances, and the slope's standard error
    # follows from them; the tolerance is 4 standard errors (about 0.02 here).
    top = 20
    p = model.rank_probabilities()[:top]
    x, y = np.log(np.arange(1, top + 1)), np.log(count_by_rank[:top])
    w = N * p / (1 - p)
    xm, ym = np.average(x, weights=w), np.average(y, weights=w)
    sxx = np.sum(w * (x - xm) ** 2)
    slope = np.sum(w * (x - xm) * (y - ym)) / sxx
    assert abs(slope + alpha) <= 4 / math.sqrt(sxx)
    assert 4 / math.sqrt(sxx) < 0.03  # the check is tight enough to tell alpha from alpha +- 0.05


def test_zipf_rank_probabilities_and_scattered_placement():
    model = Zipf(1.0, 1000)
    k = np.arange(1, 1001)
    np.testing.assert_allclose(model.rank_probabilities(), k**-1.0 / np.sum(k**-1.0), rtol=1e-12)
    placement = model.region_of_rank()
    assert sorted(placement.tolist()) == list(range(1000))
    assert placement[:10].max() >= 10  # hot regions are not packed at the start of the span
    np.testing.assert_array_equal(Zipf(1.0, 1000).region_of_rank(), placement)
    assert not np.array_equal(Zipf(1.0, 1000, placement_seed=1).region_of_rank(), placement)


def test_zipf_offsets_stay_in_their_region_when_regions_are_uneven():
    span, align, blocks = 1000 * 512 + 300, 512, 7  # 1001 slots in 7 regions of 143 slots
    model = Zipf(0.5, blocks)
    off = model.offsets(np.random.default_rng(2), N, span, align)
    assert (off % align == 0).all() and off.min() >= 0 and off.max() < span
    slots = off // align
    region = np.searchsorted([(r + 1) * 1001 // blocks for r in range(blocks)], slots, side="right")
    counts = np.bincount(region, minlength=blocks)[model.region_of_rank()]
    for c, p in zip(counts, model.rank_probabilities(), strict=True):
        assert abs(c - N * p) <= four_sigma(N, p)


def test_hot_spot_share_matches_hot_access_pct():
    span, align = 1 << 30, 4096
    model = HotSpot(0.2, 80)
    hot = model.hot_slots(span, align)
    assert hot == round(0.2 * (span // align))
    off = model.offsets(np.random.default_rng(3), N, span, align)
    in_hot = off < hot * align
    assert abs(np.count_nonzero(in_hot) - 0.8 * N) <= four_sigma(N, 0.8)
    # Within each part offsets are uniform: the hot part's lower half gets half of the hot IOs.
    lower = off[in_hot] < (hot // 2) * align
    assert abs(np.count_nonzero(lower) - 0.5 * in_hot.sum()) <= four_sigma(int(in_hot.sum()), 0.5)
    assert (off % align == 0).all() and off.max() < span


def test_hot_spot_with_no_hot_access_never_hits_the_hot_region():
    off = HotSpot(0.5, 0).offsets(np.random.default_rng(0), 10_000, 1 << 20, 512)
    assert off.min() >= (1 << 19)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Zipf(0, 10), r"alpha \(Zipf exponent\) must be a finite number > 0, got 0"),
        (lambda: Zipf(-1.0, 10), r"alpha .* got -1.0"),
        (lambda: Zipf(float("nan"), 10), r"alpha .* got nan"),
        (lambda: Zipf(1.0, 0), r"blocks \(number of Zipf regions\) must be an integer >= 1, got 0"),
        (lambda: Zipf(1.0, 2.5), r"blocks .* got 2.5"),
        (lambda: HotSpot(0, 80), r"hot_fraction must be a fraction of the span in \(0, 1\), got 0"),
        (lambda: HotSpot(1.0, 80), r"hot_fraction .* got 1.0"),
        (lambda: HotSpot(0.2, 120), r"hot_access_pct must be a percentage in \[0, 100\], got 120"),
    ],
)
def test_locality_parameters_are_validated(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_locality_draw_arguments_are_validated():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"Zipf blocks=100 exceeds the 8 aligned offsets in span=32768 B"):
        Zipf(1.0, 100).offsets(rng, 10, 32768, 4096)
    with pytest.raises(ValueError, match=r"too few to split hot_fraction=0.2"):
        HotSpot(0.2, 80).offsets(rng, 10, 4096, 4096)
    with pytest.raises(ValueError, match=r"span must be an integer number of bytes > 0, got 0"):
        Uniform().offsets(rng, 10, 0, 512)
    with pytest.raises(ValueError, match=r"align must be an integer number of bytes > 0, got 0"):
        Uniform().offsets(rng, 10, 4096, 0)
    with pytest.raises(ValueError, match=r"n \(number of offsets\) must be an integer >= 0, got -1"):
        Uniform().offsets(rng, -1, 4096, 512)


# --- phases -------------------------------------------------------------------------------------


def boot_day() -> PhaseSchedule:
    return PhaseSchedule([ramp(60, 0.0, 1.0, "ramp-up"), steady(120), Phase("peak", 60, 2.0)])


def test_schedule_timeline():
    s = boot_day()
    assert s.duration == 240
    assert s.boundaries() == (0.0, 60.0, 180.0, 240.0)
    assert s.max_scale == 2.0
    expected = {0: 0.0, 15: 0.25, 30: 0.5, 59.999: 0.59999 / 0.6, 60: 1.0, 179.5: 1.0, 180: 2.0, 240: 2.0}
    for t, scale in expected.items():
        assert s.rate_scale_at(t) == pytest.approx(scale, abs=1e-12), t
    assert s.phase_at(60).name == "steady" and s.phase_at(59.9).name == "ramp-up"
    times = np.array(list(expected))
    np.testing.assert_allclose(s.rate_scale_at(times), list(expected.values()), atol=1e-12)


def test_to_frame():
    frame = boot_day().to_frame()
    assert frame.columns == ["phase", "name", "start_s", "end_s", "duration_s", "start_scale", "end_scale"]
    assert frame.schema["start_s"] == pl.Float64
    assert frame.rows() == [
        (0, "ramp-up", 0.0, 60.0, 60.0, 0.0, 1.0),
        (1, "steady", 60.0, 180.0, 120.0, 1.0, 1.0),
        (2, "peak", 180.0, 240.0, 60.0, 2.0, 2.0),
    ]


def test_storm_multiplies_the_rate_over_its_window_only():
    base = PhaseSchedule([steady(100), steady(100, 2.0, "busy")])
    stormy = base.with_storm(50, 100, 3.0, "login storm")
    assert stormy.duration == base.duration == 200
    assert stormy.boundaries() == (0.0, 50.0, 100.0, 150.0, 200.0)
    assert [p.name for p in stormy.phases] == ["steady", "steady+login storm", "busy+login storm", "busy"]
    times = np.linspace(0, 200, 2001)
    inside = (times >= 50) & (times < 150)
    np.testing.assert_allclose(
        stormy.rate_scale_at(times), base.rate_scale_at(times) * np.where(inside, 3, 1)
    )


def test_storm_over_a_ramp_keeps_the_ramp_shape():
    base = PhaseSchedule([ramp(100, 0.0, 1.0)])
    stormy = base.with_storm(25, 50, 2.0)
    times = np.linspace(0, 100, 1001)
    inside = (times >= 25) & (times < 75)
    np.testing.assert_allclose(
        stormy.rate_scale_at(times), times / 100 * np.where(inside, 2.0, 1.0), atol=1e-12
    )


@pytest.mark.parametrize("t", [0.0, 30.0, 60.0, 100.0, 239.0])
def test_after_plays_the_rest_of_the_schedule_from_zero(t):
    day = boot_day()
    rest = day.after(t)
    assert rest.duration == pytest.approx(day.duration - t)
    u = np.linspace(0, rest.duration, 4001)
    np.testing.assert_allclose(rest.rate_scale_at(u), day.rate_scale_at(t + u), atol=1e-12)
    # a phase cut inside keeps its name; phases wholly before t are gone
    assert [p.name for p in rest.phases] == [p.name for p in day.phases][len(day.phases) - len(rest.phases) :]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Phase("x", 0, 1.0), r"phase 'x': duration_s must be a finite number of seconds > 0, got 0"),
        (lambda: Phase("x", -5, 1.0), r"duration_s .* got -5"),
        (lambda: Phase("x", float("inf"), 1.0), r"duration_s .* got inf"),
        (lambda: Phase("x", 10, -0.5), r"phase 'x': rate_scale must be a finite multiplier >= 0, got -0.5"),
        (lambda: ramp(10, 1.0, -1.0), r"phase 'ramp': end_scale must be a finite multiplier >= 0, got -1.0"),
        (lambda: Phase("", 10, 1.0), r"name must be a non-empty string"),
        (lambda: PhaseSchedule([]), r"phases must hold at least one Phase"),
        (lambda: PhaseSchedule([steady(1), 3]), r"phases\[1\] must be a Phase, got 3"),
        (lambda: boot_day().rate_scale_at(-1), r"t must be a time in \[0, 240.0\] s, got -1"),
        (lambda: boot_day().rate_scale_at(240.5), r"t must be a time in \[0, 240.0\] s, got 240.5"),
        (lambda: boot_day().rate_scale_at(np.array([1.0, 300.0])), r"t must be times in \[0, 240.0\] s"),
        (lambda: boot_day().after(240.0), r"t must be a time in \[0, 240.0\) s, got 240.0"),
        (lambda: boot_day().after(-1), r"t must be a time in \[0, 240.0\) s, got -1"),
        (lambda: boot_day().with_storm(200, 60, 2.0), r"storm window \[200, 260\) s must lie within"),
        (lambda: boot_day().with_storm(0, 60, -2.0), r"multiplier must be a finite number >= 0, got -2.0"),
    ],
)
def test_phase_validation(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_silent_from_is_where_the_schedule_falls_to_zero_for_good():
    """The start of the trailing phases whose multiplier is 0 throughout; inf when the schedule ends
    busy, and a quiet phase in the middle does not count."""
    storm = PhaseSchedule([ramp(12, 0, 1), steady(100, 1), ramp(12, 1, 0), steady(50, 0), steady(1e9, 0)])
    assert storm.silent_from == 124
    assert storm.rate_scale_at(storm.silent_from) == 0
    assert storm.rate_scale_at(storm.silent_from - 1) > 0
    assert PhaseSchedule([steady(10, 0), steady(10, 1)]).silent_from == math.inf
    assert PhaseSchedule([steady(10, 1), ramp(10, 1, 0)]).silent_from == math.inf  # 0 only at its end
    assert PhaseSchedule([steady(10, 0)]).silent_from == 0


def test_an_open_source_stops_drawing_arrivals_in_the_silent_tail_with_the_same_ios():
    """A storm then a long quiet window: with the schedule's silent_from the source issues the same IOs
    at the same times (same seed), and asks the schedule nothing past the storm; without it, it keeps
    drawing candidate arrivals that thinning drops, to the end of the run."""
    from storagelab.kernel import FixedSampler, OpenSource, Station
    from storagelab.kernel.service import Exponential
    from storagelab.kernel.simulation import simulate

    storm = PhaseSchedule([ramp(2, 0, 1), steady(3, 1), ramp(2, 1, 0), steady(1e9, 0)])
    runs = {}
    for silent in (storm.silent_from, math.inf):
        asked: list[float] = []

        def scale(t: float, asked: list[float] = asked) -> float:
            asked.append(t)
            return storm.rate_scale_at(t)

        station = Station("disk", Exponential(0.002))
        src = OpenSource("io", station, FixedSampler(), rate=200.0, rate_scale=scale,
                         max_scale=storm.max_scale, silent_from=silent)  # fmt: skip
        res = simulate(station, [src], duration=20.0, seed=3, progress=False)
        runs[silent] = (src.issued_total, res.summary().rows(), max(asked))
    (n1, rows1, last1), (n2, rows2, last2) = runs[storm.silent_from], runs[math.inf]
    assert n1 == n2 > 500 and rows1 == rows2
    assert last1 < storm.silent_from < 19 < last2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"silent_from": -1.0}, "silent_from must be a time >= 0 s"),
     ({"silent_from": 5.0, "rate_scale": None}, "give it with a rate_scale")],
)  # fmt: skip
def test_open_source_silent_from_is_validated(kwargs, message):
    from storagelab.kernel import FixedSampler, OpenSource, Station
    from storagelab.kernel.service import Exponential

    args = {"rate": 10.0, "rate_scale": lambda t: 1.0, "max_scale": 1.0} | kwargs
    with pytest.raises(ValueError, match=message):
        OpenSource("io", Station("disk", Exponential(0.002)), FixedSampler(), **args)
