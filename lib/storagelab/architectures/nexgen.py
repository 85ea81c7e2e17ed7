"""NexGen N5-150 hybrid flash array as the Principled Technologies reference architecture ran it, with
QoS policies off (the contention they exist for): 2.4 TB of PCIe flash (ioMemory) in front of 16 x 3 TB
7.2K NL-SAS drives, two active-active storage processors, four 10 GbE iSCSI ports.

An IO crosses its iSCSI port (FIFO at the 10 GbE payload rate), its storage processor (per-IO
processing), then the tiers: writes land in flash (the test writes about 100 GB over 90 minutes, far less
than the flash holds, so destaging is left out); reads are served from flash with a per-volume share and
from the drives otherwise. The VDI master image and linked clones are hot (flash); the OLTP and Exchange
databases are read from the drives.
"""

from __future__ import annotations

from storagelab import devices, raid
from storagelab.architectures.topology import Topology
from storagelab.components.raid_set import RaidSet
from storagelab.components.tiering import ReadWriteSplit, WarmReadCache
from storagelab.devices import Param
from storagelab.kernel import Link, Path, Station

_DOC = "000_95d1997ae9f905ef.txt (NexGen N5, Principled Technologies)"

#: Fitted: the broker's power-on interval, on the published boot-storm length (arithmetic, see params()).
FITTED_POWER_ON_INTERVAL_S = 0.48
FITTED_ON = {"power_on_interval": ("s1-boot-time",)}
VOLUMES = ("oltp", "exchange", "vdi")


def params() -> dict[str, Param]:
    """The model's parameters, each with its origin."""
    return {
        "hdd_count": Param(16, "count", "document", f"{_DOC}, Figure 51: 'Number of disks 16'"),
        "hdd_rpm": Param(7200, "rpm", "document", f"{_DOC}, Figure 51: 'Disk RPM 7200' (preset '7.2K NL-SAS')"),
        "hdd_raid": Param(10, "count", "assumption", "drives in RAID-10 (10 = RAID-10); the layout is not stated"),
        "flash_capacity": Param(2.4, "TB", "document", f"{_DOC}: '2.4TB ioMemory flash capacity'"),
        "flash_device": Param(450000, "IOPS", "datasheet", "flash tier modelled with the 'NVMe SSD' preset "
                              "(Intel P3700 datasheet figures) as a stand-in for the ioMemory cards"),
        "iscsi_ports": Param(4, "count", "document", f"{_DOC}: 'We then connected the four 10Gbps links'"),
        "port_rate": Param(1.17, "GB/s", "device-physics", "10 GbE carries about 1.17 GB/s of iSCSI payload"),
        "processors": Param(2, "count", "document", f"{_DOC}, Figure 51: two storage processors, active-active"),
        "processor_overhead": Param(30, "us", "assumption", "per-IO processing per storage processor; not stated"),
        "processor_bandwidth": Param(4, "GB/s", "assumption", "each storage processor's internal transfer rate: "
                                     "set above the 2.34 GB/s of the two 10 GbE ports it serves, so that it never binds; not stated"),
        "stripe_unit": Param(64, "KiB", "assumption", "HDD stripe unit; not stated"),
        "vdi_flash_share": Param(1.0, "ratio", "device-physics", "the 24 GB master image and the linked clones "
                                 "that all desktops read are the hottest data on the array: served from flash"),
        "db_flash_share": Param(0.0, "ratio", "assumption", "share of OLTP and Exchange reads served from flash: "
                                "with QoS off nothing pins the databases in flash, and the hot VDI image competes "
                                "for it; assumed 0 (all database reads from the drives). A fit on the ~6,500 OPM "
                                "was tried and has no solution: even at 0 the model gives more OPM"),
        "power_on_interval": Param(FITTED_POWER_ON_INTERVAL_S, "s", "fit", "seconds between desktop power-ons "
                                   "(boot storm generator), fitted on 'The boot storm completed in about five "
                                   "minutes' (s1-boot-time): (300 s - 12 s boot) / 600 desktops"),
    }  # fmt: skip


def nexgen() -> Topology:
    """The N5-150 with volumes ``oltp``, ``exchange`` and ``vdi`` (QoS off)."""
    p = params()
    ports = [Link(f"10GbE port {i + 1}", p["port_rate"].si) for i in range(int(p["iscsi_ports"].value))]
    sps = [
        Link(
            f"storage processor {c}", p["processor_bandwidth"].si, per_io_overhead=p["processor_overhead"].si
        )
        for c in "AB"
    ]
    ssd = devices.preset("NVMe SSD")
    ssd.capacity = int(p["flash_capacity"].si)  # the volumes' address ranges share the 2.4 TB tier
    flash = Station("ioMemory flash", ssd)
    hdds = [
        Station(f"NL-SAS {i + 1}", devices.preset("7.2K NL-SAS"), discipline="elevator") for i in range(16)
    ]
    disks = RaidSet("NL-SAS RAID-10", raid.Raid10(8, int(p["stripe_unit"].si)), hdds)
    volumes = {}
    for k, vol in enumerate(VOLUMES):
        share = p["vdi_flash_share" if vol == "vdi" else "db_flash_share"].value
        reads = WarmReadCache(f"{vol} reads", flash, disks, share)
        tiers = ReadWriteSplit(f"{vol} tiers", reads, flash)
        volumes[vol] = Path(vol, [ports[k % len(ports)], sps[k % len(sps)], tiers])
    return Topology("NexGen N5-150 (QoS off)", volumes, p, FITTED_ON)
