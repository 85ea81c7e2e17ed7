"""NexGen N5-150 hybrid flash array as the Principled Technologies reference architecture ran it: 2.4 TB
of PCIe flash (ioMemory) in front of 16 x 3 TB 7.2K NL-SAS drives, two active-active storage processors,
four 10 GbE iSCSI ports, and the study's six LUNs, each on its storage processor with its QoS policy
(Figure 9).

An IO crosses an iSCSI port of its LUN's storage processor (FIFO at the 10 GbE payload rate), the
storage processor (one queue: its per-IO time and internal transfer; with ``qos=1`` the queue is
ordered by the LUNs' service levels, :class:`~storagelab.qos.ServiceLevels`, else first come first
served), then the tiers. Each storage processor has its own ioMemory card and the cards' contents are
kept in step, so a write lands on both cards (the test writes about 100 GB over 90 minutes, far less
than the flash holds; ``flash_destage=1`` also writes a copy to the drives, gathered into sequential
destage writes behind the acknowledgement, since the N5's destage policy is not stated); a read is served by the processor's card when the flash tier
holds its block and by the drives otherwise. The cards' frames are reused whatever the data's LUN address
(the flash is a tier of hot data, not an address range), so how much data the array holds is bounded by
the drives: 16 x 3 TB in RAID-10, 24 TB. The N5 copies to flash the blocks that are read very often,
and one tier of ``flash_capacity`` holds them for every LUN (the cards are in step). Which data it admits
is a property of each data set (``flash_resident_images``, ``flash_resident_databases``): the desktops'
master images, each read by 150 clones at every boot, and their change disks are admitted (warm); the
databases' pages, each read about once in hours, are not (cold: their reads go to the drives). Of the
admitted data, each data set's hit ratio follows from its size and read rate against the capacity as an
LRU's steady state (:class:`~storagelab.components.tiering.WorkingSetReadCache`, ``placement``). A read the
flash does not serve goes to its LUN's own region of the drives' pool: Figure 9's six LUNs laid in its
order as provisioned, each byte of a LUN spanning ``pool_stretch`` bytes of the pool (1: end to end; up to
9: over the whole pool), not all LUNs at the pool's first bytes. The
4 x 24 GB master images fit the 2.4 TB; in the Login VSI window the desktops' change disks (600 x 4 GB)
do not, and the tier keeps what is read most often per byte.

OLTP runs in four SQL Server VMs whose 16 vCPUs are a station every OLTP IO passes first (the engine's
work per page), and with ``host_cache=1`` (scenario 2) each VM's database disk is cached by ioTurbine on
the host's ioDrive2 (:mod:`storagelab.architectures.host_cache`), warm (``host_cache_warm=0``: cold, block by block).
The DVD-SQL LUN's latency as the array sees it (below the vCPUs and the host cache: what the N5's own
statistics and its QoS latency targets refer to) is measured by the part ``"oltp array response"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from simpy.events import Event

from storagelab.architectures.capacities import Stage, stations_and_links
from storagelab.architectures.host_cache import card_bytes, guest_caches, host_cache_params
from storagelab.architectures.parameters import ParamSet
from storagelab.architectures.topology import Topology
from storagelab.components import raid
from storagelab.components.cache import WriteBackBuffer
from storagelab.components.data_reduction import WriteCoalescer
from storagelab.components.extent import Extent, Lun
from storagelab.components.flash import flash_drive
from storagelab.components.raid_set import RaidSet
from storagelab.components.tiering import ReadWriteSplit, WorkingSetReadCache
from storagelab.devices.hdd import command_ordering
from storagelab.kernel import Component, Deterministic, Link, Mirror, Path, ResponseTimeProbe, Station
from storagelab.kernel.component import EventLike, Signal, fire
from storagelab.kernel.io import IORequest
from storagelab.provenance import PRESET_UNIT, Param
from storagelab.qos import ServiceLevels
from storagelab.studies.nexgen.policies import LUN_POLICY, lun_levels
from storagelab.uncertainty import Choice, LogUniform, Uniform
from storagelab.workloads.catalogue.oltp import IOS_PER_ORDER

_DOC = "000_95d1997ae9f905ef.txt (NexGen N5, Principled Technologies)"
_KIC = ("keepingitclassless.net, 'NexGen Storage (Part 1) - Solution Overview' (Jan 2013): 'it does read caching "
        "so that when there's a particular block that's getting read very often, it's copied to the SSD so that the "
        "spinning disks don't have to be bothered as much'")  # fmt: skip
_SFD3 = ("virtualtothecore.com, '#SFD3: An analysis of NexGen Storage': 'The models offers speed ranging from "
         "50k to 150k IOPS (4k, 50/50 read-write)'; 'Each controller has on-board non-shared Fusion-IO cards, and "
         "their content is syncronized between controllers in real time'")  # fmt: skip

#: The study's LUNs (Figure 9) as the model's volumes: DVD-SQL, Exchange and the four VDI LUNs.
VOLUMES = tuple(LUN_POLICY)
VDI_LUNS = ("vdt-a", "vdt-b", "vdt-c", "vdt-d")
#: SQL Server CPU per page IO (us), fitted by arithmetic on scenario 2's OPM (the midpoint of 35,000-40,000):
#: with the host cache warm the 16 vCPUs bound the order rate, 16 / (18 IOs x c) orders/s = 37,500 / 60
#: (:data:`storagelab.workloads.catalogue.oltp.IOS_PER_ORDER`, 18, fitted on the same scenario).
#: ``tests/test_host_cache.py`` re-derives it and checks that the simulated OPM is that bound.
SQL_CPU_PER_IO_US = 16 * 60 / (IOS_PER_ORDER * 37_500) * 1e6
#: The SQL Server VMs whose database disks ioTurbine caches (Figure 53: SQL01-04).
SQL_VMS = 4
#: The LUNs' provisioned sizes (GB), in Figure 9's order: 'Exchange 450', 'DVD-SQL 500', 'VDT-A 400' ..
#: 'VDT_D 400'. The drives' pool holds each LUN's data in a region of its own (see :class:`_PoolLayout`).
LUN_SIZES_GB = {"exchange": 450, "oltp": 500, "vdt-a": 400, "vdt-b": 400, "vdt-c": 400, "vdt-d": 400}


def params() -> dict[str, Param]:
    """The model's parameters, each with its origin."""
    return {
        "qos": Param(0, "count", "document", f"{_DOC}, Figure 9: the LUNs' QoS policies; 1 = on as in the study, "
                     "0 = off (first come first served at the storage processors)", choices=(0, 1), low=0),
        "hdd_count": Param(16, "count", "document", f"{_DOC}, Figure 51: 'Number of disks 16'"),
        "hdd": Param("7.2K NL-SAS", PRESET_UNIT, "document", f"{_DOC}, Figure 51: 'Disk RPM 7200' (device preset "
                     "'7.2K NL-SAS')", capacity="device"),
        "hdd_raid": Param(10, "count", "assumption", "drives in RAID-10 (10 = RAID-10); the layout is not stated. "
                          "Uncertainty: only 10, as the model builds RAID-10 alone (a parity layout would need another "
                          "model, not a draw); the document's silence would also allow RAID-5/6",
                          choices=(10,), uncertainty=Choice((10,))),
        "flash_capacity": Param(2.4, "TB", "document", f"{_DOC}: '2.4TB ioMemory flash capacity'"),
        "flash_device": Param("NVMe SSD", PRESET_UNIT, "datasheet", "each processor's ioMemory card modelled with "
                              "the 'NVMe SSD' preset (Intel P3700 datasheet figures) as a stand-in", capacity="device"),
        "iscsi_ports": Param(4, "count", "document", f"{_DOC}: 'We then connected the four 10Gbps links'"),
        "port_rate": Param(1.17, "GB/s", "device-physics", "10 GbE carries about 1.17 GB/s of iSCSI payload",
                           capacity="rate"),
        "processors": Param(2, "count", "document", f"{_DOC}, Figure 51: two storage processors, active-active",
                            choices=(2,)),
        "processor_iops": Param(75_000, "IOPS", "datasheet", f"the N5-150's rating of 150,000 IOPS at 4 KiB, 50/50 "
                                f"read/write, shared by its two processors ({_SFD3})", capacity="rate"),
        "processor_bandwidth": Param(4, "GB/s", "assumption", "each storage processor's internal transfer rate: "
                                     "set above the 2.34 GB/s of the two 10 GbE ports it serves, so that it never "
                                     "binds; not stated. Range 2.34-8 GB/s (log-uniform): from the two ports' "
                                     "payload (a processor that could not fill its own ports is not what is sold) to "
                                     "a PCIe Gen2 x16 or memory-bound controller of the era; only the 4 KiB transfer's "
                                     "share of the per-IO time (0.5-1.75 us of 13.3 us) moves with it",
                                     capacity="rate", uncertainty=LogUniform(2.34, 8.0)),
        "stripe_unit": Param(64, "KiB", "assumption", "HDD stripe unit; not stated. One of 32-256 KiB, the "
                             "stripe units arrays of the era default to (equally likely)",
                             uncertainty=Choice((32, 64, 128, 256))),
        "drive_ordering": command_ordering(source=(
            "the 7.2K NL-SAS drives queue commands (SAS tagged command queuing) and order them by access time "
            "(seek and rotation), as drives of the era with rotational position ordering do; the same declaration "
            "as every preset's drives (devices.hdd.command_ordering). The document does not say; the LOOK elevator "
            "hard-coded before was no documented choice"
        )),
        "flash_resident_images": Param(1.0, "ratio", "assumption", f"{_DOC}: 'utilizing real time data placement' "
                                       f"and {_KIC}: the flash tier copies the blocks that are read very often. "
                                       "The desktops' data (each pool's 24 GB master image, read by its 150 clones "
                                       "at every boot, and their change disks) is such data: the share of it the "
                                       "tier admits, 1 = all of it (the tier is warm: the tests were repeated and "
                                       "the desktops booted before each); how much of it stays resident follows "
                                       "from its size and read rate against the flash capacity (an LRU's steady "
                                       "state). Evidence allows 0.5-1 (a boot reads part of its image; which part "
                                       "is not stated); the N5's promotion rule is not stated anywhere reachable. "
                                       "Uncertainty: uniform on that 0.5-1",
                                       low=0.0, high=1.0, uncertainty=Uniform(0.5, 1.0)),
        "flash_resident_databases": Param(0.0, "ratio", "assumption", f"{_KIC}: only blocks 'read very often' are "
                                          "copied to the flash. The databases' pages are not: DVD Store reads 200 GB "
                                          "(4 x 50 GB, 24 million 8 KiB pages) at random and LoadGen 40 GB of "
                                          "mailboxes, so a page is read about once in hours, against a 90-minute "
                                          f"test ({_DOC}, DVD Store: 'Actual test run time: 90 minutes', 'Warm-up "
                                          "time: 15 minutes'). The share of the DVD-SQL and Exchange LUNs' data "
                                          "the tier admits: 0 = none (they read from the NL-SAS drives). Evidence "
                                          "allows 0 (promotion after repeated reads, as the source says) to about "
                                          "0.4 (promotion on a first read: the share of pages read once since the "
                                          "105 minutes of warm-up and test began). Uncertainty: uniform on that 0-0.4",
                                          low=0.0, high=1.0, uncertainty=Uniform(0.0, 0.4)),
        "flash_destage": Param(0, "count", "assumption", "whether the writes that land on the flash are also "
                               "written to the NL-SAS drives during the test (1: destaged continuously, coalesced "
                               "into destage_segment writes at the head of a log on the RAID-10 set, behind the "
                               "acknowledgement; 0: held in the flash for the test, as a tier of 2.4 TB holds the "
                               "about 100 GB the 90-minute test writes). The N5's destage policy is not stated; "
                               f"{_DOC} says only 'real time data placement'. Uncertainty: 0 or 1, equally likely (the "
                               "document leaves the policy open either way)", choices=(0, 1), low=0,
                               uncertainty=Choice((0, 1))),
        "destage_segment": Param(1, "MiB", "assumption", "the size of one destage write to the drives (writes "
                                 "gathered and written sequentially); not stated. Used only with flash_destage=1. One of "
                                 "256 KiB-4 MiB, the segment sizes of log-structured destage in arrays of the era "
                                 "(equally likely)", uncertainty=Choice((0.25, 0.5, 1, 2, 4))),
        "destage_delay": Param(1.0, "s", "assumption", "longest a write waits to be gathered into a destage write; "
                               "not stated. Used only with flash_destage=1. Log-uniform on 0.1-10 s: write-gathering timers "
                               "run from a fraction of a second to seconds; nothing narrows it",
                               uncertainty=LogUniform(0.1, 10.0)),
        "pool_stretch": Param(1.0, "ratio", "assumption", f"{_DOC}, Figure 9: the six LUNs (Exchange 450 GB, DVD-SQL "
                              "500 GB, VDT-A..D 400 GB each) are volumes of the one pool of 16 NL-SAS drives, so each "
                              "holds its data in a region of its own, not all at the pool's first bytes. They are laid "
                              "in Figure 9's order, and one byte of a LUN's address space spans pool_stretch bytes of "
                              "the pool: 1 = end to end as provisioned (2,550 GB of the 24 TB); 9 = spread over the "
                              "whole pool (2,550 GB x 9 = 23 TB), as a thin pool that places its pages across all of "
                              "its space would. The N5's page placement is not stated (the LUNs are thin: 'We "
                              "provisioned LUNs with the NexGen N5 GUI'). It sets how far the drives seek between the "
                              "databases' cold reads. Uncertainty: log-uniform on 1-9, that range",
                              low=1.0, high=9.0, uncertainty=LogUniform(1.0, 9.0)),
        "sql_vcpus": Param(16, "count", "document", f"{_DOC}, Figure 53: 'SQL01-04 4 ... 4' (four VMs of 4 vCPUs)"),
        "sql_cpu_per_io": Param(SQL_CPU_PER_IO_US, "us", "fit", "SQL Server CPU per database page IO (one vCPU "
                                "busy that long): fitted on scenario 2's 35,000-40,000 OPM (s2-opm-lo/hi; the "
                                "midpoint, 37,500), where the warm host cache leaves the vCPUs as the bound. Uncertainty: "
                                "uniform between what each fitted row alone gives, 16 x 60 / (18 x 40,000) = 1,333 us "
                                "(s2-opm-hi) and 16 x 60 / (18 x 35,000) = 1,524 us (s2-opm-lo), the range the study "
                                "states (the model's noise is nil here: the bound is arithmetic). Prior (without those "
                                "rows): log-uniform on 100-8,000 us: scenario 1's own OPM (about 6,500) runs the same "
                                "16 vCPUs below saturation, so at most 16 / (6,500 / 60 x 18) = 8.2 ms per IO; below, "
                                "only that a DVD Store order (18 page IOs) costs SQL Server at least about 2 ms of CPU",
                                fitted_on=("s2-opm-lo", "s2-opm-hi"), capacity="time",
                                uncertainty=Uniform(16 * 60 / (IOS_PER_ORDER * 40_000) * 1e6,
                                                    16 * 60 / (IOS_PER_ORDER * 35_000) * 1e6),
                                prior=LogUniform(100.0, 8000.0)),
        "host_cache": Param(0, "count", "document", f"{_DOC}, scenario 2: 'ioTurbine: Guest-based cache enabled' "
                            "(1; 0: scenario 1, no host cache)", choices=(0, 1), low=0),
        "host_cache_hit_ratio": Param(1.0, "ratio", "assumption", "the host cache is warm: each VM's 50 GB database "
                                      "disk fits its quarter of the 785 GB card, and the study ran 15 minutes of "
                                      "warm-up before 90 of test (notebook 18 shows how long a cold cache takes). Uncertainty: "
                                      "uniform on 0.7-1: 1 when the disks were read whole before (the tests were "
                                      "repeated); about 0.7 when the cache started empty at the warm-up: a VM's "
                                      "2,500 reads/s over its 6.1 million pages cover 1 - exp(-r t / N) of them, on "
                                      "average 0.72 over the 90-minute test after 15 minutes of warm-up. A "
                                      "history, not hardware: a sizing comparison takes 1 (warm) and does not draw it",
                                      uncertainty=Uniform(0.7, 1.0), history=True),
        "host_cache_warm": Param(1, "count", "assumption", "1: the cache in steady state at host_cache_hit_ratio; 0: "
                                 "block caches (LRU) that start empty and warm up during the run. Uncertainty: only 1: a "
                                 "cache cold at the study's start is host_cache_hit_ratio's low end; a cache cold at "
                                 "the start of the simulated window (70 s, not the study's 105 minutes) would model "
                                 "another test", choices=(0, 1), low=0, uncertainty=Choice((1,))),
        **host_cache_params(),
    }  # fmt: skip


class _ProcessorCard(Component):
    """The ioMemory card of the processor that owns the IO's LUN (``card_of``: LUN number -> card)."""

    def __init__(self, name: str, card_of: Mapping[int, Component]) -> None:
        super().__init__(name)
        self.card_of = dict(card_of)

    def children(self) -> list[Component]:
        return list({id(c): c for c in self.card_of.values()}.values())

    def submit(self, io: IORequest) -> Event:
        return self.card_of[io.volume].submit(io)


#: The pool's allocation unit (B) in :class:`_PoolLayout`: a LUN's 1 MiB pages are placed whole, so an IO
#: keeps its alignment within a page (the N5's page size is not stated; 1 MiB is a whole number of any
#: stripe unit the model allows).
POOL_PAGE = 1 << 20


class _PoolLayout(Component):
    """The drives' pool as the LUNs occupy it: page ``p`` (:data:`POOL_PAGE`) of LUN number ``n`` is page
    ``floor(p x stretch)`` of its region, which starts at byte ``offsets[n]`` of ``target``; the byte's place
    within its page is kept. Modulo the pool's ``capacity`` (a LUN whose data runs past the pool's end
    wraps to its start, as a full thin pool would place it)."""

    def __init__(
        self, name: str, target: Component, offsets: Mapping[int, int], stretch: float, capacity: int
    ) -> None:
        super().__init__(name)
        if stretch < 1.0 or capacity <= 0:
            raise ValueError(f"{name}: stretch must be >= 1 and capacity > 0, got {stretch!r}, {capacity!r}")
        self.target, self.offsets, self.stretch, self.capacity = target, dict(offsets), stretch, capacity

    def children(self) -> list[Component]:
        return [self.target]

    def submit(self, io: IORequest) -> EventLike:
        page, within = divmod(io.address, POOL_PAGE)
        a = (self.offsets[io.volume] + int(page * self.stretch) * POOL_PAGE + within) % self.capacity
        # a member IO at the pool's address: ``io`` keeps the LUN's, which the caches above read again when
        # it completes (the host cache fills its card at it)
        done = Signal(self.env)
        member = io.child(address=a if a + io.size <= self.capacity else 0)
        self.target.submit(member).callbacks.append(partial(_fire_parent, io, done))
        return done


def _fire_parent(io: IORequest, done: Signal, _ev: EventLike) -> None:
    """Complete ``done`` with ``io`` once its member IO has completed."""
    fire(done, io)


def lun_offsets(pool_bytes: int, stretch: float) -> dict[str, int]:
    """Where each LUN's region starts in the drives' pool (bytes, a whole number of :data:`POOL_PAGE`):
    Figure 9's LUNs in its order, each ``stretch x`` its provisioned size (:data:`LUN_SIZES_GB`), wrapped at
    ``pool_bytes``."""
    offsets, at = {}, 0
    for lun, gb in LUN_SIZES_GB.items():
        offsets[lun] = int(at) // POOL_PAGE * POOL_PAGE % pool_bytes
        at += gb * 10**9 * stretch
    return offsets


def processor_time(p: ParamSet) -> float:
    """A storage processor's per-IO time (s): its share of the rated IOPS at 4 KiB, less the 4 KiB's
    internal transfer (so that 4 KiB IOs run at exactly the rating)."""
    return 1.0 / p["processor_iops"].si - 4096 / p["processor_bandwidth"].si


def nexgen(*, processor_of: Mapping[str, str] | None = None, **overrides: object) -> Topology:
    """The N5-150 with volumes ``oltp`` (DVD-SQL), ``exchange`` and ``vdt-a`` .. ``vdt-d``; QoS off by
    default (``nexgen(qos=1)``: the study's policies); any parameter of :func:`params` can be overridden
    by name (``nexgen(hdd_count=32)``). ``processor_of`` moves LUNs to another storage processor
    (``{"vdt-a": "A"}``; Figure 9's layout otherwise)."""
    layout = {lun: sp for lun, (_policy, sp) in LUN_POLICY.items()}
    for lun, sp in (processor_of or {}).items():
        if lun not in layout or sp not in ("A", "B"):
            raise ValueError(
                f"preset 'NexGen N5-150': processor_of maps a LUN ({', '.join(layout)}) to 'A' or 'B', got {lun!r}: {sp!r}"
            )
        layout[lun] = sp
    p = ParamSet("NexGen N5-150", params(), overrides)
    qos = bool(p["qos"].value)
    name = f"NexGen N5-150 (QoS {'on' if qos else 'off'})"
    per_io, rate = processor_time(p), p["processor_bandwidth"].si
    if per_io <= 0:
        raise ValueError(f"preset {name!r}: processor_iops is above what processor_bandwidth moves at 4 KiB")

    def service(io: IORequest, _rng: object) -> float:
        return per_io + io.size / rate

    processors = "AB"[: int(p["processors"].value)]  # the LUNs name processor A or B (Figure 9)
    levels = lun_levels()
    sps = {
        sp: Station(f"storage processor {sp}", service, servers=1,
                    discipline=ServiceLevels(levels, key=lambda io: VOLUMES[io.volume]) if qos else None)
        for sp in processors
    }  # fmt: skip
    n_ports = int(p["iscsi_ports"].value)
    ports = [Link(f"10GbE port {i + 1}", p["port_rate"].si) for i in range(n_ports)]
    # components are named by the devices they are: the study's words for its default devices ('ioMemory',
    # 'NL-SAS', 'ioDrive2'), the device preset's name for an overriding one
    flash, hdd = p.device_label("flash_device", "ioMemory"), p.device_label("hdd", "NL-SAS")
    cards, card_units = {}, []
    for sp in "AB":
        ssd = p.device("flash_device")
        ssd.capacity = int(p["flash_capacity"].si)
        # the tier's frames hold the hot data and the writes whatever their LUN address: the volumes'
        # addresses wrap over the 2.4 TB (the drives, RAID-10, bound how much data the array holds)
        card = flash_drive(f"{flash} {sp}", ssd)
        card_units.append(card.backend if isinstance(card, WriteBackBuffer) else card)  # the card's flash
        cards[sp] = Extent(f"{flash} {sp} frames", card, length=ssd.capacity, wrap=True)
    n_hdd = int(p["hdd_count"].value)
    if p["hdd_raid"].value != 10 or n_hdd % 2:
        raise ValueError(f"preset {name!r}: RAID-10 needs an even hdd_count, got {n_hdd}")
    drives = [p.device("hdd") for _ in range(n_hdd)]
    ordering = str(p["drive_ordering"].value)
    hdds = [Station(f"{hdd} {i + 1}", d, discipline=ordering) for i, d in enumerate(drives)]
    disks = RaidSet(f"{hdd} RAID-10", raid.Raid10(n_hdd // 2, int(p["stripe_unit"].si)), hdds)
    # both cards hold every write; with flash_destage a copy is gathered into sequential writes to the
    # drives, behind the acknowledgement (the coalescer accepts at once, so the cards set the write time)
    landing: list[Component] = [cards["A"], cards["B"]]
    destage = None
    segment, delay = int(p["destage_segment"].si), p["destage_delay"].si
    if int(p["flash_destage"].value):
        destage = WriteCoalescer(f"destage to {hdd}", disks, segment_bytes=segment, max_delay=delay)
        landing.append(destage)
    writes = Mirror(f"{flash} A + B", landing)
    pool = disks.layout.usable_capacity(drives[0].capacity)  # 24 TB: 16 x 3 TB in RAID-10
    # the flash tier: the cards hold the same data (kept in step), so one tier of flash_capacity holds the
    # blocks of every LUN; each data set's share of its reads served from flash follows from its size and
    # read rate against that capacity (an LRU's steady state); a hit is read from the card of the LUN's
    # processor, a miss from the drives
    card_of = {VOLUMES.index(vol): cards[layout[vol]] for vol in VOLUMES}
    # which data the tier admits, per class (named after its LUN): the desktops' images and change disks
    # (read very often) and the databases (each page read seldom)
    images, databases = float(p["flash_resident_images"].value), float(p["flash_resident_databases"].value)
    placement = {lun: images for lun in VDI_LUNS} | {"oltp": databases, "exchange": databases}
    # a read the flash does not serve goes to the LUN's own region of the drives' pool (Figure 9's LUNs)
    stretch = float(p["pool_stretch"].value)
    offsets = {VOLUMES.index(lun): off for lun, off in lun_offsets(pool, stretch).items()}
    pooled = _PoolLayout(f"{hdd} pool (LUN regions)", disks, offsets, stretch, pool)
    reads = WorkingSetReadCache(
        f"{flash} read tier", _ProcessorCard(f"{flash} of the LUN's processor", card_of), pooled,
        int(p["flash_capacity"].si), placement=placement,
    )  # fmt: skip
    volumes, on_sp = {}, {"A": 0, "B": 0}
    for vol in VOLUMES:
        sp = layout[vol]
        port = ports[("AB".index(sp) * n_ports // 2 + on_sp[sp] % (n_ports // 2)) % n_ports]
        on_sp[sp] += 1
        path = Path(vol, [port, sps[sp], ReadWriteSplit(f"{vol} tiers", reads, writes)])
        # QoS policies are the LUNs' (Figure 9); each LUN is thin in the drives' pool, which bounds its data
        volumes[vol] = Lun(f"LUN {vol}", VOLUMES.index(vol), path, capacity=pool)
    # the SQL host: vCPUs first, then (scenario 2) each VM's ioTurbine cache on the host's ioDrive2
    vcpus = Station(
        "SQL Server vCPUs", Deterministic(p["sql_cpu_per_io"].si), servers=int(p["sql_vcpus"].value)
    )
    cache_on = bool(p["host_cache"].value)
    card_device = p.device("host_cache_card")
    card_label = p.device_label("host_cache_card", "ioDrive2")
    hit_ratio, share = p["host_cache_hit_ratio"].value, p["host_cache_share"].value
    warm = bool(p["host_cache_warm"].value)
    guest_bytes, block = int(p["host_cache_guest_disk"].si), int(p["host_cache_block"].si)
    # the card's bytes the caches share (host_cache_capacity; 0: the card's own), needed with the cache on
    card_size = card_bytes(p, card_device) if cache_on else p["host_cache_capacity"].si
    # the array's own view of the DVD-SQL LUN's latency (what its UI reports and its QoS targets): below
    # the SQL vCPUs and the host cache
    oltp = ResponseTimeProbe("LUN oltp response time", volumes["oltp"])
    parts: dict[str, Component] = {"oltp array response": oltp, "flash read tier": reads}
    if destage is not None:
        parts["destage"] = destage
    if cache_on:
        card = Station(f"{card_label} (SQL host)", card_device)
        caches = guest_caches(
            "ioTurbine", oltp, card, guests=SQL_VMS, guest_bytes=guest_bytes,
            cache_bytes=int(card_size * share / SQL_VMS), block_bytes=block,
            warm_hit_ratio=hit_ratio if warm else None,
        )  # fmt: skip
        oltp, parts = caches, {**parts, "host cache": caches, "cache card": card}
        name += " + ioTurbine"
    volumes["oltp"] = Path("oltp host", [vcpus, oltp])
    roles: dict[str, list[Component]] = {
        "drives": hdds, "front end": [*ports, *sps.values(), *card_units], "host vCPUs": [vcpus],
    }  # fmt: skip
    stages = [
        Stage("10 GbE iSCSI ports", ports, "10 GbE ports of the storage processors", cost=("port_rate",)),
        Stage("storage processors", list(sps.values()), "N5 storage processors, active-active (one per LUN)",
              cost=("processor_iops", "processor_bandwidth")),
        Stage("flash cards", stations_and_links(list(cards.values())), f"{p['flash_device'].value} (standing in for Fusion-io ioMemory), one per processor",
              cost=("flash_device",)),
        Stage("drives", hdds, f"{n_hdd} x {p['hdd'].value} drives, RAID-10", cost=("hdd",)),
        Stage("SQL Server vCPUs", [vcpus], "4 SQL Server VMs x 4 vCPUs", cost=("sql_cpu_per_io",),
              concurrency=("sql_vcpus",), saturates="s2-opm-lo",
              note="fitted where the warm host cache leaves the vCPUs as the bound (scenario 2's OPM)"),
    ]  # fmt: skip
    if cache_on:
        stages.append(
            Stage("host cache card", [card], "Fusion-io ioDrive2 in the SQL host", cost=("host_cache_card",))
        )
    return Topology(name, volumes, p, parts=parts, roles=roles, stages=stages)


#: This study's presets by name, each a function of parameter overrides returning a fresh :class:`Topology`.
PRESETS: dict[str, Callable[..., Topology]] = {"NexGen N5-150": nexgen}

#: Where each workload kind of a comparison goes on the N5's volumes (Figure 9): databases on their LUNs,
#: desktops over the four VDI LUNs; what the study did not run goes on the Exchange LUN's processor side (an
#: assumption).
PLACEMENTS: dict[str, dict[str, list[str]]] = {
    "NexGen N5-150": {
        "oltp": ["oltp"], "exchange": ["exchange"], "boot_storm": ["vdt-a", "vdt-b", "vdt-c", "vdt-d"],
        "vdi_steady": ["vdt-a", "vdt-b", "vdt-c", "vdt-d"], "web": ["exchange"], "scan": ["exchange"],
        "backup": ["exchange"],
    }
}  # fmt: skip
