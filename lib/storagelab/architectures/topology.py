"""A topology: what an architecture preset returns — the components behind each named volume, and the
parameters they were built from, each tagged with its origin."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import polars as pl

from storagelab.devices import Param
from storagelab.kernel.component import Component
from storagelab.simulation import SimulationResult, simulate
from storagelab.workloads.applications import ApplicationWorkload


@dataclass
class Topology:
    """An architecture built for one run: ``volumes`` maps each volume (LUN, datastore) a workload may
    target to the component that accepts its IOs; ``params`` are the numbers the preset used, each a
    :class:`~storagelab.devices.Param` with origin (``document``, ``device-physics``, ``datasheet``,
    ``fit`` or ``assumption``) and source. ``fitted_on`` names, per fitted parameter, the published
    points (``datasets/`` row ids) it was fitted to. Components belong to one run: call the preset
    again for the next one."""

    name: str
    volumes: dict[str, Component]
    params: dict[str, Param]
    fitted_on: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    notes: str = ""

    def __post_init__(self) -> None:
        untagged = [k for k, p in self.params.items() if not isinstance(p, Param)]
        if untagged:
            raise ValueError(f"topology {self.name!r}: parameters without an origin tag: {untagged}")
        for key in self.fitted_on:
            if key not in self.params or self.params[key].origin != "fit":
                raise ValueError(
                    f"topology {self.name!r}: fitted_on names {key!r}, which is not a fitted parameter"
                )
        unlisted = [k for k, p in self.params.items() if p.origin == "fit" and k not in self.fitted_on]
        if unlisted:
            raise ValueError(
                f"topology {self.name!r}: fitted parameters {unlisted} do not say what they were fitted on"
            )

    def param_table(self) -> pl.DataFrame:
        """One row per parameter: name, value, unit, origin, source (and the points a fit used)."""
        return pl.DataFrame(
            [
                {
                    "architecture": self.name,
                    "parameter": k,
                    "value": float(p.value),
                    "unit": p.unit,
                    "origin": p.origin,
                    "source": p.source,
                    "fitted_on": ", ".join(self.fitted_on.get(k, ())),
                }
                for k, p in self.params.items()
            ]
        )

    def run(
        self,
        workload: ApplicationWorkload,
        *,
        duration: float,
        warmup: float = 0.0,
        seed: int = 0,
        progress: bool = False,
    ) -> SimulationResult:
        """Simulate ``workload`` on this topology (see :func:`storagelab.simulate`)."""
        sources = workload.sources(self.volumes)
        return simulate(
            sources[0].target, sources, duration=duration, warmup=warmup, seed=seed, progress=progress
        )
