"""A RAID set: a layout (:mod:`storagelab.components.raid`) mapping each IO onto member components.

The layout returns the member IOs in phases (a RAID-5 small write reads old data and parity, then
writes new data and parity); ops in a phase run in parallel and the phase completes when all of them
(or, for a read served by either mirror, the first) complete; phases run in sequence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import cast

from storagelab.components.raid import Raid0, Raid10, RaidLayout
from storagelab.kernel.component import Component, EventLike, Signal, TimedComponent, completion_at, fire
from storagelab.kernel.composition import join_all, join_first
from storagelab.kernel.io import IORequest
from storagelab.kernel.service import CarriedTime
from storagelab.kernel.station import Station

#: The fewest completion times a RAID set holds before counting those that have passed.
_COUNT_AT = 4096


class _Phases:
    """Drives one IO's phases: submits a phase's member IOs, then the next phase when it joins."""

    __slots__ = ("done", "i", "io", "phases", "raid")

    def __init__(self, raid: RaidSet, io: IORequest, phases: list, done: EventLike) -> None:
        self.raid, self.io, self.phases, self.done, self.i = raid, io, phases, done, 0

    def start(self) -> None:
        phase = self.phases[self.i]
        raid = self.raid
        members, io = raid.members, self.io
        parts = [
            members[op.member].submit(io.child(size=op.size, address=op.address, is_read=op.is_read))
            for op in phase.ops
        ]
        pending = raid.pending
        if pending is not None:  # the layout balances reads on the members' outstanding IOs
            for op, ev in zip(phase.ops, parts, strict=True):
                pending[op.member] += 1
                ev.callbacks.append(raid.done_callbacks[op.member])
        if len(parts) == 1:  # one op: the phase completes with it ("all" and "any" alike)
            parts[0].callbacks.append(self._phase_done)
            return
        join = join_first if phase.join == "any" else join_all
        join(self.raid.env, parts, io).callbacks.append(self._phase_done)

    def _phase_done(self, _ev: EventLike) -> None:
        self.i += 1
        if self.i == len(self.phases):
            raid = self.raid
            raid.completed += 1  # counted on completion, so member_ios / completed is exact
            raid.member_ios += sum(len(p.ops) for p in self.phases)
            fire(self.done, self.io)
        else:
            self.start()


class RaidSet(Component):
    """Member components (drives, or anything else) behind a RAID layout.

    ``layout`` is a :mod:`storagelab.components.raid` layout (``Raid0``, ``Raid10``, ``Raid5``, ``Raid6``) whose
    member count must equal ``len(members)``.
    """

    def __init__(self, name: str, layout: RaidLayout, members: Sequence[Component]) -> None:
        super().__init__(name)
        n = getattr(layout, "members", None)
        n = n if isinstance(n, int) else getattr(layout, "member_count", None)
        if n is not None and n != len(members):
            raise ValueError(
                f"RAID set {name!r}: layout has {n} members but {len(members)} components were given"
            )
        self.layout, self.members = layout, list(members)
        self.pending: list[int] | None = None
        self.reset_stats()

    def on_bind(self) -> None:
        # members that can say at arrival when an IO completes (FIFO stations on their fast path)
        self._timed = [
            cast(TimedComponent, m).submit_timed if getattr(m, "timed", False) else None for m in self.members
        ]
        # of those, the stations whose fast path reads an IO's fields when it arrives and keeps nothing of it
        # (a device model or a distribution): they can be given the IO itself at the member's address, for
        # the call, instead of a member IO made for it
        self._reads_fields = [
            isinstance(m, Station) and m.fast and not isinstance(m.service_source, CarriedTime)
            for m in self.members
        ]
        # RAID-0 maps an IO inside one stripe unit onto one member by arithmetic alone: the stripe unit
        # and data units per stripe, for submit() to do what Raid0.plan() would without building a plan
        self._unit = (self.layout.stripe_unit, self.layout.data_units) if type(self.layout) is Raid0 else None
        # a layout with per-run state (RAID-10's read balance) starts each run afresh
        reset = getattr(self.layout, "reset", None)
        if reset is not None:
            reset()
        if getattr(self.layout, "tracks_pending", False):
            self.pending = cast(Raid10, self.layout).pending  # the layout that tracks them
            self.done_callbacks = [partial(self._member_done, m) for m in range(len(self.members))]
        # completion times of the IOs served by one timed member, not yet counted (see _count_single)
        self._single_ends: list[float] = []
        self._count_at = _COUNT_AT

    def _member_done(self, member: int, _ev: EventLike) -> None:
        self.pending[member] -= 1  # type: ignore[index]  # a callback only where the layout tracks them

    def children(self) -> list[Component]:
        return self.members

    def reset_stats(self) -> None:
        if self.ctx is not None:  # the IOs that completed before now belong to the warm-up
            self._count_single(self.env._now)
        self.ios = 0  # submitted
        self.completed = 0
        self.member_ios = 0  # member IOs of the completed IOs

    def _count_single(self, now: float) -> None:
        """Count as completed the IOs served by one timed member whose completion event has been processed
        by ``now`` (its time is before ``now``: the run stops at ``now`` before the events due then), as a
        callback on each would have counted them, and keep the others; count again when the list has
        doubled (at least :data:`_COUNT_AT` long). A callback per IO would cost a call and an append."""
        ends = self._single_ends
        left = [t for t in ends if t >= now]
        n = len(ends) - len(left)
        self.completed += n
        self.member_ios += n
        self._single_ends = left
        self._count_at = max(_COUNT_AT, 2 * len(left))

    def submit(self, io: IORequest) -> EventLike:
        done = self.arrive(io)
        return completion_at(self.env, done, io) if isinstance(done, float) else done

    def timed_entry(self) -> Callable[[IORequest], EventLike | float]:
        """What a caller that wakes at a completion time calls per IO: :meth:`arrive`."""
        return self.arrive

    def arrive(self, io: IORequest) -> EventLike | float:
        """Accept ``io``: the time (s) it completes where one timed member serves it (nothing scheduled),
        else its event."""
        self.ios += 1
        unit = self._unit
        if unit is not None:  # RAID-0: Raid0.plan's one-unit case, inline (the IO was checked at its source)
            su, k = unit
            u, off = divmod(io.address, su)
            if off + io.size <= su:
                s, member = divmod(u, k)
                if self._reads_fields[member]:  # _one_member's timed case, with the IO itself at the member
                    now, address = self.env._now, io.address
                    io.address = s * su + off
                    at = now + (self._timed[member](io) - now)  # type: ignore[misc]  # a field-reading member is timed
                    io.address = address
                    ends = self._single_ends
                    ends.append(at)
                    if len(ends) >= self._count_at:
                        self._count_single(now)
                    return at
                return self._one_member(io, member, io.child(address=s * su + off))
        phases = self.layout.plan(io.is_read, io.address, io.size)
        if len(phases) == 1 and len(ops := phases[0].ops) == 1 and self.pending is None:
            # one member IO (a small IO on a stripe): what _Phases does for it, without its bookkeeping
            op = ops[0]
            member_io = io.child(size=op.size, address=op.address, is_read=op.is_read)
            return self._one_member(io, op.member, member_io)
        done = Signal(self.env)
        _Phases(self, io, phases, done).start()
        return done

    def _one_member(self, io: IORequest, member: int, member_io: IORequest) -> EventLike | float:
        """``io`` served by one IO on one member: the member's completion is the IO's (its time, where the
        member is timed)."""
        timed = self._timed[member]
        if timed is not None:  # the member says now when it completes: its event is this IO's
            now = self.env._now
            at = now + (timed(member_io) - now)  # as the member's event would be
            ends = self._single_ends
            ends.append(at)  # counted as completed once the run is past it
            if len(ends) >= self._count_at:
                self._count_single(now)
            return at
        done = Signal(self.env)
        self.members[member].submit(member_io).callbacks.append(partial(self._single_done, io, done))
        return done

    def _single_done(self, io: IORequest, done: EventLike, _ev: EventLike) -> None:
        self.completed += 1
        self.member_ios += 1
        fire(done, io)

    def stats(self, elapsed: float) -> dict[str, float]:
        self._count_single(self.env._now)
        return {
            "ios": float(self.ios),
            "completed": float(self.completed),
            "member_ios": float(self.member_ios),
            "member_ios_per_io": self.member_ios / self.completed if self.completed else 0.0,
        }
