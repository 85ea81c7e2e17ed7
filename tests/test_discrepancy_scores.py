"""The discrepancy band (learned leaving one study out) and the four scores, on synthetic tables
(issue 68, items 5 and 6)."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import polars as pl
import pytest
import vl_convert as vlc
from scipy import stats

from storagelab.calibration import discrepancy as d
from storagelab.calibration import scores as s

#: Normal scores of the table's quantiles (low95, low80, median, high80, high95).
Z = [float(stats.norm.ppf(p)) for _, p in d.QUANTILES]


def normal_scores(n: int) -> np.ndarray:
    """n evenly spread standard-normal values (the quantiles at (k + 1/2) / n): a sample with no noise."""
    return stats.norm.ppf((np.arange(n) + 0.5) / n)


def quantiles(median: float, sigma: float) -> dict[str, float]:
    """A log-normal prediction's five quantiles: median x exp(z sigma)."""
    return {c: median * math.exp(z * sigma) for (c, _), z in zip(d.QUANTILES, Z, strict=True)}


def cal_row(study: str, claim: str, published: float, median: float, sigma: float = 0.0, **kw) -> dict:
    """A calibration row: a two-sided predicted point published as ``published`` (or ``low``..``high``),
    predicted at ``median`` with log-spread ``sigma``."""
    low, high = kw.pop("low", published), kw.pop("high", published)
    row = {
        "study": study, "claim": claim, "point": kw.pop("point", claim), "role": "predicted", "unit": "ms",
        "comparison": "two-sided", "published": published, "published_low": low, "published_high": high,
        "simulated": median, "pass": abs(median / published - 1) <= 0.2, "left_out_of_fit": False,
    } | quantiles(median, sigma)  # fmt: skip
    return row | kw


def env_row(claim: str, published: float, median: float, sigma: float = 0.0, **kw) -> dict:
    """An envelope row: a two-sided predicted claim."""
    low, high = kw.pop("low_pub", published), kw.pop("high_pub", published)
    row = {
        "claim": claim, "statement": kw.pop("statement", claim), "reading": "two-sided",
        "published": f"{published:,.0f}", "unit": "IOPS", "model": median, "low": 0.85 * low,
        "high": 1.15 * high, "within": abs(median / published - 1) <= 0.15, "role": "predicted",
        "published_low": low, "published_high": high,
    } | quantiles(median, sigma)  # fmt: skip
    return row | kw


def frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(rows, infer_schema_length=None)


def studies_with_residuals(residuals: dict[str, np.ndarray], sigma: float = 0.0) -> pl.DataFrame:
    """A calibration table with one single-point claim per residual: published 100, median 100 / e^r."""
    return frame([
        cal_row(study, f"{study}-{i}", 100.0, 100.0 * math.exp(-r), sigma)
        for study, rs in residuals.items() for i, r in enumerate(rs)
    ])  # fmt: skip


# --- the band ------------------------------------------------------------------------------------------


def band_of(offsets: np.ndarray) -> d.Band:
    """A band of the given |delta| values, each with weight 1."""
    return d.Band(tuple(float(o) for o in offsets), (1.0,) * len(offsets), ("a",))


def test_a_known_residual_distribution_gives_its_band():
    """Residuals with no model spread: the band is the residuals taken with either sign, and its quantiles
    are their weighted order statistics (three residuals exactly; 400 normal ones of spread 0.3 give a
    normal's bounds)."""
    small = d.pooled_band(studies_with_residuals({"a": np.array([0.1]), "b": np.array([-0.2, 0.4])}))
    assert sorted(small.support()[0]) == pytest.approx([-0.4, -0.2, -0.1, 0.1, 0.2, 0.4])
    assert small.claims == 3 and small.points == 3 and small.studies == ("a", "b")
    assert small.ppf(0.5) == pytest.approx(0.0)  # between -0.1 and 0.1
    assert small.ppf(0.75) == pytest.approx(0.2)
    assert small.factor(0.80) == pytest.approx(math.exp(0.4))
    r = 0.3 * normal_scores(400)
    band = d.pooled_band(studies_with_residuals({"a": r[:200], "b": r[200:]}))
    assert band.ppf(0.90) == pytest.approx(0.3 * stats.norm.ppf(0.90), rel=0.02)
    assert band.ppf(0.975) == pytest.approx(0.3 * stats.norm.ppf(0.975), rel=0.02)
    assert band.scale == pytest.approx(0.3, rel=0.01)


def test_the_band_is_what_the_models_own_spread_misses():
    """Residuals of spread sqrt(tau^2 + s^2) from claims whose own log-spread is s: the interval with
    discrepancy of such a claim is about the residuals' own (not wider by s counted twice: 2 % wider at
    80 %, 9 % at 95 %, never narrower); with s as large as the residuals, the band is nothing."""
    tau, spread = 0.3, 0.2
    total = math.hypot(tau, spread)
    r = total * normal_scores(400)
    band = d.pooled_band(studies_with_residuals({"a": r[::2], "b": r[1::2]}, sigma=spread))
    got = d.predictive_interval(band, list(quantiles(1.0, spread).values()))
    for name, p in d.PREDICTIVE:
        ratio = math.log(got[name]) / (total * stats.norm.ppf(p))  # 1: the residuals' own bound
        assert 1.0 <= ratio <= 1.10, name
    explained = d.pooled_band(studies_with_residuals({"a": 0.05 * normal_scores(50)}, sigma=0.2))  # all < 0.2
    assert explained.scale == 0.0 and explained.factor(0.8) == 1.0


def test_the_band_goes_no_further_than_the_worst_claim():
    """With fewer than 20 claims, the 95 % band is the largest residual, and nothing lies beyond it."""
    r = np.array([0.05, -0.1, 0.2, -0.3, 0.5, 0.02, -0.04, 0.15, -0.6, 0.08])
    band = d.pooled_band(studies_with_residuals({"a": r}))
    assert band.factor(0.95) == pytest.approx(math.exp(0.6))
    assert band.factor(0.9999) == pytest.approx(math.exp(0.6))


def test_a_claim_with_several_points_trains_the_band_once():
    """Five identical points of one claim weigh as one: the band equals that with the claim once."""
    r = 0.3 * normal_scores(10)
    once = studies_with_residuals({"a": r})
    repeated = pl.concat([
        once,
        frame([cal_row("a", "a-0", 100.0, 100.0 * math.exp(-r[0]), point=f"a-0-{k}") for k in range(4)]),
    ])  # fmt: skip
    b1, b5 = d.pooled_band(once), d.pooled_band(repeated)
    assert b5.claims == pytest.approx(10.0) and b5.points == 14
    for p in (0.025, 0.1, 0.25, 0.75, 0.9, 0.975):
        assert b5.ppf(p) == pytest.approx(b1.ppf(p)), p


def test_only_informative_two_sided_points_train_the_band():
    """Derived points, bounds, fitted points not left out of their fit and points with no log do not
    train the band; a fitted point left out of its fit does; the published middle is geometric."""
    rows = [
        cal_row("a", "kept", 100.0, 50.0),
        cal_row("a", "range", 50.0, 100.0, low=50.0, high=200.0),  # middle 100: residual 0
        cal_row("a", "left-out", 100.0, 80.0, role="fitted", left_out_of_fit=True),
        cal_row("a", "fitted", 100.0, 10.0, role="fitted"),
        cal_row("a", "derived", 100.0, 10.0, role="derived"),
        cal_row("a", "bound", 100.0, 10.0, comparison="at-most"),
        cal_row("a", "over", 100.0, 10.0, comparison="just-over"),
        cal_row("a", "zero", 100.0, 10.0) | {"median": 0.0},
    ]
    res = d.residuals(frame(rows))
    assert res["claim"].to_list() == ["kept", "range", "left-out"]
    assert res["residual"].to_list() == pytest.approx([math.log(2), 0.0, math.log(1.25)])


def test_leave_one_study_out_really_leaves_the_study_out():
    """A study with huge residuals (published 20 times the model) does not widen its own band, and widens
    every other study's; the envelope's band is learned on all of them."""
    calm = 0.1 * normal_scores(10)
    cal = studies_with_residuals({"a": calm, "b": calm, "bad": np.full(6, math.log(20.0))})
    bands = d.study_bands(cal)
    assert bands["bad"].studies == ("a", "b")
    assert bands["bad"].offsets == d.fit_band(d.residuals(cal).filter(pl.col("study") != "bad")).offsets
    assert bands["bad"].factor(0.95) < 1.2
    assert bands["a"].factor(0.80) > 10 and "bad" in bands["a"].studies and "a" not in bands["a"].studies
    assert d.pooled_band(cal).studies == ("a", "b", "bad")
    # the intervals with discrepancy of the bad study's points use its own (narrow) band
    out = d.calibration_with_discrepancy(cal)
    bad = out.filter(pl.col("study") == "bad").row(0, named=True)
    assert bad["pred_high80"] / bad["median"] == pytest.approx(bands["bad"].factor(0.8), rel=1e-9)
    assert bad["discrepancy_factor80"] == pytest.approx(bands["bad"].factor(0.8))
    a = out.filter(pl.col("study") == "a").row(0, named=True)
    assert a["pred_high80"] / a["median"] > 10


# --- the convolution -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tau", [0.001, 0.05, 0.3])
def test_the_interval_with_discrepancy_convolves_on_the_log_scale(tau):
    """A log-normal prediction (log sigma 0.3) plus a band of normal residuals (spread tau) is log-normal
    with sigma sqrt(0.3^2 + tau^2): the bounds rebuilt from the five quantiles, and from a raw sample,
    match it."""
    band = band_of(np.abs(tau * normal_scores(1000)))
    q = list(quantiles(10.0, 0.3).values())
    want = {name: 10.0 * math.exp(math.hypot(0.3, tau) * stats.norm.ppf(p)) for name, p in d.PREDICTIVE}
    got = d.predictive_interval(band, q)
    from_sample = d.predictive_interval(band, sample=10.0 * np.exp(0.3 * normal_scores(1000)))
    for name in want:
        assert got[name] == pytest.approx(want[name], rel=3e-3)
        assert from_sample[name] == pytest.approx(want[name], rel=3e-3)


def test_no_discrepancy_leaves_the_models_interval_and_no_log_gives_none():
    q = [1.0, 2.0, 3.0, 5.0, 9.0]
    got = d.predictive_interval(band_of(np.zeros(3)), q)
    assert got == {"pred_low80": 2.0, "pred_high80": 5.0, "pred_low95": 1.0, "pred_high95": 9.0}
    wide = d.predictive_interval(band_of(np.array([0.2])), q)
    assert wide["pred_low80"] < 2.0 and wide["pred_high80"] > 5.0
    assert all(
        math.isnan(v) for v in d.predictive_interval(band_of(np.array([0.2])), [-1.0, *q[1:]]).values()
    )
    no_median = d.predictive_interval(band_of(np.array([0.2])), [0.0, 0.0, 0.0, 5.0, 9.0])
    assert all(math.isnan(v) for v in no_median.values())
    assert all(
        math.isnan(v) for v in d.predictive_interval(band_of(np.array([0.2])), sample=[1.0, -1.0]).values()
    )


def test_a_bound_at_zero_stays_at_zero_under_the_band():
    """A share that some draws put at 0 (the DS5020 characterization's cache share: 0 % without read
    coalescing, 75 % with) has a 0 lower bound; the band multiplies, so it stays 0 and the upper bounds move
    as they do without the zero, instead of the point losing its interval (it did: NaN, scored not covered,
    though the raw interval held the published value)."""
    band = band_of(np.array([0.1, 0.3]))
    q = [0.0, 0.0, 75.0, 75.1, 75.4]
    got = d.predictive_interval(band, q)
    assert got["pred_low95"] == 0.0 and got["pred_low80"] == 0.0
    assert got["pred_high80"] >= 75.1 and got["pred_high95"] >= 75.4
    positive = d.predictive_interval(band, [1.0, 2.0, 75.0, 75.1, 75.4])
    assert got["pred_high95"] == pytest.approx(positive["pred_high95"], rel=0.02)
    sample = np.r_[np.zeros(400), np.full(600, 75.0)]
    from_sample = d.predictive_interval(band, sample=sample)
    assert from_sample["pred_low80"] == 0.0 and from_sample["pred_high80"] > 75.0


# --- the scores -----------------------------------------------------------------------------------------


def with_bounds(
    row: dict, low80: float, high80: float, low95: float | None = None, high95: float | None = None
) -> dict:
    """``row`` with its 80 % (and 95 %) bounds set, raw and with discrepancy alike."""
    low95 = low80 if low95 is None else low95
    high95 = high80 if high95 is None else high95
    return row | {
        "low80": low80, "high80": high80, "low95": low95, "high95": high95, "median": math.sqrt(low80 * high80),
        "pred_low80": low80, "pred_high80": high80, "pred_low95": low95, "pred_high95": high95,
    }  # fmt: skip


def covered(rows: list[dict]) -> dict[str, bool]:
    """Per claim of a calibration made of ``rows`` (the envelope a single covered claim), whether its 80 %
    interval is covered."""
    env = frame([with_bounds(env_row("e", 100.0, 100.0), 90.0, 110.0)])
    per_claim = s.claims(frame(rows), env).filter(pl.col("scope") == "in study")
    return dict(zip(per_claim["claim"], per_claim["covered80_raw"], strict=True))


def test_coverage_counts_bounds_as_stated():
    """Two-sided: the band meets the interval (touching counts); at-least: high >= the bound; at-most:
    low <= the bound; just-over: its band meets the interval; a claim is covered when all its points
    are; a point with no interval is not covered."""
    band = {"low": 10.0, "high": 20.0}
    rows = [
        with_bounds(cal_row("a", "band-touch", 15.0, 9.0, **band), 5.0, 10.0),
        with_bounds(cal_row("a", "band-miss", 15.0, 9.0, **band), 5.0, 9.99),
        with_bounds(cal_row("a", "band-inside", 15.0, 15.0, **band), 12.0, 13.0),
        with_bounds(cal_row("a", "band-above", 15.0, 30.0, **band), 20.01, 40.0),
        with_bounds(cal_row("a", "least-met", 100.0, 90.0, comparison="at-least"), 50.0, 100.0),
        with_bounds(cal_row("a", "least-miss", 100.0, 90.0, comparison="at-least"), 50.0, 99.9),
        with_bounds(cal_row("a", "most-met", 1.0, 1.0, comparison="at-most"), 1.0, 5.0),
        with_bounds(cal_row("a", "most-miss", 1.0, 1.0, comparison="at-most"), 1.01, 5.0),
        with_bounds(cal_row("a", "over-met", 100.0, 100.0, comparison="just-over", high=115.0), 114.0, 200.0),
        with_bounds(
            cal_row("a", "over-miss", 100.0, 100.0, comparison="just-over", high=115.0), 116.0, 200.0
        ),
        with_bounds(cal_row("a", "pair", 10.0, 10.0, point="pair-1"), 9.0, 11.0),
        with_bounds(cal_row("a", "pair", 10.0, 10.0, point="pair-2"), 11.0, 12.0),
        with_bounds(cal_row("a", "nan", 10.0, 10.0), math.nan, math.nan),
        with_bounds(cal_row("a", "least-nan", 10.0, 10.0, comparison="at-least"), math.nan, math.nan),
        with_bounds(cal_row("a", "derived", 10.0, 10.0, role="derived"), 9.0, 11.0),
    ]
    assert covered(rows) == {
        "band-touch": True, "band-miss": False, "band-inside": True, "band-above": False,
        "least-met": True, "least-miss": False, "most-met": True, "most-miss": False,
        "over-met": True, "over-miss": False, "pair": False, "nan": False, "least-nan": False,
    }  # fmt: skip


def test_scores_side_by_side():
    """The four rows (in / out of study x raw / with discrepancy) count the right claims: derived and
    unscorable statements are left out; a claim the raw interval misses and the discrepancy covers
    counts only with it; sharpness is the median high80 / low80; the error of a met bound is 0; the
    +/-20 % count is the pass / within columns'."""
    cal = frame([
        with_bounds(cal_row("a", "hit", 10.0, 10.0), 9.0, 11.0) | {"pred_low80": 8.0, "pred_high80": 12.0},
        with_bounds(cal_row("a", "rescued", 10.0, 5.0), 4.0, 6.0) | {"pred_low80": 2.0, "pred_high80": 12.5},
        with_bounds(cal_row("b", "miss", 10.0, 1.0), 0.5, 2.0) | {"pred_low80": 0.25, "pred_high80": 4.0},
        with_bounds(cal_row("b", "bound", 1.0, 0.2, comparison="at-most"), 0.1, 0.4) | {"pass": True, "pred_low80": 0.05, "pred_high80": 0.8},
        with_bounds(cal_row("b", "derived", 10.0, 1.0, role="derived"), 0.5, 2.0),
    ])  # fmt: skip
    env = frame([
        with_bounds(env_row("e1", 100.0, 100.0), 90.0, 110.0),
        with_bounds(env_row("e2", 100.0, 300.0), 250.0, 350.0),
        with_bounds(env_row("e3", 100.0, 100.0, role="derived"), 90.0, 110.0),
        with_bounds(env_row("e4", 100.0, 100.0, statement="S"), 90.0, 110.0),
        with_bounds(env_row("e5", 100.0, 100.0, statement="S", role="unscorable"), 90.0, 110.0),
    ])  # fmt: skip
    out = s.scores(cal, env)
    assert out.select("scope", "intervals").rows() == [
        ("in study", "raw"), ("in study", "with discrepancy"), ("out of study", "raw"), ("out of study", "with discrepancy")
    ]  # fmt: skip
    rows = {(r["scope"], r["intervals"]): r for r in out.iter_rows(named=True)}
    raw, disc = rows["in study", "raw"], rows["in study", "with discrepancy"]
    assert raw["claims"] == disc["claims"] == 4
    assert (raw["covered80"], disc["covered80"]) == (2, 3)  # hit, bound; then rescued too
    assert raw["coverage80"] == 0.5 and disc["coverage80"] == 0.75
    assert raw["sharpness80"] == pytest.approx(np.median([11 / 9, 6 / 4, 2 / 0.5, 0.4 / 0.1]))
    assert disc["sharpness80"] == pytest.approx(np.median([12 / 8, 12.5 / 2, 4 / 0.25, 0.8 / 0.05]))
    assert raw["median_error"] == pytest.approx(np.median([0.0, math.log(2), math.log(10), 0.0]))
    assert raw["within_tolerance"] == 2  # hit and bound
    env_raw = rows["out of study", "raw"]
    assert env_raw["claims"] == 2 and env_raw["covered80"] == 1 and env_raw["within_tolerance"] == 1


def test_scores_compute_the_bands_when_the_tables_have_none():
    """Without ``pred_*`` columns, the in-study intervals use the left-out bands and the envelope's the
    pooled band."""
    calm = 0.2 * normal_scores(12)
    cal = studies_with_residuals({"a": calm, "b": calm, "c": calm}, sigma=0.05)
    env = frame([env_row("e", 100.0, 100.0 * math.exp(0.1), sigma=0.05)])
    pts = s.points(cal, env)
    pooled = d.pooled_band(cal)
    e = pts.filter(pl.col("scope") == "out of study").row(0, named=True)
    want = d.predictive_interval(pooled, [e[c] for c, _ in d.QUANTILES])
    assert e["pred_low80"] == pytest.approx(want["pred_low80"]) and e["pred_high95"] == pytest.approx(
        want["pred_high95"]
    )
    out = s.scores(cal, env)
    assert out["claims"].to_list() == [36, 36, 1, 1]
    assert out.filter(pl.col("intervals") == "with discrepancy")["coverage80"][0] >= out["coverage80"][0]


def test_an_unknown_reading_is_refused():
    cal = frame([with_bounds(cal_row("a", "x", 10.0, 10.0, comparison="roughly"), 9.0, 11.0)])
    env = frame([with_bounds(env_row("e", 100.0, 100.0), 90.0, 110.0)])
    with pytest.raises(ValueError, match="roughly"):
        s.scores(cal, env)


# --- the chart ------------------------------------------------------------------------------------------


def test_the_interval_chart_builds_and_names_its_fields():
    cal = frame([
        with_bounds(cal_row("a", "hit", 10.0, 10.0, low=9.0, high=12.0), 9.0, 11.0, 8.0, 12.5),
        with_bounds(cal_row("b", "bound", 1.0, 0.2, comparison="at-most"), 0.1, 0.4, 0.05, 0.6),
    ])  # fmt: skip
    env = frame([with_bounds(env_row("e1", 100.0, 300.0), 250.0, 350.0, 200.0, 400.0)])
    chart = s.interval_chart(cal, env)
    assert isinstance(chart, alt.LayerChart)
    spec = chart.to_dict()
    (records,) = [rows for rows in spec["datasets"].values() if "label" in rows[0]]
    assert set(s.CHART_FIELDS) <= set(records[0])
    assert [r["label"] for r in records] == ["a: hit", "b: bound", "envelope: e1"]
    assert {r["scope"] for r in records} == {"in study", "out of study"}
    by_label = {r["label"]: r for r in records}
    assert by_label["b: bound"]["low80_pct"] == pytest.approx(10.0)  # % of the bound itself
    assert by_label["a: hit"]["published_low_pct"] == pytest.approx(100 * 9 / math.sqrt(108), rel=1e-5)
    fields = {
        enc.get("field")
        for layer in spec["layer"]
        for enc in layer.get("encoding", {}).values()
        if isinstance(enc, dict)
    }
    assert {"label", "low80_pct", "high80_pct", "low95_pct", "high95_pct", "median_pct", "published_low_pct",
            "published_high_pct", "scope", "covered80"} <= fields  # fmt: skip
    assert vlc.vegalite_to_svg(spec, vl_version="5.8").startswith("<svg")


def test_a_claims_error_is_its_worst_points_and_a_failed_point_is_infinitely_wrong():
    cal = frame([
        with_bounds(cal_row("a", "pair", 10.0, 10.0, point="pair-1"), 9.0, 11.0),
        with_bounds(cal_row("a", "pair", 10.0, 20.0, point="pair-2"), 18.0, 22.0),
        with_bounds(cal_row("a", "failed", 10.0, math.nan), 9.0, 11.0),
    ])  # fmt: skip
    env = frame([with_bounds(env_row("e", 100.0, 100.0), 90.0, 110.0)])
    per_claim = s.claims(cal, env).filter(pl.col("scope") == "in study")
    assert dict(zip(per_claim["claim"], per_claim["error"], strict=True)) == {
        "pair": pytest.approx(math.log(2)), "failed": math.inf,
    }  # fmt: skip
