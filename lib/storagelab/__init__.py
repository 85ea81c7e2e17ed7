"""storagelab: storage architectures under virtualized mixed workloads, simulated and checked against
published results.

Published wing: :mod:`storagelab.published.datasets` (the five studies' numbers with provenance),
:mod:`storagelab.published.curves` (fits with confidence intervals and residuals), :mod:`storagelab.published.units`.

Simulated wing: :mod:`storagelab.kernel` (IOs, stations, disciplines, links, fork/join, sources, metrics),
:mod:`storagelab.devices`, :mod:`storagelab.components.raid`, :mod:`storagelab.components`,
:mod:`storagelab.workloads` (access specs and the studies' applications), :mod:`storagelab.provenance`
(parameters and their origins), :mod:`storagelab.studies` (one home per study: its preset, workloads,
claims and notebook helpers), :mod:`storagelab.architectures` (every preset by name, with overrides),
:func:`storagelab.simulate`, and :mod:`storagelab.theory` / :mod:`storagelab.verify.validation` for checking the
kernel.

Where the two meet: :mod:`storagelab.calibration` (each preset against the published claims it reproduces:
fitted, predicted or derived, informative or insensitive).

Pipeline: :mod:`storagelab.charts` (Altair charts and notebook display) and :mod:`storagelab.pipeline`.
"""

import importlib
from importlib.metadata import PackageNotFoundError, version

from storagelab import devices, kernel, theory, workloads
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
    "__version__", "charts", "curves", "datasets", "devices", "kernel", "simulate", "theory", "units",
    "workloads",
]  # fmt: skip
