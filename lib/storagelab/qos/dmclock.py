"""dmClock: mClock across several servers (Gulati, Merchant and Varman, OSDI 2010, section 4; the form
Ceph runs in ``ceph/dmclock``), so that a client's reservation, limit and weight hold for the service
it gets from all servers together, not from each.

A client's requests carry two counts to the server ``j`` they go to:

- ``delta``: 1 + the client's requests completed at the *other* servers since its previous request to
  ``j``;
- ``rho``: 1 + those of them that were served in the constraint-based (reservation) phase.

Server ``j`` spaces the client's tags by them: ``R += rho x c / r``, ``L += delta x c / l``, ``P += delta x
c / w`` (:class:`DmClock`, an :class:`~storagelab.qos.MClock` otherwise). A client that gets service
elsewhere moves ahead in ``j``'s tags by as much, so its reservation is met once over all servers (rho
counts only reservation-phase service, so weight-phase service elsewhere does not use the reservation
up), its limit caps the sum, and weights divide the total. With one server, ``delta = rho = 1`` and
dmClock is mClock.

:class:`DmClockRouter` stands for the clients' side: it sends each client's IO to a server (round-robin,
or by a per-client split), keeps the counts (:class:`ClientTracker`) and learns from each completion
which phase served it. :func:`dmclock_servers` builds the servers and the router. ``distributed=False``
gives independent mClock servers (``delta = rho = 1`` always), the configuration whose promises break.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from simpy.events import Event

from storagelab.kernel.component import Component
from storagelab.kernel.io import IORequest
from storagelab.kernel.station import Station
from storagelab.qos.mclock import ClientQoS, MClock


class ClientTracker:
    """One client's counts: completions at all servers, and per server the counts when the client last
    sent it a request (the ``delta``/``rho`` bookkeeping of a dmClock client)."""

    def __init__(self, servers: int) -> None:
        self.done = 0  # completions at any server
        self.done_res = 0  # of them in the reservation phase
        self.at = np.zeros(servers, dtype=np.int64)  # completions per server
        self.at_res = np.zeros(servers, dtype=np.int64)
        # at the previous request to each server: done, done_res, at, at_res
        self.snap = np.zeros((servers, 4), dtype=np.int64)
        self.seen = np.zeros(servers, dtype=bool)

    def stamp(self, j: int) -> tuple[int, int]:
        """``(delta, rho)`` for a request to server ``j`` now, and the snapshot for the next one."""
        done, done_res, at_j, at_res_j = self.snap[j]
        first = not self.seen[j]  # the first request to a server counts from now (as ceph/dmclock does)
        delta = 1 if first else 1 + (self.done - done) - (self.at[j] - at_j)
        rho = 1 if first else 1 + (self.done_res - done_res) - (self.at_res[j] - at_res_j)
        self.seen[j] = True
        self.snap[j] = (self.done, self.done_res, self.at[j], self.at_res[j])
        return int(delta), int(rho)

    def completed(self, j: int, reservation: bool) -> None:
        self.done += 1
        self.at[j] += 1
        if reservation:
            self.done_res += 1
            self.at_res[j] += 1


def client_of(io: IORequest) -> str:
    """The dmClock client an IO belongs to: its class up to an ``@`` (``"b@1"`` and ``"b@2"``, two sources
    of one client, belong to ``"b"``)."""
    return io.cls.split("@", 1)[0]


class DmClock(MClock):
    """mClock at one of several servers: each request's tags are spaced by the ``(delta, rho)`` its
    client stamped on it (``stamps``, keyed by the request's identity, filled by the router); a request
    without a stamp counts as ``(1, 1)``. The phase each request was served in is left in ``phases`` for
    the router."""

    def __init__(
        self, clients: Mapping[str, ClientQoS], *, stamps: dict[int, tuple[int, int]], **kwargs
    ) -> None:
        super().__init__(clients, **kwargs)
        self.stamps = stamps
        self.phases: dict[int, str] = {}

    @staticmethod
    def tenant_of(io: IORequest) -> str:
        return client_of(io)

    def _spacing(self, io: IORequest, c: float, q: ClientQoS) -> tuple[float, float, float]:
        delta, rho = self.stamps.pop(id(io), (1, 1))
        r, lim, p = super()._spacing(io, c, q)
        return r * rho, lim * delta, p * delta

    def pop(self, now: float):
        job = super().pop(now)
        if job is not None:
            self.phases[id(job[0])] = self.last_phase
        return job


class DmClockRouter(Component):
    """The clients' side of dmClock in front of ``servers`` (stations with :class:`DmClock` disciplines
    sharing ``stamps``): each IO of client :func:`client_of` goes to a server (round-robin over all, or by
    ``split[cls]``: one probability per server), stamped with its ``(delta, rho)``; its completion tells
    the client's tracker which server and phase served it; :meth:`via` fixes the server instead.
    ``distributed=False``: no stamps (independent mClock servers)."""

    def __init__(
        self,
        name: str,
        servers: Sequence[Station],
        stamps: dict[int, tuple[int, int]],
        *,
        split: Mapping[str, Sequence[float]] | None = None,
        distributed: bool = True,
    ) -> None:
        super().__init__(name)
        self.servers, self.stamps, self.distributed = list(servers), stamps, distributed
        self.split = {k: np.asarray(v, dtype=float) for k, v in (split or {}).items()}
        self._vias: dict[int, _Via] = {}
        for cls, probs in self.split.items():
            if probs.size != len(self.servers) or (probs < 0).any() or not np.isclose(probs.sum(), 1.0):
                raise ValueError(
                    f"dmClock router {name!r}: split[{cls!r}] needs one probability per server "
                    f"({len(self.servers)}), each >= 0, summing to 1; got {list(probs)}"
                )

    def children(self) -> list[Component]:
        return self.servers

    def on_bind(self) -> None:
        self.trackers: dict[str, ClientTracker] = {}
        self._next: dict[str, int] = {}
        self.stamps.clear()

    def _server(self, cls: str) -> int:
        probs = self.split.get(cls)  # cls: the client
        if probs is not None:
            return int(self.rng.choice(len(self.servers), p=probs))
        j = self._next.get(cls, -1) + 1
        self._next[cls] = j % len(self.servers)
        return self._next[cls]

    def via(self, j: int) -> Component:
        """An entry that sends every IO to server ``j`` (a client with one queue per server, as a Ceph
        client has one per OSD), with the same bookkeeping."""
        if not 0 <= j < len(self.servers):
            raise ValueError(
                f"dmClock router {self.name!r}: no server {j} (servers 0..{len(self.servers) - 1})"
            )
        if j not in self._vias:
            self._vias[j] = _Via(self, j)
        return self._vias[j]

    def submit(self, io: IORequest, server: int | None = None) -> Event:
        client = client_of(io)
        j = self._server(client) if server is None else server
        tracker = self.trackers.get(client)
        if tracker is None:
            tracker = self.trackers[client] = ClientTracker(len(self.servers))
        if self.distributed:
            self.stamps[id(io)] = tracker.stamp(j)
        server = self.servers[j]
        ev = server.submit(io)
        phases = server.discipline.phases

        def done(_ev: Event) -> None:
            tracker.completed(j, phases.pop(id(io), "") == "reservation")

        ev.callbacks.append(done)
        return ev


class _Via(Component):
    """:meth:`DmClockRouter.via`: the router with the server fixed."""

    def __init__(self, router: DmClockRouter, j: int) -> None:
        super().__init__(f"{router.name} -> server {j + 1}")
        self.router, self.j = router, j

    def children(self) -> list[Component]:
        return [self.router]

    def submit(self, io: IORequest) -> Event:
        return self.router.submit(io, self.j)


def dmclock_servers(
    clients: Mapping[str, ClientQoS],
    services: Sequence[object],
    *,
    split: Mapping[str, Sequence[float]] | None = None,
    distributed: bool = True,
    **mclock: object,
) -> tuple[DmClockRouter, list[Station]]:
    """One server (a single-server station) per service in ``services`` (a distribution or device),
    each with a :class:`DmClock` discipline over ``clients`` (``mclock``: its other options, e.g.
    ``at_limit``, ``record``), and the router clients submit to."""
    if not services:
        raise ValueError("dmClock needs at least one server")
    stamps: dict[int, tuple[int, int]] = {}
    stations = [
        Station(f"server {j + 1}", svc, servers=1, discipline=DmClock(clients, stamps=stamps, **mclock))
        for j, svc in enumerate(services)
    ]
    return DmClockRouter("dmClock clients", stations, stamps, split=split, distributed=distributed), stations
