"""mClock's promises, checked over sliding windows of seeded randomized runs on one disk-like station
(exponential or deterministic service), and a promise broken the way users report it."""

from __future__ import annotations

import numpy as np
import pytest

from storagelab.kernel import ClosedSource, Deterministic, Exponential, FixedSampler, OpenSource, Station
from storagelab.kernel.simulation import simulate
from storagelab.qos import ClientQoS, MClock

SERVICE_S = 1e-3  # one server at 1 ms per IO: capacity 1,000 IOPS (cost 1 per IO)


def _run(clients, *, seed=1, duration=3.0, service=None, at_limit="wait", sources=None, backlog=16):
    disc = MClock(clients, at_limit=at_limit, record=True)
    disk = Station("disk", service or Exponential(SERVICE_S), servers=1, discipline=disc)
    srcs = sources(disk) if sources else [
        ClosedSource(name, disk, FixedSampler(size=4096, span=10**9), workers=backlog, cls=name) for name in clients
    ]  # fmt: skip
    res = simulate(disk, srcs, duration=duration, seed=seed, progress=False)
    return disc, res


def _dispatch_times(disc, cls):
    return np.array([t for t, c, _cost, _ph in disc.log if c == cls])


def _min_in_windows(times, window, start, end):
    """Fewest dispatches in any window [a, a + window) with a on a fine grid of [start, end - window]."""
    grid = np.arange(start, end - window, window / 10)
    return min(np.searchsorted(times, a + window) - np.searchsorted(times, a) for a in grid)


def _max_in_windows(times, window, start, end):
    grid = np.arange(start, end - window, window / 10)
    return max(np.searchsorted(times, a + window) - np.searchsorted(times, a) for a in grid)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reservation_floor_holds_in_every_window(seed):
    """Reservations 300 and 200 IOPS (half the 1,000 IOPS capacity), a third tenant with weight 10 and
    no reservation; all backlogged: over any window T >= 1/r each reserved tenant gets >= r T - 1 IOs."""
    clients = {"a": ClientQoS(reservation=300), "b": ClientQoS(reservation=200), "c": ClientQoS(weight=10)}
    disc, _ = _run(clients, seed=seed, service=Deterministic(SERVICE_S))
    for name, r in (("a", 300), ("b", 200)):
        times = _dispatch_times(disc, name)
        for window in (1 / r, 0.05, 0.5):
            assert _min_in_windows(times, window, 0.1, 3.0) >= r * window - 1, (name, window)


@pytest.mark.parametrize("seed", [1, 2])
def test_hard_limit_holds_in_every_window_and_names_the_next_eligible_time(seed):
    """A tenant limited to 100 IOPS beside an unlimited one: at most l T + 1 IOs in any window, and
    while it alone waits the station idles until exactly its next limit tag."""
    clients = {"capped": ClientQoS(limit=100), "free": ClientQoS()}
    disc, _ = _run(clients, seed=seed)
    times = _dispatch_times(disc, "capped")
    assert len(times) > 250
    for window in (0.01, 0.1, 1.0):
        assert _max_in_windows(times, window, 0.0, 3.0) <= 100 * window + 1
    alone = MClock({"capped": ClientQoS(limit=100)}, record=True)
    disk = Station("disk", Deterministic(SERVICE_S), servers=1, discipline=alone)
    src = ClosedSource("capped", disk, FixedSampler(size=4096, span=10**9), workers=8, cls="capped")
    simulate(disk, [src], duration=1.0, seed=seed, progress=False)
    gaps = np.diff(_dispatch_times(alone, "capped")[5:])
    assert np.allclose(gaps, 0.01, atol=1e-9)  # dispatched exactly at its limit tags, 10 ms apart


@pytest.mark.parametrize("seed", [1, 2])
def test_a_tenant_served_late_does_not_catch_up_above_its_limit(seed):
    """A tenant limited to 400 IOPS beside open traffic at 500 IOPS on an exponential device: its limit
    tags often fall due while the device is busy. Served late, it must not then get several IOs back to
    back: no 10 ms or 100 ms window holds more than l T + 1 (with tags kept from arrival it took 44 in a
    100 ms window)."""
    clients = {"capped": ClientQoS(limit=400), "other": ClientQoS()}

    def sources(disk):
        capped = ClosedSource("capped", disk, FixedSampler(size=4096, span=10**9), workers=16, cls="capped")
        return [capped, OpenSource("other", disk, FixedSampler(size=4096, span=10**9), rate=500.0, cls="other")]

    disc, _ = _run(clients, seed=seed, sources=sources)
    times = _dispatch_times(disc, "capped")
    for window in (0.01, 0.1):
        assert _max_in_windows(times, window, 0.5, 3.0) <= 400 * window + 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_weights_share_the_capacity(seed):
    """Weights 1:2:5, no reservation or limit, all backlogged: shares 1/8, 2/8, 5/8 within 2 % over
    1,000 IOs."""
    clients = {"w1": ClientQoS(weight=1), "w2": ClientQoS(weight=2), "w5": ClientQoS(weight=5)}
    disc, _ = _run(clients, seed=seed, duration=1.6)
    served = [c for _t, c, _cost, _ph in disc.log][200:1200]  # 1,000 IOs once all are backlogged
    for name, w in (("w1", 1), ("w2", 2), ("w5", 5)):
        assert served.count(name) / 1000 == pytest.approx(w / 8, abs=0.02), name


def test_reservation_and_weight_give_the_larger_not_the_sum():
    """a: reservation 200 IOPS and weight 1; b: weight 1. a's weight share (half) exceeds its
    reservation, so it gets half the capacity, not 200 + half of the rest."""
    clients = {"a": ClientQoS(reservation=200, weight=1), "b": ClientQoS(weight=1)}
    disc, _ = _run(clients, service=Deterministic(SERVICE_S), duration=2.0)
    served = [c for _t, c, _cost, _ph in disc.log][100:1900]
    assert served.count("a") / len(served) == pytest.approx(0.5, abs=0.02)


def test_service_in_the_weight_phase_counts_toward_the_reservation():
    """a (reservation 300, weight 1) is served alone at 1,000 IOPS for a second, mostly in the weight
    phase; then c (weight 10, no reservation) arrives backlogged. a's weight share is now 1/11 of the
    capacity, under its reservation: from the moment c arrives a must still get 300 IOPS. Without the
    credit of weight-phase service against reservation tags, a's tags would lie seconds ahead and the
    reservation would be missed."""
    clients = {"a": ClientQoS(reservation=300, weight=1), "c": ClientQoS(weight=10)}

    def sources(disk):
        a = ClosedSource("a", disk, FixedSampler(size=4096, span=10**9), workers=16, cls="a")
        c = OpenSource("c", disk, FixedSampler(size=4096, span=10**9), rate=5000.0, cls="c",
                       rate_scale=lambda t: 0.0 if t < 1.0 else 1.0, max_scale=1.0)  # fmt: skip
        return [a, c]

    disc, _ = _run(clients, sources=sources, service=Deterministic(SERVICE_S), duration=2.0)
    times = _dispatch_times(disc, "a")
    assert len(times[times < 1.0]) > 950  # alone, it had the whole device
    assert _min_in_windows(times, 0.1, 1.0, 2.0) >= 300 * 0.1 - 1


def test_a_tenant_back_from_idle_does_not_hoard():
    """b is idle for the first second while a is served alone; when b returns (equal weights) it gets its
    half from then on, plus O(1) IOs, not a second's worth of catch-up."""
    clients = {"a": ClientQoS(weight=1), "b": ClientQoS(weight=1)}

    def sources(disk):
        a = ClosedSource("a", disk, FixedSampler(size=4096, span=10**9), workers=16, cls="a")
        b = OpenSource("b", disk, FixedSampler(size=4096, span=10**9), rate=5000.0, cls="b",
                       rate_scale=lambda t: 0.0 if t < 1.0 else 1.0, max_scale=1.0)  # fmt: skip
        return [a, b]

    disc, _ = _run(clients, sources=sources, service=Deterministic(SERVICE_S), duration=1.2)
    after = [c for t, c, _cost, _ph in disc.log if t >= 1.0]
    first = after[:100]
    assert first.count("b") <= 50 + 3  # its weight share of the first 100 IOs after it returns, plus O(1)
    assert after.count("b") / len(after) == pytest.approx(0.5, abs=0.05)


def test_same_seed_same_dispatch_order():
    clients = {"a": ClientQoS(reservation=100, weight=2), "b": ClientQoS(limit=300), "c": ClientQoS(weight=1)}
    one, _ = _run(clients, seed=5, duration=0.5)
    two, _ = _run(clients, seed=5, duration=0.5)
    other, _ = _run(clients, seed=6, duration=0.5)
    assert one.log == two.log and one.log != other.log


def test_promise_broken_when_the_capacity_is_overestimated():
    """Reservations sized for a 2,000 IOPS device (sum 1,500: 75 % of the estimate) on a device that does
    1,000: the scheduler cannot create capacity, so a reservation is missed, as users report when the
    configured capacity is too high."""
    clients = {"a": ClientQoS(reservation=750), "b": ClientQoS(reservation=750)}
    disc, _ = _run(clients, service=Deterministic(SERVICE_S), duration=2.0)
    for name in ("a", "b"):
        got = len([t for t, c, *_ in disc.log if c == name and t >= 0.5]) / 1.5
        assert got < 0.7 * 750  # each gets about 500 of its 750


def test_promise_broken_by_io_that_bypasses_the_scheduler():
    """A reservation of 600 IOPS on a 1,000 IOPS device holds beside a weighted tenant, until background
    IO (a rebuild at 700 IOPS) is served ahead of the scheduler, as a high-priority queue that bypasses
    it: the reserved tenant then gets about what is left (300), as users report of background work that
    skips mClock."""
    clients = {"reserved": ClientQoS(reservation=600), "other": ClientQoS(weight=1)}

    def run(with_rebuild):
        disc = MClock(clients, record=True, bypass=("rebuild",))
        disk = Station("disk", Deterministic(SERVICE_S), servers=1, discipline=disc)
        srcs = [
            ClosedSource(n, disk, FixedSampler(size=4096, span=10**9), workers=16, cls=n) for n in clients
        ]
        if with_rebuild:
            srcs.append(
                OpenSource("rebuild", disk, FixedSampler(size=4096, span=10**9), rate=700.0, cls="rebuild")
            )
        res = simulate(disk, srcs, duration=2.0, warmup=0.5, seed=1, progress=False)
        return res.summary().filter(res.summary()["class"] == "reserved")["iops"][0]

    assert run(False) >= 600 and run(True) < 0.6 * 600


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="reservation"):
        ClientQoS(reservation=-1)
    with pytest.raises(ValueError, match="exceeds limit"):
        ClientQoS(reservation=200, limit=100)
    with pytest.raises(ValueError, match="at_limit"):
        MClock({}, at_limit="sometimes")


# -- token bucket --------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_token_bucket_bounds_every_window_by_rate_times_t_plus_burst(seed):
    """A VM limited to 200 IOPS with a burst of 20, beside an unlimited VM, on a 1,000 IOPS station: in
    any window the limited VM gets at most 200 T + 20 IOs; over the run it gets 200 IOPS; it starts with
    its burst; the other VM takes the rest."""
    from storagelab.qos import Bucket, TokenBucket

    disc = TokenBucket({"limited": Bucket(rate=200, burst=20)}, record=True)
    disk = Station("disk", Exponential(SERVICE_S), servers=1, discipline=disc)
    srcs = [
        ClosedSource(n, disk, FixedSampler(size=4096, span=10**9), workers=32, cls=n)
        for n in ("limited", "free")
    ]
    res = simulate(disk, srcs, duration=3.0, seed=seed, progress=False)
    times = np.array([t for t, c, _ in disc.log if c == "limited"])
    for window in (0.005, 0.05, 0.5):
        assert _max_in_windows(times, window, 0.0, 3.0) <= 200 * window + 20
    assert len(times) / 3.0 == pytest.approx(200 + 20 / 3.0, rel=0.02)
    assert len(times[times < 0.02]) >= 20  # the burst goes at once
    free = res.summary().filter(res.summary()["class"] == "free")["iops"][0]
    assert free > 700


def test_token_bucket_alone_waits_exactly_for_its_tokens():
    """Alone, with one token of burst and 100 IOPS, IOs leave exactly 10 ms apart: the station idles
    until the named next-eligible time, no sooner and no later."""
    from storagelab.qos import Bucket, TokenBucket

    disc = TokenBucket({"vm": Bucket(rate=100, burst=1)}, record=True)
    disk = Station("disk", Deterministic(SERVICE_S), servers=1, discipline=disc)
    src = ClosedSource("vm", disk, FixedSampler(size=4096, span=10**9), workers=4, cls="vm")
    simulate(disk, [src], duration=1.0, seed=1, progress=False)
    gaps = np.diff([t for t, _c, _ in disc.log][2:])
    assert np.allclose(gaps, 0.01, atol=1e-9)


def test_token_bucket_by_bytes_and_bad_settings():
    from storagelab.qos import Bucket, TokenBucket

    disc = TokenBucket({"vm": Bucket(rate=1e6, burst=65536)}, cost=lambda io: io.size, record=True)
    disk = Station("disk", Deterministic(SERVICE_S), servers=1, discipline=disc)
    src = ClosedSource("vm", disk, FixedSampler(size=65536, span=10**9), workers=4, cls="vm")
    res = simulate(disk, [src], duration=2.0, warmup=0.5, seed=1, progress=False)
    assert res.summary()["mb_per_s"][0] == pytest.approx(1.0, rel=0.05)  # 1 MB/s
    with pytest.raises(ValueError, match="rate > 0"):
        Bucket(rate=0)
    tiny = TokenBucket({"vm": Bucket(rate=1e6, burst=1000)}, cost=lambda io: io.size)
    disk2 = Station("disk", Deterministic(SERVICE_S), servers=1, discipline=tiny)
    src2 = ClosedSource("vm", disk2, FixedSampler(size=65536, span=10**9), workers=2, cls="vm")
    with pytest.raises(ValueError, match="never fit a burst"):
        simulate(disk2, [src2], duration=0.1, seed=1, progress=False)
