"""RAID layouts: member-IO counts, phases, byte conservation, parity rotation, spanning IOs, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from storagelab.components.raid import MemberOp, Raid0, Raid5, Raid6, Raid10, RaidStep
from storagelab.kernel import Environment

KIB = 1024
SU = 64 * KIB


def _ops(phases: list[RaidStep]) -> list[MemberOp]:
    return [op for phase in phases for op in phase.ops]


def _bytes(phases: list[RaidStep], is_read: bool) -> int:
    return sum(op.size for op in _ops(phases) if op.is_read == is_read)


# -- exact counts of the classic cases -----------------------------------------------------------


def test_raid5_small_write_is_read_modify_write_of_4_member_ios():
    layout = Raid5(5, SU)
    phases = layout.plan(False, 3 * SU + 8 * KIB, 4 * KIB)  # inside data unit 3 of stripe 0
    assert [p.join for p in phases] == ["all", "all"]
    reads, writes = phases
    assert all(op.is_read for op in reads.ops) and len(reads.ops) == 2
    assert not any(op.is_read for op in writes.ops) and len(writes.ops) == 2
    # stripe 0 of 5 members: parity on member 4, data unit 3 on member 3, both at offset 8 KiB
    assert set(reads.ops) == {MemberOp(3, True, 8 * KIB, 4 * KIB), MemberOp(4, True, 8 * KIB, 4 * KIB)}
    assert {(op.member, op.address, op.size) for op in writes.ops} == {
        (op.member, op.address, op.size) for op in reads.ops
    }
    assert layout.member_io_count(False, 3 * SU + 8 * KIB, 4 * KIB) == 4 == layout.write_penalty


def test_raid6_small_write_is_6_member_ios():
    layout = Raid6(6, SU)
    phases = layout.plan(False, 5 * KIB, 2 * KIB)  # stripe 0: P on member 5, Q on member 0, data 0 on 1
    assert len(phases) == 2
    assert set(phases[0].ops) == {
        MemberOp(1, True, 5 * KIB, 2 * KIB),
        MemberOp(5, True, 5 * KIB, 2 * KIB),
        MemberOp(0, True, 5 * KIB, 2 * KIB),
    }
    assert {op.member for op in phases[1].ops} == {0, 1, 5} and not any(op.is_read for op in phases[1].ops)
    assert layout.member_io_count(False, 5 * KIB, 2 * KIB) == 6 == layout.write_penalty


def test_raid10_write_goes_to_both_mirrors_in_one_phase():
    layout = Raid10(3, SU)
    phases = layout.plan(False, 4 * SU + KIB, 4 * KIB)  # unit 4 -> pair 1, row 1
    assert phases == [
        RaidStep("all", (MemberOp(2, False, SU + KIB, 4 * KIB), MemberOp(3, False, SU + KIB, 4 * KIB)))
    ]
    assert layout.member_io_count(False, 0, 4 * KIB) == 2 == layout.write_penalty


def test_raid10_alternate_reads_one_mirror_round_robin():
    layout = Raid10(2, SU, read_policy="alternate")
    members = []
    for _ in range(4):
        (phase,) = layout.plan(True, 0, 4 * KIB)
        assert phase.join == "all" and len(phase.ops) == 1
        members.append(phase.ops[0].member)
    assert members == [0, 1, 0, 1]
    # the other pair keeps its own turn
    (phase,) = layout.plan(True, SU, 4 * KIB)
    assert phase.ops[0].member == 2


def test_raid10_balanced_keeps_a_sequential_stream_on_one_mirror():
    """A sequential read stream stays on the member where the previous read ended, in every pair, so
    each drive streams (fails with the old round robin, which alternated the stream's IOs)."""
    layout = Raid10(2, SU)  # balanced is the default
    ops = [_ops(layout.plan(True, a, 16 * KIB))[0] for a in range(0, 4 * SU, 16 * KIB)]
    for pair in (0, 1):
        mine = [op for op in ops if op.member // 2 == pair]
        assert len({op.member for op in mine}) == 1, mine
        assert all(b.address == a.address + a.size for a, b in itertools.pairwise(mine))


def test_raid10_balanced_reads_the_member_with_fewer_outstanding_ios():
    layout = Raid10(2, SU)
    layout.pending[:] = [3, 0, 0, 5]
    assert _ops(layout.plan(True, 0, 4 * KIB))[0].member == 1
    assert _ops(layout.plan(True, SU, 4 * KIB))[0].member == 2
    # with equal queues, a read goes to the member whose last IO ended nearest it
    layout.reset()
    layout.plan(
        False, 8 * SU, 4 * KIB
    )  # unit 8: pair 0, member address 4 SU; both mirrors end at 4 SU + 4 KiB
    assert _ops(layout.plan(True, 8 * SU + 4 * KIB, 4 * KIB))[0].member == 0  # sequential on member 0
    assert _ops(layout.plan(True, 8 * SU + 32 * KIB, 4 * KIB))[0].member == 0  # 24 KiB from 0, 28 KiB from 1
    assert _ops(layout.plan(True, 2 * SU, 4 * KIB))[0].member == 1  # member address SU: nearer member 1


def test_raid10_reset_forgets_the_run():
    layout = Raid10(2, SU)
    layout.plan(True, 0, 4 * KIB)
    layout.pending[0] = 2
    layout.reset()
    assert layout.pending == [0, 0, 0, 0] and layout._end == [-1, -1, -1, -1]


def test_raid10_first_reads_both_mirrors_and_takes_the_first():
    layout = Raid10(2, SU, read_policy="first")
    assert layout.plan(True, SU + 512, 4 * KIB) == [
        RaidStep("any", (MemberOp(2, True, 512, 4 * KIB), MemberOp(3, True, 512, 4 * KIB)))
    ]
    # spanning two units: one "any" phase per unit
    phases = layout.plan(True, SU - KIB, 2 * KIB)
    assert [p.join for p in phases] == ["any", "any"]
    assert [{op.member for op in p.ops} for p in phases] == [{0, 1}, {2, 3}]


def test_raid0_one_member_io_per_stripe_unit_touched():
    layout = Raid0(4, SU)
    assert layout.member_io_count(True, 10 * KIB, 4 * KIB) == 1
    # from 8 KiB before the end of unit 2 to 8 KiB into unit 5: units 2, 3, 4, 5
    phases = layout.plan(False, 3 * SU - 8 * KIB, 2 * SU + 16 * KIB)
    assert phases == [
        RaidStep(
            "all",
            (
                MemberOp(2, False, SU - 8 * KIB, 8 * KIB),
                MemberOp(3, False, 0, SU),
                MemberOp(0, False, SU, SU),
                MemberOp(1, False, SU, 8 * KIB),
            ),
        )
    ]
    assert layout.write_penalty == 1


@pytest.mark.parametrize(
    "layout", [Raid0(4, SU), Raid10(3, SU), Raid10(2, SU, "first"), Raid5(5, SU), Raid6(6, SU)], ids=repr
)
def test_io_inside_one_stripe_unit_costs_the_write_penalty(layout):
    """The classic penalties: a write inside one unit costs write_penalty member IOs, a read costs one
    (both mirrors for a RAID-10 'first' read, of which one counts)."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        unit = int(rng.integers(0, 1000))
        off = int(rng.integers(0, SU // KIB)) * KIB
        size = int(rng.integers(1, (SU - off) // 512 + 1)) * 512
        address = unit * SU + off
        assert layout.member_io_count(False, address, size) == layout.write_penalty
        reads = layout.member_io_count(True, address, size)
        assert reads == (2 if getattr(layout, "read_policy", None) == "first" else 1)


# -- full-stripe writes --------------------------------------------------------------------------


@pytest.mark.parametrize(("cls", "members", "parity"), [(Raid5, 5, 1), (Raid6, 6, 2)])
def test_full_stripe_write_is_one_phase_with_no_reads(cls, members, parity):
    layout = cls(members, SU)
    stripe = 7
    phases = layout.plan(False, stripe * layout.stripe_width, layout.stripe_width)
    assert len(phases) == 1
    ops = phases[0].ops
    assert not any(op.is_read for op in ops)
    assert len(ops) == members
    assert sorted(op.member for op in ops) == list(range(members))
    assert all(op.address == stripe * SU and op.size == SU for op in ops)
    assert _bytes(phases, False) == layout.stripe_width + parity * SU  # data + parity units


def test_two_full_stripes_are_still_one_phase():
    layout = Raid5(4, SU)
    phases = layout.plan(False, 0, 2 * layout.stripe_width)
    assert len(phases) == 1 and len(phases[0].ops) == 8
    assert not any(op.is_read for op in phases[0].ops)


def test_mixed_full_and_partial_stripes():
    """Stripe 0 written in full, stripe 1 partly: the full-stripe writes go beside the RMW reads."""
    layout = Raid5(4, SU)  # 3 data units per stripe
    phases = layout.plan(False, 0, layout.stripe_width + 4 * KIB)
    first, second = phases
    full_writes = [op for op in first.ops if not op.is_read]
    rmw_reads = [op for op in first.ops if op.is_read]
    assert len(full_writes) == 4 and {op.address for op in full_writes} == {0}
    # stripe 1: parity on member 2, data unit 0 on member 3
    assert set(rmw_reads) == {MemberOp(3, True, SU, 4 * KIB), MemberOp(2, True, SU, 4 * KIB)}
    assert set(second.ops) == {MemberOp(3, False, SU, 4 * KIB), MemberOp(2, False, SU, 4 * KIB)}


# -- spanning IOs --------------------------------------------------------------------------------


def test_raid5_partial_write_spanning_units_reads_each_old_unit_and_the_covering_parity():
    layout = Raid5(5, SU)  # 4 data units per stripe
    address, size = SU - 4 * KIB, SU + 8 * KIB  # end of unit 0, all of unit 1, start of unit 2
    phases = layout.plan(False, address, size)
    reads, writes = phases
    data_reads = sorted((op.member, op.address, op.size) for op in reads.ops if op.member != 4)
    assert data_reads == [(0, SU - 4 * KIB, 4 * KIB), (1, 0, SU), (2, 0, 4 * KIB)]
    (parity,) = [op for op in reads.ops if op.member == 4]
    assert (parity.address, parity.size) == (0, SU)  # offsets 0..SU are all touched in some unit
    assert len(reads.ops) == len(writes.ops) == 4  # m = 3 data units + 1 parity, each phase
    assert _bytes(phases, False) - SU == size  # new data bytes = IO size (minus the parity write)


def test_raid5_write_spanning_two_stripes_partially_does_rmw_in_each():
    layout = Raid5(3, SU)  # 2 data units per stripe
    address = layout.stripe_width - 2 * KIB  # last 2 KiB of stripe 0, first 2 KiB of stripe 1
    phases = layout.plan(False, address, 4 * KIB)
    assert len(phases) == 2
    assert len(phases[0].ops) == len(phases[1].ops) == 4
    stripes = {op.address // SU for op in phases[0].ops}
    assert stripes == {0, 1}


@pytest.mark.parametrize("layout", [Raid0(3, SU), Raid5(4, SU), Raid6(5, SU)], ids=repr)
def test_reads_cover_exactly_the_requested_bytes(layout):
    """Map every member op of a read back to logical addresses: the pieces tile [address, end)."""
    rng = np.random.default_rng(2)
    k, su = layout.data_units, layout.stripe_unit
    # member -> (stripe -> logical data unit) from the data_member map (RAID-0: unit j on member j)
    back = {}
    for s in range(40):
        for j in range(k):
            m = layout.data_member(s, j) if hasattr(layout, "data_member") else j
            back[(m, s)] = s * k + j
    for _ in range(300):
        address = int(rng.integers(0, 30 * layout.stripe_width))
        size = int(rng.integers(1, 3 * layout.stripe_width))
        pieces = []
        for op in _ops(layout.plan(True, address, size)):
            s, off = divmod(op.address, su)
            assert off + op.size <= su  # no op crosses a stripe unit
            start = back[(op.member, s)] * su + off
            pieces.append((start, start + op.size))
        pieces.sort()
        assert pieces[0][0] == address and pieces[-1][1] == address + size
        assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces))


# -- byte conservation ---------------------------------------------------------------------------


def test_byte_conservation_raid0_and_raid10():
    rng = np.random.default_rng(3)
    r0, r10 = Raid0(5, SU), Raid10(4, SU)
    for _ in range(500):
        address = int(rng.integers(0, 10**9))
        size = int(rng.integers(1, 1_000_000))
        assert _bytes(r0.plan(False, address, size), False) == size
        assert _bytes(r0.plan(True, address, size), True) == size
        assert _bytes(r10.plan(False, address, size), False) == 2 * size
        assert _bytes(r10.plan(True, address, size), True) == size


# -- parity rotation -----------------------------------------------------------------------------


def test_raid5_left_symmetric_layout():
    """4 members, the Linux md left-symmetric table (D = data unit number, P = parity):

    stripe 0:  D0  D1  D2  P
    stripe 1:  D4  D5  P   D3
    stripe 2:  D8  P   D6  D7
    stripe 3:  P   D9  D10 D11
    stripe 4:  D12 D13 D14 P
    """
    layout = Raid5(4, SU)
    table = {
        0: (0, 1, 2, "P"),
        1: (4, 5, "P", 3),
        2: (8, "P", 6, 7),
        3: ("P", 9, 10, 11),
        4: (12, 13, 14, "P"),
    }
    for stripe, row in table.items():
        for member, cell in enumerate(row):
            if cell == "P":
                assert layout.parity_members(stripe) == (member,)
                # a small write in this stripe reads the parity from that member
                reads = layout.plan(False, stripe * layout.stripe_width, 512)[0].ops
                assert member in {op.member for op in reads}
            else:
                (op,) = layout.plan(True, cell * SU, 512)[0].ops
                assert (op.member, op.address) == (member, stripe * SU)


def test_raid6_parity_rotation():
    layout = Raid6(5, SU)
    assert [layout.parity_members(s) for s in range(6)] == [(4, 0), (3, 4), (2, 3), (1, 2), (0, 1), (4, 0)]
    # data follow Q: stripe 1 has P on 3, Q on 4, data units on 0, 1, 2
    assert [layout.data_member(1, j) for j in range(3)] == [0, 1, 2]


def test_parity_load_is_spread_over_all_members():
    """Over n consecutive stripes every member holds parity equally often (RAID-6: twice each)."""
    for layout in (Raid5(5, SU), Raid6(6, SU)):
        counts = np.zeros(layout.members, dtype=int)
        for s in range(layout.members * 10):
            for m in layout.parity_members(s):
                counts[m] += 1
        assert (counts == counts[0]).all()


# -- capacity and errors -------------------------------------------------------------------------


def test_usable_capacity_and_penalties():
    member = 10**12  # 1 TB
    units = member // SU
    assert Raid0(4, SU).usable_capacity(member) == 4 * units * SU
    assert Raid10(4, SU).usable_capacity(member) == 4 * units * SU  # 8 disks, 4 pairs
    assert Raid5(5, SU).usable_capacity(member) == 4 * units * SU
    assert Raid6(6, SU).usable_capacity(member) == 4 * units * SU
    assert [c.write_penalty for c in (Raid0, Raid10, Raid5, Raid6)] == [1, 2, 4, 6]
    assert Raid10(4, SU).members == 8
    with pytest.raises(ValueError, match="member_capacity"):
        Raid5(5, SU).usable_capacity(SU - 1)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Raid0(1, SU), "members must be an integer >= 2"),
        (lambda: Raid5(2, SU), "members must be an integer >= 3"),
        (lambda: Raid6(3, SU), "members must be an integer >= 4"),
        (lambda: Raid10(0, SU), "mirror_pairs must be an integer >= 1"),
        (lambda: Raid5(4, 0), "stripe_unit must be an integer >= 1"),
        (lambda: Raid0(4, 65536.0), "stripe_unit must be an integer"),
        (
            lambda: Raid10(2, SU, read_policy="fastest"),
            "read_policy must be one of balanced, alternate, first",
        ),
    ],
)
def test_bad_geometry_is_an_error_naming_the_parameter(build, message):
    with pytest.raises(ValueError, match=message):
        build()


@pytest.mark.parametrize(
    ("args", "message"),
    [((True, 0, 0), "size must be"), ((True, -1, 512), "address must be"), ((1, 0, 512), "is_read must be")],
)
def test_bad_io_is_an_error(args, message):
    for layout in (Raid0(2, SU), Raid10(1, SU), Raid5(3, SU), Raid6(4, SU)):
        with pytest.raises(ValueError, match=message):
            layout.plan(*args)


def test_a_raid0_set_sends_each_io_where_the_layout_plans_it():
    """A RAID-0 set maps IOs inside one stripe unit by arithmetic instead of asking Raid0.plan: every
    member IO (member, op, address, size) is what the plan names, for IOs inside a unit, at its edges and
    across units, reads and writes."""
    from storagelab.components.raid_set import RaidSet
    from storagelab.kernel import Component, IORequest
    from storagelab.kernel.component import RunContext, completion_in
    from storagelab.kernel.randomness import RandomStreams

    seen: list[tuple[int, bool, int, int]] = []

    class Member(Component):
        def __init__(self, k: int) -> None:
            super().__init__(f"member {k}")
            self.k = k

        def submit(self, io):
            seen.append((self.k, io.is_read, io.address, io.size))
            return completion_in(self.env, 0.001, io)

    layout = Raid0(4, 64 * 1024)
    raid = RaidSet("stripe", layout, [Member(k) for k in range(4)])
    raid.bind(RunContext(Environment(), RandomStreams(1)))
    rng = np.random.default_rng(5)
    reads, addresses = rng.integers(0, 2, 300), rng.integers(0, 2**24, 300)
    sizes = rng.choice([512, 4096, 65536, 200_000], 300)
    ios = [(bool(r), int(a), int(s)) for r, a, s in zip(reads, addresses, sizes, strict=True)]
    ios += [(True, 64 * 1024 - 4096, 4096), (False, 64 * 1024 - 4096, 8192), (True, 4 * 64 * 1024, 64 * 1024)]
    for is_read, address, size in ios:
        seen.clear()
        raid.submit(IORequest(is_read, size, address))
        planned = [(op.member, op.is_read, op.address, op.size) for step in layout.plan(is_read, address, size)
                   for op in step.ops]  # fmt: skip
        assert seen == planned, (is_read, address, size)


def test_a_raid_set_counts_completions_as_their_events_were_processed():
    """Completions of one-member IOs on timed members are counted at the window's ends from their times:
    those before the stop (processed), not one due exactly at it, the same count as a callback on each
    completion event; the warm-up's are forgotten at the reset, and a long run keeps the list short."""
    from storagelab.components import raid
    from storagelab.components.raid_set import _COUNT_AT, RaidSet
    from storagelab.kernel import Deterministic, IORequest, RunContext, Station
    from storagelab.kernel.event_loop import run_until
    from storagelab.kernel.randomness import RandomStreams

    env = Environment()
    members = [Station(f"d{i}", Deterministic(0.25)) for i in range(2)]
    rs = RaidSet("r0", raid.Raid0(2, 4096), members)
    rs.bind(RunContext(env=env, streams=RandomStreams(1)))
    processed = []
    for k in range(8):  # at 0: eight IOs on member 0 (even units), done at 0.25, 0.5, ..., 2.0
        rs.submit(IORequest(True, 4096, 2 * k * 4096)).callbacks.append(lambda e: processed.append(env.now))
    run_until(env, 0.6)  # 0.25 and 0.5 done: warm-up
    rs.reset_stats()
    run_until(env, 1.5)  # 0.75, 1.0 and 1.25 processed; the one due at 1.5 waits for the next call
    assert rs.stats(1.0)["completed"] == 3 == len([t for t in processed if t > 0.6])
    run_until(env, 3.0)
    assert rs.stats(2.4)["completed"] == 6 == rs.stats(2.4)["member_ios"]
    for _ in range(3 * _COUNT_AT):  # a long run: counted as it goes, so the list stays under _COUNT_AT long
        rs.submit(IORequest(True, 4096, 4096))
        run_until(env, env.now + 1.0)
    assert len(rs._single_ends) < _COUNT_AT
    assert rs.stats(1.0)["completed"] == 6 + 3 * _COUNT_AT  # each done 0.25 s after it was submitted


def test_a_raid_set_gives_a_device_station_the_member_address_and_leaves_the_io_as_it_was():
    """A one-unit IO on a RAID-0 of device stations reaches its member at the member's address (the device
    checks that address against its capacity) and comes back with the address it was submitted at."""
    import pytest

    from storagelab.components import raid
    from storagelab.components.raid_set import RaidSet
    from storagelab.devices import SSD, CapacityExceeded
    from storagelab.kernel import IORequest, RunContext, Station
    from storagelab.kernel.randomness import RandomStreams
    from storagelab.provenance import Param

    base = SSD.preset("SATA SSD")
    keys = ("read_latency", "write_latency", "read_bandwidth", "write_bandwidth", "parallelism")
    small = Param(16, "KiB", "document", "this test: four 4 KiB stripe units")
    env = Environment()
    members = [Station(f"ssd{i}", SSD(f"ssd{i}", **{k: base.params[k] for k in keys}, capacity=small))
               for i in range(2)]  # fmt: skip
    rs = RaidSet("r0", raid.Raid0(2, 4096), members)
    rs.bind(RunContext(env=env, streams=RandomStreams(1)))
    assert rs._reads_fields == [True, True]
    io = IORequest(True, 4096, 7 * 4096)  # unit 7: member 1, its unit 3 (at 12288, inside 16 KiB)
    done = []
    rs.submit(io).callbacks.append(lambda e: done.append(e.value.address))
    env.run(until=1.0)
    assert done == [7 * 4096] and members[1].stats(1.0)["completed"] == 1.0
    with pytest.raises(CapacityExceeded, match=r"\[16384, 20480\)"):  # unit 9: member 1, its unit 4
        rs.submit(IORequest(True, 4096, 9 * 4096))
