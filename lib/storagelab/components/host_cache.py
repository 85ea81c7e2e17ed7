"""A host-side flash read cache in front of a volume, as Fusion-io's ioTurbine caches a guest's disk on an
ioDrive2 in the ESXi host (the NexGen study's scenario 2, ``000_95d1997ae9f905ef.txt``: "guest-based
caching was applied to the E:\\ drive on each of the four VMs").

:class:`HostFlashCache` is a block read cache (:class:`~storagelab.components.cache.ReadCache`: the
replacement policy, fills in flight, delayed hits) whose data live on a flash card, a component the
caches of several guests share:

- a **hit** is a read on the card, so hits queue on it when several guests' caches are busy;
- a **miss** is read from the array; the guest's read completes when the array returns it, and the data
  are then written to the card (the fill loads the card but does not delay the guest);
- a **write** goes through to the array and completes when the array acknowledges it (write-through:
  the cache never holds the only copy). With ``write_policy="update"`` the written blocks are also
  written to the card and stay cached (the write completes when both have it); ``"invalidate"`` drops
  them from the cache instead;
- the cache starts **cold** every run; :meth:`HostFlashCache.timeline` gives its hits and misses per
  interval, so the warm-up can be charted.

``capacity_bytes`` is this guest's share of the card (ioTurbine sizes the cache per VM); a card cannot
hand out more than it holds (:func:`partition`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl
from simpy.events import Event

from storagelab.components.cache import ReadCache
from storagelab.kernel.component import Component
from storagelab.kernel.composition import join_all
from storagelab.kernel.io import IORequest
from storagelab.kernel.randomness import variates


def partition(card_bytes: float, shares: Mapping[str, float]) -> dict[str, int]:
    """Each guest's cache size (bytes) from its share of a card of ``card_bytes``: shares are fractions
    of the card and must sum to at most 1."""
    bad = {k: v for k, v in shares.items() if not 0 < v <= 1}
    if bad or sum(shares.values()) > 1 + 1e-9:
        raise ValueError(
            f"host cache partitions: each share must be in (0, 1] and together at most the card (1); got "
            f"{dict(shares)} (sum {sum(shares.values()):g})"
        )
    return {k: int(card_bytes * v) for k, v in shares.items()}


_TIMELINE = {"time_s": pl.Float64, "hits": pl.Int64, "misses": pl.Int64, "hit_ratio": pl.Float64,
             "fills": pl.Int64, "cache_iops": pl.Float64}  # fmt: skip


class _Timeline:
    """Hits, misses and card fills per interval of a run (a host cache's warm-up and the IOPS it serves)."""

    def __init__(self, interval: float) -> None:
        if not interval > 0:
            raise ValueError(f"host cache: interval must be > 0 s, got {interval!r}")
        self.interval = float(interval)
        self.bins: dict[int, list[int]] = {}

    def count(self, now: float, k: int) -> None:
        b = self.bins.setdefault(int(now / self.interval), [0, 0, 0])
        b[k] += 1

    def frame(self) -> pl.DataFrame:
        if not self.bins:
            return pl.DataFrame(schema=_TIMELINE)
        keys = np.arange(min(self.bins), max(self.bins) + 1)
        counts = np.array([self.bins.get(int(k), [0, 0, 0]) for k in keys])
        hits, misses = counts[:, 0], counts[:, 1]
        reads = hits + misses
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(reads > 0, hits / reads, np.nan)
        return pl.DataFrame({
            "time_s": keys * self.interval, "hits": hits, "misses": misses, "hit_ratio": ratio,
            "fills": counts[:, 2], "cache_iops": hits / self.interval,
        }, schema=_TIMELINE).with_columns(pl.col("hit_ratio").fill_nan(None))  # fmt: skip


class HostFlashCache(ReadCache):
    """A guest's write-through read cache of ``capacity_bytes`` on ``card`` (a flash device component)
    in front of ``backend`` (the volume's path to the array). ``interval``: seconds per bin of
    :meth:`timeline`."""

    WRITE_POLICIES = ("update", "invalidate")

    def __init__(
        self,
        name: str,
        backend: Component,
        card: Component,
        capacity_bytes: int,
        block_bytes: int = 4096,
        policy: str = "lru",
        write_policy: str = "update",
        interval: float = 1.0,
    ) -> None:
        if write_policy not in self.WRITE_POLICIES:
            raise ValueError(
                f"host cache {name!r}: write_policy must be one of {self.WRITE_POLICIES}, got {write_policy!r}"
            )
        super().__init__(name, backend, capacity_bytes, block_bytes, policy, write_policy=write_policy)
        self.card, self.interval = card, float(interval)
        _Timeline(interval)  # validate now

    def children(self) -> list[Component]:
        return [self.backend, self.card]

    def on_bind(self) -> None:
        super().on_bind()
        self._timeline = _Timeline(self.interval)

    def _count(self, k: int) -> None:
        self._timeline.count(self.env.now, k)

    def _hit(self, io: IORequest) -> Event:
        self._count(0)
        return self.card.submit(io.child())

    def submit(self, io: IORequest) -> Event:
        if io.is_read:
            hits, delayed = self.read_hits, self.delayed_hits
            ev = super().submit(io)
            if self.read_hits == hits and self.delayed_hits == delayed:  # a miss: fill the card once read
                self._count(1)
                ev.callbacks.append(lambda _e: self._fill(io))
            return ev
        ev = super().submit(io)
        if self.write_policy == "update":
            return join_all(self.env, [ev, self.card.submit(io.child())], io)
        return ev

    def _fill(self, io: IORequest) -> None:
        self._count(2)
        self.card.submit(io.child(is_read=False))  # background: nobody waits for it

    def timeline(self) -> pl.DataFrame:
        """Per interval of the run: ``time_s`` (its start), read ``hits`` and ``misses``, ``hit_ratio``,
        the card's ``fills``, and ``cache_iops`` (hits per second)."""
        return self._timeline.frame()


class WarmHostCache(Component):
    """A host cache in steady state: a read hits with probability ``hit_ratio`` and is read on ``card``;
    a miss is read from ``backend`` and then filled on the card; writes go through as in
    :class:`HostFlashCache` with ``write_policy="update"`` (to the array and the card; complete when both
    have them). It stands for a cache warmed longer than a simulation can replay block by block (the
    study ran 15 minutes of warm-up and 90 of test); :class:`HostFlashCache` is the model of the warm-up."""

    def __init__(
        self, name: str, backend: Component, card: Component, hit_ratio: float, interval: float = 1.0
    ) -> None:
        super().__init__(name)
        if not 0.0 <= hit_ratio <= 1.0:
            raise ValueError(f"warm host cache {name!r}: hit_ratio must be in [0, 1], got {hit_ratio!r}")
        self.backend, self.card, self.hit_ratio, self.interval = (
            backend,
            card,
            float(hit_ratio),
            float(interval),
        )
        _Timeline(interval)

    def children(self) -> list[Component]:
        return [self.backend, self.card]

    def on_bind(self) -> None:
        self._timeline = _Timeline(self.interval)
        self._uniform = variates(self.rng, lambda g, n: g.random(n)).__next__  # U(0, 1), per read

    def submit(self, io: IORequest) -> Event:
        now = self.env.now
        if not io.is_read:
            return join_all(self.env, [self.backend.submit(io), self.card.submit(io.child())], io)
        if self.hit_ratio >= 1.0 or (self.hit_ratio > 0.0 and self._uniform() < self.hit_ratio):
            self._timeline.count(now, 0)
            return self.card.submit(io.child())
        self._timeline.count(now, 1)
        ev = self.backend.submit(io)
        ev.callbacks.append(lambda _e: self._fill(io))
        return ev

    def _fill(self, io: IORequest) -> None:
        self._timeline.count(self.env.now, 2)
        self.card.submit(io.child(is_read=False))

    def timeline(self) -> pl.DataFrame:
        """As :meth:`HostFlashCache.timeline`."""
        return self._timeline.frame()


class Guests(Component):
    """A volume's address space split among ``len(members)`` guests (VMs) of ``guest_bytes`` each: an IO
    goes to the member of its guest (the last member takes any address beyond)."""

    def __init__(self, name: str, members: list[Component], guest_bytes: int) -> None:
        super().__init__(name)
        if not members or guest_bytes <= 0:
            raise ValueError(f"guests {name!r}: need at least one member and guest_bytes > 0")
        self.members, self.guest_bytes = list(members), int(guest_bytes)

    def children(self) -> list[Component]:
        return self.members

    def submit(self, io: IORequest) -> Event:
        return self.members[min(io.address // self.guest_bytes, len(self.members) - 1)].submit(io)

    def timeline(self) -> pl.DataFrame:
        """The members' timelines summed per interval (hit ratio recomputed)."""
        frames = [m.timeline() for m in self.members if hasattr(m, "timeline")]
        if not frames:
            return pl.DataFrame(schema=_TIMELINE)
        return (
            pl.concat(frames)
            .group_by("time_s")
            .agg(pl.col("hits", "misses", "fills", "cache_iops").sum())
            .with_columns(hit_ratio=pl.col("hits") / (pl.col("hits") + pl.col("misses")))
            .select(list(_TIMELINE))
            .sort("time_s")
        )
