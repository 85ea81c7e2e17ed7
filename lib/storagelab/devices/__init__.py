"""Device service-time models: hard disks, flash SSDs (SATA/SAS and NVMe) and DRAM.

A device model answers one question for a station: how long (seconds) does this IO occupy one of my
``parallelism`` servers? ``service_time(is_read, size, address, rng)`` is called when service starts;
``mean_service_time(is_read, size)`` is the analytic mean, for validation and for sizing.

Every number behind a model is a :class:`~storagelab.provenance.Param`: a value, its unit (a symbol of
:mod:`storagelab.published.units`), where it comes from (``origin``: one of the project's source studies, device
physics, a datasheet, or a fit) and the exact place (``source``). ``model.params`` lists them, so a
notebook can print the provenance of every device it simulates.

- :class:`HDD`: seek (distance-dependent, fitted to the datasheet's single-track / average / full-stroke
  seek times in the form of Ruemmler & Wilkes 1994), rotational latency uniform on one revolution,
  media transfer, command overhead; keeps the head position.
- :class:`SSD` and :class:`NVMe`: a base latency plus size / bandwidth, read/write asymmetric, served
  by ``parallelism`` internal units; optional multiplicative lognormal jitter.
- :class:`DRAM`: a fixed latency plus size / bandwidth.

Presets (``HDD.preset("15K FC/SAS")``, ``SSD.preset("SATA SSD")``, ... or :func:`preset`) build a fresh
instance each call: a disk carries state (its head), so every member of an array needs its own.

Modules: :mod:`~storagelab.devices.hdd` (seek specification, seek curve and its fit, the disk),
:mod:`~storagelab.devices.flash` (SSD, NVMe), :mod:`~storagelab.devices.dram`,
:mod:`~storagelab.devices.scaled` (:class:`ScaledDevice`), :mod:`~storagelab.devices.catalogue` (the
named presets, as tables of Params) and :mod:`~storagelab.devices.model` (what the models share).
"""

import sys

from storagelab.kernel import native

native.activate(sys.modules[__name__])  # the compiled flash model, if built and up to date

from storagelab.devices.catalogue import preset, preset_names
from storagelab.devices.dram import DRAM
from storagelab.devices.flash import SSD, NVMe
from storagelab.devices.hdd import HDD, SeekCurve, SeekSpec
from storagelab.devices.model import DATASHEET_BLOCK, CapacityExceeded
from storagelab.devices.scaled import ScaledDevice

__all__ = [
    "DATASHEET_BLOCK",
    "DRAM",
    "HDD",
    "SSD",
    "CapacityExceeded",
    "NVMe",
    "ScaledDevice",
    "SeekCurve",
    "SeekSpec",
    "preset",
    "preset_names",
]
