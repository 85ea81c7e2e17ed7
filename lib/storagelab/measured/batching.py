"""A batching stage: a server that takes every IO waiting when it starts (up to ``max_batch``) and
completes them together, after an overhead per batch plus a time per IO of the batch.

It is the shape of a device whose cost per IO falls as IOs queue: a virtual disk whose notifications and
interrupts cover every request queued since the last one, a controller that coalesces commands. A batch
of ``b`` IOs takes ``max(overhead) + sum(per_io)``, so a closed loop of ``n`` IOs in flight sees a latency
of ``overhead + n * per_io``: the QD1 latency at ``n = 1``, a throughput of ``1 / per_io`` as ``n`` grows,
and a knee between them that both ends fix. It implements the kernel's component interface
(:class:`~storagelab.kernel.Component`: accept an IO, return an event that fires when it completes).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable

from simpy.events import Event

from storagelab.kernel.component import Component, fire
from storagelab.kernel.io import IORequest


class BatchingStage(Component):
    """A batching server: ``overhead(io)`` and ``per_io(io)`` in seconds; a batch takes the largest
    overhead of its IOs plus the sum of their per-IO times, times a lognormal factor of mean 1 and squared
    coefficient of variation ``scv(io)`` (of the batch's first IO: 0 for none), drawn once per batch."""

    def __init__(
        self,
        name: str,
        overhead: Callable[[IORequest], float],
        per_io: Callable[[IORequest], float],
        scv: Callable[[IORequest], float] = lambda io: 0.0,
        max_batch: int = 1 << 30,
    ) -> None:
        super().__init__(name)
        if not isinstance(max_batch, int) or max_batch < 1:
            raise ValueError(
                f"batching stage {name!r}: max_batch must be a whole number >= 1, got {max_batch!r}"
            )
        self.overhead, self.per_io, self.scv, self.max_batch = overhead, per_io, scv, max_batch
        self.reset_stats()

    def on_bind(self) -> None:
        self._queue: deque[tuple[IORequest, Event]] = deque()
        self._busy = False
        self._busy_since = 0.0
        self.reset_stats()

    def reset_stats(self) -> None:
        now = self.env._now if self.ctx is not None else 0.0
        self._t0 = now
        self.batches = 0
        self.batched = 0
        self.busy_time = 0.0
        if self.ctx is not None and self._busy:
            self._busy_since = now

    def submit(self, io: IORequest) -> Event:
        ev = Event(self.env)
        self._queue.append((io, ev))
        if not self._busy:
            self._start()
        return ev

    def _start(self) -> None:
        batch = [self._queue.popleft() for _ in range(min(self.max_batch, len(self._queue)))]
        # a Python float (the fitted laws may give numpy scalars): the same value, and times in the event queue
        # stay floats, which the compiled per-IO modules take them to be
        time = float(max(self.overhead(io) for io, _ in batch) + sum(self.per_io(io) for io, _ in batch))
        scv = self.scv(batch[0][0])
        if scv > 0:
            s2 = math.log1p(scv)
            time *= float(self.rng.lognormal(-s2 / 2, math.sqrt(s2)))
        self._busy, self._busy_since = True, self.env._now
        self.batches += 1
        self.batched += len(batch)
        done = self.env.timeout(max(time, 0.0))
        done.callbacks.append(lambda _ev, batch=batch: self._finish(batch))

    def _finish(self, batch: list[tuple[IORequest, Event]]) -> None:
        self.busy_time += self.env._now - self._busy_since
        for io, ev in batch:  # the IOs issued in response join the queue, and go in the next batch
            fire(ev, io)
        self._busy = False
        if self._queue:
            self._start()

    def stats(self, elapsed: float) -> dict[str, float]:
        if elapsed <= 0:
            return {}
        busy = self.busy_time + (self.env._now - self._busy_since if self._busy else 0.0)
        return {
            "utilisation": min(busy / elapsed, 1.0),
            "batches": float(self.batches),
            "mean_batch": self.batched / self.batches if self.batches else 0.0,
        }
