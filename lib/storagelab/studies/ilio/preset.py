"""Dell EqualLogic PS6100E as the ILIO study used it: 24 x 7.2K NL-SAS drives in RAID-10 behind one
active controller with a write-back cache, reached over 1 GbE iSCSI; optionally behind Atlantis ILIO
on the desktop host: inline deduplication and compression in the ILIO VM's RAM, where the desktops'
shared image lives, and write coalescing of the unique data that Fast Replication sends to the array
(:mod:`storagelab.components.data_reduction`). The IOs that reach the array follow from the content
(the unique share of written blocks), the RAM and the coalescing, not from a fixed share.

An IO crosses the 1 GbE link (FIFO at the payload rate), the controller (per-IO processing), its cache
(reads hit as an LRU of the controller's cache would over what each workload reads,
:class:`~storagelab.components.tiering.WorkingSetReadCache`; writes acknowledged and destaged
continuously, steady state as in the DS5020 model) and the RAID-10 set of drives that reorder their
queues (``drive_ordering``: by access time, as SAS drives do).
"""

from __future__ import annotations

from collections.abc import Callable

from storagelab.architectures.capacities import Stage
from storagelab.architectures.parameters import ParamSet
from storagelab.architectures.topology import Topology
from storagelab.components import raid
from storagelab.components.cache import WriteBackBuffer
from storagelab.components.cluster import ReplicatedCluster
from storagelab.components.data_reduction import InlineReduction, WriteCoalescer, cpu_station
from storagelab.components.raid_set import RaidSet
from storagelab.components.tiering import WorkingSetReadCache
from storagelab.devices.hdd import command_ordering
from storagelab.kernel import Delay, Link, Path, ResponseTimeProbe, Station
from storagelab.kernel.component import Component
from storagelab.provenance import PRESET_UNIT, Param
from storagelab.uncertainty import Choice, LogUniform, Uniform
from storagelab.workloads.content import ContentModel

#: The volume name the Tier-2 user data and infrastructure IO target (workloads.TIER2_VOLUME): the array.
TIER2_VOLUME = "tier 2"

_DOC = "004_496e3827612b8d9a.txt (Dell Wyse + Atlantis ILIO)"


#: The name the uncertainty analysis keys both presets by: one EqualLogic array, with or without ILIO in
#: front, so a scenario that builds both (the IOPS reduction) draws each unknown of the array once.
FAMILY = "EqualLogic PS6100E"


def params(ilio: bool = False) -> dict[str, Param]:
    """The model's parameters, each with its origin."""
    p = {
        "drives": Param(24, "count", "document", f"{_DOC}: 'Number of disks 24'"),
        "raid": Param(10, "count", "document", f"{_DOC}: 'NL-SAS, 7200 RPM, RAID-10 configuration' (10 = RAID-10)",
                      choices=(10,)),
        "drive": Param("7.2K NL-SAS", PRESET_UNIT, "document", f"{_DOC}: 'NL-SAS, 7200 RPM' (device preset "
                       "'7.2K NL-SAS')", capacity="device"),
        "link_rate": Param(117, "MB/s", "device-physics", f"{_DOC}: 'Network connectivity 1Gb/sec'; 1 GbE carries "
                           "about 117 MB/s of iSCSI payload after Ethernet/IP/TCP framing", capacity="rate"),
        "controller_overhead": Param(50, "us", "assumption", "per-IO processing of the active controller; not stated. "
                                     "Log-uniform on 20-200 us: mid-range controllers of the era take tens to a few "
                                     "hundred us per IO (tens of thousands of cached IOPS per controller); nothing in "
                                     "the document narrows it", capacity="time", uncertainty=LogUniform(20.0, 200.0)),
        "controller_bandwidth": Param(2, "GB/s", "assumption", "the controller's internal transfer rate: set far "
                                      "above the 1 GbE link so that it never binds; not stated. Log-uniform on 0.5-4 GB/s: "
                                      "any internal bus of the era; all of it is far above the link's 117 MB/s, so the "
                                      "draw has no effect on the results", capacity="rate",
                                      uncertainty=LogUniform(0.5, 4.0)),
        "cache_block": Param(4, "KiB", "assumption", "write-cache allocation unit; not stated. One of 4-64 KiB "
                             "(equally likely): from the workloads' 4 KiB IO to the stripe element",
                             uncertainty=Choice((4, 8, 16, 32, 64))),
        "cache_write_latency": Param(0.2, "ms", "assumption", "write acknowledged from mirrored controller cache; "
                                     "not stated. Log-uniform on 0.05-0.5 ms: a copy to the partner controller's "
                                     "cache over its internal link takes tens to hundreds of us",
                                     uncertainty=LogUniform(0.05, 0.5)),
        "write_headroom": Param(4, "MiB", "assumption", "steady state of a long run: the cache is at its destage "
                                "threshold, so writes are admitted as destaging frees space (as in the DS5020 model). "
                                "Log-uniform on 1-64 MiB: the free space kept at the threshold is not stated; from a "
                                "few stripes to a small share of the 4 GB cache", uncertainty=LogUniform(1.0, 64.0)),
        "destage_concurrency": Param(16, "count", "assumption", "destage IOs in flight; not stated. One of 4-64 "
                                     "(equally likely): from a few per drive pair to several per drive of the 24",
                                     uncertainty=Choice((4, 8, 16, 32, 64))),
        "stripe_unit": Param(64, "KiB", "assumption", "EqualLogic RAID stripe element; not stated. One of 32-256 "
                             "KiB, the stripe units arrays of the era default to (equally likely)",
                             uncertainty=Choice((32, 64, 128, 256))),
        "drive_ordering": command_ordering(source=(
            "the 7.2K NL-SAS drives queue commands (SAS tagged command queuing) and order them by access time "
            "(seek and rotation), as drives of the era with rotational position ordering do; the same declaration "
            "as every preset's drives (devices.hdd.command_ordering). The document does not say; the LOOK elevator "
            "hard-coded before was no documented choice"
        )),
        "controller_cache": Param(4, "GB", "assumption", "the active controller's cache, read through as an LRU "
                                  "over what the workloads read (Dell's PS6100 series has 4 GB per controller; "
                                  "not in the document). Uncertainty: 2 or 4 GB, equally likely: recalled, and the "
                                  "PS6000 series before it had 2 GB per controller",
                                  uncertainty=Choice((2, 4))),
        "iscsi_latency": Param(0.1, "ms", "assumption", "iSCSI initiator + switch round trip; not stated. Uniform "
                               "on 0.05-0.3 ms: a software initiator and a 1 GbE switch hop take tens of us each way; "
                               "nothing in the document narrows it", uncertainty=Uniform(0.05, 0.3)),
    }  # fmt: skip
    if ilio:
        p |= ilio_params()
    return p


#: ILIO: the share (%) of a desktop's data that is its own, from the RAM the study's hosts used (7.1.2) at the
#: assumed 2:1 compression: (281.89 GB / 7 hosts x 2 - 16.2 GB) / (16.2 GB x (500 / 7 - 1)).
DIVERGED_SHARE_PCT = round(100 * (281.89 / 7 * 2 - 16.2) / (16.2 * (500 / 7 - 1)), 1)

#: ILIO's CPU time per 4 KiB IO, fitted: its two vCPUs saturate at the Iometer test's 36,676.27 IOPS.
ILIO_CPU_FITTED_ON = ("iom-ilio-iops",)


def ilio_params() -> dict[str, Param]:
    """Atlantis ILIO's parameters, each with its origin."""
    return {
        "ilio_unique_share": Param(5, "%", "document", f"{_DOC}, Fast Replication: 'generally only about 5% of the "
                                   "IO for a given desktop image is unique' (vendor claim): a share of the IO, the "
                                   "share of written blocks whose content is new (what Fast Replication sends on); "
                                   "not a share of the capacity (ilio_diverged_share)"),
        "ilio_hosts": Param(1, "count", "document", f"{_DOC}: the tests ran 'up to 75 sessions on a single host' "
                            "(one ILIO VM per host; 500 desktops are planned on 7 hosts)"),
        "ilio_vcpus": Param(2, "count", "document", f"{_DOC}: 'Atlantis ILIO vCPU Configuration 2 vCPUs'"),
        "ilio_ram": Param(170, "GB", "document", f"{_DOC}: 'Server RAM reserved per Atlantis ILIO Session Host "
                          "Virtual Machine 170 GB'"),
        "ilio_cpu_per_io": Param(round(2 / 36676.27 * 1e6, 2), "us", "fit", "ILIO CPU time per 4 KiB IO, read or "
                                 "write (fingerprint, compression or lookup): 2 vCPUs / 36,676.27 IOPS, the Iometer "
                                 "maximum on ILIO (7.1.3), taken as CPU-bound. Uncertainty: uniform on 46.4-54.53 us: the "
                                 "row is stated to 0.01 IOPS, so the spread is the fit's premise, the two vCPUs busy "
                                 "85-100 % of the time at that maximum (2 x 0.85 / 36,676 = 46.4 us). Prior (without "
                                 "the row): log-uniform on 10-200 us, software fingerprinting and compression of a "
                                 "4 KiB block on a Xeon core of 2013 plus the NFS path",
                                 fitted_on=ILIO_CPU_FITTED_ON, capacity="time",
                                 uncertainty=Uniform(46.4, round(2 / 36676.27 * 1e6, 2)),
                                 prior=LogUniform(10.0, 200.0)),
        "ilio_ram_latency": Param(50, "us", "assumption", "memory access and the hypervisor's NFS path per IO, "
                                  "besides the CPU time; not stated (the 0.42 ms Iometer response includes queueing "
                                  "for the CPUs). Log-uniform on 10-200 us: a hypervisor's NFS round trip in one host "
                                  "takes tens to a couple of hundred us", uncertainty=LogUniform(10.0, 200.0)),
        "ilio_desktop_data": Param(16.2, "GB", "document", f"{_DOC}, 7.1.1: 'Thin: 500 * 16.2GB = 8.1 TB' without "
                                   "ILIO: the data each desktop's 32 GB disk holds, the image's content and the "
                                   "desktop's own (not the image: the image is the part the desktops share, "
                                   "ilio_desktop_data x (1 - ilio_diverged_share))"),
        "ilio_diverged_share": Param(DIVERGED_SHARE_PCT, "%", "assumption", f"{_DOC}, 7.1.2: the share of a desktop's "
                                     "data that is its own (differs from the image), a share of the capacity. 'Actual "
                                     "Server RAM utilized 281.89 GB' for 500 desktops on 7 hosts: 40.3 GB per host of "
                                     "71.4 desktops holds the image once and each desktop's own data, compressed; at "
                                     "ilio_compression 2, (40.3 x 2 - 16.2) / (16.2 x 70.4) = 5.6 %. An upper estimate "
                                     "(the RAM also holds transient data and the index): the evidence allows 0-5.6 %. "
                                     "Uncertainty: uniform on 1-5.6 %: a desktop's own data is never nil (its page "
                                     "file, profile and logs, at least about 160 MB of 16.2 GB)",
                                     uncertainty=Uniform(1.0, DIVERGED_SHARE_PCT)),
        "ilio_desktops_in_ram": Param(1, "count", "document", f"{_DOC}, 3.2: 'Atlantis ILIO In-Memory Storage "
                                      "technology places all primary storage in server RAM' and 4.1: 'All VDI desktops "
                                      "execute from compute host RAM functioning as Tier 1': each desktop's own data "
                                      "is in the ILIO VM's RAM before the run, so reading it never reaches the array "
                                      "(1; 0: read from the array at its first read)", choices=(0, 1), low=0),
        "ilio_compression": Param(2.0, "ratio", "assumption", "mean compression ratio of desktop blocks ('wire-speed "
                                  "compression'; no ratio stated). Log-uniform on 1.3-3: what fast (LZ-class) compressors "
                                  "reach on operating-system and application blocks", low=1.0, high=20.0,
                                  uncertainty=LogUniform(1.3, 3.0)),
        "ilio_segment": Param(64, "KiB", "assumption", "Fast Replication writes unique data to the array "
                              "coalesced into 64 KiB writes (the EqualLogic stripe element); not stated. One of 16-256 "
                              "KiB (equally likely)", uncertainty=Choice((16, 32, 64, 128, 256))),
        "ilio_coalesce_delay": Param(100, "ms", "assumption", "longest a unique block waits to be coalesced; "
                                     "not stated. Log-uniform on 10-1,000 ms: write-gathering timers run from "
                                     "milliseconds to a second", uncertainty=LogUniform(10.0, 1000.0)),
    }  # fmt: skip


def equallogic(ilio: bool = False, **overrides: object) -> Topology:
    """The PS6100E as volume ``vdi`` (and, with ``ilio``, behind Atlantis ILIO's in-memory tier); any
    parameter of :func:`params` can be overridden by name (``equallogic(drives=48)``)."""
    name = "EqualLogic PS6100E" + (" behind Atlantis ILIO" if ilio else "")
    p = ParamSet(name, params(ilio), overrides, family=FAMILY)
    n = int(p["drives"].value)
    if p["raid"].value != 10 or n % 2:
        raise ValueError(f"preset {name!r}: RAID-10 needs an even number of drives, got {n}")
    ordering = str(p["drive_ordering"].value)
    label = p.device_label("drive", "NL-SAS")  # 'NL-SAS 1' ..., or the overriding device's name
    drives = [Station(f"{label} {i + 1}", p.device("drive"), discipline=ordering) for i in range(n)]
    rset = RaidSet("RAID-10", raid.Raid10(n // 2, int(p["stripe_unit"].si)), drives)
    wcache = WriteBackBuffer(
        "controller write cache", rset, capacity_bytes=int(p["write_headroom"].si),
        block_bytes=int(p["cache_block"].si), write_latency=p["cache_write_latency"].si, high_watermark=0.0,
        low_watermark=0.0, destage_concurrency=int(p["destage_concurrency"].value),
    )  # fmt: skip
    hit = Delay("controller cache hit", p["controller_overhead"].si)
    # hit ratios follow from what each workload reads and the cache's size (an LRU's steady state)
    cache = WorkingSetReadCache("controller read cache", hit, wcache, int(p["controller_cache"].si))
    controller = Link(  # the controller's time and data movement: one queue, no second direction
        "controller",
        bandwidth=p["controller_bandwidth"].si,
        per_io_overhead=p["controller_overhead"].si,
        duplex=False,
    )
    link = Link("1 GbE", p["link_rate"].si)
    array: Component = Path("EqualLogic", [Delay("iSCSI", p["iscsi_latency"].si), link, controller, cache])
    parts: dict[str, Component] = {}
    if ilio:  # what reaches the array (Tier 2), counted as it completes: ILIO's back-end IOs and segments
        array = parts["tier 2"] = ResponseTimeProbe("Tier 2 (EqualLogic)", array)
    roles: dict[str, list[Component]] = {"drives": list(drives), "link": [link]}
    volume = array
    if ilio:
        diverged = p["ilio_diverged_share"].value / 100
        content = ContentModel(
            image_bytes=int(p["ilio_desktop_data"].si * (1 - diverged)), unique_share=p["ilio_unique_share"].value / 100,
            diverged_share=diverged, compression_mean=p["ilio_compression"].value,
        )  # fmt: skip
        own_in_ram = bool(p["ilio_desktops_in_ram"].value)
        per_block = p["ilio_cpu_per_io"].si
        hosts = int(p["ilio_hosts"].value)
        instances = []
        roles["ILIO"] = instances
        for h in range(1, hosts + 1):
            coalescer = WriteCoalescer(
                f"ILIO write coalescing {h}", array, segment_bytes=int(p["ilio_segment"].si),
                max_delay=p["ilio_coalesce_delay"].si,
            )  # fmt: skip
            instances.append(InlineReduction(
                f"Atlantis ILIO {h}", array, content, ram_bytes=p["ilio_ram"].si, ram_latency=p["ilio_ram_latency"].si,
                fingerprint_time=per_block, compress_time_per_byte=0.0, read_time=per_block, coalescer=coalescer,
                cpu=cpu_station(f"ILIO vCPUs {h}", int(p["ilio_vcpus"].value)), image_in_ram=True,
                own_in_ram=own_in_ram,
            ))  # fmt: skip
        # desktops spread over the hosts (by 1 GiB region of the address space: the workloads give each
        # desktop its own range), each host's ILIO VM with its own RAM, CPUs and index
        volume = instances[0] if hosts == 1 else ReplicatedCluster("desktop hosts", instances, replicas=1,
                                                                   placement_bytes=1 << 30)  # fmt: skip
    stages = [
        Stage("1 GbE link", [link], "one 1 GbE iSCSI link", cost=("link_rate",)),
        Stage("controller", [controller], "the active PS6100 controller (per-IO processing and transfer)",
              cost=("controller_overhead", "controller_bandwidth")),
        Stage("drives", list(drives), f"{n} x {p['drive'].value} drives, RAID-10", cost=("drive",)),
    ]  # fmt: skip
    if ilio:
        stages.append(Stage("ILIO vCPUs", [inst.cpu for inst in instances], "the ILIO VM's vCPUs",
                            cost=("ilio_cpu_per_io",), concurrency=("ilio_vcpus",), saturates="iom-ilio-iops",
                            per_io_s=p["ilio_cpu_per_io"].si,
                            note="fitted on the Iometer maximum on ILIO, taken as CPU-bound"))  # fmt: skip
    # behind ILIO, the user data and infrastructure volumes reach the array directly (4.1), not through
    # ILIO; without ILIO the array is the one volume (a comparison places every workload on it)
    volumes = {"vdi": volume, TIER2_VOLUME: array} if ilio else {"vdi": volume}
    return Topology(name, volumes, p, parts=parts, roles=roles, stages=stages)


#: This study's presets by name, each a function of parameter overrides returning a fresh :class:`Topology`.
PRESETS: dict[str, Callable[..., Topology]] = {
    "EqualLogic PS6100E": equallogic,
    "EqualLogic PS6100E behind Atlantis ILIO": lambda **o: equallogic(ilio=True, **o),
}
