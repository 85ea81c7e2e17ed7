"""Put any preset on two sites joined by a WAN: a synchronous Metro pair or an asynchronous replica.

>>> from storagelab.architectures.two_sites import metro, async_pair
>>> from storagelab.studies.ds5020.preset import ds5020
>>> topo = metro(lambda: ds5020(), wan_rtt="2 ms", wan_bandwidth="1 GB/s")
>>> topo.volumes          # each volume of the preset at site A, and "<volume> @ B" for hosts at site B
>>> result = topo.run(workload, duration=10, warmup=2, seed=1)
>>> topo.parts["oltp"].rpo(); topo.parts["oltp"].failures()

The preset is built twice (one array per site; every component's name starts ``A: `` or ``B: ``) and
each of its volumes becomes a :class:`~storagelab.components.replication.SyncMirror` (or a
:class:`~storagelab.components.replication.LogReplica` or
:class:`~storagelab.components.replication.DeltaSetReplica`) of the two copies, all sharing one
:class:`~storagelab.components.replication.WanLink`. The replication's own parameters (round trip,
bandwidth, detection time, buffer) are origin-tagged like a preset's and taken as overrides by name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from storagelab.architectures.compose import extend
from storagelab.architectures.topology import Topology
from storagelab.components.replication import (
    AsyncReplica,
    DeltaSetReplica,
    Failure,
    LogReplica,
    Site,
    SyncMirror,
    WanLink,
)
from storagelab.kernel.component import Component
from storagelab.provenance import Param

__all__ = ["async_pair", "metro", "replication_params"]


def replication_params(kind: str = "metro") -> dict[str, Param]:
    """The parameters of a site pair: ``metro`` (synchronous) or ``async``."""
    out = {
        "wan_rtt": Param(1.0, "ms", "assumption", "round trip of a metro distance (about 100 km of fibre at "
                         "5 us/km each way); set it for your sites", low=0.0),
        "wan_bandwidth": Param(1250, "MB/s", "assumption", "one 10 Gb/s inter-site link", capacity="rate"),
        "detection_time": Param(5, "s", "assumption", "time before the surviving site continues alone after "
                                "losing its peer (a typical detach delay)", low=0.0),
    }  # fmt: skip
    if kind == "metro":
        return out
    if kind != "async":
        raise ValueError(f"replication kind must be 'metro' or 'async', got {kind!r}")
    return out | {
        "buffer": Param(1, "GB", "assumption", "what the replication log or delta sets may hold before host "
                        "writes are throttled"),
        "cycle": Param(0, "s", "assumption", "0: a write-order log (DRBD); > 0: delta sets closed every cycle "
                       "(VPLEX Geo)", low=0.0),
    }  # fmt: skip


def _rename(root: Component, prefix: str, seen: set[int]) -> None:
    """Prefix the name of ``root`` and of every component below it (each once)."""
    if id(root) in seen:
        return
    seen.add(id(root))
    root.name = prefix + root.name
    for child in root.children():
        _rename(child, prefix, seen)


def _pair(build: Callable[[], Topology]) -> tuple[Topology, Topology]:
    a, b = build(), build()
    for topo, prefix in ((a, "A: "), (b, "B: ")):
        seen: set[int] = set()
        for volume in topo.volumes.values():
            _rename(volume, prefix, seen)
    return a, b


def metro(
    build: Callable[[], Topology],
    *,
    failures: Sequence[Failure] = (),
    preferred: int = 0,
    witness: bool = False,
    **overrides: object,
) -> Topology:
    """A synchronous (Metro) pair of the preset ``build`` returns: every volume mirrored on two sites; a
    write completes when both sites' arrays have it. ``overrides``: ``wan_rtt``, ``wan_bandwidth``,
    ``detection_time`` (see :func:`replication_params`). ``failures`` and ``witness``: see
    :mod:`storagelab.components.replication`. ``parts[<volume>]`` is each volume's mirror."""
    a, b = _pair(build)
    name = f"Metro pair of {a.name}"
    p = extend(a, name, replication_params("metro"), overrides)
    wan = WanLink("inter-site WAN", p["wan_bandwidth"].si, p["wan_rtt"].si)
    parts: dict[str, Component] = {"wan": wan}
    volumes: dict[str, Component] = {}
    for v in a.volumes:
        mirror = SyncMirror(
            f"{v} (Metro)", [Site("A", a.volumes[v]), Site("B", b.volumes[v])], wan, failures=failures,
            preferred=preferred, witness=witness, detection_time=p["detection_time"].si,
        )  # fmt: skip
        parts[v] = mirror
        volumes[v], volumes[f"{v} @ B"] = mirror.at(0), mirror.at(1)
    return Topology(name, volumes, p, parts=parts)


def async_pair(
    build: Callable[[], Topology],
    *,
    protocol: str = "A",
    failures: Sequence[Failure] = (),
    **overrides: object,
) -> Topology:
    """An asynchronous pair of the preset ``build`` returns: hosts write at site A; writes reach site B
    through a replication log (``cycle`` 0, DRBD ``protocol`` A or B: a
    :class:`~storagelab.components.replication.LogReplica`) or delta sets (``cycle`` > 0: a
    :class:`~storagelab.components.replication.DeltaSetReplica`). ``overrides``: ``wan_rtt``,
    ``wan_bandwidth``, ``detection_time``, ``buffer``, ``cycle``. ``parts[<volume>]`` is each volume's
    replica."""
    a, b = _pair(build)
    name = f"Asynchronous pair of {a.name}"
    p = extend(a, name, replication_params("async"), overrides)
    cycle = p["cycle"].si
    if protocol not in ("A", "B"):
        raise ValueError(
            f"{name}: protocol must be 'A' or 'B' (C is a synchronous pair: metro()), got {protocol!r}"
        )
    if protocol == "B" and cycle > 0:
        raise ValueError(
            f"{name}: protocol 'B' is a write-order log (cycle 0); delta sets acknowledge as A does"
        )
    wan = WanLink("inter-site WAN", p["wan_bandwidth"].si, p["wan_rtt"].si)
    parts: dict[str, Component] = {"wan": wan}
    volumes: dict[str, Component] = {}
    common = {"buffer_bytes": p["buffer"].si, "failures": failures, "detection_time": p["detection_time"].si}
    for v in a.volumes:
        sites = [Site("A", a.volumes[v]), Site("B", b.volumes[v])]
        replica: AsyncReplica = (
            DeltaSetReplica(f"{v} (async)", sites, wan, cycle=cycle, **common)
            if cycle > 0
            else LogReplica(f"{v} (async)", sites, wan, protocol=protocol, **common)
        )
        parts[v] = replica
        volumes[v] = replica.at(0)
    return Topology(name, volumes, p, parts=parts)
