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

import functools
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np
from scipy import optimize

from storagelab.kernel.component import Component, EventLike, entry
from storagelab.kernel.io import IORequest
from storagelab.kernel.randomness import variates
from storagelab.workloads.locality import HotSpot, Locality, Uniform, Zipf


class ReadWriteSplit(Component):
    """Reads to ``reads``, writes to ``writes``."""

    def __init__(self, name: str, reads: Component, writes: Component) -> None:
        super().__init__(name)
        self.reads, self.writes = reads, writes

    def children(self) -> list[Component]:
        return [self.reads, self.writes]

    def on_bind(self) -> None:
        self._entries = (entry(self.writes), entry(self.reads))  # indexed by is_read

    def submit(self, io: IORequest) -> EventLike:
        return (self.reads if io.is_read else self.writes).submit(io)

    def timed_entry(self) -> Callable[[IORequest], EventLike | float]:
        """What a caller that wakes at a completion time calls per IO: the entry of the read or the
        write target (:func:`~storagelab.kernel.component.entry`)."""
        return self.arrive

    def arrive(self, io: IORequest) -> EventLike | float:
        """``io`` sent to the entry of its target: the completion time where that is timed, else the event."""
        return self._entries[io.is_read](io)


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

    def submit(self, io: IORequest) -> EventLike:
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

    **What each class reads.** Each IO class ``c`` reads, on each volume, the bytes from its lowest to its highest byte
    read so far (``[lo_c, hi_c)``, ``D_c`` bytes) ``n_c`` times (its reads so far), spread over them by
    its declared popularity (``popularity[c]``, a :mod:`~storagelab.workloads.locality` model, as the
    workload's source places its random IOs over its span; uniform when not declared):

    - :class:`~storagelab.workloads.locality.Uniform`: ``n_c / D_c`` reads per byte everywhere;
    - :class:`~storagelab.workloads.locality.HotSpot` ``(f, p)``: two uniform parts, the first ``f`` of
      the range read ``p`` % of the time, the rest the remainder;
    - :class:`~storagelab.workloads.locality.Zipf` ``(alpha, blocks)``: the range cut into ``blocks``
      equal regions, the rank-``k`` region read ``k**-alpha / H`` of the time, uniformly inside; the
      regions are scattered over the range, so any part of the range holds the same mix of ranks. The
      ranks are grouped by :func:`zipf_bins` (geometric bins), so an evaluation costs O(bins), not
      O(blocks).

    **Classes that share addresses.** Ranges are kept per volume (``io.volume``: a LUN's number; the
    same addresses on two volumes are different data), and each volume's ranges are cut into disjoint
    segments at every range end; in a segment each byte is read at the sum of the per-byte rates of the classes covering it (two
    classes reading the same bytes count them once). Zipf classes in one segment are taken as placed
    independently of each other (their bins combine pairwise), unless they declare the same model over
    the same range: then their hot regions coincide and their reads add.

    **Che's approximation.** With groups ``g`` of ``B_g`` bytes each read at ``r_g`` reads per byte,
    the characteristic time ``t`` fills the cache: ``sum_g B_g (1 - exp(-r_g t)) = capacity``; a byte of
    group ``g`` is resident when read with probability ``1 - exp(-r_g t)``, and a class's hit ratio is
    the read-weighted mean of that over the groups it reads. The cache's block size drops out: a block
    of ``b`` bytes is read at ``b r_g`` and there are ``B_g / b`` of them, so ``t`` scales by ``1 / b``
    and nothing else changes, as long as a block is no larger than a popularity region (one IO, or a
    Zipf region, whichever is smaller). Every class hits when all the data fits (``sum_g B_g <=
    capacity``); one uniform class alone hits ``capacity / D`` exactly. The estimates are refreshed every
    :data:`REFRESH` reads and whenever a class's range grows; a run's warm-up covers the time they take
    to settle.

    ``served_share`` (0..1, default 1) is the share of the bytes in the read ranges whose reads reach
    this cache: a :class:`~storagelab.components.cluster.ReplicatedCluster` sets it on the caches of its
    nodes (a node with its copies packed serves the reads of its primaries only: ``1 / replicas`` of its
    addresses). ``resident_share`` (0..1, default 1: warm) caps every class's hit ratio: the share of
    the data referenced since the cache was last cleared (:func:`cold_start_hit_ratio`), for a cache
    measured before it has seen all its data.

    **Placement per class.** ``placement`` (class name -> 0..1; a class not named, and a split read class
    ``"<cls> read"`` whose source is not named either, takes 1) is the share of each class's data the cache
    admits at all, as a tier that promotes some data sets and not others does (a hybrid array's flash
    holding the desktops' master images, while a database's pages, each read seldom, stay on the drives).
    A class's hit ratio is its share times the LRU steady state over the admitted data: in Che's
    approximation each group of bytes counts ``w`` times its size, ``w`` the largest share among the
    classes reading it (a byte that one admitted class reads is held for every class reading it), and
    when the admitted data all fit, each class hits its share. With every share 1 (the default) nothing
    changes."""

    REFRESH = 256

    def __init__(
        self,
        name: str,
        cache: Component,
        backend: Component,
        capacity: int,
        resident_share: float = 1.0,
        popularity: Mapping[str, Locality] | None = None,
        placement: Mapping[str, float] | None = None,
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
        popularity = dict(popularity or {})
        for cls, model in popularity.items():
            if not isinstance(model, Uniform | HotSpot | Zipf):
                raise ValueError(
                    f"read cache {name!r}: popularity of class {cls!r} must be a Uniform, HotSpot or Zipf "
                    f"locality, got {model!r}"
                )
        placement = dict(placement or {})
        for cls, share in placement.items():
            if isinstance(share, bool) or not isinstance(share, int | float) or not 0.0 <= share <= 1.0:
                raise ValueError(
                    f"read cache {name!r}: placement of class {cls!r} must be in [0, 1], got {share!r}"
                )
        super().__init__(name, cache, backend, 1.0)
        #: per class name: the share (0..1) of its data the cache admits (1 when not named)
        self.placement: dict[str, float] = {c: float(v) for c, v in placement.items()}
        self.capacity = capacity
        self.resident_share = float(resident_share)
        #: per class name: how its reads spread over the bytes it reads
        self.popularity: dict[str, Locality] = popularity
        #: share (0..1] of the bytes in the read ranges whose reads reach this cache
        self.served_share = 1.0

    def on_bind(self) -> None:
        super().on_bind()
        #: per (class, volume): [lowest byte read, end of the highest byte read, reads]
        self.classes: dict[tuple[str, int], list[int]] = {}
        self.class_hit_ratio: dict[str, float] = {}
        self._until_refresh = 0

    def _popularity(self, cls: str) -> Locality | None:
        """The declared popularity of ``cls`` (a source's split read class ``"<cls> read"`` takes its
        source's)."""
        model = self.popularity.get(cls)
        if model is None and cls.endswith(" read"):
            model = self.popularity.get(cls[: -len(" read")])
        return None if isinstance(model, Uniform) else model

    def _placement(self, cls: str) -> float:
        """The share of ``cls``'s data the cache admits (a split read class takes its source's)."""
        share = self.placement.get(cls)
        if share is None and cls.endswith(" read"):
            share = self.placement.get(cls[: -len(" read")])
        return 1.0 if share is None else share

    def _groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
        """The data as groups of equally read bytes: ``(bytes[G], reads per byte[G], the reads per byte
        each class contributes[G, C], class names[C])``."""
        names = list(dict.fromkeys(c for c, _v in self.classes))
        col = {c: i for i, c in enumerate(names)}
        # pieces by volume: (lo, hi, reads, class, Zipf model or None); a hot spot is two uniform pieces
        by_volume: dict[int, list[tuple[float, float, float, str, Zipf | None]]] = {}
        for (c, volume), (first, end, reads) in self.classes.items():  # bytes [first, end), read so often
            pieces = by_volume.setdefault(volume, [])
            model = self._popularity(c)
            if isinstance(model, HotSpot):
                cut = first + model.hot_fraction * (end - first)
                share = model.hot_access_pct / 100.0
                pieces += [(first, cut, reads * share, c, None), (cut, end, reads * (1.0 - share), c, None)]
            else:
                pieces.append((first, end, float(reads), c, model if isinstance(model, Zipf) else None))
        sizes, rates, contribs = [], [], []
        for a, b, covering in self._segments(by_volume):
            size = np.array([(b - a) * self.served_share])
            rate = np.zeros(1)
            contrib = np.zeros((1, len(names)))
            zipfs: dict[tuple[Zipf, float, float], list[tuple[float, str]]] = {}
            for lo, hi, n, c, model in covering:
                if model is None:
                    per_byte = n / (hi - lo)
                    rate += per_byte
                    contrib[:, col[c]] += per_byte
                else:  # the same model over the same range: the same hot regions
                    zipfs.setdefault((model, lo, hi), []).append((n, c))
            for (model, lo, hi), readers in zipfs.items():
                byte_share, read_share = zipf_bins(model.alpha, model.blocks)
                bin_per_byte = read_share / (byte_share * (hi - lo))  # per read of the class, by bin
                add = np.zeros((bin_per_byte.size, len(names)))
                for n, c in readers:
                    add[:, col[c]] += n * bin_per_byte
                size = np.outer(size, byte_share).ravel()
                rate = (rate[:, None] + add.sum(axis=1)[None, :]).ravel()
                contrib = (contrib[:, None, :] + add[None, :, :]).reshape(-1, len(names))
            sizes.append(size)
            rates.append(rate)
            contribs.append(contrib)
        return np.concatenate(sizes), np.concatenate(rates), np.concatenate(contribs), names

    @staticmethod
    def _segments(
        by_volume: Mapping[int, list[tuple[float, float, float, str, Zipf | None]]],
    ) -> Iterator[tuple[float, float, list[tuple[float, float, float, str, Zipf | None]]]]:
        """The disjoint segments ``(start, end, pieces covering it)`` of each volume's pieces (bytes)."""
        for pieces in by_volume.values():
            edges = sorted({x for p in pieces for x in p[:2]})
            for a, b in itertools.pairwise(edges):
                covering = [p for p in pieces if p[0] <= a and b <= p[1] and p[1] > p[0]]
                if covering:
                    yield a, b, covering

    def data_bytes(self) -> float:
        """Bytes the classes read (each byte of each volume once, however many classes read it), of
        those this cache serves."""
        total = 0  # bytes
        for volume in {v for _c, v in self.classes}:
            spans = sorted((lo, hi) for (_c, v), (lo, hi, _n) in self.classes.items() if v == volume)
            end: int | None = None  # where the spans so far end
            for lo, hi in spans:
                if end is None or hi > end:
                    total += hi - (lo if end is None else max(lo, end))
                    end = hi
        return total * self.served_share

    def class_ratios(self) -> dict[str, float]:
        """Each class's hit ratio from the ranges and read counts so far (Che's approximation)."""
        if not self.classes:
            return {}
        placed = {c: self._placement(c) for c, _v in self.classes}
        if all(v == 1.0 for v in placed.values()):
            if self.data_bytes() <= self.capacity:
                return dict.fromkeys((c for c, _v in self.classes), self.resident_share)
            size, rate, contrib, names = self._groups()
            share = np.ones(len(names))
        else:  # each group counts the largest share among the classes reading it
            size, rate, contrib, names = self._groups()
            share = np.array([placed[c] for c in names])
            weight = np.where(contrib > 0, share[None, :], 0.0).max(axis=1)
            admitted = size * weight
            if float(admitted.sum()) <= self.capacity:
                return {c: min(self.resident_share, float(s)) for c, s in zip(names, share, strict=True)}
            size = admitted
        capacity = float(self.capacity)

        def excess(t: float) -> float:
            return float(size @ -np.expm1(-rate * t)) - capacity

        hi = 1.0 / float(rate.max())
        while excess(hi) < 0:
            hi *= 2.0
        t = optimize.brentq(excess, 0.0, hi, xtol=1e-12 * hi, rtol=1e-10)
        resident = -np.expm1(-rate * t)
        reads = contrib * size[:, None]  # reads of each class in each group (of the admitted bytes)
        total = reads.sum(axis=0)
        ratios = share * np.divide(resident @ reads, total, out=np.zeros_like(total), where=total > 0)
        return {c: min(self.resident_share, float(h)) for c, h in zip(names, ratios, strict=True)}

    def submit(self, io: IORequest) -> EventLike:
        if not io.is_read:
            return self.backend.submit(io)
        key = (io.cls, io.volume)
        entry = self.classes.get(key)
        end = io.address + io.size
        if entry is None:
            self.classes[key] = [io.address, end, 1]
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
        return {
            **super().stats(elapsed),
            "data_bytes": float(self.data_bytes()),
            "capacity_bytes": float(self.capacity),
        }


@functools.lru_cache(maxsize=64)
def zipf_bins(
    alpha: float, blocks: int, single: int = 32, ratio: float = 1.1
) -> tuple[np.ndarray, np.ndarray]:
    """The ranks ``1..blocks`` of a Zipf law of exponent ``alpha`` grouped for Che's approximation:
    ``(share of the blocks in each bin, share of the references in each bin)``, both summing to 1.

    The first ``single`` ranks are a bin each, the rest are cut into geometric bins (each ``ratio``
    times as many ranks as the last), so a bin's ranks differ in popularity by at most ``ratio**alpha``
    and there are about ``single + ln(blocks / single) / ln(ratio)`` bins (some 120 for a million
    blocks). Within a bin every block is taken at the bin's mean popularity."""
    k = np.arange(1, blocks + 1, dtype=np.float64)
    p = k**-alpha
    p /= p.sum()
    edges = [0]
    while edges[-1] < blocks:
        e = edges[-1]
        edges.append(min(blocks, e + 1 if e < single else max(e + 1, math.ceil(e * ratio))))
    edges_a = np.asarray(edges)
    counts = np.diff(edges_a).astype(np.float64)
    mass = np.add.reduceat(p, edges_a[:-1])
    byte_share, read_share = counts / blocks, mass
    byte_share.setflags(write=False)
    read_share.setflags(write=False)
    return byte_share, read_share
