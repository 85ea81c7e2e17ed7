"""What the blocks of a workload contain: content identities for deduplication and a compression ratio per
content, drawn from a documented generator.

A data-reduction layer does not see bytes, only which blocks are identical and how well each compresses.
A :class:`ContentModel` answers, for a block of a volume, what content a read finds and what content a write
brings:

- a volume starts as a copy of a **base image** (a golden desktop image, a database's initial load): block
  ``b`` of every volume holds base content ``b mod image_blocks``, the same across volumes (what a clone
  shares), except a ``diverged_share`` of its blocks (chosen by a hash of volume and block), which hold
  content of that volume's own, written before the run (a persistent desktop's divergence: a share of
  its capacity; by default the same number as ``unique_share``);
- a write brings **unique** content with probability ``unique_share`` (a share of the written IO: user
  data, a desktop's own changes),
  else content from a **common pool** (zeroed blocks, the same OS and application files written by every
  desktop), drawn Zipf-like so a few common blocks dominate;
- every content has a **compression ratio** (uncompressed / compressed size), a deterministic function of
  its identity drawn from a lognormal with the given mean (so a block compresses the same every time it is
  seen, as a real compressor would).

Identities are integers: base blocks ``0 .. image_blocks - 1``, the common pool after them, contents
diverged before the run from :data:`DIVERGED_BASE`, unique contents written in the run from
:data:`UNIQUE_BASE` on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from storagelab.kernel.randomness import variates

UNIQUE_BASE = 1 << 40
DIVERGED_BASE = 1 << 50
_STANDARD_NORMAL = NormalDist()


@dataclass(frozen=True)
class ContentModel:
    """The generator's parameters (see the module docs). ``block_bytes``: the deduplication block (bytes);
    ``image_bytes``: the base image every volume starts from; ``unique_share`` (0..1): share of written
    blocks whose content is new (a share of the IO); ``diverged_share`` (0..1, ``None``: the same as
    ``unique_share``): share of a volume's blocks that diverged from the image before the run (a share of
    the capacity, a different quantity); ``common_blocks`` and ``common_skew``: the pool non-unique writes draw
    from and its Zipf exponent; ``compression_mean`` (>= 1) and ``compression_sigma``: the lognormal of
    per-content compression ratios (a ratio below 1 is taken as 1: stored uncompressed)."""

    block_bytes: int = 4096
    image_bytes: int = 16 * 10**9
    unique_share: float = 0.05
    common_blocks: int = 65536
    common_skew: float = 1.0
    compression_mean: float = 2.0
    compression_sigma: float = 0.5
    diverged_share: float | None = None

    def __post_init__(self) -> None:
        problems = []
        if self.block_bytes < 512:
            problems.append(f"block_bytes must be >= 512, got {self.block_bytes}")
        if self.image_bytes < self.block_bytes:
            problems.append(f"image_bytes must be >= block_bytes, got {self.image_bytes}")
        if not 0.0 <= self.unique_share <= 1.0:
            problems.append(f"unique_share must be in [0, 1], got {self.unique_share}")
        if self.diverged_share is not None and not 0.0 <= self.diverged_share <= 1.0:
            problems.append(f"diverged_share must be in [0, 1] or None, got {self.diverged_share}")
        if self.common_blocks < 1 or self.common_skew < 0:
            problems.append("common_blocks must be >= 1 and common_skew >= 0")
        if not self.compression_mean >= 1.0 or self.compression_sigma < 0:
            problems.append("compression_mean must be >= 1 and compression_sigma >= 0")
        if problems:
            raise ValueError("content model: " + "; ".join(problems))

    @property
    def diverged(self) -> float:
        """The share of a volume's blocks that diverged from the image before the run (0..1)."""
        return self.unique_share if self.diverged_share is None else self.diverged_share

    @property
    def image_blocks(self) -> int:
        return self.image_bytes // self.block_bytes

    def bind(self, rng: np.random.Generator) -> VolumeContents:
        """The per-run state: what every written block now holds, drawn from ``rng``."""
        return VolumeContents(self, rng)

    def compression_ratio(self, content: int) -> float:
        """The compression ratio of one content (>= 1), the same every time: a lognormal with mean
        ``compression_mean`` evaluated at a hash of the identity."""
        if self.compression_sigma == 0:
            return self.compression_mean
        u = _unit_hash(content)
        s = self.compression_sigma
        mu = math.log(self.compression_mean) - s * s / 2  # so the mean of the lognormal is compression_mean
        return max(1.0, math.exp(mu + s * _STANDARD_NORMAL.inv_cdf(u)))


class VolumeContents:
    """Which content every block of every volume holds in one run (see :class:`ContentModel`)."""

    def __init__(self, model: ContentModel, rng: np.random.Generator) -> None:
        self.model = model
        self.rng = rng
        self.written: dict[tuple[int, int], int] = {}
        self._diverged = model.diverged  # share of each volume's blocks that are its own before the run
        self._next_unique = UNIQUE_BASE
        weights = 1.0 / np.arange(1, model.common_blocks + 1) ** model.common_skew
        cdf = self._common_cdf = np.cumsum(weights / weights.sum())
        last, base = model.common_blocks - 1, model.image_blocks

        def common(g: np.random.Generator, n: int) -> np.ndarray:
            draws = np.searchsorted(cdf, g.random(n), side="right")
            return (np.minimum(draws, last) + base)[::-1]

        # Both draw 4096 at a time from ``rng`` and hand each block out last value first (reversed), the
        # order this model has always used, so its results are unchanged.
        self._uniform = variates(rng, lambda g, n: g.random(n)[::-1]).__next__  # U(0, 1)
        self._common_content = variates(rng, common).__next__  # a content from the common pool

    def read(self, volume: int, block: int) -> int:
        """The content block ``block`` of ``volume`` holds now."""
        c = self.written.get((volume, block))
        if c is not None:
            return c
        key = (volume << 40) ^ block
        diverged = self._diverged
        if diverged > 0 and _unit_hash(key ^ 0x5DEECE66D) < diverged:
            return DIVERGED_BASE + key  # this volume's own content, stored before the run
        return block % self.model.image_blocks

    def write(self, volume: int, block: int) -> int:
        """A write to ``block`` of ``volume``: the content it brings (unique, or from the common pool)."""
        if self._uniform() < self.model.unique_share:
            c = self._next_unique
            self._next_unique += 1
        else:
            c = self._common_content()
        self.written[(volume, block)] = c
        return c


def _unit_hash(x: int) -> float:
    """A deterministic value in (0, 1) from an integer (splitmix64)."""
    z = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z ^= z >> 31
    return (z + 0.5) / 2.0**64
