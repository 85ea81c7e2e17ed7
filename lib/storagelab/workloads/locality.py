"""Locality models: where the random IOs of a workload land within the address span of a volume.

A locality model is a distribution over the aligned byte offsets ``0, align, 2*align, ...`` below
``span`` (bytes). :meth:`offsets` draws ``n`` of them at once (vectorized numpy) from the caller's
generator; the models hold no random state of their own, so the same generator state gives the same
offsets. The access sampler (:mod:`storagelab.workloads.access_spec`) moves an offset back when an IO
of that size would run past the end of the span.

- :class:`Uniform` — every aligned offset equally likely (Iometer's random access);
- :class:`Zipf` — the span cut into ``blocks`` equal regions whose popularity follows a Zipf law of
  exponent ``alpha`` (rank-k region drawn with probability proportional to k**-alpha), the ranks
  scattered over the span by a fixed permutation;
- :class:`HotSpot` — a contiguous hot region at the start of the span, ``hot_fraction`` of it, receives
  ``hot_access_pct`` % of the IOs (the "80/20" skew).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["HotSpot", "Locality", "Uniform", "Zipf"]


@runtime_checkable
class Locality(Protocol):
    """Where random IOs land: a distribution over aligned byte offsets in ``[0, span)``."""

    def offsets(self, rng: np.random.Generator, n: int, span: int, align: int) -> np.ndarray:
        """``n`` byte offsets (int64), each a multiple of ``align`` (bytes) and ``< span`` (bytes)."""
        ...


def _slot_count(n: int, span: int, align: int) -> int:
    """The number of aligned offsets below ``span`` after checking the common arguments."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"n (number of offsets) must be an integer >= 0, got {n!r}")
    if isinstance(span, bool) or not isinstance(span, int | np.integer) or span <= 0:
        raise ValueError(f"span must be an integer number of bytes > 0, got {span!r}")
    if isinstance(align, bool) or not isinstance(align, int | np.integer) or align <= 0:
        raise ValueError(f"align must be an integer number of bytes > 0, got {align!r}")
    return -(-int(span) // int(align))  # ceil(span / align): offsets k*align with k*align < span


@dataclass(frozen=True)
class Uniform:
    """Uniform random access: every aligned offset in the span is equally likely."""

    def offsets(self, rng: np.random.Generator, n: int, span: int, align: int) -> np.ndarray:
        """``n`` aligned byte offsets drawn uniformly from ``[0, span)``."""
        slots = _slot_count(n, span, align)
        return rng.integers(0, slots, size=n, dtype=np.int64) * np.int64(align)


@dataclass(frozen=True)
class Zipf:
    """Zipf-skewed access over ``blocks`` equal regions of the span.

    The region of popularity rank k (1 = hottest) is chosen with probability ``k**-alpha / H`` where
    ``H = sum_{j=1..blocks} j**-alpha``; the offset within the chosen region is uniform. Which region
    has which rank is a random permutation fixed by ``placement_seed`` (an int: part of the model's
    definition, not of the IO stream), so hot regions are scattered over the span rather than packed
    at its start. Ranks are drawn by inverse CDF: the normalized cumulative popularity is computed once
    here and each draw is one ``np.searchsorted``.

    ``alpha`` > 0 (dimensionless); ``blocks`` >= 1 (count; at most the number of aligned offsets in the
    span, checked when drawing).
    """

    alpha: float
    blocks: int
    placement_seed: int = 0
    _cdf: np.ndarray = field(init=False, repr=False, compare=False)
    _region_of_rank: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        alpha, blocks = self.alpha, self.blocks
        if (
            isinstance(alpha, bool)
            or not isinstance(alpha, numbers.Real)
            or not np.isfinite(alpha)
            or alpha <= 0
        ):
            raise ValueError(f"alpha (Zipf exponent) must be a finite number > 0, got {alpha!r}")
        if isinstance(blocks, bool) or not isinstance(blocks, int | np.integer) or blocks < 1:
            raise ValueError(f"blocks (number of Zipf regions) must be an integer >= 1, got {blocks!r}")
        weights = np.arange(1, blocks + 1, dtype=np.float64) ** -float(alpha)
        cdf = np.cumsum(weights)
        cdf /= cdf[-1]
        cdf[-1] = 1.0  # uniform draws are < 1, so searchsorted never runs past the last rank
        perm = np.random.default_rng(self.placement_seed).permutation(blocks).astype(np.int64)
        object.__setattr__(self, "_cdf", cdf)
        object.__setattr__(self, "_region_of_rank", perm)

    def rank_probabilities(self) -> np.ndarray:
        """Probability of each popularity rank, hottest first (sums to 1)."""
        return np.diff(self._cdf, prepend=0.0)

    def region_of_rank(self) -> np.ndarray:
        """Region index (0 = start of the span) of each popularity rank, hottest first."""
        return self._region_of_rank.copy()

    def offsets(self, rng: np.random.Generator, n: int, span: int, align: int) -> np.ndarray:
        """``n`` aligned byte offsets: a region by Zipf rank, then a uniform offset inside it."""
        slots = _slot_count(n, span, align)
        if self.blocks > slots:
            raise ValueError(
                f"Zipf blocks={self.blocks} exceeds the {slots} aligned offsets in span={span} B at "
                f"align={align} B; use blocks <= {slots}"
            )
        rank = np.searchsorted(self._cdf, rng.random(n), side="right")
        region = self._region_of_rank[rank]
        # Region r holds slots [floor(r*slots/blocks), floor((r+1)*slots/blocks)): equal within one slot.
        lo = region * slots // self.blocks
        hi = (region + 1) * slots // self.blocks
        return rng.integers(lo, hi, dtype=np.int64) * np.int64(align)


@dataclass(frozen=True)
class HotSpot:
    """A hot region at the start of the span that receives a fixed share of the IOs.

    The first ``hot_fraction`` of the span (a fraction in (0, 1), rounded to whole aligned offsets)
    receives ``hot_access_pct`` % of the IOs (0..100), the rest of the span the remainder; within each
    part offsets are uniform. ``HotSpot(0.2, 80)`` is the 80/20 rule.
    """

    hot_fraction: float
    hot_access_pct: float

    def __post_init__(self) -> None:
        f, p = self.hot_fraction, self.hot_access_pct
        if isinstance(f, bool) or not isinstance(f, numbers.Real) or not 0.0 < f < 1.0:
            raise ValueError(f"hot_fraction must be a fraction of the span in (0, 1), got {f!r}")
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 100.0:
            raise ValueError(f"hot_access_pct must be a percentage in [0, 100], got {p!r}")

    def hot_slots(self, span: int, align: int) -> int:
        """Number of aligned offsets in the hot region (the hot region is ``[0, hot_slots*align)``)."""
        slots = _slot_count(0, span, align)
        hot = round(self.hot_fraction * slots)
        if not 0 < hot < slots:
            raise ValueError(
                f"span={span} B at align={align} B has {slots} aligned offsets: too few to split "
                f"hot_fraction={self.hot_fraction} into non-empty hot and cold regions"
            )
        return hot

    def offsets(self, rng: np.random.Generator, n: int, span: int, align: int) -> np.ndarray:
        """``n`` aligned byte offsets: hot region with probability ``hot_access_pct``/100, else cold."""
        slots = _slot_count(n, span, align)
        hot = self.hot_slots(span, align)
        in_hot = rng.random(n) < self.hot_access_pct / 100.0
        lo = np.where(in_hot, 0, hot)
        hi = np.where(in_hot, hot, slots)
        return rng.integers(lo, hi, dtype=np.int64) * np.int64(align)
