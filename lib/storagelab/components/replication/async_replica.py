"""What the asynchronous replicas share: :class:`AsyncReplica`, the base of :class:`LogReplica`
(a write-order replication log, DRBD protocols A and B: :mod:`.log_replica`) and
:class:`DeltaSetReplica` (delta sets closed every cycle, VPLEX Geo: :mod:`.delta_set_replica`). It
admits writes into a bounded buffer (throttling the hosts when it is full), writes them at the active
site, acknowledges them, and turns the buffer into dirty regions when the link is lost; the subclass
says what the buffer holds and how it crosses the link."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from simpy.events import Event

from storagelab.components.replication.volume import ReplicatedVolume
from storagelab.components.replication.wan_link import Site, WanLink
from storagelab.kernel.io import IORequest


class AsyncReplica(ReplicatedVolume):
    """An asynchronous replica (abstract: build a :class:`LogReplica` or a :class:`DeltaSetReplica`):
    hosts at the ``active`` site (default 0) write; a write is acknowledged locally and reaches the other
    site later over the link, ``window`` transfers in flight at once.

    ``buffer_bytes`` bounds what is buffered at the writing site (log entries not yet applied, or the
    open delta and what of the closed ones has not crossed the link). A write that
    does not fit waits (the host is throttled) until sending and applying free space: when the write
    rate exceeds the drain rate (the lesser of the link and the remote array), write latency rises. A
    write larger than the whole buffer is refused when it is submitted (``ValueError``): no space freed
    would ever fit it, and the product's buffer (VPLEX's cache, GBs) is never smaller than one write.
    With a site ``cache`` (a write-back appliance) a write is acknowledged when the cache has it and goes
    to the local array in the background; otherwise when the local array has it. When the link is lost,
    what was buffered becomes dirty regions, copied by the resync when it returns.
    """

    def __init__(
        self,
        name: str,
        sites: Sequence[Site],
        wan: WanLink,
        *,
        buffer_bytes: float,
        window: int = 256,
        active: int = 0,
        **kwargs,
    ) -> None:
        if type(self) is AsyncReplica:
            raise TypeError(
                f"asynchronous replica {name!r}: AsyncReplica is the common base; build a LogReplica (a "
                "write-order log, DRBD protocols A and B) or a DeltaSetReplica (delta sets, VPLEX Geo)"
            )
        kwargs.setdefault("preferred", active)
        super().__init__(name, sites, wan, **kwargs)
        if not buffer_bytes > 0 or window < 1 or active not in (0, 1):
            raise ValueError(
                f"asynchronous replica {name!r}: need buffer_bytes > 0, window >= 1 and active site 0 or 1"
            )
        self.buffer_bytes = float(buffer_bytes)
        self.window, self.active = window, active

    def on_bind(self) -> None:
        super().on_bind()
        self.buffered = 0.0  # bytes reserved in the log or the deltas
        self._waiters: deque = deque()  # (bytes needed, callback) of throttled writes, FIFO
        # the buffer's generation, bumped when the buffer is dropped (link or site lost): a transfer, or a
        # write not yet written locally, of an older generation no longer belongs to the buffer
        self.stream = 0
        self._stream_in_flight = 0  # writes put in this generation's buffer, not yet written locally

    def reset_stats(self) -> None:
        super().reset_stats()
        self.throttled = 0
        self.throttle_time = 0.0

    def submit_at(self, site: int, io: IORequest) -> Event:
        if site != self.active and not io.is_read:
            raise ValueError(
                f"asynchronous replica {self.name!r}: hosts write at the active site ({self.active}) only"
            )
        if not io.is_read and io.size > self.buffer_bytes:
            raise ValueError(
                f"asynchronous replica {self.name!r}: a write of {io.size} B can never fit its buffer of "
                f"{self.buffer_bytes:.0f} B (buffer_bytes): throttling waits for space that cannot exist. "
                f"Give buffer_bytes at least the largest write (a product's buffer is its cache, GBs: "
                f"a host never sends one write that large)"
            )
        return super().submit_at(site, io)

    # -- admission (throttling) ----------------------------------------------------------------------
    def _write(self, site: int, io: IORequest, done: Event) -> None:
        """The engine at the writing site takes the write (``engine_local``: received, ordered), then it
        is admitted into the buffer (or throttled) and written."""
        self._after_local_engine(site, io, done, lambda: self._write_taken(site, io, done))

    def _write_taken(self, site: int, io: IORequest, done: Event) -> None:
        if self.mode != "replicating":
            self._write_local(site, io, done, replicate=False)
            return
        need = float(io.size)
        if self._waiters or self.buffered + need > self.buffer_bytes:
            self.throttled += 1
            t0 = self.env.now

            def admitted() -> None:
                self.throttle_time += self.env.now - t0
                self._admit(site, io, done, need)

            self._waiters.append((need, admitted))
            return
        self._admit(site, io, done, need)

    def _admit(self, site: int, io: IORequest, done: Event, need: float) -> None:
        if not self.site_up[site]:  # the site was lost while the write waited: it completes nothing
            return
        if self.mode != "replicating":  # the link went while the write waited
            self._write_local(site, io, done, replicate=False)
            return
        self.buffered += need
        self._write_local(site, io, done, replicate=True, reserved=need)

    def _release(self, nbytes: float) -> None:
        self.buffered -= nbytes
        while self._waiters and self.buffered + self._waiters[0][0] <= self.buffer_bytes:
            _need, go = self._waiters.popleft()
            go()

    # -- the local write and its acknowledgement -----------------------------------------------------
    def _write_local(
        self, site: int, io: IORequest, done: Event, replicate: bool, reserved: float = 0.0
    ) -> None:
        """Write ``io`` at ``site`` and acknowledge it once it is written there. ``replicate``: it is put
        in the buffer (``reserved`` bytes of it were reserved at admission); otherwise it is a dirty
        write, copied to the other site by the next resync.

        A write is a dirty write whether it was taken alone or its buffer was dropped (the link or a site
        lost) before it was written locally; its regions are dirty only once it is written, so until then
        it is counted in ``_dirty_in_flight``, which keeps a resync from ending, and a link back before
        detection from skipping the resync, before the write is there to be copied. A write at a site
        lost meanwhile is never acknowledged: the site's hosts are lost with it."""
        version = self._new_version()
        regions = self._regions(io)
        local = self.sites[site]
        stream = self.stream

        def acknowledge(unreplicated: bool, dirty: bool = False) -> None:
            if self.site_up[site]:
                self._acknowledge(regions, version, done, io, dirty=dirty, unreplicated=unreplicated)

        if replicate:
            self._stream_in_flight += 1
            replicated = self._replicate(version, io, regions, reserved, acknowledge)
        else:
            self._dirty_in_flight += 1

        def locally_written() -> None:
            if replicate and self.stream == stream:
                self._stream_in_flight -= 1
                replicated()
                return
            self._dirty_in_flight -= 1  # taken alone, or its buffer is gone: the next resync copies it
            acknowledge(False, dirty=True)

        def on_volume(_e: Event) -> None:
            self._hold(site, regions, version)
            if local.cache is None:
                locally_written()

        if local.cache is not None:
            local.cache.submit(io).callbacks.append(lambda _e: locally_written())
            local.volume.submit(io.child()).callbacks.append(on_volume)
        else:
            local.volume.submit(io).callbacks.append(on_volume)

    def _replicate(
        self,
        version: int,
        io: IORequest,
        regions: range,
        reserved: float,
        acknowledge: Callable[[bool], None],
    ) -> Callable[[], None]:  # pragma: no cover - abstract
        """Put write ``version`` in the buffer (called before the local write is submitted); return what
        to do once the local write is done: in the end call ``acknowledge(unreplicated)``, where
        ``unreplicated`` says the other site does not hold the write yet."""
        raise NotImplementedError

    # -- failures ------------------------------------------------------------------------------------
    def _on_link_lost(self) -> None:
        """The link or a site is lost: what was buffered becomes dirty regions (copied by the resync) and
        the buffer is dropped (a new ``stream``: what of it is still crossing or being applied is
        forgotten, the other site never holds it, and frees no space); writes then continue at the
        active site, tracked as dirty; the passive site suspends."""
        regions = self._buffered_regions(self.env.now)
        for r, t in sorted(regions.items(), key=lambda kv: kv[1]):
            self._dirty.setdefault(r, t)
        owed = self._drop_buffer()
        self.stream += 1  # what is crossing or being applied of the old buffer no longer counts
        self._dirty_in_flight += self._stream_in_flight  # buffered, not yet written here: dirty writes now
        self._stream_in_flight = 0
        self._release(self.buffered)
        for go in owed:
            go()
        self.suspended[1 - self.active] = True

    def _buffered_regions(self, now: float) -> dict[int, float]:  # pragma: no cover - abstract
        """Every region the buffer holds, in buffer order, with when its first buffered write was
        acknowledged (``now`` if not yet)."""
        raise NotImplementedError

    def _drop_buffer(self) -> list[Callable[[], None]]:  # pragma: no cover - abstract
        """Forget what is buffered (the link is lost); return the acknowledgements still owed, to give
        once the buffer's space is released."""
        raise NotImplementedError

    def _on_isolated(self, winner: int | None) -> None:
        if winner != self.active:
            self.suspended[self.active] = True
