"""RAID layouts: how one IO to an array becomes IOs to its member disks, by stripe geometry.

A layout's :meth:`~RaidLayout.plan` turns ``(is_read, address, size)`` (bytes, on the array's logical
address space) into a list of :class:`RaidStep`: steps run one after another, the :class:`MemberOp` in a
step run in parallel, and a step is complete when ``all`` its ops are (or, with join ``"any"``, when
the first one is). Member addresses are byte offsets on the member disk.

Geometry: the logical space is cut into stripe units of ``stripe_unit`` bytes (the "chunk"); a stripe
is one unit on each member. RAID-5 and RAID-6 rotate parity left-symmetrically (the Linux md default):
in stripe ``s`` of an ``n``-member array, P sits on member ``n - 1 - s mod n``, Q (RAID-6) on the next
member, and the data units follow, wrapping round, so consecutive data units visit every member.

Writes to RAID-5/6: a stripe whose data units are all written in full is a full-stripe write (data and
parity written in one phase, nothing read); any other touched stripe is updated by read-modify-write
(phase 1 reads the old data and old parity, phase 2 writes the new), the classic small-write penalty.
When one IO has both, full-stripe writes go in phase 1 beside the reads. Reconstruct-write (reading
the untouched units instead) and degraded mode are not modelled.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Join = Literal["all", "any"]


class MemberOp(NamedTuple):
    """One IO to member disk ``member`` (0-based): a read or write of ``size`` bytes at ``address``
    (bytes, on the member)."""

    member: int
    is_read: bool
    address: int
    size: int


class RaidStep(NamedTuple):
    """A set of member IOs issued together; complete when ``all`` are done, or the first (``any``)."""

    join: Join
    ops: tuple[MemberOp, ...]


def _positive_int(name: str, value: object, minimum: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum} ({what}), got {value!r}")
    return value


def _check_io(is_read: object, address: int, size: int) -> None:
    if not isinstance(is_read, bool):
        raise ValueError(f"is_read must be True or False, got {is_read!r}")
    if isinstance(address, bool) or not isinstance(address, int) or address < 0:
        raise ValueError(f"address must be an integer >= 0 bytes, got {address!r}")
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError(f"size must be an integer > 0 bytes, got {size!r}")


class RaidLayout:
    """Common geometry: ``members`` disks, ``data_units`` data stripe units per stripe, ``stripe_unit``
    bytes per unit. Subclasses define the mapping and :meth:`plan`."""

    level: str = ""
    write_penalty: int = 1
    members: int
    data_units: int
    stripe_unit: int

    @property
    def stripe_width(self) -> int:
        """Data bytes in one full stripe (``data_units * stripe_unit``)."""
        return self.data_units * self.stripe_unit

    def usable_capacity(self, member_capacity: int) -> int:
        """Array capacity (bytes) from members of ``member_capacity`` bytes (whole stripe units only)."""
        _positive_int("member_capacity", member_capacity, self.stripe_unit, "bytes, at least one stripe unit")
        return member_capacity // self.stripe_unit * self.stripe_width

    def plan(self, is_read: bool, address: int, size: int) -> list[RaidStep]:
        """The member IOs that serve one array IO, phase by phase."""
        raise NotImplementedError

    def member_io_count(self, is_read: bool, address: int, size: int) -> int:
        """How many member IOs :meth:`plan` issues for this IO (every op of every phase)."""
        return sum(len(p.ops) for p in self.plan(is_read, address, size))

    def _segments(self, address: int, size: int) -> list[tuple[int, int, int, int]]:
        """``(stripe, data unit j, offset in unit, length)`` for each stripe unit the IO touches."""
        su, k = self.stripe_unit, self.data_units
        out = []
        u, off = divmod(address, su)
        while size > 0:
            n = su - off if su - off < size else size
            s, j = divmod(u, k)
            out.append((s, j, off, n))
            size -= n
            u += 1
            off = 0
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(members={self.members}, stripe_unit={self.stripe_unit})"


class Raid0(RaidLayout):
    """Striping without redundancy over ``members`` disks: unit ``u`` on member ``u mod n``."""

    level = "RAID-0"
    write_penalty = 1

    def __init__(self, members: int, stripe_unit: int) -> None:
        self.members = _positive_int("members", members, 2, "RAID-0 stripes over at least 2 disks")
        self.stripe_unit = _positive_int("stripe_unit", stripe_unit, 1, "bytes")
        self.data_units = self.members

    def plan(self, is_read: bool, address: int, size: int) -> list[RaidStep]:
        """One phase: one op per stripe unit touched."""
        _check_io(is_read, address, size)
        su = self.stripe_unit
        u, off = divmod(address, su)
        if off + size <= su:  # within one stripe unit (most small IOs): one op, no segment walk
            s, j = divmod(u, self.data_units)
            return [RaidStep("all", (MemberOp(j, is_read, s * su + off, size),))]
        ops = tuple(MemberOp(j, is_read, s * su + off, n) for s, j, off, n in self._segments(address, size))
        return [RaidStep("all", ops)]


class Raid10(RaidLayout):
    """Striping over ``mirror_pairs`` mirrored pairs; pair ``i`` is members ``2i`` and ``2i + 1``.

    Writes go to both mirrors (one phase). Reads go to one mirror of each unit touched, chosen by
    ``read_policy``:

    - ``"balanced"`` (default), as Linux md's RAID-1 ``read_balance`` and array controllers do: a read
      that starts where a member's last IO ended continues on that member (a sequential stream stays on
      one drive, which then streams instead of paying a seek and a rotation per IO) unless that member
      has more than one IO outstanding beyond the other (the positioning a continuation saves is about
      one random IO's service, so a deeper queue costs more than it saves, and a deep sequential stream
      spreads over both mirrors); otherwise the member with fewer IOs outstanding (:attr:`pending`, kept
      by the :class:`~storagelab.components.raid_set.RaidSet`); on a tie, the member whose last IO ended
      nearest the read;
    - ``"alternate"``: round robin per pair, whatever the members' queues (the pre-0.3 default, kept for
      comparison);
    - ``"first"``: both mirrors are read and the first to finish serves the read (join ``"any"``). A read
      spanning several stripe units becomes one ``"any"`` phase per unit, in sequence (the phase
      structure cannot say "all units, any mirror"), which overstates the latency of such reads.

    The layout's per-run state (:meth:`reset`) is reset by the RAID set when it is bound to a run.
    """

    level = "RAID-10"
    write_penalty = 2
    READ_POLICIES = ("balanced", "alternate", "first")

    def __init__(self, mirror_pairs: int, stripe_unit: int, read_policy: str = "balanced") -> None:
        self.mirror_pairs = _positive_int("mirror_pairs", mirror_pairs, 1, "1 pair is a plain mirror")
        self.stripe_unit = _positive_int("stripe_unit", stripe_unit, 1, "bytes")
        if read_policy not in self.READ_POLICIES:
            raise ValueError(
                f"read_policy must be one of {', '.join(self.READ_POLICIES)}, got {read_policy!r}"
            )
        self.read_policy = read_policy
        self.members = 2 * self.mirror_pairs
        self.data_units = self.mirror_pairs
        self.reset()

    def reset(self) -> None:
        """Forget the per-run state: the round-robin position, each member's last IO end and its count
        of outstanding IOs."""
        self._next_mirror = [0] * self.mirror_pairs
        self._end = [-1] * self.members  # member byte address right after its last IO (-1: none yet)
        #: IOs outstanding per member; the RAID set counts them while ``read_policy == "balanced"``.
        self.pending = [0] * self.members

    @property
    def tracks_pending(self) -> bool:
        """Whether the reads' member choice uses :attr:`pending` (the RAID set then keeps it)."""
        return self.read_policy == "balanced"

    def _balanced(self, pair: int, address: int) -> int:
        a, b = 2 * pair, 2 * pair + 1
        end, pending = self._end, self.pending
        if end[a] == address and pending[a] <= pending[b] + 1:
            return a
        if end[b] == address and pending[b] <= pending[a] + 1:
            return b
        if pending[a] != pending[b]:
            return a if pending[a] < pending[b] else b
        return a if abs(end[a] - address) <= abs(end[b] - address) else b

    def plan(self, is_read: bool, address: int, size: int) -> list[RaidStep]:
        """Writes: both mirrors of every unit touched, one phase. Reads: see the class docstring."""
        _check_io(is_read, address, size)
        su = self.stripe_unit
        segs = self._segments(address, size)
        end = self._end
        if not is_read:
            ops = []
            for s, i, off, n in segs:
                a = s * su + off
                ops.append(MemberOp(2 * i, False, a, n))
                ops.append(MemberOp(2 * i + 1, False, a, n))
                end[2 * i] = end[2 * i + 1] = a + n
            return [RaidStep("all", tuple(ops))]
        if self.read_policy == "first":
            return [
                RaidStep(
                    "any",
                    (MemberOp(2 * i, True, s * su + off, n), MemberOp(2 * i + 1, True, s * su + off, n)),
                )
                for s, i, off, n in segs
            ]
        ops = []
        if self.read_policy == "balanced":
            for s, i, off, n in segs:
                a = s * su + off
                m = self._balanced(i, a)
                end[m] = a + n
                ops.append(MemberOp(m, True, a, n))
            return [RaidStep("all", tuple(ops))]
        nxt = self._next_mirror
        for s, i, off, n in segs:
            m = nxt[i]
            nxt[i] = 1 - m
            ops.append(MemberOp(2 * i + m, True, s * su + off, n))
        return [RaidStep("all", tuple(ops))]

    def __repr__(self) -> str:
        return f"Raid10(mirror_pairs={self.mirror_pairs}, stripe_unit={self.stripe_unit}, read_policy={self.read_policy!r})"


class _ParityRaid(RaidLayout):
    """RAID-5/6: ``parity`` parity units per stripe, rotated left-symmetrically."""

    parity: int = 1

    def __init__(self, members: int, stripe_unit: int) -> None:
        low = self.parity + 2
        self.members = _positive_int("members", members, low, f"{self.level} needs at least {low} disks")
        self.stripe_unit = _positive_int("stripe_unit", stripe_unit, 1, "bytes")
        self.data_units = self.members - self.parity

    def parity_members(self, stripe: int) -> tuple[int, ...]:
        """The members holding the parity of ``stripe``: ``(P,)`` for RAID-5, ``(P, Q)`` for RAID-6."""
        n = self.members
        p = n - 1 - stripe % n
        return tuple((p + i) % n for i in range(self.parity))

    def data_member(self, stripe: int, j: int) -> int:
        """The member holding data unit ``j`` (0-based, ``< data_units``) of ``stripe``."""
        n = self.members
        return (n - 1 - stripe % n + self.parity + j) % n

    def plan(self, is_read: bool, address: int, size: int) -> list[RaidStep]:
        """Reads: one op per unit touched. Writes: full-stripe writes and read-modify-write (module doc)."""
        _check_io(is_read, address, size)
        su, n, k, npar = self.stripe_unit, self.members, self.data_units, self.parity
        segs = self._segments(address, size)
        if is_read:
            ops = []
            for s, j, off, ln in segs:
                ops.append(MemberOp((n - 1 - s % n + npar + j) % n, True, s * su + off, ln))
            return [RaidStep("all", tuple(ops))]
        first: list[MemberOp] = []  # RMW reads and full-stripe writes
        second: list[MemberOp] = []  # RMW writes
        i, total = 0, len(segs)
        while i < total:  # one stripe at a time: segs[i:end] share stripe s
            s = segs[i][0]
            end = i + 1
            while end < total and segs[end][0] == s:
                end += 1
            base = s * su
            p = n - 1 - s % n
            parities = [(p + q) % n for q in range(npar)]
            if end - i == k and all(segs[x][3] == su for x in range(i, end)):  # every data unit in full
                for x in range(i, end):
                    first.append(MemberOp((p + npar + segs[x][1]) % n, False, base, su))
                for m in parities:
                    first.append(MemberOp(m, False, base, su))
                i = end
                continue
            lo, hi = su, 0
            for x in range(i, end):
                _, j, off, ln = segs[x]
                m, a = (p + npar + j) % n, base + off
                first.append(MemberOp(m, True, a, ln))
                second.append(MemberOp(m, False, a, ln))
                if off < lo:
                    lo = off
                if off + ln > hi:
                    hi = off + ln
            for m in parities:
                first.append(MemberOp(m, True, base + lo, hi - lo))
                second.append(MemberOp(m, False, base + lo, hi - lo))
            i = end
        phases = [RaidStep("all", tuple(first))]
        if second:
            phases.append(RaidStep("all", tuple(second)))
        return phases


class Raid5(_ParityRaid):
    """Block striping with one rotating parity unit per stripe (left-symmetric), ``members >= 3``.
    A write inside one stripe unit costs 4 member IOs (read data and parity, then write both); a
    partial-stripe write touching ``m`` units costs ``2 (m + 1)``."""

    level = "RAID-5"
    write_penalty = 4
    parity = 1


class Raid6(_ParityRaid):
    """Block striping with two rotating parity units (P, Q) per stripe (left-symmetric), ``members >= 4``.
    A write inside one stripe unit costs 6 member IOs (read data, P and Q, then write all three); a
    partial-stripe write touching ``m`` units costs ``2 (m + 2)``."""

    level = "RAID-6"
    write_penalty = 6
    parity = 2
