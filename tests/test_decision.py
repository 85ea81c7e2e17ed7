"""The decision under uncertainty (issue 69): probabilities as exact sums, censoring at the cap, the mix's
size ranges, and the draws shared by every candidate."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from storagelab.analysis.decision import (
    CandidateSample,
    candidate_sample,
    mix_at,
    p_greater,
    size_key,
    stratified_rows,
    with_resolution,
)
from storagelab.analysis.workload_mix import WorkloadMix, WorkloadMixError
from storagelab.calibration.discrepancy import Band


def _sample(
    label: str, logs: list[list[float]], band: Band | None = None, cap: float = 64.0
) -> CandidateSample:
    deltas, weights = (np.zeros(1), np.ones(1)) if band is None else band.support()
    return CandidateSample(label, np.asarray(logs, dtype=float), deltas, weights, cap, 0.125)


def test_p_greater_is_the_exact_sum_over_the_bands() -> None:
    # A at 2x, B at 1x, each with a discrepancy of -0.5 or +0.5 (natural log), half each: A loses only when
    # its band is -0.5 and B's is +0.5 (ln 2 - 1 < 0), one case in four
    band = Band((0.5,), (1.0,), ("x",))
    a, b = _sample("a", [[math.log(2)]], band), _sample("b", [[0.0]], band)
    assert p_greater(a, b) == pytest.approx(0.75)
    assert p_greater(b, a) == pytest.approx(0.25)
    # without the band the order is sure
    assert p_greater(_sample("a", [[math.log(2)]]), _sample("b", [[0.0]])) == 1.0


def test_p_greater_pairs_the_draws() -> None:
    # A = B x 1.1 in every draw, the draws spread widely: paired, A is surely ahead (unpaired, a low draw of
    # A would lose to a high draw of B)
    b_logs = [[math.log(x)] for x in (0.5, 1.0, 2.0, 4.0)]
    a_logs = [[v[0] + math.log(1.1)] for v in b_logs]
    assert p_greater(_sample("a", a_logs), _sample("b", b_logs)) == 1.0
    with pytest.raises(ValueError, match="same design"):
        p_greater(_sample("a", a_logs[:2]), _sample("b", b_logs))


def test_two_draws_censored_at_the_cap_are_a_tie() -> None:
    at_cap = math.log(64.0)
    assert p_greater(_sample("a", [[at_cap + 0.2]]), _sample("b", [[at_cap]])) == 0.5


def test_p_above_and_quantiles_of_a_sample() -> None:
    # four draws stand for the quarters of the distribution: the 2nd and 3rd smallest at probabilities
    # 3/8 and 5/8, the median halfway between them on the log scale, and P(above 1) read off the line from
    # 0.5 (at 1/8) to 1.5 (at 3/8), in steps of 1/16 (four points per draw)
    s = _sample("a", [[math.log(x)] for x in (0.5, 1.5, 2.5, 3.5)])
    assert s.p_above(1.0) == 11 / 16
    assert s.p_above(3.0) == 0.25
    assert s.quantiles([0.5])[0] == pytest.approx(math.sqrt(1.5 * 2.5), rel=0.12)
    assert s.quantiles([0.0, 1.0]) == pytest.approx([0.5, 3.5])  # flat beyond the outermost draws


def test_stratified_rows_read_the_draws_quantile_function_and_keep_the_noise() -> None:
    # 16 draws 1..16 (one per slice): the point at probability u is draw (16 u + 0.5), between neighbours
    logs = np.arange(1.0, 17.0)[:, None] + np.linspace(-0.3, 0.3, 1000)[None, :]
    rows = stratified_rows(logs)
    assert rows.shape == (64, 250)
    first = rows[:, 0] - rows[0, 0]
    u = (np.arange(64) + 0.5) / 64
    assert first == pytest.approx(np.clip(16 * u + 0.5, 1.0, 16.0) - 1.0)
    noise = logs[0].reshape(250, 4).mean(axis=1)  # every row carries the noise levels, four averaged into one
    assert rows[5] - rows[5, 0] == pytest.approx(noise - noise[0])


def test_an_80_percent_interval_of_a_stratified_design_holds_80_percent_not_13_of_16() -> None:
    """The 10 % and 90 % quantiles of 16 scrambled Sobol' points of a uniform: read as point masses they
    are the 2nd and 15th points (expected at 3/32 and 29/32: 81.25 % of the distribution between them);
    through the draws' quantile function, 80 % less the 1/64 steps' rounding (79.7 %). 400 designs."""
    from scipy.stats import qmc

    widths, points = [], []
    for seed in range(400):
        x = qmc.Sobol(1, scramble=True, seed=seed).random(16).ravel()
        sample = CandidateSample("a", np.log(x)[:, None], np.zeros(1), np.ones(1), math.inf, 0.0)
        low, high = sample.quantiles([0.1, 0.9])
        widths.append(high - low)
        low, high = np.quantile(x, [0.1, 0.9], method="inverted_cdf")
        points.append(high - low)
    assert 0.792 < np.mean(widths) < 0.802
    assert np.mean(points) > 0.805


def test_candidate_sample_leaves_out_draws_without_an_answer() -> None:
    s = candidate_sample(
        "a", [2.0, None, 3.0], [2.0, 2.1, 1.9], None, 0.125, 64.0, ["found", "cannot host", "found"]
    )
    assert s is not None and s.logs.shape[0] == 2
    assert candidate_sample("a", [None], [2.0, 2.1], None, 0.125, 64.0) is None


def _mix(size_range: list[float] | None) -> dict:
    cls = {
        "name": "db",
        "workload": "oltp",
        "size": 4.0,
        "service_level": {"metric": "mean_ms", "limit_ms": 20.0},
    }
    if size_range is not None:
        cls["size_range"] = size_range
    return {"name": "m", "classes": [cls]}


def test_a_size_range_is_drawn_and_must_hold_the_size() -> None:
    mix = WorkloadMix.from_mapping(_mix([3.0, 6.0]))
    assert mix_at(mix, {size_key("db"): 5.5}).classes[0].size == 5.5
    assert mix_at(mix, {}).classes[0].size == 4.0
    with pytest.raises(WorkloadMixError, match="size_range"):
        WorkloadMix.from_mapping(_mix([5.0, 6.0]), "mix.yaml")
    with pytest.raises(WorkloadMixError, match="size_range"):
        WorkloadMix.from_mapping(_mix([3.0]), "mix.yaml")


def test_compare_with_uncertainty_draws_every_candidate_on_one_design() -> None:
    from storagelab import studies
    from storagelab.analysis.comparison import Settings, compare

    mix = WorkloadMix.from_mapping(
        {
            "name": "small",
            "classes": [
                {"name": "db", "workload": "oltp", "size": 2.0, "size_range": [1.0, 3.0],
                 "service_level": {"metric": "p95_ms", "limit_ms": 30.0}},
            ],
        }
    )  # fmt: skip
    candidates = [
        studies.candidate("XtremIO", "XtremIO, 1 X-Brick(s)"),
        studies.candidate("EqualLogic", "EqualLogic PS6100E"),
    ]
    s = Settings(duration_s=0.3, warmup_s=0.1, high=4.0)
    result = compare(mix, candidates, s, uncertainty=16, growth=2.0, scheduler="synchronous")
    d = result.decision
    assert d is not None and set(d.samples) == {"XtremIO", "EqualLogic"}
    # the mix's size is one column of the design, the same value for both candidates in each draw
    assert size_key("db") in d.keys["XtremIO"] and size_key("db") in d.keys["EqualLogic"]
    sizes = [draw[size_key("db")] for draw in d.design.draws]
    assert min(sizes) >= 1.0 and max(sizes) <= 3.0 and len(set(sizes)) == 16
    table = d.table()
    assert table.height == 2 and table["p_meets_1x"].is_between(0, 1).all()
    m = d.pairwise()
    p, q = (
        m.filter(pl.col("architecture") == "XtremIO")["EqualLogic"][0],
        m.filter(pl.col("architecture") == "EqualLogic")["XtremIO"][0],
    )
    assert p + q == pytest.approx(1.0)
    # the draws' runs are costed, one row per candidate
    assert set(result.cost().filter(pl.col("bound") == "parameter draws")["architecture"]) == {
        "XtremIO",
        "EqualLogic",
    }
    # the same seed gives the same table on another scheduler (threads: the tasks in another order)
    again = compare(mix, candidates, s, uncertainty=16, growth=2.0, scheduler="threads")
    assert again.decision is not None and again.decision.table().equals(table)


def test_compare_refuses_too_few_draws() -> None:
    from storagelab.analysis.comparison import compare

    with pytest.raises(ValueError, match="more than 8 draws"):
        compare(WorkloadMix.from_mapping(_mix(None)), [], uncertainty=4)


def test_a_sure_ranking_is_a_probability_of_exactly_one() -> None:
    # every value of a far above every value of b, with a band of ten offsets: the weights' cumulative sums
    # added up to 1.0000000000000009 before the clip, and 1 - p (the pairwise matrix's other cell) to -9e-16
    rng = np.random.default_rng(0)
    k = int(rng.integers(3, 12))
    band = Band(tuple(rng.uniform(0, 0.5, k)), tuple(rng.uniform(0.05, 1, k)), ("x",))
    low = _sample("low", np.log(rng.uniform(0.01, 0.02, size=(16, 7))).tolist(), band)
    high = _sample("high", np.log(rng.uniform(4, 5, size=(16, 7))).tolist(), band)
    assert p_greater(high, low) == 1.0
    assert p_greater(low, high) == 0.0


def test_a_tests_history_is_read_at_its_steady_state_not_drawn() -> None:
    """A parameter that records a test's history (Virtual SAN's read cache resident since it was cleared,
    uniform on 0-1 for the study's unstated protocol) is not one of a comparison's draws: the comparison is
    of systems in service, which read the declared warm cache. The hardware's unknowns are still drawn,
    and a user's override of the history is read as given."""
    from storagelab import studies
    from storagelab.analysis.decision import uncertain_parameters
    from storagelab.provenance import parameter_draw, recording_uncertain

    mix = WorkloadMix.from_mapping(_mix([3.0, 6.0]))
    hybrid = studies.candidate("hybrid", "Virtual SAN 5.5, hybrid Xeon E5 v3")
    found, mine = uncertain_parameters(mix, [hybrid])
    names = {name for _, name in mine["hybrid"]}
    assert "read_cache_resident" not in names
    assert {"cpu_cycles_per_io", "stack_delay"} <= names and size_key("db") in found
    # the study's own recording still sees it: the history is a range there
    with recording_uncertain() as recorded:
        studies.PRESETS["Virtual SAN 5.5, hybrid Xeon E5 v3"]()
    assert recorded[("Virtual SAN 5.5", "read_cache_resident")].history
    # a draw of every other parameter leaves the cache warm
    with parameter_draw({k: v.ppf(0.5) for k, v in found.items() if k[0] != "workload mix"}):
        p = studies.PRESETS["Virtual SAN 5.5, hybrid Xeon E5 v3"]().params
    assert p["read_cache_resident"].value == 1.0


def test_a_history_param_overridden_is_read_as_given() -> None:
    """A scenario or a user sizing for a cold start overrides the history: the value is read as given
    (no uncertainty, so nothing to draw), as the study's scenarios set it from their protocol."""
    from storagelab import studies
    from storagelab.analysis.decision import uncertain_parameters

    preset = "Virtual SAN 5.5, hybrid Xeon E5 v3"
    cold = studies.PRESETS[preset](read_cache_resident=0.3).params["read_cache_resident"]
    assert cold.value == 0.3 and cold.uncertainty is None and cold.origin == "user"
    mix = WorkloadMix.from_mapping(_mix(None))
    _, mine = uncertain_parameters(
        mix, [studies.candidate("cold", preset, overrides={"read_cache_resident": 0.3})]
    )
    assert "read_cache_resident" not in {name for _, name in mine["cold"]}


def test_a_draws_search_resolution_widens_it_as_a_uniform() -> None:
    """A draw's answer is its final bracket's middle and the boundary lies anywhere in it: each row gains a
    uniform on [-r, r] (read at 8 points: variance r^2 / 3 (1 - 1/64)), keeps its size and mean, and a row
    with resolution 0 (a bound) is unchanged."""
    rng = np.random.default_rng(4)
    logs = np.sort(rng.normal(0.0, 0.02, (3, 1000)), axis=1) + np.array([[0.0], [1.0], [2.0]])
    out = with_resolution(logs, [0.05, 0.0, 0.1])
    assert out.shape == logs.shape
    assert np.array_equal(out[1], logs[1])
    for i, r in ((0, 0.05), (2, 0.1)):
        assert out[i].mean() == pytest.approx(logs[i].mean(), abs=1e-3)
        assert out[i].var() == pytest.approx(logs[i].var() + r**2 / 3 * (1 - 1 / 64), rel=0.02)
        assert np.all(np.diff(out[i]) >= 0)


def test_draws_that_agree_to_the_bracket_keep_the_brackets_width() -> None:
    """Where every draw and every replication lands in the same bracket (no spread at all), the 80 %
    interval is the bracket's, not a point: the boundary lies somewhere in it. Without the resolutions
    the interval has no width."""
    answer, r = 4.0, math.log(1.1) / 2
    exact = candidate_sample("a", [answer] * 16, [answer] * 3, None, 0.125, 64.0)
    resolved = candidate_sample("a", [answer] * 16, [answer] * 3, None, 0.125, 64.0, (), [r] * 16)
    assert exact is not None and resolved is not None
    assert exact.quantiles([0.1, 0.9]) == [pytest.approx(answer), pytest.approx(answer)]
    low, high = resolved.quantiles([0.1, 0.9])
    # a uniform on +-r read at 8 points: its 10 % and 90 % points are the 1st and 8th of 8 midpoints' mix
    assert math.log(high / answer) == pytest.approx(-math.log(low / answer), rel=1e-6)
    assert 0.6 * r < math.log(high / answer) <= r
    with pytest.raises(ValueError, match="2 resolutions for 16 draws"):
        candidate_sample("a", [answer] * 16, [answer] * 3, None, 0.125, 64.0, (), [r, r])


def test_the_declared_values_answer_is_placed_in_the_distribution() -> None:
    # four draws at 1, 2, 3, 4x (one per quarter) and replications at the declared values agreeing on 3.5x:
    # the nominal answer lies between the 3rd and 4th draws (at 5/8 and 7/8), so most of what is known
    # lies below it; read at 16 points (four per draw, linear on the log scale) 12 lie below ln 3.5
    s = candidate_sample("a", [1.0, 2.0, 3.0, 4.0], [3.5, 3.5, 3.5], None, 0.125, 64.0)
    assert s is not None and s.nominal == 3.5
    assert s.p_below_nominal() == pytest.approx(12 / 16)
    # the replications' geometric mean, as the nominal table's headroom
    t = candidate_sample("a", [1.0, 2.0, 3.0, 4.0], [1.0, 4.0], None, 0.125, 64.0)
    assert t is not None and t.nominal == pytest.approx(2.0)
    assert math.isnan(_sample("b", [[0.0]]).p_below_nominal())  # no nominal answer given
    # a nominal answer at the cap or the floor is a bound ("at least 64x"), not a place in the distribution
    for bound in (64.0, 0.125):
        u = candidate_sample("a", [1.0, 2.0, 3.0, 4.0], [bound, bound], None, 0.125, 64.0)
        assert u is not None and math.isnan(u.p_below_nominal())
