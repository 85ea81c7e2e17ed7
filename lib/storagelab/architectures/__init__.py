"""Architecture presets: functions that build a :class:`Topology` (components behind named volumes, and
origin-tagged parameters) of each source study's system.

Each module holds one preset function of its own name (``architectures.vsan.vsan("all-flash NVMe")``):

- :func:`~storagelab.architectures.ds5020.ds5020` — IBM DS5020 Express (DS3950 as four host paths);
- :func:`~storagelab.architectures.vsan.vsan` — VMware Virtual SAN 5.5, three configurations;
- :func:`~storagelab.architectures.nexgen.nexgen` — NexGen N5-150 hybrid flash array (QoS off);
- :func:`~storagelab.architectures.equallogic.equallogic` — Dell EqualLogic PS6100E, optionally behind
  Atlantis ILIO;
- :func:`~storagelab.architectures.xtremio.xtremio` — EMC XtremIO, 1, 2 or 4 X-Bricks.

A topology belongs to one run: call the preset again for the next.
"""

from __future__ import annotations

from collections.abc import Callable

from storagelab.architectures import ds5020, equallogic, nexgen, vsan, xtremio
from storagelab.architectures.topology import Topology

#: Every preset by name, each a zero-argument function returning a fresh :class:`Topology`.
PRESETS: dict[str, Callable[[], Topology]] = {
    "DS5020 Express": ds5020.ds5020,
    "DS3950 Express (DS5020, 4 host paths)": lambda: ds5020.ds5020(host_paths=4),
    "DS5020 characterization layout": ds5020.ds5020_characterization,
    **{f"Virtual SAN 5.5, {c}": (lambda c=c: vsan.vsan(c)) for c in vsan.CONFIGURATIONS},
    "NexGen N5-150": nexgen.nexgen,
    "EqualLogic PS6100E": equallogic.equallogic,
    "EqualLogic PS6100E behind Atlantis ILIO": lambda: equallogic.equallogic(ilio=True),
    **{f"XtremIO, {b} X-Brick(s)": (lambda b=b: xtremio.xtremio(b)) for b in xtremio.BRICKS},
}

__all__ = ["PRESETS", "Topology", "ds5020", "equallogic", "nexgen", "vsan", "xtremio"]
