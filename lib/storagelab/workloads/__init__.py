"""Synthetic workloads in Iometer's terms, for a driver component to turn into timed IO requests.

- :mod:`~storagelab.workloads.access_spec` — access specifications (size mix, read %, random %,
  alignment, bursts, queue depth), their YAML loader, a vectorized sampler of (op, size, address), and
  the published specs used by the studies (:data:`IOMETER_WEB_SERVER`, :data:`IOMETER_4K_70_30_RANDOM`);
- :mod:`~storagelab.workloads.locality` — where random IOs land in a volume (uniform, Zipf, hot spot);
- :mod:`~storagelab.workloads.phases` — the offered rate over time (ramps, steady states, storms);
- :mod:`~storagelab.workloads.application` — application workloads: streams of IOs against named volumes,
  with the numbers that define them (:class:`~storagelab.workloads.application.ApplicationWorkload`);
- :mod:`~storagelab.workloads.catalogue` — the generators of the applications the studies ran (Exchange
  LoadGen, DVD Store, Iometer, boot storms, Login VSI, backup).
"""

from storagelab.workloads.access_spec import (
    IOMETER_4K_70_30_RANDOM,
    IOMETER_WEB_SERVER,
    AccessSampler,
    AccessSpec,
    AccessSpecError,
    SizeShare,
    load_access_specs,
    parse_size,
)
from storagelab.workloads.locality import HotSpot, Locality, Uniform, Zipf
from storagelab.workloads.phases import Phase, PhaseSchedule, ramp, steady

__all__ = [
    "IOMETER_4K_70_30_RANDOM",
    "IOMETER_WEB_SERVER",
    "AccessSampler",
    "AccessSpec",
    "AccessSpecError",
    "HotSpot",
    "Locality",
    "Phase",
    "PhaseSchedule",
    "SizeShare",
    "Uniform",
    "Zipf",
    "load_access_specs",
    "parse_size",
    "ramp",
    "steady",
]
