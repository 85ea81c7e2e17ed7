"""A topology: what an architecture preset returns — the components behind each named volume, and the
parameters they were built from, each tagged with its origin."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from storagelab.architectures.capacities import Stage, capacity_table, components_below
from storagelab.architectures.parameters import ParamSet
from storagelab.components.tiering import WorkingSetReadCache
from storagelab.kernel.component import Component
from storagelab.kernel.simulation import SimulationResult, simulate
from storagelab.provenance import CHOICE_UNIT, PRESET_UNIT, Param
from storagelab.workloads.application import ApplicationWorkload


@dataclass
class Topology:
    """An architecture built for one run: ``volumes`` maps each volume (LUN, datastore) a workload may
    target to the component that accepts its IOs; ``params`` are the numbers the preset was built from,
    a :class:`~storagelab.architectures.parameters.ParamSet` of :class:`~storagelab.provenance.Param` (origin
    ``document``, ``device-physics``, ``datasheet``, ``fit`` with the points it was fitted on,
    ``assumption`` or ``user``). Building the topology refuses a declared parameter the preset never
    read. ``parts`` names components worth inspecting after a run (a replication's timeline and RPO, a
    link); ``roles`` groups components by what they are (``"drives"``, ``"write logs"``, ``"front end"``...),
    so that an analysis finds them by role (:meth:`role_stats`), not by their names. ``stages`` declares
    every stage that can bind, with its hardware and the parameters that set its capacity
    (:meth:`capacities`). Components belong to one run: call the preset again for the next one."""

    name: str
    volumes: dict[str, Component]
    params: ParamSet
    notes: str = ""
    parts: dict[str, Component] = field(default_factory=dict)
    roles: dict[str, list[Component]] = field(default_factory=dict)
    stages: list[Stage] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.params, ParamSet):
            raise TypeError(f"topology {self.name!r}: params must be the ParamSet the preset read from")
        self.params.check_all_read()

    @property
    def fitted_on(self) -> dict[str, tuple[str, ...]]:
        """Per fitted parameter, the published points (``datasets/`` row ids) it was fitted on."""
        return {k: p.fitted_on for k, p in self.params.declared().items() if p.origin == "fit"}

    def role_stats(self, result: SimulationResult, role: str, statistic: str | None = None) -> pl.DataFrame:
        """The per-component statistics of ``result`` (a run of this topology) for the components in
        ``role``: one ``statistic``, or all (columns component, statistic, value)."""
        if role not in self.roles:
            raise KeyError(
                f"topology {self.name!r} has no role {role!r}; its roles: {', '.join(self.roles) or 'none'}"
            )
        names = [c.name for c in self.roles[role]]
        stats = result.components().filter(pl.col("component").is_in(names))
        return stats if statistic is None else stats.filter(pl.col("statistic") == statistic)

    def param(self, name: str) -> Param:
        """One parameter as declared (with overrides)."""
        return self.params.declared()[name]

    def param_table(self) -> pl.DataFrame:
        """One row per parameter: name, value (as text: a number, or a device preset's name), unit,
        origin, source, the points a fit used, and whether it sets capacity (for the sensitivity check)."""
        return pl.DataFrame(
            [
                {
                    "architecture": self.name,
                    "parameter": k,
                    "value": p.value if p.unit in (PRESET_UNIT, CHOICE_UNIT) else f"{p.value:g}",
                    "unit": p.unit,
                    "origin": p.origin,
                    "source": p.source,
                    "fitted_on": ", ".join(p.fitted_on),
                    "capacity": p.capacity,
                }
                for k, p in self.params.declared().items()
            ],
            schema={"architecture": pl.String, "parameter": pl.String, "value": pl.String, "unit": pl.String,
                    "origin": pl.String, "source": pl.String, "fitted_on": pl.String, "capacity": pl.String},
        )  # fmt: skip

    def capacities(self) -> pl.DataFrame:
        """Every declared stage that can bind: what it is physically, its servers, its per-IO time and
        capacity (IOPS at 4 KiB, MB/s at 256 KiB) and where each comes from
        (:func:`storagelab.architectures.capacities.capacity_table`)."""
        return capacity_table(self)

    def run(
        self,
        workload: ApplicationWorkload,
        *,
        duration: float,
        warmup: float = 0.0,
        seed: int = 0,
        progress: bool = False,
        max_events: int | None = None,
        max_wall_s: float | None = None,
    ) -> SimulationResult:
        """Simulate ``workload`` on this topology (see :func:`storagelab.simulate`). The popularity each
        stream declares (its ``locality``: Zipf, hot spot) reaches every working-set read cache of the
        topology (:class:`~storagelab.components.tiering.WorkingSetReadCache`), keyed by the stream's name,
        the class of its IOs, unless the preset gave that class its own. ``max_events``, ``max_wall_s``:
        the run's limits (see :func:`storagelab.simulate`)."""
        declared = {s.name: s.locality for s in workload.streams if s.locality is not None}
        if declared:
            for c in components_below(list(self.volumes.values())):
                if isinstance(c, WorkingSetReadCache):
                    c.popularity = {**declared, **c.popularity}
        sources = workload.sources(self.volumes)
        return simulate(
            sources[0].target,
            sources,
            duration=duration,
            warmup=warmup,
            seed=seed,
            progress=progress,
            max_events=max_events,
            max_wall_s=max_wall_s,
        )
