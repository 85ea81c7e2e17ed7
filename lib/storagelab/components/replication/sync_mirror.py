"""The synchronous mirror (VPLEX Metro distributed device, DRBD protocol C): :class:`SyncMirror`, and
the record of a write waiting for both copies (:class:`_PendingWrite`)."""

from __future__ import annotations

from dataclasses import dataclass

from simpy.events import Event

from storagelab.components.replication.volume import ReplicatedVolume
from storagelab.kernel.io import IORequest


@dataclass(slots=True, eq=False)
class _PendingWrite:
    """A host write the mirror has not acknowledged yet: the site whose hosts wrote it, the IO, the
    event that tells the host, the regions it covers, and when its local copy and (acknowledgement back
    from) its remote copy were durable (``None``: not yet)."""

    site: int
    io: IORequest
    done: Event
    regions: range
    local_at: float | None = None
    remote_at: float | None = None


class SyncMirror(ReplicatedVolume):
    """A synchronous mirror (VPLEX Metro distributed device, DRBD protocol C): a write is acknowledged
    only when both sites' copies have it; reads are served at the host's own site. While the link is
    up, nothing acknowledged is at risk.

    A write's path: the writing site's engine (``engine_local``), then in parallel the local copy and
    the remote leg (the write crosses the link, the peer's engine takes it (``engine_remote``), the
    peer's array writes it, the acknowledgement crosses back). So at light load, with equal arrays, a
    write takes ``engine_local + serialisation + rtt + engine_remote + array write``: over the array alone,
    the round trip plus both engines (and the serialisation), as vendors state it (the remote leg, "WAN
    latency plus remote storage array write latency", is what a write waits for)."""

    def on_bind(self) -> None:
        super().on_bind()
        self._waiting: dict[int, _PendingWrite] = {}  # version -> the write waiting for its copies
        self.audit: list[tuple[float, float, float]] = []  # (ack, local durable, remote durable) per write

    def _write(self, site: int, io: IORequest, done: Event) -> None:
        """The engine at the writing site takes the write (``engine_local``), then sends it to both
        copies at once."""
        self._after_local_engine(site, io, done, lambda: self._write_both(site, io, done))

    def _write_both(self, site: int, io: IORequest, done: Event) -> None:
        version = self._new_version()
        regions = self._regions(io)
        write = _PendingWrite(site, io, done, regions)
        self._waiting[version] = write
        local_site = self.sites[site]

        def local_done(_e: Event) -> None:
            write.local_at = self.env.now
            self._hold(site, regions, version)
            self._maybe_ack(version)

        local_site.volume.submit(io).callbacks.append(local_done)
        if self.mode in ("replicating", "resyncing"):
            self._remote_leg(version, write)

    def _remote_leg(self, version: int, write: _PendingWrite) -> None:
        site, io, regions = write.site, write.io, write.regions
        epoch, peer = self.wan.epoch, 1 - site
        if not self.site_up[peer] or not self.wan.up:
            return

        def arrived(_e: Event) -> None:
            if self.wan.epoch != epoch or not self.site_up[peer]:
                return
            self._after_remote_engine(received)

        def received() -> None:  # the peer's engine has taken it (engine_remote): apply it
            if self.wan.epoch != epoch or not self.site_up[peer]:
                return
            self.sites[peer].applier.submit(io.child()).callbacks.append(applied)

        def applied(_e: Event) -> None:
            if self.wan.epoch != epoch or not self.site_up[peer]:
                return
            self._hold(peer, regions, version)
            self.wan.send(peer, 0, io).callbacks.append(acked)

        def acked(_e: Event) -> None:
            if self.wan.epoch != epoch:
                return
            write.remote_at = self.env.now
            self._maybe_ack(version)

        self.wan.send(site, io.size, io).callbacks.append(arrived)

    def _maybe_ack(self, version: int) -> None:
        write = self._waiting.get(version)
        if write is None or write.local_at is None:
            return
        alone = self.mode == "isolated" and self.winner == write.site
        if write.remote_at is None and not alone:
            return
        del self._waiting[version]
        remote = write.remote_at
        self.audit.append((self.env.now, write.local_at, remote if remote is not None else float("nan")))
        self._acknowledge(
            write.regions, version, write.done, write.io, dirty=remote is None, unreplicated=False
        )

    def _on_isolated(self, winner: int | None) -> None:
        for version, write in list(self._waiting.items()):
            if write.site == winner:
                self._maybe_ack(version)
            else:  # the host at a suspended site will retry: hold it until the site resumes
                del self._waiting[version]
                self._held[write.site].append((write.io, write.done))

    def _on_link_back(self) -> None:
        for version, write in list(self._waiting.items()):
            if write.remote_at is None:
                self._remote_leg(version, write)
