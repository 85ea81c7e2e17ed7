"""storagelab: storage architectures under virtualized mixed workloads, simulated and checked against
published results.

Public modules a notebook uses:

- :mod:`storagelab.datasets` — published results of the five source studies, with provenance;
- :mod:`storagelab.curves` — curves fitted to them, with confidence intervals and residuals;
- :mod:`storagelab.charts` — Altair charts and the notebook display set-up;
- :mod:`storagelab.units` — the units vocabulary and conversion to SI.
"""

from importlib.metadata import PackageNotFoundError, version

from storagelab import charts, curves, datasets, units

try:
    __version__ = version("storagelab")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"

__all__ = ["__version__", "charts", "curves", "datasets", "units"]
