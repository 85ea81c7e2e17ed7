"""Every studied system by name: each study's presets (its ``preset.PRESETS``), the study each belongs to,
and each study's calibration claims.

============  ==============================================================  ==========================
study         system                                                          notebook
============  ==============================================================  ==========================
``ds5020``    IBM DS5020 Express (DS3950 as four host paths)                  ``12-ds5020-mixed-tiles``
``vsan``      VMware Virtual SAN 5.5, three configurations                    ``11-vsan-scaling``
``nexgen``    NexGen N5-150 hybrid flash array (QoS off)                      ``13-nexgen-bootstorm``
``ilio``      Dell EqualLogic PS6100E, optionally behind Atlantis ILIO        ``14-ilio-vdi``
``vplex``     EMC XtremIO 1, 2 or 4 X-Bricks; VPLEX Local, Metro, Geo         ``15-vplex-replication``
============  ==============================================================  ==========================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from storagelab.analysis.comparison import Candidate
from storagelab.architectures.topology import Topology
from storagelab.studies.ds5020 import claims as ds5020
from storagelab.studies.ds5020 import preset as ds5020_preset
from storagelab.studies.ilio import claims as ilio
from storagelab.studies.ilio import preset as ilio_preset
from storagelab.studies.nexgen import claims as nexgen
from storagelab.studies.nexgen import preset as nexgen_preset
from storagelab.studies.vplex import claims as vplex
from storagelab.studies.vplex import preset as vplex_preset
from storagelab.studies.vsan import claims as vsan
from storagelab.studies.vsan import preset as vsan_preset

#: Study id -> its claims module (``scenarios()``, ``fitted_on()``), in the order tables list them.
STUDIES: dict[str, ModuleType] = {
    "ds5020": ds5020,
    "vsan": vsan,
    "nexgen": nexgen,
    "ilio": ilio,
    "vplex": vplex,
}

_PRESET_MODULES: dict[str, ModuleType] = {
    "ds5020": ds5020_preset, "vsan": vsan_preset, "nexgen": nexgen_preset, "ilio": ilio_preset, "vplex": vplex_preset,
}  # fmt: skip

#: Every preset by name, each a function of parameter overrides returning a fresh :class:`Topology`, in
#: the order of :data:`STUDIES`.
PRESETS: dict[str, Callable[..., Topology]] = {
    name: build for module in _PRESET_MODULES.values() for name, build in module.PRESETS.items()
}

#: Which study's home each preset lives in (``datasets/`` ids).
PRESET_STUDY: dict[str, str] = {
    name: study for study, module in _PRESET_MODULES.items() for name in module.PRESETS
}

#: Where each workload kind of a comparison goes on a preset with several volumes (workload kind ->
#: volumes), where its study says so.
PLACEMENTS: dict[str, dict[str, list[str]]] = {
    name: placement for module in _PRESET_MODULES.values() for name, placement in getattr(module, "PLACEMENTS", {}).items()
}  # fmt: skip


def build(name: str, **overrides: object) -> Topology:
    """A fresh topology of preset ``name`` with parameter ``overrides`` (each validated; tagged ``user``).
    A topology belongs to one run: build the preset again for the next."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; presets: {', '.join(PRESETS)}")
    return PRESETS[name](**overrides)


def candidate(
    label: str,
    preset: str,
    *,
    overrides: Mapping[str, Any] | None = None,
    placement: Mapping[str, Sequence[str]] | None = None,
) -> Candidate:
    """Preset ``preset`` as a :class:`~storagelab.analysis.comparison.Candidate` named ``label``, with
    ``overrides`` and a ``placement`` (default: its study's, :data:`PLACEMENTS`, if it gives one)."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
    return Candidate(
        label, preset=preset, overrides=dict(overrides or {}), build=PRESETS[preset],
        placement=placement if placement is not None else PLACEMENTS.get(preset),
    )  # fmt: skip
