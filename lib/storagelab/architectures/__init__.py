"""Architectures: what a preset returns and the transforms every preset may apply to it.

- :class:`~storagelab.architectures.topology.Topology`: the components behind each named volume, and the
  origin-tagged parameters they were built from;
- :mod:`~storagelab.architectures.host_cache`: a host-side flash (or RAM) cache in front of a topology's
  volumes;
- :mod:`~storagelab.architectures.two_sites`: a topology's volumes replicated to a second site (synchronous
  metro, asynchronous geo).

The presets themselves (one per studied system) live in their study's home, and the registry of every
preset by name is :data:`storagelab.studies.PRESETS`.
"""

from __future__ import annotations

from storagelab.architectures.topology import Topology

__all__ = ["Topology"]
