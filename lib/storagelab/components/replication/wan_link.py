"""The two places a replicated volume lives and what joins them: a :class:`Site` (the components that
serve its hosts and take the other site's writes) and the :class:`WanLink` between the two."""

from __future__ import annotations

from dataclasses import dataclass

from simpy.events import Event

from storagelab.kernel.component import Component, completion_in
from storagelab.kernel.io import IORequest
from storagelab.kernel.stages import Link


class WanLink(Link):
    """An inter-site link: full duplex, each direction a FIFO at ``bandwidth`` bytes/s, and a round-trip
    time ``rtt`` (s; each crossing pays half). Direction 0 carries site 0 to site 1, direction 1 the
    reverse. Its bandwidth and RTT may change during a run (:class:`LinkChange`)."""

    def __init__(self, name: str, bandwidth: float, rtt: float, per_io_overhead: float = 0.0) -> None:
        if not rtt >= 0:
            raise ValueError(f"WAN link {name!r}: rtt must be >= 0 s, got {rtt}")
        super().__init__(name, bandwidth, propagation=rtt / 2, per_io_overhead=per_io_overhead)
        self.rtt = float(rtt)
        self._initial = (self.bandwidth, self.rtt)

    def on_bind(self) -> None:
        self.bandwidth, self.rtt = self._initial
        self.propagation = self.rtt / 2
        self.up = True
        self.epoch = 0  # bumped when the link goes down: crossings of an older epoch are lost
        super().on_bind()

    def reset_stats(self) -> None:
        super().reset_stats()
        self.dir_bytes = [0, 0]

    def send(self, from_site: int, nbytes: int, io: IORequest) -> Event:
        """``nbytes`` (payload and header) from site ``from_site`` to the other: serialized on that
        direction, then half the RTT. An acknowledgement (``nbytes == 0``) is a frame too small to wait
        behind whole IOs (frames of all messages interleave on the wire): it pays half the RTT only."""
        if nbytes == 0:
            return completion_in(self.env, self.propagation, io)
        self.dir_bytes[from_site] += nbytes
        self.bytes += nbytes
        self.completed += from_site == 0
        return self._cross(from_site, nbytes / self.bandwidth + self.per_io_overhead, io)

    def change(self, bandwidth: float | None = None, rtt: float | None = None) -> None:
        """Set a new bandwidth (bytes/s) and/or RTT (s) from now on."""
        if bandwidth is not None:
            if not bandwidth > 0:
                raise ValueError(f"WAN link {self.name!r}: bandwidth must be > 0 B/s, got {bandwidth}")
            self.bandwidth = float(bandwidth)
        if rtt is not None:
            if not rtt >= 0:
                raise ValueError(f"WAN link {self.name!r}: rtt must be >= 0 s, got {rtt}")
            self.rtt, self.propagation = float(rtt), float(rtt) / 2

    def stats(self, elapsed: float) -> dict[str, float]:
        """Utilisation of each direction and MB/s each way."""
        out = super().stats(elapsed)
        if elapsed <= 0:
            return out
        return {
            "utilisation": out["utilisation"],
            "utilisation_0_to_1": out["utilisation_request"],
            "utilisation_1_to_0": out["utilisation_response"],
            "mb_per_s_0_to_1": self.dir_bytes[0] / elapsed / 1e6,
            "mb_per_s_1_to_0": self.dir_bytes[1] / elapsed / 1e6,
        }


@dataclass
class Site:
    """One site of a replicated volume. ``volume`` serves the IOs of the site's hosts (reads, and the
    local copy of writes); ``apply`` takes the writes replicated from the other site (default:
    ``volume``; e.g. the back end without the host ports); ``cache``, when given, is where a write-back
    appliance acknowledges a write locally (the write then goes to ``volume`` in the background)."""

    name: str
    volume: Component
    apply: Component | None = None
    cache: Component | None = None

    @property
    def applier(self) -> Component:
        return self.apply if self.apply is not None else self.volume

    def components(self) -> list[Component]:
        return [c for c in (self.volume, self.apply, self.cache) if c is not None]
