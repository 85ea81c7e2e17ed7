"""Stages with no queue of their own, or a single serialization queue: delays, links, and a probe that
measures response times."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
from mypy_extensions import mypyc_attr

from storagelab.kernel.component import Component, EventLike, Signal, completion_at, completion_in, fire
from storagelab.kernel.io import IORequest
from storagelab.kernel.service import ServiceDistribution


class Delay(Component):
    """A pure delay (infinite servers): every IO is held ``delay`` seconds, or a distributed time.

    ``delay`` is a number of seconds or a :class:`~storagelab.kernel.service.ServiceDistribution`.
    """

    def __init__(self, name: str, delay: float | ServiceDistribution) -> None:
        super().__init__(name)
        self.delay: float | ServiceDistribution
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

    def submit(self, io: IORequest) -> EventLike:
        return completion_at(self.env, self.arrive(io), io)

    def arrive(self, io: IORequest) -> float:
        """Hold ``io``: the time (s) it leaves, scheduling nothing."""
        d = self._draw()
        self.completed += 1
        self.total_delay += d
        return self.env._now + d

    def timed_entry(self) -> Callable[[IORequest], float]:
        """What a caller that wakes at a completion time calls per IO: :meth:`arrive`."""
        return self.arrive

    def stats(self, elapsed: float) -> dict[str, float]:
        return (
            {"completed": float(self.completed), "mean_in_delay": self.total_delay / elapsed}
            if elapsed > 0
            else {}
        )


@mypyc_attr(allow_interpreted_subclasses=True)  # subclassed by modules not compiled
class Link(Component):
    """A full-duplex network link: each direction a FIFO serialization queue at ``bandwidth`` bytes/s,
    then ``propagation`` seconds.

    A request crosses the link towards the target and a response comes back on the other direction,
    each queued only behind traffic going the same way:

    - a write's payload goes out with its request (``size / bandwidth``); its response is an
      acknowledgement (no payload);
    - a read's request carries no payload; its data cross the return direction, after the back end has
      read them.

    ``per_io_overhead`` seconds of framing or protocol time occupy the request direction once per IO.
    Every IO pays the propagation twice (there and back). In a :class:`~storagelab.kernel.Path`, the
    request crosses when the IO reaches the link and the response when the stages behind it have
    completed (:meth:`respond`); a link used on its own completes the request and then the response.

    ``duplex=False`` makes a half-duplex stage instead: one FIFO queue that every IO's payload crosses
    once, on its way in, plus one propagation. That is the shape of a controller or storage processor
    modelled by its per-IO time and internal transfer rate: a processor has no second direction.
    """

    def __init__(
        self,
        name: str,
        bandwidth: float,
        propagation: float = 0.0,
        per_io_overhead: float = 0.0,
        duplex: bool = True,
    ) -> None:
        super().__init__(name)
        if not bandwidth > 0:
            raise ValueError(f"link {name!r}: bandwidth must be > 0 bytes/s, got {bandwidth}")
        if propagation < 0 or per_io_overhead < 0:
            raise ValueError(f"link {name!r}: propagation and per-IO overhead must be >= 0 s")
        self.bandwidth = float(bandwidth)
        self.propagation = float(propagation)
        self.per_io_overhead = float(per_io_overhead)
        self.duplex = bool(duplex)
        self.reset_stats()

    def on_bind(self) -> None:
        self._free = [0.0, 0.0]  # when each direction (0: request, 1: response) is next free
        self.reset_stats()

    def reset_stats(self) -> None:
        """Start a measurement window now: serialization already scheduled after now still counts."""
        now = self.env._now if self.ctx is not None else 0.0
        self.completed = 0  # IOs whose request was accepted onto the link in the window
        free = self._free if self.ctx is not None else (0.0, 0.0)
        self.busy_time = [max(f - now, 0.0) for f in free]
        self.bytes = 0

    def _cross(self, direction: int, seconds: float, io: IORequest) -> EventLike:
        now = self.env._now
        free = self._free
        start = free[direction]
        if start < now:
            start = now
        free[direction] = start + seconds
        self.busy_time[direction] += seconds
        return completion_in(self.env, start + seconds + self.propagation - now, io)

    def forward(self, io: IORequest) -> EventLike:
        """The request crossing towards the target (a write's payload goes with it)."""
        return completion_at(self.env, self.request_time(io), io)

    def respond(self, io: IORequest) -> EventLike:
        """The response crossing back (a read's data, or a write's acknowledgement)."""
        return completion_at(self.env, self.response_time(io), io)

    def request_time(self, io: IORequest) -> float:
        """The request put on the link: the time (s) it has crossed, scheduling nothing (what
        :meth:`forward`'s event fires at)."""
        self.completed += 1
        payload = 0 if io.is_read and self.duplex else io.size
        self.bytes += payload
        # self._cross(0, payload / self.bandwidth + self.per_io_overhead), inline: a link is crossed twice
        # per IO on most paths
        seconds = payload / self.bandwidth + self.per_io_overhead
        now = self.env._now
        free = self._free
        start = free[0]
        if start < now:
            start = now
        free[0] = start + seconds
        self.busy_time[0] += seconds
        return now + (start + seconds + self.propagation - now)

    def response_time(self, io: IORequest) -> float:
        """The response put on the link: the time (s) it has crossed, scheduling nothing (what
        :meth:`respond`'s event fires at)."""
        payload = io.size if io.is_read else 0
        self.bytes += payload
        seconds = payload / self.bandwidth  # self._cross(1, payload / self.bandwidth), inline
        now = self.env._now
        free = self._free
        start = free[1]
        if start < now:
            start = now
        free[1] = start + seconds
        self.busy_time[1] += seconds
        return now + (start + seconds + self.propagation - now)

    def submit(self, io: IORequest) -> EventLike:
        """The link on its own: the request, then the response (half duplex: the request alone)."""
        if not self.duplex:
            return self.forward(io)
        done = Signal(self.env)
        self.forward(io).callbacks.append(
            lambda _e: self.respond(io).callbacks.append(lambda _e2: fire(done, io))
        )
        return done

    def stats(self, elapsed: float) -> dict[str, float]:
        """Utilisation of each direction (``utilisation``: the busier one) and payload MB/s, both ways."""
        if elapsed <= 0:
            return {}
        now = self.env._now
        used = [(b - max(f - now, 0.0)) / elapsed for b, f in zip(self.busy_time, self._free, strict=True)]
        out = {"accepted": float(self.completed), "utilisation": max(used)}
        if self.duplex:
            out |= {"utilisation_request": used[0], "utilisation_response": used[1]}
        return out | {"mb_per_s": self.bytes / elapsed / 1e6}


class ResponseTimeProbe(Component):
    """A pass-through that measures the response time (s) of the IOs sent through it to ``inner``,
    as an array's own statistics report a volume's latency: from the IO's arrival at ``inner`` to its
    completion there, without what the stages above (a host's CPU, its cache) add. It adds no time.

    After a run: :meth:`stats` (``completed``, ``mean_ms``, ``p99_ms`` over the measurement window)
    and :meth:`series` (per time bin)."""

    def __init__(self, name: str, inner: Component) -> None:
        super().__init__(name)
        self.inner = inner
        self._since = 0.0
        self.reset_stats()

    def children(self) -> list[Component]:
        return [self.inner]

    def reset_stats(self) -> None:
        self._since = self.env._now if self.ctx is not None else 0.0
        self._done: list[float] = []
        self._latency: list[float] = []

    def submit(self, io: IORequest) -> EventLike:
        ev = self.inner.submit(io)
        start, done, latency = self.env._now, self._done, self._latency

        def record(_e: EventLike) -> None:
            now = self.env._now
            done.append(now)
            latency.append(now - start)

        ev.callbacks.append(record)
        return ev

    def stats(self, elapsed: float) -> dict[str, float]:
        if elapsed <= 0 or not self._latency:
            return {}
        lat = np.asarray(self._latency)
        return {"completed": float(lat.size), "mean_ms": 1e3 * float(lat.mean()),
                "p99_ms": 1e3 * float(np.quantile(lat, 0.99))}  # fmt: skip

    def series(self, bin_s: float = 1.0) -> pl.DataFrame:
        """Per bin of ``bin_s`` seconds from the start of the measurement window: ``start_s``, ``ios``
        completed in it and their ``mean_ms`` response time."""
        if not bin_s > 0:
            raise ValueError(f"probe {self.name!r}: bin_s must be > 0 s, got {bin_s!r}")
        frame = pl.DataFrame(
            {"done": self._done, "latency": self._latency}, schema={"done": pl.Float64, "latency": pl.Float64}
        )
        return (
            frame.with_columns(start_s=self._since + ((pl.col("done") - self._since) / bin_s).floor() * bin_s)
            .group_by("start_s")
            .agg(ios=pl.len(), mean_ms=1e3 * pl.col("latency").mean())
            .sort("start_s")
        )
