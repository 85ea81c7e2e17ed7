"""One home per source study, named by its ``datasets/`` id: the study's architecture preset(s), its
workloads, its calibration claims and the helpers its notebook uses; and the registry of them all.

>>> from storagelab import studies
>>> studies.build("Virtual SAN 5.5, all-flash NVMe", hosts=8).param_table()
>>> result = studies.calibrate(study="ds5020", quick=True)

Each study package has ``preset`` (the architecture: a function per preset that takes overrides by
parameter name, and ``PRESETS``, its presets by name), ``claims`` (``scenarios()`` and ``fitted_on()``),
and where it has them ``workloads`` and ``analysis`` (notebook helpers). :mod:`~storagelab.studies.registry`
gathers every study's presets and claims; :mod:`~storagelab.studies.calibration` calibrates them.
"""

from __future__ import annotations

from storagelab.studies import recount
from storagelab.studies.calibration import calibrate, fitted_points, scenarios, study_ids
from storagelab.studies.registry import PLACEMENTS, PRESET_STUDY, PRESETS, STUDIES, build, candidate

__all__ = [
    "PLACEMENTS", "PRESETS", "PRESET_STUDY", "STUDIES", "build", "calibrate", "candidate", "fitted_points", "recount",
    "scenarios", "study_ids",
]  # fmt: skip
