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
bandwidth, detection time, the replication engine's cost per write at each end, buffer) are
origin-tagged like a preset's and taken as overrides by name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from storagelab.architectures.compose import extend
from storagelab.architectures.parameters import ParamSet
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
from storagelab.uncertainty import Choice, LogUniform, Uniform

__all__ = ["async_pair", "engine_params", "metro", "replication_params"]


#: Where the default engine costs come from (the project's VPLEX study, EMC H13540, and Dell's metro
#: node documentation); quoted in the parameters' sources.
ENGINE_COST_DOC = (
    "003_d9ad4d44f8318481.txt (EMC H13540, VPLEX with XtremIO 2.4), Section 3, 'Understanding VPLEX overhead'"
)
ENGINE_COST_QUOTE = (
    "'From VPLEX Metro distributed devices the additional write latency is the WAN RTT (latency between "
    "sites) + 200-600 microseconds'"
)
ENGINE_COST_STRUCTURE = (
    "Dell metro node help, 'Write Latency Delta chart' (http://38.142.81.21:8001/manual/dell/metro-node/"
    "help-english/page-44.html): for distributed devices the write delta 'includes the time required to "
    "write to the remote leg of the distributed Raid (WAN latency plus remote storage array write latency)'"
)


def engine_params() -> dict[str, Param]:
    """The replication engine's work per write at each end of a pair (us), each a pure delay on the
    write's path (:class:`~storagelab.components.replication.ReplicatedVolume`)."""
    split = (
        "the low end, 200 us at zero RTT, is the two engines' work per write together (a write is "
        "received, ordered and forwarded at the writing site, received, applied and acknowledged at the "
        "other); the even split between the two ends is an assumption (the document states the sum). "
        f"Structure: {ENGINE_COST_STRUCTURE}. A pure delay: it does not queue (the engine's cores are "
        "not known for an arbitrary preset)"
    )
    return {
        "engine_write_cost_local": Param(
            100, "us", "document",
            f"sending side (receive, order, journal the write, before it goes to either copy): {ENGINE_COST_DOC}: "
            f"{ENGINE_COST_QUOTE}; {split}", low=0.0,
        ),
        "engine_write_cost_remote": Param(
            100, "us", "document",
            f"receiving side (receive, apply or journal, acknowledge, before the acknowledgement crosses back): "
            f"{ENGINE_COST_DOC}: {ENGINE_COST_QUOTE}; {split}", low=0.0,
        ),
    }  # fmt: skip


def replication_params(kind: str = "metro") -> dict[str, Param]:
    """The parameters of a site pair: ``metro`` (synchronous) or ``async``; with the replication
    engine's per-write cost at each end (:func:`engine_params`)."""
    out = {
        "wan_rtt": Param(1.0, "ms", "assumption", "round trip of a metro distance (about 100 km of fibre at "
                         "5 us/km each way); set it for your sites. Uniform on 0-5 ms: synchronous "
                         "replication is run up to about 5 ms RTT", low=0.0, uncertainty=Uniform(0.0, 5.0)),
        "wan_bandwidth": Param(1250, "MB/s", "assumption", "one 10 Gb/s inter-site link. Log-uniform on "
                               "125-5,000 MB/s: from a 1 Gb/s link to four 10 Gb/s", capacity="rate",
                               uncertainty=LogUniform(125.0, 5000.0)),
        "detection_time": Param(5, "s", "assumption", "time before the surviving site continues alone after "
                                "losing its peer (a typical detach delay). Log-uniform on 1-30 s: the delay is "
                                "configurable", low=0.0, uncertainty=LogUniform(1.0, 30.0)),
    } | engine_params()  # fmt: skip
    if kind == "metro":
        return out
    if kind != "async":
        raise ValueError(f"replication kind must be 'metro' or 'async', got {kind!r}")
    return out | {
        "buffer": Param(1, "GB", "assumption", "what the replication log or delta sets may hold before host "
                        "writes are throttled. Log-uniform on 0.25-16 GB: a log or cache share of an array of "
                        "the era", uncertainty=LogUniform(0.25, 16.0)),
        "cycle": Param(0, "s", "assumption", "0: a write-order log (DRBD); > 0: delta sets closed every cycle "
                       "(VPLEX Geo). Uncertainty: only its value: it selects the mechanism the caller "
                       "builds, not a quantity to draw", low=0.0, uncertainty=Choice((0,))),
    }  # fmt: skip


def _engine(p: ParamSet) -> dict[str, float]:
    """The replicated volume's engine costs (s) from parameter set ``p``."""
    return {
        "engine_local": p["engine_write_cost_local"].si,
        "engine_remote": p["engine_write_cost_remote"].si,
    }


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
    ``detection_time``, ``engine_write_cost_local``, ``engine_write_cost_remote`` (see
    :func:`replication_params`). ``failures`` and ``witness``: see
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
            preferred=preferred, witness=witness, detection_time=p["detection_time"].si, **_engine(p),
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
    ``wan_bandwidth``, ``detection_time``, ``engine_write_cost_local``, ``engine_write_cost_remote``,
    ``buffer``, ``cycle``. ``parts[<volume>]`` is each volume's
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
    common = {"buffer_bytes": p["buffer"].si, "failures": failures, "detection_time": p["detection_time"].si,
              **_engine(p)}  # fmt: skip
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
