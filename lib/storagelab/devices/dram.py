"""Memory used as a storage tier (:class:`DRAM`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np

from storagelab.devices.model import _check_io, _lookup, _param
from storagelab.provenance import Param


class DRAM:
    """Memory used as a storage tier: ``latency + size / bandwidth`` per IO on each of ``parallelism``
    channels. Reads and writes cost the same; no state, no randomness."""

    state_dependent: ClassVar[bool] = False
    PRESETS: ClassVar[dict[str, Callable[[], DRAM]]] = {}

    def __init__(self, name: str, *, latency: Param, bandwidth: Param, parallelism: Param) -> None:
        self.name = str(name)
        self.latency = _param("latency", latency, "time", 0.0, 1.0)
        self.bandwidth = _param("bandwidth", bandwidth, "throughput", 1.0)
        par = _param("parallelism", parallelism, "count", 1.0, 4096.0)
        if par != int(par):
            raise ValueError(f"parallelism must be a whole number of channels, got {parallelism.value}")
        self.parallelism = int(par)
        self.params: dict[str, Param] = {
            "latency": latency,
            "bandwidth": bandwidth,
            "parallelism": parallelism,
        }

    def service_time(self, is_read: bool, size: int, address: int, rng: np.random.Generator) -> float:
        """Seconds one channel spends on this IO."""
        if size <= 0 or address < 0:
            _check_io(self.name, size, address)
        return self.latency + size / self.bandwidth

    def mean_service_time(self, is_read: bool, size: int) -> float:
        """Exact (deterministic) service time (s)."""
        _check_io(self.name, size, 0)
        return self.latency + size / self.bandwidth

    def __repr__(self) -> str:
        return f"DRAM({self.name!r}, {self.latency * 1e9:g} ns + size / {self.bandwidth / 1e9:g} GB/s)"

    @classmethod
    def preset(cls, name: str) -> DRAM:
        """A named memory tier: one of :attr:`PRESETS`."""
        return _lookup(cls.PRESETS, name, "DRAM")()
