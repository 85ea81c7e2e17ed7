"""Put a host-side read cache (ioTurbine on an ioDrive2, :mod:`storagelab.components.host_cache`, or a
RAM cache on a memory tier) in front of any preset's volumes.

>>> from storagelab.architectures import host_cache
>>> from storagelab.studies.ds5020.preset import ds5020
>>> topo = host_cache.with_host_cache(ds5020(), {"oracle-1": 4})            # doctest: +SKIP

Each listed volume is split among its guests (VMs) of ``host_cache_guest_disk`` bytes; each guest gets its share of
one card (``host_cache_share`` of the card, divided equally among all cached guests). Cold by default (block
caches that warm up during the run); ``warm_hit_ratio`` gives the steady state instead.

The card's size is ``host_cache_capacity``; its default, 0, takes a flash card's own capacity (its device
preset's). A memory tier (``host_cache_card="DDR3 DRAM"``) has no capacity of its own (a DRAM preset
describes timing, not modules), so a RAM host cache needs ``host_cache_capacity`` set:

>>> ram = host_cache.with_host_cache(ds5020(), {"oracle-1": 4}, host_cache_card="DDR3 DRAM",
...                                  host_cache_capacity=64)                  # doctest: +SKIP

A preset that builds its own host cache (NexGen's ``host_cache=1``) takes the same parameters, so
``nexgen(host_cache=1, host_cache_card="DDR3 DRAM", host_cache_capacity=64)`` is a RAM host cache there.
"""

from __future__ import annotations

from collections.abc import Mapping

from storagelab.architectures.compose import extend
from storagelab.architectures.parameters import ParamSet
from storagelab.architectures.topology import Topology
from storagelab.components.host_cache import Guests, HostFlashCache, WarmHostCache, partition
from storagelab.kernel.component import Component
from storagelab.kernel.station import Station
from storagelab.provenance import PRESET_UNIT, Param
from storagelab.uncertainty import Choice, Uniform

__all__ = [
    "card_bytes",
    "guest_caches",
    "host_cache_capacity_param",
    "host_cache_params",
    "with_host_cache",
]

_DOC = "000_95d1997ae9f905ef.txt (NexGen N5, Principled Technologies)"


def host_cache_params() -> dict[str, Param]:
    """The parameters of a host cache, with their origins (the NexGen study's ioTurbine set-up), the card's
    usable size (``host_cache_capacity``, :func:`host_cache_capacity_param`) included: every builder of
    a host cache sizes it with :func:`card_bytes`."""
    return {
        "host_cache_card": Param("ioDrive2 785GB", PRESET_UNIT, "document", f"{_DOC}: 'one Cisco UCS Fusion ioDrive2 "
                            "mezzanine card' in the SQL host (device preset 'ioDrive2 785GB', datasheet figures)",
                            capacity="device"),
        "host_cache_share": Param(1.0, "ratio", "assumption", "share of the card given to the cached guests; the study "
                             "caches only the SQL VMs' E:\\ drives and does not state a split, so all of it. Uncertainty: "
                             "uniform on 0.25-1: any share from 4 x 50 GB / 785 GB = 0.255 up holds the four disks "
                             "whole; the study does not say whether ioTurbine kept part of the card back",
                             uncertainty=Uniform(0.25, 1.0)),
        "host_cache_guest_disk": Param(50, "GB", "document", f"{_DOC}: the E:\\ drive 'contains both the 50 GB test database "
                            "plus the tempdb database' (each guest's cached disk)"),
        "host_cache_block": Param(8, "KiB", "assumption", "cache block: one SQL Server page. Uncertainty: 4, 8 or "
                            "16 KiB, equally likely (ioTurbine's block is not stated; a flash page, a SQL Server "
                            "page or two); it matters only to a cold (LRU) cache", uncertainty=Choice((4, 8, 16))),
        "host_cache_capacity": host_cache_capacity_param(),
    }  # fmt: skip


def host_cache_capacity_param() -> Param:
    """The wrapper's ``host_cache_capacity``: the card's bytes the host cache may use (GB); 0, the
    default, takes a flash card's own capacity; a memory tier has none, so a RAM cache must set it."""
    return Param(0, "GB", "assumption", "bytes of the card the host cache may use; 0 takes a flash card's own "
                 "capacity (its device preset's); a memory tier has none, so set it. Uncertainty: only 0 (the "
                 "card's own, a datasheet figure): a number between would be another configuration, not a draw",
                 low=0.0, uncertainty=Choice((0,)))  # fmt: skip


def card_bytes(p: ParamSet, device: object) -> int:
    """The host cache card's bytes: ``host_cache_capacity`` when set (> 0), else ``device``'s (the card's)
    own capacity; a device without one (a memory tier) needs ``host_cache_capacity``."""
    size = p["host_cache_capacity"].si
    if size > 0:
        return int(size)
    card = p["host_cache_card"].value
    capacity = getattr(device, "capacity", None)
    if not capacity:
        raise ValueError(
            f"{p.preset}: host cache card {card!r} has no capacity of its own (a memory tier); set "
            "host_cache_capacity (GB), e.g. host_cache_capacity=64"
        )
    return int(capacity)


def guest_caches(
    name: str,
    backend: Component,
    card: Component,
    *,
    guests: int,
    guest_bytes: int,
    cache_bytes: int,
    block_bytes: int,
    warm_hit_ratio: float | None = None,
) -> Guests:
    """``guests`` caches of ``cache_bytes`` each on ``card`` in front of ``backend``, one per guest's
    ``guest_bytes`` of the volume: cold :class:`HostFlashCache` (LRU, write-through with update), or
    :class:`WarmHostCache` at ``warm_hit_ratio``."""
    if warm_hit_ratio is None:
        members = [
            HostFlashCache(f"{name} guest {g + 1}", backend, card, cache_bytes, block_bytes)
            for g in range(guests)
        ]
    else:
        members = [
            WarmHostCache(f"{name} guest {g + 1}", backend, card, warm_hit_ratio) for g in range(guests)
        ]
    return Guests(name, members, guest_bytes)


def with_host_cache(
    topology: Topology,
    volumes: Mapping[str, int],
    *,
    warm_hit_ratio: float | None = None,
    **overrides: object,
) -> Topology:
    """``topology`` with each volume of ``volumes`` (volume -> its number of guests) behind a host cache
    on one card; the other volumes are untouched. ``overrides``: :func:`host_cache_params` and
    ``host_cache_capacity`` among them) by name.
    ``parts["host cache <volume>"]`` has each volume's caches (their ``timeline()``), ``parts["cache
    card"]`` the card."""
    name = f"{topology.name} + host flash cache"
    unknown = [v for v in volumes if v not in topology.volumes]
    if unknown:
        raise ValueError(f"{name}: no volume {unknown[0]!r}; volumes: {', '.join(topology.volumes)}")
    bad = {v: n for v, n in volumes.items() if not (isinstance(n, int) and n >= 1)}
    if bad:
        raise ValueError(f"{name}: guests per volume must be whole numbers >= 1, got {bad}")
    p = extend(topology, name, host_cache_params(), overrides)
    device = p.device("host_cache_card")
    card = Station("cache card", device)
    total_guests = sum(volumes.values())
    share = p["host_cache_share"].value / total_guests
    shares = {f"guest {i}": share for i in range(total_guests)}
    per_guest = partition(card_bytes(p, device), shares)["guest 0"]
    out = dict(topology.volumes)
    parts: dict[str, Component] = {**topology.parts, "cache card": card}
    for v, n in volumes.items():
        caches = guest_caches(
            f"host cache {v}", topology.volumes[v], card, guests=n, guest_bytes=int(p["host_cache_guest_disk"].si),
            cache_bytes=per_guest, block_bytes=int(p["host_cache_block"].si), warm_hit_ratio=warm_hit_ratio,
        )  # fmt: skip
        out[v] = caches
        parts[f"host cache {v}"] = caches
    return Topology(name, out, p, parts=parts)
