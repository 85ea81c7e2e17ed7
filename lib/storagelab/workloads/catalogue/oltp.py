"""OLTP: DVD Store 2 on SQL Server, as the NexGen study ran it."""

from __future__ import annotations

from storagelab.workloads.access_spec import AccessSpec, SizeShare
from storagelab.workloads.application import (
    ApplicationWorkload,
    BurstThink,
    Stream,
    assumed,
    documented,
    documented_default,
    fit_default,
    need_count,
    need_positive,
)
from storagelab.workloads.catalogue._sources import NEXGEN

__all__ = [
    "DVD_STORE_DATABASE_BYTES",
    "DVD_STORE_THINK_S",
    "IOS_PER_ORDER",
    "IOS_PER_ORDER_FITTED_ON",
    "SQL_PAGE",
    "dvd_store",
]

#: IOs per DVD Store order, fitted (by arithmetic) on the NexGen study's scenario 2 (see :func:`dvd_store`).
IOS_PER_ORDER = 18
#: The published points the DVD Store IOs per order were computed from (NexGen scenario 2).
IOS_PER_ORDER_FITTED_ON = ("s2-cache-iops-mean", "s2-opm-lo", "s2-opm-hi")
#: A driver thread's think time (s) after each order: 'Think time: 100 milliseconds' (the NexGen study's
#: medium OLTP, scenario 1; its heavy OLTP, scenario 2, thinks 0 ms).
DVD_STORE_THINK_S = 0.1
#: Each SQL Server VM's DVD Store database (B): 'the 50 GB test database' (the NexGen study).
DVD_STORE_DATABASE_BYTES = 50 * 10**9

#: SQL Server reads and writes 8 KiB pages.
SQL_PAGE = AccessSpec(name="SQL Server 8K OLTP", sizes=(SizeShare(size=8192, pct=100),), read_pct=90,
                      random_pct=100, align=8192)  # fmt: skip


def dvd_store(
    name: str = "oltp",
    *,
    vms: int = 4,
    threads: int = 12,
    think: float = DVD_STORE_THINK_S,
    ios_per_order: int = IOS_PER_ORDER,
    volume: str = "oltp",
    database_size: int = DVD_STORE_DATABASE_BYTES,
    span: int | None = None,
) -> ApplicationWorkload:
    """DVD Store 2 OLTP as in the NexGen study: ``vms`` SQL Server VMs with ``threads`` driver threads
    each; a thread places an order (``ios_per_order`` 8 KiB random IOs one after another), then thinks
    ``think`` seconds. Orders per minute = completed IOs / ``ios_per_order`` x 60.

    ``ios_per_order`` is fitted (by arithmetic) on the study's scenario 2: about 10,000 host-cache
    IOPS at 35,000-40,000 OPM (the midpoint, 625 orders/s), where the warm host cache serves every
    read and no write: 10,000 / (90 % reads x 625) = 17.8, so 18 IOs per order. It is a per-order
    quantity: it is held when ``vms``, ``threads`` or ``think`` vary.

    Each VM has its own ``database_size``-byte database (50 GB in the study); the IOs address ``span``
    bytes, by default ``vms x database_size``.
    """
    need_count("dvd_store", "vms", vms)
    need_count("dvd_store", "threads", threads)
    need_positive("dvd_store", "think", think, "s", zero=True)
    need_count("dvd_store", "ios_per_order", ios_per_order)
    need_count("dvd_store", "database_size", database_size, SQL_PAGE.max_size)
    if span is None:
        span = vms * database_size
    gb = database_size // 10**9 if database_size % 10**9 == 0 else database_size / 1e9
    params = {
        "vms": documented(vms, "count", f"{NEXGEN}, Figure 13: 'SQL01-04'"),
        "threads_per_vm": documented(threads, "count", f"{NEXGEN}, DVD Store: 'Number of threads per VM: 12'"),
        "think_time": documented(think * 1e3, "ms", f"{NEXGEN}, DVD Store: 'Think time: 100 milliseconds' "
                                 "(scenario 1; 0 ms in scenario 2)"),
        "ios_per_order": fit_default(ios_per_order, IOS_PER_ORDER, "count", f"{NEXGEN}, scenario 2: ~10,000 ioTurbine "
                                     "cache IOPS (reads only: the warm cache serves the reads, writes go through) "
                                     "at 35,000-40,000 OPM -> 10,000 / (90 % reads x 37,500 / 60) = 17.8, rounded "
                                     "to 18 IOs per order", IOS_PER_ORDER_FITTED_ON),
        "read_pct": assumed(90, "%", "DVD Store is browse-heavy (3 browses per purchase); SQL Server OLTP "
                            "reads about 90 % of its page IOs; not stated in the study"),
        "database_size": documented_default(gb, DVD_STORE_DATABASE_BYTES // 10**9, "GB",
                                            f"{NEXGEN}: 'the 50 GB test database'"),
    }  # fmt: skip
    gap = BurstThink(ios_per_order, think) if think > 0 else 0.0
    stream = Stream(name, volume, SQL_PAGE, span, workers=vms * threads, outstanding=1, think=gap)
    return ApplicationWorkload(name, (stream,), params, f"orders per minute = IOPS x 60 / {ios_per_order}")
