"""A workload mix: application workloads with their sizes and a service level per class, as data.

A mix is what a user sizes for: *400 Exchange mailboxes, four SQL Server VMs of DVD Store and a
600-desktop boot storm finished in five minutes; OLTP p95 under 10 ms, Exchange mean under 20 ms, the
desktops' p95 under 30 ms.* In YAML (a notebook's ``mix:`` key, or a file of its own)::

    name: NexGen study mix
    classes:
      - {name: oltp, workload: oltp, size: 4, service_level: {metric: p95_ms, limit_ms: 10}}
      - {name: exchange, workload: exchange, size: 400, service_level: {metric: mean_ms, limit_ms: 20}}
      - {name: vdi, workload: boot_storm, size: 600, within_min: 5,
         service_level: {metric: p95_ms, limit_ms: 30}}

Each class's ``workload`` is one of the generators in :data:`GENERATORS` (the studies' own workloads,
see :mod:`storagelab.workloads.catalogue`), and ``size`` counts what that generator counts (SQL VMs,
mailboxes, desktops, streams). A mix is simulated at its busiest steady moment: a boot storm at its
plateau (desktops powered on at the rate that finishes the storm in ``within_min`` minutes, each
issuing its boot IOs), the desktops of a steady state all logged on. A storm finishes on time when the
architecture keeps up with that plateau, which the class's latency service level then checks.

:meth:`WorkloadMix.workload` builds the mix at a load ``multiplier``: every class's size times the
multiplier (closed-loop workers rounded to whole workers, at least one; open-loop rates scaled), the
data each class addresses unchanged. ``placement`` maps each workload kind to the volume(s) of an
architecture; a class placed on several volumes is split evenly across them and recorded as one IO
class per volume, which its :class:`~storagelab.analysis.headroom.LatencyObjective` measures together.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from storagelab.analysis.headroom import LatencyObjective, percentile_of
from storagelab.components.extent import Extent
from storagelab.input_files import InputFileError, problems, read_yaml
from storagelab.kernel.component import Component
from storagelab.kernel.sources import Source
from storagelab.workloads import catalogue
from storagelab.workloads.application import ApplicationWorkload, combine
from storagelab.workloads.catalogue.vdi import BOOT_DURATION_S, SPAN_PER_DESKTOP

WorkloadKind = Literal["oltp", "exchange", "boot_storm", "vdi_steady", "web", "scan", "backup"]

#: Extents of a shared volume start on a 1 MiB boundary.
EXTENT_ALIGN = 1 << 20


#: The data (B) a mix's ``oltp`` and ``exchange`` classes address whatever their size: what the generators
#: addressed at their defaults (4 SQL VMs of 50 GB; 400 mailboxes on four 450 GB databases) before their
#: spans followed their VMs and mailboxes. Kept so that the committed notebook outputs (notebook 20 sizes
#: 16 VMs and 1,600 mailboxes) are unchanged; whether a mix's data should grow with its size is open.
MIX_OLTP_SPAN, MIX_EXCHANGE_SPAN = 4 * 50 * 10**9, 4 * 450 * 10**9


def _oltp(name: str, size: float, volume: str, spec: MixClass) -> ApplicationWorkload:
    return catalogue.dvd_store(
        name, vms=round(size), think=spec.think_ms / 1e3, volume=volume, span=MIX_OLTP_SPAN
    )


def _exchange(name: str, size: float, volume: str, spec: MixClass) -> ApplicationWorkload:
    return catalogue.loadgen_outlook_200(name, mailboxes=round(size), volume=volume, span=MIX_EXCHANGE_SPAN)


def _boot_storm(name: str, size: float, volume: str, spec: MixClass) -> ApplicationWorkload:
    desktops = round(size)
    rate = desktops / (spec.within_min * 60 - BOOT_DURATION_S)
    storm = catalogue.boot_storm(name, desktops=desktops, power_on_rate=rate, boot_duration=BOOT_DURATION_S,
                                 volume=volume)  # fmt: skip
    (stream,) = storm.streams  # at its plateau: the rate of desktops booting at once
    plateau = stream.rate * min(1.0, desktops / rate / BOOT_DURATION_S)
    return replace(storm, streams=(replace(stream, rate=plateau, schedule=None),))


def _vdi_steady(name: str, size: float, volume: str, spec: MixClass) -> ApplicationWorkload:
    desktops = round(size)
    return catalogue.login_vsi(
        name, desktops=desktops, ramp=False, volume=volume, span=desktops * SPAN_PER_DESKTOP
    )


def _web(name: str, size: float, volume: str, spec: MixClass) -> ApplicationWorkload:
    return catalogue.iometer_web_server(name, workers=round(size), volume=volume)


def _scan(name: str, size: float, volume: str, spec: MixClass) -> ApplicationWorkload:
    return catalogue.sequential_scan(name, workers=round(size), volume=volume)


def _backup(name: str, size: float, volume: str, spec: MixClass) -> ApplicationWorkload:
    return catalogue.backup_stream(name, streams=round(size), volume=volume)


#: Workload kind -> (generator, what ``size`` counts).
GENERATORS: dict[str, tuple[Callable[..., ApplicationWorkload], str]] = {
    "oltp": (_oltp, "SQL Server VMs running DVD Store (12 threads each)"),
    "exchange": (_exchange, "Exchange mailboxes (LoadGen Outlook_200)"),
    "boot_storm": (_boot_storm, "desktops booted (at the storm's plateau; see within_min)"),
    "vdi_steady": (_vdi_steady, "desktops at Login VSI steady state (10 IOPS each)"),
    "web": (_web, "Iometer web-server workers (4 outstanding IOs each)"),
    "scan": (_scan, "256 KiB sequential-read streams (one outstanding IO each)"),
    "backup": (_backup, "1 MiB sequential-write streams (one outstanding IO each)"),
}


class WorkloadMixError(InputFileError):
    """A workload mix that cannot be used; the message names the file (or mapping), the key and what is
    allowed."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ServiceLevelSpec(_Strict):
    """A class's service level: ``metric`` (``mean_ms`` or ``pNN_ms``) at most ``limit_ms``."""

    metric: str = Field(description="mean_ms, or pNN_ms for a percentile (p95_ms, p99_ms, p99.9_ms)")
    limit_ms: float = Field(gt=0, le=1e6, description="the limit (ms)")

    @model_validator(mode="after")
    def _metric(self) -> ServiceLevelSpec:
        percentile_of(self.metric)
        return self


class MixClass(_Strict):
    """One class of the mix: a workload kind, its size and its service level."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9 _-]*$", description="the class's name in results")
    workload: WorkloadKind = Field(description="the generator: " + ", ".join(GENERATORS))
    size: float = Field(gt=0, le=1e6, description="what the generator counts (see GENERATORS)")
    size_range: list[float] | None = Field(
        default=None,
        min_length=2,
        max_length=2,
        description="[low, high]: the sizes the class may have (a plan's uncertainty), drawn uniformly and "
        "shared by every candidate when the comparison runs with uncertainty; size must lie within it",
    )
    service_level: ServiceLevelSpec
    within_min: float = Field(
        default=5.0,
        gt=0.5,
        le=600,
        description="boot_storm: minutes the storm must finish in (the study's: about 5)",
    )
    think_ms: float = Field(
        default=100.0, ge=0, le=1e4, description="oltp: DVD Store think time per order (ms)"
    )

    @model_validator(mode="after")
    def _size_in_range(self) -> MixClass:
        if self.size_range is not None:
            low, high = self.size_range
            if not 0 < low <= self.size <= high <= 1e6:
                raise ValueError(
                    f"size_range must be [low, high] with 0 < low <= size ({self.size:g}) <= high <= 1e6, "
                    f"got {list(self.size_range)}"
                )
        return self

    @model_validator(mode="after")
    def _storm_longer_than_a_boot(self) -> MixClass:
        if self.workload == "boot_storm" and self.within_min * 60 <= BOOT_DURATION_S:
            raise ValueError(f"within_min must leave more than one {BOOT_DURATION_S:g} s boot")
        return self

    @model_serializer(mode="wrap")
    def _without_an_unset_range(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """As written: a class without ``size_range`` is dumped without the key (a mix file, a notebook's
        parameters cell and the schema's defaults agree on the mixes that predate it)."""
        data = handler(self)
        if self.size_range is None:
            data.pop("size_range", None)
        return data


class WorkloadMix(_Strict):
    """A workload mix (see the module docstring): its ``name`` and ``classes``."""

    name: str = Field(min_length=1, description="what the mix is called in charts")
    classes: list[MixClass] = Field(
        min_length=1, description="the application classes and their service levels"
    )

    @model_validator(mode="after")
    def _distinct(self) -> WorkloadMix:
        names = [c.name for c in self.classes]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"class names must be distinct; repeated: {dup}")
        return self

    @classmethod
    def from_mapping(cls, data: object, source: str = "mix") -> WorkloadMix:
        """A mix from a parsed mapping; a bad one raises :class:`WorkloadMixError` (a ``ValueError``)
        naming ``source``, the key and what is allowed."""
        if not isinstance(data, Mapping):
            raise WorkloadMixError(
                f"{source}: a workload mix is a mapping with keys {', '.join(cls.model_fields)}, "
                f"got {type(data).__name__}"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as err:
            lines = [f"  key {p.key!r}: {p.message}{p.given}" for p in problems(err)]
            raise WorkloadMixError(f"{source}: invalid workload mix\n" + "\n".join(lines)) from None

    @classmethod
    def from_yaml(cls, path: str | Path) -> WorkloadMix:
        """Read and validate a mix from a YAML file (the whole file, or its ``mix:`` key)."""
        data = read_yaml(path, WorkloadMixError, "workload mix file not found")
        if isinstance(data, dict) and "mix" in data:
            data = data["mix"]
        return cls.from_mapping(data, str(path))

    def service_levels(self, placement: Mapping[str, Sequence[str]]) -> list[LatencyObjective]:
        """Each class's service level, measured over the IO classes it is recorded as under ``placement``."""
        return [
            LatencyObjective(c.name, c.service_level.metric, c.service_level.limit_ms,
                         members=tuple(_io_classes(c.name, _volumes(placement, c))))
            for c in self.classes
        ]  # fmt: skip

    def workload(
        self, placement: Mapping[str, Sequence[str]], multiplier: float = 1.0
    ) -> ApplicationWorkload:
        """The mix at ``multiplier`` times its sizes, each class on the volume(s) ``placement`` gives its
        workload kind (see the module docstring)."""
        if not (math.isfinite(multiplier) and multiplier > 0):
            raise ValueError(f"multiplier must be > 0, got {multiplier!r}")
        parts = []
        for c in self.classes:
            volumes = _volumes(placement, c)
            generate = GENERATORS[c.workload][0]
            for volume, cls in zip(volumes, _io_classes(c.name, volumes), strict=True):
                parts.append(_scaled(generate(cls, c.size, volume, c), multiplier / len(volumes)))
        return combine(self.name, parts)

    def sources(
        self,
        volumes: Mapping[str, Component],
        placement: Mapping[str, Sequence[str]],
        multiplier: float = 1.0,
    ) -> list[Source]:
        """Kernel sources of the mix at ``multiplier`` on an architecture's ``volumes``: each stream on an
        :class:`~storagelab.components.extent.Extent` of its volume, the streams sharing a volume one after
        another (their own data, as virtual disks on a datastore), in the mix's order."""
        workload = self.workload(placement, multiplier)
        missing = sorted({s.volume for s in workload.streams} - set(volumes))
        if missing:
            raise ValueError(
                f"mix {self.name!r}: the placement names volumes {missing} the architecture does not have; "
                f"it has: {', '.join(volumes)}"
            )
        used: dict[str, int] = {}
        extents: dict[str, Component] = {}
        streams = []
        for s in workload.streams:
            offset = used.get(s.volume, 0)
            extents[s.name] = Extent(
                f"{s.volume} [{s.name}]", volumes[s.volume], offset=offset, length=s.span
            )
            used[s.volume] = offset + -(-s.span // EXTENT_ALIGN) * EXTENT_ALIGN
            streams.append(replace(s, volume=s.name))
        return replace(workload, streams=tuple(streams)).sources(extents)

    def table(self) -> list[dict[str, object]]:
        """The mix as rows: class, workload, size (and what it counts), service level."""
        return [
            {"class": c.name, "workload": c.workload, "size": c.size, "counts": GENERATORS[c.workload][1],
             "service_level": f"{c.service_level.metric} <= {c.service_level.limit_ms:g} ms"
             + (f"; storm within {c.within_min:g} min" if c.workload == "boot_storm" else "")}
            for c in self.classes
        ]  # fmt: skip


def _volumes(placement: Mapping[str, Sequence[str]], c: MixClass) -> list[str]:
    volumes = list(placement.get(c.workload, ()))
    if not volumes:
        raise ValueError(
            f"class {c.name!r}: the placement has no volume for workload {c.workload!r}; it places: "
            f"{', '.join(placement) or 'nothing'}"
        )
    return volumes


def _io_classes(name: str, volumes: Sequence[str]) -> list[str]:
    return [name] if len(volumes) == 1 else [f"{name} @ {v}" for v in volumes]


def _scaled(workload: ApplicationWorkload, factor: float) -> ApplicationWorkload:
    """``workload`` with ``factor`` times the load: closed loops' workers (rounded, at least one), open
    loops' rates."""
    streams = tuple(
        replace(s, workers=max(1, round(s.workers * factor)))
        if s.closed
        else replace(s, rate=s.rate * factor)
        for s in workload.streams
    )
    return replace(workload, streams=streams)
