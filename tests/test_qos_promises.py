"""The promise sweeps the QoS notebook shows: what each sweep reports is what the theory says, stated as
the property behind it (a promise that fits the device holds; one that cannot fit cannot; where a
promise is not made, what the scheduler does instead), not as which rows happen to hold today."""

from __future__ import annotations

import polars as pl
import pytest

from storagelab.analysis import promises

CAPACITY = 1000.0  # the sweeps' device (IOPS)


def test_reservations_hold_exactly_while_they_fit_a_fixed_service_device():
    """Two tenants reserve r each beside a weight-only one on a fixed-service device: the floor holds
    where 2 r fits the device, and where it does not the two split the device evenly (they have the same
    settings and load), so neither can get r. The exponential-service rows promise nothing (a device whose
    service varies falls short of its mean in some short window, at a load that depends on the seed) and
    are not checked."""
    res = promises.reservation_sweep([200, 500, 600, 700], duration=2.0)
    fixed = res.filter(pl.col("promise") == "floor (fixed service)")
    for row in fixed.iter_rows(named=True):
        fits = 2 * row["setting"] <= CAPACITY
        assert row["held"] == fits, row
        if not fits:
            assert row["delivered_iops"] == pytest.approx(CAPACITY / 2, rel=0.01), row


def test_limits_cap_with_wait_and_with_allow_the_device_stays_busy():
    """A hard limit (``wait``) caps every window. ``allow`` is work-conserving: beside a tenant that
    offers half the device, the capped tenant gets the other half whatever its limit, so the cap is not
    held for any limit below that half."""
    res = promises.limit_sweep([100, 400], duration=2.0)
    assert res.filter(pl.col("promise") == "cap (wait)")["held"].all()
    allow = res.filter(pl.col("promise") == "cap (allow)")
    assert allow["delivered_iops"].to_list() == pytest.approx([CAPACITY / 2] * 2, rel=0.03)
    assert not allow["held"].any()  # 500 > 100 and 400: follows from the line above


def test_weights_share_and_background_that_bypasses_the_scheduler_leaves_the_reservation_the_rest():
    """Weight shares hold for every ratio. A reservation of 600 holds without background IO; with a
    rebuild at 700 IOPS served ahead of the scheduler, the reserved tenant gets what the rebuild leaves
    (about 300: the rebuild's arrivals are Poisson)."""
    assert promises.weight_sweep([1, 3, 9], duration=2.0)["held"].all()
    bypass = promises.bypass_sweep([0, 700], duration=2.0)
    assert bypass["held"][0]
    assert bypass["delivered_iops"][1] == pytest.approx(CAPACITY - 700, rel=0.05)


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


def test_service_levels_keep_the_promise_of_each_way_of_giving_out_spare_capacity():
    """By deadline, the promise is the latency target (met), and spare capacity follows the deadlines:
    the weights play no part (equal targets and backlogs: a third each, not 1 : 2 : 3), a minimum is a
    floor (70 % or more), and with equal targets the split follows the IOs outstanding (64 of 72). By
    weight, the promise is the weight share and a minimum above its weight share that is given, not added
    to (both met). Whether the tight volume's latency target also holds by weight is not a promise of
    that mode (it depends on how close its weight share is to its load) and is not checked."""
    res = promises.service_level_spare()
    row = {(r["spare"], r["promise"].split(" (")[0]): r for r in res.iter_rows(named=True)}
    assert row["deadline", "latency target"]["held"]
    assert row["deadline", "weight share 1 : 2 : 3"]["delivered"] == pytest.approx(100 / 3, abs=2)
    assert row["deadline", "minimum above its weight share"]["delivered"] >= 70
    assert row["deadline", "minimum above its weight share"]["delivered"] == pytest.approx(
        100 * 64 / 72, abs=2
    )
    assert row["weight", "weight share 1 : 2 : 3"]["held"]
    assert row["weight", "minimum above its weight share"]["held"]
