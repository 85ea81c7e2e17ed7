"""Every stage of a preset that can bind, with what it is physically and where its capacity comes from.

A preset declares its stages (:class:`Stage`): the components, what they are in hardware (cores,
channels, ports, drives, processors), and the parameters that set their concurrency and their per-IO
cost. :func:`capacity_table` reads each stage's servers and per-IO time from the built components
(a 4 KiB random read, and a 256 KiB read for the transfer rate) and the origins from the parameters.

The rule the table makes checkable: a parameter fitted on a latency measured at low load is a delay,
or a per-IO cost on a stage whose concurrency comes from the hardware, never by itself a throughput
ceiling. A fitted parameter may set a single-server stage's capacity only where the document shows
that resource saturating, and the stage then names that point (``saturates``, a ``datasets/`` row id).
:func:`unmarked_fitted_ceilings` lists the stages that break the rule; a test runs it on every preset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from storagelab.kernel.component import Component
from storagelab.kernel.io import IORequest
from storagelab.kernel.service import ServiceDistribution
from storagelab.kernel.stages import Link
from storagelab.kernel.station import Station

__all__ = [
    "PROBE_BYTES",
    "STREAM_BYTES",
    "Stage",
    "capacity_origin",
    "capacity_table",
    "stations_and_links",
    "unmarked_fitted_ceilings",
]

#: The IO a stage's IOPS are stated for: a 4 KiB random read.
PROBE_BYTES = 4096
#: The IO a stage's MB/s are stated for: a 256 KiB read.
STREAM_BYTES = 256 * 1024


@dataclass(frozen=True)
class Stage:
    """One kind of stage of a preset that can bind: ``components`` (one per host, controller, drive...),
    ``hardware`` (what each is physically: cores, channels, ports, drives), ``concurrency`` (the
    parameters that set each one's servers; empty where the component's own device sets it),
    ``cost`` (the parameters that set its per-IO time or rate) and ``saturates`` (for a fitted cost on a
    single server: the ``datasets/`` row where the document shows this resource saturating).
    ``per_io_s``: the per-IO time (s) of a 4 KiB read where the component cannot say it itself (a
    station whose jobs carry their own time)."""

    name: str
    components: Sequence[Component]
    hardware: str
    cost: tuple[str, ...] = ()
    concurrency: tuple[str, ...] = ()
    saturates: str = ""
    per_io_s: float | None = None
    note: str = field(default="", compare=False)


def components_below(roots: Sequence[Component]) -> list[Component]:
    """Every component of ``roots`` and below them (each once, in walk order)."""
    seen: set[int] = set()
    out: list[Component] = []
    stack = list(roots)[::-1]
    while stack:
        c = stack.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        out.append(c)
        stack.extend(reversed(c.children()))
    return out


def stations_and_links(roots: Sequence[Component]) -> list[Component]:
    """Every :class:`Station` and :class:`Link` below ``roots`` (each once, in walk order)."""
    return [c for c in components_below(roots) if isinstance(c, Station | Link)]


def _per_io(component: Component, size: int) -> float | None:
    """Seconds one server of ``component`` spends on a ``size``-byte random read, if it can say."""
    if isinstance(component, Link):
        return component.per_io_overhead + size / component.bandwidth
    if not isinstance(component, Station):
        return None
    source = component.service_source
    if isinstance(source, ServiceDistribution):
        return source.mean
    if hasattr(source, "mean_service_time"):
        return float(source.mean_service_time(True, size))
    try:  # a callable of the IO (a processor's per-IO time plus transfer)
        value = source(IORequest(is_read=True, size=size), np.random.default_rng(0))
    except (TypeError, AttributeError):
        return None
    return float(value) if isinstance(value, int | float) and value > 0 else None


def capacity_table(topology: object) -> pl.DataFrame:
    """One row per declared stage of ``topology`` (a :class:`~storagelab.architectures.topology.Topology`):
    stage, count, hardware, servers (per component), per-IO time of a 4 KiB read (µs), IOPS per
    component and in all, MB/s per component at 256 KiB, the origins and sources of the parameters that
    set concurrency and cost, and ``saturates``."""
    declared = topology.params.declared()
    rows = []
    for s in topology.stages:
        first = s.components[0]
        servers = getattr(first, "servers", 1)
        t4 = s.per_io_s if s.per_io_s is not None else _per_io(first, PROBE_BYTES)
        t256 = _per_io(first, STREAM_BYTES) if s.per_io_s is None else None
        if isinstance(first, Link):
            mb_s = first.bandwidth / 1e6
        elif t256:
            mb_s = servers * STREAM_BYTES / t256 / 1e6
        else:
            mb_s = None
        iops = servers / t4 if t4 else None
        names = [*s.concurrency, *s.cost]
        rows.append(
            {
                "architecture": topology.name,
                "stage": s.name,
                "count": len(s.components),
                "hardware": s.hardware,
                "servers": int(servers),
                "per_io_us": None if t4 is None else t4 * 1e6,
                "iops_each": iops,
                "iops_all": None if iops is None else iops * len(s.components),
                "mb_s_each": mb_s,
                "concurrency_from": "; ".join(f"{n} ({declared[n].origin})" for n in s.concurrency)
                or "the device",
                "cost_from": "; ".join(f"{n} ({declared[n].origin})" for n in s.cost) or "the device",
                "origins": ", ".join(sorted({declared[n].origin for n in names})) or "device-physics",
                "sources": " | ".join(f"{n}: {declared[n].source}" for n in names),
                "saturates": s.saturates,
            }
        )
    schema = {
        "architecture": pl.String, "stage": pl.String, "count": pl.Int64, "hardware": pl.String,
        "servers": pl.Int64, "per_io_us": pl.Float64, "iops_each": pl.Float64, "iops_all": pl.Float64,
        "mb_s_each": pl.Float64, "concurrency_from": pl.String, "cost_from": pl.String, "origins": pl.String,
        "sources": pl.String, "saturates": pl.String,
    }  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


def capacity_origin(topology: object, component: str) -> str:
    """Where the capacity of the declared stage holding ``component`` (a component's name, e.g. the
    bottleneck a simulation names) comes from: ``"hardware (<origins>)"`` when no parameter that sets the
    stage's concurrency or per-IO cost is a fit (the origins of those that do; a stage set by its device
    alone is ``device-physics``, as in :func:`capacity_table`); ``"fit (saturates: <row>)"`` for a fit tied
    to the ``datasets/`` row where the document shows the resource saturating; ``"fit (<parameters>)"``
    for a fit on a stage whose concurrency the hardware sets; ``"fit (the whole model)"`` for a component of
    a model whose every parameter is a fit (a measured system's); ``""`` when no declared stage holds it."""
    declared = topology.params.declared()
    own = [s for s in topology.stages if any(c.name == component for c in s.components)]
    inside = [s for s in topology.stages if any(c.name == component for c in components_below(s.components))]
    for s in own or inside:  # a stage's own component first, then one inside a stage's component
        names = (*s.concurrency, *s.cost)
        fitted = [n for n in names if declared[n].origin == "fit"]
        if s.saturates and fitted:
            return f"fit (saturates: {s.saturates})"
        if fitted:
            return f"fit ({', '.join(fitted)})"
        return f"hardware ({', '.join(sorted({declared[n].origin for n in names}) or ['device-physics'])})"
    return "fit (the whole model)" if declared and {p.origin for p in declared.values()} == {"fit"} else ""


def unmarked_fitted_ceilings(topology: object) -> list[str]:
    """The stages of ``topology`` that break the rule: a ``fit``-origin parameter sets the per-IO cost of
    a single-server stage (or a fit sets a stage's concurrency) and no ``saturates`` row names where the
    document shows the resource saturating. Also every station or link no declared stage covers."""
    declared = topology.params.declared()
    problems = []
    covered = {id(c) for s in topology.stages for c in s.components}
    for c in stations_and_links(list(topology.volumes.values())):
        if id(c) not in covered:
            problems.append(f"{c.name!r} ({type(c).__name__}) is in no declared stage")
    for s in topology.stages:
        fitted = [n for n in s.cost if declared[n].origin == "fit"]
        single = min(getattr(c, "servers", 1) for c in s.components) == 1
        fitted_servers = [n for n in s.concurrency if declared[n].origin == "fit"]
        if fitted_servers and not s.saturates:
            problems.append(f"stage {s.name!r}: its concurrency ({', '.join(fitted_servers)}) is a fit")
        if fitted and single and not s.saturates:
            problems.append(
                f"stage {s.name!r}: fitted {', '.join(fitted)} sets a single server's capacity and no "
                "'saturates' row shows it saturating"
            )
    return problems
