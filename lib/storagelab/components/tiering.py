"""Routing by operation and by steady-state cache residency.

- :class:`ReadWriteSplit`: reads go to one component, writes to another (a hyper-converged node whose
  writes land in a flash write buffer while reads come from the capacity tier or a read cache).
- :class:`WarmReadCache`: a read cache whose working set is already resident to a known share: each read
  hits with probability ``hit_ratio``. It stands for a cache that, in the studies, was warmed for tens of
  minutes before measurement (longer than a simulation can afford to replay block by block); the
  block-level :class:`~storagelab.components.cache.ReadCache` is the model when the warm-up itself matters.
- :class:`WorkingSetReadCache`: a warm read cache of a given size whose hit ratio follows from how much
  data it fronts (the steady state of a demand-filled cache under uniform references).
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


class WorkingSetReadCache(WarmReadCache):
    """A warm read cache of ``capacity`` bytes in front of ``backend``, whose hit ratio follows from the
    data it fronts: under independent references spread uniformly over ``D`` bytes of data, a
    demand-filled cache of ``C`` bytes holds ``C / D`` of it in its steady state whatever its replacement
    policy (LRU, FIFO, random: each resident block is equally likely to be referenced), so a read hits
    with probability ``min(1, C / D)``. ``D`` is the end of the highest byte addressed so far: the data
    fronted is packed from address 0 (a host's share of a compact cluster, a volume's extents), and a
    run's warm-up covers the time the estimate takes to reach it. Skewed references (hot spots) hit
    more often than this, so for them the ratio is a floor, stated where a preset uses it."""

    def __init__(self, name: str, cache: Component, backend: Component, capacity: int) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
            raise ValueError(
                f"read cache {name!r}: capacity must be a positive number of bytes, got {capacity!r}"
            )
        super().__init__(name, cache, backend, 1.0)
        self.capacity = capacity

    def on_bind(self) -> None:
        super().on_bind()
        self.data_bytes, self.hit_ratio = 0, 1.0

    def submit(self, io: IORequest) -> Event:
        end = io.address + io.size
        if end > self.data_bytes:
            self.data_bytes = end
            self.hit_ratio = min(1.0, self.capacity / end)
        return super().submit(io)

    def stats(self, elapsed: float) -> dict[str, float]:
        return {
            **super().stats(elapsed),
            "data_bytes": float(self.data_bytes),
            "capacity_bytes": float(self.capacity),
        }
