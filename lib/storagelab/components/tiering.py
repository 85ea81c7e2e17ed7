"""Routing by operation and by steady-state cache residency.

- :class:`ReadWriteSplit`: reads go to one component, writes to another (a hyper-converged node whose
  writes land in a flash write buffer while reads come from the capacity tier or a read cache).
- :class:`WarmReadCache`: a read cache whose working set is already resident to a known share: each read
  hits with probability ``hit_ratio``. It stands for a cache that, in the studies, was warmed for tens of
  minutes before measurement (longer than a simulation can afford to replay block by block); the
  block-level :class:`~storagelab.components.cache.ReadCache` is the model when the warm-up itself matters.
- :class:`WorkingSetReadCache`: a warm read cache of a given size whose hit ratios follow from how much
  data each IO class reads and how often (an LRU cache's steady state, by Che's approximation), or a
  cache that has been cleared and holds only what was referenced since (``resident_share``).
- :func:`cold_start_hit_ratio`: the share of uniformly random references that find their block already
  referenced, over measurement windows that start some time after a cache was cleared.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import optimize
from simpy.events import Event

from storagelab.kernel.component import Component
from storagelab.kernel.io import IORequest
from storagelab.kernel.randomness import variates


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
        self._uniform = variates(self.rng, lambda g, n: g.random(n)).__next__  # U(0, 1), per read

    def reset_stats(self) -> None:
        self.reads = self.hits = 0

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


def cold_start_hit_ratio(rate: float, blocks: float, windows: Sequence[tuple[float, float]]) -> float:
    """Share of references that find their block referenced before, for references spread uniformly
    at random over ``blocks`` blocks at ``rate`` references per second, starting when a cache was
    cleared (time 0), counted over the measurement ``windows`` ((start, end) in seconds after the
    clear) and averaged over them with equal weight (each window a test instance whose results are
    averaged). A block not yet referenced by time ``t`` has probability ``exp(-rate t / blocks)``, so a
    window ``[a, b]`` hits ``1 - blocks / (rate (b - a)) (exp(-rate a / blocks) - exp(-rate b / blocks))``
    of its references. A cache large enough for all the blocks hits exactly this; a smaller LRU cache
    hits the smaller of this and its steady-state ratio (Che: a reference hits when the block's last
    reference was within both the characteristic time and the time since the clear)."""
    if not (rate > 0 and math.isfinite(rate)) or not (blocks > 0 and math.isfinite(blocks)):
        raise ValueError(f"rate and blocks must be positive and finite, got rate={rate!r}, blocks={blocks!r}")
    if not windows or any(not 0 <= a < b for a, b in windows):
        raise ValueError(f"windows must be (start, end) pairs with 0 <= start < end seconds, got {windows!r}")
    k = rate / blocks  # 1/s
    shares = [1 + (math.expm1(-k * b) - math.expm1(-k * a)) / (k * (b - a)) for a, b in windows]
    return sum(shares) / len(shares)


class WorkingSetReadCache(WarmReadCache):
    """A warm read cache of ``capacity`` bytes in front of ``backend``, whose hit ratios follow from the
    data it fronts and how often each part is read, as an LRU cache's steady state.

    The reads of each IO class are taken as independent references spread uniformly over the bytes
    that class reads (``D_c``: from its lowest to its highest byte read so far) at the class's share of
    the reads (``n_c``, its reads so far). Che's approximation of LRU under independent references then
    gives each class's hit ratio ``h_c = 1 - exp(-n_c t / D_c)``, where the characteristic time ``t``
    fills the cache: ``sum_c D_c (1 - exp(-n_c t / D_c)) = capacity`` (every class hits when
    ``sum_c D_c <= capacity``). One class alone hits ``min(1, capacity / D)`` exactly; a small, busy
    class (a master image during a boot storm) stays resident beside a large, rarely read one (mail
    databases). The estimates are refreshed every :data:`REFRESH` reads and when a class's range grows;
    a run's warm-up covers the time they take to settle. References skewed within a class (hot spots)
    hit more often than this.

    ``resident_share`` (0..1, default 1: warm) caps every class's hit ratio: the share of the data
    referenced since the cache was last cleared (:func:`cold_start_hit_ratio`), for a cache measured
    before it has seen all its data."""

    REFRESH = 256

    def __init__(
        self, name: str, cache: Component, backend: Component, capacity: int, resident_share: float = 1.0
    ) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
            raise ValueError(
                f"read cache {name!r}: capacity must be a positive number of bytes, got {capacity!r}"
            )
        if (
            isinstance(resident_share, bool)
            or not isinstance(resident_share, int | float)
            or not (0.0 <= resident_share <= 1.0)
        ):
            raise ValueError(f"read cache {name!r}: resident_share must be in [0, 1], got {resident_share!r}")
        super().__init__(name, cache, backend, 1.0)
        self.capacity = capacity
        self.resident_share = float(resident_share)

    def on_bind(self) -> None:
        super().on_bind()
        #: per class: [lowest byte read, end of the highest byte read, reads]
        self.classes: dict[str, list[int]] = {}
        self.class_hit_ratio: dict[str, float] = {}
        self._until_refresh = 0

    def class_ratios(self) -> dict[str, float]:
        """Each class's hit ratio from the ranges and read counts so far (Che's approximation)."""
        span = {c: hi - lo for c, (lo, hi, _n) in self.classes.items()}
        if sum(span.values()) <= self.capacity:
            return dict.fromkeys(self.classes, self.resident_share)
        rate = {c: n / span[c] for c, (_lo, _hi, n) in self.classes.items()}

        def excess(t: float) -> float:
            return sum(d * -math.expm1(-rate[c] * t) for c, d in span.items()) - self.capacity

        hi = 1.0 / max(rate.values())
        while excess(hi) < 0:
            hi *= 2.0
        t = optimize.brentq(excess, 0.0, hi, xtol=1e-12 * hi, rtol=1e-10)
        return {c: min(self.resident_share, -math.expm1(-rate[c] * t)) for c in self.classes}

    def submit(self, io: IORequest) -> Event:
        if not io.is_read:
            return self.backend.submit(io)
        entry = self.classes.get(io.cls)
        end = io.address + io.size
        if entry is None:
            self.classes[io.cls] = [io.address, end, 1]
            self._until_refresh = 0
        else:
            entry[2] += 1
            if io.address < entry[0] or end > entry[1]:
                entry[0], entry[1] = min(entry[0], io.address), max(entry[1], end)
                self._until_refresh = 0
        self._until_refresh -= 1
        if self._until_refresh < 0:
            self.class_hit_ratio = self.class_ratios()
            self._until_refresh = self.REFRESH
        self.hit_ratio = self.class_hit_ratio[io.cls]
        return super().submit(io)

    def stats(self, elapsed: float) -> dict[str, float]:
        data = sum(hi - lo for lo, hi, _n in self.classes.values())
        return {**super().stats(elapsed), "data_bytes": float(data), "capacity_bytes": float(self.capacity)}
