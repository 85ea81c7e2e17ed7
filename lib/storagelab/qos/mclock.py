"""mClock (Gulati, Merchant and Varman, OSDI 2010): per-tenant reservation, limit and weight, as a
station's queue discipline.

Each tenant (an IO's ``cls``) has a reservation ``r`` (cost units per second it is guaranteed), a limit
``l`` (cost units per second it may not exceed) and a weight ``w`` (its share of what is left). A request
of cost ``c`` arriving at time ``t`` gets three tags from its tenant's previous request:

- reservation tag ``R = max(R_prev + c / r, t)``, limit tag ``L = max(L_prev + c / l, t)`` and
  proportional tag ``P = max(P_prev + c / w, t)``;
- a tenant that was idle starts again from ``t`` (the ``max``), and its proportional tag is then aligned
  with the others: all proportional tags are shifted so that the smallest waiting one equals ``t``, so a
  returning tenant cannot claim service for the time it was idle (the paper's idle-tenant adjustment).

When a server frees up, the **constraint-based phase** serves the waiting head with the smallest
reservation tag, if that tag is due (``R <= now``). Otherwise the **weight-based phase** serves, among the
heads within their limit (``L <= now``), the one with the smallest proportional tag, and credits that
service against its reservation: the reservation tags of that tenant's waiting requests move back by
``c / r``, so weight-phase service counts toward the reservation and a tenant gets max(reservation,
weight share), not their sum. With ``at_limit="wait"`` (mClock's hard limit) nothing is served when
every head is over its limit: the station idles until :meth:`MClock.next_eligible`, the exact time the
first head's limit tag falls due. With ``at_limit="allow"`` (work-conserving, as Ceph's ``osd_mclock``
option) the smallest proportional tag is served anyway.

**The limit is hard in both phases (ours, not the paper's).** The paper's algorithm and Ceph's
``ceph/dmclock`` (``do_next_request`` in ``src/dmclock_server.h``: the reservation heap's top is served
when ``tag.reservation <= now``, limit tags are looked at only after) serve a due reservation tag whatever
its limit tag says, so a tenant with both goes over its limit: r = 125, l = 126 gave 14 dispatches in a
100 ms window (bound 13.6). Here, under ``wait``, the reservation phase also waits for the head's limit
tag, and every dispatch of a limited tenant served after its limit tag re-spaces its waiting limit tags
from the dispatch, so two dispatches are never closer than ``c / l``: no window of length ``T`` holds
more than ``l x T + 1`` requests of cost 1, reservation or not. That is the least holding back that keeps
the cap (consecutive dispatches ``1 / l`` apart is what ``l x T + 1`` in every window means).

**The floor, derived** (one server, each IO at most ``s`` seconds, the reservations fitting it:
``s x sum(r) <= 1``; ``n``: the tenants with a reservation). *Lateness*: a due reservation tag ``x``
(its head within its limit) is dispatched by ``x + n x s``. Let ``a`` be the last dispatch before it
that was not in the reservation phase (nothing due then). From ``a`` the server serves due tags, smallest
first, so only tags in ``(a, x]`` go before ``x``; a tenant's waiting tags are at least ``1 / r_j`` apart
(a credit moves them all back together, and the served head had the smallest), so tenant ``j`` has at
most ``r_j (x - a) + 1`` of them; with the IO in service at ``a`` (at most ``s``), ``x`` is dispatched by
``a + s + s (sum_j (r_j (x - a) + 1) - 1) <= x + n s``. *Floor*: a backlogged tenant's head tag ``H`` is
never more than ``1 / r`` ahead of the clock (it grows only when a due tag is served, by ``1 / r``) and
never more than ``D = n s`` behind (lateness); it grows by ``1 / r`` per reservation-phase dispatch and not
at all at a weight-phase one, unless a new request's tag restarts at its arrival (``max(., t)``), which
cannot happen while the tenant has more than ``r D`` requests waiting behind its head. So over any
window ``(t, t + T]`` it goes from at most ``t + 1 / r`` to at least ``t + T - D`` and the tenant gets at
least ``r (T - n s) - 1`` dispatches, when (1) it keeps ``N`` requests outstanding with ``N - 1 >= r n s``,
and (2) under ``wait`` with a limit, ``1 / l + n s <= 1 / r``: a limited tenant, once its limit allows it,
is dispatched within ``n s``, and its dispatches are ``1 / l`` apart; where the limit leaves less room than
that the cap wins and the reservation is not met (no server that is not preemptive can keep both).
The lateness step is proven above for tenants whose reservation is not held back by a limit (any
tenant under ``allow``, an unlimited one under ``wait``); for limited tenants under ``wait`` meeting (2)
it is checked by ``tests/test_qos_conformance.py`` on generated tenant sets, not proven here.
``r x T - 1`` is not a promise: a tenant reserving 953 IOPS beside an unreserved one waits a whole IO of
the other's when its tag falls due just after the server freed.

``cost(io)`` gives a request's cost: 1 per IO by default (IOPS), or e.g. ``lambda io: io.size / 4096``.
``bypass``: IO classes served ahead of every tag, in arrival order, as a high-priority queue that does not
go through the scheduler (background work such as recovery, in schedulers that let it bypass): the
scheduler's promises then hold only for what is left.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from storagelab.kernel.disciplines import Discipline, Job
from storagelab.kernel.io import IORequest

INF = float("inf")


@dataclass(frozen=True)
class ClientQoS:
    """A tenant's settings, in cost units per second (IOPS with the default cost): ``reservation``
    (0: none), ``limit`` (``inf``: none) and ``weight`` (> 0)."""

    reservation: float = 0.0
    limit: float = INF
    weight: float = 1.0

    def __post_init__(self) -> None:
        if self.reservation < 0 or not self.limit > 0 or not self.weight > 0:
            raise ValueError(f"QoS settings need reservation >= 0, limit > 0 and weight > 0, got {self}")
        if self.reservation > self.limit:
            raise ValueError(f"QoS settings: reservation {self.reservation} exceeds limit {self.limit}")


class _Tenant:
    __slots__ = ("last_l", "last_p", "last_r", "qos", "queue")

    def __init__(self, qos: ClientQoS) -> None:
        self.qos = qos
        self.queue: deque[list] = deque()  # [R, L, P, cost, job, R spacing, L spacing]
        self.last_r = self.last_l = self.last_p = -INF


class MClock(Discipline):
    """mClock over the tenants in ``clients`` (IO class -> :class:`ClientQoS`); an IO of a class not
    listed gets ``default``. ``at_limit``: ``"wait"`` or ``"allow"``. ``record``: keep the dispatch log
    (time, class, cost, phase) for analysis and tests. ``bypass``: classes served ahead of the scheduler."""

    def __init__(
        self,
        clients: Mapping[str, ClientQoS],
        *,
        default: ClientQoS | None = None,
        at_limit: str = "wait",
        cost: Callable[[IORequest], float] | None = None,
        record: bool = False,
        bypass: tuple[str, ...] = (),
    ) -> None:
        if at_limit not in ("wait", "allow"):
            raise ValueError(f"mClock: at_limit must be 'wait' or 'allow', got {at_limit!r}")
        self.settings = dict(clients)
        self.default = default or ClientQoS()
        self.at_limit, self.record = at_limit, record
        self.cost = cost or (lambda io: 1.0)
        self.bypass = frozenset(bypass)
        self._reset()

    def _reset(self) -> None:
        self.tenants: dict[str, _Tenant] = {}
        self._bypassing: deque[Job] = deque()
        self._waiting = 0
        self.log: list[tuple[float, str, float, str]] = []

    def bind(self, station) -> None:
        super().bind(station)
        self._reset()

    @staticmethod
    def tenant_of(io: IORequest) -> str:
        """The tenant an IO belongs to: its class."""
        return io.cls

    def _tenant(self, cls: str) -> _Tenant:
        t = self.tenants.get(cls)
        if t is None:
            t = self.tenants[cls] = _Tenant(self.settings.get(cls, self.default))
        return t

    # -- tags ------------------------------------------------------------------------------------------
    def push(self, job: Job, now: float) -> None:
        io = job[0]
        if io.cls in self.bypass:
            self._bypassing.append(job)
            self._waiting += 1
            return
        t = self._tenant(self.tenant_of(io))
        q = t.qos
        c = float(self.cost(io))
        dr, dl, dp = self._spacing(io, c, q)
        was_idle = not t.queue
        r = max(t.last_r + dr, now) if q.reservation > 0 else INF
        lim = max(t.last_l + dl, now) if q.limit < INF else -INF
        p = max(t.last_p + dp, now)
        if was_idle:
            p = self._align(t, p, now)
        t.last_r, t.last_l, t.last_p = (r if r < INF else t.last_r), lim, p
        t.queue.append([r, lim, p, c, job, dr, dl])
        self._waiting += 1

    def _spacing(self, io: IORequest, c: float, q: ClientQoS) -> tuple[float, float, float]:
        """How far a request of cost ``c`` moves its tenant's reservation, limit and proportional tags:
        ``c / r``, ``c / l`` and ``c / w`` (dmClock scales them by the request's rho and delta)."""
        return (
            c / q.reservation if q.reservation > 0 else 0.0,
            c / q.limit if q.limit < INF else 0.0,
            c / q.weight,
        )

    def _align(self, tenant: _Tenant, p: float, now: float) -> float:
        """A tenant back from idle: shift every waiting proportional tag so the smallest is ``now``, and
        start the returning tenant there too, so it cannot claim the share it did not use while idle."""
        heads = [t.queue[0][2] for t in self.tenants.values() if t.queue and t is not tenant]
        if heads:
            shift = min(heads) - now
            if shift > 0:
                for t in self.tenants.values():
                    for entry in t.queue:
                        entry[2] -= shift
                    if t.queue:
                        t.last_p = t.queue[-1][2]
        return max(p, now)

    # -- scheduling ------------------------------------------------------------------------------------
    def pop(self, now: float) -> Job | None:
        if not self._waiting:
            return None
        if self._bypassing:
            self._waiting -= 1
            job = self._bypassing.popleft()
            if self.record:
                self.log.append((now, job[0].cls, float(self.cost(job[0])), "bypass"))
            self.last_phase = "bypass"
            return job
        best, phase = None, ""
        # constraint-based phase: the smallest due reservation tag (under "wait", of a head within its
        # limit: the limit is hard in both phases)
        capped = self.at_limit == "wait"
        for t in self.tenants.values():
            if (
                t.queue
                and t.queue[0][0] <= now
                and (not capped or t.queue[0][1] <= now)
                and (best is None or t.queue[0][0] < best.queue[0][0])
            ):
                best = t
        if best is not None:
            phase = "reservation"
        else:
            for t in self.tenants.values():
                if t.queue and t.queue[0][1] <= now and (best is None or t.queue[0][2] < best.queue[0][2]):
                    best = t
            if best is not None:
                phase = "weight"
            elif self.at_limit == "allow":
                for t in self.tenants.values():
                    if t.queue and (best is None or t.queue[0][2] < best.queue[0][2]):
                        best = t
                phase = "over limit"
        if best is None:
            return None
        _r, lim, _p, c, job, dr, _dl = best.queue.popleft()
        self._waiting -= 1
        q = best.qos
        if q.limit < INF and lim < now:
            # served late (the server was busy, or other tags went first, when its limit tag fell due):
            # the waiting limit tags are spaced from now, so the tenant does not catch up in a burst
            # above its limit, whichever phase serves it
            tag = now
            for entry in best.queue:
                tag = max(entry[1], tag + entry[6])
                entry[1] = tag
            best.last_l = max(best.last_l, tag)
        if phase != "reservation" and best.qos.reservation > 0:
            credit = dr  # weight-phase service counts toward the reservation
            for entry in best.queue:
                entry[0] -= credit
            best.last_r -= credit
        self.last_phase = phase
        if self.record:
            self.log.append((now, job[0].cls, c, phase))
        return job

    def next_eligible(self, now: float) -> float | None:
        """The earliest time a waiting head may go (``wait``): its limit tag, which every phase waits for
        (a head within its limit can go in the weight phase, if not in the reservation phase)."""
        times = [t.queue[0][1] for t in self.tenants.values() if t.queue]
        return min(times) if times else None

    def __len__(self) -> int:
        return self._waiting
