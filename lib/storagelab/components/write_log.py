"""A flash write log in steady state: writes are acknowledged by the log device and destaged to the
capacity tier in address order, at the rate they bring new blocks into it.

This is how a hyper-converged write buffer (Virtual SAN's, in its hybrid disk groups) handles writes
once it has run for a while:

- a write is acknowledged when the log device (an SSD) has it;
- the data not yet destaged stay in the log up to a *level* (Virtual SAN's log congestion low limit,
  ``lsoLogCongestionLowLimitGB``); an elevator process writes them to the capacity drives in address
  order, sweeping the written addresses from low to high and starting again (a circular scan);
- at the level, every block written that is not already in the log makes one block to destage, so the
  **capacity drives take the write rate less the overwrites the log absorbs**; what destaging costs them
  depends on how close together the blocks of the sweep lie;
- when the drives fall behind, the backlog grows past the level; beyond ``backlog_bytes`` more (the
  congestion high limit), a write is held until the backlog drains (congestion).

A short run cannot replay the hours in which a real log fills to its level, so the log starts at its
level: what the drives are given to destage is one block (or one IO of the written size) for each
write that brings a block not already in the log, at the addresses a sweep of that level would find.
In steady state, blocks written uniformly at random over ``S`` bytes, swept round every ``T`` seconds,
accumulate ahead of the sweep: just behind it nothing is dirty, just ahead of it what was written in
the last ``T``. With the level ``L`` the average of that profile, the dirty share of the data just
ahead of the sweep is ``d = 1 - exp(-x)`` where ``1 - (1 - exp(-x)) / x = L / S`` (about ``2 L / S``
when ``L`` is small against ``S``). The sweep therefore meets a dirty run after a geometric number of
clean ones (:attr:`WriteLog.density`). ``S`` is the address range written so far (the highest written
byte), so the same log serves a 15 GB or a 240 GB data set.

**Overwrites coalesce.** A write whose block is still in the log (not yet destaged) replaces it there
and gives the drives nothing new to destage: at the level, a uniformly random write finds its block
dirty with probability ``L / S`` (the dirty share), so the log destages ``1 - L / S`` of the writes, and
none once the data fit below the level. This is the same steady state as the sweep's: the sweep cleans
``d / x`` of a block per block written, ``(1 - exp(-x)) / x = 1 - L / S`` (a log that destaged every
write would sweep ``x / d`` times too fast for the density it assumes). The first test of
``tests/test_write_log.py`` simulates that sweep block by block, overwrites included. Which writes
coalesce is drawn per write (the component's ``coalescing`` stream), 3 % of them for the Virtual SAN
study's 8 GB over 240 GB per host, about half at its four VMs (15 GB per host).

Not modelled: the reads of the log device that destaging makes, and a sequential writer's log (its
destage is contiguous; here its IOs keep the written size but lie at the gaps a random writer's would).
"""

from __future__ import annotations

import math
from collections import deque

from scipy.optimize import brentq

from storagelab.kernel.component import Component, EventLike, Signal, fire_last
from storagelab.kernel.io import IORequest
from storagelab.kernel.randomness import variates


def sweep_density(level_share: float) -> float:
    """Dirty share of the data just ahead of a circular destage sweep, in steady state, when the log
    holds ``level_share`` of the data written uniformly at random (see the module docstring): ``1 -
    exp(-x)`` with ``1 - (1 - exp(-x)) / x = level_share``; 1 when the log holds it all."""
    if not level_share >= 0:
        raise ValueError(f"sweep_density: level_share must be >= 0, got {level_share!r}")
    if level_share == 0:
        return 0.0
    if level_share >= 1 - 1e-9:
        return 1.0

    def gap(x: float) -> float:
        return 1 - (-math.expm1(-x)) / x - level_share

    x = brentq(gap, 1e-12, 1e3, xtol=1e-12)
    return -math.expm1(-x)


class WriteLog(Component):
    """A write log on ``log`` (the device that acknowledges writes) destaging to ``backend`` (the
    capacity tier), held at ``level_bytes`` of data not yet destaged (see the module docstring).

    ``backlog_bytes``: destage work (bytes) that may wait beyond the level before writes are held;
    ``max_destage``: destage IOs in flight (what the capacity drives' command queues take);
    ``block_bytes``: the log's block, the unit of the sweep's gaps. Reads go to ``backend`` (a read
    cache in front of the log decides what it serves)."""

    def __init__(
        self,
        name: str,
        log: Component,
        backend: Component,
        level_bytes: int,
        backlog_bytes: int,
        max_destage: int,
        block_bytes: int = 4096,
    ) -> None:
        super().__init__(name)
        if isinstance(block_bytes, bool) or not isinstance(block_bytes, int) or block_bytes <= 0:
            raise ValueError(f"write log {name!r}: block_bytes must be an integer > 0, got {block_bytes!r}")
        if not level_bytes >= block_bytes:
            raise ValueError(
                f"write log {name!r}: level_bytes must be >= one {block_bytes}-byte block, got {level_bytes!r}"
            )
        if not backlog_bytes >= 0:
            raise ValueError(f"write log {name!r}: backlog_bytes must be >= 0, got {backlog_bytes!r}")
        if isinstance(max_destage, bool) or not isinstance(max_destage, int) or max_destage < 1:
            raise ValueError(f"write log {name!r}: max_destage must be an integer >= 1, got {max_destage!r}")
        self.log, self.backend = log, backend
        self.level_bytes, self.backlog_bytes = int(level_bytes), int(backlog_bytes)
        self.max_destage, self.block_bytes = max_destage, block_bytes
        self.reset_stats()

    def children(self) -> list[Component]:
        return [self.log, self.backend]

    def on_bind(self) -> None:
        self.span = 0  # highest byte written so far: the data the sweep goes over
        self.density = 1.0  # dirty share just ahead of the sweep, for that span
        self.overwrite_share = 1.0  # share of writes that find their block in the log: L / S, at most 1
        assert self.ctx is not None  # bound: on_bind runs after bind() set it
        self._coalesce_draw = variates(self.ctx.streams.stream(f"{self.name}: coalescing"),
                                       lambda g, n: g.random(n)).__next__  # fmt: skip
        self._cursor = -1  # next byte the sweep may destage (-1: not started)
        self._backlog = 0  # bytes acknowledged and not yet sent to the backend
        self._todo: deque[int] = deque()  # sizes of the writes to destage, in arrival order
        self._held: deque[tuple[IORequest, EventLike]] = deque()  # writes held by congestion
        self._in_flight = 0

    def reset_stats(self) -> None:
        self.writes = self.destages = self.destaged_bytes = self.held = self.coalesced = 0
        self.max_backlog = 0

    def submit(self, io: IORequest) -> EventLike:
        if io.is_read:
            return self.backend.submit(io)
        self.writes += 1
        end = io.address + io.size
        if end > self.span:
            self.span = end
            self.density = sweep_density(self.level_bytes / end)
            self.overwrite_share = min(1.0, self.level_bytes / end)
        done = Signal.__new__(Signal)  # Signal(self.env), without its __init__ call
        done.env, done.callbacks = self.env, []
        self.log.submit(io).callbacks.append(lambda _ev: self._logged(io, done))
        return done

    def _logged(self, io: IORequest, done: EventLike) -> None:
        if self._held or not self._room_for(io.size):
            self.held += 1
            self._held.append((io, done))  # congestion: admitted when the destage has drained room
            return
        self._admit(io)
        fire_last(done, io)  # done.succeed(io), without an event when nothing else is due now

    def _room_for(self, size: int) -> bool:
        """Whether ``size`` more bytes of destage work fit in the backlog (an empty backlog takes any
        write)."""
        return not self._backlog or self._backlog + size <= self.backlog_bytes

    def _admit(self, io: IORequest) -> None:
        """Add a logged write's data to the destage work, unless it overwrote a block still in the log
        (drawn with probability :attr:`overwrite_share`)."""
        if self._coalesce_draw() < self.overwrite_share:
            self.coalesced += 1
            return
        self._todo.append(io.size)
        self._backlog += io.size
        self.max_backlog = max(self.max_backlog, self._backlog)
        self._kick()

    def _kick(self) -> None:
        """Send destage IOs while there is work and the drives' queues have room."""
        while self._todo and self._in_flight < self.max_destage:
            size = self._todo.popleft()
            self._backlog -= size
            self._in_flight += 1
            self.destages += 1
            address = self._next_address(size)
            io = IORequest(False, size, address, cls="destage", submitted=self.env._now)
            self.backend.submit(io).callbacks.append(self._destaged)

    def _next_address(self, size: int) -> int:
        """Where the sweep finds the next dirty run of ``size`` bytes: after a geometric number of
        clean runs of that size (none when everything ahead is dirty), wrapping to the start."""
        b = self.block_bytes
        if self._cursor < 0:
            self._cursor = int(self.rng.integers(max(1, self.span // b))) * b
        clean = 0 if self.density >= 1.0 else int(self.rng.geometric(self.density)) - 1
        address = self._cursor + clean * -(-size // b) * b
        if address + size > self.span:
            address = 0
        self._cursor = address + size
        return address

    def _destaged(self, ev: EventLike) -> None:
        self._in_flight -= 1
        self.destaged_bytes += ev._value.size
        self._kick()
        held = self._held
        while held and self._room_for(held[0][0].size):
            io, done = held.popleft()
            self._admit(io)
            done.succeed(io)

    def stats(self, elapsed: float) -> dict[str, float]:
        return {
            "writes": float(self.writes),
            "coalesced_writes": float(self.coalesced),
            "destage_ios": float(self.destages),
            "held_writes": float(self.held),
            "max_backlog_mb": self.max_backlog / 1e6,
            "sweep_density": float(self.density),
        }


__all__ = ["WriteLog", "sweep_density"]
