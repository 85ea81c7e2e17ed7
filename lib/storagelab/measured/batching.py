"""A batching stage: a server that takes every IO waiting when it starts (up to ``max_batch``) and
completes them together, after an overhead per batch plus a time per IO of the batch.

It is the shape of a device whose cost per IO falls as IOs queue: a virtual disk whose notifications and
interrupts cover every request queued since the last one, a controller that coalesces commands. A batch
of ``b`` IOs takes ``max(overhead) + sum(per_io)``, so a closed loop of ``n`` IOs in flight sees a latency
of ``overhead + n * per_io``: the QD1 latency at ``n = 1``, a throughput of ``1 / per_io`` as ``n`` grows,
and a knee between them that both ends fix. It implements the kernel's component interface
(:class:`~storagelab.kernel.Component`: accept an IO, return an event that fires when it completes).

An IO may complete before its batch ends (``lead``: how long before, in seconds, scaled with the batch's
time): the server stays busy until the batch's end, so the IOs issued in response wait for the next batch
as before and the throughput does not change, but the early IOs' latency is shorter and the others' longer.
The measured model uses it for reads dispatched ahead of writes in a mixed batch
(:mod:`storagelab.measured.model`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence

from simpy.events import Event

from storagelab.kernel.component import Component, fire
from storagelab.kernel.io import IORequest


class BatchingStage(Component):
    """A batching server: ``overhead(io)`` and ``per_io(io)`` in seconds; a batch takes the largest
    overhead of its IOs plus the sum of their per-IO times, times a lognormal factor of mean 1 and squared
    coefficient of variation ``scv(io)`` (of the batch's first IO: 0 for none), drawn once per batch.
    ``lead(io, batch)`` (seconds, optional): how long before the batch's end ``io`` completes, given the
    batch's IOs, before the lognormal factor (which scales it with the batch's time); at most the batch's
    time. ``by_direction``: a batch takes only the waiting IOs of its oldest IO's direction (reads and writes
    in separate batches, each with its overhead), an alternative the measured model was checked against."""

    def __init__(
        self,
        name: str,
        overhead: Callable[[IORequest], float],
        per_io: Callable[[IORequest], float],
        scv: Callable[[IORequest], float] = lambda io: 0.0,
        max_batch: int = 1 << 30,
        lead: Callable[[IORequest, Sequence[IORequest]], float] | None = None,
        by_direction: bool = False,
    ) -> None:
        super().__init__(name)
        if not isinstance(max_batch, int) or max_batch < 1:
            raise ValueError(
                f"batching stage {name!r}: max_batch must be a whole number >= 1, got {max_batch!r}"
            )
        self.overhead, self.per_io, self.scv, self.max_batch = overhead, per_io, scv, max_batch
        self.lead, self.by_direction = lead, by_direction
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
        if self.by_direction:  # only the IOs of the oldest waiting IO's direction; the others wait
            reads = self._queue[0][0].is_read
            batch, kept = [], deque()
            while self._queue:
                item = self._queue.popleft()
                (batch if item[0].is_read == reads and len(batch) < self.max_batch else kept).append(item)
            self._queue = kept
        else:
            batch = [self._queue.popleft() for _ in range(min(self.max_batch, len(self._queue)))]
        # a Python float (the fitted laws may give numpy scalars): the same value, and times in the event queue
        # stay floats, which the compiled per-IO modules take them to be
        time = float(max(self.overhead(io) for io, _ in batch) + sum(self.per_io(io) for io, _ in batch))
        scv = self.scv(batch[0][0])
        factor = 1.0
        if scv > 0:
            s2 = math.log1p(scv)
            factor = float(self.rng.lognormal(-s2 / 2, math.sqrt(s2)))
        time = max(time * factor, 0.0)
        self._busy, self._busy_since = True, self.env._now
        self.batches += 1
        self.batched += len(batch)
        if self.lead is not None:  # IOs that complete before the batch's end, grouped by when
            ios = [io for io, _ in batch]
            early: dict[float, list[tuple[IORequest, Event]]] = {}
            rest = []
            for item in batch:
                ahead = min(float(self.lead(item[0], ios)) * factor, time)
                if ahead > 0:
                    early.setdefault(time - ahead, []).append(item)
                else:
                    rest.append(item)
            for at, items in early.items():
                ev = self.env.timeout(at)
                ev.callbacks.append(lambda _ev, items=items: self._release(items))
            batch = rest
        done = self.env.timeout(time)
        done.callbacks.append(lambda _ev, batch=batch: self._finish(batch))

    @staticmethod
    def _release(items: list[tuple[IORequest, Event]]) -> None:
        """IOs that complete before their batch's end: the server stays busy until the end."""
        for io, ev in items:
            fire(ev, io)

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
