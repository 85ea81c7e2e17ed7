"""An array controller's write-back cache: one pool of controller memory shared by the volumes the
controller owns, with coalescing, address-ordered destage and watermark flushing.

This is how midrange arrays (the DS5000/LSI family, CLARiiON, and most others) handle host writes:

- a host write is acknowledged once its data are in the controller's memory (and, with mirroring, in
  the partner controller's: the acknowledgement time includes that copy, and half of each
  controller's data cache holds the partner's mirror, so the capacity a controller's own writes can
  use is half its cache);
- the cache is managed in *cache blocks* (16 KiB on the DS5020); a write to a block that is already
  dirty overwrites it in memory and costs the drives nothing (**coalescing**);
- dirty data are written to the drives (**destaged**) when the dirty share of the cache reaches the
  *start flushing* level, until it falls below the *stop flushing* level, and in any case once they
  are older than the *flush age*;
- a destage takes the dirty blocks in **address order** (a circular scan from where the last destage
  ended) and writes a run of contiguous dirty blocks as one IO, up to a stripe unit, or up to a full
  stripe on parity RAID, which the RAID layout then writes without reading old data and parity;
- the destage IOs in flight per volume are bounded by what its drives can queue
  (:func:`destage_depth`), not by a free parameter, so the **drives set the sustained write rate**:
  when the host writes faster than they absorb, the cache fills and host writes wait for destages to
  free space.

Each volume may hold at most ``volume_share`` of the pool dirty (default: an equal share of the
volumes on the pool), so one volume cannot take the whole cache (per-volume write-pending limits,
as large arrays document them); when a volume is at its limit, its writes wait for its own destages.

Not modelled: the read half of the cache (see :class:`storagelab.components.cache.ReadCache`),
partial-block dirty tracking (a cache block is destaged whole), and battery/backup behaviour.
"""

from __future__ import annotations

from collections import deque

from simpy.events import Event
from sortedcontainers import SortedList

from storagelab.kernel.component import Component, completion_in
from storagelab.kernel.io import IORequest


def destage_depth(members: int, queue_depth: int, member_writes_per_io: int) -> int:
    """Destage IOs a volume can have in flight so that its drives' command queues are full and no
    more: ``members x queue_depth / member_writes_per_io`` (e.g. 4 drives with 32-command queues in
    RAID-10, two member writes per destage: 64)."""
    for name, v in (
        ("members", members),
        ("queue_depth", queue_depth),
        ("member_writes_per_io", member_writes_per_io),
    ):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"destage_depth: {name} must be an integer >= 1, got {v!r}")
    return max(1, members * queue_depth // member_writes_per_io)


class WriteCachePool(Component):
    """A controller's write cache: ``capacity_bytes`` of memory for its own dirty data, in
    ``block_bytes`` cache blocks, shared by the :class:`WriteBackCache` volumes built on it.

    ``start_flush`` and ``stop_flush`` are the dirty fractions (of a volume's share) at which
    destaging starts and stops; ``flush_age`` (s) is how long data may stay dirty; ``write_latency``
    (s) is the acknowledgement time of a write that finds space (including the mirror copy).

    ``warm_start`` (s) starts each volume's cache in the state a long run reaches instead of empty
    (0 = start empty). A volume that writes is watched for ``warm_start`` seconds after its first
    write; from the rate ``r`` at which it dirtied new blocks, a long run holds ``n = min(start level,
    r x flush_age)`` blocks dirty (the watermark caps a fast writer, the flush age a slow one), dirtied
    over the last ``n / r`` seconds. The cache is then topped up to ``n`` blocks with those ages: the
    blocks just below the written ones for a sequential writer (most new blocks follow a dirty one),
    uniformly random blocks of the volume otherwise. A volume that never writes holds nothing dirty.
    Without it a short run sees drives that take no destages until the cache first fills (seconds
    of simulated time at the DS5020's rates).
    """

    def __init__(
        self,
        name: str,
        capacity_bytes: int,
        block_bytes: int = 16 * 1024,
        start_flush: float = 0.8,
        stop_flush: float = 0.8,
        flush_age: float = 10.0,
        write_latency: float = 100e-6,
        warm_start: float = 0.0,
    ) -> None:
        super().__init__(name)
        if isinstance(block_bytes, bool) or not isinstance(block_bytes, int) or block_bytes <= 0:
            raise ValueError(f"write cache {name!r}: block_bytes must be an integer > 0, got {block_bytes!r}")
        if not capacity_bytes >= block_bytes:
            raise ValueError(
                f"write cache {name!r}: capacity_bytes must be >= block_bytes, got {capacity_bytes!r}"
            )
        if not 0 <= stop_flush <= start_flush <= 1:
            raise ValueError(
                f"write cache {name!r}: need 0 <= stop_flush <= start_flush <= 1, got {stop_flush}, {start_flush}"
            )
        if not flush_age > 0:
            raise ValueError(f"write cache {name!r}: flush_age must be > 0 s, got {flush_age!r}")
        if not write_latency >= 0:
            raise ValueError(f"write cache {name!r}: write_latency must be >= 0 s, got {write_latency!r}")
        if not 0 <= warm_start < flush_age:
            raise ValueError(
                f"write cache {name!r}: warm_start must be in [0, flush_age) s, got {warm_start!r}"
            )
        self.capacity_blocks = int(capacity_bytes) // block_bytes
        self.block_bytes = block_bytes
        self.start_flush, self.stop_flush, self.flush_age = start_flush, stop_flush, flush_age
        self.write_latency, self.warm_start = write_latency, warm_start
        self.volumes: list[WriteBackCache] = []

    def attach(self, volume: WriteBackCache) -> None:
        """Register a volume built on this pool (done by :class:`WriteBackCache`)."""
        self.volumes.append(volume)

    def share_blocks(self, volume: WriteBackCache) -> int:
        """The most cache blocks ``volume`` may hold dirty."""
        share = volume.volume_share if volume.volume_share is not None else 1.0 / len(self.volumes)
        return max(1, int(share * self.capacity_blocks))

    def stats(self, elapsed: float) -> dict[str, float]:
        dirty = sum(v.dirty_blocks for v in self.volumes if v.ctx is not None)
        return {"dirty_fraction": dirty / self.capacity_blocks}


class WriteBackCache(Component):
    """One volume's use of a controller write cache (:class:`WriteCachePool`) in front of ``backend``
    (its RAID set).

    ``volume_bytes`` is the volume's size (where the initial dirty blocks lie); ``destage_unit`` is
    the largest destage IO in bytes, aligned to itself (the stripe unit, or the full stripe width on
    parity RAID); ``max_destage`` bounds the destage IOs in flight (see :func:`destage_depth`);
    ``volume_share`` is the fraction of the pool this volume may hold dirty (``None``: an equal
    share).
    """

    def __init__(
        self,
        name: str,
        backend: Component,
        pool: WriteCachePool,
        volume_bytes: int,
        destage_unit: int,
        max_destage: int,
        volume_share: float | None = None,
    ) -> None:
        super().__init__(name)
        b = pool.block_bytes
        if (
            isinstance(destage_unit, bool)
            or not isinstance(destage_unit, int)
            or destage_unit < b
            or destage_unit % b
        ):
            raise ValueError(
                f"write-back cache {name!r}: destage_unit must be a multiple of the {b}-byte cache block, "
                f"got {destage_unit!r}"
            )
        if isinstance(max_destage, bool) or not isinstance(max_destage, int) or max_destage < 1:
            raise ValueError(
                f"write-back cache {name!r}: max_destage must be an integer >= 1, got {max_destage!r}"
            )
        if volume_share is not None and not 0 < volume_share <= 1:
            raise ValueError(
                f"write-back cache {name!r}: volume_share must be in (0, 1] or None, got {volume_share!r}"
            )
        if not volume_bytes >= b:
            raise ValueError(
                f"write-back cache {name!r}: volume_bytes must be >= one cache block, got {volume_bytes!r}"
            )
        self.backend, self.pool = backend, pool
        self.volume_blocks = int(volume_bytes) // b
        self.unit_blocks = destage_unit // b
        self.max_destage, self.volume_share = max_destage, volume_share
        pool.attach(self)
        self.reset_stats()

    def children(self) -> list[Component]:
        return [self.pool, self.backend]

    def on_bind(self) -> None:
        pool = self.pool
        self.block = pool.block_bytes
        self.limit = pool.share_blocks(self)
        self.start_level = pool.start_flush * self.limit
        self.stop_level = pool.stop_flush * self.limit
        self._dirty = SortedList()  # dirty blocks not being destaged, by address
        self._since: dict[int, float] = {}  # dirty block -> when it became dirty (insertion = age order)
        self._flushing: dict[int, int] = {}  # block -> destage IOs in flight that carry it
        self.dirty_blocks = 0  # cache blocks holding dirty data (waiting or being destaged)
        self._waiting: deque[tuple[IORequest, Event, list[int]]] = deque()
        self._in_flight = 0
        self._cursor = 0
        self._flushing_mode = False
        self._age_timer = False
        self._first_write: float | None = None  # warm start: when the volume first wrote
        self._new_blocks = self._sequential_blocks = (
            0  # new blocks dirtied while watched, and how many followed a dirty one
        )
        self.warm_blocks = 0

    def _warm_start(self, _ev: Event) -> None:
        """Top the dirty set up to a long run's (see :class:`WriteCachePool`)."""
        watched = self.env.now - self._first_write
        rate = self._new_blocks / watched
        n = min(int(self.start_level), int(rate * self.pool.flush_age), self.volume_blocks)
        extra = n - len(self._since)
        if extra <= 0:
            return
        since = self._since
        if 2 * self._sequential_blocks > self._new_blocks:  # sequential: the blocks written just before
            low = min(since) if since else 0
            candidates = [b % self.volume_blocks for b in range(low - 1, low - 1 - 4 * extra, -1)]
            blocks = [b for b in dict.fromkeys(candidates) if b not in since and b not in self._flushing][
                :extra
            ]
            span = n / rate
            ages = [self._first_write - span * (k + 1) / (extra + 1) for k in range(len(blocks))]
        else:
            draw = self.rng.choice(
                self.volume_blocks, size=min(self.volume_blocks, 2 * extra + 16), replace=False
            )
            blocks = [b for b in draw.tolist() if b not in since and b not in self._flushing][:extra]
            oldest = min(self.env.now - n / rate, self._first_write)
            ages = self.rng.uniform(oldest, self._first_write, size=len(blocks)).tolist()
        # the added blocks oldest first, then those already dirty (younger): insertion stays in age order
        merged = {b: t for t, b in sorted(zip(ages, blocks, strict=True))}
        merged.update(since)
        self._since = merged
        self._dirty.update(blocks)
        self.dirty_blocks += len(blocks)
        self.warm_blocks = len(blocks)
        self._kick()

    def reset_stats(self) -> None:
        self.writes = self.coalesced = self.stalled = self.destages = self.destaged_blocks = 0
        self.reads = self.read_hits = 0

    # -- host IO -----------------------------------------------------------------------------------
    def _blocks(self, io: IORequest) -> range:
        b = self.block
        return range(io.address // b, (io.address + io.size - 1) // b + 1)

    def submit(self, io: IORequest) -> Event:
        if io.is_read:
            self.reads += 1
            since, flushing = self._since, self._flushing
            if all(b in since or b in flushing for b in self._blocks(io)):
                self.read_hits += 1
                return completion_in(self.env, self.pool.write_latency, io)
            return self.backend.submit(io)
        self.writes += 1
        new = [b for b in self._blocks(io) if b not in self._since]
        if len(new) > self.limit:
            raise ValueError(
                f"write-back cache {self.name!r}: a {io.size}-byte write needs {len(new)} cache blocks, more "
                f"than the volume's {self.limit}"
            )
        if not new:
            self.coalesced += 1
        if self._first_write is None:
            self._first_write = self.env.now
            if self.pool.warm_start > 0:
                completion_in(self.env, self.pool.warm_start, None).callbacks.append(self._warm_start)
        if self.pool.warm_start > 0 and self.env.now - self._first_write < self.pool.warm_start:
            self._new_blocks += len(new)
            self._sequential_blocks += sum(1 for b in new if b - 1 in self._since or b - 1 in new)
        if not self._waiting and self.dirty_blocks + len(new) <= self.limit:
            self._admit(new)
            return completion_in(self.env, self.pool.write_latency, io)
        self.stalled += 1
        ev = Event(self.env)
        self._waiting.append((io, ev, new))
        self._kick()
        return ev

    def _admit(self, new: list[int]) -> None:
        now = self.env.now
        since = self._since
        for b in new:
            since[b] = now
        self._dirty.update(new)
        self.dirty_blocks += len(new)
        self._kick()

    # -- destage -----------------------------------------------------------------------------------
    def _kick(self) -> None:
        """Start destages while the volume should flush and its drives can take more."""
        if self._flushing_mode:
            if self.dirty_blocks < self.stop_level and not self._waiting:
                self._flushing_mode = False
        elif self.dirty_blocks >= self.start_level or self._waiting:
            self._flushing_mode = True
        aged = self._aged()
        depth = self._depth()
        while self._dirty and self._in_flight < depth and (self._flushing_mode or aged):
            self._destage_next(None if self._flushing_mode else next(iter(self._since)))
            aged = self._aged()
        if self._since and not self._age_timer and not aged:
            # wake when the oldest dirty block ages out (while aged blocks remain, completions drive it)
            self._age_timer = True
            oldest = next(iter(self._since.values()))
            completion_in(self.env, oldest + self.pool.flush_age - self.env.now, None).callbacks.append(
                self._age_due
            )

    def _depth(self) -> int:
        """Destage IOs allowed in flight: linear threshold scheduling (Gill and Modha, "WOW: Wise
        Ordering for Writes", FAST 2005): from one at the start-flushing level to ``max_destage`` when
        the volume's share is full or writes wait, so destages disturb reads only as much as the
        write load needs; aged blocks alone are destaged one at a time."""
        if self._waiting or self.dirty_blocks >= self.limit:
            return self.max_destage
        if not self._flushing_mode:
            return 1
        room = self.limit - self.start_level
        over = self.dirty_blocks - self.start_level
        if room <= 0:
            return self.max_destage
        return max(1, min(self.max_destage, 1 + int((self.max_destage - 1) * over / room)))

    def _aged(self) -> bool:
        """Whether the oldest dirty block has been dirty for the flush age (to within 1 ns, so the
        timer set for that moment finds it due despite rounding)."""
        since = self._since
        return bool(since) and next(iter(since.values())) + self.pool.flush_age <= self.env.now + 1e-9

    def _age_due(self, _ev: Event) -> None:
        self._age_timer = False
        self._kick()

    def _destage_next(self, block: int | None = None) -> None:
        """Destage a run of contiguous dirty blocks within one destage unit: the run at or after the
        cursor (wrapping round), or with ``block`` (an aged block), the dirty blocks of its unit
        contiguous with it."""
        dirty = self._dirty
        if block is None:
            i = dirty.bisect_left(self._cursor)
            if i == len(dirty):
                i = 0
        else:
            i = dirty.index(block)
            unit_start = block // self.unit_blocks * self.unit_blocks
            while i > 0 and dirty[i - 1] == dirty[i] - 1 and dirty[i - 1] >= unit_start:
                i -= 1
        first = dirty[i]
        unit_end = (first // self.unit_blocks + 1) * self.unit_blocks
        run = [first]
        j = i + 1
        while j < len(dirty) and dirty[j] == run[-1] + 1 and dirty[j] < unit_end:
            run.append(dirty[j])
            j += 1
        del dirty[i:j]
        since, flushing = self._since, self._flushing
        for b in run:
            del since[b]
            flushing[b] = flushing.get(b, 0) + 1
        if block is None:
            self._cursor = run[-1] + 1
        self._in_flight += 1
        self.destages += 1
        io = IORequest(
            False, len(run) * self.block, first * self.block, cls="destage", submitted=self.env.now
        )
        io.tag = run
        self.backend.submit(io).callbacks.append(self._destaged)

    def _destaged(self, ev: Event) -> None:
        run: list[int] = ev._value.tag
        flushing = self._flushing
        for b in run:
            n = flushing[b] - 1
            if n:
                flushing[b] = n
            else:
                del flushing[b]
        self._in_flight -= 1
        self.destaged_blocks += len(run)
        self.dirty_blocks -= len(run)
        waiting = self._waiting
        while waiting:
            io, wev, new = waiting[0]
            new = [b for b in new if b not in self._since]  # blocks dirtied meanwhile are coalesced
            if self.dirty_blocks + len(new) > self.limit:
                break
            waiting.popleft()
            self._admit(new)
            completion_in(self.env, self.pool.write_latency, None).callbacks.append(
                lambda _e, wev=wev, io=io: wev.succeed(io)
            )
        self._kick()

    def stats(self, elapsed: float) -> dict[str, float]:
        return {
            "writes": float(self.writes),
            "coalesced_writes": float(self.coalesced),
            "stalled_writes": float(self.stalled),
            "destage_ios": float(self.destages),
            "blocks_per_destage": self.destaged_blocks / self.destages if self.destages else 0.0,
            "read_hit_ratio": self.read_hits / self.reads if self.reads else 0.0,
            "dirty_fraction": self.dirty_blocks / self.limit,
            "warm_start_blocks": float(self.warm_blocks),
        }


__all__ = ["WriteBackCache", "WriteCachePool", "destage_depth"]
