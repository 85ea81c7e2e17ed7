"""mClock's promises beyond the ones every scheduler shares (floors, caps, hold-back and determinism are in
test_qos_conformance.py): weight shares, max not sum, credit for weight-phase service, no hoarding, and
what happens to a promise the device cannot keep; the token bucket's rate and burst. Runs on the QoS
harness (the ``qos`` fixture, conftest.py): one disk-like station, 1 ms per IO (1,000 IOPS)."""

from __future__ import annotations

import pytest

from storagelab.analysis.promises import window_counts
from storagelab.kernel import ClosedSource, Deterministic, FixedSampler, OpenSource
from storagelab.qos import Bucket, ClientQoS, MClock, TokenBucket

SERVICE_S = 1e-3  # one server at 1 ms per IO: capacity 1,000 IOPS (cost 1 per IO)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_weights_share_the_capacity(qos, seed):
    """Weights 1:2:5, no reservation or limit, all backlogged: shares 1/8, 2/8, 5/8 within 2 % over
    1,000 IOs."""
    clients = {"w1": ClientQoS(weight=1), "w2": ClientQoS(weight=2), "w5": ClientQoS(weight=5)}
    served = qos.station(MClock(clients), seed=seed, duration=1.6).order()[
        200:1200
    ]  # once all are backlogged
    for name, w in (("w1", 1), ("w2", 2), ("w5", 5)):
        assert served.count(name) / 1000 == pytest.approx(w / 8, abs=0.02), name


def test_reservation_and_weight_give_the_larger_not_the_sum(qos):
    """a: reservation 200 IOPS and weight 1; b: weight 1. a's weight share (half) exceeds its
    reservation, so it gets half the capacity, not 200 + half of the rest."""
    clients = {"a": ClientQoS(reservation=200, weight=1), "b": ClientQoS(weight=1)}
    served = qos.station(MClock(clients), service=Deterministic(SERVICE_S), duration=2.0).order()[100:1900]
    assert served.count("a") / len(served) == pytest.approx(0.5, abs=0.02)


def _joins_at_one_second(qos, name):
    """``name`` arrives backlogged (open, 5,000 IO/s) at t = 1 s."""

    def load(disk):
        a = ClosedSource("a", disk, qos.sampler, workers=16, cls="a")
        late = OpenSource(name, disk, qos.sampler, rate=5000.0, cls=name,
                          rate_scale=lambda t: 0.0 if t < 1.0 else 1.0, max_scale=1.0)  # fmt: skip
        return [a, late]

    return load


def test_service_in_the_weight_phase_counts_toward_the_reservation(qos):
    """a (reservation 300, weight 1) is served alone at 1,000 IOPS for a second, mostly in the weight
    phase; then c (weight 10, no reservation) arrives backlogged. a's weight share is now 1/11 of the
    capacity, under its reservation: from the moment c arrives a must still get 300 IOPS. Without the
    credit of weight-phase service against reservation tags, a's tags would lie seconds ahead and the
    reservation would be missed."""
    clients = {"a": ClientQoS(reservation=300, weight=1), "c": ClientQoS(weight=10)}
    run = qos.station(
        MClock(clients), _joins_at_one_second(qos, "c"), service=Deterministic(SERVICE_S), duration=2.0
    )
    times = run.times("a")
    assert len(times[times < 1.0]) > 950  # alone, it had the whole device
    assert window_counts(times, 0.1, 1.0, 2.0, align="floor").min() >= 300 * 0.1 - 1


def test_a_tenant_back_from_idle_does_not_hoard(qos):
    """b is idle for the first second while a is served alone; when b returns (equal weights) it gets its
    half from then on, plus O(1) IOs, not a second's worth of catch-up."""
    clients = {"a": ClientQoS(weight=1), "b": ClientQoS(weight=1)}
    run = qos.station(
        MClock(clients), _joins_at_one_second(qos, "b"), service=Deterministic(SERVICE_S), duration=1.2
    )
    after = run.order(1.0)
    assert (
        after[:100].count("b") <= 50 + 3
    )  # its weight share of the first 100 IOs after it returns, plus O(1)
    assert after.count("b") / len(after) == pytest.approx(0.5, abs=0.05)


def test_reservations_the_device_cannot_carry_split_it_evenly_and_use_all_of_it(qos):
    """Reservations sized for a 2,000 IOPS device (750 each) on a device that does 1,000, as when the
    configured capacity is too high: the scheduler cannot create capacity, so neither reservation can
    hold; what it does instead is the property: two tenants with the same settings and load get the
    same service, and the device is not left idle (together they get all 1,000 IOPS)."""
    clients = {"a": ClientQoS(reservation=750), "b": ClientQoS(reservation=750)}
    run = qos.station(MClock(clients), service=Deterministic(SERVICE_S), duration=2.0, warmup=0.5)
    a, b = run.iops("a"), run.iops("b")
    assert a + b == pytest.approx(1 / SERVICE_S, rel=0.01)
    assert a == pytest.approx(b, rel=0.02)


def test_io_that_bypasses_the_scheduler_comes_first_and_the_reservation_gets_the_rest(qos):
    """A reservation of 600 IOPS on a 1,000 IOPS device holds beside a weighted tenant; background IO (a
    rebuild at 700 IOPS) served ahead of the scheduler, as a high-priority queue that bypasses it, is
    served in full, and the reserved tenant, whose tags are then always due, gets all that is left (the
    weighted tenant nothing): about 300, as users report of background work that skips mClock."""
    clients = {"reserved": ClientQoS(reservation=600), "other": ClientQoS(weight=1)}

    def run(rebuild_iops):
        def load(disk):
            srcs = [ClosedSource(n, disk, qos.sampler, workers=16, cls=n) for n in clients]
            if rebuild_iops:
                srcs.append(OpenSource("rebuild", disk, qos.sampler, rate=rebuild_iops, cls="rebuild"))
            return srcs

        disc = MClock(clients, bypass=("rebuild",))
        return qos.station(disc, load, service=Deterministic(SERVICE_S), duration=2.0, warmup=0.5)

    assert run(0.0).iops("reserved") >= 600
    with_rebuild = run(700.0)
    rebuild = with_rebuild.iops("rebuild")
    assert rebuild == pytest.approx(700, rel=0.03)  # served in full (Poisson arrivals)
    assert with_rebuild.iops("reserved") == pytest.approx(1 / SERVICE_S - rebuild, rel=0.01)
    assert with_rebuild.iops("other") == 0


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="reservation"):
        ClientQoS(reservation=-1)
    with pytest.raises(ValueError, match="exceeds limit"):
        ClientQoS(reservation=200, limit=100)
    with pytest.raises(ValueError, match="at_limit"):
        MClock({}, at_limit="sometimes")


# -- token bucket --------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_token_bucket_delivers_its_rate_plus_its_burst(qos, seed):
    """A VM limited to 200 IOPS with a burst of 20, beside an unlimited VM, on a 1,000 IOPS station (the
    window bound is in test_qos_conformance.py): over the run it gets 200 T + 20 IOs, its burst at once,
    and the other VM takes the rest."""
    run = qos.station(
        TokenBucket({"limited": Bucket(rate=200, burst=20)}), {"limited": 32, "free": 32}, seed=seed
    )
    times = run.times("limited")
    assert len(times) / 3.0 == pytest.approx(200 + 20 / 3.0, rel=0.02)
    assert len(times[times < 0.02]) >= 20  # the burst goes at once
    assert run.iops("free") > 700


def test_token_bucket_by_bytes_and_bad_settings(qos):
    disc = TokenBucket({"vm": Bucket(rate=1e6, burst=65536)}, cost=lambda io: io.size)
    sampler = FixedSampler(size=65536, span=10**9)

    def load(disk):
        return [ClosedSource("vm", disk, sampler, workers=4, cls="vm")]

    run = qos.station(disc, load, service=Deterministic(SERVICE_S), duration=2.0, warmup=0.5)
    assert run.result.summary()["mb_per_s"][0] == pytest.approx(1.0, rel=0.05)  # 1 MB/s
    with pytest.raises(ValueError, match="rate > 0"):
        Bucket(rate=0)
    tiny = TokenBucket({"vm": Bucket(rate=1e6, burst=1000)}, cost=lambda io: io.size)
    with pytest.raises(ValueError, match="never fit a burst"):
        qos.station(tiny, lambda disk: [ClosedSource("vm", disk, sampler, workers=2, cls="vm")], duration=0.1)
