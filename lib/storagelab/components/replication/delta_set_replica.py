"""An asynchronous replica with delta sets closed every cycle (VPLEX Geo): :class:`DeltaSetReplica`,
and one delta set (:class:`_Delta`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from simpy.events import Event

from storagelab.components.replication.async_replica import AsyncReplica
from storagelab.components.replication.wan_link import Site, WanLink
from storagelab.kernel.io import IORequest


class _Delta:
    """A delta set: the regions written in one cycle (region -> latest version), the first write's
    acknowledgement time, its bytes, and where it is (open, closed, exchanging, exchanged, applying)."""

    __slots__ = ("first", "nbytes", "regions", "state")

    def __init__(self) -> None:
        self.regions: dict[int, int] = {}
        self.first: float | None = None
        self.nbytes = 0.0
        self.state = "open"


class DeltaSetReplica(AsyncReplica):
    """An asynchronous replica with **delta sets** (VPLEX Geo): writes go into the open delta (an
    overwrite of a region already in it adds nothing); every ``cycle`` seconds the open delta is closed
    if fewer than ``max_closed`` closed deltas wait; closed deltas cross the link one at a time
    (``window`` extents of contiguous regions, each up to ``max_transfer`` bytes, in flight), are held
    by the other site, and are applied there in order, each as a whole. A write is acknowledged as DRBD's
    protocol A acknowledges. The rest (``buffer_bytes``, throttling, ``active``, a site ``cache``, link
    loss): :class:`AsyncReplica`."""

    def __init__(
        self,
        name: str,
        sites: Sequence[Site],
        wan: WanLink,
        *,
        buffer_bytes: float,
        cycle: float,
        max_closed: int = 2,
        window: int = 256,
        max_transfer: int = 1 << 20,
        active: int = 0,
        **kwargs,
    ) -> None:
        super().__init__(name, sites, wan, buffer_bytes=buffer_bytes, window=window, active=active, **kwargs)
        if not cycle > 0 or max_closed < 1:
            raise ValueError(
                f"asynchronous replica {name!r}: delta sets need cycle > 0 s (0 is a write-order log: "
                f"LogReplica) and max_closed >= 1"
            )
        self.cycle, self.max_closed = float(cycle), max_closed
        self.max_transfer = int(max_transfer)

    def on_bind(self) -> None:
        super().on_bind()
        self._open = _Delta()
        self._closed: deque[_Delta] = deque()
        self._exchanging = self._applying = False
        self.env.process(self._closer())

    def _replicate(
        self,
        version: int,
        io: IORequest,
        regions: range,
        reserved: float,
        acknowledge: Callable[[bool], None],
    ) -> Callable[[], None]:
        """Once written locally, the write joins the open delta and is acknowledged."""

        def locally_written() -> None:
            self._add_to_delta(regions, version, reserved)
            acknowledge(True)

        return locally_written

    def _add_to_delta(self, regions: range, version: int, reserved: float) -> None:
        delta = self._open
        new = 0
        for r in regions:
            if r not in delta.regions:
                new += 1
            delta.regions[r] = version
        if delta.first is None:
            delta.first = self.env.now
        added = new * float(self.region_bytes)
        delta.nbytes += added
        self._release(reserved - added)  # the reservation becomes what the delta really grew by

    def _closer(self):
        while True:
            yield self.env.timeout(self.cycle)
            if self.mode == "replicating" and self._open.regions and len(self._closed) < self.max_closed:
                self._open.state = "closed"
                self._closed.append(self._open)
                self._open = _Delta()
                self._pump_deltas()

    def _pump_deltas(self) -> None:
        if self.mode != "replicating" or not self.wan.up:
            return
        epoch, peer = self.stream, 1 - self.active
        if not self._exchanging:
            delta = next((d for d in self._closed if d.state == "closed"), None)
            if delta is not None:
                self._exchanging = True
                delta.state = "exchanging"
                self._transfer(delta, epoch, self._exchange_extent, "exchanged")
        if not self._applying and self._closed and self._closed[0].state == "exchanged":
            self._applying = True
            delta = self._closed[0]
            delta.state = "applying"
            self._transfer(delta, epoch, lambda io: self.sites[peer].applier.submit(io), "applied")

    def _exchange_extent(self, io: IORequest) -> Event:
        """One extent of a delta crosses the link and the peer's engine takes it (``engine_remote``, paid
        per extent: a delta set coalesces writes, so the receiving engine handles extents, not host
        writes)."""
        crossed = self.wan.send(self.active, io.size, io)
        if self.engine_remote <= 0:
            return crossed
        taken = Event(self.env)
        crossed.callbacks.append(lambda _e: self._after_remote_engine(lambda: taken.succeed(io)))
        return taken

    def _extents(self, delta: _Delta) -> list[tuple[int, int]]:
        """The delta's regions as extents (first region, count) of contiguous regions, each at most
        ``max_transfer`` bytes: what one message on the link, or one write at the other site, carries."""
        most = max(1, self.max_transfer // self.region_bytes)
        out: list[tuple[int, int]] = []
        for r in sorted(delta.regions):
            if out and out[-1][0] + out[-1][1] == r and out[-1][1] < most:
                out[-1] = (out[-1][0], out[-1][1] + 1)
            else:
                out.append((r, 1))
        return out

    def _transfer(self, delta: _Delta, epoch: int, step: Callable[[IORequest], Event], state: str) -> None:
        """Put every extent of ``delta`` through ``step`` with ``window`` in flight; then mark it
        ``state``. While exchanging, each extent's buffer space is freed once it has crossed (it is
        then held by the other site until applied)."""
        todo = deque(self._extents(delta))
        left = [len(todo)]
        exchanging = state == "exchanged"

        def one() -> None:
            if todo:
                first, count = todo.popleft()
                nbytes = count * self.region_bytes
                io = IORequest(
                    False, nbytes, first * self.region_bytes, cls="replication", submitted=self.env.now
                )
                step(io).callbacks.append(lambda _e: finished(nbytes))

        def finished(nbytes: int) -> None:
            if self.stream != epoch:
                return
            left[0] -= 1
            if exchanging:
                self._release(float(nbytes))
            if left[0] == 0:
                self._delta_done(delta, state)
            else:
                one()

        if not todo:
            self._delta_done(delta, state)
        for _ in range(min(self.window, len(todo))):
            one()

    def _delta_done(self, delta: _Delta, state: str) -> None:
        delta.state = state
        if state == "exchanged":
            self._exchanging = False
        else:
            self._applying = False
            peer = 1 - self.active
            for r, v in delta.regions.items():
                self._hold(peer, range(r, r + 1), v)
                self._ack_time.pop(v, None)
            self._closed.popleft()
        self._pump_deltas()

    # -- what is at risk, and failures ---------------------------------------------------------------
    def _at_risk(self) -> tuple[float, float]:
        if self._dirty:
            return super()._at_risk()
        deltas = [*self._closed, self._open]
        firsts = [d.first for d in deltas if d.first is not None]
        return (self.env.now - min(firsts) if firsts else 0.0), sum(d.nbytes for d in deltas)

    def _unapplied_regions(self) -> set[int]:
        regions = super()._unapplied_regions()
        for d in [*self._closed, self._open]:
            regions.update(d.regions)
        return regions

    def _buffered_regions(self, now: float) -> dict[int, float]:
        regions: dict[int, float] = {}
        for d in [*self._closed, self._open]:
            for r in d.regions:
                regions.setdefault(r, d.first if d.first is not None else now)
        return regions

    def _drop_buffer(self) -> list[Callable[[], None]]:
        self._closed.clear()
        self._open = _Delta()
        self._exchanging = self._applying = False
        return []

    def _on_link_back(self) -> None:
        self._pump_deltas()
