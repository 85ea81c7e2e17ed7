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

from storagelab import raid
from storagelab.components.flash import flash_drive
from storagelab.components.raid_set import RaidSet
from storagelab.components.tiering import ReadWriteSplit, WarmReadCache
from storagelab.kernel import Link, Path, Station
from storagelab.provenance import PRESET_UNIT, Param, ParamSet
from storagelab.topology import Topology

_DOC = "000_95d1997ae9f905ef.txt (NexGen N5, Principled Technologies)"

VOLUMES = ("oltp", "exchange", "vdi")


def params() -> dict[str, Param]:
    """The model's parameters, each with its origin."""
    return {
        "hdd_count": Param(16, "count", "document", f"{_DOC}, Figure 51: 'Number of disks 16'"),
        "hdd": Param("7.2K NL-SAS", PRESET_UNIT, "document", f"{_DOC}, Figure 51: 'Disk RPM 7200' (device preset "
                     "'7.2K NL-SAS')", capacity="device"),
        "hdd_raid": Param(10, "count", "assumption", "drives in RAID-10 (10 = RAID-10); the layout is not stated",
                          choices=(10,)),
        "flash_capacity": Param(2.4, "TB", "document", f"{_DOC}: '2.4TB ioMemory flash capacity'"),
        "flash_device": Param("NVMe SSD", PRESET_UNIT, "datasheet", "flash tier modelled with the 'NVMe SSD' "
                              "preset (Intel P3700 datasheet figures) as a stand-in for the ioMemory cards",
                              capacity="device"),
        "iscsi_ports": Param(4, "count", "document", f"{_DOC}: 'We then connected the four 10Gbps links'"),
        "port_rate": Param(1.17, "GB/s", "device-physics", "10 GbE carries about 1.17 GB/s of iSCSI payload",
                           capacity="rate"),
        "processors": Param(2, "count", "document", f"{_DOC}, Figure 51: two storage processors, active-active",
                             high=8),
        "processor_overhead": Param(30, "us", "assumption", "per-IO processing per storage processor; not stated",
                                    capacity="time"),
        "processor_bandwidth": Param(4, "GB/s", "assumption", "each storage processor's internal transfer rate: "
                                     "set above the 2.34 GB/s of the two 10 GbE ports it serves, so that it never "
                                     "binds; not stated", capacity="rate"),
        "stripe_unit": Param(64, "KiB", "assumption", "HDD stripe unit; not stated"),
        "vdi_flash_share": Param(1.0, "ratio", "device-physics", "the 24 GB master image and the linked clones "
                                 "that all desktops read are the hottest data on the array: served from flash"),
        "db_flash_share": Param(0.0, "ratio", "fit", "share of OLTP and Exchange reads served from flash: fitted "
                                "on the ~6,500 OPM (s1-opm), which has no solution inside [0, 1] (even at 0 the "
                                "model gives more OPM), so it sits at the bound 0; with QoS off nothing pins the "
                                "databases in flash", fitted_on=("s1-opm",)),
    }  # fmt: skip


def nexgen(**overrides: object) -> Topology:
    """The N5-150 with volumes ``oltp``, ``exchange`` and ``vdi`` (QoS off); any parameter of
    :func:`params` can be overridden by name (``nexgen(hdd_count=32)``)."""
    name = "NexGen N5-150 (QoS off)"
    p = ParamSet(name, params(), overrides)
    ports = [Link(f"10GbE port {i + 1}", p["port_rate"].si) for i in range(int(p["iscsi_ports"].value))]
    sps = [
        Link(
            f"storage processor {'ABCDEFGH'[c]}", p["processor_bandwidth"].si,
            per_io_overhead=p["processor_overhead"].si, duplex=False,  # a processor: one queue
        )
        for c in range(int(p["processors"].value))
    ]  # fmt: skip
    ssd = p.device("flash_device")
    ssd.capacity = int(p["flash_capacity"].si)  # the volumes' address ranges share the 2.4 TB tier
    flash = flash_drive("ioMemory flash", ssd)
    n_hdd = int(p["hdd_count"].value)
    if p["hdd_raid"].value != 10 or n_hdd % 2:
        raise ValueError(f"preset {name!r}: RAID-10 needs an even hdd_count, got {n_hdd}")
    hdds = [Station(f"NL-SAS {i + 1}", p.device("hdd"), discipline="elevator") for i in range(n_hdd)]
    disks = RaidSet("NL-SAS RAID-10", raid.Raid10(n_hdd // 2, int(p["stripe_unit"].si)), hdds)
    volumes = {}
    for k, vol in enumerate(VOLUMES):
        share = p["vdi_flash_share" if vol == "vdi" else "db_flash_share"].value
        reads = WarmReadCache(f"{vol} reads", flash, disks, share)
        tiers = ReadWriteSplit(f"{vol} tiers", reads, flash)
        volumes[vol] = Path(vol, [ports[k % len(ports)], sps[k % len(sps)], tiers])
    return Topology(name, volumes, p)
