"""Stages with no queue of their own, or a single serialization queue: delays and links."""

from __future__ import annotations

from heapq import heapreplace

from simpy.events import Event

from storagelab.kernel.component import Component, completion_in
from storagelab.kernel.io import IORequest
from storagelab.kernel.service import ServiceDistribution


class Delay(Component):
    """A pure delay (infinite servers): every IO is held ``delay`` seconds, or a distributed time.

    ``delay`` is a number of seconds or a :class:`~storagelab.kernel.service.ServiceDistribution`.
    """

    def __init__(self, name: str, delay: float | ServiceDistribution) -> None:
        super().__init__(name)
        if isinstance(delay, ServiceDistribution):
            self.delay = delay
        else:
            if not isinstance(delay, int | float) or isinstance(delay, bool) or not delay >= 0:
                raise ValueError(f"delay {name!r}: delay must be >= 0 s, got {delay}")
            self.delay = float(delay)
        self.reset_stats()

    def on_bind(self) -> None:
        if isinstance(self.delay, ServiceDistribution):
            self._draw = self.delay.sampler(self.rng)
        else:
            d = self.delay
            self._draw = lambda: d

    def reset_stats(self) -> None:
        self.completed = 0
        self.total_delay = 0.0

    def submit(self, io: IORequest) -> Event:
        d = self._draw()
        self.completed += 1
        self.total_delay += d
        return completion_in(self.env, d, io)

    def stats(self, elapsed: float) -> dict[str, float]:
        return (
            {"completed": float(self.completed), "mean_in_delay": self.total_delay / elapsed}
            if elapsed > 0
            else {}
        )


class Link(Component):
    """A network link: a FIFO serialization queue at ``bandwidth`` bytes/s, then ``propagation`` seconds.

    An IO occupies the link for ``size / bandwidth`` (plus ``per_io_overhead`` seconds of framing or
    protocol time), in arrival order; it then arrives ``propagation`` seconds later. For a WAN, a
    synchronous write pays the round trip: model it as two links (there and back), each with
    propagation RTT/2.
    """

    def __init__(
        self, name: str, bandwidth: float, propagation: float = 0.0, per_io_overhead: float = 0.0
    ) -> None:
        super().__init__(name)
        if not bandwidth > 0:
            raise ValueError(f"link {name!r}: bandwidth must be > 0 bytes/s, got {bandwidth}")
        if propagation < 0 or per_io_overhead < 0:
            raise ValueError(f"link {name!r}: propagation and per-IO overhead must be >= 0 s")
        self.bandwidth = float(bandwidth)
        self.propagation = float(propagation)
        self.per_io_overhead = float(per_io_overhead)
        self.reset_stats()

    def on_bind(self) -> None:
        self._free = [0.0]
        self.reset_stats()

    def reset_stats(self) -> None:
        """Start a measurement window now: serialization already scheduled after now still counts."""
        now = self.env._now if self.ctx is not None else 0.0
        self.completed = 0  # IOs accepted onto the link in the window
        self.busy_time = max(self._free[0] - now, 0.0) if self.ctx is not None else 0.0
        self.bytes = 0

    def submit(self, io: IORequest) -> Event:
        now = self.env._now
        s = io.size / self.bandwidth + self.per_io_overhead
        start = self._free[0]
        if start < now:
            start = now
        heapreplace(self._free, start + s)
        self.completed += 1
        self.busy_time += s
        self.bytes += io.size
        return completion_in(self.env, start + s + self.propagation - now, io)

    def stats(self, elapsed: float) -> dict[str, float]:
        if elapsed <= 0:
            return {}
        ahead = max(self._free[0] - self.env._now, 0.0)  # serialization scheduled after the window
        return {
            "accepted": float(self.completed),
            "utilisation": (self.busy_time - ahead) / elapsed,
            "mb_per_s": self.bytes / elapsed / 1e6,
        }
