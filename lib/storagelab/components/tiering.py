"""Routing by operation and by steady-state cache residency.

- :class:`ReadWriteSplit`: reads go to one component, writes to another (a hyper-converged node whose
  writes land in a flash write buffer while reads come from the capacity tier or a read cache).
- :class:`WarmReadCache`: a read cache whose working set is already resident to a known share: each read
  hits with probability ``hit_ratio``. It stands for a cache that, in the studies, was warmed for tens of
  minutes before measurement (longer than a simulation can afford to replay block by block); the
  block-level :class:`~storagelab.components.cache.ReadCache` is the model when the warm-up itself matters.
"""

from __future__ import annotations

from simpy.events import Event

from storagelab.kernel.component import Component
from storagelab.kernel.io import IORequest


class ReadWriteSplit(Component):
    """Reads to ``reads``, writes to ``writes``."""

    def __init__(self, name: str, reads: Component, writes: Component) -> None:
        super().__init__(name)
        self.reads, self.writes = reads, writes

    def children(self) -> list[Component]:
        return [self.reads, self.writes]

    def submit(self, io: IORequest) -> Event:
        return (self.reads if io.is_read else self.writes).submit(io)


class WarmReadCache(Component):
    """A read cache in steady state: a read hits with probability ``hit_ratio`` (0..1) and is served by
    ``cache``; a miss goes to ``backend``. Writes go to ``backend`` (write-through or a write buffer
    behind it decides their cost)."""

    def __init__(self, name: str, cache: Component, backend: Component, hit_ratio: float) -> None:
        super().__init__(name)
        if not 0.0 <= hit_ratio <= 1.0:
            raise ValueError(f"warm read cache {name!r}: hit_ratio must be in [0, 1], got {hit_ratio!r}")
        self.cache, self.backend, self.hit_ratio = cache, backend, float(hit_ratio)
        self.reset_stats()

    def children(self) -> list[Component]:
        return [self.cache, self.backend]

    def on_bind(self) -> None:
        self._u = iter(())

    def reset_stats(self) -> None:
        self.reads = self.hits = 0

    def _uniform(self) -> float:
        try:
            return next(self._u)
        except StopIteration:
            self._u = iter(self.rng.random(4096).tolist())
            return next(self._u)

    def submit(self, io: IORequest) -> Event:
        if not io.is_read:
            return self.backend.submit(io)
        self.reads += 1
        if self.hit_ratio >= 1.0 or (self.hit_ratio > 0.0 and self._uniform() < self.hit_ratio):
            self.hits += 1
            return self.cache.submit(io)
        return self.backend.submit(io)

    def stats(self, elapsed: float) -> dict[str, float]:
        return {"reads": float(self.reads), "read_hit_ratio": self.hits / self.reads if self.reads else 0.0}
