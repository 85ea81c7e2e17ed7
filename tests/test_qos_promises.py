"""The promise sweeps the QoS notebook shows: each comes out held or broken where the theory says."""

from __future__ import annotations

import polars as pl

from storagelab.analysis import promises


def test_reservations_hold_while_they_fit_a_fixed_service_device():
    res = promises.reservation_sweep([200, 500, 600], duration=2.0)
    fixed = res.filter(pl.col("promise") == "floor (fixed service)")
    assert fixed["held"].to_list() == [True, True, False]  # 2 x 600 > 1,000 IOPS
    assert fixed["delivered_iops"][-1] < 600 * 0.9  # each of the two gets about half
    expo = res.filter(pl.col("promise") == "floor (exponential service)")
    assert not expo["held"][1]  # 2 x 500 fills a device whose service varies: a short window falls short


def test_limits_cap_with_wait_and_not_with_allow():
    res = promises.limit_sweep([100, 400], duration=2.0)
    assert res.filter(pl.col("promise") == "cap (wait)")["held"].all()
    allow = res.filter(pl.col("promise") == "cap (allow)")
    assert not allow["held"].any() and (allow["delivered_iops"] > 400).all()  # it takes the spare capacity


def test_weights_share_and_background_bypass_breaks_the_floor():
    assert promises.weight_sweep([1, 3, 9], duration=2.0)["held"].all()
    bypass = promises.bypass_sweep([0, 700], duration=2.0)
    assert bypass["held"].to_list() == [True, False]
    assert bypass["delivered_iops"][1] < 0.6 * 600  # about what the background leaves


def test_the_chart_compiles():
    res = promises.weight_sweep([1, 2], duration=1.0)
    spec = promises.promise_chart(res, title="t", name="qos_promises").to_dict()
    assert spec["encoding"]["facet"]["field"] == "sweep"


def test_dmclock_keeps_the_promises_independent_servers_multiply():
    res = promises.dmclock_comparison(duration=2.0)
    got = {(r["setup"], r["scheduler"]): r["client_iops"] for r in res.iter_rows(named=True)}
    reservation, limit, fair = res["setup"].unique(maintain_order=True)
    assert got[reservation, "dmClock"] < 1.05 * 600 < 1.5 * 600 < got[reservation, "independent mClock"]
    assert got[limit, "dmClock"] <= 300 < 2 * 300 < got[limit, "independent mClock"]
    assert got[fair, "independent mClock"] < 0.6 * 1000 < 0.9 * 1000 < got[fair, "dmClock"]


def test_service_levels_trade_the_latency_target_against_the_weight_share():
    res = promises.service_level_spare()
    held = {(r["spare"], r["promise"].split(" (")[0]): r["held"] for r in res.iter_rows(named=True)}
    assert held == {
        ("deadline", "latency target"): True,
        ("deadline", "weight share 1 : 2 : 3"): False,
        ("deadline", "minimum above its weight share"): False,
        ("weight", "latency target"): False,
        ("weight", "weight share 1 : 2 : 3"): True,
        ("weight", "minimum above its weight share"): True,
    }
    by_deadline = res.filter(pl.col("spare") == "deadline")
    assert by_deadline["delivered"][2] > 80  # spare capacity follows the deadlines, not the equal weights
