"""Cache replacement policies over integer block keys: LRU, S3-FIFO and ARC.

A policy decides which blocks a block cache keeps. It holds no data, only block keys (a key is any
hashable integer, e.g. ``(address // block_size)`` or a ``(volume, block)`` packing); sizes are in
blocks, one key = one block. Every policy follows :class:`CachePolicy`:

* ``access(key)`` is a lookup: True on a hit; on a miss the block is admitted, evicting as needed.
  It counts ``hits`` / ``misses``.
* ``insert(key)`` admits or references a block without counting a lookup (write-allocate).
* ``discard(key)`` invalidates a block (overwritten elsewhere, trimmed); it also forgets the key's
  ghost history.
* ``evictions`` counts resident blocks removed to make room (not discards).

The policies are written to reproduce libCacheSim's (https://github.com/1a1a11a/libCacheSim) LRU,
S3FIFO and ARC decision for decision on unit-size objects; ``tests/test_cache_policies.py`` checks
hit counts against the ``libcachesim`` Python package. ``access`` is O(1): every queue is an
:class:`collections.OrderedDict` (C-implemented hash map + linked list), oldest entry first.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from typing import Protocol, runtime_checkable

__all__ = ["ARC", "LRU", "S3FIFO", "CachePolicy"]


@runtime_checkable
class CachePolicy(Protocol):
    """A block cache replacement policy of ``capacity`` blocks (the interface all policies share)."""

    hits: int
    misses: int
    evictions: int

    @property
    def capacity(self) -> int:
        """Size of the cache in blocks (resident blocks never exceed it)."""
        ...

    def access(self, key: int) -> bool:
        """Look ``key`` up: True on a hit; on a miss admit it (evicting as needed) and return False."""
        ...

    def insert(self, key: int) -> None:
        """Admit (or reference, when resident) ``key`` without counting a hit or a miss."""
        ...

    def discard(self, key: int) -> bool:
        """Invalidate ``key``: True if it was resident. Not counted as an eviction."""
        ...

    def __contains__(self, key: object) -> bool: ...

    def __len__(self) -> int: ...


def _capacity_blocks(value: object) -> int:
    """``value`` as a positive whole number of blocks, or ValueError naming ``capacity_blocks``."""
    if isinstance(value, bool):
        raise ValueError(f"capacity_blocks must be a positive integer number of blocks, got {value!r}")
    try:
        blocks = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(
            f"capacity_blocks must be a positive integer number of blocks, got {value!r}"
        ) from None
    if blocks < 1:
        raise ValueError(f"capacity_blocks must be a positive integer number of blocks (>= 1), got {blocks}")
    return blocks


class LRU:
    """Least-recently-used block cache of ``capacity_blocks`` blocks.

    A hit makes the block most recently used; a miss at full capacity evicts the least recently used
    block. Same decisions as libCacheSim's ``LRU`` with unit-size objects.
    """

    __slots__ = ("_cap", "_lru", "evictions", "hits", "misses")

    def __init__(self, capacity_blocks: int) -> None:
        self._cap = _capacity_blocks(capacity_blocks)
        self._lru: OrderedDict[int, None] = OrderedDict()  # least recently used first
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    @property
    def capacity(self) -> int:
        """Size of the cache in blocks."""
        return self._cap

    def access(self, key: int) -> bool:
        """Look ``key`` up: True on a hit (block becomes most recent); on a miss admit it, return False."""
        lru = self._lru
        if key in lru:
            lru.move_to_end(key)
            self.hits += 1
            return True
        self.misses += 1
        if len(lru) >= self._cap:
            lru.popitem(last=False)
            self.evictions += 1
        lru[key] = None
        return False

    def insert(self, key: int) -> None:
        """Make ``key`` resident and most recently used, without counting a lookup."""
        lru = self._lru
        if key in lru:
            lru.move_to_end(key)
            return
        if len(lru) >= self._cap:
            lru.popitem(last=False)
            self.evictions += 1
        lru[key] = None

    def discard(self, key: int) -> bool:
        """Invalidate ``key``: True if it was resident."""
        return self._lru.pop(key, _ABSENT) is not _ABSENT

    def keys_by_recency(self) -> list[int]:
        """Resident keys from least to most recently used (the next victim first)."""
        return list(self._lru)

    def __contains__(self, key: object) -> bool:
        return key in self._lru

    def __len__(self) -> int:
        return len(self._lru)

    def __repr__(self) -> str:
        return f"LRU(capacity_blocks={self._cap}, resident={len(self._lru)})"


_ABSENT = object()


class S3FIFO:
    """S3-FIFO block cache (Yang et al., SOSP 2023) of ``capacity_blocks`` blocks.

    Three FIFO queues: a small probationary queue of ``floor(capacity * small_fraction)`` blocks, a
    main queue of the rest, and a ghost queue of ``floor(capacity * ghost_fraction)`` keys (no data).
    Each resident block has an access count. A missed key is admitted to the small queue, or to the
    main queue if its key is in the ghost queue. Eviction from the small queue moves a block accessed
    at least ``move_to_main_threshold`` times to the main queue, otherwise drops it and records its key
    in the ghost queue. Eviction from the main queue reinserts a block whose count is >= 1 with its
    count capped at 3 and decremented (a 2-bit CLOCK), otherwise drops it. The main queue is evicted
    from when it holds more than its share or the small queue is empty.

    This is libCacheSim's ``S3FIFO`` (``S3FIFO.c``, 0.3.x), including its two details: until the first
    eviction, misses that find the small queue full go straight to the main queue; and a block moved
    from small to main starts with count 0. One deliberate difference: libCacheSim refuses to admit an
    object whose size is >= the small queue's size, so with unit blocks and a small queue of 0 or 1
    block (capacity below 20 at the default 0.1) it caches nothing at all. Here the small queue has at
    least 1 block and a unit block is always admitted; for small queues of 2 blocks and more the two
    agree exactly.
    """

    __slots__ = (
        "_cap",
        "_ghost",
        "_ghost_cap",
        "_has_evicted",
        "_main",
        "_main_cap",
        "_small",
        "_small_cap",
        "_threshold",
        "evictions",
        "hits",
        "misses",
    )

    def __init__(
        self,
        capacity_blocks: int,
        small_fraction: float = 0.1,
        ghost_fraction: float = 0.9,
        move_to_main_threshold: int = 2,
    ) -> None:
        cap = _capacity_blocks(capacity_blocks)
        if not 0.0 < small_fraction < 1.0:
            raise ValueError(
                f"small_fraction must be a fraction of the capacity strictly between 0 and 1, "
                f"got {small_fraction!r}"
            )
        if not ghost_fraction >= 0.0:
            raise ValueError(
                f"ghost_fraction must be >= 0 (ghost keys per cache block), got {ghost_fraction!r}"
            )
        if isinstance(move_to_main_threshold, bool) or not isinstance(move_to_main_threshold, int):
            raise ValueError(
                f"move_to_main_threshold must be an integer >= 1, got {move_to_main_threshold!r}"
            )
        if move_to_main_threshold < 1:
            raise ValueError(f"move_to_main_threshold must be an integer >= 1, got {move_to_main_threshold}")
        self._cap = cap
        # int() truncates like libCacheSim's C casts: (int64_t)size * ratio and (int64_t)(size * ratio).
        self._small_cap = max(1, int(cap * small_fraction))
        self._main_cap = cap - self._small_cap
        self._ghost_cap = int(cap * ghost_fraction)
        self._threshold = move_to_main_threshold
        self._small: OrderedDict[int, int] = OrderedDict()  # key -> access count, oldest first
        self._main: OrderedDict[int, int] = OrderedDict()  # key -> access count, oldest first
        self._ghost: OrderedDict[int, bool] = OrderedDict()  # key -> True, oldest first
        self._has_evicted = False
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    @property
    def capacity(self) -> int:
        """Size of the cache in blocks."""
        return self._cap

    @property
    def small_capacity(self) -> int:
        """Share of the small (probationary) FIFO, in blocks."""
        return self._small_cap

    @property
    def ghost_capacity(self) -> int:
        """Size of the ghost FIFO, in keys."""
        return self._ghost_cap

    def access(self, key: int) -> bool:
        """Look ``key`` up: True on a hit (its count goes up); on a miss admit it and return False."""
        # A key is never both resident and a ghost (it leaves the ghost queue when admitted), so the
        # order of these lookups does not change any decision.
        small = self._small
        if key in small:
            small[key] += 1
            self.hits += 1
            return True
        main = self._main
        if key in main:
            main[key] += 1
            self.hits += 1
            return True
        self.misses += 1
        self._admit(key)
        return False

    def insert(self, key: int) -> None:
        """Admit ``key`` (or count a reference to it, when resident) without counting a lookup."""
        if key in self._small:
            self._small[key] += 1
        elif key in self._main:
            self._main[key] += 1
        else:
            self._admit(key)

    def discard(self, key: int) -> bool:
        """Invalidate ``key`` and forget its ghost entry: True if it was resident."""
        self._ghost.pop(key, None)
        if self._small.pop(key, None) is not None:
            return True
        return self._main.pop(key, None) is not None

    def _admit(self, key: int) -> None:
        small, main = self._small, self._main
        to_main = self._ghost.pop(key, False)
        while len(small) + len(main) >= self._cap:
            self._evict_one()
        if to_main or (not self._has_evicted and len(small) >= self._small_cap):
            main[key] = 0
        else:
            small[key] = 0

    def _evict_one(self) -> None:
        """One eviction step; it may only move blocks from small to main (the caller loops)."""
        self._has_evicted = True
        small, main = self._small, self._main
        if len(main) > self._main_cap or not small:
            while main:
                key, count = main.popitem(last=False)
                if count >= 1:
                    main[key] = min(count, 3) - 1
                else:
                    self.evictions += 1
                    return
        else:
            threshold = self._threshold
            while small:
                key, count = small.popitem(last=False)
                if count >= threshold:
                    main[key] = 0
                else:
                    if self._ghost_cap > 0:
                        ghost = self._ghost
                        if len(ghost) >= self._ghost_cap:
                            ghost.popitem(last=False)
                        ghost[key] = True
                    self.evictions += 1
                    return

    def __contains__(self, key: object) -> bool:
        return key in self._small or key in self._main

    def __len__(self) -> int:
        return len(self._small) + len(self._main)

    def __repr__(self) -> str:
        return (
            f"S3FIFO(capacity_blocks={self._cap}, small={len(self._small)}/{self._small_cap}, "
            f"main={len(self._main)}/{self._main_cap}, ghost={len(self._ghost)}/{self._ghost_cap})"
        )


class ARC:
    """Adaptive Replacement Cache (Megiddo & Modha, FAST 2003) of ``capacity_blocks`` blocks.

    Two resident LRU lists, T1 (seen once recently) and T2 (seen at least twice), and two ghost lists
    of keys only, B1 and B2, holding what T1 and T2 evicted. The target size ``p`` of T1 grows on a
    hit in B1 by max(|B2|/|B1|, 1) and shrinks on a hit in B2 by max(|B1|/|B2|, 1) (a float, as in
    libCacheSim). The directory T1+T2+B1+B2 holds at most 2 * capacity keys.

    This is libCacheSim's ``ARC`` (``ARC.c``): REPLACE evicts T1's LRU block into B1 when T1 is
    non-empty and larger than ``p`` (or equal to ``p`` on a B2 hit), or when T2 is empty; otherwise
    T2's LRU block into B2.
    """

    __slots__ = ("_b1", "_b2", "_cap", "_p", "_t1", "_t2", "evictions", "hits", "misses")

    def __init__(self, capacity_blocks: int) -> None:
        self._cap = _capacity_blocks(capacity_blocks)
        self._t1: OrderedDict[int, None] = OrderedDict()  # least recently used first
        self._t2: OrderedDict[int, None] = OrderedDict()
        self._b1: OrderedDict[int, None] = OrderedDict()
        self._b2: OrderedDict[int, None] = OrderedDict()
        self._p = 0.0
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    @property
    def capacity(self) -> int:
        """Size of the cache in blocks."""
        return self._cap

    @property
    def target_t1(self) -> float:
        """ARC's adaptive target size ``p`` of T1, in blocks."""
        return self._p

    def access(self, key: int) -> bool:
        """Look ``key`` up: True on a hit (the block moves to T2's MRU end); on a miss admit it."""
        t1 = self._t1
        if key in t1:
            del t1[key]
            self._t2[key] = None
            self.hits += 1
            return True
        t2 = self._t2
        if key in t2:
            t2.move_to_end(key)
            self.hits += 1
            return True
        self.misses += 1
        self._admit(key)
        return False

    def insert(self, key: int) -> None:
        """Admit ``key`` (or reference it, when resident) without counting a lookup."""
        if key in self._t1:
            del self._t1[key]
            self._t2[key] = None
        elif key in self._t2:
            self._t2.move_to_end(key)
        else:
            self._admit(key)

    def discard(self, key: int) -> bool:
        """Invalidate ``key`` and forget its ghost entry: True if it was resident."""
        self._b1.pop(key, None)
        self._b2.pop(key, None)
        if self._t1.pop(key, _ABSENT) is not _ABSENT:
            return True
        return self._t2.pop(key, _ABSENT) is not _ABSENT

    def _admit(self, key: int) -> None:
        t1, t2, b1, b2, cap = self._t1, self._t2, self._b1, self._b2, self._cap
        full = len(t1) + len(t2) >= cap
        if key in b1:  # case II: recency is winning, grow T1's target
            self._p = min(self._p + max(len(b2) / len(b1), 1.0), cap)
            del b1[key]
            if full:
                self._replace(False)
            t2[key] = None
        elif key in b2:  # case III: frequency is winning, shrink T1's target
            self._p = max(self._p - max(len(b1) / len(b2), 1.0), 0.0)
            del b2[key]
            if full:
                self._replace(True)
            t2[key] = None
        else:  # case IV: a key ARC has no record of
            if full:
                if len(t1) + len(b1) >= cap:  # case A: L1 = T1 + B1 holds the capacity
                    if b1:
                        b1.popitem(last=False)
                        self._replace(False)
                    else:
                        t1.popitem(last=False)
                        self.evictions += 1
                else:  # case B
                    if len(t1) + len(b1) + len(t2) + len(b2) >= 2 * cap and b2:
                        b2.popitem(last=False)
                    self._replace(False)
            t1[key] = None

    def _replace(self, hit_in_b2: bool) -> None:
        """ARC's REPLACE: demote T1's or T2's LRU block to its ghost list."""
        t1 = self._t1
        n1 = len(t1)
        if (n1 > 0 and (n1 > self._p or (n1 == self._p and hit_in_b2))) or not self._t2:
            victim, _ = t1.popitem(last=False)
            self._b1[victim] = None
        else:
            victim, _ = self._t2.popitem(last=False)
            self._b2[victim] = None
        self.evictions += 1

    def __contains__(self, key: object) -> bool:
        return key in self._t1 or key in self._t2

    def __len__(self) -> int:
        return len(self._t1) + len(self._t2)

    def __repr__(self) -> str:
        return (
            f"ARC(capacity_blocks={self._cap}, T1={len(self._t1)}, T2={len(self._t2)}, "
            f"B1={len(self._b1)}, B2={len(self._b2)}, p={self._p:g})"
        )
