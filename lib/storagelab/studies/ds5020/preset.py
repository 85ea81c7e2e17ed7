"""IBM DS5020 Express (and the DS3950, emulated as four host paths) as the ESG Lab validation ran it.

Two controllers, each owning half of the logical drives, with a write-back data cache; 8 Gb FC host
paths; 112 15K FC drives in the Table 1 layout. Each tile has an eight-drive RAID-10 Exchange database
volume and four-drive RAID-10 volumes for the Exchange log, Oracle, the web server and the scan stream,
plus a RAID-5 (3+1) OS volume.

An IO to a volume first spends the host's time per IO (the guest's storage stack, the vSphere raw
device mapping and the HBA driver: the study measures every latency inside the guests), then crosses
its host path (FIFO serialization at the link rate), its owning controller
(a FIFO stage: per-IO processing plus transfer at the controller's internal bandwidth), the controller's
write cache (writes acknowledged there and destaged continuously, as in the steady state of the hours-long
runs) and the RAID set, whose member IOs cross one of the controller's 4 Gb drive-side FC channels (a
read's data after the drive has read it) to their drives. The write cache is the controller's data
cache (Figure 20), shared by the
volumes the controller owns, with coalescing, address-ordered destage and the documented flush levels
(:mod:`storagelab.components.write_cache`). Reads first meet the controller's read cache
(:class:`~storagelab.components.cache.ReadCache`, Figure 20: 'Read cache: Enabled', 'Dynamic cache read
prefetch: Enabled'): a read of blocks another read has brought in (or is bringing in) is served from
controller memory, and a read that continues a sequential stream makes the controller read the rest
of that segment ahead.
"""

from __future__ import annotations

from collections.abc import Callable

from storagelab.architectures.capacities import Stage, stations_and_links
from storagelab.architectures.parameters import ParamSet
from storagelab.architectures.topology import Topology
from storagelab.components import raid
from storagelab.components.cache import ReadCache
from storagelab.components.raid_set import RaidSet
from storagelab.components.write_cache import WriteBackCache, WriteCachePool, destage_depth
from storagelab.devices.hdd import command_ordering
from storagelab.kernel import Delay, Link, Path, Station
from storagelab.kernel.component import Component
from storagelab.provenance import PRESET_UNIT, Param
from storagelab.uncertainty.distributions import Choice, LogUniform, Uniform

_DOC = "002_3dbf0d9df4c2366f.txt (ESG Lab, IBM DS5020)"
_REDBOOK = "IBM Midrange System Storage Hardware Guide (SG24-7676-01, IBM Redbooks, 2010)"

#: Per tile, as in Table 1: volume kind -> (RAID level, drives).
TILE_LAYOUT: dict[str, tuple[str, int]] = {
    "exchange-db": ("RAID-10", 8),
    "exchange-log": ("RAID-10", 4),
    "oracle": ("RAID-10", 4),
    "web": ("RAID-10", 4),
    "scan": ("RAID-10", 4),
    "os": ("RAID-5", 4),
}


#: Figure 20 (the DS5020 profile), controller in slot A's preferred logical drives: 'BK_01, BK_04, JS_01,
#: JS_03, JS_2L, JS_4L, OR_02, OR_04, OS_01, OS_03, WB_02, WB_03' (BK scan, JS_0n Exchange database,
#: JS_nL Exchange log, OR Oracle, OS operating system, WB web server); controller B owns the others.
CONTROLLER_A_TILES: dict[str, tuple[int, ...]] = {
    "scan": (1, 4), "exchange-db": (1, 3), "exchange-log": (2, 4), "oracle": (2, 4), "os": (1, 3), "web": (2, 3),
}  # fmt: skip


#: Figure 16's log write latency as the guest measured it ('Volume F: has 0.0004 for Avg. Disk
#: sec/Write'), in seconds, and the dataset row that holds it.
GUEST_LOG_WRITE_S = 0.4e-3
HOST_IO_TIME_FITTED_ON = ("ds5020-f16-log-log-write-lat",)


def array_write_hit_time(p: dict[str, Param], size: int) -> float:
    """Seconds the model's array takes, unloaded, to acknowledge a ``size``-byte write into controller
    cache: the host path's transfer and its ports' per-IO processing, the controller's per-IO processing
    and data movement, and the cache's acknowledgement (mirroring included)."""
    return (
        size / p["host_path_rate"].si
        + p["host_port_overhead"].si
        + p["controller_overhead"].si
        + size / p["controller_bandwidth"].si
        + p["cache_write_latency"].si
    )


def fit_host_io_time(p: dict[str, Param]) -> float:
    """The host's time per IO (s), fitted by arithmetic on Figure 16: the guest saw the Exchange log's
    5,632-byte writes, which the controller acknowledges from cache, take 0.4 ms; the model's array
    accounts for :func:`array_write_hit_time` of them, the host for the rest."""
    return GUEST_LOG_WRITE_S - array_write_hit_time(p, 5632)


#: :func:`fit_host_io_time` on the default parameters, in ms (a test re-derives it). It was 0.267 ms while
#: the host ports had no per-IO time: the fit absorbed the ports' 5 us.
FITTED_HOST_IO_TIME_MS = 0.262

#: The host ports' per-IO processing, in microseconds: the value and the range the evidence allows
#: (see the ``host_port_overhead`` parameter).
HOST_PORT_OVERHEAD_US, HOST_PORT_OVERHEAD_RANGE_US = 5.0, (2.5, 10.0)


#: The name the uncertainty analysis keys every DS5020 preset's parameters by (one array, in several layouts
#: and host-path counts: one draw of each unknown they share).
FAMILY = "DS5020 Express"


def params(host_paths: int = 8) -> dict[str, Param]:
    """The DS5020 model's parameters, each with its origin."""
    return {
        "drives": Param(112, "count", "document", f"{_DOC}: 'A DS5020 Express with 112 15K RPM FC drives' (the "
                        "Table 1 tiles use 28 each)"),
        "drive": Param("15K FC/SAS", PRESET_UNIT, "document", f"{_DOC}: '112 15K RPM FC drives' (device preset "
                       "'15K FC/SAS', Seagate Cheetah 15K.7 datasheet figures)", capacity="device"),
        "drive_ordering": command_ordering(source=(
            "the Cheetah 15K.7 FC drives queue commands (FC tagged command queuing) and order them by access "
            "time (seek and rotation), as every drive of the era with rotational position ordering does; the "
            "same declaration as every preset's drives (devices.hdd.command_ordering). Shortest seek first, "
            "kept until now because it passed Tables 2-4, was a choice made against scored points"
        )),
        "host_paths": Param(host_paths, "count", "document", f"{_DOC}: 'eight 8 Gbps FC interfaces'; the DS3950 "
                            "test used 'only four active FC host interfaces'", high=16),
        "host_path_rate": Param(800, "MB/s", "device-physics", "8 Gb FC: 8.5 GBaud line rate with 8b/10b "
                                "encoding carries 800 MB/s of payload per direction", capacity="rate"),
        "host_port_overhead": Param(HOST_PORT_OVERHEAD_US, "us", "assumption", "per-IO processing of a host path's "
                                    "FC ports (command frame, exchange set-up and status, in the HBA and in the "
                                    "array's host port), which occupies the path once per IO whatever its size. No "
                                    f"source gives it: {_DOC} names the HBAs (QLogic 8 Gb CIOv/CFFh, 2500-series "
                                    "class) and Figure 20 the array's 'Host Interface Board ... Vendor: LSI', with no "
                                    "IO rate. The vendors' figures for that 8 Gb HBA generation (QLogic 2500, Emulex "
                                    "LPe12000 series) are about 200,000 IOPS per port (5 us); the 4 Gb generation "
                                    "and midrange arrays' target ports about half that (10 us); 2.5 us allows a port "
                                    "twice as fast. So "
                                    f"{HOST_PORT_OVERHEAD_RANGE_US[0]:g}-{HOST_PORT_OVERHEAD_RANGE_US[1]:g} us per IO, "
                                    "5 us taken. Not fitted on Table 5's IOPS from cache. Uncertainty: log-uniform on "
                                    "that range (a factor of two either way of the 8 Gb generation's figure, whose "
                                    "geometric middle is 5 us)", low=0, capacity="time",
                                    uncertainty=LogUniform(*HOST_PORT_OVERHEAD_RANGE_US)),
        "controllers": Param(2, "count", "document", f"{_DOC}, Figure 20: 'Number of controllers: 2'", high=8),
        "drive_channel_rate": Param(400, "MB/s", "datasheet", f"{_REDBOOK}, 3.5.1 DS5020 controller architecture: "
                                    "'4 Gbps drive channel'; 4 Gb FC (4.25 GBaud, 8b/10b) carries 400 MB/s of payload "
                                    "per direction", capacity="rate"),
        "drive_channels": Param(2, "count", "assumption", "drive-side FC ports per controller, each drive reached "
                                "through one of them (the DS4700 architecture the DS5020 shares has two); not stated "
                                "in the document. Uncertainty: one of 1, 2 or 4 (weights 1, 3, 1): 2 as the DS4700 "
                                f"architecture; {_REDBOOK} gives the DS5020 redundant 4 Gb drive loops, which may "
                                "count as one usable channel per controller (1, if a drive is reached through one "
                                "loop at a time) or, with each drive port of a loop pair carrying traffic, as "
                                "four; nothing in the study decides it", high=8,
                                uncertainty=Choice((1, 2, 4), (1, 3, 1))),
        "controller_bandwidth": Param(4, "GB/s", "assumption", f"{_DOC}, The Solution: 'up to 8 GB/s' internal "
                                     "bandwidth (vendor claim), split evenly over the two controllers. Uncertainty: "
                                     "uniform on 2-4 GB/s: the 'up to' bounds it above (4 GB/s per controller); a "
                                     "vendor's peak internal bandwidth is commonly reached at half to all of its "
                                     "figure in practice, and the study's 'three times the internal bandwidth of "
                                     "the previous generation DS4700' gives no absolute figure; nothing bounds it "
                                     "more tightly", capacity="rate", uncertainty=Uniform(2, 4)),
        "controller_overhead": Param(25, "us", "assumption", "per-IO controller processing of a 2009 midrange "
                                     "controller (tens of microseconds); not stated. Uncertainty: log-uniform on "
                                     "10-60 us (25,000 to 100,000 IOs per second per controller; geometric middle "
                                     "about 25 us): 'tens of microseconds' is all the evidence says, so an order of "
                                     "magnitude range; wide because it is thin", capacity="time",
                                     uncertainty=LogUniform(10, 60)),
        "data_cache": Param(1709, "MB", "document", f"{_DOC}, Figure 20, Controller in Slot A: 'Data Cache "
                            "Total present: 1709 MB' (per controller)"),
        "cache_mirroring": Param(1, "count", "document", f"{_DOC}, Figure 20: 'Write cache with mirroring: "
                                 "Enabled': half of each controller's data cache holds its partner's dirty data, "
                                 "so a controller's own writes can use half (1 = mirrored, 0 = not)", choices=(0, 1)),
        "start_flush": Param(80, "%", "document", f"{_DOC}, Figure 20: 'Start cache flushing at (in percentage): 80'"),
        "stop_flush": Param(80, "%", "document", f"{_DOC}, Figure 20: 'Stop cache flushing at (in percentage): 80'"),
        "flush_age": Param(10, "s", "document", f"{_DOC}, Figure 20: 'Flush write cache after (in seconds): 10.00'"),
        "cache_block": Param(16, "KiB", "document", f"{_DOC}, Figure 20: 'Cache block size (in KB): 16'"),
        "warm_start": Param(0.5, "s", "assumption", "seconds each writing volume is watched before its cache is "
                            "set to a long run's dirty state (storagelab.components.write_cache.WriteCachePool): "
                            "the hours-long runs have a full cache; a seconds-long run would otherwise start empty. "
                            "A modelling choice the document cannot bound. Uncertainty: uniform on 0.25-1 s: long "
                            "enough to see each writing volume's rate (the slowest, the Exchange log at about 250 "
                            "writes/s, makes some 60 writes in 0.25 s), and no longer than the quick tile runs' 1 s "
                            "warm-up, after which measurement starts", uncertainty=Uniform(0.25, 1.0)),
        "cache_write_latency": Param(0.1, "ms", "assumption", "write acknowledged from controller DRAM after "
                                     "mirroring to the partner controller (~100 us); not stated. Uncertainty: "
                                     "log-uniform on 0.05-0.2 ms: a DRAM write plus a copy over the inter-controller "
                                     "link and its acknowledgement is of order 100 us, a factor of two either way "
                                     "(no figure for the DS5020 was found)", uncertainty=LogUniform(0.05, 0.2)),
        "drive_queue_depth": Param(32, "count", "assumption", "commands a drive reorders (tagged command queue); "
                                   "destage IOs in flight per volume fill its drives' queues and no more. Not stated "
                                   "for the DS5020 or its Cheetah 15K.7 drives. Uncertainty: one of 16, 32 or 64 "
                                   "(weights 1, 2, 1): the queue a drive of the era takes and the per-drive limit "
                                   "midrange controllers set lie in this range; 32 is the common SCSI/FC default",
                                   uncertainty=Choice((16, 32, 64), (1, 2, 1))),
        "read_cache": Param(1, "count", "document", f"{_DOC}, Figure 20: 'Read cache: Enabled' (shown for BK_01; "
                            "assumed for every volume): 1 = reads are served from controller memory when their "
                            "blocks are there, 0 = every read goes to the drives", choices=(0, 1)),
        "read_prefetch": Param(1, "count", "assumption", f"{_DOC}, Figure 20: 'Dynamic cache read prefetch: "
                               "Enabled'; how much is read ahead is not stated: a read continuing a sequential "
                               "stream makes the controller read the rest of its segment (what the same drive holds "
                               "contiguously; controllers commonly read ahead to the stripe-unit boundary). 1 = on, "
                               "0 = off. Uncertainty: one of 0 or 1 (weights 1, 3): Figure 20 says it is enabled, "
                               "so on is the likelier; 0 stands for a prefetch that reads too little ahead (the "
                               "amount is not stated; 'dynamic' prefetch may read less than a segment) to serve "
                               "the next read, whose physics the study leaves open", choices=(0, 1),
                               uncertainty=Choice((0, 1), (1, 3))),
        "read_coalescing": Param(1, "count", "assumption", "a read that finds its blocks on their way in from "
                                 "the drives (another read's miss) waits for that fill and is served from cache "
                                 "(1), or is a miss and reads the drives itself (0). Not stated: Figure 20 gives "
                                 "'Read cache: Enabled' and the cache block only; the LSI firmware's handling of "
                                 "reads on a pending fill is in no source here. It decides the characterization: "
                                 "four Iometer workers per LUN start at the same sector and stay in step, so "
                                 "with 1 three reads in four wait on the first one's fill, with 0 none is served "
                                 "from cache. Uncertainty: one of 0 or 1 (weights 1, 1): no evidence favours "
                                 "either", choices=(0, 1), uncertainty=Choice((0, 1), (1, 1))),
        "cache_read_latency": Param(20, "us", "assumption", "a read served from controller DRAM beyond the "
                                    "controller's per-IO processing and data movement (a cache directory lookup, "
                                    "~tens of us); not stated. Uncertainty: log-uniform on 5-80 us (geometric "
                                    "middle 20 us): from a bare lookup in controller memory to a slow firmware path; "
                                    "the evidence is an order of magnitude, so the range is wide",
                                    capacity="time", uncertainty=LogUniform(5, 80)),
        "segment_size": Param(512, "KiB", "document", f"{_DOC}, Figure 20: 'Segment size: 512 KB' (shown for BK_01; "
                              "assumed for every volume)"),
        "host_io_time": Param(FITTED_HOST_IO_TIME_MS, "ms", "fit", f"{_DOC}, Figure 16: 'Volume F: has 0.0004 for "
                              "Avg. Disk sec/Write' (the Exchange log's writes, acknowledged from controller cache, "
                              "measured in the guest) minus the model array's unloaded time for such a write (host "
                              "path and its ports' per-IO time, controller, cache acknowledgement: 0.138 ms): the "
                              "time per IO of the guest's "
                              "storage stack, the vSphere raw device mapping and the HBA "
                              "(storagelab.studies.ds5020.preset.fit_host_io_time). Figure 16 gives one significant "
                              "digit, so 0.35-0.45 ms: this is 0.21-0.31 ms. Uncertainty: uniform on 0.212-0.312 "
                              "ms, that precision of the one row it is fitted on (0.35 and 0.45 ms minus 0.138 ms; an "
                              "arithmetic fit, no simulation noise). Prior (without the row): log-uniform on 0.05-1 "
                              "ms: a guest's storage stack, the vmkernel's raw device mapping and an 8 Gb HBA driver "
                              "on 2009 Nehalem hosts take at least some 50 us per IO and, on hosts under 10 % CPU "
                              "(the study's screenshots), not more than about 1 ms; nothing narrower is known "
                              "without Figure 16", fitted_on=HOST_IO_TIME_FITTED_ON, low=0, capacity="time",
                              uncertainty=Uniform(0.212, 0.312), prior=LogUniform(0.05, 1.0)),
    }  # fmt: skip


def _layout(level: str, drives: int, segment: int) -> object:
    if level == "RAID-10":
        return raid.Raid10(mirror_pairs=drives // 2, stripe_unit=segment)
    return raid.Raid5(members=drives, stripe_unit=segment)


class _Volumes:
    """Builds volumes that share host paths and controllers, assigned round robin, from the drives."""

    def __init__(self, p: ParamSet, drives_needed: int, volumes: int) -> None:
        self.p = p
        self.read_caches: list[Component] = []  # each volume's controller read cache, as built
        if drives_needed > p["drives"].value:
            raise ValueError(
                f"preset {p.preset!r}: the layout needs {drives_needed} drives, but drives = {p['drives'].value:g}"
            )
        n_paths = int(p["host_paths"].value)
        self.paths = [
            Link(
                f"host path {i + 1}",
                bandwidth=p["host_path_rate"].si,
                per_io_overhead=p["host_port_overhead"].si,
            )
            for i in range(n_paths)
        ]
        names = "ABCDEFGH"
        self.controllers = [
            Link(
                f"controller {names[c]}",
                bandwidth=p["controller_bandwidth"].si,
                per_io_overhead=p["controller_overhead"].si,
                duplex=False,  # a controller's time and data movement: one queue, no second direction
            )
            for c in range(int(p["controllers"].value))
        ]
        # each controller's drive-side FC ports: a member IO's data crosses one of them (a read's on the
        # way back, after the drive has read it; a write's on the way out), store and forward
        self.channels = [
            [Link(f"{c.name} drive channel {k + 1}", bandwidth=p["drive_channel_rate"].si)
             for k in range(int(p["drive_channels"].value))]
            for c in self.controllers
        ]  # fmt: skip
        # a controller's host ports: every n-th path (each volume is reached through its owner's ports)
        n_ctrl = len(self.controllers)
        self.ports = [self.paths[c::n_ctrl] or self.paths for c in range(n_ctrl)]
        self.count = 0
        self.on_controller = [0] * n_ctrl  # volumes each controller owns so far
        self.discipline = str(p["drive_ordering"].value)
        self.segment = int(p["segment_size"].si)
        capacity = p["data_cache"].si / (2 if p["cache_mirroring"].value else 1)
        self.pools = [
            WriteCachePool(
                f"{c.name} write cache", capacity_bytes=int(capacity), block_bytes=int(p["cache_block"].si),
                start_flush=p["start_flush"].si, stop_flush=p["stop_flush"].si, flush_age=p["flush_age"].si,
                write_latency=p["cache_write_latency"].si, warm_start=p["warm_start"].si,
            )
            for c in self.controllers
        ]  # fmt: skip
        # each volume's read cache: an even share of what its controller's data cache holds of its own
        # (the mirrored half is the partner's); reads and writes share that memory in the array, and the
        # model gives reads the whole share
        per_controller = -(-volumes // len(self.controllers))
        self.read_cache_bytes = int(capacity) // per_controller if p["read_cache"].value else 0
        self.read_ahead_to = self.segment if p["read_prefetch"].value else 0
        self.read_latency = p["cache_read_latency"].si
        self.coalesce_fills = bool(p["read_coalescing"].value)
        self.queue_depth = int(p["drive_queue_depth"].value)
        self.drive_bytes = p.device("drive").capacity
        self.host_io_time = p["host_io_time"].si

    def stages(self, volumes: dict[str, Component]) -> list[Stage]:
        """The stages that can bind (:mod:`storagelab.architectures.capacities`): host paths,
        controllers, drive channels and drives."""
        drives = [c for c in stations_and_links(list(volumes.values())) if isinstance(c, Station)]
        return [
            Stage("host paths", self.paths, "8 Gb FC host ports", cost=("host_path_rate", "host_port_overhead")),
            Stage("controllers", self.controllers, "DS5020 RAID controller (per-IO processing and internal "
                  "transfer)", cost=("controller_overhead", "controller_bandwidth")),
            Stage("drive channels", [ch for c in self.channels for ch in c], "4 Gb FC drive-side ports",
                  cost=("drive_channel_rate",)),
            Stage("drives", drives, f"{self.p['drive'].value} drives", cost=("drive",)),
        ]  # fmt: skip

    def raid_set(
        self, name: str, level: str, drives: int, controller: int = 0, first_channel: int = 0
    ) -> RaidSet:
        """``drives`` drives in ``level`` with nothing in front (no controller cache): each drive its own
        device model (a disk has its own head position), behind controller ``controller``'s drive channels
        in turn from ``first_channel``."""
        channels = self.channels[controller]
        members = [
            Path(f"{name} drive {i + 1} path", [
                channels[(first_channel + i) % len(channels)],
                Station(f"{name} drive {i + 1}", self.p.device("drive"), discipline=self.discipline),
            ])
            for i in range(drives)
        ]  # fmt: skip
        return RaidSet(f"{name} {level}", _layout(level, drives, self.segment), members)

    def volume(self, name: str, level: str, drives: int, controller: int | None = None) -> Component:
        """A volume of ``drives`` drives in ``level``, owned by controller index ``controller`` (default:
        round robin), reached through its owner's host ports and drive channels in turn."""
        c = self.count % len(self.controllers) if controller is None else controller
        self.count += 1
        n = self.on_controller[c]
        self.on_controller[c] += 1
        rset = self.raid_set(name, level, drives, c, n)
        layout = rset.layout
        parity = level != "RAID-10"
        volume_bytes = layout.usable_capacity(self.drive_bytes)
        cache = WriteBackCache(
            f"{name} write cache", rset, self.pools[c],
            volume_bytes=volume_bytes,
            destage_unit=layout.stripe_width if parity else layout.stripe_unit,
            max_destage=destage_depth(drives, self.queue_depth, drives if parity else 2),
        )  # fmt: skip
        if self.read_cache_bytes:
            cache = ReadCache(
                f"{name} read cache", cache, self.read_cache_bytes, block_bytes=int(self.p["cache_block"].si),
                hit_latency=self.read_latency, hit_bandwidth=float("inf"),
                write_policy="update",  # written data stay in controller memory, readable
                read_ahead_to=self.read_ahead_to, volume_bytes=volume_bytes, coalesce_fills=self.coalesce_fills,
            )  # fmt: skip
            self.read_caches.append(cache)
        ports = self.ports[c]
        host = Delay(f"{name} host IO stack", self.host_io_time)
        return Path(name, [host, ports[n % len(ports)], self.controllers[c], cache])


def ds5020(host_paths: int = 8, tiles: int = 4, **overrides: object) -> Topology:
    """The tile layout of Table 1: volumes ``exchange-db-1`` ... ``os-4`` for ``tiles`` tiles (4 = all
    112 drives), each owned by the controller Figure 20 gives it (:data:`CONTROLLER_A_TILES`).
    ``host_paths=4`` is the DS3950 emulation of Table 5. Any parameter of :func:`params` can be
    overridden by name (``ds5020(drive="10K SAS")``)."""
    if not isinstance(tiles, int) or not 1 <= tiles <= 4:
        raise ValueError(f"tiles must be 1..4, got {tiles!r}")
    name = f"DS5020 Express, {host_paths} host paths"
    p = ParamSet(name, params(host_paths), overrides, family=FAMILY)
    build = _Volumes(p, tiles * sum(d for _, d in TILE_LAYOUT.values()), tiles * len(TILE_LAYOUT))
    figure20 = len(build.controllers) == 2  # Figure 20's ownership; round robin on other controller counts

    def owner(kind: str, t: int) -> int | None:
        return (0 if t in CONTROLLER_A_TILES[kind] else 1) if figure20 else None

    volumes = {
        f"{kind}-{t}": build.volume(f"{kind}-{t}", level, drives, controller=owner(kind, t))
        for t in range(1, tiles + 1)
        for kind, (level, drives) in TILE_LAYOUT.items()
    }
    return Topology(name, volumes, p, roles={"read caches": build.read_caches}, stages=build.stages(volumes))


def ds5020_characterization(host_paths: int = 8, **overrides: object) -> Topology:
    """The 3.1 GB/s characterization layout: eight 4-drive RAID-10 LUNs (32 drives), ``lun-1`` ..
    ``lun-8``, through ``host_paths`` FC paths, owned by the two controllers in turn (not stated)."""
    name = f"DS5020 Express characterization, {host_paths} host paths"
    p = ParamSet(name, params(host_paths), overrides, family=FAMILY)
    build = _Volumes(p, 8 * 4, 8)
    volumes = {f"lun-{i}": build.volume(f"lun-{i}", "RAID-10", 4) for i in range(1, 9)}
    return Topology(name, volumes, p, roles={"read caches": build.read_caches}, stages=build.stages(volumes))


#: This study's presets by name, each a function of parameter overrides returning a fresh :class:`Topology`.
PRESETS: dict[str, Callable[..., Topology]] = {
    "DS5020 Express": ds5020,
    "DS3950 Express (DS5020, 4 host paths)": lambda **o: ds5020(host_paths=4, **o),
    "DS5020 characterization layout": ds5020_characterization,
}
