"""IBM DS5020 Express (and the DS3950, emulated as four host paths) as the ESG Lab validation ran it.

Two controllers, each owning half of the logical drives, with a write-back data cache; 8 Gb FC host
paths; 112 15K FC drives in the Table 1 layout. Each tile has an eight-drive RAID-10 Exchange database
volume and four-drive RAID-10 volumes for the Exchange log, Oracle, the web server and the scan stream,
plus a RAID-5 (3+1) OS volume.

An IO to a volume crosses its host path (FIFO serialization at the link rate), its owning controller
(a FIFO stage: per-IO processing plus transfer at the controller's internal bandwidth), the controller's
write cache (writes acknowledged there and destaged continuously, as in the steady state of the hours-long
runs, where the cache sits at its flush threshold) and the RAID set. Controller read caching and
prefetch are not modelled.
"""

from __future__ import annotations

from storagelab import devices, raid
from storagelab.architectures.topology import Topology
from storagelab.components.cache import WriteBackBuffer
from storagelab.components.raid_set import RaidSet
from storagelab.devices import Param
from storagelab.kernel import Link, Path, Station
from storagelab.kernel.component import Component

_DOC = "002_3dbf0d9df4c2366f.txt (ESG Lab, IBM DS5020)"

#: Per tile, as in Table 1: volume kind -> (RAID level, drives).
TILE_LAYOUT: dict[str, tuple[str, int]] = {
    "exchange-db": ("RAID-10", 8),
    "exchange-log": ("RAID-10", 4),
    "oracle": ("RAID-10", 4),
    "web": ("RAID-10", 4),
    "scan": ("RAID-10", 4),
    "os": ("RAID-5", 4),
}


def params(host_paths: int = 8) -> dict[str, Param]:
    """The DS5020 model's parameters, each with its origin."""
    return {
        "drives": Param(112, "count", "document", f"{_DOC}: 'A DS5020 Express with 112 15K RPM FC drives'"),
        "drive_model": Param(15000, "rpm", "document", f"{_DOC}: 15K FC drives (device preset '15K FC/SAS')"),
        "host_paths": Param(host_paths, "count", "document", f"{_DOC}: 'eight 8 Gbps FC interfaces'; the DS3950 "
                            "test used 'only four active FC host interfaces'"),
        "host_path_rate": Param(800, "MB/s", "device-physics", "8 Gb FC: 8.5 GBaud line rate with 8b/10b "
                                "encoding carries 800 MB/s of payload per direction"),
        "controllers": Param(2, "count", "document", f"{_DOC}, Figure 20: 'Number of controllers: 2'"),
        "controller_bandwidth": Param(4, "GB/s", "assumption", f"{_DOC}, The Solution: 'up to 8 GB/s' internal "
                                     "bandwidth (vendor claim), split evenly over the two controllers"),
        "controller_overhead": Param(25, "us", "assumption", "per-IO controller processing of a 2009 midrange "
                                     "controller (tens of microseconds); not stated"),
        "cache_per_controller": Param(1709, "MB", "document", f"{_DOC}, Figure 20: data cache 'Total present: 1709 MB'"),
        "write_headroom": Param(4, "MiB", "assumption", f"{_DOC}, Figure 20: 'Start cache flushing at 80%', 'Stop "
                                "... at 80%': in the hours-long runs the cache sits at its flush threshold, so a "
                                "write is admitted as fast as destaging frees space. A short run reaches that "
                                "state only if the free space is small: 4 MiB of headroom per volume"),
        "cache_write_latency": Param(0.1, "ms", "assumption", "write acknowledged from controller DRAM after "
                                     "mirroring to the partner controller (~100 us); not stated"),
        "destage_concurrency": Param(8, "count", "assumption", "destage IOs in flight per volume; not stated"),
        "segment_size": Param(512, "KiB", "document", f"{_DOC}, Figure 20: 'Segment size: 512 KB' (shown for BK_01; "
                              "assumed for every volume)"),
        "drive_queueing": Param(1, "count", "assumption", "drives reorder queued commands shortest-seek-first "
                                "(FC tagged command queuing); 1 = on"),
    }  # fmt: skip


def _layout(level: str, drives: int, segment: int) -> object:
    if level == "RAID-10":
        return raid.Raid10(mirror_pairs=drives // 2, stripe_unit=segment)
    return raid.Raid5(members=drives, stripe_unit=segment)


class _Volumes:
    """Builds volumes that share host paths and controllers, assigned round robin."""

    def __init__(self, p: dict[str, Param]) -> None:
        self.p = p
        n_paths = int(p["host_paths"].value)
        self.paths = [Link(f"host path {i + 1}", bandwidth=p["host_path_rate"].si) for i in range(n_paths)]
        self.controllers = [
            Link(
                f"controller {c}",
                bandwidth=p["controller_bandwidth"].si,
                per_io_overhead=p["controller_overhead"].si,
            )
            for c in "AB"
        ]
        self.count = 0
        self.headroom = p["write_headroom"].si

    def volume(self, name: str, level: str, drives: int) -> Component:
        p, k = self.p, self.count
        self.count += 1
        members = [
            Station(f"{name} drive {i + 1}", devices.preset("15K FC/SAS"), discipline="sstf")
            for i in range(drives)
        ]
        rset = RaidSet(f"{name} {level}", _layout(level, drives, int(p["segment_size"].si)), members)
        cache = WriteBackBuffer(
            f"{name} write cache", rset, capacity_bytes=int(self.headroom), block_bytes=16 * 1024,
            write_latency=p["cache_write_latency"].si, high_watermark=0.0, low_watermark=0.0,
            destage_concurrency=int(p["destage_concurrency"].value),
        )  # fmt: skip
        return Path(name, [self.paths[k % len(self.paths)], self.controllers[k % 2], cache])


def ds5020(host_paths: int = 8, tiles: int = 4) -> Topology:
    """The tile layout of Table 1: volumes ``exchange-db-1`` ... ``os-4`` for ``tiles`` tiles (4 = all
    112 drives). ``host_paths=4`` is the DS3950 emulation of Table 5."""
    if host_paths not in (4, 8):
        raise ValueError(f"host_paths must be 8 (DS5020) or 4 (DS3950 emulation), got {host_paths!r}")
    if not isinstance(tiles, int) or not 1 <= tiles <= 4:
        raise ValueError(f"tiles must be 1..4, got {tiles!r}")
    p = params(host_paths)
    build = _Volumes(p)
    volumes = {
        f"{kind}-{t}": build.volume(f"{kind}-{t}", level, drives)
        for t in range(1, tiles + 1)
        for kind, (level, drives) in TILE_LAYOUT.items()
    }
    return Topology(f"DS5020 Express, {host_paths} host paths", volumes, p)


def ds5020_characterization(host_paths: int = 8) -> Topology:
    """The 3.1 GB/s characterization layout: eight 4-drive RAID-10 LUNs (32 drives), ``lun-1`` ..
    ``lun-8``, through ``host_paths`` FC paths."""
    if host_paths not in (4, 8):
        raise ValueError(f"host_paths must be 8 or 4, got {host_paths!r}")
    p = params(host_paths)
    build = _Volumes(p)
    volumes = {f"lun-{i}": build.volume(f"lun-{i}", "RAID-10", 4) for i in range(1, 9)}
    return Topology(f"DS5020 Express characterization, {host_paths} host paths", volumes, p)
