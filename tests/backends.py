"""Test doubles shared by the cache and write-log tests: a back end that records what reaches it."""

from __future__ import annotations

from simpy.events import Event

from storagelab.kernel.component import Component, completion_in
from storagelab.kernel.io import IORequest


class Recorder(Component):
    """A back end that completes every IO after ``service`` seconds (any number at once) and records
    (time, is_read, address, size) of what it receives."""

    def __init__(self, name: str, service: float = 1e-3) -> None:
        super().__init__(name)
        self.service = service
        self.log: list[tuple[float, bool, int, int]] = []

    def submit(self, io: IORequest) -> Event:
        self.log.append((self.env.now, io.is_read, io.address, io.size))
        return completion_in(self.env, self.service, io)


def stats_of(result, component: str) -> dict[str, float]:
    """One component's statistics from a run, by name."""
    rows = result.components().filter(component=component)
    return dict(zip(rows["statistic"], rows["value"], strict=True))
