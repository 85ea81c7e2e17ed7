"""The simulation kernel: IOs, components, stations and disciplines, delays and links, fork/join,
sources, random streams and metrics — on SimPy.

The kernel never imports a device, a RAID layout, a cache, a preset or a workload; those are built on it
(:mod:`storagelab.devices`, :mod:`storagelab.components.raid`, :mod:`storagelab.components`,
:mod:`storagelab.workloads`).
"""

import sys

from storagelab.kernel import native

native.activate(sys.modules[__name__])  # the compiled per-IO modules, if built and up to date

from storagelab.kernel.component import Component, RunContext, completion_at, completion_in
from storagelab.kernel.composition import Mirror, Path, join_all, join_first
from storagelab.kernel.disciplines import (
    FIFO,
    Discipline,
    Elevator,
    PriorityByClass,
    ShortestAccessFirst,
    ShortestSeekFirst,
)
from storagelab.kernel.event_loop import Environment
from storagelab.kernel.histogram import LatencyHistogram, ServiceLevelCurve
from storagelab.kernel.io import READ, WRITE, IORequest
from storagelab.kernel.metrics import LatencyRecorder
from storagelab.kernel.randomness import RandomStreams
from storagelab.kernel.run_limits import RunLimitReached, run_limits
from storagelab.kernel.service import (
    CarriedTime,
    Deterministic,
    Exponential,
    Gamma,
    Lognormal,
    ServiceDistribution,
)
from storagelab.kernel.sources import ClosedSource, FixedSampler, OpenSource
from storagelab.kernel.stages import Delay, Link, ResponseTimeProbe
from storagelab.kernel.station import Station

__all__ = [
    "FIFO",
    "READ",
    "WRITE",
    "CarriedTime",
    "ClosedSource",
    "Component",
    "Delay",
    "Deterministic",
    "Discipline",
    "Elevator",
    "Environment",
    "Exponential",
    "FixedSampler",
    "Gamma",
    "IORequest",
    "LatencyHistogram",
    "LatencyRecorder",
    "Link",
    "Lognormal",
    "Mirror",
    "OpenSource",
    "Path",
    "PriorityByClass",
    "RandomStreams",
    "ResponseTimeProbe",
    "RunContext",
    "RunLimitReached",
    "ServiceDistribution",
    "ServiceLevelCurve",
    "ShortestAccessFirst",
    "ShortestSeekFirst",
    "Station",
    "completion_at",
    "completion_in",
    "join_all",
    "join_first",
    "run_limits",
]
