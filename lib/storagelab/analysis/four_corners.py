"""The four corners of a storage system: 4 KiB random read, 4 KiB random write, 1 MiB sequential read and
1 MiB sequential write, each at a queue depth high enough to saturate it, with the resource that saturates
first.

Storage engineers judge an array first by these four numbers. Each corner here runs one closed-loop
stream per volume (``outstanding`` IOs in flight each) on a fresh topology and reports what it achieved
(IOPS, MB/s, mean and p99 latency) beside what its resources could deliver: for every component with a
utilisation (drives, SSDs, links, controllers, processors), the **utilisation-law bound** ``X / U``, the
throughput at which that component alone would be 100 % busy at this corner's mix of work (Denning and
Buzen's operational laws). A device's service times come from its datasheet, so a device's bound is its
datasheet capability for the IOs this corner sends it (after RAID and replication); the lowest bound is
the resource that saturates first. A fitted parameter (a per-IO processing time) that sets the lowest
bound where the devices should is a finding to explain, not a result.

>>> from storagelab.analysis.four_corners import four_corners
>>> from storagelab.studies.ds5020.preset import ds5020
>>> four_corners(ds5020, span=557 * 10**9)            # a Polars frame, one row per corner
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from storagelab.architectures.topology import Topology
from storagelab.workloads.access_spec import AccessSpec
from storagelab.workloads.application import ApplicationWorkload, Stream


@dataclass(frozen=True)
class Corner:
    """One corner: ``size`` bytes per IO, reads or writes, random or sequential."""

    name: str
    size: int
    is_read: bool
    random: bool

    def spec(self) -> AccessSpec:
        return AccessSpec(
            name=self.name, sizes=[{"size": self.size, "pct": 100}], read_pct=100 if self.is_read else 0,
            random_pct=100 if self.random else 0, align=min(self.size, 4096),
        )  # fmt: skip


CORNERS = (
    Corner("4 KiB random read", 4096, True, True),
    Corner("4 KiB random write", 4096, False, True),
    Corner("1 MiB sequential read", 1 << 20, True, False),
    Corner("1 MiB sequential write", 1 << 20, False, False),
)

#: The columns of :func:`four_corners`.
COLUMNS = (
    "corner", "iops", "mb_per_s", "mean_ms", "p99_ms", "bottleneck", "bottleneck_utilisation",
    "bound_iops", "next_resources",
)  # fmt: skip


def run_times(quick: bool) -> dict[str, float]:
    """Simulated seconds per corner: 1.5 s with 0.3 s of warm-up when ``quick``, else 10 s with 2 s."""
    return {"duration": 1.5, "warmup": 0.3} if quick else {"duration": 10.0, "warmup": 2.0}


def corner_workload(
    corner: Corner, volumes: Sequence[str], span: int, outstanding: int
) -> ApplicationWorkload:
    """The corner as a workload: per volume, ``outstanding`` random workers with one IO each, or one
    sequential stream keeping ``outstanding`` IOs in flight (as Iometer's sequential tests do)."""
    streams = tuple(
        Stream(
            f"{corner.name} {v}",
            v,
            corner.spec(),
            span,
            workers=outstanding if corner.random else 1,
            outstanding=1 if corner.random else outstanding,
        )
        for v in volumes
    )
    return ApplicationWorkload(corner.name, streams)


def four_corners(
    build: Callable[[], Topology],
    *,
    span: int,
    volumes: Sequence[str] | None = None,
    outstanding: int = 32,
    duration: float = 2.0,
    warmup: float = 0.5,
    seed: int = 1,
    corners: Sequence[Corner] = CORNERS,
) -> pl.DataFrame:
    """Run each corner on a fresh ``build()`` topology: every volume (or those in ``volumes``) gets a
    stream over its first ``span`` bytes with ``outstanding`` IOs in flight. One row per corner:
    achieved IOPS, MB/s, mean and p99 latency (ms, over every IO of the corner), the component with the
    highest utilisation (``bottleneck``) and that utilisation, its utilisation-law bound on IOPS
    (``iops / utilisation``), and the next two components with their utilisation."""
    if not isinstance(outstanding, int) or outstanding < 1:
        raise ValueError(f"outstanding must be an integer >= 1, got {outstanding!r}")
    if not isinstance(span, int) or span < max(c.size for c in corners):
        raise ValueError(f"span must be a whole number of bytes >= the largest IO, got {span!r}")
    rows = []
    for corner in corners:
        topo = build()
        vols = list(volumes) if volumes is not None else list(topo.volumes)
        res = topo.run(corner_workload(corner, vols, span, outstanding), duration=duration, warmup=warmup,
                       seed=seed)  # fmt: skip
        s = res.summary()
        count = float(s["count"].sum())
        iops = float(s["iops"].sum())
        p99 = 1e3 * res.recorder.histogram().percentile(99)  # over every IO of the corner (merged classes)
        top = res.utilisations().head(3).rows()
        name, u = top[0] if top else ("", float("nan"))
        rows.append(
            {
                "corner": corner.name, "iops": iops, "mb_per_s": float(s["mb_per_s"].sum()),
                "mean_ms": float((s["mean_ms"] * s["count"]).sum() / count), "p99_ms": p99,
                "bottleneck": name, "bottleneck_utilisation": float(u),
                "bound_iops": iops / u if u and u > 0 else float("nan"),
                "next_resources": ", ".join(f"{n} {100 * v:.0f} %" for n, v in top[1:]),
            }
        )  # fmt: skip
    return pl.DataFrame(rows).select(COLUMNS)


__all__ = ["COLUMNS", "CORNERS", "Corner", "corner_workload", "four_corners", "run_times"]
