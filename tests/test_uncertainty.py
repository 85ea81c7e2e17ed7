"""The machinery of the uncertainty analysis (issue 68): distributions on a Param, discovering and drawing
a scenario's uncertain parameters through ParamSet, the Sobol' design, and the SALib sensitivity wrapper."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from storagelab.architectures.parameters import ParamSet
from storagelab.provenance import (
    Param,
    capacity_scale,
    current_draw_key,
    parameter_draw,
    recording_uncertain,
)
from storagelab.uncertainty import Choice, LogUniform, Triangular, Uniform
from storagelab.uncertainty.design import morris_design, sobol_design
from storagelab.uncertainty.sensitivity import sensitivity

quantiles = st.floats(min_value=0.0, max_value=1.0)

# ---- distributions ----


def test_uniform_ppf_median_bounds():
    d = Uniform(2.0, 8.0)
    assert [d.ppf(u) for u in (0.0, 0.25, 1.0)] == [2.0, 3.5, 8.0]
    assert d.median == 5.0 and d.bounds == (2.0, 8.0)
    assert d.contains(8.0) and not d.contains(8.01) and not d.contains("8")


@given(u=quantiles)
def test_log_uniform_and_triangular_ppf_match_scipy(u):
    assert LogUniform(10.0, 1000.0).ppf(u) == pytest.approx(stats.loguniform(10.0, 1000.0).ppf(u), rel=1e-9)
    t = Triangular(1.0, 2.0, 5.0)
    assert t.ppf(u) == pytest.approx(stats.triang(c=0.25, loc=1.0, scale=4.0).ppf(u), rel=1e-9)


def test_log_uniform_and_triangular_medians():
    assert LogUniform(10.0, 1000.0).median == pytest.approx(100.0)
    assert Triangular(1.0, 2.0, 5.0).median == pytest.approx(
        stats.triang(c=0.25, loc=1.0, scale=4.0).median()
    )
    assert Triangular(0.0, 0.0, 1.0).ppf(0.0) == 0.0 and Triangular(0.0, 1.0, 1.0).ppf(1.0) == 1.0


def test_choice_maps_quantiles_through_its_weights():
    c = Choice((1, 4, 16), (1.0, 2.0, 1.0))  # cumulative 0.25, 0.75, 1
    assert [c.ppf(u) for u in (0.0, 0.2499, 0.25, 0.74, 0.75, 0.999, 1.0)] == [1, 1, 4, 4, 16, 16, 16]
    assert c.median == 4 and c.bounds == (1, 16) and c.probabilities == (0.25, 0.5, 0.25)
    names = Choice(("fifo", "sstf"))
    assert [names.ppf(0.49), names.ppf(0.5)] == ["fifo", "sstf"] and names.contains("sstf")


@given(u=quantiles, v=quantiles)
def test_every_ppf_is_monotone_and_inside_its_bounds(u, v):
    lo, hi = min(u, v), max(u, v)
    for d in (
        Uniform(-1.0, 3.0),
        LogUniform(0.5, 40.0),
        Triangular(1.0, 4.0, 5.0),
        Choice((1, 2, 8), (3, 1, 1)),
    ):
        a, b = d.ppf(lo), d.ppf(hi)
        assert d.bounds[0] <= a <= b <= d.bounds[1]  # type: ignore[operator]
        assert d.contains(a) and d.contains(b)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Uniform(3.0, 3.0), "low < high"),
        (lambda: Uniform(1.0, math.inf), "finite"),
        (lambda: LogUniform(0.0, 10.0), "0 < low < high"),
        (lambda: Triangular(1.0, 6.0, 5.0), "low <= mode <= high"),
        (lambda: Choice(()), "at least one value"),
        (lambda: Choice((1, "a")), "all finite numbers or all non-empty names"),
        (lambda: Choice((4, 1)), "increasing order"),
        (lambda: Choice(("a", "a")), "distinct"),
        (lambda: Choice((1, 2), (1.0,)), "2 values but 1 weights"),
        (lambda: Choice((1, 2), (1.0, 0.0)), "positive"),
    ],
)
def test_distributions_refuse_bad_bounds(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_ppf_refuses_a_quantile_outside_zero_one():
    for d in (Uniform(0.0, 1.0), LogUniform(1.0, 2.0), Triangular(0.0, 0.5, 1.0), Choice((1, 2))):
        with pytest.raises(ValueError, match=r"quantile lies in \[0, 1\]"):
            d.ppf(1.5)


# ---- Param ----


def test_param_refuses_a_value_outside_its_uncertainty():
    ok = Param(4.0, "ms", "assumption", "guess: 2-8 ms", uncertainty=LogUniform(2.0, 8.0))
    assert ok.uncertainty == LogUniform(2.0, 8.0)
    assert Param(4.0, "ms", "document", "the study").uncertainty is None
    with pytest.raises(ValueError, match="outside its uncertainty's support"):
        Param(9.0, "ms", "assumption", "guess", uncertainty=LogUniform(2.0, 8.0))
    with pytest.raises(ValueError, match="outside its uncertainty's support"):
        Param(3, "count", "assumption", "guess", uncertainty=Choice((1, 2, 4)))


def test_param_refuses_an_uncertainty_that_draws_what_it_does_not_accept():
    with pytest.raises(ValueError, match="does not accept"):
        Param(0.9, "ratio", "assumption", "guess", uncertainty=Uniform(0.5, 1.5))
    with pytest.raises(ValueError, match="is a Choice"):
        Param(4, "count", "assumption", "guess", uncertainty=Uniform(1.0, 8.0))
    with pytest.raises(ValueError, match="does not accept"):
        Param(
            "fifo",
            "choice",
            "assumption",
            "guess",
            choices=("fifo", "sstf"),
            uncertainty=Choice(("fifo", "elevator")),
        )


# ---- a toy preset: discovering and drawing its uncertain parameters ----


def _toy_params() -> dict[str, Param]:
    return {
        "bandwidth": Param(
            4.0, "GB/s", "assumption", "guess", capacity="rate", uncertainty=Uniform(2.0, 8.0)
        ),
        "working_set": Param(100.0, "GB", "assumption", "unstated", uncertainty=LogUniform(50.0, 400.0)),
        "unread": Param(0.5, "ratio", "assumption", "never read", uncertainty=Uniform(0.0, 1.0)),
        "queue": Param(
            "fifo",
            "choice",
            "assumption",
            "ordering",
            choices=("fifo", "sstf"),
            uncertainty=Choice(("fifo", "sstf")),
        ),
        "exact": Param(16, "count", "document", "the study says 16"),
    }


def _build_toy(overrides: dict[str, object] | None = None) -> dict[str, Param]:
    """What a preset built from the toy parameters reads (all but ``unread``)."""
    ps = ParamSet("toy", _toy_params(), overrides)
    return {name: ps[name] for name in ("bandwidth", "working_set", "queue", "exact")}


def test_recording_discovers_exactly_the_uncertain_parameters_read():
    with recording_uncertain() as recorded:
        _build_toy()
        ParamSet("other", {"x": Param(1.0, "ms", "assumption", "g")})["x"]  # no uncertainty: not recorded
    assert set(recorded) == {("toy", "bandwidth"), ("toy", "working_set"), ("toy", "queue")}
    assert recorded["toy", "working_set"] == _toy_params()["working_set"]
    with recording_uncertain() as recorded:
        _build_toy({"working_set": 200.0})  # a user's override is exact
    assert ("toy", "working_set") not in recorded and len(recorded) == 2
    _build_toy()  # outside a recording nothing is collected, and nothing fails


def test_parameter_draw_changes_what_a_preset_reads():
    draw = {
        ("toy", "bandwidth"): 7.5,
        ("toy", "queue"): "sstf",
        ("toy", "nope"): 1.0,  # a parameter the preset does not declare
        ("elsewhere", "working_set"): 60.0,  # another preset's parameter of the same name
    }
    with parameter_draw(draw):
        assert current_draw_key() != ()
        read = _build_toy()
    assert read["bandwidth"].value == 7.5 and read["queue"].value == "sstf"
    assert read["bandwidth"].origin == "assumption" and read["bandwidth"].source.startswith("drawn")
    assert "declared 4.0 GB/s" in read["bandwidth"].source
    assert read["working_set"] == _toy_params()["working_set"] and read["exact"].value == 16
    assert _build_toy()["bandwidth"].value == 4.0 and current_draw_key() == ()  # outside: as declared
    with (
        parameter_draw({("toy", "bandwidth"): 9.0}),
        pytest.raises(ValueError, match="outside its uncertainty"),
    ):
        _build_toy()


def test_parameter_draw_composes_with_capacity_scale():
    with parameter_draw({("toy", "bandwidth"): 6.0}), capacity_scale(0.5):
        assert _build_toy()["bandwidth"].value == 3.0


def test_a_user_override_wins_over_a_draw():
    with parameter_draw({("toy", "bandwidth"): 6.0, ("toy", "working_set"): 60.0}):
        read = _build_toy({"bandwidth": "5 GB/s"})
    assert read["bandwidth"].value == 5.0 and read["bandwidth"].origin == "user"
    assert read["working_set"].value == 60.0


# ---- the Sobol' design ----

UNCERTAIN = {
    ("toy", "bandwidth"): Uniform(2.0, 8.0),
    ("toy", "working_set"): LogUniform(50.0, 400.0),
    ("toy", "queue"): Choice(("fifo", "sstf"), (1.0, 3.0)),
}


def test_sobol_design_is_deterministic_for_a_seed_in_any_process():
    a, b = sobol_design(UNCERTAIN, 16, seed=7), sobol_design(UNCERTAIN, 16, seed=7)
    assert a.draws == b.draws and np.array_equal(a.u, b.u)
    assert sobol_design(UNCERTAIN, 16, seed=8).draws != a.draws
    code = (
        "from storagelab.uncertainty import Choice, LogUniform, Uniform\n"
        "from storagelab.uncertainty.design import sobol_design\n"
        "u = {('toy', 'bandwidth'): Uniform(2.0, 8.0), ('toy', 'working_set'): LogUniform(50.0, 400.0),"
        " ('toy', 'queue'): Choice(('fifo', 'sstf'), (1.0, 3.0))}\n"
        "print(repr(sobol_design(u, 16, seed=7).draws))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == repr(a.draws)


def test_sobol_design_fills_each_dimension_and_maps_through_ppf():
    d = sobol_design(UNCERTAIN, 64, seed=3)
    assert d.keys == tuple(sorted(UNCERTAIN)) and len(d) == 64
    for j, key in enumerate(d.keys):
        # a power of two: one point in each of the 64 equal slices of every dimension
        assert sorted(np.floor(d.u[:, j] * 64).astype(int)) == list(range(64))
        assert abs(d.u[:, j].mean() - 0.5) < 1 / 64
        assert [row[key] for row in d.draws] == [UNCERTAIN[key].ppf(float(q)) for q in d.u[:, j]]
    bandwidths = [row["toy", "bandwidth"] for row in d.draws]
    assert abs(np.mean(bandwidths) - 5.0) < 6.0 / 64
    assert sum(row["toy", "queue"] == "sstf" for row in d.draws) == 48  # weight 3 of 4


def test_sobol_design_reads_recorded_params_and_its_draws_apply():
    with recording_uncertain() as recorded:
        _build_toy()
    design = sobol_design(recorded, 8, seed=1)
    for draw in design.draws:
        with parameter_draw(draw):
            read = _build_toy()
        assert read["bandwidth"].value == draw["toy", "bandwidth"]
        assert read["queue"].value == draw["toy", "queue"]


# ---- sensitivity by SALib ----

TWO = {("f", "x1"): Uniform(0.0, 1.0), ("f", "x2"): Uniform(0.0, 1.0), ("f", "x3"): Uniform(0.0, 1.0)}


def test_rbd_fast_on_the_sobol_design_names_the_dominant_input():
    design = sobol_design(TWO, 64, seed=5)
    y = [10 * d["f", "x1"] + d["f", "x2"] for d in design.draws]
    s = sensitivity(design, y)
    assert s.method == "rbd_fast"
    assert s.ranked()[0][0] == ("f", "x1")
    assert s.index["f", "x1"] == pytest.approx(100 / 101, abs=0.05)  # the first-order index of x1
    assert s.index["f", "x1"] - max(s.index["f", "x2"], s.index["f", "x3"]) > 0.5


def test_rbd_fast_default_harmonics_see_an_effect_that_is_not_monotone():
    design = sobol_design(TWO, 32, seed=5)
    y = [(d["f", "x1"] - 0.5) ** 2 for d in design.draws]
    s = sensitivity(design, y)  # with one harmonic the index of x1 is about 0: its first harmonic is flat
    assert s.ranked()[0][0] == ("f", "x1") and s.index["f", "x1"] > 0.7


def test_rbd_fast_on_an_output_of_few_values_warns_of_nothing_and_ranks_it():
    """An output that is one value in all draws but one: half-size bootstrap resamples are often constant
    (SALib then divides 0 by 0 in the confidence); the index itself is finite and names the input."""
    design = sobol_design(TWO, 16, seed=5)
    top = max(range(16), key=lambda j: design.draws[j]["f", "x1"])
    y = [1.0 if j == top else 0.0 for j in range(16)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = sensitivity(design, y)
    assert all(math.isfinite(v) for v in s.index.values())
    assert s.ranked()[0][0] == ("f", "x1")


def test_morris_gives_the_elementary_effects_of_a_linear_function():
    design = morris_design(TWO, trajectories=6, seed=5)
    assert len(design) == 6 * 4
    y = [10 * d["f", "x1"] + d["f", "x2"] for d in design.draws]
    s = sensitivity(design, y)
    assert s.method == "morris"
    assert s.index["f", "x1"] == pytest.approx(10.0) and s.index["f", "x2"] == pytest.approx(1.0)
    assert s.index["f", "x3"] == pytest.approx(0.0, abs=1e-12)


def test_sensitivity_refuses_a_failed_run():
    design = sobol_design(TWO, 8, seed=5)
    with pytest.raises(ValueError, match="not finite"):
        sensitivity(design, [1.0] * 7 + [math.nan])
    with pytest.raises(ValueError, match="more than 8 draws"):
        sensitivity(
            design, [float(i) for i in range(8)]
        )  # 2 harmonics: the bias correction 2M/n would be 1/2


def test_a_draw_reaches_a_study_preset_built_inside_it():
    """A preset of the studies builds its ParamSet when called, so a draw around the call reaches it: each
    number a preset declares with a distribution (not a fit) read at its 75 % quantile; a number without
    one is not uncertain, and reads as declared even when a draw names it."""
    from storagelab import studies

    name = next(iter(studies.PRESETS))
    plain = studies.build(name).params
    draw = {
        (plain.family, k): p.uncertainty.ppf(0.75)
        for k, p in plain.declared().items()
        if isinstance(p.value, float | int) and p.unit not in ("count", "ratio", "%") and p.origin != "fit"
        and p.uncertainty is not None
    }  # fmt: skip
    fixed = {
        k: p
        for k, p in plain.declared().items()
        if isinstance(p.value, float | int) and p.unit not in ("count", "ratio", "%") and p.uncertainty is None
        and p.prior is None
    }  # fmt: skip
    assert draw and fixed, f"preset {name!r} declares no number to draw, or none without a distribution"
    with parameter_draw({**draw, **{(plain.family, k): 1.5 * p.value for k, p in fixed.items()}}):
        drawn = studies.build(name).params
    for (_, k), value in draw.items():
        assert drawn[k].value == pytest.approx(value) and drawn[k].source.startswith("drawn"), k
    for k, p in fixed.items():
        assert drawn[k].value == p.value, k


def test_a_prior_is_for_fits_and_a_draw_from_it_is_read() -> None:
    """A fit's ``prior`` (its range without its rows, for leave-one-out) is refused on a non-fit, and a
    draw from the prior outside the fit's own spread is read, where one outside both is refused."""
    with pytest.raises(ValueError, match="prior is the range a fit"):
        Param(4.0, "ms", "assumption", "guess", uncertainty=Uniform(2.0, 8.0), prior=Uniform(1.0, 9.0))
    fit = Param(
        4.0,
        "ms",
        "fit",
        "fitted",
        fitted_on=("row-1",),
        uncertainty=Uniform(3.5, 4.5),
        prior=Uniform(1.0, 9.0),
    )
    with parameter_draw({("toy", "t"): 8.0}):
        assert ParamSet("toy", {"t": fit})["t"].value == 8.0
    with parameter_draw({("toy", "t"): 9.5}), pytest.raises(ValueError, match="outside its uncertainty"):
        ParamSet("toy", {"t": fit})
