"""One home per source study, named by its ``datasets/`` id: the study's architecture preset(s), its
workloads, its calibration claims and the helpers its notebook uses.

============  ==============================================================  ==========================
study         system                                                          notebook
============  ==============================================================  ==========================
``ds5020``    IBM DS5020 Express (DS3950 as four host paths)                  ``12-ds5020-mixed-tiles``
``vsan``      VMware Virtual SAN 5.5, three configurations                    ``11-vsan-scaling``
``nexgen``    NexGen N5-150 hybrid flash array (QoS off)                      ``13-nexgen-bootstorm``
``ilio``      Dell EqualLogic PS6100E, optionally behind Atlantis ILIO        ``14-ilio-vdi``
``vplex``     EMC XtremIO 1, 2 or 4 X-Bricks; VPLEX Local, Metro, Geo         ``15-vplex-replication``
============  ==============================================================  ==========================

Each study package has ``preset`` (the architecture: a function per preset that takes overrides by
parameter name), ``claims`` (``scenarios()`` and ``fitted_on()``), and where it has them ``workloads``
and ``analysis`` (notebook helpers).
"""

from __future__ import annotations

from types import ModuleType

from storagelab.studies.ds5020 import claims as ds5020
from storagelab.studies.ilio import claims as ilio
from storagelab.studies.nexgen import claims as nexgen
from storagelab.studies.vplex import claims as vplex
from storagelab.studies.vsan import claims as vsan

#: Study id -> its claims module (``scenarios()``, ``fitted_on()``), in the order tables list them.
STUDIES: dict[str, ModuleType] = {"ds5020": ds5020, "vsan": vsan, "nexgen": nexgen, "ilio": ilio, "vplex": vplex}

__all__ = ["STUDIES"]
