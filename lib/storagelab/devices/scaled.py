"""A device whose service times are a multiple of another's (:class:`ScaledDevice`)."""

from __future__ import annotations

import numpy as np

from storagelab.devices.model import DATASHEET_BLOCK


class ScaledDevice:
    """A device model whose service times are ``factor`` times those of ``model`` (everything else, its
    parallelism, capacity and state, is the model's): what the calibration's sensitivity check builds
    when it halves or doubles a preset's capacity."""

    def __init__(self, model: object, factor: float) -> None:
        if not factor > 0:
            raise ValueError(f"a service-time factor must be positive, got {factor!r}")
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "factor", float(factor))

    def service_time(self, is_read: bool, size: int, address: int, rng: np.random.Generator) -> float:
        return self.factor * self.model.service_time(is_read, size, address, rng)

    def mean_service_time(self, is_read: bool, size: int) -> float:
        return self.factor * self.model.mean_service_time(is_read, size)

    @property
    def host_write_latency(self) -> float | None:
        """A buffered SSD's write latency, scaled like its service times (None if writes are not buffered)."""
        lat = getattr(self.model, "host_write_latency", None)
        return None if lat is None else self.factor * lat

    @property
    def write_bandwidth(self) -> float:
        return self.model.write_bandwidth / self.factor

    def host_write_time(self, size: int = DATASHEET_BLOCK) -> float:
        return self.factor * self.model.host_write_time(size)

    def __getattr__(self, name: str) -> object:
        return getattr(self.model, name)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self.model, name, value)
