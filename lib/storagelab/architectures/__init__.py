"""Architecture presets: every source study's system, by name. Each preset lives in its study's home
(:mod:`storagelab.studies`) and returns a :class:`~storagelab.topology.Topology` (components behind named
volumes, and origin-tagged parameters); any parameter can be overridden by name:

>>> from storagelab.architectures import PRESETS, build
>>> build("Virtual SAN 5.5, all-flash NVMe", hosts=8).param_table()
>>> from storagelab.studies.ds5020.preset import ds5020
>>> ds5020(drive="10K SAS")

A topology belongs to one run: build the preset again for the next.
"""

from __future__ import annotations

from collections.abc import Callable

from storagelab.studies.ds5020.preset import ds5020, ds5020_characterization
from storagelab.studies.ilio.preset import equallogic
from storagelab.studies.nexgen.preset import nexgen
from storagelab.studies.vplex.preset import BRICKS, vplex_geo, vplex_local, vplex_metro, xtremio
from storagelab.studies.vsan.preset import CONFIGURATIONS, vsan
from storagelab.topology import Topology

#: Every preset by name, each a function of parameter overrides returning a fresh :class:`Topology`.
PRESETS: dict[str, Callable[..., Topology]] = {
    "DS5020 Express": ds5020,
    "DS3950 Express (DS5020, 4 host paths)": lambda **o: ds5020(host_paths=4, **o),
    "DS5020 characterization layout": ds5020_characterization,
    **{f"Virtual SAN 5.5, {c}": (lambda c=c, **o: vsan(c, **o)) for c in CONFIGURATIONS},
    "NexGen N5-150": nexgen,
    "EqualLogic PS6100E": equallogic,
    "EqualLogic PS6100E behind Atlantis ILIO": lambda **o: equallogic(ilio=True, **o),
    **{f"XtremIO, {b} X-Brick(s)": (lambda b=b, **o: xtremio(b, **o)) for b in BRICKS},
    "VPLEX Local + XtremIO": vplex_local,
    "VPLEX Metro + XtremIO (two sites)": vplex_metro,
    "VPLEX Geo + XtremIO (two sites)": vplex_geo,
}

#: Which study's home each preset lives in (``datasets/`` ids).
PRESET_STUDY: dict[str, str] = {
    name: ("ds5020" if name.startswith(("DS5020", "DS3950")) else "vsan" if name.startswith("Virtual SAN")
           else "nexgen" if name.startswith("NexGen") else "ilio" if name.startswith("EqualLogic") else "vplex")
    for name in PRESETS
}  # fmt: skip


def build(name: str, **overrides: object) -> Topology:
    """A fresh topology of preset ``name`` with parameter ``overrides`` (each validated; tagged ``user``)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; presets: {', '.join(PRESETS)}")
    return PRESETS[name](**overrides)


__all__ = ["PRESETS", "PRESET_STUDY", "Topology", "build"]
