"""How a transform adds its own parameters to a topology's: one way, used by every transform (a host
cache in front of a preset, two sites of it) so that their parameters and the preset's meet in one
:class:`~storagelab.architectures.parameters.ParamSet`."""

from __future__ import annotations

from collections.abc import Mapping

from storagelab.architectures.parameters import ParamSet
from storagelab.architectures.topology import Topology
from storagelab.provenance import Param


def extend(
    topology: Topology, name: str, own: Mapping[str, Param], overrides: Mapping[str, object]
) -> ParamSet:
    """The parameters of ``name``, a transform of ``topology``: the transform's ``own`` parameters beside
    the topology's (each counted as read: the preset read them when it built the topology), with
    ``overrides`` of either applied. Raises if a name of ``own`` is already the topology's."""
    clash = set(own) & set(topology.params)
    if clash:
        raise ValueError(f"{name}: the preset already has parameters named {', '.join(sorted(clash))}")
    p = ParamSet(name, {**own, **topology.params.declared()}, overrides, family=topology.params.family)
    for k in topology.params:  # read by the preset when it built the topology
        p[k]
    return p


__all__ = ["extend"]
