"""Random streams: one seed per run, an independent, named stream per component.

Streams come from :class:`numpy.random.SeedSequence`: the run's seed plus a key derived from the
component's name (a stable hash, not Python's salted ``hash``), so a component draws the same numbers
whatever other components exist, in whatever order they are built, in any process.
"""

from __future__ import annotations

import hashlib
from itertools import chain

import numpy as np


def _name_key(name: str) -> list[int]:
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=16).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


class RandomStreams:
    """The random number streams of one simulation run, keyed by component name."""

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        self.seed = int(seed)
        self._streams: dict[str, np.random.Generator] = {}

    def stream(self, name: str) -> np.random.Generator:
        """The generator for ``name`` (created on first use; the same object afterwards)."""
        gen = self._streams.get(name)
        if gen is None:
            seq = np.random.SeedSequence(entropy=self.seed, spawn_key=_name_key(name))
            gen = self._streams[name] = np.random.Generator(np.random.PCG64(seq))
        return gen


def variates(gen: np.random.Generator, draw, block: int = 4096):
    """An endless iterator of variates drawn ``block`` at a time: ``next(it)`` is one C-level call.

    Drawing 4096 variates in one numpy call costs about as much as drawing a handful one by one; this
    is how the kernel keeps random-number cost off the per-IO path. ``draw`` is a callable
    ``(generator, n) -> ndarray``, e.g. ``lambda g, n: g.exponential(0.01, n)``.
    """

    def blocks():
        while True:
            yield draw(gen, block).tolist()

    return chain.from_iterable(blocks())
