"""VMware Virtual SAN 5.5 on four Intel servers, in the three configurations of the reference
architectures: hybrid on Xeon E5 v2, hybrid on Xeon E5 v3 (one 800 GB S3700 SSD as read cache and
write buffer in front of four 1.2 TB 10K SAS drives per host) and "all-flash" on Xeon E5 v3 (one 800 GB
P3700 NVMe in front of four 800 GB S3500 SATA SSDs per host, which vSAN 5.5 runs as a hybrid disk group:
the study marked the S3500s as HDDs, so the P3700 is a read cache and write buffer like the S3700).

The cluster places a VM's IO: reads on one host holding a copy, writes on both copies (FTT = 1) in
parallel, complete when both are done. Each copy's path takes the vSAN software path and the 10 GbE
network (a delay with a lognormal spread, ``copy_path_share`` of it per copy, the rest once per IO:
all of it per copy, so a write waits for the slower of two draws, about 1.4 x an FTT=0 write at a
light load; the document's 'nearly doubling the write time' would need the copies one after the
other, which the sources found contradict), the host's CPU cores and then its devices. In every
configuration a read hits the host's SSD read cache (70 % of the SSD, 560
GB) with the probability an LRU cache of that size has over what the host's VMs read
(:class:`~storagelab.components.tiering.WorkingSetReadCache`: each IO class's data and share of the
reads, Che's approximation), capped by ``read_cache_resident``, the share of the data read or written
since the cache was cleared; misses read the 10K drives. In the study a host holds at most 64 x 7.5 GB
x 2 copies / 4 hosts = 240 GB, so a warm cache would hit every read; but the study cleared the caches
before each VM count, and its scenarios set the residency from that protocol
(:func:`storagelab.studies.vsan.claims.protocol_hit_ratio`). Writes land in the SSD write log
(:class:`~storagelab.components.write_log.WriteLog`), which destages them to the 10K drives in address
order. The data not yet destaged are bounded by the log congestion limits, not by the 240 GB buffer:
the E5 v3 hosts were set to 8 and 12 GB ('lsoLogCongestionLowLimitGB', 'HighLimitGB') 'to improve
performance', which helps only a log that reaches them. At 64 VMs a host takes about 7 MB/s of
writes, so its log reaches 8 GB within the 30-minute ramp; the model's log is at that level from the
start and destages one IO per write it takes that brings a block not already in it (an overwrite of a
block still in the log is absorbed: 8 GB of the 240 GB each host holds at 64 VMs, about 3 % of the
writes), at the addresses the sweep of an 8 GB log finds (a few blocks apart on the drive: cheap to a
drive that orders by rotation, which SAS drives with tagged command queuing do). Above the level the
backlog grows; at 12 GB writes are held (congestion).
In the all-flash configuration the P3700 is the same hybrid cache device (vSAN 5.5 had no all-flash
mode: the study's S3500s were 'marked as HDD', its 'disable_ssd' claim rule): 70 % of it a read cache,
its residency set by the same cache-clearing protocol, and a write log that destages to the S3500
capacity SSDs by the same mechanism (the same 8 and 12 GB limits, set on these E5 v3 hosts too; at
most 32 destage IOs queued per SSD, SATA's command queue); read misses go to the S3500s (the "Intel
DC S3500" device preset, Intel's S3500 figures: 75,000 random 4 KiB reads and 11,500 writes per
second). An SSD's time does not depend on the address, so the sweep's order does not matter to it:
each destaged write costs an S3500 its random-write time (about 0.35 ms on one of its four units),
which the read misses queued behind it wait for. (Before, every read went to the S3500s.)
The E5 v2 hosts ran ESXi 5.5 Update 1, whose own congestion limits no source found states: they take
the E5 v3 hosts' 8 and 12 GB as an assumption with its range (their own table does not set them).

The document's stripe width ('Number of Disk Stripes: 4 Disks') is not a parameter: with every VM's
objects spread over all capacity devices, striping each object over four of them leaves the load on the
devices the same, so the model stripes each host's capacity tier over all its devices.

One parameter is fitted (:func:`storagelab.studies.vsan.claims.fit`): the software/network delay, by
simulation of this preset on the all-flash IOPS at 16 VMs (the quick calibration's runs, from a bracket
that MVA of this network gives), where one IO outstanding per VM makes the IOPS a measure of latency. Every capacity comes from hardware (:meth:`Topology.capacities`): each host processes the IOs
it serves on its cores (two sockets of the processor the document names, with the cores and clock of
Intel's specifications) at a per-IO cost in CPU cycles, an assumption with its range (no figure of vSAN
5.5's era was found; the value is a later release's measurement: anywhere in the range the evidence
allows, the cores cap a host far above the 64-VM load, except at its very top), and its
10 GbE port carries their data; before, one server per host with a per-IO time fitted on the 64-VM
plateau capped every host near 13,700 visits per second whatever its hardware. The hybrids share the
delay (same vSAN version and network; the E5 v2 hosts' earlier ESXi 5.5 Update 1 build is not modelled).
Their read hit ratio is the protocol's at the model's own rate at every VM count
(:data:`storagelab.studies.vsan.claims.HIT_RATIO_METHOD`), so their IOPS at 64 VMs are predictions; the
two hybrids differ only in their processors, which are far from busy, so they predict about the same
IOPS, against 11,500 and 17,000 published.
"""

from __future__ import annotations

from collections.abc import Callable

from storagelab.architectures.capacities import Stage, stations_and_links
from storagelab.architectures.parameters import ParamSet
from storagelab.architectures.topology import Topology
from storagelab.components import raid
from storagelab.components.cluster import ReplicatedCluster
from storagelab.components.extent import Extent
from storagelab.components.flash import flash_drive
from storagelab.components.raid_set import RaidSet
from storagelab.components.tiering import ReadWriteSplit, WorkingSetReadCache
from storagelab.components.write_log import WriteLog
from storagelab.devices import SSD
from storagelab.devices.hdd import command_ordering
from storagelab.kernel import Delay, Exponential, Link, Lognormal, Path, Station
from storagelab.kernel.component import Component
from storagelab.kernel.disciplines import DISCIPLINES
from storagelab.provenance import PRESET_UNIT, Param
from storagelab.uncertainty.distributions import Choice, LogUniform, Triangular, Uniform

_DOC = "001_8f3c5816f8fbf1d5.txt (Intel + VMware Virtual SAN 5.5)"
CONFIGURATIONS = ("hybrid Xeon E5 v2", "hybrid Xeon E5 v3", "all-flash NVMe")

#: How the hybrids' 10K drives order their queued commands (parameter ``drive_ordering``): the one
#: declaration of :func:`storagelab.devices.hdd.command_ordering`, with what the manuals found say.
_ORDERING_SOURCE = (
    "drives with tagged command queuing reorder the queued commands by access time (seek plus rotational "
    "latency): shortest access time first. Maxtor Atlas 10K V product manual, 6.10 Command Reordering "
    "(manualsdump.com/en/manuals/maxtor-10k_v/146247/219): 'The drive uses Optimized Reordering Command "
    "Algorithm (ORCA) and tagged command queuing to provide greater throughput by reordering any commands "
    "queued on the drive to minimize rotational latency, seek time and head selection time' (an enterprise "
    "10K drive of an earlier generation); HGST Ultrastar C15K600 2.5-inch SAS specification (2013), 20.4: "
    "'Command reordering is supported when enabled by the Queue Algorithm Modifier in mode page 0A' "
    "(manualshelf.com/manual/hgst/c15k600-450gb-20-pack/technical-information-english-german/page-313.html). "
    "The study's Seagate ST1200MM0017 (Enterprise Performance 10K HDD v7) manual was not found to say how it "
    "orders its queue"
)

#: Why the all-flash cluster is a hybrid disk group (parameter sources).
_AF_HYBRID_MODE = (
    f". The all-flash cluster runs in this hybrid mode too: {_DOC}, All Flash Virtual SAN: 'Virtual SAN requires "
    "that a host have a minimum of one SSD for cache and one HDD for storage which precludes All Flash ... it is "
    "possible to identify SSDs as HDDs' (the 'disable_ssd' claim rule), so vSAN 5.5 treats the S3500s as "
    "capacity HDDs and the P3700 ('SSD Cache') as a hybrid cache device, a read cache and a write buffer, which "
    "the study cleared before each VM count ('the Write Buffer and Read Cache were cleared ... on each host')"
)

#: What the E5 v2 hosts' write-log limits are taken as, and why (their own table does not set them).
_UPDATE_1_LOG = (
    f". NOT the E5 v2 hosts' own setting: they ran ESXi 5.5 Update 1 (Build 1623387), and the two settings are "
    f"stated for the E5 v3 hosts on Update 2 only ({_DOC}, ESXi Versions and Optimizations: 'VMware had made some "
    "adjustments to the Virtual SAN code in this release. These changes affected congestion limits ... and were "
    "designed with smaller SSDs in mind. Intel worked with VMware's VSAN performance team and isolated two "
    "commands to improve performance'). Update 1's own limits were not found in any source. Taken as the E5 v3 "
    "hosts' values: Update 2 changed the limits for smaller SSDs than these 800 GB ones and Intel's settings undo "
    "that on them, so Update 1 (before the change) is read as having room of that order. The evidence allows "
    "from below 8 and 12 GB (Update 2's own defaults, not stated, which Intel raised) up to 16 GB, the write log's "
    "allocated limit VMware states for later releases (KB 2149127: 'the max allocated size limit (16GB)')"
)

#: The E5 v2 hosts' write-log limits' distributions, and why: the evidence (from below Update 2's 8 and 12 GB
#: up to 16 GB) split at 10 GB, so that every draw keeps the level below the high limit (the write log needs
#: a backlog >= 0).
_UPDATE_1_LEVEL = (
    ". Uncertainty: uniform on 4-10 GB: from half the E5 v3 hosts' 8 GB (Update 2's own, lower, defaults lie "
    "below it) to 10 GB, the top that stays below the high limit's range"
)
_UPDATE_1_HIGH = (
    ". Uncertainty: uniform on 10-16 GB: from 10 GB (below the E5 v3 hosts' 12, above the level's range) to "
    "the write log's 16 GB allocated limit"
)

#: The fitted value (``storagelab.studies.vsan.claims.fit()`` reproduces it; a test checks it).
FITTED_STACK_DELAY_MS = 0.5522

#: The published points each fitted value was fitted on (datasets/vsan.csv row ids).
FITTED_ON = {"stack_delay": ("vsan-af-iops-vm16",)}

#: Why the stack delay's distributions are what they are (its ``source``).
_STACK_DELAY_SPREAD = (
    ". Uncertainty: uniform on 0.548-0.554 ms, its spread from its one row: each fit seed alone (1, 2, 3) "
    "gives 0.5512, 0.5539 and 0.5518 ms (the simulation's noise: at the fitted 0.5522 ms the three quick runs "
    "give 22,264, 22,359 and 22,287 IOPS, and the IOPS fall by about 34,400 per ms of delay, measured at "
    "0.5522 and 0.5722 ms), and the row's precision ('over 22,300': taken as 22,300 to 22,400, the next "
    "hundred) lowers each by up to 0.003 ms. Prior (without the row): log-uniform on 0.1-2 ms: the delay of "
    "a guest's vSCSI path, vSAN's DOM and LSOM on two hosts and a 10 GbE round trip is at least some 0.1 ms; "
    "the document states no latency of its own beyond the shares under thresholds, so the range is an order "
    "of magnitude and more, up to 2 ms"
)

#: Each configuration's processor (document: 'CPU: Intel® Xeon® E5-2690 v2' / 'E5-2699 v3') with the
#: cores and base clock of Intel's specifications (ark.intel.com: E5-2690 v2, 10 cores, 3.00 GHz;
#: E5-2699 v3, 18 cores, 2.30 GHz).
PROCESSORS: dict[str, tuple[str, int, float]] = {
    "hybrid Xeon E5 v2": ("Xeon E5-2690 v2", 10, 3.0),
    "hybrid Xeon E5 v3": ("Xeon E5-2699 v3", 18, 2.3),
    "all-flash NVMe": ("Xeon E5-2699 v3", 18, 2.3),
}

#: CPU cycles per IO on a host that processes it: an ESXi storage IO's measured cost, as the source says.
CPU_CYCLES_PER_IO = 145_300
_CYCLES_SOURCE = (
    "CPU cycles a host spends per IO it processes (vSAN's DOM owner and component, LSOM, the vmkernel storage "
    "stack and the RDT network stack): no figure for vSAN 5.5 or ESXi 5.5 was found (searched: VMware's vSAN "
    "5.5 launch posts and their reviews, vSAN 6.0 performance papers, vSphere 5.x storage studies). The value "
    "is a measurement of a different release and scope, kept as the order of magnitude: one 4 KiB random read "
    "through an ESXi 8.0.3 storage stack, D. Kovar, 'CPU cycles required for general storage workload' "
    "(vcdx200.uw.cz/2024/12/cpu-cycles-required-for-general-storage.html): '4 KiB, 100% read, 100% random - "
    "3,813 IOPS' at '13.85% CPU = 554.0 MHz', '145.3 KHz for reading 1 IOPS' (a VM's 2 vCPUs at 2 GHz, "
    "Iometer, local NVMe: the guest's and the vmkernel's cycles charged to the VM, at a low rate, not vSAN's "
    "path on 2014 hosts). An assumption, not a fit. The range the evidence allows: from about 27,000 cycles, "
    "one IO through a SATA (AHCI) driver alone (a 2016 figure, quoted at "
    "top.parrot.ru/unidatalinechat/s2/00001/338.html: 'Divide this number by 27,000 and you know you can "
    "potentially run 81,482 IOPS on a core'), a floor for any IO that reaches a SATA device, up to about 2.3 "
    "million, where one visit would take 1 ms of a 2.3 GHz core, longer than the round trip of most of the "
    "study's IOs at four VMs (71-76.5 % under 1 ms). At 145,300 cycles a host of the study serves 413,000 "
    "(E5-2690 v2) or 570,000 (E5-2699 v3) visits per second on all its cores; at the top of the range "
    "26,000 or 36,000"
)
#: The per-IO cycles' distribution: a count takes a Choice of whole numbers, so the range 27,000 to 2.3
#: million is covered by points about a factor of two apart, the declared value among them, equally likely
#: (close to a log-uniform over the range).
CPU_CYCLES_CHOICES = (27_000, 60_000, CPU_CYCLES_PER_IO, 290_000, 580_000, 1_150_000, 2_300_000)
_CYCLES_SPREAD = (
    ". Uncertainty: one of 27,000, 60,000, 145,300, 290,000, 580,000, 1,150,000 or 2,300,000 cycles, equally "
    "likely: that range, in steps of about a factor of two (a count takes whole values; nearly log-uniform), "
    "wide because the evidence is a measurement of another release"
)


#: The name the uncertainty analysis keys every configuration's parameters by: one ESXi 5.5 / vSAN 5.5
#: software stack in three builds, so a parameter of the stack (its per-IO cycles, its delay) is one draw in
#: a scenario that builds two configurations; a parameter one configuration states and another guesses is
#: drawn only where it is a guess.
FAMILY = "Virtual SAN 5.5"


def params(configuration: str) -> dict[str, Param]:
    """The model's parameters for one configuration, each with its origin."""
    if configuration not in CONFIGURATIONS:
        raise ValueError(
            f"unknown Virtual SAN configuration {configuration!r}; known: {', '.join(CONFIGURATIONS)}"
        )
    cpu, cores, clock = PROCESSORS[configuration]
    board = "Intel S2600WT" if configuration != "hybrid Xeon E5 v2" else "Intel 2600GZ"
    e5_v3 = configuration != "hybrid Xeon E5 v2"  # the E5 v3 hybrid and the all-flash cluster: one host type
    log_origin = "document" if e5_v3 else "assumption"
    log_note = "" if e5_v3 else _UPDATE_1_LOG
    log_level_note = "" if e5_v3 else _UPDATE_1_LEVEL
    log_high_note = "" if e5_v3 else _UPDATE_1_HIGH
    p = {
        "hosts": Param(4, "count", "document", f"{_DOC}: 'spread out across all four hosts'"),
        "copies": Param(
            2, "count", "document", f"{_DOC}: 'Number of Failures to Tolerate: 1' (two copies)", high=4
        ),
        "capacity_devices_per_host": Param(
            4, "count", "document", f"{_DOC}: 16 capacity devices over 4 hosts"
        ),
        "stack_delay": Param(
            FITTED_STACK_DELAY_MS,
            "ms",
            "fit",
            "simulation of this preset, the quick calibration's three runs (storagelab."
            "studies.vsan.claims.fit), on " + ", ".join(FITTED_ON["stack_delay"]) + _STACK_DELAY_SPREAD,
            fitted_on=FITTED_ON["stack_delay"],
            capacity="time",
            uncertainty=Uniform(0.548, 0.554),
            prior=LogUniform(0.1, 2.0),
        ),
        "copy_path_share": Param(
            1.0,
            "ratio",
            "assumption",
            "share of the software and network delay spent on the path to each copy (the DOM owner's "
            "message to the host holding the copy, that host's DOM component and LSOM, and the reply), the "
            "rest spent once per IO on the VM's side (guest, vSCSI, DOM client): a read pays one copy's path, "
            "a write both copies' in parallel and completes with the slower. Parallel, not one after the "
            "other: 'VSAN knows the replicas of the virtual disk and triggers a parallel write operation to "
            "the replicas ... Once the I/O completes on all the flash devices, an acknowledgement is sent back' "
            "(Getting Started with VMware Virtual SAN, Packt 2014, ch. 6 'Anatomy of I/O'); 'from there it is "
            "sent concurrently to all the replicas' (virtualtipsntricks.com, VMware VSAN introduction). No "
            "source found splits the delay; the evidence allows 0 (all per IO: FTT=1 costs a write nothing "
            "more, against the document's 'nearly doubling the write time') to 1 (all per copy, the most a "
            "parallel write can cost: about 1.4 x at low load with this spread). Taken as 1, the end nearest "
            f"the document's statement ({_DOC}, Virtual Machines: 'every write IO is to two hosts ... nearly "
            "doubling the write time'); not chosen by trying it against the published points. Uncertainty: "
            "uniform on 0-1, the whole range that evidence allows (no source splits the delay)",
            uncertainty=Uniform(0.0, 1.0),
        ),
        "stack_delay_scv": Param(
            1.0,
            "ratio",
            "assumption",
            "squared coefficient of variation of the software "
            "and network delay: as variable as an exponential; not stated. Uncertainty: log-uniform on "
            "0.25-4, a factor of four either way of the exponential's 1: from a software path of fairly "
            "steady time (a lognormal with a coefficient of variation of 0.5) to one with a heavy tail (2); "
            "no measurement of vSAN 5.5's per-IO spread was found, so wide",
            high=100,
            uncertainty=LogUniform(0.25, 4.0),
        ),
        "host_sockets": Param(
            2,
            "count",
            "assumption",
            f"processors per host: {_DOC} names one processor model per host and a "
            f"two-socket board ('{board} Server Board'); both sockets taken as populated. Uncertainty: one of "
            "1 or 2 (weights 1, 3): the document's 'CPU:' line names one model and no count, so one populated "
            "socket is possible; two is the usual build of these boards and of a reference architecture",
            uncertainty=Choice((1, 2), (1, 3)),
        ),
        "cores_per_socket": Param(
            cores,
            "count",
            "datasheet",
            f"{_DOC}: 'CPU: Intel® {cpu}'; Intel's specification: {cores} cores",
        ),
        "core_clock": Param(
            clock,
            "GHz",
            "datasheet",
            f"{_DOC}: 'CPU: Intel® {cpu}'; Intel's specification: {clock:g} GHz base",
        ),
        "cpu_cycles_per_io": Param(
            CPU_CYCLES_PER_IO,
            "count",
            "assumption",
            _CYCLES_SOURCE + _CYCLES_SPREAD,
            capacity="time",
            uncertainty=Choice(CPU_CYCLES_CHOICES),
        ),
        "host_link_rate": Param(
            1.17,
            "GB/s",
            "device-physics",
            f"{_DOC}: 'Network: Intel® Ethernet Server Adapter X520-DA2' "
            "(10 GbE); one port carries vSAN traffic, about 1.17 GB/s of payload each way",
            capacity="rate",
        ),
        "placement": Param(
            1,
            "MiB",
            "assumption",
            "vSAN stripe/placement unit of 1 MiB; not stated. Uncertainty: one of 0.25, 1 or 4 MiB (weights 1, 2, "
            "1): VMware's later design guides give vSAN's stripe unit as 1 MB, not this document or release; a "
            "factor of four either way for what vSAN 5.5 used",
            uncertainty=Choice((0.25, 1.0, 4.0), (1, 2, 1)),
        ),
        "log_level": Param(
            8,
            "GB",
            log_origin,
            f"data the write log holds before destaging keeps pace: "
            f"{_DOC}: 'esxcfg-advcfg -s 8 /LSOM/lsoLogCongestionLowLimitGB' (set on the Xeon "
            "E5 v3 hosts 'to improve performance', so the log reaches it)" + log_note + log_level_note,
            uncertainty=None if e5_v3 else Uniform(4.0, 10.0),
        ),
        "log_high_limit": Param(
            12,
            "GB",
            log_origin,
            f"log size above which writes are held: {_DOC}: "
            "'esxcfg-advcfg -s 12 /LSOM/lsoLogCongestionHighLimitGB'" + log_note + log_high_note,
            uncertainty=None if e5_v3 else Uniform(10.0, 16.0),
        ),
    }
    # every configuration is a vSAN 5.5 hybrid disk group: one cache device (read cache and write buffer)
    # in front of four capacity devices; the all-flash one too, its S3500s marked as HDDs
    p |= {
        "read_cache_share": Param(
            0.7,
            "ratio",
            "assumption",
            "share of each cache device used as read cache, the rest the write buffer: VMware's split for "
            "hybrid disk groups (70/30); not stated in the document"
            + ("" if configuration != "all-flash NVMe" else _AF_HYBRID_MODE)
            + ". Uncertainty: triangular on 0.5-0.9, most likely 0.7: VMware's stated split is a design rule "
            "of later documentation, not of this study; a cache device's split between read cache and write "
            "buffer taken as 70 % give or take 20 points",
            high=1.0,
            uncertainty=Triangular(0.5, 0.7, 0.9),
        ),
        "read_cache_resident": Param(
            1.0,
            "ratio",
            "assumption",
            "share of the data the read cache and write "
            "buffer hold since they were last cleared, the read hit ratio when they "
            "can hold it all; 1 = warm. The study's scenarios set it from the test "
            "protocol (storagelab.studies.vsan.claims.protocol_hit_ratio). Uncertainty: uniform on 0-1, "
            "from a cache just cleared to a warm one: the preset alone does not say how long the caches have "
            "run (the study's scenarios override it with the protocol's value, which is then not drawn). A "
            "history, not hardware: a sizing comparison of systems in service takes 1 (warm) and does not draw it",
            uncertainty=Uniform(0.0, 1.0),
            history=True,
        ),
    }
    if configuration == "all-flash NVMe":
        p |= {
            "capacity_device": Param(
                "Intel DC S3500",
                PRESET_UNIT,
                "datasheet",
                f"{_DOC}: '16x 800GB Intel SSD DC S3500 Series' (Intel S3500 specification figures)",
                capacity="device",
            ),
            "capacity_queue_depth": Param(
                32,
                "count",
                "device-physics",
                "commands a SATA capacity SSD takes at once: SATA native command queuing holds at most 32; "
                "it bounds the destage IOs in flight",
                high=32,
            ),
            "cache_device": Param(
                "NVMe SSD",
                PRESET_UNIT,
                "datasheet",
                f"{_DOC}: '4x 800GB Intel SSD DC P3700 Series with NVMe' under 'SSD Cache', one per host, the "
                "disk group's cache device: read cache and write buffer (Intel P3700 datasheet figures)",
                capacity="device",
            ),
        }
    else:
        p |= {
            "cache_device": Param(
                "SATA SSD",
                PRESET_UNIT,
                "datasheet",
                f"{_DOC}: one 800 GB S3700 SSD per host "
                "as read cache and write buffer (S3700 datasheet figures)",
                capacity="device",
            ),
            "capacity_device": Param(
                "10K SAS",
                PRESET_UNIT,
                "document",
                f"{_DOC}: 1.2 TB 10K SAS drives (Savvio 10K datasheet figures)",
                capacity="device",
            ),
            "drive_ordering": command_ordering(source=_ORDERING_SOURCE),
            "drive_queue_depth": Param(
                32,
                "count",
                "assumption",
                "commands a 10K drive reorders (SAS tagged "
                "command queue), which also bounds the destage IOs in flight; not stated. Uncertainty: one of "
                "16, 32, 64 or 128 (weights 1, 2, 1, 1): the queue ESXi and the LSI 9207-8i HBA give a SAS "
                "drive and the drive's own tagged queue, not stated for this build; 32 the common default",
                high=256,
                uncertainty=Choice((16, 32, 64, 128), (1, 2, 1, 1)),
            ),
        }
    return p  # fmt: skip


def _log(name: str, ssd: SSD) -> Component:
    """A cache or write-buffer device: its frames hold whatever data is cached or buffered, so the
    datastore's addresses wrap over the device's capacity (a datastore larger than the device)."""
    drive = flash_drive(name, ssd)
    return drive if ssd.capacity is None else Extent(f"{name} frames", drive, length=ssd.capacity, wrap=True)


def vsan(configuration: str = "all-flash NVMe", **overrides: object) -> Topology:
    """A Virtual SAN datastore (volume ``datastore``) in one of :data:`CONFIGURATIONS`; any parameter
    of :func:`params` can be overridden by name (``vsan("all-flash NVMe", hosts=8)``)."""
    name = f"Virtual SAN 5.5, {configuration}"
    p = ParamSet(name, params(configuration), overrides, family=FAMILY)
    placement = int(p["placement"].si)
    per_host = int(p["capacity_devices_per_host"].value)
    nodes = []
    roles: dict[str, list[Component]] = {"drives": [], "write logs": [], "host CPUs": [], "host links": []}
    devices: dict[str, list[Component]] = {"cache": []}
    cores = int(p["host_sockets"].value * p["cores_per_socket"].value)
    cpu_time = p["cpu_cycles_per_io"].value / p["core_clock"].si  # s per visit on one core
    share, scv = float(p["copy_path_share"].value), p["stack_delay_scv"].value
    delay = p["stack_delay"].si
    copy_delay = Lognormal(delay * share, scv) if share > 0 else None  # per copy, in each host's path
    level = int(p["log_level"].si)
    backlog = int(p["log_high_limit"].si) - level
    if backlog < 0:
        raise ValueError(
            f"preset {name!r}: log_high_limit ({p['log_high_limit'].value:g} GB) must be at least log_level "
            f"({p['log_level'].value:g} GB): writes are held at the high limit, above the level destage starts at"
        )
    for h in range(1, int(p["hosts"].value) + 1):
        cache_name = "P3700" if configuration == "all-flash NVMe" else "S3700"
        ssd = _log(f"host {h} {p.device_label('cache_device', cache_name)} cache", p.device("cache_device"))
        devices["cache"].append(ssd)
        if configuration == "all-flash NVMe":  # the S3500s, marked as HDDs: the disk group's capacity tier
            label = p.device_label("capacity_device", "S3500")
            members = [Station(f"host {h} {label} {i}", p.device("capacity_device")) for i in range(per_host)]
            roles.setdefault("capacity SSDs", []).extend(members)
            depth = int(p["capacity_queue_depth"].value)
        else:
            ordering = str(p["drive_ordering"].value)
            depth = int(p["drive_queue_depth"].value)
            members = []  # each drive a fresh device: its head and platter are its own
            for i in range(per_host):
                order = DISCIPLINES[ordering]() if ordering == "fifo" else DISCIPLINES[ordering](depth=depth)
                label = p.device_label("capacity_device", "10K")
                members.append(
                    Station(f"host {h} {label} {i}", p.device("capacity_device"), discipline=order)
                )
            roles["drives"] += members
        capacity = RaidSet(f"host {h} capacity tier", raid.Raid0(per_host, placement), members)
        cache_bytes = int(p.device("cache_device").capacity * p["read_cache_share"].value)
        reads = WorkingSetReadCache(f"host {h} read cache", ssd, capacity, cache_bytes,
                                    resident_share=float(p["read_cache_resident"].value))  # fmt: skip
        log = WriteLog(f"host {h} write log", ssd, capacity, level_bytes=level, backlog_bytes=backlog,
                       max_destage=per_host * depth)  # fmt: skip
        roles["write logs"].append(log)
        tier = ReadWriteSplit(f"host {h} tiers", reads, log)
        nic = Link(f"host {h} 10GbE", p["host_link_rate"].si)
        cpu = Station(f"host {h} CPU cores", Exponential(cpu_time), servers=cores)
        roles["host CPUs"].append(cpu)
        roles["host links"].append(nic)
        path = (
            [nic, cpu, tier]
            if copy_delay is None
            else [Delay(f"host {h} copy path", copy_delay), nic, cpu, tier]
        )
        nodes.append(Path(f"host {h}", path))
    copies = int(p["copies"].value)
    if copies > len(nodes):
        raise ValueError(f"preset {name!r}: copies ({copies}) cannot exceed hosts ({len(nodes)})")
    cluster = ReplicatedCluster(
        "vSAN cluster", nodes, replicas=copies, placement_bytes=placement, compact=True
    )
    per_io = [] if share >= 1 else [Delay("vSAN client path", Lognormal(delay * (1 - share), scv))]
    datastore = Path("datastore", [*per_io, cluster])
    cpu, spec_cores, spec_clock = PROCESSORS[configuration]
    if (p["cores_per_socket"].value, p["core_clock"].value) != (spec_cores, spec_clock):  # overridden: say so
        cpu = f"processor in place of the {cpu} ({spec_cores} cores at {spec_clock:g} GHz)"
    stages = [
        Stage("host 10 GbE port", roles["host links"], "Intel X520-DA2, one 10 GbE port per host",
              cost=("host_link_rate",)),
        Stage("host CPU cores", roles["host CPUs"], f"{int(p['host_sockets'].value)} x Intel {cpu}: {cores} cores "
              f"at {p['core_clock'].value:g} GHz per host", cost=("cpu_cycles_per_io", "core_clock"),
              concurrency=("host_sockets", "cores_per_socket")),
    ]  # fmt: skip
    if configuration == "all-flash NVMe":
        stages += [
            Stage("NVMe cache", stations_and_links(devices["cache"]),
                  f"{p['cache_device'].value} (the study's Intel DC P3700 800 GB: read cache and write buffer), "
                  "one per host", cost=("cache_device",)),
            Stage("capacity SSDs", roles["capacity SSDs"], f"{p['capacity_device'].value}, {per_host} per host",
                  cost=("capacity_device",)),
        ]  # fmt: skip
    else:
        stages += [
            Stage("cache SSD", stations_and_links(devices["cache"]),
                  f"{p['cache_device'].value} (the study's Intel DC S3700 800 GB), one per host",
                  cost=("cache_device",)),
            Stage("capacity drives", roles["drives"], f"{p['capacity_device'].value} drives, {per_host} per host",
                  cost=("capacity_device",)),
        ]  # fmt: skip
    return Topology(name, {"datastore": datastore}, p, roles=roles, stages=stages)


#: This study's presets by name, each a function of parameter overrides returning a fresh :class:`Topology`.
PRESETS: dict[str, Callable[..., Topology]] = {
    f"Virtual SAN 5.5, {c}": (lambda c=c, **o: vsan(c, **o)) for c in CONFIGURATIONS
}
