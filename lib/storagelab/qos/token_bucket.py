"""A token-bucket limiter per tenant, as hypervisors offer per-VM IOPS or bandwidth limits (e.g. a
VMDK's IOPS limit), as a station's queue discipline.

Each limited tenant (an IO's ``cls``) has a bucket of ``burst`` tokens refilled at ``rate`` tokens per
second; an IO costs ``cost(io)`` tokens (1 per IO by default: an IOPS limit; ``io.size`` for bytes per
second). A waiting IO is eligible when its tenant's bucket holds its cost; eligible IOs are served in
arrival order, and tenants without a bucket are never held back. So over any interval of length T a
tenant is served at most ``rate * T + burst`` tokens' worth, and when nothing is eligible the station
idles until the exact time the first head's tokens are there (:meth:`TokenBucket.next_eligible`).
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from storagelab.kernel.disciplines import Discipline, Job
from storagelab.kernel.io import IORequest

_EPS = 1e-9  # tokens: rounding in the refill must not hold an IO back


@dataclass(frozen=True)
class Bucket:
    """A limit: ``rate`` tokens per second and at most ``burst`` tokens saved (>= one IO's cost)."""

    rate: float
    burst: float = 1.0

    def __post_init__(self) -> None:
        if not self.rate > 0 or not self.burst > 0:
            raise ValueError(f"token bucket needs rate > 0 and burst > 0, got {self}")


class _State:
    __slots__ = ("bucket", "queue", "stamp", "tokens")

    def __init__(self, bucket: Bucket | None) -> None:
        self.bucket = bucket
        self.tokens = bucket.burst if bucket else 0.0
        self.stamp = 0.0
        self.queue: deque[tuple[int, float, Job]] = deque()

    def refill(self, now: float) -> None:
        b = self.bucket
        if b is not None and now > self.stamp:
            self.tokens = min(b.burst, self.tokens + (now - self.stamp) * b.rate)
            self.stamp = now


class TokenBucket(Discipline):
    """Per-tenant token buckets (IO class -> :class:`Bucket`); unlisted classes are not limited.
    ``record`` keeps the dispatch log (time, class, cost)."""

    def __init__(
        self,
        buckets: Mapping[str, Bucket],
        *,
        cost: Callable[[IORequest], float] | None = None,
        record: bool = False,
    ) -> None:
        self.buckets = dict(buckets)
        self.cost = cost or (lambda io: 1.0)
        self.record = record
        self._reset()

    def _reset(self) -> None:
        self.states: dict[str, _State] = {}
        self._seq = itertools.count()
        self._waiting = 0
        self.log: list[tuple[float, str, float]] = []

    def bind(self, station) -> None:
        super().bind(station)
        self._reset()

    def push(self, job: Job, now: float) -> None:
        io = job[0]
        st = self.states.get(io.cls)
        if st is None:
            st = self.states[io.cls] = _State(self.buckets.get(io.cls))
            st.stamp = now
        c = float(self.cost(io))
        if st.bucket is not None and c > st.bucket.burst:
            raise ValueError(
                f"token bucket for {io.cls!r}: an IO costing {c:g} tokens can never fit a burst of "
                f"{st.bucket.burst:g}; raise the burst to at least one IO's cost"
            )
        st.queue.append((next(self._seq), c, job))
        self._waiting += 1

    def pop(self, now: float) -> Job | None:
        best = None
        for st in self.states.values():
            if not st.queue:
                continue
            st.refill(now)
            seq, c, _job = st.queue[0]
            if (st.bucket is None or st.tokens >= c - _EPS) and (best is None or seq < best.queue[0][0]):
                best = st
        if best is None:
            return None
        _seq, c, job = best.queue.popleft()
        if best.bucket is not None:
            best.tokens -= c
        self._waiting -= 1
        if self.record:
            self.log.append((now, job[0].cls, c))
        return job

    def next_eligible(self, now: float) -> float | None:
        """When the first waiting head's bucket will hold its cost."""
        times = []
        for st in self.states.values():
            if st.queue and st.bucket is not None:
                st.refill(now)
                need = st.queue[0][1] - st.tokens
                times.append(max(now + max(need, 0.0) / st.bucket.rate, math.nextafter(now, math.inf)))
        return min(times) if times else None

    def __len__(self) -> int:
        return self._waiting
