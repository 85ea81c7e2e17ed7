"""Caches in the IO path: a read cache in front of a back end, and a write-back buffer with destaging.

Both work in fixed-size blocks of the address space and use a replacement policy from
:mod:`storagelab.components.cache_policies` (LRU, S3-FIFO, ...), validated against libCacheSim.
"""

from __future__ import annotations

from collections import deque
from functools import partial
from typing import cast

from mypy_extensions import mypyc_attr

from storagelab.components import cache_policies
from storagelab.kernel.component import (
    Component,
    EventLike,
    Signal,
    TimedComponent,
    completion_in,
    fire,
    heappop,
    heappush,
)
from storagelab.kernel.composition import join_all
from storagelab.kernel.io import IORequest

POLICIES = {"lru": "LRU", "s3fifo": "S3FIFO", "arc": "ARC"}


def make_policy(policy: str, capacity_blocks: int):
    """A replacement policy by name (``lru``, ``s3fifo``, ``arc``)."""
    cls_name = POLICIES.get(policy)
    if cls_name is None or not hasattr(cache_policies, cls_name):
        known = [k for k, v in POLICIES.items() if hasattr(cache_policies, v)]
        raise ValueError(f"unknown cache policy {policy!r}; known: {', '.join(known)}")
    return getattr(cache_policies, cls_name)(capacity_blocks)


def _succeed(event: EventLike, value: object, _ev: EventLike) -> None:
    """A callback that succeeds ``event`` with ``value`` (queued, as ``event.succeed`` does)."""
    event.succeed(value)


def _blocks(io: IORequest, block: int) -> range:
    return range(io.address // block, (io.address + io.size - 1) // block + 1)


@mypyc_attr(allow_interpreted_subclasses=True)  # subclassed by modules not compiled
class ReadCache(Component):
    """A read cache of ``capacity_bytes`` in ``block_bytes`` blocks in front of ``backend``.

    A read whose blocks are all cached completes after ``hit_latency`` seconds plus ``size /
    hit_bandwidth``; otherwise it goes to the back end, and its missing blocks are being *filled* until
    that read completes. A block is in the replacement policy from its miss (so replacement order and
    hit counts are those of the trace, as libCacheSim counts them), but its data exist only when its
    fill completes: a read that finds all its blocks in the cache, some of them still filling, waits for
    those fills and then for the hit time (a *delayed hit*). Writes go through to the back end;
    ``write_policy`` decides what the cache does with the written blocks: ``"invalidate"`` (drop them,
    and forget their fills), ``"update"`` (write-allocate: keep them as cached, with the written data),
    or ``"around"`` (leave the cache alone).

    With ``coalesce_fills`` False, a read that finds its blocks still filling is not a delayed hit: it is
    a miss and reads the back end itself (a cache that allocates a block at its miss but serves no read
    from it until its data are valid, and keeps no list of the reads waiting on it).

    With ``read_ahead_to`` (bytes, 0 = off) the cache reads ahead: a read that starts where one of the
    last ``streams`` reads ended is *sequential*, and a sequential miss is read from the back end as one
    read extended from its end up to the next multiple of ``read_ahead_to`` (e.g. a RAID segment, which
    one drive holds contiguously), over the blocks that are neither resident nor filling; the host read
    completes with that read, and the blocks beyond it are resident for the reads that follow. Reads
    ending on the boundary, hits and non-sequential misses read nothing ahead. ``volume_bytes`` bounds
    the extension to the volume.
    """

    WRITE_POLICIES = ("invalidate", "update", "around")

    def __init__(
        self,
        name: str,
        backend: Component,
        capacity_bytes: int,
        block_bytes: int = 4096,
        policy: str = "lru",
        hit_latency: float = 50e-6,
        hit_bandwidth: float = 2e9,
        write_policy: str = "invalidate",
        read_ahead_to: int = 0,
        streams: int = 32,
        volume_bytes: int | None = None,
        coalesce_fills: bool = True,
    ) -> None:
        super().__init__(name)
        if block_bytes <= 0 or capacity_bytes < block_bytes:
            raise ValueError(f"read cache {name!r}: need block_bytes > 0 and capacity_bytes >= block_bytes")
        if hit_latency < 0 or hit_bandwidth <= 0:
            raise ValueError(f"read cache {name!r}: hit_latency must be >= 0 s and hit_bandwidth > 0 B/s")
        if write_policy not in self.WRITE_POLICIES:
            raise ValueError(f"read cache {name!r}: write_policy must be one of {self.WRITE_POLICIES}")
        if read_ahead_to < 0 or (read_ahead_to and read_ahead_to % block_bytes):
            raise ValueError(
                f"read cache {name!r}: read_ahead_to must be 0 (off) or a multiple of block_bytes "
                f"({block_bytes} B), got {read_ahead_to}"
            )
        if streams < 1:
            raise ValueError(f"read cache {name!r}: streams must be >= 1, got {streams}")
        self.read_ahead_to, self.streams, self.volume_bytes = read_ahead_to, streams, volume_bytes
        self.coalesce_fills = coalesce_fills
        self.backend = backend
        self.capacity_bytes, self.block_bytes = capacity_bytes, block_bytes
        self.policy_name, self.hit_latency, self.hit_bandwidth = policy, hit_latency, hit_bandwidth
        self.write_policy = write_policy
        self.policy = make_policy(policy, capacity_bytes // block_bytes)
        self.reset_stats()

    def children(self) -> list[Component]:
        return [self.backend]

    def on_bind(self) -> None:
        self.policy = make_policy(self.policy_name, self.capacity_bytes // self.block_bytes)
        self._filling: dict[int, EventLike] = {}  # block -> the back-end read that brings its data
        self._stream_ends: dict[int, None] = {}  # where recent reads ended, oldest first (insertion order)

    def reset_stats(self) -> None:
        self.read_hits = self.read_misses = self.delayed_hits = self.writes = 0
        self.prefetches = self.prefetched_blocks = 0
        p = getattr(self, "policy", None)
        self._base = (p.hits, p.misses) if p is not None else (0, 0)

    def submit(self, io: IORequest) -> EventLike:
        policy, filling, block = self.policy, self._filling, self.block_bytes
        first = io.address // block
        one = (io.address + io.size - 1) // block == first  # most IOs: one block, no lists
        if io.is_read:
            if one:
                if policy.access(first):
                    fill = filling.get(first)
                    if fill is None:
                        self.read_hits += 1
                        done = self._hit(io)
                    elif not self.coalesce_fills:
                        self.read_misses += 1
                        done = self.backend.submit(io)
                    else:
                        self.delayed_hits += 1
                        done = self._after_fills([fill], io)
                else:
                    done = self._miss(io, [first])
            else:
                blocks = _blocks(io, block)
                missing = [b for b in blocks if not policy.access(b)]
                if not missing:
                    fills = {id(f): f for b in blocks if (f := filling.get(b)) is not None}
                    if not fills:
                        self.read_hits += 1
                        done = self._hit(io)
                    elif not self.coalesce_fills:
                        self.read_misses += 1
                        done = self.backend.submit(io)
                    else:
                        self.delayed_hits += 1
                        done = self._after_fills(list(fills.values()), io)
                else:
                    done = self._miss(io, missing)
            if self.read_ahead_to:  # remember where this read ended (the last ``streams`` ends)
                ends = self._stream_ends
                ends.pop(io.address, None)
                end = io.address + io.size
                ends.pop(end, None)  # re-inserted as the newest
                ends[end] = None
                if len(ends) > self.streams:
                    del ends[next(iter(ends))]
            return done
        self.writes += 1
        policy_name = self.write_policy
        if policy_name != "around":
            for b in (first,) if one else _blocks(io, block):
                filling.pop(b, None)  # the written data replace (or drop) whatever a fill brings
                if policy_name == "invalidate":
                    policy.discard(b)
                else:
                    policy.insert(b)
        return self.backend.submit(io)

    def _miss(self, io: IORequest, missing: list[int]) -> EventLike:
        """A read with ``missing`` blocks: from the back end, read ahead if it continues a stream."""
        self.read_misses += 1
        sequential = self.read_ahead_to and io.address in self._stream_ends
        ahead = self._ahead(io) if sequential else None
        return self._read_extended(io, missing, ahead) if ahead else self._fetch(io, missing)

    def _fetch(self, io: IORequest, missing: list[int]) -> EventLike:
        """Read ``io`` from the back end; its ``missing`` blocks are filling until it completes."""
        fetch = self.backend.submit(io)
        filling = self._filling
        for b in missing:
            filling[b] = fetch
        fetch.callbacks.append(partial(self._filled, missing))
        return fetch

    def _ahead(self, io: IORequest) -> range:
        """Blocks to read beyond a missed ``io`` that continues a recent read: the run of blocks past its
        end, up to the next ``read_ahead_to`` boundary, neither resident nor filling."""
        end = io.address + io.size
        step = self.read_ahead_to
        stop = -(-end // step) * step
        if self.volume_bytes is not None:
            stop = min(stop, self.volume_bytes)
        block = self.block_bytes
        first = -(-end // block)  # the first whole block past the read (a partial one is the read's own)
        policy, filling = self.policy, self._filling
        last = first
        for b in range(first, stop // block):
            if b in policy or b in filling:
                break
            last = b + 1
        return range(first, last)

    def _read_extended(self, io: IORequest, missing: list[int], ahead: range) -> EventLike:
        """Read ``io`` and the blocks ``ahead`` of it as one back-end read; ``io`` completes with it."""
        for b in ahead:
            self.policy.insert(b)
        self.prefetches += 1
        self.prefetched_blocks += len(ahead)
        read = io.child(size=ahead.stop * self.block_bytes - io.address)
        fetch = self._fetch(read, missing + list(ahead))
        done = Signal(self.env)
        fetch.callbacks.append(lambda _ev: fire(done, io))
        return done

    def _hit(self, io: IORequest) -> EventLike:
        """Serve a read whose blocks are all resident: ``hit_latency`` plus ``size / hit_bandwidth``."""
        return completion_in(self.env, self.hit_latency + io.size / self.hit_bandwidth, io)

    def _filled(self, blocks: list[int], fetch: EventLike) -> None:
        """A back-end read completed: the blocks it was filling hold their data now."""
        filling = self._filling
        for b in blocks:
            if filling.get(b) is fetch:
                del filling[b]

    def _after_fills(self, fills: list[EventLike], io: IORequest) -> EventLike:
        """An event for ``io`` served from the cache once every fill in ``fills`` has completed."""
        env, done = self.env, Signal(self.env)

        def serve(_ev: EventLike) -> None:
            self._hit(io).callbacks.append(lambda _e: fire(done, io))

        join_all(env, fills, io).callbacks.append(serve)
        return done

    def stats(self, elapsed: float) -> dict[str, float]:
        reads = self.read_hits + self.read_misses + self.delayed_hits
        hits, misses = self.policy.hits - self._base[0], self.policy.misses - self._base[1]
        return {
            "read_ios": float(reads),
            "read_hit_ratio": self.read_hits / reads if reads else 0.0,
            "read_misses": float(self.read_misses),
            "delayed_hits": float(self.delayed_hits),
            "prefetches": float(self.prefetches),
            "block_hit_ratio": hits / (hits + misses) if hits + misses else 0.0,
            "writes": float(self.writes),
        }


class WriteBackBuffer(Component):
    """A write-back buffer (NVRAM / SSD write buffer) of ``capacity_bytes`` in front of ``backend``.

    A write is acknowledged after ``write_latency`` seconds (plus, with ``ack_bandwidth`` in B/s, the
    transfer of its bytes beyond ``ack_block`` at that rate) once it fits in the buffer; if the buffer
    is full it waits for destaging to free space. Destaging starts when dirty data exceed
    ``high_watermark`` x capacity and continues until they fall below ``low_watermark`` x capacity
    (``high_watermark=0`` destages continuously), with at most ``destage_concurrency`` destage IOs in
    flight and at most ``flush_rate`` bytes/s (``None``: unlimited). Reads of blocks still dirty in the
    buffer are served at ``write_latency``; other reads pass to the back end.

    When the buffer destages continuously (``high_watermark=0``, no ``flush_rate``) into a back end that
    can say at arrival when an IO completes (a FIFO station on its fast path, ``timed``), a destage
    schedules no event: its completion time goes into a heap and the buffer frees its space when it next
    looks (a write, a read, the statistics). Only while writes wait for space or destages wait for a
    slot does it wake at the next completion, as the event-per-destage path does then. The results are
    the same either way (a test compares them), with an event less per write, except where a destage
    ends at the very instant of another event (deterministic times): its space then counts as free at
    that instant, where the event path may order the two the other way.
    """

    def __init__(
        self,
        name: str,
        backend: Component,
        capacity_bytes: int,
        block_bytes: int = 4096,
        write_latency: float = 20e-6,
        high_watermark: float = 0.5,
        low_watermark: float = 0.25,
        destage_concurrency: int = 8,
        flush_rate: float | None = None,
        ack_bandwidth: float | None = None,
        ack_block: int = 4096,
    ) -> None:
        super().__init__(name)
        if ack_bandwidth is not None and not ack_bandwidth > 0:
            raise ValueError(f"write-back buffer {name!r}: ack_bandwidth must be > 0 bytes/s or None")
        if capacity_bytes <= 0 or block_bytes <= 0:
            raise ValueError(f"write-back buffer {name!r}: capacity_bytes and block_bytes must be > 0")
        if not 0 <= low_watermark <= high_watermark <= 1:
            raise ValueError(
                f"write-back buffer {name!r}: need 0 <= low_watermark <= high_watermark <= 1, "
                f"got {low_watermark}, {high_watermark}"
            )
        if not isinstance(destage_concurrency, int) or destage_concurrency < 1:
            raise ValueError(f"write-back buffer {name!r}: destage_concurrency must be an integer >= 1")
        if flush_rate is not None and not flush_rate > 0:
            raise ValueError(f"write-back buffer {name!r}: flush_rate must be > 0 bytes/s or None")
        self.backend = backend
        self.capacity_bytes, self.block_bytes, self.write_latency = capacity_bytes, block_bytes, write_latency
        self.high, self.low = high_watermark * capacity_bytes, low_watermark * capacity_bytes
        self.destage_concurrency, self.flush_rate = destage_concurrency, flush_rate
        self._ack_per_byte = 0.0 if ack_bandwidth is None else 1.0 / ack_bandwidth
        self._ack_block = ack_block
        self.reset_stats()

    def children(self) -> list[Component]:
        return [self.backend]

    def on_bind(self) -> None:
        self.dirty_bytes = 0
        self._queue: deque[IORequest] = deque()  # accepted writes awaiting destage
        self._waiting: deque[tuple[IORequest, EventLike]] = deque()  # writes waiting for space
        self._in_flight = 0
        self._destaging = False
        self._next_flush = 0.0
        self._flush_timer = False  # a rate-limit wake-up is pending
        # timed destages (see the class docstring): the back end's submit_timed, or None
        timed = self.high == 0 and self.flush_rate is None and getattr(self.backend, "timed", False)
        self._timed = cast(TimedComponent, self.backend).submit_timed if timed else None
        self._done: list[tuple[float, int, IORequest]] = []  # timed destages in flight: (end, seq, io)
        # block -> number of queued or in-flight destages covering it (what a read can hit); with timed
        # destages built at the first read from the writes queued and in flight, so that a buffer that
        # serves no reads (a drive's, behind a read/write split) keeps no index
        self._dirty_blocks: dict[int, int] | None = None if timed else {}
        self._seq = 0
        self._wake_at: float | None = None  # a wake-up at the next timed completion is pending

    def reset_stats(self) -> None:
        if getattr(self, "_done", None):  # destages that ended before now belong to the warm-up
            self._retire(self.env._now)
        self.writes = self.reads = self.read_hits = self.destaged = self.stalled = 0

    def submit(self, io: IORequest) -> EventLike:
        done = self._done
        if done and done[0][0] <= self.env._now:
            self._retire(self.env._now)
        if io.is_read:
            self.reads += 1
            dirty = self._dirty_blocks
            if dirty is None:
                dirty = self._dirty_blocks = self._index_dirty()
            block = self.block_bytes
            first, last = io.address // block, (io.address + io.size - 1) // block
            # every block the read covers is dirty: the one block, in the common case of a read within one
            if first in dirty if first == last else all(b in dirty for b in range(first, last + 1)):
                self.read_hits += 1
                return completion_in(self.env, self.write_latency, io)
            return self.backend.submit(io)
        if io.size > self.capacity_bytes:
            raise ValueError(
                f"write-back buffer {self.name!r}: a {io.size}-byte write cannot fit in a "
                f"{self.capacity_bytes}-byte buffer"
            )
        self.writes += 1
        if self.dirty_bytes + io.size <= self.capacity_bytes and not self._waiting:
            return self._accept(io)
        self.stalled += 1
        ev = Signal(self.env)
        self._waiting.append((io, ev))
        self._kick()
        return ev

    def _accept(self, io: IORequest) -> EventLike:
        size = io.size
        self.dirty_bytes += size
        dirty, block = self._dirty_blocks, self.block_bytes
        if dirty is not None:
            first, last = io.address // block, (io.address + size - 1) // block
            if first == last:  # the common case, a write within one block
                dirty[first] = dirty.get(first, 0) + 1
            else:
                for b in range(first, last + 1):
                    dirty[b] = dirty.get(b, 0) + 1
        timed, done = self._timed, self._done
        if timed is not None and not self._queue and len(done) < self.destage_concurrency:
            # a free destage slot and nothing queued before it: destage at once (what _kick_timed does
            # with a queue of one; the back end's fast path keeps no reference to the IO, so it is
            # given the write itself rather than a member IO)
            heappush(done, (timed(io), self._seq, io))
            self._seq += 1
            if self._waiting:
                self._wake_at_next()
        else:
            self._queue.append(io)
            self._kick()
        extra = size - self._ack_block
        return completion_in(
            self.env, self.write_latency + (extra * self._ack_per_byte if extra > 0 else 0.0), io
        )

    def _kick(self) -> None:
        if self._timed is not None:
            self._kick_timed()
            return
        if not self._destaging and self.dirty_bytes > self.high:
            self._destaging = True
        if not self._destaging and not self._waiting:
            return
        now = self.env._now
        while self._queue and self._in_flight < self.destage_concurrency:
            if self.flush_rate is not None and self._next_flush > now:
                if not self._flush_timer:
                    self._flush_timer = True
                    completion_in(self.env, self._next_flush - now, None).callbacks.append(self._flush_due)
                return
            io = self._queue.popleft()
            self._in_flight += 1
            if self.flush_rate is not None:
                self._next_flush = max(self._next_flush, now) + io.size / self.flush_rate
            self.backend.submit(io.child()).callbacks.append(self._destaged)

    def _flush_due(self, _ev: EventLike) -> None:
        self._flush_timer = False
        self._kick()

    def _destaged(self, ev: EventLike) -> None:
        self._in_flight -= 1
        self._free(ev._value.tag)
        if self.dirty_bytes <= self.low:
            self._destaging = False
        self._admit_waiting()
        self._kick()

    def _free(self, io: IORequest) -> None:
        """The destage of ``io`` has completed: its bytes and blocks are clean."""
        self.destaged += 1
        self.dirty_bytes -= io.size
        dirty, block = self._dirty_blocks, self.block_bytes
        if dirty is None:
            return
        first, last = io.address // block, (io.address + io.size - 1) // block
        for b in (first,) if first == last else range(first, last + 1):
            n = dirty[b] - 1
            if n:
                dirty[b] = n
            else:
                del dirty[b]

    def _index_dirty(self) -> dict[int, int]:
        """The dirty-block index of the writes now queued or in flight (timed destages)."""
        dirty: dict[int, int] = {}
        for io in (*self._queue, *(entry[2] for entry in self._done)):
            for b in _blocks(io, self.block_bytes):
                dirty[b] = dirty.get(b, 0) + 1
        return dirty

    def _admit_waiting(self) -> None:
        while self._waiting and self.dirty_bytes + self._waiting[0][0].size <= self.capacity_bytes:
            wio, wev = self._waiting.popleft()
            self._accept(wio).callbacks.append(partial(_succeed, wev, wio))

    # -- timed destages --------------------------------------------------------------------------
    def _retire(self, now: float) -> None:
        """Free the timed destages that have completed by ``now``, in completion order."""
        done = self._done
        while done and done[0][0] <= now:
            self._free(heappop(done)[2])

    def _kick_timed(self) -> None:
        queue, done = self._queue, self._done
        while queue and len(done) < self.destage_concurrency:
            io = queue.popleft()
            heappush(done, (self._timed(io), self._seq, io))  # type: ignore[misc]  # set (not None) wherever this method is used
            self._seq += 1
        if queue or self._waiting:
            self._wake_at_next()

    def _wake_at_next(self) -> None:
        """Something waits on a timed destage's completion: wake at the next one, as a destage's own
        event would."""
        done = self._done
        if done:
            end = done[0][0]
            if self._wake_at is None or end < self._wake_at:
                self._wake_at = end
                completion_in(self.env, end - self.env.now, end).callbacks.append(self._wake)

    def _wake(self, ev: EventLike) -> None:
        if ev._value == self._wake_at:
            self._wake_at = None
        self._retire(self.env._now)
        self._admit_waiting()
        self._kick_timed()

    def stats(self, elapsed: float) -> dict[str, float]:
        if self._done:
            self._retire(self.env._now)
        return {
            "writes": float(self.writes),
            "destaged": float(self.destaged),
            "stalled_writes": float(self.stalled),
            "read_hit_ratio": self.read_hits / self.reads if self.reads else 0.0,
            "dirty_fraction": self.dirty_bytes / self.capacity_bytes,
        }


__all__ = ["ReadCache", "WriteBackBuffer", "make_policy"]
