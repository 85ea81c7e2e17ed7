"""An asynchronous replica with a replication log in write order (DRBD protocols A and B):
:class:`LogReplica`, and one write in its log (:class:`_LogEntry`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from storagelab.components.replication.async_replica import AsyncReplica
from storagelab.components.replication.wan_link import Site, WanLink
from storagelab.kernel.io import IORequest


class _LogEntry:
    """One write in a replication log."""

    __slots__ = ("acked_at", "applied", "io", "on_received", "received", "regions")

    def __init__(self, io: IORequest, regions: range) -> None:
        self.io, self.regions = io, regions
        self.acked_at: float | None = None
        self.received = self.applied = False
        self.on_received: Callable[[], None] | None = None


class LogReplica(AsyncReplica):
    """An asynchronous replica with a **replication log** in write order (DRBD). ``protocol="A"``: a
    write is acknowledged when the local copy is written and the write is in the send buffer; ``"B"``:
    when, in addition, the peer has received it (in memory); the peer writes it to its array afterwards.
    Up to ``window`` writes cross the link at once; a write's space in the buffer is freed when the peer
    has applied it. The rest (``buffer_bytes``, throttling, ``active``, a site ``cache``, link loss):
    :class:`AsyncReplica`."""

    def __init__(
        self,
        name: str,
        sites: Sequence[Site],
        wan: WanLink,
        *,
        buffer_bytes: float,
        protocol: str = "A",
        window: int = 256,
        active: int = 0,
        **kwargs,
    ) -> None:
        super().__init__(name, sites, wan, buffer_bytes=buffer_bytes, window=window, active=active, **kwargs)
        if protocol not in ("A", "B"):
            raise ValueError(f"asynchronous replica {name!r}: protocol must be 'A' or 'B' (C is SyncMirror)")
        self.protocol = protocol

    def on_bind(self) -> None:
        super().on_bind()
        self._log: dict[int, _LogEntry] = {}  # version -> entry, in write order
        # protocol B: written locally, peer not heard; a dict, not a set, so that it is iterated in write
        # order (a set of objects iterates in the order of their addresses, which differs between runs)
        self._awaiting_receipt: dict[_LogEntry, None] = {}
        self._unsent: deque = deque()  # versions not yet sent
        self._in_flight = 0
        self._log_acked_bytes = 0.0

    def _replicate(
        self,
        version: int,
        io: IORequest,
        regions: range,
        reserved: float,
        acknowledge: Callable[[bool], None],
    ) -> Callable[[], None]:
        """Append the write to the log and send what the window allows; acknowledge it once it is
        written locally (protocol A) and the peer has received it (B)."""
        entry = self._log[version] = _LogEntry(io, regions)
        self._unsent.append(version)
        self._pump()

        def acknowledge_logged() -> None:
            if version in self._log:
                entry.acked_at = self.env.now
                self._log_acked_bytes += io.size
            acknowledge(not entry.applied)  # in the log, or in a log dropped before the peer applied it

        def locally_written() -> None:
            if self.protocol == "B" and not entry.received and self.mode == "replicating":
                entry.on_received = acknowledge_logged
                self._awaiting_receipt[entry] = None
            else:
                acknowledge_logged()

        return locally_written

    def _pump(self) -> None:
        if self.mode != "replicating" or not self.wan.up:
            return
        epoch = self.stream
        while self._unsent and self._in_flight < self.window:
            version = self._unsent.popleft()
            entry = self._log.get(version)
            if entry is None:
                continue
            self._in_flight += 1
            self.wan.send(self.active, entry.io.size, entry.io).callbacks.append(
                lambda _e, v=version, e=entry: self._arrived(v, e, epoch)
            )

    def _arrived(self, version: int, entry: _LogEntry, epoch: int) -> None:
        if self.stream != epoch:
            return
        self._after_remote_engine(lambda: self._received_by_engine(version, entry, epoch))

    def _received_by_engine(self, version: int, entry: _LogEntry, epoch: int) -> None:
        """The peer's engine has taken the write (``engine_remote``): protocol B acknowledges its receipt,
        and the peer applies it."""
        if self.stream != epoch:
            return
        peer = 1 - self.active
        if self.protocol == "B":  # the peer has it in memory: its acknowledgement crosses back
            self.wan.send(peer, 0, entry.io).callbacks.append(lambda _e: self._received(entry, epoch))
        self.sites[peer].applier.submit(entry.io.child()).callbacks.append(
            lambda _e: self._log_applied(version, entry, epoch)
        )

    def _received(self, entry: _LogEntry, epoch: int) -> None:
        if self.stream != epoch:
            return
        entry.received = True
        if entry.on_received is not None:
            go, entry.on_received = entry.on_received, None
            self._awaiting_receipt.pop(entry, None)
            go()

    def _log_applied(self, version: int, entry: _LogEntry, epoch: int) -> None:
        if self.stream != epoch:
            return
        entry.applied = True
        self._hold(1 - self.active, entry.regions, version)
        self._log.pop(version, None)
        if entry.acked_at is not None:
            self._log_acked_bytes -= entry.io.size
        self._ack_time.pop(version, None)
        self._in_flight -= 1
        self._release(float(entry.io.size))
        self._pump()

    # -- what is at risk, and failures ---------------------------------------------------------------
    def _at_risk(self) -> tuple[float, float]:
        if self._dirty:
            return super()._at_risk()
        oldest = next((e.acked_at for e in self._log.values() if e.acked_at is not None), None)
        return (self.env.now - oldest if oldest is not None else 0.0), self._log_acked_bytes

    def _unapplied_regions(self) -> set[int]:
        regions = super()._unapplied_regions()
        for e in self._log.values():
            if e.acked_at is not None:
                regions.update(e.regions)
        return regions

    def _buffered_regions(self, now: float) -> dict[int, float]:
        regions: dict[int, float] = {}
        for e in self._log.values():
            for r in e.regions:
                regions.setdefault(r, e.acked_at if e.acked_at is not None else now)
        return regions

    def _drop_buffer(self) -> list[Callable[[], None]]:
        """Empty the log; protocol B's writes still waiting for the peer's receipt are owed their
        acknowledgement (the peer is gone: they stay local, dirty), once: a receipt still crossing the
        link then belongs to an old ``stream`` and is ignored."""
        waiting_b = []
        for e in self._awaiting_receipt:
            if e.on_received is not None:
                waiting_b.append(e.on_received)
                e.on_received = None
        self._awaiting_receipt.clear()
        self._log.clear()
        self._unsent.clear()
        self._log_acked_bytes = 0.0
        self._in_flight = 0
        return waiting_b

    def _on_link_back(self) -> None:
        self._pump()
