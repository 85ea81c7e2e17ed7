"""storagelab: storage architectures under virtualized mixed workloads, simulated and checked against
published results.

The package is built in rooms; each imports only the rooms below it (``lint-imports`` checks it):

- bottom: :mod:`~storagelab.published` (the studies' numbers with provenance, units, fitted curves; knows
  nothing of simulation), :mod:`~storagelab.kernel` (IOs, stations, disciplines, links, fork/join, sources,
  metrics, :func:`simulate`), :mod:`~storagelab.theory` (closed forms), :mod:`~storagelab.input_files`;
- :mod:`~storagelab.provenance` (a parameter with its origin), :mod:`~storagelab.devices` and
  :mod:`~storagelab.workloads`, :mod:`~storagelab.components` and :mod:`~storagelab.qos`;
- :mod:`~storagelab.charts`, :mod:`~storagelab.calibration` (the engine: claims and their scoring),
  :mod:`~storagelab.architectures` (topology, parameter sets, host-cache and two-site transforms),
  :mod:`~storagelab.analysis` (headroom, four corners, workload mixes, comparison, QoS promises);
- :mod:`~storagelab.studies` (one home per source study, the registry of presets, their calibration),
  :mod:`~storagelab.pipeline` (params, notebooks, report, sweeps), :mod:`~storagelab.verify` (validation,
  benchmark), :mod:`~storagelab.cli`.
"""

import importlib
from importlib.metadata import PackageNotFoundError, version

from storagelab import devices, kernel, theory, workloads
from storagelab.kernel.run_limits import RunLimitReached, run_limits
from storagelab.kernel.simulation import simulate
from storagelab.published import datasets, units

#: Submodules loaded on first use: they pull in Altair, whose import takes seconds, and a simulation or a
#: calibration worker needs neither.
_LAZY = {"charts": "storagelab.charts", "curves": "storagelab.published.curves"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return importlib.import_module(_LAZY[name])
    raise AttributeError(f"module 'storagelab' has no attribute {name!r}")


try:
    __version__ = version("storagelab")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"

__all__ = [
    "RunLimitReached",
    "__version__",
    "charts",
    "curves",
    "datasets",
    "devices",
    "kernel",
    "run_limits",
    "simulate",
    "theory",
    "units",
    "workloads",
]  # fmt: skip
