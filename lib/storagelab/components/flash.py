"""A flash drive as a component: its units (a station) and, for buffered writes, the drive's own
power-protected write buffer in front of them.

An enterprise SSD acknowledges a write from DRAM and programs the flash in the background, so its
write latency is the datasheet's (tens of microseconds) while its sustained write rate is set by the
units' program throughput (the datasheet's write IOPS). :func:`flash_drive` builds that from a
:class:`~storagelab.devices.SSD` with ``host_write_latency`` and ``write_buffer``; reads go to the units
(or are served from the buffer while their blocks are still unprogrammed).
"""

from __future__ import annotations

from storagelab.components.cache import WriteBackBuffer
from storagelab.devices import DATASHEET_BLOCK, SSD
from storagelab.kernel import Station
from storagelab.kernel.component import Component


def flash_drive(name: str, ssd: SSD) -> Component:
    """The drive ``ssd`` as a component named ``name``: a station of ``ssd.parallelism`` units, behind
    the drive's write buffer when the device buffers writes (else the station alone). The buffer
    programs continuously (no watermark), with as many program operations in flight as the drive has
    units, first in, first out."""
    units = Station(name, ssd)
    if getattr(ssd, "host_write_latency", None) is None:
        return units
    return WriteBackBuffer(
        f"{name} write buffer", units, capacity_bytes=ssd.write_buffer, block_bytes=DATASHEET_BLOCK,
        write_latency=ssd.host_write_latency, high_watermark=0.0, low_watermark=0.0,
        destage_concurrency=ssd.parallelism, ack_bandwidth=ssd.write_bandwidth, ack_block=DATASHEET_BLOCK,
    )  # fmt: skip


__all__ = ["flash_drive"]
